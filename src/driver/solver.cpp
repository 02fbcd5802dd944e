#include "hybridsens/solver.hpp"

#include "util/linear_solve_defaults.hpp"

#include "engine/dynamics.hpp"
#include "engine/engine.hpp"
#include "jump/jump_algebra.hpp"
#include "sensitivity/adjoint_sensitivity.hpp"
#include "sensitivity/configuration.hpp"
#include "engine/cost_evaluator.hpp"
#include "jump/event_tangents.hpp"
#include "sensitivity/forward_sensitivity.hpp"
#include "util/gather.hpp"
#include "hybridsens/second_order.hpp"
#include "hybridsens/verify.hpp"
#include "util/petsc_internals.hpp"
#include "util/user_call.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace hybridsens {

// The TS exists from construction on, so that defaults (type, step, final time, linear solver)
// can be set on ts() before the one setFromOptions() that lets the command line override them.
// The model is attached later (build(), from setFromOptions() or solve()), where its errors
// (a negative localSize(), a Jacobian of the wrong size) can be returned. A failure of PETSc
// itself here is kept and returned by the first setFromOptions() or solve().
Solver::Solver(const HybridModel &model) : model_(model), params_(model.defaultParameters()) { buildError_ = createTs(); }

PetscErrorCode Solver::createTs() {
  SNES snes;
  KSP ksp;
  PetscFunctionBeginUser;
  PetscCall(TSCreate(model_.comm(), &ts_));
  PetscCall(TSSetExactFinalTime(ts_, TS_EXACTFINALTIME_MATCHSTEP));
  PetscCall(TSGetSNES(ts_, &snes));
  PetscCall(SNESGetKSP(snes, &ksp));
  PetscCall(setLinearSolveDefaults(ksp));
  PetscFunctionReturn(0);
}

Solver::~Solver() {
  fwd_.reset();
  jumps_.reset();
  tangents_.reset();
  costEval_.reset();
  engine_.reset();
  dyn_.reset();
  VecDestroy(&u0_);
  TSDestroy(&ts_);
}

PetscErrorCode Solver::build() {
  PetscFunctionBeginUser;
  if (dyn_) PetscFunctionReturn(0);
  PetscCheck(model_.localSize() >= 0, model_.comm(), PETSC_ERR_ARG_SIZ, "localSize() must be non-negative");
  auto dyn = std::make_unique<Dynamics>(model_, params_, 0);
  PetscCall(dyn->setUp());
  PetscCall(dyn->attach(ts_));
  dyn_ = std::move(dyn);
  engine_ = std::make_unique<Engine>(*dyn_, ts_, opt_.engine);
  PetscFunctionReturn(0);
}

PetscErrorCode Solver::setFromOptions() {
  const char *prefix;
  PetscFunctionBeginUser;
  PetscCall(buildError_);
  PetscCall(build());
  PetscCall(TSGetOptionsPrefix(ts_, &prefix));
  {
    // The integrator's linear solver by the system's size, now that it is known (unless the
    // program configured it through the API); the command line overrides it below.
    SNES snes;
    KSP ksp;
    PetscInt N;
    PetscCall(TSGetSNES(ts_, &snes));
    PetscCall(SNESGetKSP(snes, &ksp));
    PetscCall(VecGetSize(dyn_->templateVec(), &N));
    PetscCall(refreshLinearSolveDefaults(ksp, N, &kspDefault_, dyn_->isIndex2()));
  }
  // What the program set through the API is the default the command line overrides.
  SolverOptions o = opt_;
  o.forward = forward_ ? PETSC_TRUE : PETSC_FALSE;
  o.adjoint = adjoint_ ? PETSC_TRUE : PETSC_FALSE;
  o.hessian = hessianOn_ ? PETSC_TRUE : PETSC_FALSE;
  o.hessianMethod = (PetscInt)hessianMethod_;
  std::vector<std::string> names;
  PetscErrorCode ierr = 0;
  PetscOptionsBegin(model_.comm(), prefix, "hybridsens options", "Solver");
  OptionReader r(PetscOptionsObject);
  ierr = o.read(r);  // the block is closed (its strings freed) before an error is returned
  names = r.names();
  PetscOptionsEnd();
  PetscCall(ierr);
  names.insert(names.end(), optionsReadByModels().begin(), optionsReadByModels().end());
  PetscCall(refuseUnknownLibraryOptions(model_.comm(), prefix, names));
  PetscCall(refuseMisspelledOptions(model_.comm()));
  opt_ = o;
  forward_ = o.forward;
  adjoint_ = o.adjoint;
  hessianOn_ = o.hessian;
  hessianMethod_ = (HessianMethod)o.hessianMethod;
  if (o.forwardU0Set) {
    // -hs_forward_u0 -1: none; the indices are checked against the state at solve().
    u0Indices_.clear();
    for (PetscInt i : o.forwardU0)
      if (i >= 0) u0Indices_.push_back(i);
    u0Chosen_ = true;
  }
  if (o.outputTimesSet) outputTimes_ = o.outputTimes;
  PetscCall(TSSetFromOptions(ts_));
  PetscCall(dropRepeatedAdjointMonitors(ts_));
  engine_ = std::make_unique<Engine>(*dyn_, ts_, opt_.engine);
  PetscFunctionReturn(0);
}

