// HessianSweeps: set-up, refusals, shared pieces, and the three public drivers.
#include "sensitivity/hessian/hessian_sweeps.hpp"

#include "sensitivity/configuration.hpp"
#include "util/linear_solve_defaults.hpp"
#include "util/gather.hpp"
#include "util/petsc_internals.hpp"
#include "util/user_call.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace hybridsens {

HessianDirections HessianDirections::identity(PetscInt np, PetscInt nz) {
  std::vector<std::vector<PetscScalar>> rows(np + nz, std::vector<PetscScalar>(np + nz, 0.0));
  for (PetscInt i = 0; i < np + nz; ++i) rows[i][i] = 1.0;
  HessianDirections V = fromRows(rows, np, nz);
  V.unit = true;
  return V;
}

HessianDirections HessianDirections::fromRows(const std::vector<std::vector<PetscScalar>> &v, PetscInt np, PetscInt nz) {
  HessianDirections V;
  for (const auto &row : v) {
    V.vp.emplace_back(row.begin(), row.begin() + np);
    V.vz.emplace_back(row.begin() + np, row.begin() + np + nz);
  }
  return V;
}

HessianSweeps::HessianSweeps(Engine &engine, CostEvaluator &costs, SecondOrderCallbacks &callbacks, std::vector<PetscInt> u0Indices)
    : engine_(engine), costs_(costs), cb_(callbacks), u0Indices_(std::move(u0Indices)), dyn_(engine.dynamics()), ts_(engine.ts()) {}

static void destroyAll(std::vector<Vec> &v) {
  for (auto &x : v) VecDestroy(&x);
  v.clear();
}

HessianSweeps::~HessianSweeps() {
  destroyAll(du_);
  destroyAll(e_);
  destroyAll(lam_);
  destroyAll(nu_);
  destroyAll(lambda0_);
  destroyAll(products_);
  for (auto &v : dY_) destroyAll(v);
  for (auto &v : dK_) destroyAll(v);
  for (auto &v : sig_) destroyAll(v);
  for (auto &v : dnu_) destroyAll(v);
  for (auto &v : Ybar_) destroyAll(v);
  for (auto &w : dYbar_)
    for (auto &v : w) destroyAll(v);
  MatDestroy(&du0dp_);
  KSPDestroy(&ksp_);
  VecDestroy(&work_);
  VecDestroy(&hu_);
  VecDestroy(&hu2_);
  VecDestroy(&tmp_);
}

PetscErrorCode HessianSweeps::setUp() {
  const HybridModel &model = dyn_.model();
  TSType type;
  PetscBool isRK;
  PetscFunctionBeginUser;
  PetscCheck(!dyn_.isDAE(), dyn_.comm(), PETSC_ERR_SUP,
             "Hessians of DAE models are not supported: the second-order terms of the consistency conditions are not implemented");
  PetscCall(checkSensitivityConfiguration(ts_, dyn_, false));
  // Events: only fixed-time time events without a reset, which switch the discrete state and
  // carry no jump at all (τ_p = 0, R = I). Anything else would need second-order jumps.
  for (const EventRecord &r : engine_.log().records()) {
    bool ok = r.id.kind == EventId::Time && !model.hasReset(r.id);
    if (ok) {
      TimeEventInfo info;
      HS_USER_QUERY(dyn_.comm(), "timeEvent", info = model.timeEvent(r.id.index, dyn_.parameters()));
      for (PetscReal d : info.dtime_dp) ok = ok && d == 0;
    }
    PetscCheck(ok, dyn_.comm(), PETSC_ERR_SUP,
               "Hessians through this event are not supported: %s '%s' at t = %.17g (step %" PetscInt_FMT ", discrete state %s -> %s)%s. "
               "Second-order jump conditions are not implemented; Hessians are exact only for runs whose events are time events "
               "at fixed times without a reset",
               r.id.kind == EventId::Guard ? "state event" : "time event", r.name.c_str(), (double)r.time, r.step, describe(r.before).c_str(),
               describe(r.after).c_str(),
               r.id.kind == EventId::Guard ? "" : (model.hasReset(r.id) ? " with a reset" : " with a parameter-dependent time"));
  }
  PetscCall(TSGetType(ts_, &type));
  PetscCall(PetscStrcmp(type, TSRK, &isRK));
  rk_ = isRK;
  if (rk_) {
    const PetscReal *A, *b, *c;
    PetscCall(TSRKGetTableau(ts_, &s_, &A, &b, &c, nullptr, nullptr, nullptr, nullptr));
    A_.assign(A, A + s_ * s_);
    b_.assign(b, b + s_);
    c_.assign(c, c + s_);
    for (PetscInt i = 0; i < s_; ++i)
      for (PetscInt l = i; l < s_; ++l) PetscCheck(A_[i * s_ + l] == 0, dyn_.comm(), PETSC_ERR_SUP, "Hessians: RK tableau is not explicit");
  } else {
    PetscCall(TSThetaGetTheta(ts_, &theta_));
    if (!ksp_) {
      PetscCall(KSPCreate(dyn_.comm(), &ksp_));
      PetscCall(KSPSetOptionsPrefix(ksp_, "hs_hessian_"));
      PetscInt N;
      PetscCall(VecGetSize(dyn_.templateVec(), &N));
      PetscCall(setLinearSolveDefaults(ksp_, N));
      PetscCall(KSPSetFromOptions(ksp_));
      PetscCall(requireExactSolve(ksp_, "the Hessian sweeps' linear solves"));
    }
  }
  np_ = dyn_.numParameters();
  nz_ = (PetscInt)u0Indices_.size();
  ncost_ = costs_.size();
  PetscCheck(ncost_ > 0, dyn_.comm(), PETSC_ERR_ARG_WRONGSTATE, "Hessians need at least one cost function (Solver::addCost)");
  M_ = engine_.trajectory().size() - 1;
  PetscCheck(M_ >= 1, dyn_.comm(), PETSC_ERR_ARG_WRONGSTATE, "Hessians need a solve() first");
  PetscCall(VecGetLocalSize(dyn_.templateVec(), &nloc_));
  PetscFunctionReturn(0);
}

