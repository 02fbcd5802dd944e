// scalar_measurements — a measurement (point) cost (docs/validation.md, [Nandi2018] §3).
//
// Model:  ẋ = -a x²,  x(0) = x0;  parameters p = (a, x0) = (1, 2); no events.
// Cost:   J = Σ_{i=0}^{100} g(x(t_i)),  g(x) = 1/x²,  t_i = 0.01 i.
// Closed form: 1/x(t) = 1/x0 + a t, so J = Σ (1/x0 + a t_i)²,
//   dJ/da  = Σ 2 (1/x0 + a t_i) t_i,   dJ/dx0 = -Σ 2 (1/x0 + a t_i) / x0².
//   d²J/da² = Σ 2 t_i²,  d²J/dx0² = Σ (2/x0⁴ + 4 (1/x0 + a t_i)/x0³),  d²J/da dx0 = -Σ 2 t_i/x0².
// Published ([Nandi2018]): J = 109.585, dJ/da = 118.17, dJ/dx0 = -50.5, d²J/da² = 67.67,
// d²J/dx0² = 63.125, d²J/dx0 da = -25.25.
// Every t_i is a step boundary. In the adjoint sweep λ jumps by ∂g/∂x at each t_i; in the
// forward sweep the measurement adds g_x S(t_i). The Hessian (-hs_hessian) needs the
// second-derivative products (hybridsens/second_order.hpp): of w·f = -a w x² (model) and of g
// (cost); the second-order adjoint jumps by g_xx δx at each t_i.
//
// Run:
//   build/examples/scalar_measurements -hs_adjoint -hs_forward
//   build/examples/scalar_measurements -ts_type cn -ts_dt 1e-3 -hs_adjoint -hs_summary out.json
//   build/examples/scalar_measurements -hs_hessian [-hs_hessian_method foa|hybrid] [-hs_check_hessian]
// Prints J, its gradient and its Hessian by each requested method.
#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

using namespace hybridsens;

