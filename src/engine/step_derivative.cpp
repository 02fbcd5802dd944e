#include "engine/step_derivative.hpp"

#include "util/petsc_internals.hpp"

#include <cmath>

namespace hybridsens {

StepDerivative::~StepDerivative() {
  VecDestroy(&rhs_);
  VecDestroy(&work_);
  VecDestroy(&ft_);
  VecDestroy(&stage_);
  VecDestroy(&stageDot_);
}

static PetscErrorCode thetaOf(TS ts, PetscReal *theta, PetscBool *endpoint, bool *isTheta) {
  PetscBool match;
  PetscFunctionBeginUser;
  *isTheta = false;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)ts, &match, TSTHETA, TSBEULER, TSCN, ""));
  if (!match) PetscFunctionReturn(0);
  PetscCall(TSThetaGetTheta(ts, theta));
  PetscCall(TSThetaGetEndpoint(ts, endpoint));
  *isTheta = true;
  PetscFunctionReturn(0);
}

static PetscErrorCode stepMatrix(TS ts, KSP *ksp, Mat *A) {
  SNES snes;
  PetscFunctionBeginUser;
  PetscCall(TSGetSNES(ts, &snes));
  PetscCall(SNESGetKSP(snes, ksp));
  PetscCall(KSPGetOperators(*ksp, A, nullptr));
  PetscFunctionReturn(0);
}

PetscErrorCode StepDerivative::noteStepTaken(TS ts) {
  PetscReal theta;
  PetscBool endpoint;
  bool isTheta;
  KSP ksp;
  Mat A;
  PetscFunctionBeginUser;
  matState_ = -1;
  factored_ = nullptr;
  PetscCall(thetaOf(ts, &theta, &endpoint, &isTheta));
  if (!isTheta) PetscFunctionReturn(0);
  PetscCall(stepMatrix(ts, &ksp, &A));
  PetscCall(objectState((PetscObject)A, &matState_));
  PetscFunctionReturn(0);
}

// The step's Newton matrix re-evaluated at the converged stage. The matrix the Newton iteration
// factored last belongs to the iterate before the converged one: on the 3-area wecc9 grid its
// slope was 1.2e-3 off, so location converged linearly (each re-take gained only three digits).
// At the converged stage the slope is the exact derivative of the computed step end. Theta:
// stage X = u1 at t0 + h with the endpoint, X = u0 + θ(u1 − u0) at t0 + θh otherwise; the shift
// is 1/(θh) and Ẋ = (X − u0)/(θh) (read only by a state-dependent mass, which the engine has not).
PetscErrorCode StepDerivative::refreshStepMatrix(TS ts, KSP ksp, PetscReal t0, Vec u0, PetscReal h, Vec u1, PetscReal theta, PetscBool endpoint) {
  Mat A, P;
  PetscFunctionBeginUser;
  if (!stage_) PetscCall(VecDuplicate(u1, &stage_));
  if (!stageDot_) PetscCall(VecDuplicate(u1, &stageDot_));
  PetscCall(VecCopy(u1, stage_));  // also read by compute() for f_t at the stage
  if (!endpoint) PetscCall(VecAXPBY(stage_, 1 - theta, theta, u0));
  PetscCall(VecWAXPY(stageDot_, -1.0, u0, stage_));
  PetscCall(VecScale(stageDot_, 1.0 / (theta * h)));
  PetscCall(KSPGetOperators(ksp, &A, &P));
  PetscCall(TSComputeIJacobian(ts, endpoint ? t0 + h : t0 + theta * h, stage_, stageDot_, 1.0 / (theta * h), A, P, PETSC_FALSE));
  PetscCall(KSPSetOperators(ksp, A, P));  // the solve below factors the new values
  PetscFunctionReturn(0);
}