PetscErrorCode HessianSweeps::allocate(size_t m, bool second) {
  PetscFunctionBeginUser;
  m_ = m;
  Vec tmpl = dyn_.templateVec();
  if (!hu_) {
    PetscCall(VecDuplicate(tmpl, &hu_));
    PetscCall(VecDuplicate(tmpl, &hu2_));
    PetscCall(VecDuplicate(tmpl, &tmp_));
    PetscCall(VecDuplicate(tmpl, &work_));
  }
  auto make = [&](std::vector<Vec> &v, size_t count) -> PetscErrorCode {
    PetscFunctionBeginUser;
    destroyAll(v);
    v.resize(count);
    for (auto &x : v) PetscCall(VecDuplicate(tmpl, &x));
    PetscFunctionReturn(0);
  };
  PetscCall(make(du_, m));
  PetscCall(make(e_, m));
  PetscCall(make(lam_, ncost_));
  PetscCall(make(nu_, ncost_));
  dY_.resize(rk_ ? s_ : 0);
  dK_.resize(rk_ ? s_ : 0);
  for (auto &v : dY_) PetscCall(make(v, m));
  for (auto &v : dK_) PetscCall(make(v, m));
  sig_.resize(ncost_);
  dnu_.resize(ncost_);
  Ybar_.resize(ncost_);
  dYbar_.resize(ncost_);
  for (size_t k = 0; k < ncost_; ++k) {
    PetscCall(make(sig_[k], second ? m : 0));
    PetscCall(make(dnu_[k], second ? m : 0));
    PetscCall(make(Ybar_[k], rk_ ? s_ : 0));
    dYbar_[k].resize(rk_ && second ? s_ : 0);
    for (auto &v : dYbar_[k]) PetscCall(make(v, m));
  }
  muLocal_.assign(ncost_, std::vector<PetscScalar>(np_, 0.0));
  muGlobal_ = muLocal_;
  dmuLocal_.assign(ncost_, std::vector<std::vector<PetscScalar>>(m, std::vector<PetscScalar>(np_, 0.0)));
  dmuGlobal_ = dmuLocal_;
  hLocal_.assign(ncost_, std::vector<std::vector<PetscScalar>>(m, std::vector<PetscScalar>(m, 0.0)));
  hGlobal_ = hLocal_;
  stepStride_ = (size_t)(1 + (rk_ ? s_ : 0)) * m * nloc_;
  PetscFunctionReturn(0);
}

