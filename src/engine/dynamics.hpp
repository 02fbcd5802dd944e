// Dynamics: the bridge between a HybridModel and PETSc TS. It owns the current discrete
// state (the one every TS callback sees), the Jacobian matrices, and the DAE machinery that
// the jump conditions need on both sides of an event:
//   * u̇ = f for an ODE; for a DAE ẋ = f_x and ẏ = -g_y⁻¹(g_x ẋ + g_t);
//   * the consistency matrix A = [I 0; g_x g_y] (differential rows replaced by identity rows),
//     which gives consistent reinitialization (Newton on g = 0 with x fixed) and the composite
//     reset derivative ∂u⁺/∂ũ = A⁻¹[I;0] and its transpose.
#pragma once

#include "engine/evaluation_cache.hpp"
#include "hybridsens/model.hpp"

#include <petscksp.h>
#include <petscts.h>

#include <string>
#include <vector>

namespace hybridsens {

class Dynamics {
public:
  Dynamics(const HybridModel &model, std::vector<PetscReal> params, PetscInt extraSensitivityColumns);
  ~Dynamics();
  Dynamics(const Dynamics &) = delete;
  Dynamics &operator=(const Dynamics &) = delete;

  PetscErrorCode setUp();
  PetscErrorCode createParameterJacobianMatrix();
  // Change the number of initial-state sensitivity columns (re-creates ∂f/∂p and re-attaches it).
  PetscErrorCode setExtraSensitivityColumns(PetscInt extra, TS ts);
  // Install the callbacks into ts (RHS form for an ODE, IFunction form for a DAE).
  PetscErrorCode attach(TS ts);

  const HybridModel &model() const { return model_; }
  MPI_Comm comm() const { return model_.comm(); }
  bool isDAE() const { return numAlgebraic_ > 0; }
  // A Hessenberg index-2 DAE (HybridModel::daeIndex() == 2): 0 = k(t, x, p) on the algebraic
  // rows, y fixed by the hidden constraint k_x f + k_t = 0 (docs/index2-daes.md).
  bool isIndex2() const { return index2_; }
  // The DAE consistency solves' KSP (-hs_consistency_; nullptr for an ODE).
  KSP consistencyKsp() const { return consistencyKsp_; }
  PetscInt numParameters() const { return (PetscInt)params_.size(); }
  PetscInt numSensitivityColumns() const { return numParameters() + extraColumns_; }
  const std::vector<PetscReal> &parameters() const { return params_; }
  void setParameters(const std::vector<PetscReal> &p) { params_ = p; }
  Vec templateVec() const { return templ_; }
  // ∂f/∂p as the model chose to store it (dense by default, or sparse).
  Mat parameterJacobian() const { return Jp_; }
  // Column j of ∂f/∂p (as last evaluated) into v (like u).
  PetscErrorCode parameterColumn(PetscInt j, Vec v) const;
  // A dense matrix with the row and column layout of ∂f/∂p (for R_p, ∂u0/∂p, Φ_p).
  PetscErrorCode createDenseParameterMatrix(Mat *M) const;

  // The discrete state every callback currently sees.
  DiscreteState mode;
  ModeContext context() const { return {params_, mode}; }
  ModeContext context(const DiscreteState &d) const { return {params_, d}; }

  // Model evaluations with finiteness checks (NaN/Inf is an error naming the callback).
  PetscErrorCode rhs(PetscReal t, Vec u, const DiscreteState &d, Vec f);
  // f at a point off the trajectory, for an estimate the caller can do without (a curvature that
  // places a location candidate): no finiteness check here — the caller checks what it builds
  // from the values and drops the estimate if it is not finite, instead of ending the run.
  PetscErrorCode rhsProbe(PetscReal t, Vec u, const DiscreteState &d, Vec f);
  PetscErrorCode rhsJacobian(PetscReal t, Vec u, const DiscreteState &d);  // into J()
  PetscErrorCode rhsJacobian(PetscReal t, Vec u, const DiscreteState &d, Mat out);  // into a copy of J()'s layout
  // ∂f/∂t (all rows). For a model that declares no explicit time dependence this is zero, after
  // checking that f really does not change with t at (t, u) — an error otherwise.
  PetscErrorCode rhsTimeDerivative(PetscReal t, Vec u, const DiscreteState &d, Vec ft);
  PetscErrorCode rhsJacobianP(PetscReal t, Vec u, const DiscreteState &d); // into parameterJacobian()
  Mat J() const { return J_; }

