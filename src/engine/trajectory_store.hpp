// TrajectoryStore: every accepted step, kept so the reverse sweep can replay it exactly.
//
// Why not a PETSc TSTrajectory: in PETSc 3.18 the memory trajectory skips the last step of a
// solve, recomputation from checkpoints re-runs event handlers, and the record at an event
// step holds the post-reset state U⁺ while the adjoint of that step needs U⁻. Here record N of
// a step ending at an event holds U⁻ (the state the step produced) and the mode the step ran
// in; record N+1 holds the stages of the next step, which start from U⁺. Without checkpoints
// nothing is recomputed; with them (below) a step is re-taken, never integrated anew.
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
//
// With checkpoints (-hs_checkpoints K): every step keeps its time, size and mode, but at most K
// states are kept (in memory, or on disk with -hs_checkpoints_dir); a record asked for is
// re-taken from the nearest kept state by the engine's replay (Replay below), which repeats the
// step with the size and mode it was taken with, from the state after the transitions the event
// log recorded — it never looks for events. The forward sweep keeps evenly spaced states (at
// most ⌈K/2⌉, thinned as the run grows); the rest of the K serve the binomial schedule of the
// reverse sweeps (engine/checkpoint_schedule.hpp). Records are re-taken in the order the sweeps
// ask for them (reverse: binomial; forward: one step from the previous record).
#pragma once

#include "hybridsens/model.hpp"

#include <petscts.h>

#include <functional>
#include <map>
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
    PetscInt checkpoints = 0;   // -hs_checkpoints K; 0: every step
    std::string checkpointsDir; // -hs_checkpoints_dir (must exist); empty: memory
    bool rebuiltSteps = false;  // -hs_test_rebuilt_steps: load() sets t_n − t_{n+1}, not the step taken (must-fail tests)
  };
  // Re-takes step n: on entry the TS solution holds the state record n − 1 holds (before the
  // transitions at its end); on return the TS solution and stages are record n's. Collective.
  using Replay = std::function<PetscErrorCode(PetscInt n)>;
  void setReplay(TS ts, Replay replay) {
    replayTs_ = ts;
    replay_ = std::move(replay);
  }
  struct CheckpointStats {
    PetscInt stored = 0;      // states kept (forward sweep and schedule), counted each time
    PetscInt mostHeld = 0;    // most states held at once (≤ K)
    PetscInt recomputed = 0;  // steps re-taken
  };
  const CheckpointStats &checkpointStats() const { return ckptStats_; }
  bool checkpointing() const { return cfg_.checkpoints > 0 && cfg_.keepStates; }
  // Collective. Drops the previous records and prepares for a run whose vectors look like layout.
  PetscErrorCode setUp(MPI_Comm comm, const Config &cfg, Vec layout);
  // Drops the records, the files and the run's directory (local: safe after an error).
  void clear();
  // As clear(), but size() stays and keepsStates() becomes false (a later reader is told why).
  void release();
  // Record the step that ended at `time` with state U (U⁻ at an event) and the stages in ts.
  // h: the size the integrator took the step with (what a replay repeats; 0 for step 0).
  PetscErrorCode record(TS ts, PetscInt step, PetscReal time, PetscReal tprev, Vec U, const DiscreteState &mode, PetscReal h);
  // Load record `step` into ts for the adjoint step that ends there (vec_sol, stages, time,
  // and time_step = t_prev - t as PETSc's adjoint expects).
  PetscErrorCode load(TS ts, PetscInt step) const;
  PetscInt size() const { return count_; }
  // time(), mode(), load() and state() need keepsStates().
  PetscReal time(PetscInt step) const { return entries_[step].time; }
  // The mode step `step` ran in (kept once per change of mode: a grid's discrete state is
  // replicated on every rank and changes only at events).
  const DiscreteState &mode(PetscInt step) const;
  PetscReal stepSize(PetscInt step) const { return entries_[step].h; }
  // Whether the records were kept.
  bool keepsStates() const { return cfg_.keepStates; }
  // The stored state of `step` (read into a scratch vector, valid until the next call).
  PetscErrorCode state(PetscInt step, Vec *out) const;
  // This run's own directory on disk (empty in memory).
  const std::string &runDirectory() const { return runDir_; }

private:
  struct Entry {
    PetscReal time = 0, tprev = 0, h = 0;
    std::vector<PetscScalar> values;  // memory: this rank's part of U, then of each stored stage (empty with checkpoints)
  };
  std::string fileName(PetscInt step) const;
  PetscErrorCode checkStates(MPI_Comm comm) const;
  PetscErrorCode memoryLimit(Vec layout);
  PetscErrorCode writeStep(PetscInt step, const std::vector<Vec> &vecs) const;
  PetscErrorCode readStep(PetscInt step, const std::vector<Vec> &vecs) const;
  const char *dirOption() const { return checkpointing() ? "-hs_checkpoints_dir" : "-hs_trajectory_dir"; }
  const std::string &dirName() const { return checkpointing() ? cfg_.checkpointsDir : cfg_.dir; }
  // Checkpoints (all collective: every rank runs the same schedule).
  struct Held {
    bool fromForwardSweep = false;
    std::vector<PetscScalar> values;  // this rank's part of the state (empty on disk)
  };
  PetscErrorCode keepState(PetscInt step, Vec U, bool fromForwardSweep) const;
  PetscErrorCode dropState(PetscInt step) const;
  PetscErrorCode restoreState(PetscInt step, Vec X) const;
  PetscErrorCode thinForwardStates(PetscInt step);
  PetscErrorCode captureRecord(PetscInt step) const;
  PetscErrorCode materialize(PetscInt step) const;

  std::vector<Entry> entries_;
  std::vector<std::pair<PetscInt, DiscreteState>> modes_;  // (first step, mode) at each change
  PetscInt count_ = 0;
  MPI_Comm comm_ = MPI_COMM_NULL;
  Config cfg_;
  std::string runDir_;          // this rank's directory of this run (disk only)
  PetscInt filesWritten_ = 0;   // step files in runDir_
  Vec scratch_ = nullptr;       // for state(step)
  PetscReal limitBytes_ = 0;    // all ranks together (memory only)
  PetscReal storedBytes_ = 0;   // all ranks together
  bool limitFromOption_ = false;
  // Checkpoints. The records are re-created on demand (const access to the same logical
  // trajectory), hence mutable.
  TS replayTs_ = nullptr;
  Replay replay_;
  PetscInt stride_ = 1;                         // the forward sweep keeps the states of multiples of it
  mutable std::map<PetscInt, Held> held_;       // kept states by step
  mutable PetscInt current_ = -1;               // the step whose record currentValues_ holds
  mutable std::vector<PetscScalar> currentValues_;
  mutable CheckpointStats ckptStats_;
};

} // namespace hybridsens
