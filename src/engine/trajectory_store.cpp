#include "engine/trajectory_store.hpp"

#include "util/log_events.hpp"

#include <petsc/private/tsimpl.h>

#include <cstdio>

namespace hybridsens {

void TrajectoryStore::clear() {
  for (size_t i = 0; i < entries_.size(); ++i) {
    auto &e = entries_[i];
    VecDestroy(&e.U);
    for (auto &s : e.stages) VecDestroy(&s);
    if (!dir_.empty()) {
      std::remove(fileName((PetscInt)i).c_str());
      std::remove((fileName((PetscInt)i) + ".info").c_str());
    }
  }
  entries_.clear();
}

PetscErrorCode TrajectoryStore::useDisk(MPI_Comm comm, const std::string &dir, Vec layout) {
  PetscMPIInt rank;
  PetscFunctionBeginUser;
  PetscCall(VecDestroy(&diskState_));
  if (!dir.empty()) PetscCall(VecDuplicate(layout, &diskState_));
  comm_ = comm;
  dir_ = dir;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!dir.empty() && rank == 0) PetscCall(PetscMkdir(dir.c_str()));
  PetscCallMPI(MPI_Barrier(comm));
  PetscFunctionReturn(0);
}

std::string TrajectoryStore::fileName(PetscInt step) const {
  char name[64];
  std::snprintf(name, sizeof(name), "/step-%06d.bin", (int)step);
  return dir_ + name;
}

PetscErrorCode TrajectoryStore::record(TS ts, PetscInt step, PetscReal time, PetscReal tprev, Vec U,
                                       const DiscreteState &mode) {
  ScopedLogEvent log(LogEvent::Trajectory);
  PetscFunctionBeginUser;
  PetscCheck(step == (PetscInt)entries_.size(), PetscObjectComm((PetscObject)ts), PETSC_ERR_PLIB,
             "trajectory records out of order: step %" PetscInt_FMT " after %zu records", step, entries_.size());
  Entry e;
  e.time = time;
  e.tprev = tprev;
  e.mode = mode;
  std::vector<Vec> vecs = {U};
  if (step > 0) {
    PetscInt ns;
    Vec *Y;
    PetscCall(TSGetStages(ts, &ns, &Y));
    for (PetscInt i = 0; i < ns; ++i)
      // For stiffly accurate methods the last stage is the solution itself (as TSTrajectoryBasic).
      if (!(ts->stifflyaccurate && i == ns - 1)) vecs.push_back(Y[i]);
  }
  if (dir_.empty()) {
    PetscCall(VecDuplicate(U, &e.U));
    PetscCall(VecCopy(U, e.U));
    for (size_t i = 1; i < vecs.size(); ++i) {
      Vec s;
      PetscCall(VecDuplicate(vecs[i], &s));
      PetscCall(VecCopy(vecs[i], s));
      e.stages.push_back(s);
    }
  } else {
    PetscViewer v;
    PetscCall(PetscViewerBinaryOpen(comm_, fileName(step).c_str(), FILE_MODE_WRITE, &v));
    for (Vec x : vecs) PetscCall(VecView(x, v));
    PetscCall(PetscViewerDestroy(&v));
  }
  entries_.push_back(std::move(e));
  PetscFunctionReturn(0);
}

PetscErrorCode TrajectoryStore::load(TS ts, PetscInt step) const {
  ScopedLogEvent log(LogEvent::Trajectory);
  PetscFunctionBeginUser;
  PetscCheck(step >= 0 && step < (PetscInt)entries_.size(), PetscObjectComm((PetscObject)ts), PETSC_ERR_ARG_OUTOFRANGE,
             "no trajectory record for step %" PetscInt_FMT, step);
  const Entry &e = entries_[step];
  Vec X, *Y = nullptr;
  PetscInt ns = 0;
  PetscCall(TSGetSolution(ts, &X));
  std::vector<Vec> targets = {X};
  if (step > 0) {
    PetscCall(TSGetStages(ts, &ns, &Y));
    for (PetscInt i = 0; i < ns; ++i)
      if (!(ts->stifflyaccurate && i == ns - 1)) targets.push_back(Y[i]);
  }
  if (dir_.empty()) {
    PetscCall(VecCopy(e.U, X));
    for (size_t i = 1; i < targets.size(); ++i) PetscCall(VecCopy(e.stages[i - 1], targets[i]));
  } else {
    PetscViewer v;
    PetscCall(PetscViewerBinaryOpen(comm_, fileName(step).c_str(), FILE_MODE_READ, &v));
    for (Vec x : targets) PetscCall(VecLoad(x, v));
    PetscCall(PetscViewerDestroy(&v));
  }
  PetscCall(TSSetTime(ts, e.time));
  if (step > 0) PetscCall(TSSetTimeStep(ts, e.tprev - e.time));
  PetscFunctionReturn(0);
}

PetscErrorCode TrajectoryStore::state(PetscInt step, Vec *out) const {
  PetscFunctionBeginUser;
  if (dir_.empty()) {
    *out = entries_[step].U;
    PetscFunctionReturn(0);
  }
  PetscViewer v;
  PetscCall(PetscViewerBinaryOpen(comm_, fileName(step).c_str(), FILE_MODE_READ, &v));
  PetscCall(VecLoad(diskState_, v));
  PetscCall(PetscViewerDestroy(&v));
  *out = diskState_;
  PetscFunctionReturn(0);
}

} // namespace hybridsens
