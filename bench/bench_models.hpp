// bench_models.hpp — the two hybrid models, the two costs and the solver set-up shared by the
// benchmarks of bench/ (forward_cost, adjoint_cost). One copy: both programs include this.
//
// (1) "thermostats" (ThermostatChain): a chain of N weakly coupled thermostats (as
//     tests/test_distributed.cpp),
//       x_i' = q_i k_i (d_i - x_i) + κ (x_{i-1} - 2 x_i + x_{i+1}),   k_i ∈ [1, 3), κ = 0.05,
//     guards high_i = x_i - 0.6 q_i (rising, d_i = 1 → 0, reset x_i -= 0.05) and
//            low_i  = x_i - 0.4 q_i (falling, d_i = 0 → 1).  ODE.
// (2) "dae" (PowerChainDAE): a chain of N thermostats whose heating powers y_i are algebraic and
//     coupled,
//       x_i' = -k_i x_i + y_i,
//       0    = k_i (q_i d_i - σ x_i) + κ (y_{i-1} - 2 y_i + y_{i+1}) - y_i   (σ = 0.2),
//     state (x_0, y_0, x_1, y_1, …), same hysteresis guards on x_i (no reset; y jumps at every
//     event and is re-solved consistently). Semi-explicit index-1 DAE.
//
// Parameters, shared cyclically: component i and parameter j are linked when
// i ≡ j (mod min(N, m)), and q_i is the mean of the p_j linked to i. For m ≤ N that is
// q_i = p_{i mod m} (each parameter drives every m-th component); for m > N each component
// averages the parameters j ≡ i (mod N), so every one of the m parameters enters the dynamics
// (gains) and the guards (levels) and has a non-zero gradient. All p_j = 1, so q_i = 1 and the
// trajectory is the same for every m; Σ_j dJ/dp_j = dJ/dq is the same for every m as well.
//
// Costs: J_0 = Σ_i x_i(T) (terminal) and J_1 = ∫ Σ_i x_i² dt (integral).
#pragma once

#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace hsbench {

using namespace hybridsens;

constexpr PetscReal kHigh = 0.6, kLow = 0.4, kDrop = 0.05, kCoupling = 0.05, kSigma = 0.2;

// Deterministic spread in [0, 1): fractional part of i·a.
inline PetscReal spread(PetscInt i, PetscReal a) {
  const PetscReal v = i * a;
  return v - std::floor(v);
}

// What both models share: N components with hysteresis guards on x_i (stored at stride·i),
// m parameters shared cyclically (see the top of this file), all equal to 1.
class ChainBase : public HybridModel {
public:
  ChainBase(PetscInt n, PetscInt m, PetscInt stride) : n_(n), m_(m), stride_(stride), period_(std::min(n, m)) {}
  MPI_Comm comm() const override { return PETSC_COMM_SELF; }
  PetscInt localSize() const override { return stride_ * n_; }
  PetscInt components() const { return n_; }
  PetscInt stride() const { return stride_; }
  std::vector<PetscReal> defaultParameters() const override { return std::vector<PetscReal>(m_, 1.0); }
  DiscreteState initialDiscreteState() const override {
    DiscreteState d(n_);
    for (PetscInt i = 0; i < n_; ++i) d[i] = i % 2;
    return d;
  }
  static PetscReal k(PetscInt i) { return 1.0 + 2.0 * spread(i, 0.6180339887498949); }
  // Parameters linked to component i: j = i mod P, i mod P + P, … < m, with P = min(N, m).
  PetscInt firstPar(PetscInt i) const { return i % period_; }
  PetscInt parStride() const { return period_; }
  // Number of parameters linked to component i (1 when m ≤ N).
  PetscInt linked(PetscInt i) const { return (m_ - firstPar(i) + period_ - 1) / period_; }
  // q_i: the mean of the linked parameters; ∂q_i/∂p_j = 1 / linked(i) for each linked j.
  PetscReal q(PetscInt i, const std::vector<PetscReal> &p) const {
    PetscReal s = 0;
    for (PetscInt j = firstPar(i); j < m_; j += period_) s += p[j];
    return s / linked(i);
  }
  static PetscInt component(PetscInt guard) { return guard / 2; }
  static bool isHigh(PetscInt guard) { return guard % 2 == 0; }

