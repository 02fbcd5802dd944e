// HessianSweeps: the tangent-linear sweep over the stored trajectory (a block of directions),
// storing the tangents for the second-order reverse sweep, or accumulating the hybrid
// formula's quadratic forms with the multipliers a first-order reverse sweep stored.
#include "sensitivity/hessian/hessian_sweeps.hpp"

namespace hybridsens {

PetscErrorCode HessianSweeps::tangentSweep(const HessianDirections &V, bool store, bool accumulate) {
  const TrajectoryStore &traj = engine_.trajectory();
  PetscFunctionBeginUser;
  PetscCall(initialTangent(V));
  if (store) PetscCall(storeTangent(tangents_, 0, du_));
  if (accumulate) PetscCall(boundaryTermsHybrid(0, V));
  for (PetscInt n = 1; n <= M_; ++n) {
    PetscCall(traj.load(ts_, n));
    if (rk_) PetscCall(rkTangentStep(n, V, store, accumulate));
    else PetscCall(thetaTangentStep(n, V, store, accumulate));
    if (store) PetscCall(storeTangent(tangents_, n * stepStride_, du_));
    if (accumulate) PetscCall(boundaryTermsHybrid(n, V));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode HessianSweeps::rkTangentStep(PetscInt n, const HessianDirections &V, bool store, bool accumulate) {
  const TrajectoryStore &traj = engine_.trajectory();
  const PetscReal t0 = traj.time(n - 1), h = traj.stepSize(n);
  const DiscreteState &d = traj.mode(n);
  PetscInt ns;
  Vec *Y;
  PetscFunctionBeginUser;
  PetscCall(TSGetStages(ts_, &ns, &Y));
  for (PetscInt i = 0; i < s_; ++i) {
    const PetscReal ti = t0 + c_[i] * h;
    for (size_t j = 0; j < m_; ++j) {
      PetscCall(VecCopy(du_[j], dY_[i][j]));
      for (PetscInt l = 0; l < i; ++l)
        if (A_[i * s_ + l] != 0) PetscCall(VecAXPY(dY_[i][j], h * A_[i * s_ + l], dK_[l][j]));
    }
    PetscCall(evaluateJacobians(ti, Y[i], d));
    for (size_t j = 0; j < m_; ++j) {
      PetscCall(MatMult(dyn_.J(), dY_[i][j], dK_[i][j]));
      PetscCall(addParameterProduct(V.vp[j].data(), 1.0, dK_[i][j]));
    }
    if (store) PetscCall(storeTangent(tangents_, stageOffset(n, i), dY_[i]));
    if (accumulate)
      for (size_t k = 0; k < ncost_; ++k) {
        std::vector<Vec> w = {nu_[k]};
        PetscCall(loadTangent(multipliers_, multiplierOffset(n, i, k), w));
        PetscCall(accumulateQuadratic(k, ti, Y[i], d, nu_[k], h * b_[i], 1.0, dY_[i], V));
      }
  }
  for (size_t j = 0; j < m_; ++j)
    for (PetscInt i = 0; i < s_; ++i)
      if (b_[i] != 0) PetscCall(VecAXPY(du_[j], h * b_[i], dK_[i][j]));
  PetscFunctionReturn(0);
}

// B δu_n = δu_{n-1} + h(1-θ)(f_u δu_{n-1} + f_p Vp)|_{n-1} + hθ f_p Vp|_n.
PetscErrorCode HessianSweeps::thetaTangentStep(PetscInt n, const HessianDirections &V, bool store, bool accumulate) {
  const TrajectoryStore &traj = engine_.trajectory();
  const PetscReal t0 = traj.time(n - 1), t1 = traj.time(n), h = traj.stepSize(n);
  const DiscreteState &d = traj.mode(n);
  PetscInt ns;
  Vec *Y, X;
  PetscFunctionBeginUser;
  PetscCall(TSGetStages(ts_, &ns, &Y));  // Y[0] = u_{n-1} (theta keeps the step's start state)
  PetscCall(TSGetSolution(ts_, &X));     // u_n
  if (accumulate)
    for (size_t k = 0; k < ncost_; ++k) {
      std::vector<Vec> w = {nu_[k]};
      PetscCall(loadTangent(multipliers_, multiplierOffset(n, 0, k), w));
    }
  for (size_t j = 0; j < m_; ++j) PetscCall(VecCopy(du_[j], e_[j]));
  if (theta_ != 1) {
    const PetscReal a = h * (1 - theta_);
    PetscCall(evaluateJacobians(t0, Y[0], d));
    for (size_t j = 0; j < m_; ++j) {
      PetscCall(MatMult(dyn_.J(), du_[j], tmp_));
      PetscCall(VecAXPY(e_[j], a, tmp_));
      PetscCall(addParameterProduct(V.vp[j].data(), a, e_[j]));
    }
    if (accumulate)
      for (size_t k = 0; k < ncost_; ++k) PetscCall(accumulateQuadratic(k, t0, Y[0], d, nu_[k], 1.0, a, du_, V));
  }
  PetscCall(factorShifted(t1, X, d, h * theta_));
  for (size_t j = 0; j < m_; ++j) {
    PetscCall(addParameterProduct(V.vp[j].data(), h * theta_, e_[j]));
    PetscCall(solve(e_[j], du_[j], false));
  }
  if (accumulate)
    for (size_t k = 0; k < ncost_; ++k) PetscCall(accumulateQuadratic(k, t1, X, d, nu_[k], 1.0, h * theta_, du_, V));
  (void)store;  // theta stores only δu_n (done by the caller)
  PetscFunctionReturn(0);
}

// H_k[l][j] += scale · Z_lᵀ (∇²(w·f) + rWeight ∇²r_k)(x) Z_j,  Z_j = (dx_j, Vp_j).
PetscErrorCode HessianSweeps::accumulateQuadratic(size_t k, PetscReal t, Vec x, const DiscreteState &d, Vec w, PetscReal rWeight,
                                                  PetscReal scale, const std::vector<Vec> &dx, const HessianDirections &V) {
  PetscFunctionBeginUser;
  if (scale == 0) PetscFunctionReturn(0);
  // All products first (the callbacks may read dx), then the m² dot products in one pass.
  if (products_.size() < m_) products_.resize(m_, nullptr);
  hps_.resize(m_);
  for (size_t j = 0; j < m_; ++j) {
    if (!products_[j]) PetscCall(VecDuplicate(hu_, &products_[j]));
    PetscCall(lagrangianProduct(k, t, x, d, w, rWeight, dx[j], V.vp[j].data(), products_[j], hps_[j]));
  }
  std::vector<const PetscScalar *> z(m_), hz(m_);
  for (size_t l = 0; l < m_; ++l) PetscCall(VecGetArrayRead(dx[l], &z[l]));
  for (size_t j = 0; j < m_; ++j) PetscCall(VecGetArrayRead(products_[j], &hz[j]));
  for (size_t j = 0; j < m_; ++j)
    for (size_t l = 0; l < m_; ++l) {
      PetscScalar dloc = 0, dglob = 0;
      for (PetscInt i = 0; i < nloc_; ++i) dloc += z[l][i] * hz[j][i];
      if (V.unit) dglob = (PetscInt)l < np_ ? hps_[j][l] : 0;  // Vp_l = e_l: no m²·np sum for full Hessians
      else
        for (PetscInt q = 0; q < np_; ++q) dglob += V.vp[l][q] * hps_[j][q];
      hLocal_[k][l][j] += scale * dloc;
      hGlobal_[k][l][j] += scale * dglob;
    }
  for (size_t j = 0; j < m_; ++j) PetscCall(VecRestoreArrayRead(products_[j], &hz[j]));
  for (size_t l = 0; l < m_; ++l) PetscCall(VecRestoreArrayRead(dx[l], &z[l]));
  PetscFunctionReturn(0);
}

} // namespace hybridsens