PetscErrorCode Solver::setParameters(const std::vector<PetscReal> &p) {
  PetscFunctionBeginUser;
  PetscCheck(p.size() == model_.defaultParameters().size(), model_.comm(), PETSC_ERR_ARG_SIZ,
             "setParameters: %zu values given, the model has %zu parameters", p.size(), model_.defaultParameters().size());
  params_ = p;
  if (dyn_) dyn_->setParameters(p);
  PetscFunctionReturn(0);
}

// -log_view stages: one per phase, registered on first use. Only while PETSc logs (-log_view
// and friends): without logging a stage records nothing, and registering one costs more
// instructions than all the steps of a small simulation (PETSc sizes its event logs for it).
static PetscErrorCode pushStage(const char *name, PetscBool *pushed) {
  PetscLogStage stage;
  PetscFunctionBeginUser;
  PetscCall(PetscLogIsActive(pushed));
  if (!*pushed) PetscFunctionReturn(0);
  PetscCall(PetscLogStageGetId(name, &stage));
  if (stage < 0) PetscCall(PetscLogStageRegister(name, &stage));
  PetscCall(PetscLogStagePush(stage));
  PetscFunctionReturn(0);
}

// Whether computeHessian() and friends can still follow this solve (they need its trajectory).
bool Solver::secondOrderAvailable() const { return modelHessian_ || dynamic_cast<const SecondOrderModel *>(&model_); }

bool Solver::keepsTrajectoryStates() const { return adjoint_ || hessianOn_ || opt_.checkHessian || keepTrajectory_; }

