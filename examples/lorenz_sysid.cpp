// lorenz_sysid — Lorenz-63 system identification with exact Hessians (docs/validation.md,
// [Nandi2018] §8.1), solved with PETSc TAO through hybridsens::TaoProblem.
//
// Model:  ẋ1 = -p1 (x1 - x2),   ẋ2 = x1 (p2 - x3) - x2,   ẋ3 = x1 x2 - p3 x3,
//         x(0) = (20, p4, p5);   unknowns q = (p1, p2, p3, p4 = x2(0), p5 = x3(0)).
// Data:   y(t_i) = x(t_i; q*), t_i = 0.01 i, i = 0…100, from the truth q* = (10, 60, 8/3, 25, 30),
//         computed with the same integrator (synthetic and noise-free, so J(q*) = 0 exactly).
// Cost:   J(q) = Σ_i Σ_j (y_j(t_i) − x_j(t_i; q))² — a measurement cost: λ jumps by 2(x − y) and
//         the second-order adjoint by 2 δx at every t_i.
// At q* every residual vanishes, so ∇²J(q*) = 2 Σ_i S_iᵀ S_i with S_i = dx(t_i)/dq exactly
// (-check_truth compares the Hessian with 2 Σ SᵀS from forward sensitivities).
//
// Second derivatives (all the Hessian needs besides the first-order callbacks; the interface is
// hybridsens/second_order.hpp):
//   w·f = -w1 p1 (x1 − x2) + w2 (x1 (p2 − x3) − x2) + w3 (x1 x2 − p3 x3) is bilinear in (x, p):
//   (w·f)_xx v = (w3 v2 − w2 v3, w3 v1, −w2 v1),   (w·f)_xp vp = (−w1 vp1 + w2 vp2, w1 vp1, −w3 vp3),
//   (w·f)_px v = (w1 (v2 − v1), w2 v1, −w3 v3),    (w·f)_pp = 0;   x(0) is affine in q;   g_xx = 2 I.
//
// Three fits from the guess q0 = (20, 75, 10, 10, 15) of [Nandi2018], each with its TAO prefix:
//   newton_  TAOBNTR (trust-region Newton) with the exact Hessian (second-order adjoint sweeps)
//   blmvm_   TAOBLMVM (quasi-Newton) with the adjoint gradient
//   fd_      TAOBLMVM with TAO's finite-difference gradient of the objective (-fd_tao_fd_delta)
// and a table: iterations, J, |∇J|, wall time, forward solves, relative error of q.
//
// Run:
//   build/examples/lorenz_sysid                                   # the three fits and the table
//   build/examples/lorenz_sysid -fit newton -newton_tao_monitor
//   build/examples/lorenz_sysid -fit newton -hs_tao_hessian matrix_free   # Krylov Newton, Hessian-vector products
//   build/examples/lorenz_sysid -check_truth                      # ∇²J(q*) vs 2 Σ SᵀS
//   build/examples/lorenz_sysid -fit none -hs_hessian -hs_adjoint -hs_summary s.json   # derivatives at q0
//   build/examples/lorenz_sysid -fit none -hs_check_hessian      # Hessian vs FD of adjoint gradients at q0
// -fit takes all (default), none, or a comma-separated list (newton,blmvm; an unknown name is
// refused); -<fit>_tao_type chooses another TAO method (one that an objective, its gradient
// and, for newton, its Hessian can feed: hybridsens::checkTaoType names them). Defaults: RK4,
// dt = 1e-3 (-ts_type, -ts_dt apply). Prints the table; -fit_summary FILE writes the fits as JSON.
#include <hybridsens/hybridsens.hpp>

#include <petsctao.h>
#include <petscts.h>

#include "example_options.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using namespace hybridsens;

static int rank0() {
  PetscMPIInt r;
  MPI_Comm_rank(PETSC_COMM_WORLD, &r);
  return r == 0;
}