// ---- linear algebra on the parameter Jacobian ---------------------------------------------------
// f_p is the first np columns of dyn.parameterJacobian(): dense by default, or any matrix type
// the model chose (HybridModel::createParameterJacobian, e.g. AIJ). Both products below touch
// only the owned rows, so the transposed one leaves local partial sums (reduced once per sweep).

// Calls f(local row, column, value) for every stored entry of the owned rows in columns < np.
template <class F> static PetscErrorCode forEachParameterEntry(Mat P, PetscInt np, F &&f) {
  PetscBool dense;
  PetscInt lo, hi;
  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)P, &dense, MATDENSE, MATSEQDENSE, MATMPIDENSE, ""));
  PetscCall(MatGetOwnershipRange(P, &lo, &hi));
  if (dense) {
    const PetscScalar *a;
    PetscInt lda;
    PetscCall(MatDenseGetLDA(P, &lda));
    PetscCall(MatDenseGetArrayRead(P, &a));
    for (PetscInt l = 0; l < np; ++l)
      for (PetscInt i = 0; i < hi - lo; ++i) f(i, l, a[i + l * lda]);
    PetscCall(MatDenseRestoreArrayRead(P, &a));
  } else {
    for (PetscInt r = lo; r < hi; ++r) {
      PetscInt ncols;
      const PetscInt *cols;
      const PetscScalar *vals;
      PetscCall(MatGetRow(P, r, &ncols, &cols, &vals));
      for (PetscInt c = 0; c < ncols; ++c)
        if (cols[c] < np) f(r - lo, cols[c], vals[c]);
      PetscCall(MatRestoreRow(P, r, &ncols, &cols, &vals));
    }
  }
  PetscFunctionReturn(0);
}

PetscErrorCode HessianSweeps::addParameterTranspose(Vec x, PetscReal s, std::vector<PetscScalar> &acc) {
  const PetscScalar *xa;
  PetscFunctionBeginUser;
  if (!np_ || s == 0) PetscFunctionReturn(0);
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(forEachParameterEntry(dyn_.parameterJacobian(), np_, [&](PetscInt i, PetscInt l, PetscScalar v) { acc[l] += s * v * xa[i]; }));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(0);
}

PetscErrorCode HessianSweeps::addParameterProduct(const PetscScalar *vp, PetscReal s, Vec y) {
  PetscScalar *ya;
  PetscFunctionBeginUser;
  if (!np_ || s == 0) PetscFunctionReturn(0);
  PetscCall(VecGetArray(y, &ya));
  PetscCall(forEachParameterEntry(dyn_.parameterJacobian(), np_, [&](PetscInt i, PetscInt l, PetscScalar v) { ya[i] += s * v * vp[l]; }));
  PetscCall(VecRestoreArray(y, &ya));
  PetscFunctionReturn(0);
}

PetscErrorCode HessianSweeps::evaluateJacobians(PetscReal t, Vec u, const DiscreteState &d) {
  PetscFunctionBeginUser;
  PetscCall(dyn_.rhsJacobian(t, u, d));
  if (np_) PetscCall(dyn_.rhsJacobianP(t, u, d));
  PetscFunctionReturn(0);
}

// B = I - hθ f_u(t, u) in place of the Jacobian (the TS's cache is invalidated after the sweep),
// factored by the sweep's own direct solver; f_p at the same point.
PetscErrorCode HessianSweeps::factorShifted(PetscReal t, Vec u, const DiscreteState &d, PetscReal htheta) {
  Mat J = dyn_.J();
  PetscFunctionBeginUser;
  PetscCall(evaluateJacobians(t, u, d));
  PetscCall(MatScale(J, -htheta));
  PetscCall(MatShift(J, 1.0));
  PetscCall(KSPSetOperators(ksp_, J, J));
  PetscCall(KSPSetUp(ksp_));
  PetscFunctionReturn(0);
}

PetscErrorCode HessianSweeps::solve(Vec rhs, Vec x, bool transpose) {
  KSPConvergedReason reason;
  PetscFunctionBeginUser;
  if (transpose) PetscCall(KSPSolveTranspose(ksp_, rhs, x));
  else PetscCall(KSPSolve(ksp_, rhs, x));
  PetscCall(KSPGetConvergedReason(ksp_, &reason));
  PetscCheck(reason >= 0, dyn_.comm(), PETSC_ERR_NOT_CONVERGED, "Hessian sweep: linear solve with I - h theta f_u failed (%s)",
             KSPConvergedReasons[reason]);
  PetscFunctionReturn(0);
}

