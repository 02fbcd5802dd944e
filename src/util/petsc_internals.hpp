// PetscInternals: everything the library does to PETSc objects that PETSc 3.18 has no public
// function for. It is the only code that reads or writes fields of PETSc's private structures
// (petsc_internals.cpp is the only file that includes petsc/private/*; tests/layers.py enforces
// it), so that a PETSc upgrade has one file to revisit. Each function says why the library
// needs it; everything with a public equivalent (TSGetTime, TSSetStepNumber, TSGetSolution,
// TSForwardGetSensitivities, ...) is called directly where it is needed.
//
// The library drives the TS step by step (TSStep, not TSSolve): it re-takes steps to locate
// events, changes the discrete state between steps and replays the trajectory backwards. What
// TSSolve and TSAdjointSolve would reset or set up on their own, and what a mode change makes
// stale, is reset here.
#pragma once

#include <petscts.h>

namespace hybridsens {

// ---- object state (PetscObjectStateGet / PetscObjectStateIncrease are private in 3.18) ----

// The state counter of obj: with its id, a cache key for "these are still the same contents".
PetscErrorCode objectState(PetscObject obj, PetscObjectState *state);
// Marks obj as modified, so that cached values (a Vec's norms) are recomputed. A user callback
// that wrote through VecGetArray on some ranks only leaves the state unchanged on the others,
// whose cached norms would skip the reduction and desynchronize the ranks.
PetscErrorCode markObjectModified(PetscObject obj);

// ---- TS stepping ---------------------------------------------------------------------------

// What TSSolve resets before a fresh solve, for a run that calls TSStep itself from time t0:
// the rejection counter, the restart flag (no stage reused from an earlier run), the roll-back
// flag, the RHS-Jacobian cache and the previous time.
PetscErrorCode tsResetForFreshSolve(TS ts, PetscReal t0);
// The previous time (TSGetPrevTime has no setter): restored when a step is re-taken from its
// saved start, so the step is bit-for-bit the one taken the first time.
PetscErrorCode tsSetPreviousTime(TS ts, PetscReal tprev);
// Marks the last step as discarded, so that a method with the first-same-as-last property does
// not reuse the discarded attempt's last stage when the step is re-taken. (TSRollBack would do
// it too, but it restores the state only up to rounding for RK and overwrites theta's
// sensitivities with a stale copy.)
PetscErrorCode tsDiscardLastStep(TS ts);
// Forgets the cached RHS Jacobian. The TS keys that cache on the time alone, so it would reuse
// a Jacobian across a change of discrete state at the same time, or after the library's own
// sweeps overwrote the Jacobian matrix.
PetscErrorCode tsInvalidateRHSJacobian(TS ts);
// Whether the TS carries forward sensitivities (TSForwardSetSensitivities was called): then the
// engine advances the tangent-linear model after each final step with TSForwardStep.
PetscErrorCode tsForwardSensitivitiesOn(TS ts, PetscBool *on);
// Whether the method's last stage is its solution (stiffly accurate): the stored trajectory then
// does not keep that stage a second time (as TSTrajectoryBasic does).
PetscErrorCode tsStifflyAccurate(TS ts, PetscBool *accurate);
// Whether the step controller accepts every step (TSAdaptSetAlwaysAccept has no getter): the
// engine forces one step to be accepted and restores the user's setting afterwards.
PetscErrorCode tsAdaptAlwaysAccepts(TSAdapt adapt, PetscBool *always);
// After TSSetRHSJacobianP with a new matrix Jp on a TS that is already set up: TSSetUp aliased
// the TS's parameter Jacobian to the RHS one once (when the problem has no IJacobianP), and
// TSSetRHSJacobianP does not redo it; make the alias point to Jp.
PetscErrorCode tsRealiasParameterJacobian(TS ts, Mat Jp);

// ---- adjoint -------------------------------------------------------------------------------

// TSAdjointSetUp insists on a trajectory object although the library replays steps from its
// own store: create an unused basic one if the TS has none.
PetscErrorCode tsEnsureTrajectoryObject(TS ts);
// The adjoint step counter that TSAdjointSolve zeroes before its loop (the library runs the
// reverse loop itself, calling TSAdjointStep).
PetscErrorCode tsResetAdjointStepCount(TS ts);
// After the reverse sweep, to leave the TS ready for another forward solve: destroy the
// quadrature TS and the trajectory object (TSAdjointReset leaves both).
PetscErrorCode tsDestroyQuadratureTS(TS ts);
PetscErrorCode tsDestroyTrajectoryObject(TS ts);
// Exchange the TS's trajectory object for `in` (may be null), returning the old one in *out (if
// out): a step re-taken from a checkpoint during the reverse sweep runs TSStep, which would set
// up the unused basic trajectory object (creating its directory on disk).
PetscErrorCode tsSwapTrajectoryObject(TS ts, TSTrajectory in, TSTrajectory *out);
// PETSc 3.18's TSAdjointMonitorSet compares a new monitor only with the first
// ts->numbermonitors (the forward count) entries, so every TSSetFromOptions registers
// -ts_adjoint_monitor once more (a Solver calls it on each setFromOptions) and each line would
// print twice. Drops the repeats (PetscMonitorCompare destroys a repeat's context).
PetscErrorCode dropRepeatedAdjointMonitors(TS ts);

} // namespace hybridsens