class Riccati : public HybridModel, public SecondOrderModel {
public:
  Riccati() { MPI_Comm_rank(PETSC_COMM_WORLD, &rank_); }
  PetscInt localSize() const override { return rank_ == 0 ? 1 : 0; }
  std::vector<PetscReal> defaultParameters() const override { return {1.0, 2.0}; }
  std::vector<std::string> parameterNames() const override { return {"a", "x0"}; }
  PetscErrorCode initialState(const ModeContext &c, Vec u0) const override { return VecSet(u0, c.p[1]); }
  PetscErrorCode initialStateJacobianP(const ModeContext &, Mat du0dp) const override {
    PetscFunctionBeginUser;
    if (rank_ == 0) PetscCall(MatSetValue(du0dp, 0, 1, 1.0, INSERT_VALUES));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &c, Vec f) const override {
    PetscFunctionBeginUser;
    PetscCall(VecPointwiseMult(f, u, u));
    PetscCall(VecScale(f, -c.p[0]));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobian(PetscReal, Vec u, const ModeContext &c, Mat J) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    if (rank_ == 0) PetscCall(MatSetValue(J, 0, 0, -2 * c.p[0] * x[0], INSERT_VALUES));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobianP(PetscReal, Vec u, const ModeContext &, Mat Jp) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    if (rank_ == 0) PetscCall(MatSetValue(Jp, 0, 0, -x[0] * x[0], INSERT_VALUES));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  // H(w f)·δz for f = -a x² (hybridsens/second_order.hpp): with δz = (δt, δx, δp),
  //   h_xx = -2 a w,  h_xa = -2 w x,  h_aa = 0;  x0 does not enter f; f has no t.
  // Outputs are overwritten (p parts: this rank's contribution); absent blocks are null.
  PetscErrorCode rhsHessianProduct(PetscReal, Vec u, const ModeContext &c, Vec w, const SecondOrderDirection &dir,
                                   const SecondOrderOutput &out) const override {
    const PetscScalar *x, *wa, *va = nullptr;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(VecGetArrayRead(w, &wa));
    if (dir.du) PetscCall(VecGetArrayRead(dir.du, &va));
    const PetscReal X = rank_ == 0 ? x[0] : 0, W = rank_ == 0 ? wa[0] : 0, dx = va && rank_ == 0 ? va[0] : 0, da = dir.dp ? dir.dp[0] : 0;
    if (out.u) {
      PetscScalar *h;
      PetscCall(VecGetArray(out.u, &h));
      if (rank_ == 0) h[0] = -2 * c.p[0] * W * dx - 2 * W * X * da;
      PetscCall(VecRestoreArray(out.u, &h));
    }
    if (out.p) out.p[0] = -2 * W * X * dx, out.p[1] = 0;
    if (out.t) *out.t = 0;
    if (dir.du) PetscCall(VecRestoreArrayRead(dir.du, &va));
    PetscCall(VecRestoreArrayRead(w, &wa));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  // u0 = x0 is affine in p: (w u0)_pp = 0.
  PetscErrorCode initialStateHessianProduct(const ModeContext &, Vec, const PetscScalar *, PetscScalar *outP) const override {
    outP[0] = outP[1] = 0;
    return 0;
  }

private:
  PetscMPIInt rank_ = 0;
};

// J = Σ_i 1/x(t_i)², measured on the rank that owns x.
class InverseSquareMeasurements : public CostFunction, public SecondOrderCost {
public:
  InverseSquareMeasurements() {
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank_);
    for (int i = 0; i <= 100; ++i) times_.push_back(0.01 * i);
  }
  std::string name() const override { return "sum 1/x^2"; }
  std::vector<PetscReal> measurementTimes() const override { return times_; }
  PetscErrorCode measurement(PetscInt, PetscReal, Vec u, const ModeContext &, PetscScalar *value) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    if (rank_ == 0) *value = 1.0 / (x[0] * x[0]);
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode measurementGradient(PetscInt, PetscReal, Vec u, const ModeContext &, Vec gu, PetscScalar *) const override {
    const PetscScalar *x;
    PetscScalar *g;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(VecGetArray(gu, &g));
    if (rank_ == 0) g[0] = -2.0 / (x[0] * x[0] * x[0]);
    PetscCall(VecRestoreArray(gu, &g));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  // H(g)·δz: g_xx = 6/x⁴; g has no parameter and no t.
  PetscErrorCode measurementHessianProduct(PetscInt, PetscReal, Vec u, const ModeContext &, const SecondOrderDirection &dir,
                                           const SecondOrderOutput &out) const override {
    const PetscScalar *x, *va = nullptr;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    if (dir.du) PetscCall(VecGetArrayRead(dir.du, &va));
    if (out.u) {
      PetscScalar *h;
      PetscCall(VecGetArray(out.u, &h));
      if (rank_ == 0) h[0] = va ? 6.0 / (x[0] * x[0] * x[0] * x[0]) * va[0] : 0;
      PetscCall(VecRestoreArray(out.u, &h));
    }
    if (out.p) out.p[0] = out.p[1] = 0;
    if (out.t) *out.t = 0;
    if (dir.du) PetscCall(VecRestoreArrayRead(dir.du, &va));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }

private:
  PetscMPIInt rank_ = 0;
  std::vector<PetscReal> times_;
};

// tests/test_ad_examples.cpp includes this file (without main) to reuse the hand-coded model
// and cost as the oracle of their AD versions.
#ifndef HYBRIDSENS_EXAMPLE_NO_MAIN
int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, "Measurement cost of a Riccati ODE (Nandi & Singh 2018, §3) with hybridsens.\n"));
  {
    Riccati model;
    InverseSquareMeasurements J;
    Solver solver(model);
    solver.addCost(J);
    PetscCall(TSSetType(solver.ts(), TSRK));
    PetscCall(TSRKSetType(solver.ts(), TSRK4));
    PetscCall(TSSetTimeStep(solver.ts(), 0.01));
    PetscCall(TSSetMaxTime(solver.ts(), 1.0));
    solver.setInitialStateSensitivities({});  // x0 is a parameter here
    PetscCall(solver.setFromOptions());  // the command line overrides these defaults
    PetscCall(solver.solve());
    const SolveResult &result = solver.result();
    PetscReal exactJ = 0, exactDa = 0, exactDx0 = 0, exactDaa = 0, exactDx0x0 = 0, exactDax0 = 0;
    for (int i = 0; i <= 100; ++i) {
      const PetscReal t = 0.01 * i, w = 0.5 + t;  // 1/x(t) = 1/x0 + a t with x0 = 2, a = 1
      exactJ += w * w, exactDa += 2 * w * t, exactDx0 += -2 * w / 4.0;
      exactDaa += 2 * t * t, exactDx0x0 += 2.0 / 16 + 4 * w / 8, exactDax0 += -2 * t / 4;
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "scalar_measurements: closed form J = %.12f, dJ/da = %.12f, dJ/dx0 = %.12f\n", (double)exactJ,
                          (double)exactDa, (double)exactDx0));
    if (!result.objective.empty()) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  computed   J = %.12f\n", (double)result.objective[0]));
    if (result.forwardComputed)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  forward    dJ/da = %.12f, dJ/dx0 = %.12f\n", (double)result.gradient[0].forwardP[0],
                            (double)result.gradient[0].forwardP[1]));
    if (result.adjointComputed)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  adjoint    dJ/da = %.12f, dJ/dx0 = %.12f\n", (double)result.gradient[0].adjointP[0],
                            (double)result.gradient[0].adjointP[1]));
    if (!result.hessian.empty()) {
      const auto &H = result.hessian[0];
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  closed form d2J/da2 = %.12f, d2J/dx02 = %.12f, d2J/dadx0 = %.12f\n", (double)exactDaa,
                            (double)exactDx0x0, (double)exactDax0));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  Hessian (%s) d2J/da2 = %.12f, d2J/dx02 = %.12f, d2J/dadx0 = %.12f, d2J/dx0da = %.12f\n",
                            hessianMethodName(result.hessianMethod), (double)H[0][0], (double)H[1][1], (double)H[0][1], (double)H[1][0]));
    }
    PetscCall(solver.writeSummaryFromOptions());
    PetscCall(solver.checkGradientFromOptions());
    PetscCall(solver.checkHessianFromOptions());
  }
  PetscCall(PetscFinalize());
  return 0;
}
#endif
