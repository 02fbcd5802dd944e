// Guard rates at step ends (GuardEvaluator::rates) for a DAE: ẏ costs a Jacobian and a
// factorization, so it is computed only when an active guard's rate reads it (probed with
// ẏ = NaN). These tests pin down that the rates are exact either way and when ẏ is computed.
//
// Model: x' = −x + y, 0 = y − a_d x (a_1 = 0.5, a_2 = 2), so at a consistent u = (x, a x):
// ẋ = (a − 1) x and ẏ = a ẋ. Guards: g0 = x − 0.3 (active always), g1 = y − 0.3 (mode 2 only).
#include "test_support.hpp"

#include "engine/dynamics.hpp"
#include "engine/guard_evaluator.hpp"

#include <hybridsens/hybridsens.hpp>

#include <cmath>
#include <limits>

using namespace hybridsens;

#define HS_OK(expr) ASSERT_EQ((PetscErrorCode)(expr), 0)

namespace {

enum class Rates { ReadOnlyWhatTheGuardReads, LibraryDefault, NaNInGuard0 };

class TwoGuardDAE : public HybridModel {
public:
  explicit TwoGuardDAE(Rates r) : rates_(r) {}
  MPI_Comm comm() const override { return PETSC_COMM_SELF; }
  PetscInt localSize() const override { return 2; }
  std::vector<PetscInt> algebraicIndices() const override { return {1}; }
  DiscreteState initialDiscreteState() const override { return {1}; }
  std::vector<PetscReal> defaultParameters() const override { return {0.5, 2.0}; }
  static PetscReal a(const ModeContext &c) { return c.p[c.d[0] - 1]; }
  PetscErrorCode initialState(const ModeContext &, Vec u0) const override { return VecSet(u0, 1.0); }

  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &c, Vec f) const override {
    const PetscScalar *x;
    PetscScalar *fa;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(VecGetArray(f, &fa));
    fa[0] = -x[0] + x[1];
    fa[1] = x[1] - a(c) * x[0];
    PetscCall(VecRestoreArray(f, &fa));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobian(PetscReal, Vec, const ModeContext &c, Mat J) const override {
    const PetscInt cols[2] = {0, 1};
    const PetscScalar rows[4] = {-1.0, 1.0, -a(c), 1.0};
    PetscFunctionBeginUser;
    PetscCall(MatSetValues(J, 2, cols, 2, cols, rows, INSERT_VALUES));
    PetscFunctionReturn(0);
  }

  PetscInt numGuards() const override { return 2; }
  GuardInfo guardInfo(PetscInt j) const override { return {j ? "y_at_0.3" : "x_at_0.3", Direction::Both}; }
  bool guardActive(PetscInt j, const DiscreteState &d) const override { return j == 0 || d[0] == 2; }
  PetscErrorCode guards(PetscReal, Vec u, const ModeContext &, PetscScalar *g) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    g[0] = x[0] - 0.3;
    g[1] = x[1] - 0.3;
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode guardGradient(PetscInt j, PetscReal, Vec, const ModeContext &, Vec gu, PetscScalar *gt, PetscScalar *) const override {
    PetscFunctionBeginUser;
    PetscCall(VecSetValue(gu, j, 1.0, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(gu));
    PetscCall(VecAssemblyEnd(gu));
    *gt = 0;
    PetscFunctionReturn(0);
  }
  // Like the AD front ends: each rate is formed from the entries of u̇ its guard reads.
  PetscErrorCode guardRates(PetscReal t, Vec u, Vec udot, const ModeContext &c, Vec work, PetscScalar *r) const override {
    const PetscScalar *xd;
    PetscFunctionBeginUser;
    if (rates_ == Rates::LibraryDefault) {
      PetscCall(HybridModel::guardRates(t, u, udot, c, work, r));
      PetscFunctionReturn(0);
    }
    PetscCall(VecGetArrayRead(udot, &xd));
    r[0] = rates_ == Rates::NaNInGuard0 ? std::numeric_limits<PetscReal>::quiet_NaN() : xd[0];
    if (guardActive(1, c.d)) r[1] = xd[1];
    PetscCall(VecRestoreArrayRead(udot, &xd));
    PetscFunctionReturn(0);
  }

private:
  Rates rates_;
};

struct Probe {
  std::vector<PetscScalar> rate;
  PetscInt ydotSolves = -1;
};

// Rates at the consistent point (x, a x) of mode d.
PetscErrorCode ratesAt(Rates kind, PetscInt d, PetscReal x, Probe &out) {
  TwoGuardDAE model(kind);
  Dynamics dyn(model, model.defaultParameters(), 0);
  Vec u, udot;
  PetscFunctionBeginUser;
  PetscCall(dyn.setUp());
  dyn.mode = {d};
  GuardEvaluator guards(dyn);
  PetscCall(VecDuplicate(dyn.templateVec(), &u));
  PetscCall(VecDuplicate(u, &udot));
  PetscCall(VecSetValue(u, 0, x, INSERT_VALUES));
  PetscCall(VecSetValue(u, 1, TwoGuardDAE::a(dyn.context()) * x, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(u));
  PetscCall(VecAssemblyEnd(u));
  PetscCall(guards.rates(0.0, u, dyn.mode, udot, out.rate));
  out.ydotSolves = guards.ydotSolves();
  PetscCall(VecDestroy(&udot));
  PetscCall(VecDestroy(&u));
  PetscFunctionReturn(0);
}

} // namespace

TEST(GuardRates, GuardsOnDifferentialStatesNeedNoYdot) {
  Probe p;
  HS_OK(ratesAt(Rates::ReadOnlyWhatTheGuardReads, 1, 0.8, p));
  EXPECT_EQ(p.ydotSolves, 0);
  EXPECT_NEAR(p.rate[0], (0.5 - 1) * 0.8, 1e-15);  // ẋ = (a_1 − 1) x
  EXPECT_EQ(p.rate[1], 0.0);                        // inactive
}

TEST(GuardRates, AGuardOnAnAlgebraicStateGetsTheExactYdot) {
  Probe p;
  HS_OK(ratesAt(Rates::ReadOnlyWhatTheGuardReads, 2, 0.8, p));
  EXPECT_EQ(p.ydotSolves, 1);
  EXPECT_NEAR(p.rate[0], (2.0 - 1) * 0.8, 1e-15);
  EXPECT_NEAR(p.rate[1], 2.0 * (2.0 - 1) * 0.8, 1e-15);  // ẏ = a ẋ, from the consistency solve
}

// HybridModel's default rates (γ_u·u̇ over the nonzero entries of γ_u) read ẏ only for a guard
// whose gradient has algebraic entries.
TEST(GuardRates, TheLibraryDefaultRatesReadYdotOnlyWhereTheGradientDoes) {
  Probe p;
  HS_OK(ratesAt(Rates::LibraryDefault, 1, 0.8, p));
  EXPECT_EQ(p.ydotSolves, 0);
  EXPECT_NEAR(p.rate[0], (0.5 - 1) * 0.8, 1e-15);
  HS_OK(ratesAt(Rates::LibraryDefault, 2, 0.8, p));
  EXPECT_EQ(p.ydotSolves, 1);
  EXPECT_NEAR(p.rate[0], (2.0 - 1) * 0.8, 1e-15);
  EXPECT_NEAR(p.rate[1], 2.0 * (2.0 - 1) * 0.8, 1e-15);
}

// A NaN the model itself returns is still an error naming the guard (after the exact retry).
TEST(GuardRates, ANaNFromTheModelIsStillAnError) {
  Probe p;
  hstest::ErrorCapture capture;
  EXPECT_NE(ratesAt(Rates::NaNInGuard0, 1, 0.8, p), 0);
  EXPECT_NE(capture.message().find("guardRates for guard 'x_at_0.3'"), std::string::npos) << capture.message();
}
