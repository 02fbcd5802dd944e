// ForwardSensitivity: the tangent-linear model carried with the forward solve. PETSc's
// TSForward advances S = du/d(p, u0) over each accepted step (the engine calls it once per
// accepted step); this observer applies the jump at every transition (JumpAlgebra::forward)
// and integrates the cost integrals and their sensitivities with the same quadrature as the
// integrator (theta: (1-θ) r_n + θ r_{n+1}; RK: Σ b_i r(Y_i)), for theta and RK alike —
// PETSc 3.18's TSForward ignores quadratures for RK.
#pragma once

#include "engine/engine.hpp"
#include "jump/jump_algebra.hpp"
#include "engine/cost_evaluator.hpp"
#include "hybridsens/monitors.hpp"

#include <vector>

namespace hybridsens {

struct ForwardResults {
  std::vector<PetscScalar> objective;                 // J_k
  std::vector<std::vector<PetscScalar>> gradientP;    // dJ_k/dp_j
  std::vector<std::vector<PetscScalar>> gradientU0;   // dJ_k/du0_i (chosen components)
};

// With jumps == nullptr it only evaluates the objective (values of the quadratures and the
// measurements, no tangent-linear model): what a plain solve or a finite difference needs.
class ForwardSensitivity : public EngineObserver {
public:
  ForwardSensitivity(Engine &engine, CostEvaluator &costs, JumpAlgebra *jumps, std::vector<PetscInt> u0Indices);
  ~ForwardSensitivity() override;

  // Before the run: consistent initial sensitivities, registered with TSForward.
  PetscErrorCode setUp(PetscReal t0, Vec u0);
  // After the run: objective values and gradients (terminal parts at the final state).
  PetscErrorCode finish(ForwardResults &out);
  Mat sensitivities() const { return S_; }
  // Snapshots at chosen output times (step boundaries; the state after any transitions there).
  void setOutputTimes(std::vector<PetscReal> t) { outputTimes_ = std::move(t); }
  const std::vector<PetscReal> &outputTimes() const { return outputTimes_; }
  Vec outputState(size_t i) const { return i < outStates_.size() ? outStates_[i] : nullptr; }
  Mat outputSensitivities(size_t i) const { return i < outS_.size() ? outS_[i] : nullptr; }
  const std::vector<PetscInt> &u0Indices() const { return u0Indices_; }
  void setMonitor(ForwardMonitor m) { monitor_ = std::move(m); }

  PetscErrorCode stepAccepted(PetscInt step, PetscReal tprev, PetscReal t, PetscReal h) override;
  PetscErrorCode transitionApplied(const EventRecord &r) override;
  PetscErrorCode instantCompleted(PetscInt step, PetscReal t) override;

private:
  PetscErrorCode addQuadrature(PetscReal weight, PetscReal t, Vec u, Mat Su);
  PetscErrorCode stepQuadrature(PetscReal tprev, PetscReal t, PetscReal h);
  PetscErrorCode report(ForwardSample::Kind kind, PetscInt step, PetscReal t, const EventRecord *event);

  Engine &engine_;
  CostEvaluator &costs_;
  JumpAlgebra *jumps_;
  std::vector<PetscInt> u0Indices_;
  Mat S_ = nullptr;
  Vec ru_ = nullptr, gu_ = nullptr, work_ = nullptr;
  std::vector<PetscScalar> q_;                  // Σ quadrature of each integrand + measurements
  std::vector<std::vector<PetscScalar>> dq_;    // its sensitivities (N columns)
  JumpIngredients J_;
  std::vector<PetscScalar> lastTau_;  // τ_p per column of the latest transition
  std::vector<PetscReal> outputTimes_;
  std::vector<Vec> outStates_;  // per output time (nullptr until reached)
  std::vector<Mat> outS_;
  ForwardMonitor monitor_;
  std::vector<PetscReal> measured_;  // every measurement time (AfterMeasurements samples)
};

} // namespace hybridsens
