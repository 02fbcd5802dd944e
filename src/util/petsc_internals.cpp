// The only file that includes PETSc's private headers (see petsc_internals.hpp for why each
// function is needed). Every function below reads or writes fields of PETSc 3.18's private
// structures (struct _p_TS, struct _p_TSAdapt, struct _p_PetscObject); their names and meaning
// change between PETSc releases, so this file refuses to compile against any other version.
// To support another version, check each field against that version's tsimpl.h/petscimpl.h
// (and prefer a public function where the new version has one), then widen the guard.
#include "util/petsc_internals.hpp"

#include "hybridsens/detail/petsc_version.hpp"  // refuses any PETSc but 3.18 at compile time

#include <petsc/private/petscimpl.h>
#include <petsc/private/tsimpl.h>

namespace hybridsens {

PetscErrorCode objectState(PetscObject obj, PetscObjectState *state) {
  PetscFunctionBeginUser;
  PetscCall(PetscObjectStateGet(obj, state));
  PetscFunctionReturn(0);
}

PetscErrorCode markObjectModified(PetscObject obj) {
  PetscFunctionBeginUser;
  PetscCall(PetscObjectStateIncrease(obj));
  PetscFunctionReturn(0);
}

PetscErrorCode tsResetForFreshSolve(TS ts, PetscReal t0) {
  PetscFunctionBeginUser;
  ts->reject = 0;
  ts->steprestart = PETSC_TRUE;
  ts->steprollback = PETSC_FALSE;
  ts->rhsjacobian.time = PETSC_MIN_REAL;
  ts->ptime_prev = t0;
  PetscFunctionReturn(0);
}

PetscErrorCode tsSetPreviousTime(TS ts, PetscReal tprev) {
  PetscFunctionBeginUser;
  ts->ptime_prev = tprev;
  PetscFunctionReturn(0);
}

PetscErrorCode tsDiscardLastStep(TS ts) {
  PetscFunctionBeginUser;
  ts->steprollback = PETSC_TRUE;
  PetscFunctionReturn(0);
}

PetscErrorCode tsInvalidateRHSJacobian(TS ts) {
  PetscFunctionBeginUser;
  ts->rhsjacobian.time = PETSC_MIN_REAL;
  PetscFunctionReturn(0);
}

PetscErrorCode tsForwardSensitivitiesOn(TS ts, PetscBool *on) {
  PetscFunctionBeginUser;
  *on = ts->forward_solve;
  PetscFunctionReturn(0);
}

PetscErrorCode tsStifflyAccurate(TS ts, PetscBool *accurate) {
  PetscFunctionBeginUser;
  *accurate = ts->stifflyaccurate;
  PetscFunctionReturn(0);
}

PetscErrorCode tsAdaptAlwaysAccepts(TSAdapt adapt, PetscBool *always) {
  PetscFunctionBeginUser;
  *always = adapt->always_accept;
  PetscFunctionReturn(0);
}

PetscErrorCode tsRealiasParameterJacobian(TS ts, Mat Jp) {
  PetscFunctionBeginUser;
  // (ts.c of 3.18, TSSetUp: ts->Jacp = the RHS ∂f/∂p matrix, referenced, when there is no IJacobianP.)
  if (ts->Jacp && !ts->ijacobianp) {
    PetscCall(MatDestroy(&ts->Jacp));
    PetscCall(PetscObjectReference((PetscObject)Jp));
    ts->Jacp = Jp;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode tsEnsureTrajectoryObject(TS ts) {
  PetscFunctionBeginUser;
  if (!ts->trajectory) {
    PetscCall(TSTrajectoryCreate(PetscObjectComm((PetscObject)ts), &ts->trajectory));
    PetscCall(TSTrajectorySetType(ts->trajectory, ts, TSTRAJECTORYBASIC));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode tsSwapTrajectoryObject(TS ts, TSTrajectory in, TSTrajectory *out) {
  PetscFunctionBeginUser;
  if (out) *out = ts->trajectory;
  ts->trajectory = in;
  PetscFunctionReturn(0);
}

PetscErrorCode tsResetAdjointStepCount(TS ts) {
  PetscFunctionBeginUser;
  ts->adjoint_steps = 0;
  PetscFunctionReturn(0);
}

PetscErrorCode tsDestroyQuadratureTS(TS ts) {
  PetscFunctionBeginUser;
  PetscCall(TSDestroy(&ts->quadraturets));
  PetscFunctionReturn(0);
}

PetscErrorCode tsDestroyTrajectoryObject(TS ts) {
  PetscFunctionBeginUser;
  PetscCall(TSTrajectoryDestroy(&ts->trajectory));
  PetscFunctionReturn(0);
}

// PetscMonitorCompare takes monitors as the generic PetscErrorCode(*)(void); the cast goes
// through void(*)(void), the type GCC accepts as "any function" without -Wcast-function-type.
template <class Fn> static PetscErrorCode (*genericMonitor(Fn fn))(void) {
  return reinterpret_cast<PetscErrorCode (*)(void)>(reinterpret_cast<void (*)(void)>(fn));
}

PetscErrorCode dropRepeatedAdjointMonitors(TS ts) {
  PetscInt kept = 0;
  PetscFunctionBeginUser;
  for (PetscInt i = 0; i < ts->numberadjointmonitors; ++i) {
    PetscBool repeated = PETSC_FALSE;
    for (PetscInt j = 0; j < kept && !repeated; ++j)
      PetscCall(PetscMonitorCompare(genericMonitor(ts->adjointmonitor[i]), ts->adjointmonitorcontext[i], ts->adjointmonitordestroy[i],
                                    genericMonitor(ts->adjointmonitor[j]), ts->adjointmonitorcontext[j], ts->adjointmonitordestroy[j],
                                    &repeated));
    if (repeated) continue;  // (its context was destroyed by PetscMonitorCompare)
    ts->adjointmonitor[kept] = ts->adjointmonitor[i];
    ts->adjointmonitorcontext[kept] = ts->adjointmonitorcontext[i];
    ts->adjointmonitordestroy[kept] = ts->adjointmonitordestroy[i];
    ++kept;
  }
  ts->numberadjointmonitors = kept;
  PetscFunctionReturn(0);
}

} // namespace hybridsens
