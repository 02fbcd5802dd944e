// TAO integration (hybridsens/tao.hpp): a distributed parameter fit solved by TAO's Newton
// methods with the exact Hessian (assembled and matrix-free) and by BLMVM, at 1 and 2 ranks;
// a trial point where the simulation fails is reported to TAO as PETSC_INFINITY and the solver
// recovers.
//
// Model: N = 7 uncoupled components split over the ranks,
//   x_i' = -p0 x_i² + p1 sin x_i,  x_i(0) = 1 + 0.1 i,  T = 1 (RK4, dt 0.01; CN for NLS);
// data y_i(t_k) from the truth p* = (0.8, 0.5) at t_k = 0.1 k, k = 1…10 (same integrator);
// cost Σ_k Σ_i (x_i(t_k) − y_i(t_k))² (each rank its own components). Start p = (1.0, 0.35), where
// the Hessian is positive definite along the Newton path (from (1.3, 0.1) it is indefinite on the
// way; TAONLS's handling of the negative curvature then depends on its preconditioner, ILU at
// 1 rank and block Jacobi at 2, and at 2 ranks its line search fails — identical Hessians).
// With p0 > 5 the right-hand side returns NaN (a stand-in for an overflowing simulation).
#include "hessian_products.hpp"
#include "test_support.hpp"

#include <hybridsens/hybridsens.hpp>

#include <petsctao.h>

#include <cmath>

using namespace hybridsens;
using hstest::ScopedOptions;

#define HS_OK(expr) ASSERT_EQ((PetscErrorCode)(expr), 0)

