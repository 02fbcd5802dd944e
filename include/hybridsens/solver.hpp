// Solver: the user-facing entry point. It owns the PETSc TS (configure it with PETSc options
// or through ts()), integrates the hybrid model, and writes the JSON summary.
#pragma once

#include "hybridsens/event_log.hpp"
#include "hybridsens/model.hpp"
#include "hybridsens/options.hpp"

#include <petscts.h>

#include <memory>
#include <string>
#include <vector>

namespace hybridsens {

class Dynamics;
class Engine;

struct SolveStats {
  PetscInt steps = 0, rejectedSteps = 0, locationSteps = 0, events = 0;
  double wallSeconds = 0;
};

class Solver {
public:
  explicit Solver(const HybridModel &model);
  ~Solver();
  Solver(const Solver &) = delete;
  Solver &operator=(const Solver &) = delete;

  // The TS the engine drives. Set defaults (type, dt, final time) on it, then setFromOptions().
  TS ts() const { return ts_; }
  // Reads -hs_* options and calls TSSetFromOptions.
  PetscErrorCode setFromOptions();
  EngineOptions &options() { return opt_; }
  PetscErrorCode setParameters(const std::vector<PetscReal> &p);
  const std::vector<PetscReal> &parameters() const { return params_; }

  // Forward solve from u0(p) at the TS's current time to its max time.
  PetscErrorCode solve();

  Vec finalState() const;
  PetscReal finalTime() const;
  const EventLog &events() const;
  SolveStats stats() const;
  const DiscreteState &finalDiscreteState() const;

  // JSON summary (keys documented in the README); no-op when file is empty.
  PetscErrorCode writeSummary(const std::string &file) const;
  // Writes to -hs_summary if given.
  PetscErrorCode writeSummaryFromOptions() const { return writeSummary(opt_.summaryFile); }

private:
  PetscErrorCode build();

  const HybridModel &model_;
  TS ts_ = nullptr;
  EngineOptions opt_;
  std::vector<PetscReal> params_;
  std::unique_ptr<Dynamics> dyn_;
  std::unique_ptr<Engine> engine_;
  Vec u0_ = nullptr;
};

} // namespace hybridsens
