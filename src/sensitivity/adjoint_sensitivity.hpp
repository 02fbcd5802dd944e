// AdjointSensitivity: the discrete adjoint of "steps ∘ transitions ∘ steps". It replays the
// engine's trajectory backwards, calling PETSc's TSAdjointStep for every step (theta or RK,
// in the mode that step ran in, from the stored U⁻ at event steps) and applying the
// transposed jump of JumpAlgebra at every transition, in reverse order. Integral costs go
// through a PETSc quadrature TS (adjoint mode), so the r_u terms enter each adjoint step
// exactly as PETSc discretizes them; the forward quadrature in ForwardSensitivity is the same
// formula, which is what makes forward and adjoint agree to round-off.
#pragma once

#include "engine/engine.hpp"
#include "jump/jump_algebra.hpp"
#include "hybridsens/monitors.hpp"
#include "engine/cost_evaluator.hpp"
#include "sensitivity/integrand_derivatives.hpp"

#include <vector>

namespace hybridsens {

struct AdjointResults {
  std::vector<std::vector<PetscScalar>> gradientP;   // dJ_k/dp_j
  std::vector<std::vector<PetscScalar>> gradientU0;  // dJ_k/du0_i for the requested indices
  PetscInt reusedJacobians = 0;                      // f_u / f_p / r_u, r_p copies instead of evaluations
};

class AdjointSensitivity {
public:
  AdjointSensitivity(Engine &engine, CostEvaluator &costs, JumpAlgebra &jumps);
  ~AdjointSensitivity();
  // Run after Engine::run; u0 is the (consistent) initial state the run started from.
  PetscErrorCode solve(PetscReal t0, Vec u0, const std::vector<PetscInt> &u0Indices, AdjointResults &out);
  void setMonitor(AdjointMonitor m) { monitor_ = std::move(m); }

private:
  static PetscErrorCode QuadratureJacobian(TS, PetscReal, Vec, Mat, Mat, void *);
  static PetscErrorCode QuadratureJacobianP(TS, PetscReal, Vec, Mat, void *);
  PetscErrorCode setUpQuadrature();
  PetscErrorCode teardown();
  // The named steps of solve(), on the state of one sweep.
  struct Sweep;
  PetscErrorCode setUpSweep(Sweep &s);
  PetscErrorCode undoInstant(Sweep &s, PetscInt n);
  PetscErrorCode stepBack(PetscInt n);
  PetscErrorCode finishAtStart(Sweep &s);
  PetscErrorCode initialStateTerms(Sweep &s, PetscReal t0, Vec u0, const std::vector<PetscInt> &u0Indices, AdjointResults &out);
  PetscErrorCode restoreTs(const Sweep &s);
  PetscErrorCode addMeasurements(Sweep &s, PetscInt n);
  PetscErrorCode report(const Sweep &s, AdjointSample::Kind kind, PetscInt n, const EventRecord *ev);

  Engine &engine_;
  CostEvaluator &costs_;
  JumpAlgebra &jumps_;
  std::vector<Vec> lambda_, mu_;
  Mat drdu_ = nullptr, drdp_ = nullptr;
  IntegrandDerivatives integrandDerivatives_;
  TS quadts_ = nullptr;
  AdjointMonitor monitor_;
};

} // namespace hybridsens
