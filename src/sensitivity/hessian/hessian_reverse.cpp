// HessianSweeps: the reverse sweep — the first-order discrete adjoint λ of the scheme, and, with
// stored tangents, its tangent σ = δλ (the second-order adjoint) for a block of directions.
// Formulas in hessian_sweeps.hpp.
#include "sensitivity/hessian/hessian_sweeps.hpp"

namespace hybridsens {

PetscErrorCode HessianSweeps::reverseSweep(const HessianDirections &V, bool second, bool storeMultipliers) {
  const TrajectoryStore &traj = engine_.trajectory();
  PetscFunctionBeginUser;
  for (size_t k = 0; k < ncost_; ++k) {
    PetscCall(VecZeroEntries(lam_[k]));
    for (auto &v : sig_[k]) PetscCall(VecZeroEntries(v));
  }
  if (second) PetscCall(loadTangent(tangents_, M_ * stepStride_, du_));
  PetscCall(boundaryTermsReverse(M_, V, second));
  for (PetscInt n = M_; n >= 1; --n) {
    PetscCall(traj.load(ts_, n));
    if (rk_) PetscCall(rkReverseStep(n, V, second, storeMultipliers));
    else PetscCall(thetaReverseStep(n, V, second, storeMultipliers));
    if (second) PetscCall(loadTangent(tangents_, (n - 1) * stepStride_, du_));
    PetscCall(boundaryTermsReverse(n - 1, V, second));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode HessianSweeps::rkReverseStep(PetscInt n, const HessianDirections &V, bool second, bool storeMultipliers) {
  const TrajectoryStore &traj = engine_.trajectory();
  const PetscReal t0 = traj.time(n - 1), h = traj.stepSize(n);
  const DiscreteState &d = traj.mode(n);
  std::vector<PetscScalar> rp;
  PetscInt ns;
  Vec *Y;
  PetscFunctionBeginUser;
  PetscCall(TSGetStages(ts_, &ns, &Y));
  for (PetscInt i = s_ - 1; i >= 0; --i) {
    const PetscReal ti = t0 + c_[i] * h, hb = h * b_[i];
    PetscCall(evaluateJacobians(ti, Y[i], d));
    if (second) PetscCall(loadTangent(tangents_, stageOffset(n, i), dY_[i]));
    for (size_t k = 0; k < ncost_; ++k) {
      Vec Kbar = nu_[k];
      // K̄_i = h b_i λ_n + h Σ_{l>i} a_li Ȳ_l
      PetscCall(VecAXPBY(Kbar, hb, 0.0, lam_[k]));
      for (PetscInt l = i + 1; l < s_; ++l)
        if (A_[l * s_ + i] != 0) PetscCall(VecAXPY(Kbar, h * A_[l * s_ + i], Ybar_[k][l]));
      if (storeMultipliers) PetscCall(storeTangent(multipliers_, multiplierOffset(n, i, k), {Kbar}));
      // Ȳ_i = f_uᵀ K̄_i + h b_i r_u,  μ += f_pᵀ K̄_i + h b_i r_p
      PetscCall(MatMultTranspose(dyn_.J(), Kbar, Ybar_[k][i]));
      PetscCall(addParameterTranspose(Kbar, 1.0, muLocal_[k]));
      if (hb != 0 && costs_.cost(k).hasIntegrand()) {
        PetscCall(costs_.integrandGradient(k, ti, Y[i], d, tmp_, rp));
        PetscCall(VecAXPY(Ybar_[k][i], hb, tmp_));
        for (PetscInt l = 0; l < np_; ++l) muGlobal_[k][l] += hb * rp[l];
      }
      if (!second) continue;
      for (size_t j = 0; j < m_; ++j) {
        // δK̄_i = h b_i σ_n + h Σ_{l>i} a_li δȲ_l;  δȲ_i = f_uᵀ δK̄_i + ∇²(K̄_i·f + h b_i r)·(δY_i, Vp)
        PetscCall(VecAXPBY(work_, hb, 0.0, sig_[k][j]));
        for (PetscInt l = i + 1; l < s_; ++l)
          if (A_[l * s_ + i] != 0) PetscCall(VecAXPY(work_, h * A_[l * s_ + i], dYbar_[k][l][j]));
        PetscCall(lagrangianProduct(k, ti, Y[i], d, Kbar, hb, dY_[i][j], V.vp[j].data(), hu_, hp_));
        PetscCall(MatMultTranspose(dyn_.J(), work_, dYbar_[k][i][j]));
        PetscCall(VecAXPY(dYbar_[k][i][j], 1.0, hu_));
        PetscCall(addParameterTranspose(work_, 1.0, dmuLocal_[k][j]));
        for (PetscInt l = 0; l < np_; ++l) dmuGlobal_[k][j][l] += hp_[l];
      }
    }
  }
  for (size_t k = 0; k < ncost_; ++k)
    for (PetscInt i = 0; i < s_; ++i) {
      PetscCall(VecAXPY(lam_[k], 1.0, Ybar_[k][i]));
      if (second)
        for (size_t j = 0; j < m_; ++j) PetscCall(VecAXPY(sig_[k][j], 1.0, dYbar_[k][i][j]));
    }
  PetscFunctionReturn(0);
}

PetscErrorCode HessianSweeps::thetaReverseStep(PetscInt n, const HessianDirections &V, bool second, bool storeMultipliers) {
  const TrajectoryStore &traj = engine_.trajectory();
  const PetscReal t0 = traj.time(n - 1), t1 = traj.time(n), h = traj.stepSize(n), ht = h * theta_, ho = h * (1 - theta_);
  const DiscreteState &d = traj.mode(n);
  std::vector<PetscScalar> rp;
  PetscInt ns;
  Vec *Y, X;
  PetscFunctionBeginUser;
  PetscCall(TSGetStages(ts_, &ns, &Y));  // Y[0] = u_{n-1}
  PetscCall(TSGetSolution(ts_, &X));     // u_n
  if (second) PetscCall(loadTangent(tangents_, (n - 1) * stepStride_, e_));  // δu_{n-1}; du_ holds δu_n
  // At u_n: ν = B⁻ᵀ(λ_n + hθ r_u),  μ += hθ(f_pᵀν + r_p);  δν = B⁻ᵀ(σ_n + hθ hu),  δμ += hθ(f_pᵀδν + hp).
  PetscCall(factorShifted(t1, X, d, ht));
  for (size_t k = 0; k < ncost_; ++k) {
    PetscCall(VecCopy(lam_[k], work_));
    if (costs_.cost(k).hasIntegrand()) {
      PetscCall(costs_.integrandGradient(k, t1, X, d, tmp_, rp));
      PetscCall(VecAXPY(work_, ht, tmp_));
      for (PetscInt l = 0; l < np_; ++l) muGlobal_[k][l] += ht * rp[l];
    }
    PetscCall(solve(work_, nu_[k], true));
    if (storeMultipliers) PetscCall(storeTangent(multipliers_, multiplierOffset(n, 0, k), {nu_[k]}));
    PetscCall(addParameterTranspose(nu_[k], ht, muLocal_[k]));
    if (!second) continue;
    for (size_t j = 0; j < m_; ++j) {
      PetscCall(lagrangianProduct(k, t1, X, d, nu_[k], 1.0, du_[j], V.vp[j].data(), hu_, hp_));
      PetscCall(VecWAXPY(work_, ht, hu_, sig_[k][j]));
      PetscCall(solve(work_, dnu_[k][j], true));
      PetscCall(addParameterTranspose(dnu_[k][j], ht, dmuLocal_[k][j]));
      for (PetscInt l = 0; l < np_; ++l) dmuGlobal_[k][j][l] += ht * hp_[l];
    }
  }
  // At u_{n-1}: λ_{n-1} = ν + h(1-θ)(f_uᵀν + r_u), σ_{n-1} = δν + h(1-θ)(f_uᵀδν + hu), and μ, δμ alike.
  if (theta_ != 1) PetscCall(evaluateJacobians(t0, Y[0], d));
  for (size_t k = 0; k < ncost_; ++k) {
    PetscCall(VecCopy(nu_[k], lam_[k]));
    for (size_t j = 0; second && j < m_; ++j) PetscCall(VecCopy(dnu_[k][j], sig_[k][j]));
    if (theta_ == 1) continue;
    PetscCall(MatMultTranspose(dyn_.J(), nu_[k], tmp_));
    PetscCall(VecAXPY(lam_[k], ho, tmp_));
    PetscCall(addParameterTranspose(nu_[k], ho, muLocal_[k]));
    if (costs_.cost(k).hasIntegrand()) {
      PetscCall(costs_.integrandGradient(k, t0, Y[0], d, tmp_, rp));
      PetscCall(VecAXPY(lam_[k], ho, tmp_));
      for (PetscInt l = 0; l < np_; ++l) muGlobal_[k][l] += ho * rp[l];
    }
    for (size_t j = 0; second && j < m_; ++j) {
      PetscCall(lagrangianProduct(k, t0, Y[0], d, nu_[k], 1.0, e_[j], V.vp[j].data(), hu_, hp_));
      PetscCall(MatMultTranspose(dyn_.J(), dnu_[k][j], tmp_));
      PetscCall(VecAXPY(tmp_, 1.0, hu_));
      PetscCall(VecAXPY(sig_[k][j], ho, tmp_));
      PetscCall(addParameterTranspose(dnu_[k][j], ho, dmuLocal_[k][j]));
      for (PetscInt l = 0; l < np_; ++l) dmuGlobal_[k][j][l] += ho * hp_[l];
    }
  }
  PetscFunctionReturn(0);
}

} // namespace hybridsens