PetscErrorCode HessianSweeps::storeTangent(std::vector<PetscScalar> &store, size_t offset, const std::vector<Vec> &v) {
  const PetscScalar *a;
  PetscFunctionBeginUser;
  for (size_t j = 0; j < v.size(); ++j) {
    PetscCall(VecGetArrayRead(v[j], &a));
    if (nloc_) std::memcpy(&store[offset + j * nloc_], a, nloc_ * sizeof(PetscScalar));
    PetscCall(VecRestoreArrayRead(v[j], &a));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode HessianSweeps::loadTangent(const std::vector<PetscScalar> &store, size_t offset, std::vector<Vec> &v) {
  PetscScalar *a;
  PetscFunctionBeginUser;
  for (size_t j = 0; j < v.size(); ++j) {
    PetscCall(VecGetArrayWrite(v[j], &a));
    if (nloc_) std::memcpy(a, &store[offset + j * nloc_], nloc_ * sizeof(PetscScalar));
    PetscCall(VecRestoreArrayWrite(v[j], &a));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode HessianSweeps::lagrangianProduct(size_t k, PetscReal t, Vec x, const DiscreteState &d, Vec w, PetscReal rWeight, Vec v,
                                                const PetscScalar *vp, Vec hu, std::vector<PetscScalar> &hp) {
  PetscFunctionBeginUser;
  if (w) PetscCall(cb_.model(t, x, d, w, v, vp, hu, hp));
  else {
    PetscCall(VecZeroEntries(hu));
    hp.assign(np_, 0.0);
  }
  if (rWeight != 0 && costs_.cost(k).hasIntegrand()) {
    PetscCall(cb_.integrand(k, t, x, d, v, vp, hu2_, hp2_));
    PetscCall(VecAXPY(hu, rWeight, hu2_));
    for (PetscInt l = 0; l < np_; ++l) hp[l] += rWeight * hp2_[l];
  }
  PetscFunctionReturn(0);
}

// ---- boundaries: measurements (right limit), terminal part -------------------------------------

PetscErrorCode HessianSweeps::boundaryState(PetscInt n, Vec *u, DiscreteState *d) {
  const TrajectoryStore &traj = engine_.trajectory();
  PetscFunctionBeginUser;
  PetscCall(traj.state(n, u));  // no resets are allowed, so U⁻ = U⁺ at an event step
  *d = traj.mode(n);
  for (const EventRecord &r : engine_.log().records())
    if (r.step == n) *d = r.after;
  PetscFunctionReturn(0);
}

// λ, μ, σ, δμ at the boundary after step n: measurements at t_n and (n = M) the terminal part.
PetscErrorCode HessianSweeps::boundaryTermsReverse(PetscInt n, const HessianDirections &V, bool second) {
  const PetscReal t = engine_.trajectory().time(n);
  Vec u;
  DiscreteState d;
  std::vector<PetscScalar> gp;
  PetscScalar value = 0;
  PetscFunctionBeginUser;
  PetscCall(boundaryState(n, &u, &d));
  for (size_t k = 0; k < ncost_; ++k) {
    const bool meas = cb_.hasMeasurementAt(k, t), term = n == M_ && costs_.cost(k).hasTerminal();
    if (meas) {
      gp.assign(np_, 0.0);
      PetscCall(costs_.measurementsAt(k, t, u, d, &value, lam_[k], gp, tmp_));
      for (PetscInt l = 0; l < np_; ++l) muGlobal_[k][l] += gp[l];
    }
    if (term) {
      PetscCall(costs_.terminalGradient(k, t, u, d, tmp_, gp));
      PetscCall(VecAXPY(lam_[k], 1.0, tmp_));
      for (PetscInt l = 0; l < np_; ++l) muGlobal_[k][l] += gp[l];
    }
    if (!second) continue;
    for (size_t j = 0; j < m_; ++j) {
      if (meas) {
        PetscCall(cb_.measurements(k, t, u, d, du_[j], V.vp[j].data(), hu_, hp_));
        PetscCall(VecAXPY(sig_[k][j], 1.0, hu_));
        for (PetscInt l = 0; l < np_; ++l) dmuGlobal_[k][j][l] += hp_[l];
      }
      if (term) {
        PetscCall(cb_.terminal(k, t, u, d, du_[j], V.vp[j].data(), hu_, hp_));
        PetscCall(VecAXPY(sig_[k][j], 1.0, hu_));
        for (PetscInt l = 0; l < np_; ++l) dmuGlobal_[k][j][l] += hp_[l];
      }
    }
  }
  PetscFunctionReturn(0);
}

// Hybrid: H_k += Zᵀ ∇²(g + ψ) Z at the boundary after step n (Z from du_ = δu_n).
PetscErrorCode HessianSweeps::boundaryTermsHybrid(PetscInt n, const HessianDirections &V) {
  const PetscReal t = engine_.trajectory().time(n);
  Vec u;
  DiscreteState d;
  PetscFunctionBeginUser;
  PetscCall(boundaryState(n, &u, &d));
  for (size_t k = 0; k < ncost_; ++k) {
    const bool meas = cb_.hasMeasurementAt(k, t), term = n == M_ && costs_.cost(k).hasTerminal();
    if (!meas && !term) continue;
    for (size_t j = 0; j < m_; ++j) {
      PetscCall(VecZeroEntries(tmp_));
      std::vector<PetscScalar> hp(np_, 0.0);
      if (meas) {
        PetscCall(cb_.measurements(k, t, u, d, du_[j], V.vp[j].data(), hu_, hp_));
        PetscCall(VecAXPY(tmp_, 1.0, hu_));
        for (PetscInt l = 0; l < np_; ++l) hp[l] += hp_[l];
      }
      if (term) {
        PetscCall(cb_.terminal(k, t, u, d, du_[j], V.vp[j].data(), hu_, hp_));
        PetscCall(VecAXPY(tmp_, 1.0, hu_));
        for (PetscInt l = 0; l < np_; ++l) hp[l] += hp_[l];
      }
      const PetscScalar *ha;
      PetscCall(VecGetArrayRead(tmp_, &ha));
      for (size_t l = 0; l < m_; ++l) {
        const PetscScalar *za;
        PetscScalar dloc = 0, dglob = 0;
        PetscCall(VecGetArrayRead(du_[l], &za));
        for (PetscInt i = 0; i < nloc_; ++i) dloc += za[i] * ha[i];
        PetscCall(VecRestoreArrayRead(du_[l], &za));
        for (PetscInt q = 0; q < np_; ++q) dglob += V.vp[l][q] * hp[q];
        hLocal_[k][l][j] += dloc;
        hGlobal_[k][l][j] += dglob;
      }
      PetscCall(VecRestoreArrayRead(tmp_, &ha));
    }
  }
  PetscFunctionReturn(0);
}

// δu_0 = u0_p Vp + E Vz, and u0_p kept for the final gradient / product.
PetscErrorCode HessianSweeps::initialTangent(const HessianDirections &V) {
  PetscInt lo, hi;
  PetscFunctionBeginUser;
  if (!du0dp_) PetscCall(dyn_.createDenseParameterMatrix(&du0dp_));
  PetscCall(MatZeroEntries(du0dp_));
  HS_USER_CALL(dyn_.comm(), "initialStateJacobianP", dyn_.model().initialStateJacobianP(dyn_.context(), du0dp_));
  PetscCall(MatAssemblyBegin(du0dp_, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(du0dp_, MAT_FINAL_ASSEMBLY));
  PetscCall(VecGetOwnershipRange(dyn_.templateVec(), &lo, &hi));
  const PetscScalar *P;
  PetscInt lda;
  PetscCall(MatDenseGetLDA(du0dp_, &lda));
  PetscCall(MatDenseGetArrayRead(du0dp_, &P));
  for (size_t j = 0; j < m_; ++j) {
    PetscScalar *a;
    PetscCall(VecGetArrayWrite(du_[j], &a));
    for (PetscInt i = 0; i < nloc_; ++i) {
      a[i] = 0;
      for (PetscInt l = 0; l < np_; ++l) a[i] += P[i + l * lda] * V.vp[j][l];
    }
    for (PetscInt z = 0; z < nz_; ++z) {
      const PetscInt gi = u0Indices_[z];
      PetscCheck(gi >= 0, dyn_.comm(), PETSC_ERR_ARG_OUTOFRANGE, "initial-state index %" PetscInt_FMT " out of range", gi);
      if (gi >= lo && gi < hi) a[gi - lo] += V.vz[j][z];
    }
    PetscCall(VecRestoreArrayWrite(du_[j], &a));
  }
  PetscCall(MatDenseRestoreArrayRead(du0dp_, &P));
  PetscFunctionReturn(0);
}

// At t0: the gradient (μ + u0_pᵀλ_0, λ_0[idx]), and either the products
// (δμ + u0_pᵀσ_0 + (λ_0·u0)_pp Vp, σ_0[idx]) or the hybrid's Vpᵀ(λ_0·u0)_pp Vp; then the
// local accumulators are reduced over ranks.
PetscErrorCode HessianSweeps::initialStateTerms(const HessianDirections &V, bool second, bool hybrid, SecondOrderResults &out) {
  const PetscInt nq = np_ + nz_;
  std::vector<PetscScalar> all;
  PetscFunctionBeginUser;
  // Fold u0_pᵀλ_0 (and u0_pᵀσ_0) into the local accumulators: same structure as f_pᵀx.
  auto addU0T = [&](Vec x, std::vector<PetscScalar> &acc) -> PetscErrorCode {
    const PetscScalar *P, *xa;
    PetscInt lda;
    PetscFunctionBeginUser;
    PetscCall(MatDenseGetLDA(du0dp_, &lda));
    PetscCall(MatDenseGetArrayRead(du0dp_, &P));
    PetscCall(VecGetArrayRead(x, &xa));
    for (PetscInt l = 0; l < np_; ++l)
      for (PetscInt i = 0; i < nloc_; ++i) acc[l] += P[i + l * lda] * xa[i];
    PetscCall(VecRestoreArrayRead(x, &xa));
    PetscCall(MatDenseRestoreArrayRead(du0dp_, &P));
    PetscFunctionReturn(0);
  };
  out.gradient.assign(ncost_, std::vector<PetscScalar>(nq, 0.0));
  if (second) out.products.assign(ncost_, std::vector<std::vector<PetscScalar>>(m_, std::vector<PetscScalar>(nq, 0.0)));
  for (size_t k = 0; k < ncost_; ++k) {
    PetscCall(addU0T(lam_[k], muLocal_[k]));
    if (np_) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, muLocal_[k].data(), (int)np_, MPIU_SCALAR, MPIU_SUM, dyn_.comm()));
    PetscCall(gatherToAll(lam_[k], all));
    for (PetscInt l = 0; l < np_; ++l) out.gradient[k][l] = muLocal_[k][l] + muGlobal_[k][l];
    for (PetscInt z = 0; z < nz_; ++z) out.gradient[k][np_ + z] = all[u0Indices_[z]];
    if (second) {
      for (size_t j = 0; j < m_; ++j) {
        PetscCall(addU0T(sig_[k][j], dmuLocal_[k][j]));
        if (np_) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, dmuLocal_[k][j].data(), (int)np_, MPIU_SCALAR, MPIU_SUM, dyn_.comm()));
        PetscCall(cb_.initialState(lam_[k], V.vp[j].data(), hp_));
        PetscCall(gatherToAll(sig_[k][j], all));
        for (PetscInt l = 0; l < np_; ++l) out.products[k][j][l] = dmuLocal_[k][j][l] + dmuGlobal_[k][j][l] + hp_[l];
        for (PetscInt z = 0; z < nz_; ++z) out.products[k][j][np_ + z] = all[u0Indices_[z]];
      }
    }
  }
  if (hybrid) {
    out.quadratic.assign(ncost_, std::vector<std::vector<PetscScalar>>(m_, std::vector<PetscScalar>(m_, 0.0)));
    for (size_t k = 0; k < ncost_; ++k) {
      for (size_t j = 0; j < m_; ++j) {
        PetscCall(cb_.initialState(lambda0_[k], V.vp[j].data(), hp_));
        for (size_t l = 0; l < m_; ++l)
          for (PetscInt q = 0; q < np_; ++q) hGlobal_[k][l][j] += V.vp[l][q] * hp_[q];
      }
      for (size_t l = 0; l < m_; ++l) {
        PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, hLocal_[k][l].data(), (int)m_, MPIU_SCALAR, MPIU_SUM, dyn_.comm()));
        for (size_t j = 0; j < m_; ++j) out.quadratic[k][l][j] = hLocal_[k][l][j] + hGlobal_[k][l][j];
      }
    }
  }
  PetscFunctionReturn(0);
}

