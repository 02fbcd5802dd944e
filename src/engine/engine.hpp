// Engine: integrates a hybrid model with PETSc TS, stepping itself around TSStep.
//
// Why not TSSolve + TSEvent: PETSc 3.18's TSEvent does not filter directions, re-fires
// guards that stay within tolerance, compares only signs at step ends (so two close
// crossings are stepped over), and its rollback restores forward sensitivities from a stale
// copy. Owning detection and location avoids every one of those (docs/petsc-3.18.md §1, §2):
//  * detection is by side (value, or derivative when on the surface) in the requested
//    direction, plus a Hermite check for two crossings hidden inside one step;
//  * location re-takes the step from the saved start state, the size from an interpolation of
//    the guard over the step size (Hermite data where a theta method gives the slope g'(h);
//    safeguarded by regula falsi), until the guard is zero to -hs_event_tol (relative to its
//    change over the step);
//  * TSForwardStep runs once, on the accepted step only, so no rollback can corrupt S;
//  * the trajectory records U⁻ at an event step and the mode the step ran in.
#pragma once

#include "engine/dynamics.hpp"
#include "engine/guard_evaluator.hpp"
#include "engine/step_derivative.hpp"
#include "engine/trajectory_store.hpp"
#include "hybridsens/event_log.hpp"
#include "hybridsens/options.hpp"

#include <petscts.h>

#include <memory>
#include <vector>

namespace hybridsens {

// Sensitivity drivers plug in here.
class EngineObserver {
public:
  virtual ~EngineObserver() = default;
  // Step `step` (from tprev to t) was accepted; U is the state it produced (U⁻ if an event
  // follows) and the TLM, if any, has been advanced over it. h is the size the integrator
  // stepped with: t is tprev + h rounded, so t − tprev differs from h in the last bits of t, and
  // every derivative of the step must use h (a size off by ulp(t) moves a stiff or index-2
  // step's derivative by ulp(t)/h relative: 1e-12 of a pendulum gradient over 3000 steps).
  virtual PetscErrorCode stepAccepted(PetscInt step, PetscReal tprev, PetscReal t, PetscReal h) { return 0; }
  // One transition was applied; the record holds its snapshots.
  virtual PetscErrorCode transitionApplied(const EventRecord &r) { return 0; }
  // Everything at the boundary after step `step` is done (transitions included): the state is
  // the right limit at t (measurement costs observe it here). Also called for step 0.
  virtual PetscErrorCode instantCompleted(PetscInt step, PetscReal t) { return 0; }
};

struct EngineStats {
  PetscInt steps = 0, rejectedSteps = 0, locationSteps = 0, events = 0;
  PetscInt locatedEvents = 0;  // guard transitions (state events: found by detection and location)
  PetscInt ydotSolves = 0;  // guard-rate evaluations of a DAE that needed ẏ (GuardEvaluator::rates)
  double wallSeconds = 0;
};

class Engine {
public:
  Engine(Dynamics &dyn, TS ts, const EngineOptions &opt);
  ~Engine();

  void addObserver(EngineObserver *o) { observers_.push_back(o); }
  // Extra step boundaries without events (measurement and output times).
  void setStopTimes(std::vector<PetscReal> t) { extraStops_ = std::move(t); }
  // Whether the trajectory keeps the states and stages (the reverse sweeps read them; a plain
  // simulation does not need them). Times and modes are always kept.
  void keepTrajectoryStates(bool on) { keepStates_ = on; }
  // Drop the trajectory's records, files and directory now (the step count stays).
  void releaseTrajectory() { traj_.release(); }
  // Integrate from (t0, u0) in the dynamics' current mode to tf. u0 must be consistent for a
  // DAE (Solver::initialize does that). The final state stays in the TS solution vector.
  PetscErrorCode run(Vec u0, PetscReal t0, PetscReal tf);

  const EventLog &log() const { return *log_; }
  // The log shared with whoever keeps it past this engine (a SolveResult); each run starts a new one.
  std::shared_ptr<const EventLog> sharedLog() const { return log_; }
  const TrajectoryStore &trajectory() const { return traj_; }
  const EngineStats &stats() const { return stats_; }
  // Where the last run ended (exactly its final time).
  PetscReal finalTime() const { return finalTime_; }
  TS ts() const { return ts_; }
  const EngineOptions &options() const { return opt_; }
  Dynamics &dynamics() { return dyn_; }
  // While transitions are applied: whether their instant was located strictly inside the step
  // that ends there, so that a remainder step follows up to the grid point that step aimed at
  // (false: the instant is the end of an uncut step — a step point or a stop).
  bool transitionsCutStep() const { return transitionsCutStep_; }
  GuardEvaluator &guards() { return guards_; }

private:
  struct Stop {
    PetscReal time;
    std::vector<PetscInt> timeEvents;  // time events firing at this stop (may be empty)
  };
  // A guard found on its surface at a step start (startSides) with its rate and rate scale.
  struct SurfaceStart {
    bool grazing = false;  // the rate is below -hs_grazing_tol × scale: the side is unknown
    PetscReal t = 0, scale = 0;
    PetscScalar rate = 0;
  };
  struct StepStart {
    PetscReal t = 0, tprevPrev = 0;
    PetscInt steps = 0;
  };

