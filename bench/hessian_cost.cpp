// hessian_cost — what Hessian-vector products and full Hessians cost, relative to one gradient
// (forward solve + discrete adjoint), as the number of variables n_q grows. A measurement,
// not a test.
//
// Model (event-free: Hessians are refused through state events): a chain of N = 64 logistic
// units with diffusion,
//   x_i' = p_{i mod m} x_i (1 − x_i) + κ (x_{i−1} − 2 x_i + x_{i+1}),  κ = 0.5,
//   x_i(0) = 0.1 + 0.8 i/N,  all p_j = 1 (the trajectory is the same for every m);
// one cost: measurements Σ_i (x_i − 0.5)² at t = 0.1 k (k = 1…10) plus ∫ Σ x_i² dt; T = 1,
// dt = 2e-3 (500 steps), RK4 and Crank–Nicolson (LU). Variables: the m parameters (n_q = m).
//
// Timed for each m (minimum over -reps rounds, round-robin, after a warm-up):
//   solve      plain forward solve (objective only)
//   gradient   forward solve + the library's adjoint sweep            ("one gradient")
//   HVP        one Hessian-vector product from the stored trajectory (tangent + second-order sweep)
//   H foa      full Hessian, forward-over-adjoint: n_q directions in one pair of sweeps
//   H hybrid   full Hessian, hybrid formula: one adjoint + n_q tangents + quadratic forms
//   H by HVPs  n_q separate products (only for n_q ≤ -hvp_loop_max)
// and printed: HVP/gradient (goal ≤ 3; the trajectory is already there, as in a Newton step
// after the gradient) and (solve + HVP)/gradient (an HVP from scratch), H/gradient per method,
// and the counts of scalar integrations of [Nandi2018]'s Table 2 restricted to parameters
// (n states, p = n_q parameters): their adjoint method 2n + p + 2np + p², their hybrid
// 2n + np + p², against ours: forward-over-adjoint 2n + 2n n_q (state, adjoint, n_q tangents,
// n_q second-order adjoints; parameter parts are sums, not integrations) and hybrid
// 2n + n n_q (+ n_q² quadrature scalars). Both Hessians must agree (printed).
//
// Options: -reps R (default 3), -m 1,2,4,... (default 1,2,4,8,16,32,64), -n N (default 64),
// -hvp_loop_max M (default 8), -rk 0 / -cn 0 to skip an integrator.
// Run:  build/bench/hessian_cost [-reps 3] [-m 1,8,64]
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

constexpr PetscReal kKappa = 0.5;

