#include "sensitivity/configuration.hpp"

namespace hybridsens {

// Refuse what PETSc 3.18 would silently get wrong (PETSC-3.18.md §6, §8, §9).
PetscErrorCode checkSensitivityConfiguration(TS ts, const Dynamics &dyn, bool adjoint) {
  TSType type;
  PetscBool isRK, isTheta, isBE, isCN;
  PetscFunctionBeginUser;
  PetscCall(TSGetType(ts, &type));
  PetscCall(PetscStrcmp(type, TSRK, &isRK));
  PetscCall(PetscStrcmp(type, TSTHETA, &isTheta));
  PetscCall(PetscStrcmp(type, TSBEULER, &isBE));
  PetscCall(PetscStrcmp(type, TSCN, &isCN));
  PetscCheck(isRK || isTheta || isBE || isCN, dyn.comm(), PETSC_ERR_SUP,
             "Sensitivities need -ts_type theta, beuler, cn or rk (PETSc 3.18 has no adjoint for '%s')", type);
  if (isTheta) {
    PetscReal theta;
    PetscBool endpoint;
    PetscCall(TSThetaGetTheta(ts, &theta));
    PetscCall(TSThetaGetEndpoint(ts, &endpoint));
    PetscCheck(endpoint || theta == 1.0, dyn.comm(), PETSC_ERR_SUP,
               "Sensitivities with the midpoint theta method are not supported: use -ts_theta_endpoint");
  }
  if (adjoint && isRK && dyn.numParameters() > 0) {
    PetscInt s;
    const PetscReal *b;
    TSRKType rktype;
    PetscCall(TSRKGetType(ts, &rktype));
    PetscCall(TSRKGetTableau(ts, &s, nullptr, &b, nullptr, nullptr, nullptr, nullptr, nullptr));
    for (PetscInt i = 0; i < s - 1; ++i)
      PetscCheck(b[i] != 0, dyn.comm(), PETSC_ERR_SUP,
                 "RK tableau '%s' has b_%" PetscInt_FMT " = 0: PETSc 3.18's RK adjoint gives wrong parameter gradients for it "
                 "(fixed upstream in 3.21.4); use -ts_rk_type 4, 3, 3bs, 2a or 1fe",
                 rktype, i);
  }
  if (!isRK) {
    SNES snes;
    PetscInt lagJ, lagP;
    PetscCall(TSGetSNES(ts, &snes));
    PetscCall(SNESGetLagJacobian(snes, &lagJ));
    PetscCall(SNESGetLagPreconditioner(snes, &lagP));
    PetscCheck(lagJ == 1 && lagP == 1, dyn.comm(), PETSC_ERR_SUP,
               "-snes_lag_jacobian / -snes_lag_preconditioner make PETSc's tangent-linear and adjoint steps use stale Jacobians: not allowed with sensitivities");
  }
  PetscFunctionReturn(0);
}

} // namespace hybridsens
