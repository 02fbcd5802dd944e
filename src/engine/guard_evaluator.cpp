#include "engine/guard_evaluator.hpp"

#include "util/log_events.hpp"
#include "util/user_call.hpp"

#include <algorithm>
#include <cmath>

namespace hybridsens {

GuardEvaluator::GuardEvaluator(Dynamics &dyn) : dyn_(dyn), n_(dyn.model().numGuards()) {
  for (PetscInt j = 0; j < n_; ++j) direction_.push_back((int)dyn.model().guardInfo(j).direction);
}

GuardEvaluator::~GuardEvaluator() { VecDestroy(&work_.gu); }

bool GuardEvaluator::active(PetscInt j, const DiscreteState &d) const noexcept {
  try {
    return dyn_.model().guardActive(j, d);
  } catch (const std::exception &e) {
    if (activeFailure_.empty()) activeFailure_ = "guard " + std::to_string(j) + " in discrete state " + describe(d) + ": " + e.what();
  } catch (...) {
    if (activeFailure_.empty()) activeFailure_ = "guard " + std::to_string(j) + " in discrete state " + describe(d) + ": unknown exception";
  }
  return true;
}

PetscErrorCode GuardEvaluator::checkCallbacks() const {
  PetscFunctionBeginUser;
  PetscCheck(activeFailure_.empty(), dyn_.comm(), PETSC_ERR_LIB, "C++ exception in model callback guardActive (%s)", activeFailure_.c_str());
  PetscFunctionReturn(0);
}

PetscErrorCode GuardEvaluator::values(PetscReal t, Vec u, const DiscreteState &d, std::vector<PetscScalar> &g) {
  ScopedLogEvent log(LogEvent::GuardValues);
  PetscFunctionBeginUser;
  g.assign(n_, 0.0);
  if (!n_) PetscFunctionReturn(0);
  PetscCall(checkCallbacks());
  std::vector<PetscScalar> local(n_, 0.0);
  HS_USER_CALL(dyn_.comm(), "guards", dyn_.model().guards(t, u, dyn_.context(d), local.data()));
  PetscCallMPI(MPI_Allreduce(local.data(), g.data(), (int)n_, MPIU_SCALAR, MPIU_SUM, dyn_.comm()));
  for (PetscInt j = 0; j < n_; ++j)
    PetscCheck(std::isfinite(g[j]) || !active(j, d), dyn_.comm(), PETSC_ERR_FP,
               "NaN or Inf returned by model callback guards for guard '%s' at t = %.17g in discrete state %s",
               dyn_.model().guardInfo(j).name.c_str(), (double)t, describe(d).c_str());
  PetscCall(checkCallbacks());
  PetscFunctionReturn(0);
}

PetscErrorCode GuardEvaluator::gradient(PetscInt j, PetscReal t, Vec u, const DiscreteState &d, GuardGradient &out) {
  const PetscInt np = dyn_.numParameters();
  PetscFunctionBeginUser;
  PetscCall(checkCallbacks());
  PetscCall(VecZeroEntries(out.gu));
  std::vector<PetscScalar> local(np + 1, 0.0), global(np + 1, 0.0);
  HS_USER_CALL(dyn_.comm(), "guardGradient", dyn_.model().guardGradient(j, t, u, dyn_.context(d), out.gu, &local[0], np ? &local[1] : nullptr));
  PetscCallMPI(MPI_Allreduce(local.data(), global.data(), (int)(np + 1), MPIU_SCALAR, MPIU_SUM, dyn_.comm()));
  out.gt = global[0];
  out.gp.assign(global.begin() + 1, global.end());
  PetscCall(dyn_.checkFinite(out.gu, "guardGradient", t, d));
  PetscFunctionReturn(0);
}

// One model call and one reduction for all guards: this runs at every step end, and a grid
// has thousands of guards (a gradient per guard would cost O(guards × (n + np)) per step).
PetscErrorCode GuardEvaluator::modelRates(PetscReal t, Vec u, Vec udot, const DiscreteState &d, std::vector<PetscScalar> &rate) {
  PetscFunctionBeginUser;
  rate.assign(n_, 0.0);
  if (!n_) PetscFunctionReturn(0);
  std::vector<PetscScalar> local(n_, 0.0);
  if (!work_.gu) PetscCall(VecDuplicate(u, &work_.gu));
  HS_USER_CALL(dyn_.comm(), "guardRates", dyn_.model().guardRates(t, u, udot, dyn_.context(d), work_.gu, local.data()));
  PetscCallMPI(MPI_Allreduce(local.data(), rate.data(), (int)n_, MPIU_SCALAR, MPIU_SUM, dyn_.comm()));
  for (PetscInt j = 0; j < n_; ++j)
    if (!active(j, d)) rate[j] = 0;
  PetscFunctionReturn(0);
}

// For a DAE, ẏ = −g_y⁻¹(g_x ẋ + g_t) costs a Jacobian and a factorization — at every step end,
// more than the step's own Newton solve on a power grid. Most guards (a limit on a differential
// state) do not read algebraic states, so the rates are first evaluated with ẏ = NaN: IEEE
// arithmetic carries the NaN into exactly those rates that read ẏ (the contract of
// HybridModel::guardRates). Only if an active guard's rate comes back NaN is ẏ computed and the
// rates evaluated again, exactly, with the same ẋ.
PetscErrorCode GuardEvaluator::rates(PetscReal t, Vec u, const DiscreteState &d, Vec udot, std::vector<PetscScalar> &rate) {
  ScopedLogEvent log(LogEvent::GuardRates);
  PetscFunctionBeginUser;
  rate.assign(n_, 0.0);
  if (!n_) PetscFunctionReturn(0);
  PetscCall(dyn_.differentialTimeDerivative(t, u, d, udot));  // ẏ = NaN (nothing for an ODE)
  PetscCall(modelRates(t, u, udot, d, rate));
  if (dyn_.isDAE() && std::any_of(rate.begin(), rate.end(), [](PetscScalar r) { return std::isnan(r); })) {
    // The same rates on every rank (summed), so every rank takes this branch or none.
    ++ydotSolves_;
    PetscCall(dyn_.completeTimeDerivative(t, u, d, udot));
    PetscCall(modelRates(t, u, udot, d, rate));
  }
  PetscCall(checkCallbacks());
  for (PetscInt j = 0; j < n_; ++j)
    PetscCheck(std::isfinite(rate[j]), dyn_.comm(), PETSC_ERR_FP,
               "NaN or Inf returned by model callback guardRates for guard '%s' (its rate) at t = %.17g in discrete state %s",
               dyn_.model().guardInfo(j).name.c_str(), (double)t, describe(d).c_str());
  PetscFunctionReturn(0);
}

PetscErrorCode GuardEvaluator::transversality(PetscInt j, PetscReal t, Vec u, Vec udot, const DiscreteState &d,
                                              PetscScalar *D, PetscReal *scale) {
  PetscScalar dot;
  PetscReal ngu, nud;
  PetscFunctionBeginUser;
  if (!work_.gu) PetscCall(VecDuplicate(u, &work_.gu));
  PetscCall(gradient(j, t, u, d, work_));
  PetscCall(VecDot(work_.gu, udot, &dot));
  PetscCall(VecNorm(work_.gu, NORM_2, &ngu));
  PetscCall(VecNorm(udot, NORM_2, &nud));
  *D = work_.gt + dot;
  *scale = std::fabs(work_.gt) + ngu * nud;
  PetscFunctionReturn(0);
}

} // namespace hybridsens
