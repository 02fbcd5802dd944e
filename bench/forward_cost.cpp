// forward_cost — what forward (tangent-linear) sensitivities cost relative to a plain solve, as
// a function of the number of parameters m. A measurement, not a test.
//
// Two hybrid models with a few hundred events each, both serial (PETSC_COMM_SELF):
//
// (1) "thermostats": a chain of N weakly coupled thermostats (as tests/test_distributed.cpp),
//       x_i' = q_i k_i (d_i - x_i) + κ (x_{i-1} - 2 x_i + x_{i+1}),   k_i ∈ [1, 3), κ = 0.05,
//     guards high_i = x_i - 0.6 q_i (rising, d_i = 1 → 0, reset x_i -= 0.05) and
//            low_i  = x_i - 0.4 q_i (falling, d_i = 0 → 1),
//     where q_i = p_{i mod m}: the m parameters are shared cyclically by the components and
//     enter the dynamics (gains) and the guards (levels). ODE, Crank–Nicolson by default.
// (2) "dae": a chain of N thermostats whose heating powers y_i are algebraic and coupled,
//       x_i' = -k_i x_i + y_i,
//       0    = k_i (q_i d_i - σ x_i) + κ (y_{i-1} - 2 y_i + y_{i+1}) - y_i   (σ = 0.2),
//     state (x_0, y_0, x_1, y_1, …), same hysteresis guards on x_i (no reset; y jumps at every
//     event and is re-solved consistently). Semi-explicit index-1 DAE, Crank–Nicolson.
//
// All p_j = 1, so the trajectory (steps, events, location steps) is the same for every m and
// only the number of sensitivity columns changes; and Σ_j dJ/dp_j = dJ/dq (all gains and levels
// scaled together) must be the same for every m — printed as a consistency check, together
// with a central finite difference of the terminal cost at m = 1.
//
// Costs: J_0 = Σ_i x_i(T) and J_1 = ∫ Σ_i x_i² dt. For each m the program times solve() of a
// plain Solver and of one with setForwardSensitivities(true), setInitialStateSensitivities({})
// (parameter columns only), takes the minimum over -reps repetitions (round-robin over all
// cases, after one untimed warm-up solve each), and prints ratio = forward / plain per m and a
// least-squares fit ratio ≈ a + b·m.
//
// Options:
//   -reps R          timed repetitions per case (default 9)
//   -m 1,2,4,...     parameter counts (default 1,2,4,8,16,32)
//   -n N             thermostats in model (1) (default 40);   -tf T  horizon (default 2)
//   -dae_n N         components in model (2) (default 40);    -dae_tf T (default 2)
//   -ode 0 / -dae 0  skip a model
//   -ts_*            PETSc TS options of model (1), e.g. -ts_type rk -ts_rk_type 4 -ts_dt 1e-3
//                    (defaults: cn, dt 2e-3, -ts_adapt_type none, -ksp_type preonly -pc_type lu)
//   -dae_ts_*, -dae_ksp_*, -dae_pc_*   the same for model (2) (theta methods only)
//   -hs_*            engine options (both models); do not pass -hs_forward / -hs_forward_u0.
// Run:  build/bench/forward_cost [-reps 7] [-ts_type rk -ts_rk_type 4]
#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using namespace hybridsens;