class LogisticChain : public HybridModel, public SecondOrderModel {
public:
  LogisticChain(PetscInt n, PetscInt m) : n_(n), m_(m) { MPI_Comm_rank(PETSC_COMM_WORLD, &rank_); }
  PetscInt localSize() const override { return rank_ == 0 ? n_ : 0; }
  std::vector<PetscReal> defaultParameters() const override { return std::vector<PetscReal>(m_, 1.0); }
  PetscErrorCode createJacobian(Mat *J) const override {
    const PetscInt nl = localSize();
    PetscFunctionBeginUser;
    PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, nl, nl, n_, n_, 3, nullptr, 0, nullptr, J));
    PetscFunctionReturn(0);
  }
  PetscErrorCode initialState(const ModeContext &, Vec u0) const override {
    PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArray(u0, &x));
    for (PetscInt i = 0; i < localSize(); ++i) x[i] = 0.1 + 0.8 * i / (PetscReal)n_;
    PetscCall(VecRestoreArray(u0, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &c, Vec f) const override {
    const PetscScalar *x;
    PetscScalar *y;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(VecGetArray(f, &y));
    for (PetscInt i = 0; i < localSize(); ++i) {
      const PetscReal left = i > 0 ? x[i - 1] - x[i] : 0, right = i < n_ - 1 ? x[i + 1] - x[i] : 0;
      y[i] = c.p[i % m_] * x[i] * (1 - x[i]) + kKappa * (left + right);
    }
    PetscCall(VecRestoreArray(f, &y));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobian(PetscReal, Vec u, const ModeContext &c, Mat J) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    for (PetscInt i = 0; i < localSize(); ++i) {
      const PetscReal nb = (i > 0) + (i < n_ - 1);
      PetscCall(MatSetValue(J, i, i, c.p[i % m_] * (1 - 2 * x[i]) - kKappa * nb, INSERT_VALUES));
      if (i > 0) PetscCall(MatSetValue(J, i, i - 1, kKappa, INSERT_VALUES));
      if (i < n_ - 1) PetscCall(MatSetValue(J, i, i + 1, kKappa, INSERT_VALUES));
    }
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobianP(PetscReal, Vec u, const ModeContext &, Mat Jp) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    for (PetscInt i = 0; i < localSize(); ++i) PetscCall(MatSetValue(Jp, i, i % m_, x[i] * (1 - x[i]), INSERT_VALUES));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  // h = Σ w_i p_j x_i (1 − x_i) (+ linear terms): h_{x_i x_i} = −2 w_i p_j, h_{x_i p_j} = w_i (1 − 2 x_i).
  // The Hessian driver passes the full direction (0, v, vp) and wants (hu, hp) (hessian.hpp).
  PetscErrorCode rhsHessianProduct(PetscReal, Vec u, const ModeContext &c, Vec w, const SecondOrderDirection &dir,
                                   const SecondOrderOutput &out) const override {
    const PetscScalar *x, *W, *V;
    PetscScalar *h;
    PetscFunctionBeginUser;
    PetscCheck(dir.du && dir.dp && out.u && out.p, PETSC_COMM_SELF, PETSC_ERR_SUP, "bench model: full direction and outputs only");
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(VecGetArrayRead(w, &W));
    PetscCall(VecGetArrayRead(dir.du, &V));
    PetscCall(VecGetArray(out.u, &h));
    for (PetscInt j = 0; j < m_; ++j) out.p[j] = 0;
    for (PetscInt i = 0; i < localSize(); ++i) {
      const PetscInt j = i % m_;
      const PetscReal mixed = W[i] * (1 - 2 * x[i]);
      h[i] = -2 * W[i] * c.p[j] * V[i] + mixed * dir.dp[j];
      out.p[j] += mixed * V[i];
    }
    PetscCall(VecRestoreArray(out.u, &h));
    PetscCall(VecRestoreArrayRead(dir.du, &V));
    PetscCall(VecRestoreArrayRead(w, &W));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode initialStateHessianProduct(const ModeContext &, Vec, const PetscScalar *, PetscScalar *outP) const override {
    for (PetscInt j = 0; j < m_; ++j) outP[j] = 0;  // u0 does not depend on p
    return 0;
  }

private:
  PetscInt n_, m_;
  PetscMPIInt rank_ = 0;
};

// Σ_i (x_i − 0.5)² at t = 0.1 k, plus ∫ Σ x_i² dt.
class Fit : public CostFunction, public SecondOrderCost {
public:
  std::string name() const override { return "fit"; }
  std::vector<PetscReal> measurementTimes() const override {
    std::vector<PetscReal> t;
    for (int k = 1; k <= 10; ++k) t.push_back(0.1 * k);
    return t;
  }
  bool hasIntegrand() const override { return true; }
  PetscErrorCode measurement(PetscInt, PetscReal, Vec u, const ModeContext &, PetscScalar *v) const override { return sum(u, 0.5, v); }
  PetscErrorCode measurementGradient(PetscInt, PetscReal, Vec u, const ModeContext &, Vec g, PetscScalar *) const override {
    PetscFunctionBeginUser;
    PetscCall(VecCopy(u, g));
    PetscCall(VecShift(g, -0.5));
    PetscCall(VecScale(g, 2.0));
    PetscFunctionReturn(0);
  }
  PetscErrorCode measurementHessianProduct(PetscInt, PetscReal, Vec, const ModeContext &c, const SecondOrderDirection &dir,
                                           const SecondOrderOutput &out) const override {
    return twice(c, dir, out);
  }
  PetscErrorCode integrand(PetscReal, Vec u, const ModeContext &, PetscScalar *v) const override { return sum(u, 0.0, v); }
  PetscErrorCode integrandGradient(PetscReal, Vec u, const ModeContext &, Vec g, PetscScalar *) const override {
    return VecAXPBY(g, 2.0, 0.0, u);
  }
  PetscErrorCode integrandHessianProduct(PetscReal, Vec, const ModeContext &c, const SecondOrderDirection &dir,
                                         const SecondOrderOutput &out) const override {
    return twice(c, dir, out);
  }

private:
  // H·δz = (2 δx, 0) for both parts (no parameter, no t).
  static PetscErrorCode twice(const ModeContext &c, const SecondOrderDirection &dir, const SecondOrderOutput &out) {
    PetscFunctionBeginUser;
    PetscCheck(dir.du && out.u, PETSC_COMM_SELF, PETSC_ERR_SUP, "bench cost: full direction and outputs only");
    PetscCall(VecAXPBY(out.u, 2.0, 0.0, dir.du));
    if (out.p)
      for (size_t j = 0; j < c.p.size(); ++j) out.p[j] = 0;
    PetscFunctionReturn(0);
  }
  static PetscErrorCode sum(Vec u, PetscReal shift, PetscScalar *v) {
    const PetscScalar *x;
    PetscInt n;
    PetscFunctionBeginUser;
    PetscCall(VecGetLocalSize(u, &n));
    PetscCall(VecGetArrayRead(u, &x));
    *v = 0;
    for (PetscInt i = 0; i < n; ++i) *v += (x[i] - shift) * (x[i] - shift);
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
};

using Clock = std::chrono::steady_clock;
using Tensor = std::vector<std::vector<std::vector<PetscScalar>>>;

template <class F> PetscErrorCode timeIt(F &&f, double &best) {
  PetscFunctionBeginUser;
  const auto t0 = Clock::now();
  PetscCall(f());
  best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  PetscFunctionReturn(0);
}

struct Row {
  PetscInt m;
  double solve = 1e300, grad = 1e300, hvp = 1e300, foa = 1e300, hybrid = 1e300, loop = 1e300;
  PetscReal foaVsHybrid = 0;
};

PetscErrorCode runIntegrator(const char *title, const char *tsType, PetscInt n, const std::vector<PetscInt> &ms, PetscInt reps,
                             PetscInt loopMax) {
  struct Case {
    std::unique_ptr<LogisticChain> model;
    std::unique_ptr<Fit> cost;
    std::unique_ptr<Solver> solver;
    Row row;
  };
  std::vector<Case> cases;
  PetscFunctionBeginUser;
  for (PetscInt m : ms) {
    Case c;
    c.model = std::make_unique<LogisticChain>(n, m);
    c.cost = std::make_unique<Fit>();
    c.solver = std::make_unique<Solver>(*c.model);
    c.solver->addCost(*c.cost);
    PetscCall(c.solver->setFromOptions());
    PetscCall(TSSetType(c.solver->ts(), tsType));
    if (std::string(tsType) == TSRK) PetscCall(TSRKSetType(c.solver->ts(), TSRK4));
    PetscCall(TSSetTimeStep(c.solver->ts(), 2e-3));
    PetscCall(TSSetMaxTime(c.solver->ts(), 1.0));
    c.solver->setInitialStateSensitivities({});
    c.row.m = m;
    cases.push_back(std::move(c));
  }
  for (PetscInt r = 0; r <= reps; ++r) {  // round 0 is the warm-up
    for (auto &c : cases) {
      Solver &s = *c.solver;
      Row tmp = c.row;
      const PetscInt m = c.row.m;
      std::vector<PetscScalar> v(m);
      for (PetscInt j = 0; j < m; ++j) v[j] = std::cos(1.0 + j);
      Tensor Hv, Hf, Hh;
      s.setAdjoint(false);
      PetscCall(timeIt([&] { return s.solve(); }, tmp.solve));
      s.setAdjoint(true);
      PetscCall(timeIt([&] { return s.solve(); }, tmp.grad));
      PetscCall(timeIt([&] { return s.hessianVectorProducts({v}, Hv); }, tmp.hvp));
      PetscCall(timeIt([&] { return s.computeHessian(HessianMethod::ForwardOverAdjoint, Hf); }, tmp.foa));
      PetscCall(timeIt([&] { return s.computeHessian(HessianMethod::Hybrid, Hh); }, tmp.hybrid));
      if (m <= loopMax)
        PetscCall(timeIt(
            [&]() -> PetscErrorCode {
              PetscFunctionBeginUser;
              for (PetscInt j = 0; j < m; ++j) {
                std::vector<PetscScalar> e(m, 0.0);
                e[j] = 1;
                PetscCall(s.hessianVectorProducts({e}, Hv));
              }
              PetscFunctionReturn(0);
            },
            tmp.loop));
      PetscReal scale = 0, d = 0;
      for (PetscInt i = 0; i < m; ++i)
        for (PetscInt j = 0; j < m; ++j) scale = std::max(scale, (PetscReal)std::fabs(Hf[0][i][j]));
      for (PetscInt i = 0; i < m; ++i)
        for (PetscInt j = 0; j < m; ++j) d = std::max(d, (PetscReal)std::fabs(Hf[0][i][j] - Hh[0][i][j]) / scale);
      tmp.foaVsHybrid = d;
      if (r > 0) c.row = tmp;  // keep the minima of the timed rounds only
      else c.row.foaVsHybrid = d;
    }
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n%s (n = %" PetscInt_FMT " states, 500 steps; times in ms, minimum of %" PetscInt_FMT " rounds)\n", title, n,
                        reps));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%4s %8s %9s %8s %9s %9s %10s %7s %11s %9s %11s %9s %9s | %9s %9s %9s %9s\n", "n_q", "solve",
                        "gradient", "HVP", "HVP/grad", "(s+HVP)/g", "H foa", "/grad", "H hybrid", "/grad", "n_q HVPs", "/grad", "foa-hyb",
                        "S01 adj", "S01 hyb", "our foa", "our hyb"));
  for (auto &c : cases) {
    const Row &w = c.row;
    const double g = w.grad, p = (double)w.m, nn = (double)n;
    char loop[32] = "-", loopRatio[32] = "-";
    if (w.loop < 1e300) snprintf(loop, sizeof(loop), "%.1f", 1e3 * w.loop), snprintf(loopRatio, sizeof(loopRatio), "%.2f", w.loop / g);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%4d %8.1f %9.1f %8.1f %9.2f %9.2f %10.1f %7.2f %11.1f %9.2f %11s %9s %9.1e | %9.0f %9.0f %9.0f %9.0f\n",
                          (int)w.m, 1e3 * w.solve, 1e3 * g, 1e3 * w.hvp, w.hvp / g, (w.solve + w.hvp) / g, 1e3 * w.foa, w.foa / g,
                          1e3 * w.hybrid, w.hybrid / g, loop, loopRatio, (double)w.foaVsHybrid, 2 * nn + p + 2 * nn * p + p * p,
                          2 * nn + nn * p + p * p, 2 * nn + 2 * nn * p, 2 * nn + nn * p));
  }
  PetscFunctionReturn(0);
}

} // namespace

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, "Cost of Hessian-vector products and Hessians (hybridsens bench).\n"));
  {
    PetscInt reps = 3, n = 64, loopMax = 8, mlist[32], nm = 32;
    PetscBool flg, rk = PETSC_TRUE, cn = PETSC_TRUE;
    PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-reps", &reps, nullptr));
    PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-n", &n, nullptr));
    PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-hvp_loop_max", &loopMax, nullptr));
    PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-rk", &rk, nullptr));
    PetscCall(PetscOptionsGetBool(nullptr, nullptr, "-cn", &cn, nullptr));
    PetscCall(PetscOptionsGetIntArray(nullptr, nullptr, "-m", mlist, &nm, &flg));
    std::vector<PetscInt> ms = {1, 2, 4, 8, 16, 32, 64};
    if (flg) ms.assign(mlist, mlist + nm);
    for (PetscInt m : ms) PetscCheck(m >= 1 && m <= n, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-m values must be in [1, n]");
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "hessian_cost: logistic chain, cost = 10 measurements + integral. Columns S01 adj / S01 hyb: Nandi & Singh 2018, Table 2\n"
                          "scalar-integration counts (parameters only: 2n+p+2np+p^2, 2n+np+p^2); our foa / our hyb: 2n+2n n_q, 2n+n n_q.\n"));
    if (rk) PetscCall(runIntegrator("RK4", TSRK, n, ms, reps, loopMax));
    if (cn) PetscCall(runIntegrator("Crank-Nicolson", TSCN, n, ms, reps, loopMax));
  }
  PetscCall(PetscFinalize());
  return 0;
}