// The trajectory (memory, or files under -hs_trajectory_dir) lasts no longer than needed. An
// error that reaches main() aborts the program (PETSc calls MPI_Abort) without running
// destructors, so a failed solve drops it here; after success it stays only if a Hessian may
// still be asked for.
PetscErrorCode Solver::solve() {
  PetscFunctionBeginUser;
  const PetscErrorCode ierr = solveOnce();
  if (engine_ && (ierr || !secondOrderAvailable())) engine_->releaseTrajectory();
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

// For an index-2 DAE the sensitivity of the algebraic variables right after a reset is not
// tracked (docs/index2-daes.md §4): a terminal cost, measurement or output at such an instant
// could read it, so that is refused rather than differentiated as zero.
PetscErrorCode Solver::refuseIndex2ObservationsAtEvents() const {
  const TrajectoryStore &traj = engine_->trajectory();
  std::vector<PetscReal> observed = costEval_->measurementTimes();
  observed.insert(observed.end(), outputTimes_.begin(), outputTimes_.end());
  PetscFunctionBeginUser;
  for (const auto &r : engine_->log().records()) {
    bool atObservation = r.step == traj.size() - 1;
    for (PetscReal tm : observed) atObservation = atObservation || std::fabs(r.time - tm) <= 1e-12 * std::max<PetscReal>(1, std::fabs(tm));
    PetscCheck(!atObservation, model_.comm(), PETSC_ERR_SUP,
               "index-2 DAE: event '%s' at t = %.17g coincides with the final time, a measurement or an output time: the sensitivity "
               "of the algebraic variables reinitialized there is not available; move the final time (-ts_max_time), the "
               "measurement or the output off the event",
               r.name.c_str(), (double)r.time);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode Solver::solveOnce() {
  PetscReal t0, tf;
  PetscFunctionBeginUser;
  PetscCall(buildError_);
  PetscCall(build());
  result_ = SolveResult();  // the previous result's objects are freed unless a copy keeps them
  if (!u0_) PetscCall(VecDuplicate(dyn_->templateVec(), &u0_));
  dyn_->mode = model_.initialDiscreteState();
  PetscCall(VecZeroEntries(u0_));
  HS_USER_CALL(model_.comm(), "initialState", model_.initialState(dyn_->context(), u0_));
  PetscReal dt0;
  PetscCall(TSGetTime(ts_, &t0));
  PetscCall(TSGetMaxTime(ts_, &tf));
  PetscCall(TSGetTimeStep(ts_, &dt0));
  PetscCall(dyn_->checkFinite(u0_, "initialState", t0, dyn_->mode));
  PetscCall(dyn_->reinitialize(t0, u0_, dyn_->mode, "of the initial state"));
  fwd_.reset();
  jumps_.reset();
  tangents_.reset();
  costEval_ = std::make_unique<CostEvaluator>(*dyn_, costs_);
  PetscCall(costEval_->checkDeclaredParts(t0, u0_, dyn_->mode));
  engine_ = std::make_unique<Engine>(*dyn_, ts_, opt_.engine);
  PetscCall(checkOutputTimes(t0, tf));
  std::vector<PetscReal> stops = costEval_->measurementTimes();
  stops.insert(stops.end(), outputTimes_.begin(), outputTimes_.end());
  engine_->setStopTimes(stops);
  // The states of every step are kept only if something will read them: the adjoint, the
  // Hessian after this solve (-hs_hessian, -hs_check_hessian), or a later Hessian call the
  // program announced with keepTrajectory(). A plain simulation keeps none, whatever the
  // model could differentiate: at 63k states over 154 steps that trajectory was 60 % of the
  // process' memory and a snapshot copy per step.
  engine_->keepTrajectoryStates(keepsTrajectoryStates());
  if (forward_ || adjoint_) {
    JumpTerms terms;
    terms.eventTime = !opt_.dropEventTimeTerm;
    terms.reset = !opt_.dropResetTerms;
    PetscCall(resolveInitialStateIndices());
    tangents_.reset();
    if (opt_.engine.discreteEventDerivative) {
      // Registered first: the sensitivity observers read what it records for each step.
      tangents_ = std::make_unique<EventTangents>(*engine_, *costEval_);
      engine_->addObserver(tangents_.get());
    }
    jumps_ = std::make_unique<JumpAlgebra>(*dyn_, engine_->guards(), *costEval_, terms, tangents_.get());
  }
  PetscCall(checkIntegratorConfiguration(ts_, *dyn_, costEval_->anyIntegrand()));
  if (adjoint_) PetscCall(checkSensitivityConfiguration(ts_, *dyn_, true));  // before the forward run, not after it
  if (forward_) {
    PetscCall(checkSensitivityConfiguration(ts_, *dyn_, false));
    PetscCall(dyn_->setExtraSensitivityColumns((PetscInt)u0Indices_.size(), ts_));
  }
  if (forward_ || !costs_.empty() || !outputTimes_.empty() || forwardMonitor_) {
    // Forward sensitivities, or (without jumps) just the objective values and outputs.
    fwd_ = std::make_unique<ForwardSensitivity>(*engine_, *costEval_, forward_ ? jumps_.get() : nullptr, u0Indices_);
    fwd_->setOutputTimes(outputTimes_);
    fwd_->setMonitor(forwardMonitor_);
    PetscCall(fwd_->setUp(t0, u0_));
    engine_->addObserver(fwd_.get());
  }
  if (!forward_) PetscCall(TSForwardReset(ts_));  // no stale TLM from an earlier forward run
  PetscBool staged;
  PetscCall(pushStage(forward_ ? "hybridsens forward+TLM" : "hybridsens forward", &staged));
  PetscCall(engine_->run(u0_, t0, tf));
  if (staged) PetscCall(PetscLogStagePop());
  if (dyn_->isIndex2() && (forward_ || adjoint_)) PetscCall(refuseIndex2ObservationsAtEvents());
  solvedParams_ = params_;
  SolveResult r;
  r.initialStateIndices = u0Indices_;
  if (forward_ || adjoint_) r.gradient.resize(costs_.size());
  if (fwd_) {
    ForwardResults res;
    PetscCall(fwd_->finish(res));
    r.objective = res.objective;
    r.forwardComputed = forward_;
    for (size_t k = 0; k < res.gradientP.size(); ++k) {
      r.gradient[k].forwardP = res.gradientP[k];
      r.gradient[k].forwardU0 = res.gradientU0[k];
    }
  }
  if (adjoint_) {
    const auto wall0 = std::chrono::steady_clock::now();
    PetscCall(pushStage("hybridsens adjoint", &staged));
    AdjointSensitivity adj(*engine_, *costEval_, *jumps_);
    adj.setMonitor(adjointMonitor_);
    AdjointResults res;
    PetscCall(adj.solve(t0, u0_, u0Indices_, res));
    if (staged) PetscCall(PetscLogStagePop());
    r.stats.adjointWallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    r.adjointComputed = true;
    for (size_t k = 0; k < res.gradientP.size(); ++k) {
      r.gradient[k].adjointP = res.gradientP[k];
      r.gradient[k].adjointU0 = res.gradientU0[k];
    }
    r.stats.reusedJacobians = res.reusedJacobians;
    // The reverse sweep switched the mode back; the final state's mode is what callers expect.
    dyn_->mode = engine_->trajectory().mode(engine_->trajectory().size() - 1);
  }
  if (hessianOn_) {
    PetscCall(pushStage("hybridsens Hessian", &staged));
    PetscCall(computeHessian(hessianMethod_, r.hessian, &r.hessianMethod));
    if (staged) PetscCall(PetscLogStagePop());
  }
  PetscCall(collectResult(r));
  result_ = std::move(r);
  // Leave the TS at t0 with the initial step so that another solve() repeats this one.
  PetscCall(TSSetTime(ts_, t0));
  PetscCall(TSSetTimeStep(ts_, dt0));
  PetscFunctionReturn(0);
}

// The initial-state sensitivity columns, for both sweeps: by default every differential
// component of a small state; chosen ones (-hs_forward_u0, setInitialStateSensitivities) must
// be distinct differential components of the state (an algebraic y0 is not free: the engine
// solves g = 0 for it).
PetscErrorCode Solver::resolveInitialStateIndices() {
  PetscInt N;
  PetscFunctionBeginUser;
  PetscCall(VecGetSize(dyn_->templateVec(), &N));
  if (!u0Chosen_ && N > 64) {
    u0Indices_.clear();
    PetscFunctionReturn(0);
  }
  Vec mask;
  std::vector<PetscScalar> m;
  PetscCall(VecDuplicate(dyn_->templateVec(), &mask));
  PetscCall(VecSet(mask, 1.0));
  PetscCall(dyn_->zeroAlgebraic(mask));
  PetscCall(gatherToAll(mask, m));
  PetscCall(VecDestroy(&mask));
  if (!u0Chosen_) {
    u0Indices_.clear();
    for (PetscInt i = 0; i < N; ++i)
      if (m[i] != 0) u0Indices_.push_back(i);
    PetscFunctionReturn(0);
  }
  std::vector<PetscInt> seen;
  for (PetscInt i : u0Indices_) {
    PetscCheck(i >= 0 && i < N, model_.comm(), PETSC_ERR_ARG_OUTOFRANGE,
               "-hs_forward_u0 / setInitialStateSensitivities: index %" PetscInt_FMT " is outside the state [0, %" PetscInt_FMT ")", i, N);
    PetscCheck(m[i] != 0, model_.comm(), PETSC_ERR_ARG_WRONG,
               "-hs_forward_u0 / setInitialStateSensitivities: component %" PetscInt_FMT " is algebraic; its initial value is not free (the DAE "
               "determines it), choose differential components",
               i);
    PetscCheck(std::find(seen.begin(), seen.end(), i) == seen.end(), model_.comm(), PETSC_ERR_ARG_WRONG,
               "-hs_forward_u0 / setInitialStateSensitivities: component %" PetscInt_FMT " is listed twice", i);
    seen.push_back(i);
  }
  PetscFunctionReturn(0);
}

// Output times must lie in the horizon: a time outside it would never be reached and its
// record would stay empty.
PetscErrorCode Solver::checkOutputTimes(PetscReal t0, PetscReal tf) const {
  PetscFunctionBeginUser;
  for (PetscReal t : outputTimes_)
    PetscCheck(std::isfinite(t) && t >= t0 && t <= tf, model_.comm(), PETSC_ERR_ARG_OUTOFRANGE,
               "-hs_output_times / setOutputTimes: %g is outside the horizon [%g, %g] (-ts_max_time)", (double)t, (double)t0, (double)tf);
  PetscFunctionReturn(0);
}

PetscErrorCode Solver::checkGradientFromOptions() {
  PetscFunctionBeginUser;
  if (!opt_.checkGradient) PetscFunctionReturn(0);
  GradientCheckReport rep;
  PetscCall(checkGradient(*this, opt_.gradientCheck, rep));
  PetscFunctionReturn(0);
}

const DiscreteState &Solver::currentDiscreteState() const {
  static const DiscreteState none;  // before the model is attached
  return dyn_ ? dyn_->mode : none;
}

// The run's objects for the result: the final state is copied (the TS integrates the next
// solve in the same vector); the sensitivity matrices, output snapshots and the event log are
// shared (the next solve creates new ones).
PetscErrorCode Solver::collectResult(SolveResult &r) const {
  Vec X, copy;
  PetscFunctionBeginUser;
  PetscCall(TSGetSolution(ts_, &X));
  PetscCall(VecDuplicate(X, &copy));
  r.finalState_ = SharedPetscObject<Vec>::adopt(copy);
  PetscCall(VecCopy(X, copy));
  r.finalTime = engine_->finalTime();
  r.finalDiscreteState = dyn_->mode;
  r.events_ = engine_->sharedLog();
  const EngineStats &s = engine_->stats();
  r.stats.steps = s.steps;
  r.stats.rejectedSteps = s.rejectedSteps;
  r.stats.locationSteps = s.locationSteps;
  r.stats.events = s.events;
  r.stats.locatedEvents = s.locatedEvents;
  r.stats.wallSeconds = s.wallSeconds;
  r.stats.ydotSolves = s.ydotSolves;
  if (engine_->trajectory().checkpointing()) {
    const auto &c = engine_->trajectory().checkpointStats();
    r.stats.checkpoints = opt_.engine.checkpoints;
    r.stats.checkpointsStored = c.stored;
    r.stats.checkpointsMostHeld = c.mostHeld;
    r.stats.recomputedSteps = c.recomputed;
  }
  r.outputTimes = outputTimes_;
  if (fwd_) {
    if (forward_) r.finalSensitivities_ = SharedPetscObject<Mat>::share(fwd_->sensitivities());
    for (size_t i = 0; i < outputTimes_.size(); ++i) {
      r.outputStates_.push_back(SharedPetscObject<Vec>::share(fwd_->outputState(i)));
      r.outputSensitivities_.push_back(SharedPetscObject<Mat>::share(fwd_->outputSensitivities(i)));
    }
  }
  PetscFunctionReturn(0);
}

} // namespace hybridsens
