// Default cost callbacks: a cost that declares a part must implement it.
#include "hybridsens/objective.hpp"

namespace hybridsens {

PetscErrorCode CostFunction::terminal(PetscReal, Vec, const ModeContext &, PetscScalar *) const {
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "cost declares a terminal part but does not implement terminal()");
}
PetscErrorCode CostFunction::terminalGradient(PetscReal, Vec, const ModeContext &, Vec, PetscScalar *) const {
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "cost declares a terminal part but does not implement terminalGradient()");
}
PetscErrorCode CostFunction::integrand(PetscReal, Vec, const ModeContext &, PetscScalar *) const {
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "cost declares an integrand but does not implement integrand()");
}
PetscErrorCode CostFunction::integrandGradient(PetscReal, Vec, const ModeContext &, Vec, PetscScalar *) const {
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "cost declares an integrand but does not implement integrandGradient()");
}

PetscErrorCode CostFunction::integrandTimeDerivative(PetscReal, Vec, const ModeContext &, PetscScalar *r_t) const {
  *r_t = 0;
  return 0;
}

PetscErrorCode CostFunction::measurement(PetscInt, PetscReal, Vec, const ModeContext &, PetscScalar *) const {
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "cost declares measurement times but does not implement measurement()");
}
PetscErrorCode CostFunction::measurementGradient(PetscInt, PetscReal, Vec, const ModeContext &, Vec, PetscScalar *) const {
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "cost declares measurement times but does not implement measurementGradient()");
}

} // namespace hybridsens