  // ∂f/∂p is sparse: row i of component i (its last row) touches only the linked(i)
  // parameters. -bench_dense_jp keeps the library's dense default (for comparison).
  PetscErrorCode createParameterJacobian(PetscInt ncols, Mat *Jp) const override {
    PetscBool dense = PETSC_FALSE;
    PetscFunctionBeginUser;
    *Jp = nullptr;
    PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-bench_dense_jp", &dense, nullptr));
    if (dense) PetscFunctionReturn(0);
    std::vector<PetscInt> nnz(stride_ * n_, 0);
    for (PetscInt i = 0; i < n_; ++i) nnz[stride_ * i + stride_ - 1] = linked(i);
    PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, stride_ * n_, ncols, 0, nnz.data(), Jp));
    PetscFunctionReturn(0);
  }

  PetscInt numGuards() const override { return 2 * n_; }
  GuardInfo guardInfo(PetscInt j) const override {
    return {(isHigh(j) ? "high_" : "low_") + std::to_string(component(j)), isHigh(j) ? Direction::Rising : Direction::Falling};
  }
  bool guardActive(PetscInt j, const DiscreteState &d) const override { return d[component(j)] == (isHigh(j) ? 1 : 0); }

  PetscErrorCode guards(PetscReal, Vec u, const ModeContext &c, PetscScalar *g) const override {
    const PetscScalar *a;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &a));
    for (PetscInt i = 0; i < n_; ++i) {
      const PetscReal qi = q(i, c.p);
      g[2 * i] = a[stride_ * i] - kHigh * qi;
      g[2 * i + 1] = a[stride_ * i] - kLow * qi;
    }
    PetscCall(VecRestoreArrayRead(u, &a));
    PetscFunctionReturn(0);
  }

  PetscErrorCode guardGradient(PetscInt j, PetscReal, Vec, const ModeContext &, Vec gu, PetscScalar *gt,
                               PetscScalar *gp) const override {
    const PetscInt i = component(j);
    PetscScalar *a;
    PetscFunctionBeginUser;
    PetscCall(VecGetArray(gu, &a));
    a[stride_ * i] = 1.0;
    PetscCall(VecRestoreArray(gu, &a));
    *gt = 0;
    const PetscReal level = isHigh(j) ? kHigh : kLow, w = 1.0 / linked(i);
    for (PetscInt jp = firstPar(i); jp < m_; jp += period_) gp[jp] = -level * w;
    PetscFunctionReturn(0);
  }

  PetscErrorCode transition(const EventId &id, PetscReal, Vec, DiscreteState &d) const override {
    const PetscInt i = component(id.index);
    d[i] = 1 - d[i];
    return 0;
  }

protected:
  PetscErrorCode initialDifferential(Vec u0) const {
    PetscScalar *a;
    PetscFunctionBeginUser;
    PetscCall(VecGetArray(u0, &a));
    for (PetscInt i = 0; i < n_; ++i) a[stride_ * i] = 0.41 + 0.18 * spread(i, 0.7548776662466927);
    PetscCall(VecRestoreArray(u0, &a));
    PetscFunctionReturn(0);
  }
  // Row `row` of ∂f/∂p: value·∂q_i/∂p_j in every column j linked to component i — one
  // MatSetValues call per row (PETSc 3.18's dense MatSetValues looks its array up by name on
  // every call, so one call per entry would cost ~0.3 µs each).
  PetscErrorCode setLinked(Mat Jp, PetscInt row, PetscInt i, PetscScalar value) const {
    const PetscScalar v = value / linked(i);
    PetscFunctionBeginUser;
    cols_.clear();
    for (PetscInt j = firstPar(i); j < m_; j += period_) cols_.push_back(j);
    vals_.assign(cols_.size(), v);
    PetscCall(MatSetValues(Jp, 1, &row, (PetscInt)cols_.size(), cols_.data(), vals_.data(), INSERT_VALUES));
    PetscFunctionReturn(0);
  }
  mutable std::vector<PetscInt> cols_;  // scratch of setLinked (serial models)
  mutable std::vector<PetscScalar> vals_;
  PetscInt n_, m_, stride_, period_;
};

