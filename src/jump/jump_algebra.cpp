#include "jump/jump_algebra.hpp"

#include "util/dense_columns.hpp"
#include "util/log_events.hpp"
#include "util/user_call.hpp"

namespace hybridsens {

JumpAlgebra::JumpAlgebra(Dynamics &dyn, GuardEvaluator &guards, CostEvaluator &costs, JumpTerms terms, const EventTangents *tangents)
    : dyn_(dyn), guards_(guards), costs_(costs), terms_(terms), tangents_(tangents) {}

JumpAlgebra::~JumpAlgebra() {
  VecDestroy(&w1_);
  VecDestroy(&w2_);
  MatDestroy(&Rp_);
  MatDestroy(&phiP_);
}

PetscErrorCode JumpAlgebra::destroy(JumpIngredients &J) {
  PetscFunctionBeginUser;
  PetscCall(VecDestroy(&J.guard.gu));
  PetscCall(VecDestroy(&J.c));
  PetscFunctionReturn(0);
}

PetscErrorCode JumpAlgebra::applyPhiU(const EventRecord &r, Vec v, Vec out) {
  const auto &model = dyn_.model();
  PetscFunctionBeginUser;
  if (terms_.reset && model.hasReset(r.id))
    HS_USER_CALL(dyn_.comm(), "resetJacobianAction", model.resetJacobianAction(r.id, r.time, r.uminus, dyn_.context(r.before), v, w1_));
  if (terms_.reset && model.hasReset(r.id)) PetscCall(dyn_.checkFinite(w1_, "resetJacobianAction", r.time, r.before));
  else PetscCall(VecCopy(v, w1_));
  if (dyn_.isDAE()) {
    PetscCall(dyn_.zeroAlgebraic(w1_));
    PetscCall(dyn_.consistencySolve(w1_, out, false));
  } else PetscCall(VecCopy(w1_, out));
  PetscFunctionReturn(0);
}

// R_p of the user's reset (if any) into Rp_ and, for a DAE, g⁺_p into the dynamics' ∂f/∂p
// (its algebraic rows); both sweeps need them.
PetscErrorCode JumpAlgebra::parameterJacobians(const EventRecord &r) {
  const auto &model = dyn_.model();
  PetscFunctionBeginUser;
  hasRp_ = terms_.reset && model.hasReset(r.id) && dyn_.numParameters() > 0;
  if (hasRp_) {
    // Dense n × N: allocated only once an event with a reset needs it (a grid with thousands
    // of parameters would otherwise allocate and zero hundreds of MB for nothing).
    if (!Rp_) PetscCall(dyn_.createDenseParameterMatrix(&Rp_));
    PetscCall(MatZeroEntries(Rp_));
    HS_USER_CALL(dyn_.comm(), "resetJacobianP", model.resetJacobianP(r.id, r.time, r.uminus, dyn_.context(r.before), Rp_));
    PetscCall(MatAssemblyBegin(Rp_, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(Rp_, MAT_FINAL_ASSEMBLY));
  }
  if (dyn_.isDAE() && dyn_.numParameters() > 0) PetscCall(dyn_.rhsJacobianP(r.time, r.uplus, r.after));
  PetscFunctionReturn(0);
}

// Φ_p = A⁺⁻¹(P_x R_p − P_y g⁺_p), column by column (forward sweep only: the adjoint needs
// just Φ_pᵀλ, which it gets from one transposed solve).
PetscErrorCode JumpAlgebra::phiP() {
  const PetscInt np = dyn_.numParameters();
  PetscFunctionBeginUser;
  if (!phiP_) PetscCall(dyn_.createDenseParameterMatrix(&phiP_));  // forward sweep only
  PetscCall(MatZeroEntries(phiP_));
  for (PetscInt j = 0; j < np; ++j) {
    Vec col, out;
    if (hasRp_) {
      PetscCall(MatDenseGetColumnVecRead(Rp_, j, &col));
      PetscCall(VecCopy(col, w1_));
      PetscCall(MatDenseRestoreColumnVecRead(Rp_, j, &col));
    } else PetscCall(VecZeroEntries(w1_));
    PetscCall(MatDenseGetColumnVec(phiP_, j, &out));
    if (dyn_.isDAE()) {
      PetscCall(dyn_.zeroAlgebraic(w1_));
      PetscCall(dyn_.parameterColumn(j, w2_));
      PetscCall(dyn_.zeroDifferential(w2_));
      PetscCall(VecAXPY(w1_, -1.0, w2_));
      PetscCall(dyn_.consistencySolve(w1_, out, false));
    } else PetscCall(VecCopy(w1_, out));
    PetscCall(MatDenseRestoreColumnVec(phiP_, j, &out));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode JumpAlgebra::phiT(const EventRecord &r, Vec out) {
  const auto &model = dyn_.model();
  PetscFunctionBeginUser;
  if (terms_.reset && model.hasReset(r.id))
    HS_USER_CALL(dyn_.comm(), "resetTimeDerivative", model.resetTimeDerivative(r.id, r.time, r.uminus, dyn_.context(r.before), w1_));
  else PetscCall(VecZeroEntries(w1_));
  PetscCall(dyn_.checkFinite(w1_, "resetTimeDerivative", r.time, r.before));
  if (dyn_.isDAE()) {
    PetscCall(dyn_.zeroAlgebraic(w1_));
    PetscCall(dyn_.rhsTimeDerivative(r.time, r.uplus, r.after, w2_));
    PetscCall(dyn_.zeroDifferential(w2_));
    PetscCall(VecAXPY(w1_, -1.0, w2_));
    PetscCall(dyn_.consistencySolve(w1_, out, false));
  } else PetscCall(VecCopy(w1_, out));
  PetscFunctionReturn(0);
}

PetscErrorCode JumpAlgebra::prepare(const EventRecord &r, size_t index, JumpIngredients &J, bool forwardSweep) {
  ScopedLogEvent log(LogEvent::JumpPrepare);
  PetscFunctionBeginUser;
  if (!w1_) {
    PetscCall(VecDuplicate(r.uminus, &w1_));
    PetscCall(VecDuplicate(r.uminus, &w2_));
  }
  PetscCall(destroy(J));
  J.stateEvent = r.id.kind == EventId::Guard;
  // The composite reset is differentiated at (τ, u⁺, d⁺) for its algebraic part.
  if (dyn_.isDAE()) PetscCall(dyn_.setConsistencyPoint(r.time, r.uplus, r.after));
  PetscCall(parameterJacobians(r));
  if (forwardSweep) PetscCall(phiP());
  PetscCall(VecDuplicate(r.uminus, &J.c));
  Vec tmp;
  PetscCall(VecDuplicate(r.uminus, &tmp));
  // v⁻: the discrete ∂X/∂h of the step that ended here, else the continuous u̇⁻.
  const EventTangent *tangent = tangents_ ? tangents_->at(index) : nullptr;
  const bool discrete = tangent && tangent->endDerivative;
  Vec vminus = discrete ? tangent->endDerivative : r.udotminus;
  PetscCall(phiT(r, J.c));
  PetscCall(applyPhiU(r, vminus, tmp));
  PetscCall(VecAXPY(J.c, 1.0, tmp));
  PetscCall(VecAXPY(J.c, -1.0, r.udotplus));
  PetscCall(VecDestroy(&tmp));
  std::vector<PetscScalar> rm, rp;
  PetscCall(costs_.integrands(r.time, r.uminus, r.before, rm));
  PetscCall(costs_.integrands(r.time, r.uplus, r.after, rp));
  J.cq.resize(rm.size());
  for (size_t k = 0; k < rm.size(); ++k) J.cq[k] = (discrete ? tangent->endQuadrature[k] : rm[k]) - rp[k];
  if (J.stateEvent) {
    PetscScalar dot;
    PetscCall(VecDuplicate(r.uminus, &J.guard.gu));
    PetscCall(guards_.gradient(r.id.index, r.time, r.uminus, r.before, J.guard));
    PetscCall(VecDot(J.guard.gu, vminus, &dot));
    J.D = J.guard.gt + dot;
    PetscCheck(J.D != 0, dyn_.comm(), PETSC_ERR_FP, "guard '%s' has zero time derivative at t = %.17g: event time not differentiable",
               r.name.c_str(), (double)r.time);
  } else {
    HS_USER_QUERY(dyn_.comm(), "timeEvent", J.dTdp = dyn_.model().timeEvent(r.id.index, dyn_.parameters()).dtime_dp);
    J.dTdp.resize(dyn_.numParameters(), 0.0);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode JumpAlgebra::forward(const EventRecord &r, const JumpIngredients &J, Mat S, std::vector<std::vector<PetscScalar>> &dq,
                                    std::vector<PetscScalar> &taus) {
  ScopedLogEvent log(LogEvent::JumpForward);
  PetscInt N;
  const PetscInt np = dyn_.numParameters();
  PetscFunctionBeginUser;
  PetscCall(MatGetSize(S, nullptr, &N));
  taus.assign(N, 0.0);
  for (PetscInt j = 0; j < N; ++j) {
    Vec col;
    PetscScalar tau = 0;
    PetscCall(MatDenseGetColumnVec(S, j, &col));
    if (J.stateEvent) {
      PetscScalar dot;
      PetscCall(VecDot(J.guard.gu, col, &dot));
      tau = -(dot + (j < np ? J.guard.gp[j] : 0.0)) / J.D;
    } else tau = j < np ? J.dTdp[j] : 0.0;
    if (!terms_.eventTime) tau = 0;
    taus[j] = tau;
    PetscCall(applyPhiU(r, col, w2_));
    if (j < np) {
      Vec pcol;
      PetscCall(MatDenseGetColumnVec(phiP_, j, &pcol));
      PetscCall(VecAXPY(w2_, 1.0, pcol));
      PetscCall(MatDenseRestoreColumnVec(phiP_, j, &pcol));
    }
    PetscCall(VecAXPY(w2_, tau, J.c));
    PetscCall(VecCopy(w2_, col));
    PetscCall(MatDenseRestoreColumnVec(S, j, &col));
    for (size_t k = 0; k < dq.size(); ++k) dq[k][j] += J.cq[k] * tau;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode JumpAlgebra::adjoint(const EventRecord &r, const JumpIngredients &J, size_t k, Vec lambda, std::vector<PetscScalar> &mu,
                                    PetscScalar deferred) {
  ScopedLogEvent log(LogEvent::JumpAdjoint);
  const auto &model = dyn_.model();
  const PetscInt np = dyn_.numParameters();
  PetscScalar cl;
  std::vector<PetscScalar> d;
  PetscFunctionBeginUser;
  PetscCall(VecDot(J.c, lambda, &cl));
  const PetscScalar s = terms_.eventTime ? cl + J.cq[k] + deferred : 0.0;
  // w = A⁺⁻ᵀλ (λ for an ODE): Φ_uᵀλ = R_uᵀ P_x w and Φ_pᵀλ = R_pᵀ P_x w − g⁺_pᵀ P_y w.
  if (dyn_.isDAE()) PetscCall(dyn_.consistencySolve(lambda, w2_, true));
  else PetscCall(VecCopy(lambda, w2_));
  if (dyn_.isDAE() && np) {
    PetscCall(VecCopy(w2_, w1_));
    PetscCall(dyn_.zeroDifferential(w1_));
    PetscCall(columnDots(dyn_.parameterJacobian(), w1_, np, d));
    for (PetscInt j = 0; j < np; ++j) mu[j] -= d[j];
  }
  PetscCall(dyn_.zeroAlgebraic(w2_));
  if (hasRp_) {
    PetscCall(columnDots(Rp_, w2_, np, d));
    for (PetscInt j = 0; j < np; ++j) mu[j] += d[j];
  }
  if (terms_.reset && model.hasReset(r.id)) {
    HS_USER_CALL(dyn_.comm(), "resetJacobianTransposeAction",
                 model.resetJacobianTransposeAction(r.id, r.time, r.uminus, dyn_.context(r.before), w2_, lambda));
    PetscCall(dyn_.checkFinite(lambda, "resetJacobianTransposeAction", r.time, r.before));
  } else PetscCall(VecCopy(w2_, lambda));
  if (J.stateEvent) {
    const PetscScalar w = s / J.D;
    PetscCall(VecAXPY(lambda, -w, J.guard.gu));
    for (PetscInt j = 0; j < np; ++j) mu[j] -= J.guard.gp[j] * w;
  } else {
    for (PetscInt j = 0; j < np; ++j) mu[j] += J.dTdp[j] * s;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode JumpAlgebra::forwardCorrection(const EventTangent &e, const std::vector<PetscScalar> &tau, Mat S,
                                              std::vector<std::vector<PetscScalar>> &dq) {
  PetscFunctionBeginUser;
  if (!e.nextCorrection) PetscFunctionReturn(0);
  for (size_t j = 0; j < tau.size(); ++j) {
    Vec col;
    if (tau[j] == 0) continue;
    PetscCall(MatDenseGetColumnVec(S, (PetscInt)j, &col));
    PetscCall(VecAXPY(col, tau[j], e.nextCorrection));
    PetscCall(MatDenseRestoreColumnVec(S, (PetscInt)j, &col));
    for (size_t k = 0; k < dq.size(); ++k) dq[k][j] += e.nextQuadrature[k] * tau[j];
  }
  PetscFunctionReturn(0);
}

PetscErrorCode JumpAlgebra::adjointCorrection(const EventTangent &e, size_t k, Vec lambda, PetscScalar *deferred) {
  PetscFunctionBeginUser;
  *deferred = 0;
  if (!e.nextCorrection) PetscFunctionReturn(0);
  PetscCall(VecDot(e.nextCorrection, lambda, deferred));
  *deferred += e.nextQuadrature[k];
  PetscFunctionReturn(0);
}

} // namespace hybridsens
