#include "sensitivity/configuration.hpp"

#include "util/linear_solve_defaults.hpp"

#include <string>

namespace hybridsens {

// The integrator of every run. The engine re-takes steps from a saved start (event location),
// so only types whose TSStep honours ts->steprollback can be used; the ones listed for plain
// simulations were verified to converge at their order through impacts with resets. Integral
// costs, tangents and adjoints read the stages of the theta and RK methods only.
PetscErrorCode checkIntegratorConfiguration(TS ts, const Dynamics &dyn, bool usesStages) {
  TSType type;
  PetscBool stageTypes, plainTypes, isTheta;
  PetscFunctionBeginUser;
  PetscCall(TSGetType(ts, &type));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)ts, &stageTypes, TSTHETA, TSBEULER, TSCN, TSRK, ""));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)ts, &plainTypes, TSEULER, TSSSP, TSBDF, TSARKIMEX, TSROSW, TSALPHA, ""));
  PetscCheck(stageTypes || (plainTypes && !usesStages), dyn.comm(), PETSC_ERR_SUP,
             "-ts_type %s is not supported%s: use theta (0 < -ts_theta_theta <= 1, -ts_theta_endpoint), beuler, cn or rk%s", type,
             plainTypes ? " with integral costs or sensitivities" : "",
             plainTypes ? "" : " (a plain simulation without integral costs or sensitivities also allows euler, ssp, bdf, arkimex, rosw, alpha)");
  PetscCall(PetscObjectTypeCompareAny((PetscObject)ts, &isTheta, TSTHETA, TSBEULER, TSCN, ""));
  if (dyn.isIndex2()) {
    // Only backward Euler is exact and stable on an index-2 DAE here (docs/index2-daes.md §3):
    // any θ < 1 reads f(t, u⁺) at the start of the step after an event, i.e. the reinitialized
    // algebraic variables, whose derivative needs second derivatives of the constraint, and the
    // trapezoidal rule does not damp the algebraic variables' error of an index-2 DAE.
    PetscReal theta = 0;
    PetscBool endpoint = PETSC_FALSE;
    if (isTheta) {
      PetscCall(TSThetaGetTheta(ts, &theta));
      PetscCall(TSThetaGetEndpoint(ts, &endpoint));
    }
    PetscCheck(isTheta && theta == 1.0, dyn.comm(), PETSC_ERR_SUP,
               "-ts_type %s%s is not supported for an index-2 DAE (HybridModel::daeIndex() = 2): use -ts_type beuler (or "
               "-ts_type theta -ts_theta_theta 1); theta < 1 and Crank-Nicolson are refused (not exact through events, not stable "
               "in the algebraic variables)",
               type, isTheta ? (" with -ts_theta_theta " + std::to_string((double)theta)).c_str() : "");
  }
  if (isTheta) {
    // PETSc's theta method is defined for 0 < θ ≤ 1 (θ = 0 divides by zero; its tangent-linear
    // and adjoint steps, and our step tangent, assume that range).
    PetscReal theta;
    PetscBool endpoint;
    PetscCall(TSThetaGetTheta(ts, &theta));
    PetscCall(TSThetaGetEndpoint(ts, &endpoint));
    PetscCheck(theta > 0 && theta <= 1, dyn.comm(), PETSC_ERR_ARG_OUTOFRANGE,
               "-ts_theta_theta %g is out of range: the theta method needs 0 < theta <= 1", (double)theta);
    // The midpoint form's stage is X(t + θh), not the step's end points: the trapezoidal
    // quadrature of integral costs and the step tangents at events assume endpoint stages.
    PetscCheck(!usesStages || endpoint || theta == 1.0, dyn.comm(), PETSC_ERR_SUP,
               "the midpoint theta method (-ts_theta_theta %g without -ts_theta_endpoint) is not supported with integral costs or "
               "sensitivities: use -ts_theta_endpoint",
               (double)theta);
  }
  PetscFunctionReturn(0);
}

// Refuse what PETSc 3.18 would silently get wrong with tangents or adjoints.
PetscErrorCode checkSensitivityConfiguration(TS ts, const Dynamics &dyn, bool adjoint) {
  PetscBool isRK;
  PetscFunctionBeginUser;
  PetscCall(checkIntegratorConfiguration(ts, dyn, true));
  PetscCall(PetscObjectTypeCompare((PetscObject)ts, TSRK, &isRK));
  if (!adjoint && !isRK) {
    // PETSc 3.18's TSForwardStep_Theta treats the endpoint form as two-stage and scales by
    // 1/(θ − 1): with θ = 1 the tangent becomes NaN (its adjoint step special-cases θ = 1).
    PetscReal theta;
    PetscBool endpoint;
    PetscCall(TSThetaGetTheta(ts, &theta));
    PetscCall(TSThetaGetEndpoint(ts, &endpoint));
    PetscCheck(!(endpoint && theta == 1.0), dyn.comm(), PETSC_ERR_SUP,
               "-ts_theta_theta 1 with -ts_theta_endpoint: PETSc 3.18's forward (tangent-linear) theta step divides by theta - 1; "
               "use -ts_type beuler (the same method)");
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
  if (dyn.isDAE()) PetscCall(requireExactSolve(dyn.consistencyKsp(), "the DAE consistency solves"));
  if (!isRK) {
    SNES snes;
    KSP ksp;
    PetscInt lagJ, lagP;
    PetscCall(TSGetSNES(ts, &snes));
    PetscCall(SNESGetKSP(snes, &ksp));
    PetscCall(requireExactSolve(ksp, "the integrator's linear solve (its tangent-linear and adjoint steps use it too)"));
    PetscCall(SNESGetLagJacobian(snes, &lagJ));
    PetscCall(SNESGetLagPreconditioner(snes, &lagP));
    PetscCheck(lagJ == 1 && lagP == 1, dyn.comm(), PETSC_ERR_SUP,
               "-snes_lag_jacobian / -snes_lag_preconditioner make PETSc's tangent-linear and adjoint steps use stale Jacobians: not allowed with sensitivities");
  }
  PetscFunctionReturn(0);
}

} // namespace hybridsens
