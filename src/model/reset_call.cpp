#include "model/reset_call.hpp"

#include "util/user_call.hpp"

namespace hybridsens {

PetscErrorCode applyReset(const HybridModel &model, const EventId &id, const std::string &name, PetscReal t, Vec uminus,
                          const ModeContext &c, Vec uplus, bool *applied) {
  using Default = HybridModel::DefaultCallback;
  PetscFunctionBeginUser;
  *applied = false;
  model.clearDefaultsUsed();
  const bool declared = model.hasReset(id);
  // An overridden hasReset() that says "no reset here" is the user's word: reset() may be
  // written for other events only and is not called.
  if (!declared && !model.defaultUsed(Default::HasReset)) PetscFunctionReturn(0);
  // Either a declared reset, or hasReset() was not overridden: calling reset() tells whether it
  // was (its default records that it ran and returns the identity).
  HS_USER_CALL(model.comm(), "reset", model.reset(id, t, uminus, c, uplus));
  const bool written = !model.defaultUsed(Default::Reset);
  PetscCheck(!declared || written, model.comm(), PETSC_ERR_SUP,
             "hasReset() is true for event '%s' but the model does not implement reset(): override HybridModel::reset() "
             "(u+ = R(t, u-, p; d-)) and its derivatives, or return false from hasReset() for this event",
             name.c_str());
  PetscCheck(declared || !written, model.comm(), PETSC_ERR_USER_INPUT,
             "the model implements reset() but not hasReset(), so the reset of event '%s' would be silently ignored: override "
             "HybridModel::hasReset() to return true for the events that have a reset (and implement the reset derivatives "
             "resetJacobianAction, resetJacobianTransposeAction, resetJacobianP, resetTimeDerivative)",
             name.c_str());
  *applied = declared;
  PetscFunctionReturn(0);
}

} // namespace hybridsens