PetscErrorCode StepDerivative::compute(TS ts, PetscReal t0, Vec u0, PetscReal h, Vec u1, Vec dudh, bool *available) {
  PetscReal theta = 0;
  PetscBool endpoint = PETSC_FALSE;
  bool isTheta = false;
  KSP ksp = nullptr;
  Mat A;
  PetscFunctionBeginUser;
  *available = false;
  factored_ = nullptr;
  int usable = matState_ >= 0 && h > 0;
  if (usable) PetscCall(thetaOf(ts, &theta, &endpoint, &isTheta));
  if (usable && isTheta) {
    PetscObjectState state;
    PetscCall(stepMatrix(ts, &ksp, &A));
    PetscCall(objectState((PetscObject)A, &state));
    usable = state == matState_;
  } else usable = 0;
  // The solve below is collective: every rank takes it or none.
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &usable, 1, MPI_INT, MPI_LAND, dyn_.comm()));
  if (!usable) PetscFunctionReturn(0);
  if (!rhs_) PetscCall(VecDuplicate(u1, &rhs_));
  if (!work_) PetscCall(VecDuplicate(u1, &work_));
  PetscCall(refreshStepMatrix(ts, ksp, t0, u0, h, u1, theta, endpoint));
  // F_u̇ (u1 − u0)/(θh²): F = u̇ − f for an ODE, M u̇ − f for a DAE (Dynamics::IFunction).
  PetscCall(VecWAXPY(rhs_, -1.0, u0, u1));
  if (dyn_.isDAE()) PetscCall(VecPointwiseMult(rhs_, dyn_.massDiagonal(), rhs_));
  PetscCall(VecScale(rhs_, 1.0 / (theta * h * h)));
  if (dyn_.model().explicitTime()) {
    // −F_t = f_t at the stage refreshStepMatrix formed: (t0 + h, u1) with the endpoint,
    // (t0 + θh, u0 + θ(u1 − u0)) otherwise.
    if (!ft_) PetscCall(VecDuplicate(u1, &ft_));
    PetscCall(dyn_.rhsTimeDerivative(endpoint ? t0 + h : t0 + theta * h, stage_, dyn_.mode, ft_));
    PetscCall(VecAXPY(rhs_, 1.0, ft_));
  }
  PetscCall(VecZeroEntries(work_));  // a KSP with a nonzero initial guess starts from zero
  PetscCall(KSPSolve(ksp, rhs_, work_));
  KSPConvergedReason reason;
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  if (reason < 0) PetscFunctionReturn(0);  // the same on every rank
  PetscCall(VecCopy(work_, dudh));
  *available = true;
  factored_ = ksp;
  theta_ = theta;
  endpoint_ = endpoint;
  PetscFunctionReturn(0);
}

// With the stage X (u1 with the endpoint, u0 + θ(u1 − u0) otherwise) at t_s = t0 + c h (c = 1 or θ),
// the step equation is M (X − u0) = θ h f(t_s, X) [+ (1 − θ) h f(t0, u0) with the endpoint: linear
// in h, so not in the second derivative]. Twice in h, with φ(ε) = f(t_s + cε, X + εX'):
//     (M − θh f_u) X'' = θ (2 φ'(0) + h φ''(0)),
// and the factored matrix is (M − θh f_u)/(θh), so X'' = A⁻¹ (2φ'(0)/h + φ''(0)); u1'' = X''/θ
// without the endpoint. φ'(0) and φ''(0) by fourth-order central differences of f at X ± εX' and
// X ± 2εX', ε = 10⁻²h: for f changing on a time scale T the truncation error is O((ε/T)⁴) and the
// rounding of the second difference ~5u(T/ε)². The rounding is noise: a run on 2 ranks (another
// LU, the same steps to 1e-16) got curvatures 3e-8 apart from the serial run with the plain
// second-order differences at 10⁻³h, enough to move a candidate across the surface tolerance and
// change the count of re-takes; at 10⁻²h they agree and the grid's sharp turns still resolve.
PetscErrorCode StepDerivative::secondDerivative(PetscReal t0, PetscReal h, Vec dudh, Vec *d2udh2, bool *available) {
  PetscFunctionBeginUser;
  *available = false;
  if (!factored_) PetscFunctionReturn(0);  // the same on every rank (compute() decided collectively)
  const PetscReal c = endpoint_ ? 1.0 : theta_, ts = t0 + c * h, eps = 1e-2 * h;
  const PetscReal xScale = endpoint_ ? 1.0 : theta_;  // X' = xScale u1'
  // rhs_ = 2φ'(0)/h + φ''(0) from φ at 0, ±ε, ±2ε (fourth-order central differences),
  // accumulated term by term; stageDot_ (read only by the refresh) holds the perturbed stage,
  // work_ each φ.
  PetscCall(dyn_.rhsProbe(ts, stage_, dyn_.mode, rhs_));
  PetscCall(VecScale(rhs_, -2.5 / (eps * eps)));
  for (int k : {1, 2})
    for (int side : {1, -1}) {
      const PetscReal w = k == 1 ? 4.0 / (3 * eps * eps) + side * 4.0 / (3 * eps * h) : -1.0 / (12 * eps * eps) - side / (6 * eps * h);
      PetscCall(VecWAXPY(stageDot_, side * k * eps * xScale, dudh, stage_));
      PetscCall(dyn_.rhsProbe(ts + side * k * c * eps, stageDot_, dyn_.mode, work_));
      PetscCall(VecAXPY(rhs_, w, work_));
    }
  // f may be undefined off the trajectory (a NaN at a perturbed stage): no curvature then, the
  // location goes on with values and slopes (one reduction for the five evaluations).
  PetscReal norm;
  PetscCall(VecNorm(rhs_, NORM_1, &norm));
  if (!std::isfinite(norm)) PetscFunctionReturn(0);
  PetscCall(VecZeroEntries(work_));
  PetscCall(KSPSolve(factored_, rhs_, work_));
  KSPConvergedReason reason;
  PetscCall(KSPGetConvergedReason(factored_, &reason));
  if (reason < 0) PetscFunctionReturn(0);
  if (!endpoint_) PetscCall(VecScale(work_, 1.0 / theta_));
  *d2udh2 = work_;
  *available = true;
  PetscFunctionReturn(0);
}

} // namespace hybridsens