// (1) ODE: thermostat chain, gains and guard levels scaled by q_i.
class ThermostatChain : public ChainBase {
public:
  ThermostatChain(PetscInt n, PetscInt m) : ChainBase(n, m, 1) {}

  PetscErrorCode initialState(const ModeContext &, Vec u0) const override { return initialDifferential(u0); }

  PetscErrorCode createJacobian(Mat *J) const override {
    PetscFunctionBeginUser;
    PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, n_, n_, 3, nullptr, J));
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &c, Vec f) const override {
    const PetscScalar *x;
    PetscScalar *fa;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(VecGetArray(f, &fa));
    for (PetscInt i = 0; i < n_; ++i) {
      PetscScalar lap = 0;
      if (i > 0) lap += x[i - 1] - x[i];
      if (i < n_ - 1) lap += x[i + 1] - x[i];
      fa[i] = q(i, c.p) * k(i) * (c.d[i] - x[i]) + kCoupling * lap;
    }
    PetscCall(VecRestoreArray(f, &fa));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhsJacobian(PetscReal, Vec, const ModeContext &c, Mat J) const override {
    PetscFunctionBeginUser;
    for (PetscInt i = 0; i < n_; ++i) {
      PetscInt cols[3], nc = 0;
      PetscScalar vals[3], diag = -q(i, c.p) * k(i);
      if (i > 0) cols[nc] = i - 1, vals[nc++] = kCoupling, diag -= kCoupling;
      if (i < n_ - 1) cols[nc] = i + 1, vals[nc++] = kCoupling, diag -= kCoupling;
      cols[nc] = i, vals[nc++] = diag;
      PetscCall(MatSetValues(J, 1, &i, nc, cols, vals, INSERT_VALUES));
    }
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhsJacobianP(PetscReal, Vec u, const ModeContext &c, Mat Jp) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    for (PetscInt i = 0; i < n_; ++i) PetscCall(setLinked(Jp, i, i, k(i) * (c.d[i] - x[i])));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }

  bool hasReset(const EventId &id) const override { return id.kind == EventId::Guard && isHigh(id.index); }
  PetscErrorCode reset(const EventId &id, PetscReal, Vec uminus, const ModeContext &, Vec uplus) const override {
    PetscFunctionBeginUser;
    PetscCall(VecCopy(uminus, uplus));
    PetscCall(VecSetValue(uplus, component(id.index), -kDrop, ADD_VALUES));
    PetscCall(VecAssemblyBegin(uplus));
    PetscCall(VecAssemblyEnd(uplus));
    PetscFunctionReturn(0);
  }
  // R_u = I, R_p = 0 (left untouched), R_t = 0: said explicitly (the library has no defaults
  // for a declared reset).
  PetscErrorCode resetJacobianAction(const EventId &, PetscReal, Vec, const ModeContext &, Vec v, Vec out) const override {
    return VecCopy(v, out);
  }
  PetscErrorCode resetJacobianTransposeAction(const EventId &, PetscReal, Vec, const ModeContext &, Vec w, Vec out) const override {
    return VecCopy(w, out);
  }
  PetscErrorCode resetJacobianP(const EventId &, PetscReal, Vec, const ModeContext &, Mat) const override { return 0; }
  PetscErrorCode resetTimeDerivative(const EventId &, PetscReal, Vec, const ModeContext &, Vec Rt) const override {
    return VecZeroEntries(Rt);
  }
};

// (2) DAE: heating powers y_i algebraic, coupled along the chain; drives scaled by q_i.
class PowerChainDAE : public ChainBase {
public:
  PowerChainDAE(PetscInt n, PetscInt m) : ChainBase(n, m, 2) {}

  std::vector<PetscInt> algebraicIndices() const override {
    std::vector<PetscInt> idx(n_);
    for (PetscInt i = 0; i < n_; ++i) idx[i] = 2 * i + 1;
    return idx;
  }

  PetscErrorCode initialState(const ModeContext &, Vec u0) const override { return initialDifferential(u0); }  // y0 = 0: re-solved