  // u̇ at (t, u) in discrete state d (includes ẏ for a DAE).
  PetscErrorCode timeDerivative(PetscReal t, Vec u, const DiscreteState &d, Vec udot);
  // ẋ = f_x on the differential rows and NaN on the algebraic ones: u̇ without ẏ, which for a DAE
  // would cost a Jacobian and a factorization (GuardEvaluator::rates probes with it).
  PetscErrorCode differentialTimeDerivative(PetscReal t, Vec u, const DiscreteState &d, Vec udot);
  // udot from differentialTimeDerivative with its algebraic entries replaced by ẏ (the exact
  // u̇, its ẋ the same bits as before — a consistency solve may round the identity rows).
  PetscErrorCode completeTimeDerivative(PetscReal t, Vec u, const DiscreteState &d, Vec udot);
  // Solve g(t, x, y) = 0 for y with x fixed (DAE only; no-op for an ODE). Index 2: refuse an x
  // off the constraint k = 0 (naming `where`) and solve the hidden constraint for y.
  PetscErrorCode reinitialize(PetscReal t, Vec u, const DiscreteState &d, const char *where);
  // out = A⁻¹ [v_x; b_y] with A the consistency matrix at (t, u, d); used by the jumps.
  // setConsistencyPoint assembles and factors A; the solves reuse it. Index 2: out = [v_x; 0]
  // (the reinitialized y and ẏ enter no backward Euler step, so their rows are not tracked).
  PetscErrorCode setConsistencyPoint(PetscReal t, Vec u, const DiscreteState &d);
  PetscErrorCode consistencySolve(Vec rhs, Vec out, bool transpose);
  // Algebraic-row residual norm ‖g‖∞ at (t, u, d).
  PetscErrorCode constraintResidual(PetscReal t, Vec u, const DiscreteState &d, PetscReal *norm);
  // Zero the algebraic entries of v (or the differential ones).
  PetscErrorCode zeroAlgebraic(Vec v) const;
  PetscErrorCode zeroDifferential(Vec v) const;
  IS algebraicIS() const { return algIS_; }
  // diag(M): 1 on differential rows, 0 on algebraic rows.
  Vec massDiagonal() const { return mass_; }

  PetscErrorCode checkFinite(Vec v, const char *callback, PetscReal t, const DiscreteState &d) const;

  // While on, f_u (into J()) and f_p evaluated again at the last (t, u, mode) are copied, not
  // re-evaluated (see MatEvaluationCache); the reverse sweep turns it on. Switching clears it.
  void reuseRepeatedJacobians(bool on) {
    reuse_ = on;
    jacobianCache_.clear();
    parameterJacobianCache_.clear();
  }
  PetscInt reusedJacobians() const { return jacobianCache_.hits() + parameterJacobianCache_.hits(); }
  // While on, the model is evaluated for a step re-taken from a checkpoint (Engine::replayStep):
  // at the points the forward run evaluated it at, bit for bit, where the finiteness of f and f_u
  // was checked then — not checked again — and the caches above are neither read nor written (a
  // re-take between two reversed steps would otherwise evict the f_u the next reversed step reads,
  // and copy every Newton Jacobian into the cache for nothing).
  void setRetaking(bool on) { retaking_ = on; }
  bool retaking() const { return retaking_; }

private:
  PetscErrorCode evaluateParameterJacobian(PetscReal t, Vec u, const DiscreteState &d);
  PetscErrorCode solveTimeDerivative(PetscReal t, Vec u, const DiscreteState &d, Vec f, Vec out);
  PetscErrorCode solveHiddenConstraint(PetscReal t, Vec u, const DiscreteState &d, const char *where);
  PetscErrorCode assembleHiddenConstraintMatrix(PetscReal t, Vec u, const DiscreteState &d);
  static PetscErrorCode RHSFunction(TS, PetscReal, Vec, Vec, void *);
  static PetscErrorCode RHSJacobian(TS, PetscReal, Vec, Mat, Mat, void *);
  static PetscErrorCode RHSJacobianP(TS, PetscReal, Vec, Mat, void *);
  static PetscErrorCode IFunction(TS, PetscReal, Vec, Vec, Vec, void *);
  static PetscErrorCode IJacobian(TS, PetscReal, Vec, Vec, PetscReal, Mat, Mat, void *);
  static PetscErrorCode Index2StepConverged(SNES, PetscInt, PetscReal, PetscReal, PetscReal, SNESConvergedReason *, void *);
  static PetscErrorCode IJacobianP(TS, PetscReal, Vec, Vec, PetscReal, Mat, void *);

  const HybridModel &model_;
  std::vector<PetscReal> params_;
  PetscInt extraColumns_;
  PetscInt numAlgebraic_ = 0;
  bool index2_ = false;
  std::vector<PetscInt> allAlgRows_;  // index 2: every rank's algebraic indices, sorted
  Vec templ_ = nullptr, mass_ = nullptr, work_ = nullptr, work2_ = nullptr, fullUdot_ = nullptr;
  Mat J_ = nullptr, Jp_ = nullptr, A_ = nullptr;
  KSP consistencyKsp_ = nullptr;
  bool reuse_ = false;
  bool retaking_ = false;
  MatEvaluationCache jacobianCache_, parameterJacobianCache_;
  IS algIS_ = nullptr, diffIS_ = nullptr;
  std::vector<PetscInt> diffRows_;  // global indices of owned differential rows
  std::vector<PetscInt> algRows_;   // global indices of owned algebraic rows
  PetscObjectState consistencyJState_ = 0;  // J's nonzero state when A_ was built
  PetscReal consistencyT_ = 0;              // where A_ was last assembled (for error messages)
  DiscreteState consistencyMode_;
};

} // namespace hybridsens