// The whole 3-component state lives on rank 0 (other ranks own nothing).
class Lorenz : public HybridModel, public SecondOrderModel {
public:
  PetscInt localSize() const override { return rank0() ? 3 : 0; }
  std::vector<PetscReal> defaultParameters() const override { return {10.0, 60.0, 8.0 / 3.0, 25.0, 30.0}; }
  std::vector<std::string> parameterNames() const override { return {"p1", "p2", "p3", "x2(0)", "x3(0)"}; }
  PetscErrorCode initialState(const ModeContext &c, Vec u0) const override {
    PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArray(u0, &x));
    if (rank0()) x[0] = 20.0, x[1] = c.p[3], x[2] = c.p[4];
    PetscCall(VecRestoreArray(u0, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode initialStateJacobianP(const ModeContext &, Mat du0dp) const override {
    PetscFunctionBeginUser;
    if (rank0()) {
      PetscCall(MatSetValue(du0dp, 1, 3, 1.0, INSERT_VALUES));
      PetscCall(MatSetValue(du0dp, 2, 4, 1.0, INSERT_VALUES));
    }
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &c, Vec f) const override {
    const PetscScalar *x;
    PetscScalar *y;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(VecGetArray(f, &y));
    if (rank0()) {
      y[0] = -c.p[0] * (x[0] - x[1]);
      y[1] = x[0] * (c.p[1] - x[2]) - x[1];
      y[2] = x[0] * x[1] - c.p[2] * x[2];
    }
    PetscCall(VecRestoreArray(f, &y));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobian(PetscReal, Vec u, const ModeContext &c, Mat J) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    if (rank0()) {
      const PetscInt idx[3] = {0, 1, 2};
      const PetscScalar a[9] = {-c.p[0], c.p[0], 0, c.p[1] - x[2], -1, -x[0], x[1], x[0], -c.p[2]};
      PetscCall(MatSetValues(J, 3, idx, 3, idx, a, INSERT_VALUES));
    }
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobianP(PetscReal, Vec u, const ModeContext &, Mat Jp) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    if (rank0()) {
      PetscCall(MatSetValue(Jp, 0, 0, -(x[0] - x[1]), INSERT_VALUES));
      PetscCall(MatSetValue(Jp, 1, 1, x[0], INSERT_VALUES));
      PetscCall(MatSetValue(Jp, 2, 2, -x[2], INSERT_VALUES));
    }
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  // H(w·f)·δz, δz = (δt, δx, δq) (hybridsens/second_order.hpp; absent blocks are null, outputs
  // overwritten, p part this rank's contribution). f has no t; p4, p5 do not enter f.
  PetscErrorCode rhsHessianProduct(PetscReal, Vec, const ModeContext &, Vec w, const SecondOrderDirection &dir,
                                   const SecondOrderOutput &out) const override {
    const PetscScalar *W, *dx = nullptr;
    const PetscScalar zero[3] = {0, 0, 0}, *dq = dir.dp ? dir.dp : zero;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(w, &W));
    if (dir.du) PetscCall(VecGetArrayRead(dir.du, &dx));
    const PetscScalar *V = rank0() && dx ? dx : zero;
    if (out.u) {
      PetscScalar *h;
      PetscCall(VecGetArray(out.u, &h));
      if (rank0()) {
        h[0] = W[2] * V[1] - W[1] * V[2] - W[0] * dq[0] + W[1] * dq[1];
        h[1] = W[2] * V[0] + W[0] * dq[0];
        h[2] = -W[1] * V[0] - W[2] * dq[2];
      }
      PetscCall(VecRestoreArray(out.u, &h));
    }
    if (out.p) {
      for (int l = 0; l < 5; ++l) out.p[l] = 0;
      if (rank0()) out.p[0] = W[0] * (V[1] - V[0]), out.p[1] = W[1] * V[0], out.p[2] = -W[2] * V[2];
    }
    if (out.t) *out.t = 0;
    if (dir.du) PetscCall(VecRestoreArrayRead(dir.du, &dx));
    PetscCall(VecRestoreArrayRead(w, &W));
    PetscFunctionReturn(0);
  }
  // x(0) = (20, p4, p5) is affine in q: (w·x0)_qq = 0.
  PetscErrorCode initialStateHessianProduct(const ModeContext &, Vec, const PetscScalar *, PetscScalar *outP) const override {
    for (int l = 0; l < 5; ++l) outP[l] = 0;
    return 0;
  }
};

static std::vector<PetscReal> lorenzMeasurementTimes() {
  std::vector<PetscReal> t;
  for (int i = 0; i <= 100; ++i) t.push_back(0.01 * i);
  return t;
}

// Records the state at every measurement time (used once, at the truth, to make the data).
class Recorder : public CostFunction {
public:
  std::string name() const override { return "recorder"; }
  std::vector<PetscReal> measurementTimes() const override { return lorenzMeasurementTimes(); }
  PetscErrorCode measurement(PetscInt i, PetscReal, Vec u, const ModeContext &, PetscScalar *value) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    if (rank0()) states[i] = {x[0], x[1], x[2]};
    PetscCall(VecRestoreArrayRead(u, &x));
    *value = 0;
    PetscFunctionReturn(0);
  }
  PetscErrorCode measurementGradient(PetscInt, PetscReal, Vec, const ModeContext &, Vec, PetscScalar *) const override { return 0; }
  mutable std::vector<std::array<PetscReal, 3>> states = std::vector<std::array<PetscReal, 3>>(101);
};

// J = Σ_i |y(t_i) − x(t_i)|².
class LeastSquares : public CostFunction, public SecondOrderCost {
public:
  explicit LeastSquares(std::vector<std::array<PetscReal, 3>> data) : y_(std::move(data)) {}
  std::string name() const override { return "least squares"; }
  std::vector<PetscReal> measurementTimes() const override { return lorenzMeasurementTimes(); }
  PetscErrorCode measurement(PetscInt i, PetscReal, Vec u, const ModeContext &, PetscScalar *value) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    if (rank0())
      for (int j = 0; j < 3; ++j) *value += (y_[i][j] - x[j]) * (y_[i][j] - x[j]);
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode measurementGradient(PetscInt i, PetscReal, Vec u, const ModeContext &, Vec gu, PetscScalar *) const override {
    const PetscScalar *x;
    PetscScalar *g;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(VecGetArray(gu, &g));
    if (rank0())
      for (int j = 0; j < 3; ++j) g[j] = -2 * (y_[i][j] - x[j]);
    PetscCall(VecRestoreArray(gu, &g));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  // H(g_i)·δz = (2 δx, 0, 0).
  PetscErrorCode measurementHessianProduct(PetscInt, PetscReal, Vec, const ModeContext &, const SecondOrderDirection &dir,
                                           const SecondOrderOutput &out) const override {
    PetscFunctionBeginUser;
    if (out.u) {
      if (dir.du) PetscCall(VecAXPBY(out.u, 2.0, 0.0, dir.du));
      else PetscCall(VecZeroEntries(out.u));
    }
    if (out.p)
      for (int l = 0; l < 5; ++l) out.p[l] = 0;
    if (out.t) *out.t = 0;
    PetscFunctionReturn(0);
  }

private:
  std::vector<std::array<PetscReal, 3>> y_;
};

struct FitResult {
  std::string name, taoType;
  PetscInt iterations = 0;
  PetscReal J = 0, gnorm = 0, seconds = 0, qerror = 0;
  TaoCounters counters;
  TaoConvergedReason reason = TAO_CONTINUE_ITERATING;
  std::vector<PetscReal> q;
};

static PetscErrorCode fit(Solver &solver, const std::vector<PetscReal> &q0, const std::vector<PetscReal> &truth, const char *name,
                          TaoType type, TaoGradient gradient, TaoHessian hessian, FitResult &r) {
  Tao tao;
  PetscFunctionBeginUser;
  PetscCall(solver.setParameters(q0));
  PetscCall(TaoCreate(PETSC_COMM_WORLD, &tao));
  PetscCall(TaoSetOptionsPrefix(tao, (std::string(name) + "_").c_str()));
  PetscCall(TaoSetType(tao, type));
  PetscCall(TaoSetTolerances(tao, 1e-9, 0.0, 0.0));  // |∇J| ≤ 1e-9: J(q*) = 0, so this pins q* down
  PetscCall(TaoSetMaximumIterations(tao, 5000));
  PetscCall(TaoSetMaximumFunctionEvaluations(tao, 20000));
  hybridsens::TaoProblem problem(solver);
  PetscCall(problem.attach(tao, gradient, hessian, std::string(name) == "newton"));  // -hs_tao_* steer the Newton fit
  PetscCall(TaoSetFromOptions(tao));
  PetscCall(checkTaoType(tao));  // -<fit>_tao_type: only methods fed by an objective, its gradient (and Hessian)
  const auto t0 = std::chrono::steady_clock::now();
  PetscCall(TaoSolve(tao));
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  PetscCall(TaoGetSolutionStatus(tao, &r.iterations, &r.J, &r.gnorm, nullptr, nullptr, &r.reason));
  r.counters = problem.counters();  // (before finish(), which solves once more at the solution)
  TaoType used;
  PetscCall(TaoGetType(tao, &used));
  r.taoType = used;
  PetscCall(problem.finish(tao));
  r.name = name;
  r.q = solver.parameters();
  r.qerror = 0;
  for (size_t i = 0; i < truth.size(); ++i) r.qerror = std::max(r.qerror, std::fabs(r.q[i] - truth[i]) / std::fabs(truth[i]));
  PetscCall(TaoDestroy(&tao));
  PetscFunctionReturn(0);
}

// ∇²J(q*) against 2 Σ_i S_iᵀ S_i, S_i = dx(t_i)/dq from forward sensitivities (one run per t_i,
// on the same step grid: the grid only depends on dt and the measurement times).
static PetscErrorCode checkTruth(Solver &solver, const std::vector<PetscReal> &truth, PetscReal *maxRel) {
  const int nq = 5;
  std::vector<std::vector<PetscScalar>> gn(nq, std::vector<PetscScalar>(nq, 0.0));
  std::vector<std::vector<std::vector<PetscScalar>>> Hfoa, Hhyb;
  PetscReal tmax;
  PetscFunctionBeginUser;
  PetscCall(solver.setParameters(truth));
  solver.setAdjoint(false);
  solver.setForwardSensitivities(false);
  solver.keepTrajectory(true);  // a plain solve keeps no trajectory unless asked: the Hessians below read it
  PetscCall(solver.solve());
  solver.keepTrajectory(false);
  PetscCall(solver.computeHessian(HessianMethod::ForwardOverAdjoint, Hfoa));
  PetscCall(solver.computeHessian(HessianMethod::Hybrid, Hhyb));
  PetscCall(TSGetMaxTime(solver.ts(), &tmax));
  solver.setForwardSensitivities(true);
  for (PetscReal ti : lorenzMeasurementTimes()) {
    std::array<std::array<PetscReal, nq>, 3> S{};
    if (ti == 0) S[1][3] = S[2][4] = 1;  // x(0) = (20, p4, p5)
    else {
      PetscCall(TSSetMaxTime(solver.ts(), ti));
      PetscCall(solver.solve());
      const PetscScalar *a;
      PetscInt lda;
      PetscCall(MatDenseGetLDA(solver.result().finalSensitivities(), &lda));
      PetscCall(MatDenseGetArrayRead(solver.result().finalSensitivities(), &a));
      if (rank0())
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < nq; ++c) S[r][c] = a[r + c * lda];
      PetscCall(MatDenseRestoreArrayRead(solver.result().finalSensitivities(), &a));
    }
    for (int i = 0; i < nq; ++i)
      for (int j = 0; j < nq; ++j)
        for (int r = 0; r < 3; ++r) gn[i][j] += 2 * S[r][i] * S[r][j];
  }
  for (auto &row : gn) PetscCallMPI(MPI_Bcast(row.data(), nq, MPIU_SCALAR, 0, PETSC_COMM_WORLD));
  PetscCall(TSSetMaxTime(solver.ts(), tmax));
  solver.setForwardSensitivities(false);
  PetscReal scale = 0, dfoa = 0, dhyb = 0;
  for (int i = 0; i < nq; ++i)
    for (int j = 0; j < nq; ++j) scale = std::max(scale, (PetscReal)std::fabs(gn[i][j]));
  for (int i = 0; i < nq; ++i)
    for (int j = 0; j < nq; ++j) {
      dfoa = std::max(dfoa, (PetscReal)std::fabs(Hfoa[0][i][j] - gn[i][j]) / scale);
      dhyb = std::max(dhyb, (PetscReal)std::fabs(Hhyb[0][i][j] - gn[i][j]) / scale);
    }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Hessian at the truth (forward-over-adjoint) and 2 sum S^T S (forward sensitivities):\n"));
  for (int i = 0; i < nq; ++i) {
    for (int j = 0; j < nq; ++j) PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %14.7e", (double)Hfoa[0][i][j]));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "   |"));
    for (int j = 0; j < nq; ++j) PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %14.7e", (double)gn[i][j]));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "check_truth: max |H - 2 sum S^T S| / max |H|: forward-over-adjoint %.3e, hybrid %.3e\n",
                        (double)dfoa, (double)dhyb));
  *maxRel = std::max(dfoa, dhyb);
  PetscFunctionReturn(0);
}

