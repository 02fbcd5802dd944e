#include "engine/step_derivative.hpp"

#include "util/petsc_internals.hpp"

namespace hybridsens {

StepDerivative::~StepDerivative() {
  VecDestroy(&rhs_);
  VecDestroy(&work_);
  VecDestroy(&ft_);
}

static PetscErrorCode thetaOf(TS ts, PetscReal *theta, PetscBool *endpoint, bool *isTheta) {
  PetscBool match = PETSC_FALSE;
  PetscFunctionBeginUser;
  *isTheta = false;
  for (TSType type : {TSTHETA, TSBEULER, TSCN}) {
    PetscCall(PetscObjectTypeCompare((PetscObject)ts, type, &match));
    if (match) break;
  }
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
  PetscCall(thetaOf(ts, &theta, &endpoint, &isTheta));
  if (!isTheta) PetscFunctionReturn(0);
  PetscCall(stepMatrix(ts, &ksp, &A));
  PetscCall(objectState((PetscObject)A, &matState_));
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
  // F_u̇ (u1 − u0)/(θh²): F = u̇ − f for an ODE, M u̇ − f for a DAE (Dynamics::IFunction).
  PetscCall(VecWAXPY(rhs_, -1.0, u0, u1));
  if (dyn_.isDAE()) PetscCall(VecPointwiseMult(rhs_, dyn_.massDiagonal(), rhs_));
  PetscCall(VecScale(rhs_, 1.0 / (theta * h * h)));
  if (dyn_.model().explicitTime()) {
    // −F_t = f_t at the stage: (t0 + h, u1) with the endpoint, (t0 + θh, u0 + θ(u1 − u0)) otherwise.
    PetscReal tStage = t0 + h;
    PetscCall(VecCopy(u1, work_));
    if (!endpoint) {
      tStage = t0 + theta * h;
      PetscCall(VecAXPBY(work_, 1 - theta, theta, u0));
    }
    if (!ft_) PetscCall(VecDuplicate(u1, &ft_));
    PetscCall(dyn_.rhsTimeDerivative(tStage, work_, dyn_.mode, ft_));
    PetscCall(VecAXPY(rhs_, 1.0, ft_));
  }
  PetscCall(VecZeroEntries(work_));  // a KSP with a nonzero initial guess starts from zero
  PetscCall(KSPSolve(ksp, rhs_, work_));
  KSPConvergedReason reason;
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  if (reason < 0) PetscFunctionReturn(0);  // the same on every rank
  PetscCall(VecCopy(work_, dudh));
  *available = true;
  PetscFunctionReturn(0);
}

} // namespace hybridsens
