// Default cost callbacks: a cost that declares a part must implement it; the defaults of the
// value callbacks also answer the library's probe for a part implemented but not declared.
#include "hybridsens/objective.hpp"

namespace hybridsens {

PetscErrorCode CostFunction::terminal(PetscReal, Vec, const ModeContext &, PetscScalar *value) const {
  PetscFunctionBeginUser;
  PetscCheck(!hasTerminal(), PETSC_COMM_SELF, PETSC_ERR_SUP, "cost '%s' declares a terminal part but does not implement terminal()", name().c_str());
  defaultsUsed_ |= (unsigned)DefaultPart::Terminal;
  *value = 0;
  PetscFunctionReturn(0);
}
PetscErrorCode CostFunction::terminalGradient(PetscReal, Vec, const ModeContext &, Vec, PetscScalar *) const {
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "cost declares a terminal part but does not implement terminalGradient()");
}
PetscErrorCode CostFunction::integrand(PetscReal, Vec, const ModeContext &, PetscScalar *value) const {
  PetscFunctionBeginUser;
  PetscCheck(!hasIntegrand(), PETSC_COMM_SELF, PETSC_ERR_SUP, "cost '%s' declares an integrand but does not implement integrand()", name().c_str());
  defaultsUsed_ |= (unsigned)DefaultPart::Integrand;
  *value = 0;
  PetscFunctionReturn(0);
}
PetscErrorCode CostFunction::integrandGradient(PetscReal, Vec, const ModeContext &, Vec, PetscScalar *) const {
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "cost declares an integrand but does not implement integrandGradient()");
}

// Called only when explicitTime() is true: zero would be a guess.
PetscErrorCode CostFunction::integrandTimeDerivative(PetscReal, Vec, const ModeContext &, PetscScalar *) const {
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "cost '%s': explicitTime() is true but integrandTimeDerivative() is not implemented",
          name().c_str());
}

PetscErrorCode CostFunction::measurement(PetscInt, PetscReal, Vec, const ModeContext &, PetscScalar *) const {
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "cost declares measurement times but does not implement measurement()");
}
PetscErrorCode CostFunction::measurementGradient(PetscInt, PetscReal, Vec, const ModeContext &, Vec, PetscScalar *) const {
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "cost declares measurement times but does not implement measurementGradient()");
}

} // namespace hybridsens
