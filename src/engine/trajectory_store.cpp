#include "engine/trajectory_store.hpp"

#include <petsc/private/tsimpl.h>

namespace hybridsens {

void TrajectoryStore::clear() {
  for (auto &e : entries_) {
    VecDestroy(&e.U);
    for (auto &s : e.stages) VecDestroy(&s);
  }
  entries_.clear();
}

PetscErrorCode TrajectoryStore::record(TS ts, PetscInt step, PetscReal time, PetscReal tprev, Vec U,
                                       const DiscreteState &mode) {
  PetscFunctionBeginUser;
  PetscCheck(step == (PetscInt)entries_.size(), PetscObjectComm((PetscObject)ts), PETSC_ERR_PLIB,
             "trajectory records out of order: step %" PetscInt_FMT " after %zu records", step, entries_.size());
  Entry e;
  e.time = time;
  e.tprev = tprev;
  e.mode = mode;
  PetscCall(VecDuplicate(U, &e.U));
  PetscCall(VecCopy(U, e.U));
  if (step > 0) {
    PetscInt ns;
    Vec *Y;
    PetscCall(TSGetStages(ts, &ns, &Y));
    for (PetscInt i = 0; i < ns; ++i) {
      // For stiffly accurate methods the last stage is the solution itself (as TSTrajectoryBasic).
      if (ts->stifflyaccurate && i == ns - 1) continue;
      Vec s;
      PetscCall(VecDuplicate(Y[i], &s));
      PetscCall(VecCopy(Y[i], s));
      e.stages.push_back(s);
    }
  }
  entries_.push_back(std::move(e));
  PetscFunctionReturn(0);
}

PetscErrorCode TrajectoryStore::load(TS ts, PetscInt step) const {
  PetscFunctionBeginUser;
  PetscCheck(step >= 0 && step < (PetscInt)entries_.size(), PetscObjectComm((PetscObject)ts), PETSC_ERR_ARG_OUTOFRANGE,
             "no trajectory record for step %" PetscInt_FMT, step);
  const Entry &e = entries_[step];
  Vec X;
  PetscCall(TSGetSolution(ts, &X));
  PetscCall(VecCopy(e.U, X));
  PetscCall(TSSetTime(ts, e.time));
  if (step > 0) {
    PetscInt ns;
    Vec *Y;
    PetscCall(TSGetStages(ts, &ns, &Y));
    for (PetscInt i = 0, k = 0; i < ns; ++i) {
      if (ts->stifflyaccurate && i == ns - 1) continue;
      PetscCall(VecCopy(e.stages[k++], Y[i]));
    }
    PetscCall(TSSetTimeStep(ts, e.tprev - e.time));
  }
  PetscFunctionReturn(0);
}

} // namespace hybridsens
