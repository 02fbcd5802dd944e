#include "hybridsens/solver.hpp"

#include "engine/dynamics.hpp"
#include "engine/engine.hpp"
#include "util/user_call.hpp"

namespace hybridsens {

Solver::Solver(const HybridModel &model) : model_(model), params_(model.defaultParameters()) {}

Solver::~Solver() {
  engine_.reset();
  dyn_.reset();
  VecDestroy(&u0_);
  TSDestroy(&ts_);
}

PetscErrorCode Solver::build() {
  PetscFunctionBeginUser;
  if (ts_) PetscFunctionReturn(0);
  PetscCheck(model_.localSize() >= 0, model_.comm(), PETSC_ERR_ARG_SIZ, "localSize() must be non-negative");
  PetscCall(TSCreate(model_.comm(), &ts_));
  dyn_ = std::make_unique<Dynamics>(model_, params_, 0);
  PetscCall(dyn_->setUp());
  PetscCall(dyn_->attach(ts_));
  PetscCall(TSSetExactFinalTime(ts_, TS_EXACTFINALTIME_MATCHSTEP));
  engine_ = std::make_unique<Engine>(*dyn_, ts_, opt_);
  PetscFunctionReturn(0);
}

PetscErrorCode Solver::setFromOptions() {
  PetscFunctionBeginUser;
  PetscCall(build());
  PetscCall(opt_.setFromOptions(model_.comm()));
  PetscCall(TSSetFromOptions(ts_));
  engine_ = std::make_unique<Engine>(*dyn_, ts_, opt_);
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

PetscErrorCode Solver::solve() {
  PetscReal t0, tf;
  PetscFunctionBeginUser;
  PetscCall(build());
  if (!u0_) PetscCall(VecDuplicate(dyn_->templateVec(), &u0_));
  dyn_->mode = model_.initialDiscreteState();
  PetscCall(VecZeroEntries(u0_));
  HS_USER_CALL(model_.comm(), "initialState", model_.initialState(dyn_->context(), u0_));
  PetscCall(TSGetTime(ts_, &t0));
  PetscCall(TSGetMaxTime(ts_, &tf));
  PetscCall(dyn_->checkFinite(u0_, "initialState", t0, dyn_->mode));
  PetscCall(dyn_->reinitialize(t0, u0_, dyn_->mode, "of the initial state"));
  PetscCall(engine_->run(u0_, t0, tf));
  // Leave the TS at t0 so that another solve() starts from the same initial time.
  PetscCall(TSSetTime(ts_, t0));
  PetscFunctionReturn(0);
}

Vec Solver::finalState() const {
  Vec X = nullptr;
  TSGetSolution(ts_, &X);
  return X;
}

PetscReal Solver::finalTime() const {
  const auto &tr = engine_->trajectory();
  return tr.size() ? tr.time(tr.size() - 1) : 0;
}

const EventLog &Solver::events() const { return engine_->log(); }

const DiscreteState &Solver::finalDiscreteState() const { return dyn_->mode; }

SolveStats Solver::stats() const {
  const EngineStats &s = engine_->stats();
  return {s.steps, s.rejectedSteps, s.locationSteps, s.events, s.wallSeconds};
}

} // namespace hybridsens