namespace {

constexpr PetscReal kHigh = 0.6, kLow = 0.4, kDrop = 0.05, kCoupling = 0.05, kSigma = 0.2;

// Deterministic spread in [0, 1): fractional part of i·a.
PetscReal spread(PetscInt i, PetscReal a) {
  const PetscReal v = i * a;
  return v - std::floor(v);
}

// What both models share: N components with hysteresis guards on x_i (stored at stride·i),
// m parameters shared cyclically, all equal to 1.
class ChainBase : public HybridModel {
public:
  ChainBase(PetscInt n, PetscInt m, PetscInt stride) : n_(n), m_(m), stride_(stride) {}
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
  PetscInt par(PetscInt i) const { return i % m_; }
  static PetscInt component(PetscInt guard) { return guard / 2; }
  static bool isHigh(PetscInt guard) { return guard % 2 == 0; }

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
      g[2 * i] = a[stride_ * i] - kHigh * c.p[par(i)];
      g[2 * i + 1] = a[stride_ * i] - kLow * c.p[par(i)];
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
    gp[par(i)] = isHigh(j) ? -kHigh : -kLow;
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
  PetscInt n_, m_, stride_;
};

// (1) ODE: thermostat chain, gains and guard levels scaled by q_i = p_{i mod m}.
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
      fa[i] = c.p[par(i)] * k(i) * (c.d[i] - x[i]) + kCoupling * lap;
    }
    PetscCall(VecRestoreArray(f, &fa));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhsJacobian(PetscReal, Vec, const ModeContext &c, Mat J) const override {
    PetscFunctionBeginUser;
    for (PetscInt i = 0; i < n_; ++i) {
      PetscInt cols[3], nc = 0;
      PetscScalar vals[3], diag = -c.p[par(i)] * k(i);
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
    for (PetscInt i = 0; i < n_; ++i) PetscCall(MatSetValue(Jp, i, par(i), k(i) * (c.d[i] - x[i]), INSERT_VALUES));
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
  // R_u = I, R_p = 0, R_t = 0: the library's defaults.
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
      fa[2 * i + 1] = k(i) * (c.p[par(i)] * c.d[i] - kSigma * x) + kCoupling * lap - y;
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
      if (c.d[i]) PetscCall(MatSetValue(Jp, 2 * i + 1, par(i), k(i), INSERT_VALUES));
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

// One solver (plain or forward) of one model, configured like the examples: defaults set on
// the TS, then the command line (with the model's prefix) overrides them.
struct Run {
  std::unique_ptr<Solver> solver;
  PetscReal dt = 0;  // after options: restored before every solve
  double best = std::numeric_limits<double>::infinity();

  PetscErrorCode setUp(const ChainBase &model, const std::vector<const CostFunction *> &costs, bool forward, const char *prefix,
                       PetscReal dt0, PetscReal tf) {
    PetscFunctionBeginUser;
    solver = std::make_unique<Solver>(model);
    for (auto *c : costs) solver->addCost(*c);
    solver->setForwardSensitivities(forward);
    if (forward) solver->setInitialStateSensitivities({});  // parameter columns only
    PetscCall(solver->setFromOptions());                     // creates the TS
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

struct Case {
  PetscInt m;
  std::unique_ptr<ChainBase> model;
  std::unique_ptr<SumAtFinalTime> terminal;
  std::unique_ptr<SquareIntegral> integral;
  Run plain, fwd;
  SolveStats stats;
  size_t events = 0;
  std::vector<PetscScalar> gradSum;  // Σ_j dJ_k/dp_j
};

struct Bench {
  std::string title;
  const char *prefix;
  PetscReal tf;
  std::vector<Case> cases;
};

PetscErrorCode setUpBench(Bench &b, bool dae, PetscInt n, const std::vector<PetscInt> &ms) {
  PetscFunctionBeginUser;
  b.cases.resize(ms.size());
  for (size_t c = 0; c < ms.size(); ++c) {
    Case &k = b.cases[c];
    k.m = ms[c];
    if (dae) k.model = std::make_unique<PowerChainDAE>(n, k.m);
    else k.model = std::make_unique<ThermostatChain>(n, k.m);
    k.terminal = std::make_unique<SumAtFinalTime>(*k.model);
    k.integral = std::make_unique<SquareIntegral>(*k.model);
    const std::vector<const CostFunction *> costs = {k.terminal.get(), k.integral.get()};
    PetscCall(k.plain.setUp(*k.model, costs, false, b.prefix, 2e-3, b.tf));
    PetscCall(k.fwd.setUp(*k.model, costs, true, b.prefix, 2e-3, b.tf));
  }
  PetscFunctionReturn(0);
}

// One round over all cases: plain then forward solve of each m. timed = false: warm-up.
PetscErrorCode round(Bench &b, bool timed) {
  PetscFunctionBeginUser;
  for (Case &k : b.cases) {
    double s = 0;
    PetscCall(k.plain.solve(&s));
    if (timed) k.plain.best = std::min(k.plain.best, s);
    k.stats = k.plain.solver->stats();
    k.events = k.plain.solver->events().size();
    PetscCall(k.fwd.solve(&s));
    if (timed) k.fwd.best = std::min(k.fwd.best, s);
    const auto &g = k.fwd.solver->forwardGradientP();
    k.gradSum.assign(g.size(), 0.0);
    for (size_t c = 0; c < g.size(); ++c)
      for (PetscScalar v : g[c]) k.gradSum[c] += v;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode terminalValue(Solver &s, const ChainBase &model, PetscScalar *value) {
  const PetscScalar *a;
  PetscFunctionBeginUser;
  PetscCall(VecGetArrayRead(s.finalState(), &a));
  *value = 0;
  for (PetscInt i = 0; i < model.components(); ++i) *value += a[model.stride() * i];
  PetscCall(VecRestoreArrayRead(s.finalState(), &a));
  PetscFunctionReturn(0);
}

PetscErrorCode report(Bench &b) {
  PetscFunctionBeginUser;
  const Case &k0 = b.cases.front();
  TS ts = k0.plain.solver->ts();
  TSType type;
  PetscCall(TSGetType(ts, &type));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n== %s: n = %" PetscInt_FMT " unknowns, ts_type %s, dt %g, T %g: %zu events, %" PetscInt_FMT
                        " steps, %" PetscInt_FMT " location steps (same for every m: %s)\n",
                        b.title.c_str(), k0.model->localSize(), type, (double)k0.plain.dt, (double)b.tf, k0.events, k0.stats.steps,
                        k0.stats.locationSteps, "checked below"));
  bool same = true;
  PetscReal maxDev = 0;
  for (const Case &k : b.cases) {
    same = same && k.events == k0.events && k.stats.steps == k0.stats.steps && k.stats.locationSteps == k0.stats.locationSteps;
    for (size_t c = 0; c < k.gradSum.size(); ++c)
      maxDev = std::max(maxDev, (PetscReal)(std::abs(k.gradSum[c] - k0.gradSum[c]) / std::max(1e-300, (double)std::abs(k0.gradSum[c]))));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "   %4s %11s %13s %7s %18s %14s %14s\n", "m", "plain [ms]", "forward [ms]", "ratio",
                        "(fwd-plain)/m [ms]", "sum_j dJ0/dpj", "sum_j dJ1/dpj"));
  std::vector<double> xs, ys;
  for (const Case &k : b.cases) {
    const double ratio = k.fwd.best / k.plain.best;
    xs.push_back((double)k.m);
    ys.push_back(ratio);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "   %4" PetscInt_FMT " %11.2f %13.2f %7.3f %18.3f %14.8g %14.8g\n", k.m, 1e3 * k.plain.best,
                          1e3 * k.fwd.best, ratio, 1e3 * (k.fwd.best - k.plain.best) / k.m, (double)k.gradSum[0], (double)k.gradSum[1]));
  }
  // Least squares ratio ≈ a + b m.
  const double nn = (double)xs.size();
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < xs.size(); ++i) sx += xs[i], sy += ys[i], sxx += xs[i] * xs[i], sxy += xs[i] * ys[i];
  const double den = nn * sxx - sx * sx;
  const double slope = den != 0 ? (nn * sxy - sx * sy) / den : 0, icpt = (sy - slope * sx) / nn;
  double maxRes = 0;
  for (size_t i = 0; i < xs.size(); ++i) maxRes = std::max(maxRes, std::abs(ys[i] - (icpt + slope * xs[i])));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "   fit: ratio ≈ %.3f + %.4f·m   (least squares over %zu points, max |residual| %.3f)\n", icpt,
                        slope, xs.size(), maxRes));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "   trajectory identical for every m: %s; sum_j dJ/dp_j across m: max rel. deviation %.2e\n",
                        same ? "yes" : "NO", (double)maxDev));

  // Central finite difference of J_0 in the common scale q (all p_j together), plain solver of
  // the first case. CN's event-time term is O(h²) off the discrete derivative (README).
  Case &k = b.cases.front();
  const PetscReal eps = 1e-6;
  PetscScalar jp, jm;
  std::vector<PetscReal> p(k.m, 1.0 + eps);
  PetscCall(k.plain.solver->setParameters(p));
  double s = 0;
  PetscCall(k.plain.solve(&s));
  PetscCall(terminalValue(*k.plain.solver, *k.model, &jp));
  p.assign(k.m, 1.0 - eps);
  PetscCall(k.plain.solver->setParameters(p));
  PetscCall(k.plain.solve(&s));
  PetscCall(terminalValue(*k.plain.solver, *k.model, &jm));
  p.assign(k.m, 1.0);
  PetscCall(k.plain.solver->setParameters(p));
  const double fd = (double)((jp - jm) / (2 * eps));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "   check: dJ0/dq forward %.8g, central FD (eps %g) %.8g, rel. diff %.1e\n", (double)k.gradSum[0],
                        (double)eps, fd, std::abs(fd - (double)k.gradSum[0]) / std::abs(fd)));
  PetscFunctionReturn(0);
}

} // namespace

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, "Cost of forward sensitivities vs. number of parameters.\n"));
  {
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCheck(size == 1, PETSC_COMM_WORLD, PETSC_ERR_SUP, "forward_cost is a serial benchmark: run it on one rank");
    PetscInt reps = 9, n = 40, daeN = 40, mlist[64] = {1, 2, 4, 8, 16, 32}, nm = 64;
    PetscReal tf = 2.0, daeTf = 2.0;
    PetscBool ode = PETSC_TRUE, dae = PETSC_TRUE, flg;
    PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-reps", &reps, nullptr));
    PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-n", &n, nullptr));
    PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-dae_n", &daeN, nullptr));
    PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-tf", &tf, nullptr));
    PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-dae_tf", &daeTf, nullptr));
    PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-ode", &ode, nullptr));
    PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-dae", &dae, nullptr));
    PetscCall(PetscOptionsGetIntArray(nullptr, nullptr, "-m", mlist, &nm, &flg));
    if (!flg) nm = 6;
    std::vector<PetscInt> ms(mlist, mlist + nm);
    for (PetscInt m : ms) PetscCheck(m >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-m values must be >= 1");
    PetscCheck(reps >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-reps must be >= 1");

    std::vector<Bench> benches;
    if (ode) benches.push_back({"thermostats (ODE), N = " + std::to_string(n), nullptr, tf, {}});
    if (dae) benches.push_back({"power chain (DAE), N = " + std::to_string(daeN), "dae_", daeTf, {}});
    for (Bench &b : benches) PetscCall(setUpBench(b, b.prefix != nullptr, b.prefix ? daeN : n, ms));

    const auto wall0 = std::chrono::steady_clock::now();
    for (Bench &b : benches) PetscCall(round(b, false));
    for (PetscInt r = 0; r < reps; ++r)
      for (Bench &b : benches) PetscCall(round(b, true));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "forward_cost: wall time / (plain solve time), minimum of %" PetscInt_FMT
                          " repetitions per case (round-robin, after one warm-up round)\n", reps));
    for (Bench &b : benches) PetscCall(report(b));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\ntotal measurement time %.1f s\n",
                          std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count()));
  }
  PetscCall(PetscFinalize());
  return 0;
}