#ifndef HYBRIDSENS_EXAMPLE_NO_MAIN
int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, "Lorenz-63 system identification with exact Hessians (hybridsens + TAO).\n"));
  {
    const std::vector<PetscReal> truth = {10.0, 60.0, 8.0 / 3.0, 25.0, 30.0}, guess = {20.0, 75.0, 10.0, 10.0, 15.0};
    Lorenz model;
    Solver solver(model);
    char fitOpt[64] = "all", fitSummary[PETSC_MAX_PATH_LEN] = "";
    PetscBool checkTruthOpt = PETSC_FALSE, fitSummarySet;
    const char *prefix;
    PetscCall(TSGetOptionsPrefix(solver.ts(), &prefix));
    PetscOptionsBegin(PETSC_COMM_WORLD, prefix, "Lorenz-63 system identification options", "");
    PetscCall(examples::stringOption(PetscOptionsObject, "-fit", "fits to run: all, none, or a list of newton, blmvm, fd", fitOpt, sizeof fitOpt, nullptr));
    PetscCall(examples::stringOption(PetscOptionsObject, "-fit_summary", "write the fits as JSON to this file", fitSummary, sizeof fitSummary, &fitSummarySet));
    PetscCall(examples::boolOption(PetscOptionsObject, "-check_truth", "compare the Hessian at the truth with 2 sum S^T S", &checkTruthOpt));
    PetscOptionsEnd();
    const std::vector<std::string> fitNames = {"newton", "blmvm", "fd"};
    std::vector<bool> runFit(fitNames.size(), std::string(fitOpt) == "all");
    if (std::string(fitOpt) != "all" && std::string(fitOpt) != "none") {
      const std::string list = std::string(fitOpt) + ",";
      for (size_t start = 0, comma; (comma = list.find(',', start)) != std::string::npos; start = comma + 1) {
        const std::string item = list.substr(start, comma - start);
        const auto it = std::find(fitNames.begin(), fitNames.end(), item);
        PetscCheck(it != fitNames.end(), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "Option -%sfit %s: unknown fit '%s' (all, none, or a list of newton, blmvm, fd)",
                   prefix ? prefix : "", fitOpt, item.c_str());
        runFit[it - fitNames.begin()] = true;
      }
    }

    // Synthetic data: the states at the truth, with the integrator the fits use.
    Recorder recorder;
    std::vector<std::array<PetscReal, 3>> data;
    {
      Solver gen(model);
      gen.addCost(recorder);
      PetscCall(TSSetType(gen.ts(), TSRK));
      PetscCall(TSRKSetType(gen.ts(), TSRK4));
      PetscCall(TSSetTimeStep(gen.ts(), 1e-3));
      PetscCall(TSSetMaxTime(gen.ts(), 1.0));
      PetscCall(gen.setFromOptions());  // the command line overrides these defaults
      gen.setForwardSensitivities(false), gen.setAdjoint(false), gen.setHessian(false);
      PetscCall(gen.setParameters(truth));
      PetscCall(gen.solve());
      data = recorder.states;
      for (auto &row : data) PetscCallMPI(MPI_Bcast(row.data(), 3, MPIU_REAL, 0, PETSC_COMM_WORLD));
    }
    LeastSquares J(data);
    solver.addCost(J);
    PetscCall(TSSetType(solver.ts(), TSRK));
    PetscCall(TSRKSetType(solver.ts(), TSRK4));
    PetscCall(TSSetTimeStep(solver.ts(), 1e-3));
    PetscCall(TSSetMaxTime(solver.ts(), 1.0));
    solver.setInitialStateSensitivities({});  // x2(0), x3(0) are parameters here
    PetscCall(solver.setFromOptions());  // the command line overrides these defaults

    // Derivatives at the guess, as requested (-hs_adjoint, -hs_forward, -hs_hessian, -hs_summary).
    PetscCall(solver.setParameters(guess));
    PetscCall(solver.solve());
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "lorenz_sysid: J(q0) = %.10e at q0 = (20, 75, 10, 10, 15)\n", (double)solver.result().objective[0]));
    if (!solver.result().hessian.empty()) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Hessian at q0 (%s):\n", hessianMethodName(solver.result().hessianMethod)));
      for (const auto &row : solver.result().hessian[0]) {
        for (PetscScalar h : row) PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %15.8e", (double)h));
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
      }
    }
    PetscCall(solver.writeSummaryFromOptions());
    PetscCall(solver.checkGradientFromOptions());
    PetscCall(solver.checkHessianFromOptions());
    const bool hessianWanted = solver.hessianRequested();

    if (checkTruthOpt) {
      PetscReal rel;
      PetscCall(checkTruth(solver, truth, &rel));
    }

    std::vector<FitResult> results;
    struct Config {
      const char *name;
      TaoType type;
      TaoGradient gradient;
      TaoHessian hessian;
    };
    const Config configs[] = {{"newton", TAOBNTR, TaoGradient::Adjoint, TaoHessian::Assembled},
                              {"blmvm", TAOBLMVM, TaoGradient::Adjoint, TaoHessian::None},
                              {"fd", TAOBLMVM, TaoGradient::FiniteDifference, TaoHessian::None}};
    for (const Config &c : configs) {
      if (!runFit[std::find(fitNames.begin(), fitNames.end(), c.name) - fitNames.begin()]) continue;
      FitResult r;
      PetscCall(fit(solver, guess, truth, c.name, c.type, c.gradient, c.hessian, r));
      results.push_back(r);
    }
    solver.setHessian(hessianWanted);
    if (!results.empty()) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n%-7s %-36s %6s %12s %12s %9s %7s %6s %6s %9s  %-18s %s\n", "fit", "method", "iters", "J",
                            "|grad J|", "time [s]", "solves", "grads", "H/Hv", "max rel", "TAO reason", "q"));
      for (size_t i = 0; i < results.size(); ++i) {
        const FitResult &r = results[i];
        const std::string what = r.counters.hessianProducts ? "exact Hessian, matrix-free"
                                 : r.counters.hessians      ? "exact Hessian"
                                 : r.name == "fd"           ? "FD gradient"
                                                            : "adjoint gradient";
        const std::string method = r.taoType + ", " + what;
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-7s %-36s %6d %12.5e %12.5e %9.3f %7d %6d %6d %9.2e  %-18s (%.10g, %.10g, %.10g, %.10g, %.10g)\n",
                              r.name.c_str(), method.c_str(), (int)r.iterations, (double)r.J, (double)r.gnorm, r.seconds, (int)r.counters.solves,
                              (int)r.counters.gradients, (int)(r.counters.hessians + r.counters.hessianProducts), (double)r.qerror,
                              TaoConvergedReasons[r.reason], (double)r.q[0], (double)r.q[1], (double)r.q[2], (double)r.q[3], (double)r.q[4]));
      }
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "(truth q* = (10, 60, 2.666666667, 25, 30); 'max rel' = max_i |q_i - q*_i| / |q*_i|; solves = forward "
                                              "simulations, grads = adjoint sweeps, H/Hv = Hessians or Hessian-vector products)\n"));
    }
    AtomicFile fitOut;  // complete or not at all (see atomic_file.hpp); rank 0 writes
    if (fitSummarySet) PetscCall(fitOut.open(PETSC_COMM_WORLD, "-fit_summary", fitSummary));
    if (FILE *f = fitOut.file()) {
      std::fprintf(f, "{\"fits\": [");
      for (size_t i = 0; i < results.size(); ++i) {
        const FitResult &r = results[i];
        std::fprintf(f, "%s{\"name\": \"%s\", \"iterations\": %d, \"J\": %.17g, \"gnorm\": %.17g, \"seconds\": %.6f, \"solves\": %d, "
                        "\"gradients\": %d, \"hessians\": %d, \"max_rel_error\": %.17g, \"reason\": \"%s\", \"q\": [%.17g, %.17g, %.17g, %.17g, %.17g]}",
                     i ? ", " : "", r.name.c_str(), (int)r.iterations, (double)r.J, (double)r.gnorm, r.seconds, (int)r.counters.solves,
                     (int)r.counters.gradients, (int)(r.counters.hessians + r.counters.hessianProducts), (double)r.qerror,
                     TaoConvergedReasons[r.reason], (double)r.q[0], (double)r.q[1], (double)r.q[2], (double)r.q[3], (double)r.q[4]);
      }
      std::fprintf(f, "]}\n");
    }
    PetscCall(fitOut.commit());
  }
  PetscCall(PetscFinalize());
  return 0;
}
#endif
