// EventTangents: records, during the forward run, the discrete derivatives that make each
// event's jump exact for the computed trajectory (see step_tangent.hpp for the math):
//  * for the first transition at an instant: ∂X/∂h of the step that ends at the event, and
//    ∂q_k/∂h of that step's quadratures — used by the jump algebra in place of u̇⁻ and r⁻;
//  * for the last transition at an instant: the correction after the step that follows,
//      δ = ∂X/∂t_start|_{t_end fixed} + X_u u̇⁺,   δq_k = ∂q_k/∂t_start + (quadrature tangent of u̇⁺) + r⁺_k,
//    which replaces the continuous −u̇⁺ τ_p (and −r⁺ τ_p) the jump applies at the event:
//    forward S_{n+1} += δ τ_p, dq_k += δq_k τ_p; adjoint s += δᵀλ_{n+1} + δq_k.
//    Only when the step after is a remainder step, whose end (a grid point or a stop) stays put
//    when τ moves. An event at the end of an uncut step (a guard located at a step point or a
//    stop, within the location tolerance, or a time event on the step grid: EventRecord::
//    onStepGrid) sits where the computed trajectory has a kink: an event just
//    before the point ends a cut step (∂X/∂h of it) followed by a remainder step that vanishes
//    with the distance; just after, it ends a step of vanishing size (∂X/∂h → u̇⁻) followed by
//    a remainder of a whole step. The two one-sided derivatives differ by O(h^order). Such an
//    event gets the left one, the limit of events just before the point: ∂X/∂h of the step
//    that ended there and no correction (the vanishing remainder's δ and δq_k tend to 0:
//    X_u u̇⁺ − ∂X/∂h → u̇⁺ − u̇⁺, ∂q/∂h·(−1) + r⁺ → 0), the step after starting at a fixed point.
//    (Its ∂X/∂h with the correction of the next step would be neither one-sided derivative.)
// Both sweeps read the same records, so they stay transposes of each other.
// Registered before the sensitivity observers: their stepAccepted sees this step's record.
#pragma once

#include "engine/engine.hpp"
#include "jump/step_tangent.hpp"

#include <vector>

namespace hybridsens {

struct EventTangent {
  Vec endDerivative = nullptr;            // ∂X/∂h (first transition at the instant), else nullptr
  std::vector<PetscScalar> endQuadrature; // ∂q_k/∂h
  Vec nextCorrection = nullptr;           // δ (last transition at the instant, if a step follows)
  std::vector<PetscScalar> nextQuadrature; // δq_k
  bool cutStep = false;                   // the event was located strictly inside its step
};

class EventTangents : public EngineObserver {
public:
  EventTangents(Engine &engine, CostEvaluator &costs);
  ~EventTangents() override;

  // nullptr when the event has no discrete data (continuous semantics apply).
  const EventTangent *at(size_t eventIndex) const { return eventIndex < data_.size() ? &data_[eventIndex] : nullptr; }
  // The event (log index) whose correction was recorded by the step that just ended, or -1.
  long correctedByLastStep() const { return correctedByLastStep_; }

  PetscErrorCode stepAccepted(PetscInt step, PetscReal tprev, PetscReal t, PetscReal h) override;
  PetscErrorCode transitionApplied(const EventRecord &r) override;

private:
  void clear();

  Engine &engine_;
  CostEvaluator &costs_;
  StepTangent tangent_;
  std::vector<EventTangent> data_;
  PetscReal lastStart_ = 0;       // start time of the last accepted step
  PetscReal lastSize_ = 0;        // the size it was taken with (EngineObserver::stepAccepted)
  long correctedByLastStep_ = -1;
};

} // namespace hybridsens