namespace {

constexpr PetscInt kN = 7;

struct Block {
  PetscInt lo = 0, hi = 0;
  Block() {
    PetscMPIInt r, size;
    MPI_Comm_rank(PETSC_COMM_WORLD, &r);
    MPI_Comm_size(PETSC_COMM_WORLD, &size);
    for (PetscMPIInt q = 0; q < r; ++q) lo += kN / size + (q < kN % size ? 1 : 0);
    hi = lo + kN / size + (r < kN % size ? 1 : 0);
  }
};

class Decays : public HybridModel, public hstest::ModelProducts {
public:
  PetscInt localSize() const override { return b_.hi - b_.lo; }
  std::vector<PetscReal> defaultParameters() const override { return {0.8, 0.5}; }
  PetscErrorCode initialState(const ModeContext &, Vec u0) const override {
    PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArray(u0, &x));
    for (PetscInt i = b_.lo; i < b_.hi; ++i) x[i - b_.lo] = 1 + 0.1 * i;
    PetscCall(VecRestoreArray(u0, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &c, Vec f) const override {
    const PetscScalar *x;
    PetscScalar *y;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(VecGetArray(f, &y));
    for (PetscInt i = 0; i < localSize(); ++i) y[i] = c.p[0] > 5 ? NAN : -c.p[0] * x[i] * x[i] + c.p[1] * std::sin(x[i]);
    PetscCall(VecRestoreArray(f, &y));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobian(PetscReal, Vec u, const ModeContext &c, Mat J) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    for (PetscInt i = b_.lo; i < b_.hi; ++i)
      PetscCall(MatSetValue(J, i, i, -2 * c.p[0] * x[i - b_.lo] + c.p[1] * std::cos(x[i - b_.lo]), INSERT_VALUES));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobianP(PetscReal, Vec u, const ModeContext &, Mat Jp) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    for (PetscInt i = b_.lo; i < b_.hi; ++i) {
      PetscCall(MatSetValue(Jp, i, 0, -x[i - b_.lo] * x[i - b_.lo], INSERT_VALUES));
      PetscCall(MatSetValue(Jp, i, 1, std::sin(x[i - b_.lo]), INSERT_VALUES));
    }
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode product(PetscReal, Vec u, const ModeContext &c, Vec w, Vec v, const PetscScalar *vp, Vec hu, PetscScalar *hp) const override {
    const PetscScalar *x, *W, *V;
    PetscScalar *h;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(VecGetArrayRead(w, &W));
    PetscCall(VecGetArrayRead(v, &V));
    PetscCall(VecGetArray(hu, &h));
    for (PetscInt i = 0; i < localSize(); ++i) {
      h[i] = W[i] * (-2 * c.p[0] - c.p[1] * std::sin(x[i])) * V[i] - 2 * W[i] * x[i] * vp[0] + W[i] * std::cos(x[i]) * vp[1];
      hp[0] += -2 * W[i] * x[i] * V[i];
      hp[1] += W[i] * std::cos(x[i]) * V[i];
    }
    PetscCall(VecRestoreArray(hu, &h));
    PetscCall(VecRestoreArrayRead(v, &V));
    PetscCall(VecRestoreArrayRead(w, &W));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode initialStateHessianProduct(const ModeContext &, Vec, const PetscScalar *, PetscScalar *outP) const override {
    outP[0] = outP[1] = 0;
    return 0;
  }

private:
  Block b_;
};

std::vector<PetscReal> times() {
  std::vector<PetscReal> t;
  for (int k = 1; k <= 10; ++k) t.push_back(0.1 * k);
  return t;
}

// Records the owned components at the measurement times (to make the data).
class Recorder : public CostFunction {
public:
  std::vector<PetscReal> measurementTimes() const override { return times(); }
  PetscErrorCode measurement(PetscInt k, PetscReal, Vec u, const ModeContext &, PetscScalar *v) const override {
    const PetscScalar *x;
    PetscInt n;
    PetscFunctionBeginUser;
    PetscCall(VecGetLocalSize(u, &n));
    PetscCall(VecGetArrayRead(u, &x));
    y[k].assign(x, x + n);
    PetscCall(VecRestoreArrayRead(u, &x));
    *v = 0;
    PetscFunctionReturn(0);
  }
  PetscErrorCode measurementGradient(PetscInt, PetscReal, Vec, const ModeContext &, Vec, PetscScalar *) const override { return 0; }
  mutable std::vector<std::vector<PetscReal>> y = std::vector<std::vector<PetscReal>>(10);
};

class Misfit : public CostFunction, public hstest::CostProducts {
public:
  explicit Misfit(std::vector<std::vector<PetscReal>> y) : y_(std::move(y)) {}
  std::vector<PetscReal> measurementTimes() const override { return times(); }
  PetscErrorCode measurement(PetscInt k, PetscReal, Vec u, const ModeContext &, PetscScalar *v) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    for (size_t i = 0; i < y_[k].size(); ++i) *v += (x[i] - y_[k][i]) * (x[i] - y_[k][i]);
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode measurementGradient(PetscInt k, PetscReal, Vec u, const ModeContext &, Vec g, PetscScalar *) const override {
    const PetscScalar *x;
    PetscScalar *ga;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(VecGetArray(g, &ga));
    for (size_t i = 0; i < y_[k].size(); ++i) ga[i] = 2 * (x[i] - y_[k][i]);
    PetscCall(VecRestoreArray(g, &ga));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode measurementProduct(PetscInt, PetscReal, Vec, const ModeContext &, Vec v, const PetscScalar *, Vec hu,
                                    PetscScalar *) const override {
    return VecAXPBY(hu, 2.0, 0.0, v);
  }

private:
  std::vector<std::vector<PetscReal>> y_;
};

struct Fit {
  Decays model;
  std::unique_ptr<Misfit> cost;
  std::unique_ptr<Solver> solver;
  explicit Fit(const std::string &opts) {
    ScopedOptions o(opts + " -ts_max_time 1");
    Recorder rec;
    {
      Solver gen(model);
      gen.addCost(rec);
      EXPECT_EQ(gen.setFromOptions(), 0);
      EXPECT_EQ(gen.solve(), 0);
    }
    cost = std::make_unique<Misfit>(rec.y);
    solver = std::make_unique<Solver>(model);
    solver->addCost(*cost);
    EXPECT_EQ(solver->setFromOptions(), 0);
    EXPECT_EQ(solver->setParameters({1.0, 0.35}), 0);
  }
};

void fitWith(const std::string &opts, TaoType type, TaoGradient g, TaoHessian h) {
  SCOPED_TRACE(opts + " " + type);
  Fit f(opts);
  Tao tao;
  HS_OK(TaoCreate(PETSC_COMM_WORLD, &tao));
  HS_OK(TaoSetType(tao, type));
  HS_OK(TaoSetTolerances(tao, 1e-11, 0, 0));
  HS_OK(TaoSetMaximumIterations(tao, 500));
  TaoProblem problem(*f.solver);
  HS_OK(problem.attach(tao, g, h, false));
  HS_OK(TaoSetFromOptions(tao));
  if (h == TaoHessian::MatrixFree) {  // Krylov Newton on a shell: no factorization to precondition with
    KSP ksp;
    PC pc;
    HS_OK(TaoGetKSP(tao, &ksp));
    if (ksp) {
      HS_OK(KSPGetPC(ksp, &pc));
      HS_OK(PCSetType(pc, PCNONE));
    }
  }
  HS_OK(TaoSolve(tao));
  TaoConvergedReason reason;
  HS_OK(TaoGetConvergedReason(tao, &reason));
  EXPECT_GT(reason, 0) << TaoConvergedReasons[reason];
  HS_OK(problem.finish(tao));
  const auto &p = f.solver->parameters();
  EXPECT_LE(std::fabs(p[0] - 0.8) / 0.8, 1e-8) << p[0];
  EXPECT_LE(std::fabs(p[1] - 0.5) / 0.5, 1e-8) << p[1];
  if (h == TaoHessian::Assembled) EXPECT_GT(problem.counters().hessians, 0);
  if (h == TaoHessian::MatrixFree) EXPECT_GT(problem.counters().hessianProducts, 0);
  HS_OK(TaoDestroy(&tao));
}

} // namespace

TEST(Tao, NewtonLineSearchAssembledHessian) { fitWith("-ts_type cn -ts_dt 0.01", TAONLS, TaoGradient::Adjoint, TaoHessian::Assembled); }
TEST(Tao, NewtonTrustRegionAssembledHessian) { fitWith("-ts_type rk -ts_rk_type 4 -ts_dt 0.01", TAOBNTR, TaoGradient::Adjoint, TaoHessian::Assembled); }
TEST(Tao, NewtonTrustRegionMatrixFree) { fitWith("-ts_type rk -ts_rk_type 4 -ts_dt 0.01", TAOBNTR, TaoGradient::Adjoint, TaoHessian::MatrixFree); }
TEST(Tao, BLMVM) { fitWith("-ts_type rk -ts_rk_type 4 -ts_dt 0.01", TAOBLMVM, TaoGradient::Adjoint, TaoHessian::None); }

// A failing simulation is PETSC_INFINITY for TAO (never a plausible number), and the next point
// is evaluated afresh.
TEST(Tao, FailedSimulationIsInfinite) {
  Fit f("-ts_type rk -ts_rk_type 4 -ts_dt 0.01");
  Tao tao;
  Vec x;
  PetscReal val;
  HS_OK(TaoCreate(PETSC_COMM_WORLD, &tao));
  TaoProblem problem(*f.solver);
  HS_OK(problem.attach(tao, TaoGradient::Adjoint, TaoHessian::Assembled, false));
  HS_OK(VecDuplicate(problem.solution(), &x));
  HS_OK(VecSet(x, 0.0));
  HS_OK(VecSetValue(x, 0, 6.0, INSERT_VALUES));  // p0 > 5: the model returns NaN
  HS_OK(VecAssemblyBegin(x));
  HS_OK(VecAssemblyEnd(x));
  HS_OK(TaoComputeObjective(tao, x, &val));
  EXPECT_EQ(val, PETSC_INFINITY);  // PETSc's "infinity" (PETSC_MAX_REAL/4): larger than any objective, finite for TAO's checks
  EXPECT_EQ(problem.counters().failedSolves, 1);
  // Back at the truth: a finite, tiny objective (the TS was put back where solve() starts).
  HS_OK(VecSet(x, 0.0));
  HS_OK(VecSetValue(x, 0, 0.8, INSERT_VALUES));
  HS_OK(VecSetValue(x, 1, 0.5, INSERT_VALUES));
  HS_OK(VecAssemblyBegin(x));
  HS_OK(VecAssemblyEnd(x));
  HS_OK(TaoComputeObjective(tao, x, &val));
  EXPECT_LE(val, 1e-24);
  HS_OK(VecDestroy(&x));
  HS_OK(TaoDestroy(&tao));
}