// ---- drivers ------------------------------------------------------------------------------------

// The sweeps load stored steps into the TS; they leave it as they found it.
class TSStateGuard {
public:
  TSStateGuard(TS ts) : ts_(ts) {}
  PetscErrorCode save() {
    Vec X;
    PetscFunctionBeginUser;
    PetscCall(TSGetSolution(ts_, &X));
    PetscCall(VecDuplicate(X, &saved_));
    PetscCall(VecCopy(X, saved_));
    PetscCall(TSGetTime(ts_, &t_));
    PetscCall(TSGetTimeStep(ts_, &dt_));
    PetscCall(TSGetStepNumber(ts_, &steps_));
    PetscFunctionReturn(0);
  }
  PetscErrorCode restore() {
    Vec X;
    PetscFunctionBeginUser;
    PetscCall(TSGetSolution(ts_, &X));
    PetscCall(VecCopy(saved_, X));
    PetscCall(VecDestroy(&saved_));
    PetscCall(TSSetTime(ts_, t_));
    PetscCall(TSSetTimeStep(ts_, dt_));
    PetscCall(TSSetStepNumber(ts_, steps_));
    PetscCall(tsInvalidateRHSJacobian(ts_));  // the sweeps overwrote the Jacobian matrix
    PetscFunctionReturn(0);
  }
  ~TSStateGuard() { VecDestroy(&saved_); }

private:
  TS ts_;
  Vec saved_ = nullptr;
  PetscReal t_ = 0, dt_ = 0;
  PetscInt steps_ = 0;
};

