// Adjoint-specific behaviour: refused configurations, several costs in one sweep, the disk
// trajectory, and the measurement-at-an-event convention (right limit).
#include "small_model.hpp"
#include "test_support.hpp"

#include <cmath>

using namespace hybridsens;
using hstest::ErrorCapture;
using hstest::ScopedOptions;
using hstest::TestModel;

namespace {

// ẋ = -k x, x(0) = 1, parameters (k, p); a time event at 0.5 adds p to x (R_p = 1).
class KickedDecay : public TestModel {
public:
  KickedDecay() : TestModel(1) {
    x0 = {1};
    params = {1.0, 0.3};
    f = [](PetscReal, const PetscScalar *x, PetscScalar *y, const ModeContext &c) { y[0] = -c.p[0] * x[0]; };
    dfdu = [](PetscReal, const PetscScalar *, PetscScalar *a, const ModeContext &c) { a[0] = -c.p[0]; };
    dfdp = [](PetscReal, const PetscScalar *x, PetscScalar *a, const ModeContext &) { a[0] = -x[0], a[1] = 0; };
  }
  PetscInt numTimeEvents() const override { return 1; }
  TimeEventInfo timeEvent(PetscInt, const std::vector<PetscReal> &) const override { return {"kick", 0.5, {}}; }
  bool hasReset(const EventId &) const override { return true; }
  PetscErrorCode reset(const EventId &, PetscReal, Vec um, const ModeContext &c, Vec up) const override {
    PetscFunctionBeginUser;
    PetscCall(VecCopy(um, up));
    PetscCall(VecShift(up, rank_ == 0 ? c.p[1] : 0.0));
    PetscFunctionReturn(0);
  }
  PetscErrorCode resetJacobianP(const EventId &, PetscReal, Vec, const ModeContext &, Mat Rp) const override {
    PetscFunctionBeginUser;
    if (rank_ == 0) PetscCall(MatSetValue(Rp, 0, 1, 1.0, INSERT_VALUES));
    PetscFunctionReturn(0);
  }
  // R_u = I, R_t = 0 (the library has no defaults for a declared reset).
  PetscErrorCode resetJacobianAction(const EventId &, PetscReal, Vec, const ModeContext &, Vec v, Vec out) const override {
    return VecCopy(v, out);
  }
  PetscErrorCode resetJacobianTransposeAction(const EventId &, PetscReal, Vec, const ModeContext &, Vec w, Vec out) const override {
    return VecCopy(w, out);
  }
  PetscErrorCode resetTimeDerivative(const EventId &, PetscReal, Vec, const ModeContext &, Vec Rt) const override {
    return VecZeroEntries(Rt);
  }
};

// J = x(t_m) measured at t_m (0.5 is the kick time: the right limit is observed) plus, if
// requested, a terminal x(T) and an integral of x².
class Cost : public CostFunction {
public:
  Cost(std::vector<PetscReal> tm, bool terminal, bool integral) : tm_(std::move(tm)), terminal_(terminal), integral_(integral) {
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank_);
  }
  std::vector<PetscReal> measurementTimes() const override { return tm_; }
  bool hasTerminal() const override { return terminal_; }
  bool hasIntegrand() const override { return integral_; }
  PetscErrorCode measurement(PetscInt, PetscReal, Vec u, const ModeContext &, PetscScalar *v) const override { return first(u, v); }
  PetscErrorCode measurementGradient(PetscInt, PetscReal, Vec, const ModeContext &, Vec gu, PetscScalar *) const override { return unit(gu); }
  // An undeclared part lets the default answer (the library refuses an undeclared part that is implemented).
  PetscErrorCode terminal(PetscReal t, Vec u, const ModeContext &c, PetscScalar *v) const override {
    return terminal_ ? first(u, v) : CostFunction::terminal(t, u, c, v);
  }
  PetscErrorCode terminalGradient(PetscReal, Vec, const ModeContext &, Vec gu, PetscScalar *) const override { return unit(gu); }
  PetscErrorCode integrand(PetscReal t, Vec u, const ModeContext &c, PetscScalar *v) const override {
    PetscFunctionBeginUser;
    if (!integral_) PetscCall(CostFunction::integrand(t, u, c, v));
    if (!integral_) PetscFunctionReturn(0);
    PetscCall(first(u, v));
    if (rank_ == 0) *v = *v * *v;
    PetscFunctionReturn(0);
  }
  PetscErrorCode integrandGradient(PetscReal, Vec u, const ModeContext &, Vec gu, PetscScalar *) const override {
    PetscScalar x = 0;
    PetscFunctionBeginUser;
    PetscCall(first(u, &x));
    PetscCall(VecSet(gu, 0.0));
    if (rank_ == 0) PetscCall(VecSetValue(gu, 0, 2 * x, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(gu));
    PetscCall(VecAssemblyEnd(gu));
    PetscFunctionReturn(0);
  }

private:
  PetscErrorCode first(Vec u, PetscScalar *v) const {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    if (rank_ == 0) *v = x[0];
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode unit(Vec gu) const {
    PetscFunctionBeginUser;
    if (rank_ == 0) PetscCall(VecSetValue(gu, 0, 1.0, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(gu));
    PetscCall(VecAssemblyEnd(gu));
    PetscFunctionReturn(0);
  }
  std::vector<PetscReal> tm_;
  bool terminal_, integral_;
  PetscMPIInt rank_ = 0;
};

PetscErrorCode configure(Solver &s, const char *type, PetscReal dt) {
  PetscFunctionBeginUser;
  PetscCall(s.setFromOptions());
  PetscCall(TSSetType(s.ts(), type));
  if (!strcmp(type, TSRK)) PetscCall(TSRKSetType(s.ts(), TSRK4));
  PetscCall(TSSetTimeStep(s.ts(), dt));
  PetscCall(TSSetMaxTime(s.ts(), 1.0));
  PetscCall(s.setFromOptions());
  PetscFunctionReturn(0);
}

} // namespace

// A measurement cost that implements only its value: a plain solve computes the objective
// without asking for the gradient; sensitivities are refused with the callback's error.
class ValueOnlyMeasurement : public CostFunction {
public:
  std::vector<PetscReal> measurementTimes() const override { return {0.25, 0.75}; }
  PetscErrorCode measurement(PetscInt, PetscReal, Vec u, const ModeContext &, PetscScalar *v) const override {
    const PetscScalar *x;
    PetscMPIInt rank;
    PetscFunctionBeginUser;
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
    PetscCall(VecGetArrayRead(u, &x));
    if (rank == 0) *v = x[0];
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
};

TEST(Measurements, ValuesOnlyNeedNoGradient) {
  KickedDecay model;
  ValueOnlyMeasurement cost;
  Solver s(model);
  s.addCost(cost);
  ASSERT_EQ(configure(s, TSRK, 1e-3), 0);
  ASSERT_EQ(s.solve(), 0);
  ASSERT_EQ(s.result().objective.size(), 1u);
  const PetscReal k = 1.0, p = 0.3, exact = std::exp(-k * 0.25) + (std::exp(-k * 0.5) + p) * std::exp(-k * 0.25);
  EXPECT_NEAR(s.result().objective[0], exact, 1e-12);
  s.setForwardSensitivities(true);
  ErrorCapture capture;
  EXPECT_NE(s.solve(), 0);
  EXPECT_NE(capture.message().find("measurementGradient"), std::string::npos) << capture.message();
}

TEST(Adjoint, MeasurementAtAnEventObservesTheRightLimit) {
  // J = x(0.5⁺) = e^{-0.5 k} + p: dJ/dk = -0.5 e^{-0.5 k}, dJ/dp = 1 (0 under a left-limit convention).
  KickedDecay model;
  Cost J({0.5}, false, false);
  Solver s(model);
  s.addCost(J);
  ScopedOptions o("-ts_adapt_type none");
  ASSERT_EQ(configure(s, TSRK, 1e-3), 0);
  s.setForwardSensitivities(true);
  s.setAdjoint(true);
  ASSERT_EQ(s.solve(), 0);
  EXPECT_NEAR(s.result().objective[0], std::exp(-0.5) + 0.3, 1e-12);
  const CostGradient &g = s.result().gradient.at(0);
  for (const auto *gp : {&g.adjointP, &g.forwardP}) {
    EXPECT_NEAR((*gp)[0], -0.5 * std::exp(-0.5), 1e-12);
    EXPECT_NEAR((*gp)[1], 1.0, 1e-14);
  }
}

TEST(Adjoint, TwoCostsInOneSweepEqualSeparateSweeps) {
  KickedDecay model;
  // Same measurement times for both, so every run has the same step boundaries.
  Cost a({0.25, 0.5, 0.75}, true, false), b({0.25, 0.5, 0.75}, false, true);
  std::vector<std::vector<PetscScalar>> together, alone;
  for (int run = 0; run < 3; ++run) {
    Solver s(model);
    if (run != 2) s.addCost(a);
    if (run != 1) s.addCost(b);
    ScopedOptions o("-ts_adapt_type none");
    ASSERT_EQ(configure(s, TSCN, 0.01), 0);
    s.setAdjoint(true);
    ASSERT_EQ(s.solve(), 0);
    if (run == 0) together = s.result().gradientTable(&CostGradient::adjointP);
    else alone.push_back(s.result().gradient[0].adjointP);
  }
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 2; ++j) EXPECT_EQ(together[k][j], alone[k][j]) << "cost " << k << " parameter " << j;
}

// One CN adjoint solve of KickedDecay with cost x(0.3) + x(0.5) + x(T) + ∫x², under `options`.
struct AdjointRun {
  std::vector<std::vector<PetscScalar>> gp, gu;
  PetscInt reused = 0;
};
static AdjointRun kickedDecayAdjoint(const std::string &options) {
  KickedDecay model;
  Cost J({0.3, 0.5}, true, true);
  AdjointRun r;
  Solver s(model);
  s.addCost(J);
  ScopedOptions o("-ts_adapt_type none " + options);
  EXPECT_EQ(configure(s, TSCN, 0.01), 0);
  s.setAdjoint(true);
  EXPECT_EQ(s.solve(), 0);
  r.gp = s.result().gradientTable(&CostGradient::adjointP);
  r.gu = s.result().gradientTable(&CostGradient::adjointU0);
  r.reused = s.result().stats.reusedJacobians;
  return r;
}

TEST(Adjoint, DiskTrajectoryIsBitIdenticalToMemory) {
  EXPECT_EQ(kickedDecayAdjoint("").gp, kickedDecayAdjoint("-hs_trajectory_dir hs-test-trajectory").gp);
}

TEST(AdjointRefuses, RKTableauWithTheMuBug) {
  KickedDecay model;
  Cost J({}, true, false);
  Solver s(model);
  s.addCost(J);
  ScopedOptions o("-ts_adapt_type none -ts_rk_type 5dp");
  ASSERT_EQ(configure(s, TSRK, 0.01), 0);
  s.setAdjoint(true);
  ErrorCapture err;
  EXPECT_NE(s.solve(), 0);
  EXPECT_NE(err.message().find("wrong parameter gradients"), std::string::npos) << err.message();
}

TEST(AdjointRefuses, MidpointTheta) {
  KickedDecay model;
  Cost J({}, true, false);
  Solver s(model);
  s.addCost(J);
  ScopedOptions o("-ts_adapt_type none -ts_theta_theta 0.6");
  ASSERT_EQ(configure(s, TSTHETA, 0.01), 0);
  s.setAdjoint(true);
  ErrorCapture err;
  EXPECT_NE(s.solve(), 0);
  EXPECT_NE(err.message().find("midpoint"), std::string::npos) << err.message();
}

TEST(AdjointRefuses, LaggedJacobians) {
  KickedDecay model;
  Cost J({}, true, false);
  Solver s(model);
  s.addCost(J);
  ScopedOptions o("-ts_adapt_type none -snes_lag_jacobian 2");
  ASSERT_EQ(configure(s, TSCN, 0.01), 0);
  s.setAdjoint(true);
  ErrorCapture err;
  EXPECT_NE(s.solve(), 0);
  EXPECT_NE(err.message().find("lag"), std::string::npos) << err.message();
}

TEST(Adjoint, FinalStateIsKeptAfterTheReverseSweep) {
  KickedDecay model;
  Cost J({0.5}, true, true);
  PetscScalar x[2];
  for (int adj = 0; adj < 2; ++adj) {
    Solver s(model);
    s.addCost(J);
    ScopedOptions o("-ts_adapt_type none");
    ASSERT_EQ(configure(s, TSCN, 0.01), 0);
    s.setAdjoint(adj);
    ASSERT_EQ(s.solve(), 0);
    ASSERT_EQ(VecSum(s.result().finalState(), &x[adj]), 0);
  }
  EXPECT_EQ(x[0], x[1]);
}

// The forward sweep shares the configuration check: its quadrature and jumps assume endpoint
// stages, so midpoint theta would give wrong integral sensitivities silently.
TEST(ForwardRefuses, MidpointTheta) {
  KickedDecay model;
  Cost J({}, false, true);
  Solver s(model);
  s.addCost(J);
  ScopedOptions o("-ts_adapt_type none -ts_theta_theta 0.6");
  ASSERT_EQ(configure(s, TSTHETA, 0.01), 0);
  s.setForwardSensitivities(true);
  ErrorCapture err;
  EXPECT_NE(s.solve(), 0);
  EXPECT_NE(err.message().find("midpoint"), std::string::npos) << err.message();
}

// PETSc's theta adjoint asks for f_u and f_p at (t_n, u_n) twice; the reverse sweep copies the
// second (Dynamics::reuseRepeatedJacobians). The copy must be the evaluation bit for bit, across
// the kick (same t, U⁻ vs U⁺) and measurement stops; off, nothing is reused.
TEST(Adjoint, RepeatedJacobiansAreCopiedBitForBit) {
  const AdjointRun off = kickedDecayAdjoint("-hs_adjoint_reuse_jacobians 0"), on = kickedDecayAdjoint("");
  EXPECT_EQ(off.gp, on.gp);
  EXPECT_EQ(off.gu, on.gu);
  EXPECT_EQ(off.reused, 0);
  // One f_u and one f_p per reversed step except where the step starts at the kick (u⁻ ≠ u⁺).
  EXPECT_GE(on.reused, 2 * 100 - 4);
}