  PetscErrorCode createJacobian(Mat *J) const override {
    PetscFunctionBeginUser;
    PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, 2 * n_, 2 * n_, 4, nullptr, J));
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &c, Vec f) const override {
    const PetscScalar *a;
    PetscScalar *fa;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &a));
    PetscCall(VecGetArray(f, &fa));
    for (PetscInt i = 0; i < n_; ++i) {
      const PetscScalar x = a[2 * i], y = a[2 * i + 1];
      PetscScalar lap = 0;
      if (i > 0) lap += a[2 * i - 1] - y;
      if (i < n_ - 1) lap += a[2 * i + 3] - y;
      fa[2 * i] = -k(i) * x + y;
      fa[2 * i + 1] = k(i) * (q(i, c.p) * c.d[i] - kSigma * x) + kCoupling * lap - y;
    }
    PetscCall(VecRestoreArray(f, &fa));
    PetscCall(VecRestoreArrayRead(u, &a));
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhsJacobian(PetscReal, Vec, const ModeContext &, Mat J) const override {
    PetscFunctionBeginUser;
    for (PetscInt i = 0; i < n_; ++i) {
      const PetscInt rx = 2 * i, ry = 2 * i + 1;
      const PetscInt cx[2] = {rx, ry};
      const PetscScalar vx[2] = {-k(i), 1.0};
      PetscCall(MatSetValues(J, 1, &rx, 2, cx, vx, INSERT_VALUES));
      PetscInt cols[4], nc = 0;
      PetscScalar vals[4], diag = -1.0;
      cols[nc] = rx, vals[nc++] = -kSigma * k(i);
      if (i > 0) cols[nc] = ry - 2, vals[nc++] = kCoupling, diag -= kCoupling;
      if (i < n_ - 1) cols[nc] = ry + 2, vals[nc++] = kCoupling, diag -= kCoupling;
      cols[nc] = ry, vals[nc++] = diag;
      PetscCall(MatSetValues(J, 1, &ry, nc, cols, vals, INSERT_VALUES));
    }
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhsJacobianP(PetscReal, Vec, const ModeContext &c, Mat Jp) const override {
    PetscFunctionBeginUser;
    for (PetscInt i = 0; i < n_; ++i)
      if (c.d[i]) PetscCall(setLinked(Jp, 2 * i + 1, i, k(i)));
    PetscFunctionReturn(0);
  }
};

// J_0 = Σ_i x_i(T).
class SumAtFinalTime : public CostFunction {
public:
  explicit SumAtFinalTime(const ChainBase &m) : m_(m) {}
  std::string name() const override { return "sum_x(T)"; }
  bool hasTerminal() const override { return true; }
  PetscErrorCode terminal(PetscReal, Vec u, const ModeContext &, PetscScalar *value) const override {
    const PetscScalar *a;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &a));
    *value = 0;
    for (PetscInt i = 0; i < m_.components(); ++i) *value += a[m_.stride() * i];
    PetscCall(VecRestoreArrayRead(u, &a));
    PetscFunctionReturn(0);
  }
  PetscErrorCode terminalGradient(PetscReal, Vec, const ModeContext &, Vec psi_u, PetscScalar *) const override {
    PetscScalar *a;
    PetscFunctionBeginUser;
    PetscCall(VecGetArray(psi_u, &a));
    for (PetscInt i = 0; i < m_.components(); ++i) a[m_.stride() * i] = 1.0;
    PetscCall(VecRestoreArray(psi_u, &a));
    PetscFunctionReturn(0);
  }

private:
  const ChainBase &m_;
};

// J_1 = ∫ Σ_i x_i² dt.
class SquareIntegral : public CostFunction {
public:
  explicit SquareIntegral(const ChainBase &m) : m_(m) {}
  std::string name() const override { return "int_sum_x2"; }
  bool hasIntegrand() const override { return true; }
  PetscErrorCode integrand(PetscReal, Vec u, const ModeContext &, PetscScalar *value) const override {
    const PetscScalar *a;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &a));
    *value = 0;
    for (PetscInt i = 0; i < m_.components(); ++i) *value += a[m_.stride() * i] * a[m_.stride() * i];
    PetscCall(VecRestoreArrayRead(u, &a));
    PetscFunctionReturn(0);
  }
  PetscErrorCode integrandGradient(PetscReal, Vec u, const ModeContext &, Vec r_u, PetscScalar *) const override {
    const PetscScalar *a;
    PetscScalar *g;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &a));
    PetscCall(VecGetArray(r_u, &g));
    for (PetscInt i = 0; i < m_.components(); ++i) g[m_.stride() * i] = 2 * a[m_.stride() * i];
    PetscCall(VecRestoreArray(r_u, &g));
    PetscCall(VecRestoreArrayRead(u, &a));
    PetscFunctionReturn(0);
  }