PetscErrorCode HessianSweeps::gradient(SecondOrderResults &out) {
  TSStateGuard guard(ts_);
  HessianDirections none;
  PetscFunctionBeginUser;
  PetscCall(guard.save());
  PetscCall(allocate(0, false));
  PetscCall(initialTangent(none));
  PetscCall(reverseSweep(none, false, false));
  PetscCall(initialStateTerms(none, false, false, out));
  PetscCall(guard.restore());
  PetscFunctionReturn(0);
}

PetscErrorCode HessianSweeps::forwardOverAdjoint(const HessianDirections &V, SecondOrderResults &out) {
  TSStateGuard guard(ts_);
  PetscFunctionBeginUser;
  PetscCall(guard.save());
  PetscCall(allocate(V.size(), true));
  tangents_.assign(stepStride_ * (M_ + 1), 0.0);
  PetscCall(tangentSweep(V, true, false));
  PetscCall(reverseSweep(V, true, false));
  PetscCall(initialStateTerms(V, true, false, out));
  tangents_.clear();
  tangents_.shrink_to_fit();
  PetscCall(guard.restore());
  PetscFunctionReturn(0);
}

PetscErrorCode HessianSweeps::hybrid(const HessianDirections &V, SecondOrderResults &out) {
  TSStateGuard guard(ts_);
  HessianDirections none;
  PetscFunctionBeginUser;
  PetscCall(guard.save());
  // First-order reverse sweep storing the stage multipliers, then the tangent sweep.
  PetscCall(allocate(0, false));
  multipliers_.assign((size_t)M_ * (rk_ ? s_ : 1) * ncost_ * nloc_, 0.0);
  PetscCall(reverseSweep(none, false, true));
  destroyAll(lambda0_);
  for (size_t k = 0; k < ncost_; ++k) {
    Vec v;
    PetscCall(VecDuplicate(lam_[k], &v));
    PetscCall(VecCopy(lam_[k], v));
    lambda0_.push_back(v);
  }
  std::vector<std::vector<PetscScalar>> muL = muLocal_, muG = muGlobal_;
  PetscCall(allocate(V.size(), false));
  for (size_t k = 0; k < ncost_; ++k) PetscCall(VecCopy(lambda0_[k], lam_[k]));
  muLocal_ = muL, muGlobal_ = muG;
  PetscCall(tangentSweep(V, false, true));
  PetscCall(initialStateTerms(V, false, true, out));
  multipliers_.clear();
  multipliers_.shrink_to_fit();
  PetscCall(guard.restore());
  PetscFunctionReturn(0);
}

} // namespace hybridsens
