#include "jump/event_tangents.hpp"

namespace hybridsens {

EventTangents::EventTangents(Engine &engine, CostEvaluator &costs)
    : engine_(engine), costs_(costs), tangent_(engine.dynamics(), costs, engine.ts()) {}

EventTangents::~EventTangents() { clear(); }

void EventTangents::clear() {
  for (auto &d : data_) {
    VecDestroy(&d.endDerivative);
    VecDestroy(&d.nextCorrection);
  }
  data_.clear();
}

PetscErrorCode EventTangents::transitionApplied(const EventRecord &r) {
  PetscFunctionBeginUser;
  const auto &log = engine_.log().records();
  if (log.size() == 1) clear();  // a new run
  data_.resize(log.size());
  data_.back().cutStep = engine_.transitionsCutStep();
  if (r.orderAtInstant != 0) PetscFunctionReturn(0);
  // The integrator's last step ends here (it still holds that step's stages).
  EventTangent &e = data_.back();
  PetscInt ns;
  Vec *Y;
  StepDirection endMoves;
  endMoves.beta = 1;
  PetscCall(TSGetStages(engine_.ts(), &ns, &Y));
  PetscCall(VecDuplicate(r.uminus, &e.endDerivative));
  PetscCall(tangent_.apply(lastStart_, lastSize_, Y[0], r.uminus, r.before, endMoves, e.endDerivative, e.endQuadrature));
  PetscFunctionReturn(0);
}

PetscErrorCode EventTangents::stepAccepted(PetscInt step, PetscReal tprev, PetscReal, PetscReal h) {
  const auto &log = engine_.log().records();
  PetscFunctionBeginUser;
  correctedByLastStep_ = -1;
  lastStart_ = tprev;
  lastSize_ = h;
  if (step == 0) {
    clear();
    PetscFunctionReturn(0);
  }
  // Did the previous instant (this step's start) have transitions?
  if (log.empty() || log.back().step != step - 1 || log.back().time != tprev) PetscFunctionReturn(0);
  const EventRecord &last = log.back();
  EventTangent &e = data_[log.size() - 1];
  if (!e.cutStep) PetscFunctionReturn(0);  // at the end of an uncut step: the left derivative (see header)
  PetscInt ns;
  Vec *Y, X;
  StepDirection startMoves;  // the start moves with τ, the end stays: δu = u̇⁺, δt = 1, δh = −1
  startMoves.du = last.udotplus;
  startMoves.alpha = 1;
  startMoves.beta = -1;
  PetscCall(TSGetStages(engine_.ts(), &ns, &Y));
  PetscCall(TSGetSolution(engine_.ts(), &X));
  PetscCall(VecDuplicate(X, &e.nextCorrection));
  PetscCall(tangent_.apply(tprev, h, Y[0], X, engine_.dynamics().mode, startMoves, e.nextCorrection, e.nextQuadrature));
  std::vector<PetscScalar> rplus;
  PetscCall(costs_.integrands(last.time, last.uplus, last.after, rplus));
  for (size_t k = 0; k < rplus.size(); ++k) e.nextQuadrature[k] += rplus[k];
  correctedByLastStep_ = (long)log.size() - 1;
  PetscFunctionReturn(0);
}

} // namespace hybridsens