private:
  const ChainBase &m_;
};

// What a timed solve computes besides the trajectory (and the cost values, always on).
enum class Sens { None, Forward, Adjoint };

// One solver (plain, forward or adjoint) of one model, configured like the examples: defaults
// set on the TS, then the command line (with the model's prefix) overrides them.
struct Run {
  std::unique_ptr<Solver> solver;
  PetscReal dt = 0;  // after options: restored before every solve
  double best = std::numeric_limits<double>::infinity();

  PetscErrorCode setUp(const ChainBase &model, const std::vector<const CostFunction *> &costs, Sens sens, const char *prefix,
                       PetscReal dt0, PetscReal tf) {
    PetscFunctionBeginUser;
    solver = std::make_unique<Solver>(model);
    for (auto *c : costs) solver->addCost(*c);
    solver->setForwardSensitivities(sens == Sens::Forward);
    solver->setAdjoint(sens == Sens::Adjoint);
    if (sens != Sens::None) solver->setInitialStateSensitivities({});  // parameter gradients only
    PetscCall(solver->setFromOptions());                                // creates the TS
    TS ts = solver->ts();
    if (prefix) PetscCall(TSSetOptionsPrefix(ts, prefix));
    PetscCall(TSSetType(ts, TSCN));
    PetscCall(TSSetTimeStep(ts, dt0));
    PetscCall(TSSetMaxTime(ts, tf));
    TSAdapt adapt;
    SNES snes;
    KSP ksp;
    PC pc;
    PetscCall(TSGetAdapt(ts, &adapt));
    PetscCall(TSAdaptSetType(adapt, TSADAPTNONE));
    PetscCall(TSGetSNES(ts, &snes));
    PetscCall(SNESGetKSP(snes, &ksp));
    PetscCall(KSPSetType(ksp, KSPPREONLY));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCLU));
    PetscCall(solver->setFromOptions());  // command line overrides the defaults
    PetscCall(TSGetTimeStep(ts, &dt));
    PetscFunctionReturn(0);
  }

  PetscErrorCode solve(double *seconds) {
    PetscFunctionBeginUser;
    PetscCall(TSSetTimeStep(solver->ts(), dt));
    const auto t0 = std::chrono::steady_clock::now();
    PetscCall(solver->solve());
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    PetscFunctionReturn(0);
  }
};

// Options shared by forward_cost and adjoint_cost (serial benchmarks of the two chain models):
// -reps, -n, -dae_n, -tf, -dae_tf, -ode, -dae, -m m1,m2,...
struct ChainBenchOptions {
  PetscInt reps, n = 40, daeN = 40;
  PetscReal tf = 2.0, daeTf = 2.0;
  PetscBool ode = PETSC_TRUE, dae = PETSC_TRUE;
  std::vector<PetscInt> ms;

  ChainBenchOptions(PetscInt defaultReps, std::vector<PetscInt> defaultMs) : reps(defaultReps), ms(std::move(defaultMs)) {}

  PetscErrorCode read(const char *program) {
    PetscMPIInt size;
    PetscInt mlist[64], nm = 64;
    PetscBool flg;
    PetscFunctionBeginUser;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCheck(size == 1, PETSC_COMM_WORLD, PETSC_ERR_SUP, "%s is a serial benchmark: run it on one rank", program);
    PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-reps", &reps, nullptr));
    PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-n", &n, nullptr));
    PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-dae_n", &daeN, nullptr));
    PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-tf", &tf, nullptr));
    PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-dae_tf", &daeTf, nullptr));
    PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-ode", &ode, nullptr));
    PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-dae", &dae, nullptr));
    PetscCall(PetscOptionsGetIntArray(nullptr, nullptr, "-m", mlist, &nm, &flg));
    if (flg) ms.assign(mlist, mlist + nm);
    for (PetscInt m : ms) PetscCheck(m >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-m values must be >= 1");
    PetscCheck(reps >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-reps must be >= 1");
    PetscFunctionReturn(0);
  }
};

} // namespace hsbench
