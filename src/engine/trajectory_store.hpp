// TrajectoryStore: every accepted step, kept so the reverse sweep can replay it exactly.
//
// Why not a PETSc TSTrajectory: in PETSc 3.18 the memory trajectory skips the last step of a
// solve, recomputation from checkpoints re-runs event handlers (PETSC-3.18.md §3.3), and the
// record at an event step holds the post-reset state U⁺ while the adjoint of that step needs
// U⁻. Here record N of a step ending at an event holds U⁻ (the state the step produced) and
// the mode the step ran in; record N+1 holds the stages of the next step, which start from U⁺.
// Nothing is ever recomputed, so no configuration can recompute across an event.
#pragma once

#include "hybridsens/model.hpp"

#include <petscts.h>

#include <string>
#include <vector>

namespace hybridsens {

class TrajectoryStore {
public:
  ~TrajectoryStore() {
    clear();
    VecDestroy(&diskState_);
  }
  // Keep states and stages in files under dir (one PETSc binary file per step) instead of in
  // memory; times and modes stay in memory. Binary I/O: the reverse sweep is bit-identical.
  PetscErrorCode useDisk(MPI_Comm comm, const std::string &dir, Vec layout);
  void clear();
  // Record the step that ended at `time` with state U (U⁻ at an event) and the stages in ts.
  PetscErrorCode record(TS ts, PetscInt step, PetscReal time, PetscReal tprev, Vec U, const DiscreteState &mode);
  // Load record `step` into ts for the adjoint step that ends there (vec_sol, stages, time,
  // and time_step = t_prev - t as PETSc's adjoint expects).
  PetscErrorCode load(TS ts, PetscInt step) const;
  PetscInt size() const { return (PetscInt)entries_.size(); }
  PetscReal time(PetscInt step) const { return entries_[step].time; }
  const DiscreteState &mode(PetscInt step) const { return entries_[step].mode; }
  // The stored state of `step` (for a disk store: read into a scratch vector, valid until the
  // next call).
  PetscErrorCode state(PetscInt step, Vec *out) const;

private:
  struct Entry {
    PetscReal time = 0, tprev = 0;
    Vec U = nullptr;
    std::vector<Vec> stages;
    DiscreteState mode;
  };
  std::string fileName(PetscInt step) const;
  std::vector<Entry> entries_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::string dir_;  // empty: memory
  Vec diskState_ = nullptr;  // scratch for state(step) on disk
};

} // namespace hybridsens
