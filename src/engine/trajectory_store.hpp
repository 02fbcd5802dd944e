// TrajectoryStore: every accepted step, kept so the reverse sweep can replay it exactly.
//
// Why not a PETSc TSTrajectory: in PETSc 3.18 the memory trajectory skips the last step of a
// solve, recomputation from checkpoints re-runs event handlers, and the record at an event
// step holds the post-reset state U⁺ while the adjoint of that step needs U⁻. Here record N of
// a step ending at an event holds U⁻ (the state the step produced) and the mode the step ran
// in; record N+1 holds the stages of the next step, which start from U⁺. Nothing is ever
// recomputed, so no configuration can recompute across an event.
//
// What is kept: nothing but the number of steps unless something will read the records (the
// adjoint, the Hessian sweeps) — a plain simulation's memory does not grow with its steps.
// Otherwise times, modes, and the state and stage values. Each rank
// keeps its own part of every vector (raw values, no Vec objects, so the size is exactly
// values × sizeof(PetscScalar)):
//  * in memory, up to a limit (-hs_trajectory_max_memory, or 3/4 of the memory available when
//    the run starts); reaching it is an error with the figures and the way out;
//  * on disk (-hs_trajectory_dir DIR): each rank writes its part of a step to its own file in
//    its own new directory DIR/hybridsens-trajectory-<pid>-r<rank>-XXXXXX, so runs sharing DIR
//    never touch each other's files. The directory and its files are removed when the store is
//    cleared or destroyed (after success and after an error alike).
#pragma once

#include "hybridsens/model.hpp"

#include <petscts.h>

#include <string>
#include <vector>

namespace hybridsens {

class TrajectoryStore {
public:
  TrajectoryStore() = default;
  ~TrajectoryStore();
  TrajectoryStore(const TrajectoryStore &) = delete;
  TrajectoryStore &operator=(const TrajectoryStore &) = delete;

  struct Config {
    bool keepStates = true;     // false: count the steps only (nothing will read the records)
    std::string dir;            // -hs_trajectory_dir; empty: memory
    PetscReal maxBytes = 0;     // -hs_trajectory_max_memory (all ranks); 0: from the available memory
    PetscReal t0 = 0, tf = 0;   // the run's horizon (for the projection in the memory error)
  };
  // Collective. Drops the previous records and prepares for a run whose vectors look like layout.
  PetscErrorCode setUp(MPI_Comm comm, const Config &cfg, Vec layout);
  // Drops the records, the files and the run's directory (local: safe after an error).
  void clear();
  // As clear(), but size() stays and keepsStates() becomes false (a later reader is told why).
  void release();
  // Record the step that ended at `time` with state U (U⁻ at an event) and the stages in ts.
  PetscErrorCode record(TS ts, PetscInt step, PetscReal time, PetscReal tprev, Vec U, const DiscreteState &mode);
  // Load record `step` into ts for the adjoint step that ends there (vec_sol, stages, time,
  // and time_step = t_prev - t as PETSc's adjoint expects).
  PetscErrorCode load(TS ts, PetscInt step) const;
  PetscInt size() const { return count_; }
  // time(), mode(), load() and state() need keepsStates().
  PetscReal time(PetscInt step) const { return entries_[step].time; }
  const DiscreteState &mode(PetscInt step) const { return entries_[step].mode; }
  // Whether the records were kept.
  bool keepsStates() const { return cfg_.keepStates; }
  // The stored state of `step` (read into a scratch vector, valid until the next call).
  PetscErrorCode state(PetscInt step, Vec *out) const;
  // This run's own directory on disk (empty in memory).
  const std::string &runDirectory() const { return runDir_; }

private:
  struct Entry {
    PetscReal time = 0, tprev = 0;
    std::vector<PetscScalar> values;  // memory: this rank's part of U, then of each stored stage
    DiscreteState mode;
  };
  std::string fileName(PetscInt step) const;
  PetscErrorCode checkStates(MPI_Comm comm) const;
  PetscErrorCode memoryLimit(Vec layout);
  PetscErrorCode writeStep(PetscInt step, const std::vector<Vec> &vecs) const;
  PetscErrorCode readStep(PetscInt step, const std::vector<Vec> &vecs) const;

  std::vector<Entry> entries_;
  PetscInt count_ = 0;
  MPI_Comm comm_ = MPI_COMM_NULL;
  Config cfg_;
  std::string runDir_;          // this rank's directory of this run (disk only)
  PetscInt filesWritten_ = 0;   // step files in runDir_
  Vec scratch_ = nullptr;       // for state(step)
  PetscReal limitBytes_ = 0;    // all ranks together (memory only)
  PetscReal storedBytes_ = 0;   // all ranks together
  bool limitFromOption_ = false;
};

} // namespace hybridsens
