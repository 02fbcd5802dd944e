#include "sensitivity/forward_sensitivity.hpp"

#include "util/dense_columns.hpp"
#include "util/user_call.hpp"

#include <algorithm>
#include <cstring>

namespace hybridsens {

ForwardSensitivity::ForwardSensitivity(Engine &engine, CostEvaluator &costs, JumpAlgebra *jumps, std::vector<PetscInt> u0Indices)
    : engine_(engine), costs_(costs), jumps_(jumps), u0Indices_(std::move(u0Indices)) {}

ForwardSensitivity::~ForwardSensitivity() {
  for (Vec &v : outStates_) VecDestroy(&v);
  for (Mat &m : outS_) MatDestroy(&m);
  MatDestroy(&S_);
  VecDestroy(&ru_);
  VecDestroy(&gu_);
  VecDestroy(&work_);
  if (jumps_) jumps_->destroy(J_);
}

PetscErrorCode ForwardSensitivity::setUp(PetscReal t0, Vec u0) {
  Dynamics &dyn = engine_.dynamics();
  TS ts = engine_.ts();
  const PetscInt np = dyn.numParameters(), N = dyn.numSensitivityColumns();
  PetscInt n, Ng, lo, hi;
  PetscFunctionBeginUser;
  q_.assign(costs_.size(), 0.0);
  measured_ = costs_.measurementTimes();
  if (!ru_) PetscCall(VecDuplicate(u0, &ru_));
  if (!gu_) PetscCall(VecDuplicate(u0, &gu_));
  if (!work_) PetscCall(VecDuplicate(u0, &work_));
  if (!jumps_) {
    dq_.assign(costs_.size(), {});
    PetscFunctionReturn(0);
  }
  PetscCheck(N == np + (PetscInt)u0Indices_.size(), dyn.comm(), PETSC_ERR_PLIB, "sensitivity column count mismatch");
  PetscCall(VecGetLocalSize(u0, &n));
  PetscCall(VecGetSize(u0, &Ng));
  PetscCall(VecGetOwnershipRange(u0, &lo, &hi));
  PetscCall(MatDestroy(&S_));
  PetscCall(MatCreateDense(dyn.comm(), n, PETSC_DECIDE, Ng, std::max<PetscInt>(N, 1), nullptr, &S_));
  PetscCall(MatZeroEntries(S_));
  // ∂u0/∂p in the parameter columns, unit vectors in the initial-state columns.
  HS_USER_CALL(dyn.comm(), "initialStateJacobianP", dyn.model().initialStateJacobianP(dyn.context(), S_));
  for (size_t i = 0; i < u0Indices_.size(); ++i) {
    const PetscInt gi = u0Indices_[i];
    PetscCheck(gi >= 0 && gi < Ng, dyn.comm(), PETSC_ERR_ARG_OUTOFRANGE, "initial-state sensitivity index %" PetscInt_FMT " out of range", gi);
    if (gi >= lo && gi < hi) PetscCall(MatSetValue(S_, gi, np + (PetscInt)i, 1.0, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(S_, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(S_, MAT_FINAL_ASSEMBLY));
  if (dyn.isDAE()) {
    // Consistent initial sensitivities: S_y = -g_y⁻¹(g_x S_x + g_p), i.e. A S = [S_x; -g_p].
    Vec rhs;
    PetscCall(VecDuplicate(u0, &rhs));
    PetscCall(dyn.setConsistencyPoint(t0, u0, dyn.mode));
    if (np) PetscCall(dyn.rhsJacobianP(t0, u0, dyn.mode));
    for (PetscInt j = 0; j < N; ++j) {
      Vec col;
      PetscCall(MatDenseGetColumnVec(S_, j, &col));
      PetscCall(VecCopy(col, rhs));
      PetscCall(dyn.zeroAlgebraic(rhs));
      if (j < np) {
        PetscCall(dyn.parameterColumn(j, col));  // col is scratch until the solve below
        PetscCall(dyn.zeroDifferential(col));
        PetscCall(VecAXPY(rhs, -1.0, col));
      }
      PetscCall(dyn.consistencySolve(rhs, col, false));
      PetscCall(MatDenseRestoreColumnVec(S_, j, &col));
    }
    PetscCall(VecDestroy(&rhs));
    // An initial-state sensitivity of an algebraic component is not a free direction.
    IS alg = dyn.algebraicIS();
    const PetscInt *ai;
    PetscInt na;
    PetscCall(ISGetLocalSize(alg, &na));
    PetscCall(ISGetIndices(alg, &ai));
    for (PetscInt a = 0; a < na; ++a)
      for (PetscInt gi : u0Indices_)
        PetscCheck(gi != ai[a], PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG,
                   "initial-state sensitivity requested for algebraic component %" PetscInt_FMT " (it is determined by the differential state)", gi);
    PetscCall(ISRestoreIndices(alg, &ai));
  }
  PetscCall(TSForwardSetSensitivities(ts, N, S_));
  dq_.assign(costs_.size(), std::vector<PetscScalar>(N, 0.0));
  PetscFunctionReturn(0);
}

// q_k += weight r_k(t, u);  dq_k[j] += weight (r_u · Su[:, j] + r_p[j]).
PetscErrorCode ForwardSensitivity::addQuadrature(PetscReal weight, PetscReal t, Vec u, Mat Su) {
  Dynamics &dyn = engine_.dynamics();
  const PetscInt np = dyn.numParameters(), N = dyn.numSensitivityColumns();
  std::vector<PetscScalar> r, rp, d;
  PetscFunctionBeginUser;
  PetscCall(costs_.integrands(t, u, dyn.mode, r));
  for (size_t k = 0; k < costs_.size(); ++k) {
    if (!costs_.cost(k).hasIntegrand()) continue;
    q_[k] += weight * r[k];
    if (!Su) continue;
    PetscCall(costs_.integrandGradient(k, t, u, dyn.mode, ru_, rp));
    PetscCall(columnDots(Su, ru_, N, d));
    for (PetscInt j = 0; j < N; ++j) dq_[k][j] += weight * (d[j] + (j < np ? rp[j] : 0.0));
  }
  PetscFunctionReturn(0);
}

// Collective: the monitor sees the state, S and the running costs as they are now.
PetscErrorCode ForwardSensitivity::report(ForwardSample::Kind kind, PetscInt step, PetscReal t, const EventRecord *event) {
  static const std::vector<std::vector<PetscScalar>> none;
  Vec X;
  PetscFunctionBeginUser;
  if (!monitor_) PetscFunctionReturn(0);
  PetscCall(TSGetSolution(engine_.ts(), &X));
  PetscCall(monitor_(ForwardSample{kind, step, t, event, X, S_, q_, S_ ? dq_ : none}));
  PetscFunctionReturn(0);
}

PetscErrorCode ForwardSensitivity::stepAccepted(PetscInt step, PetscReal tprev, PetscReal t, PetscReal h) {
  PetscFunctionBeginUser;
  if (step > 0) {
    PetscCall(stepQuadrature(tprev, t, h));
    // The step after an event: the start-time part of the discrete event derivative (after the
    // quadrature, which saw the uncorrected S; the correction's own quadrature is in it).
    const EventTangents *tangents = jumps_ ? jumps_->tangents() : nullptr;
    if (tangents && tangents->correctedByLastStep() >= 0)
      PetscCall(jumps_->forwardCorrection(*tangents->at((size_t)tangents->correctedByLastStep()), lastTau_, S_, dq_));
  }
  PetscCall(report(ForwardSample::StepEnd, step, t, nullptr));
  PetscFunctionReturn(0);
}

// Quadrature of every integrand over the step just taken (and of its sensitivities).
PetscErrorCode ForwardSensitivity::stepQuadrature(PetscReal tprev, PetscReal t, PetscReal h) {
  TS ts = engine_.ts();
  TSType type;
  PetscBool isRK;
  PetscFunctionBeginUser;
  if (!costs_.anyIntegrand()) PetscFunctionReturn(0);
  PetscInt ns;
  Vec *Y;
  Mat *SY;
  PetscCall(TSGetType(ts, &type));
  PetscCall(PetscStrcmp(type, TSRK, &isRK));
  PetscCall(TSGetStages(ts, &ns, &Y));
  SY = nullptr;  // values only: no stage sensitivities
  if (S_) PetscCall(TSForwardGetStages(ts, &ns, &SY));
  if (isRK) {
    PetscInt s;
    const PetscReal *b, *c;
    PetscCall(TSRKGetTableau(ts, &s, nullptr, &b, &c, nullptr, nullptr, nullptr, nullptr));
    for (PetscInt i = 0; i < s; ++i)
      if (b[i] != 0) PetscCall(addQuadrature(h * b[i], tprev + c[i] * h, Y[i], SY ? SY[i] : nullptr));
  } else {
    // Theta (endpoint or θ = 1): stages {X0, X}, sensitivities {S_n, S_{n+1}}.
    PetscReal theta;
    Vec X;
    PetscCall(TSThetaGetTheta(ts, &theta));
    PetscCall(TSGetSolution(ts, &X));
    if (theta != 1.0) PetscCall(addQuadrature(h * (1 - theta), tprev, Y[0], SY ? SY[0] : nullptr));
    Mat Send = nullptr;  // S_{n+1}: the TS's sensitivities after the step
    if (S_) PetscCall(TSForwardGetSensitivities(ts, nullptr, &Send));
    PetscCall(addQuadrature(h * theta, t, X, Send));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode ForwardSensitivity::transitionApplied(const EventRecord &r) {
  PetscFunctionBeginUser;
  if (jumps_) {  // else values only: the objective itself does not jump
    PetscCall(jumps_->prepare(r, engine_.log().size() - 1, J_, true));
    PetscCall(jumps_->forward(r, J_, S_, dq_, lastTau_));
  }
  PetscCall(report(ForwardSample::AfterTransition, r.step, r.time, &r));
  PetscFunctionReturn(0);
}

// Measurements at t observe the state after every transition at t: J += g, dJ += g_u S + g_p.
PetscErrorCode ForwardSensitivity::instantCompleted(PetscInt step, PetscReal t) {
  Dynamics &dyn = engine_.dynamics();
  const PetscInt np = dyn.numParameters(), N = dyn.numSensitivityColumns();
  Vec X;
  PetscFunctionBeginUser;
  PetscCall(TSGetSolution(engine_.ts(), &X));
  outStates_.resize(outputTimes_.size(), nullptr);
  outS_.resize(outputTimes_.size(), nullptr);
  for (size_t i = 0; i < outputTimes_.size(); ++i) {
    if (outputTimes_[i] != t) continue;  // output times are stops: reached exactly
    PetscCall(VecDestroy(&outStates_[i]));
    PetscCall(VecDuplicate(X, &outStates_[i]));
    PetscCall(VecCopy(X, outStates_[i]));
    PetscCall(MatDestroy(&outS_[i]));
    if (S_) PetscCall(MatDuplicate(S_, MAT_COPY_VALUES, &outS_[i]));
  }
  for (size_t k = 0; k < costs_.size(); ++k) {
    if (costs_.cost(k).measurementTimes().empty()) continue;
    std::vector<PetscScalar> gp(np, 0.0), d;
    PetscScalar value = 0;
    PetscCall(VecZeroEntries(gu_));
    PetscCall(costs_.measurementsAt(k, t, X, dyn.mode, &value, S_ ? gu_ : nullptr, gp, work_));
    q_[k] += value;
    if (!S_) continue;
    PetscCall(columnDots(S_, gu_, N, d));
    for (PetscInt j = 0; j < N; ++j) dq_[k][j] += d[j] + (j < np ? gp[j] : 0.0);
  }
  if (std::find(measured_.begin(), measured_.end(), t) != measured_.end()) PetscCall(report(ForwardSample::AfterMeasurements, step, t, nullptr));
  PetscFunctionReturn(0);
}

PetscErrorCode ForwardSensitivity::finish(ForwardResults &out) {
  Dynamics &dyn = engine_.dynamics();
  const PetscInt np = dyn.numParameters(), N = dyn.numSensitivityColumns();
  Vec X, psiu;
  std::vector<PetscScalar> psip;
  PetscFunctionBeginUser;
  PetscCall(TSGetSolution(engine_.ts(), &X));
  PetscCall(VecDuplicate(X, &psiu));
  const PetscReal T = engine_.finalTime();
  out.objective.assign(costs_.size(), 0.0);
  out.gradientP.assign(S_ ? costs_.size() : 0, std::vector<PetscScalar>(np, 0.0));
  out.gradientU0.assign(S_ ? costs_.size() : 0, std::vector<PetscScalar>(u0Indices_.size(), 0.0));
  for (size_t k = 0; k < costs_.size(); ++k) {
    PetscScalar psi;
    PetscCall(costs_.terminal(k, T, X, dyn.mode, &psi));
    out.objective[k] = psi + q_[k];
    if (!S_) continue;  // values only
    PetscCall(costs_.terminalGradient(k, T, X, dyn.mode, psiu, psip));
    std::vector<PetscScalar> d;
    PetscCall(columnDots(S_, psiu, N, d));
    for (PetscInt j = 0; j < N; ++j) {
      const PetscScalar g = d[j] + dq_[k][j] + (j < np ? psip[j] : 0.0);
      if (j < np) out.gradientP[k][j] = g;
      else out.gradientU0[k][j - np] = g;
    }
  }
  PetscCall(VecDestroy(&psiu));
  PetscFunctionReturn(0);
}

} // namespace hybridsens