  // What one pass of run()'s loop plans: the step from t, of size h — hWanted as the integrator
  // proposed it, shortened to land on `stop` when it would reach it (aimsAtStop).
  struct StepPlan {
    PetscReal t = 0, hWanted = 0, h = 0;
    bool aimsAtStop = false;
    const Stop *stop = nullptr;
  };
  // What the step did: its size before any location (hFull), the integrator's next proposal,
  // whether it reached its stop, whether an event cut it (eventInside), the guards that fire at
  // its end and those crossed at the last scan, the guard values and (if computed) rates at its end.
  struct StepOutcome {
    PetscReal hFull = 0, hProposal = 0;
    bool reachedStop = false, atStop = false, eventInside = false;
    bool ratesStale = false;  // rateEnd (if any) is not of the final step end: recompute
    std::vector<PetscInt> fired, crossed;
    std::vector<PetscScalar> gEnd, rateEnd;
  };

  // The named steps of run().
  PetscErrorCode prepareRun(Vec u0, PetscReal t0, PetscReal tf);
  PetscErrorCode takePlannedStep(const StepPlan &plan, PetscReal hnext, PetscReal resumeH, StepOutcome &out);
  PetscErrorCode detectEvents(const StepPlan &plan, StepOutcome &out);
  PetscErrorCode acceptStep(PetscInt step);
  PetscErrorCode advanceTangentLinearModel(PetscInt step);
  PetscErrorCode completeInstant(PetscInt step, const StepPlan &plan, StepOutcome &out);
  PetscErrorCode scanStepEnd(StepOutcome &out);
  std::vector<PetscReal> surfaceTolerances(const std::vector<PetscScalar> &gEnd) const;
  void classifyGuards(const std::vector<PetscScalar> &g, const std::vector<PetscReal> &tol, std::vector<PetscInt> &crossed,
                      std::vector<PetscInt> &atEnd) const;
  PetscErrorCode buildStops(PetscReal t0, PetscReal tf);
  PetscErrorCode takeStep(PetscReal h, bool forceAccept);
  PetscErrorCode retakeStep(PetscReal h);
  PetscErrorCode startSides(const std::vector<PetscInt> &justFired);
  PetscErrorCode endRates(std::vector<PetscScalar> &rate);
  PetscErrorCode ensureStartRates();
  PetscErrorCode checkLeftSurface();
  PetscErrorCode checkStepCount(PetscReal h);
  PetscErrorCode checkTimeIndependence(PetscReal t, Vec X);
  PetscErrorCode guardSlopes(PetscReal h, std::vector<PetscScalar> &slope, std::vector<PetscScalar> &curvature);
  PetscErrorCode flowCurvatures(PetscReal t, Vec X, Vec fX, PetscReal h, std::vector<PetscScalar> &curvature);
  PetscErrorCode locate(PetscReal hHi, std::vector<PetscScalar> gHi, std::vector<PetscInt> &fired);
  PetscErrorCode applyTransitions(PetscInt step, const std::vector<PetscInt> &timeEvents, const std::vector<PetscInt> &guards);
  PetscErrorCode checkZeno(const EventRecord &r);
  // Checkpoints (-hs_checkpoints): re-take step n as it was taken (TrajectoryStore::Replay).
  PetscErrorCode replayStep(PetscInt n);
  PetscErrorCode checkReplayable();
  PetscErrorCode allowNewtonReuse(bool on);

  Dynamics &dyn_;
  TS ts_;
  EngineOptions opt_;
  GuardEvaluator guards_;
  StepDerivative stepDerivative_;  // du/dh of a theta step: the slopes of location's samples
  std::shared_ptr<EventLog> log_ = std::make_shared<EventLog>();
  TrajectoryStore traj_;
  bool keepStates_ = true;
  EngineStats stats_;
  std::vector<EngineObserver *> observers_;
  std::vector<PetscReal> extraStops_;
  std::vector<Stop> stops_;
  PetscReal t0_ = 0, tf_ = 0, finalTime_ = 0;

  // Step-start bookkeeping for re-taking steps bit-exactly.
  Vec uStart_ = nullptr, udot_ = nullptr, dudh_ = nullptr, probe_ = nullptr;
  StepStart start_;
  PetscReal currentH_ = 0;
  PetscReal takenH_ = 0;  // the size the last TSStep took its (accepted) step with
  bool transitionsCutStep_ = false;
  std::vector<PetscScalar> gStart_, rateStart_;
  bool newtonReuse_ = false;  // Newton solves may keep an earlier factorization (not when checkpointing)
  bool explicitOneStep_ = false;  // RK, SSP, Euler: location's sample slopes are the guards' rates (guardSlopes)
  PetscInt explicitOrder_ = 0;    // an explicit RK's order (0 otherwise): from 3 on, samples carry flow curvatures
  bool startCurvatureExact_ = false;  // the flow's curvature at the step start is g''(0) (startCurvatureFromFlow)
  bool rateStartKnown_ = false;  // rateStart_ holds the rates at the step start (else: ensureStartRates)
  std::vector<int> sideStart_;
  std::vector<SurfaceStart> surface_;
};

} // namespace hybridsens
