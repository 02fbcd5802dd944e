// Configurations that used to give silent wrong numbers, or ran forever, and are now refused
// (or shown to be correct): theta outside (0, 1], midpoint theta with integral costs, TS types
// the engine cannot step or whose stages the costs cannot read, a guard resting on its surface,
// a model that reads t although explicitTime() is false, a fixed step too small to finish.
#include "small_model.hpp"
#include "test_support.hpp"

#include <hybridsens/hybridsens.hpp>

#include <cmath>

using namespace hybridsens;
using hstest::configureFixedStep;
using hstest::ErrorCapture;
using hstest::ScopedOptions;
using hstest::TestModel;

namespace {

// q̇ = v, v̇ = −g from (q0, v0); impact guard γ = q (falling), reset v⁺ = −e v⁻.
class Ball : public TestModel {
public:
  static constexpr PetscReal g = 9.81;
  Ball(PetscReal q0, PetscReal v0, PetscReal e, Direction dir = Direction::Falling) : TestModel(2), e_(e), dir_(dir) {
    x0 = {q0, v0};
    f = [](PetscReal, const PetscScalar *x, PetscScalar *y, const ModeContext &) { y[0] = x[1], y[1] = -g; };
    dfdu = [](PetscReal, const PetscScalar *, PetscScalar *a, const ModeContext &) { a[1] = 1; };
  }
  PetscInt numGuards() const override { return 1; }
  GuardInfo guardInfo(PetscInt) const override { return {"impact", dir_}; }
  PetscErrorCode guards(PetscReal, Vec u, const ModeContext &, PetscScalar *gv) const override { return firstComponentGuard(u, 0.0, gv); }
  PetscErrorCode guardGradient(PetscInt, PetscReal, Vec, const ModeContext &, Vec gu, PetscScalar *gt, PetscScalar *) const override {
    return firstComponentGradient(gu, gt);
  }
  PetscErrorCode transition(const EventId &, PetscReal, Vec, DiscreteState &d) const override {
    d[0] += 1;
    return 0;
  }
  bool hasReset(const EventId &) const override { return true; }
  PetscErrorCode reset(const EventId &, PetscReal, Vec um, const ModeContext &, Vec up) const override {
    PetscFunctionBeginUser;
    PetscCall(VecCopy(um, up));
    PetscCall(scaleVelocity(up));
    PetscFunctionReturn(0);
  }
  PetscErrorCode resetJacobianAction(const EventId &, PetscReal, Vec, const ModeContext &, Vec v, Vec out) const override {
    PetscFunctionBeginUser;
    PetscCall(VecCopy(v, out));  // R_u = diag(1, −e)
    PetscCall(scaleVelocity(out));
    PetscFunctionReturn(0);
  }
  PetscErrorCode resetJacobianTransposeAction(const EventId &, PetscReal, Vec, const ModeContext &, Vec w, Vec out) const override {
    PetscFunctionBeginUser;
    PetscCall(VecCopy(w, out));  // R_uᵀ = R_u (diagonal)
    PetscCall(scaleVelocity(out));
    PetscFunctionReturn(0);
  }
  // The model has no parameters and the reset does not depend on t: R_p and R_t are zero.
  PetscErrorCode resetJacobianP(const EventId &, PetscReal, Vec, const ModeContext &, Mat) const override { return 0; }
  PetscErrorCode resetTimeDerivative(const EventId &, PetscReal, Vec, const ModeContext &, Vec Rt) const override { return VecZeroEntries(Rt); }

private:
  PetscErrorCode scaleVelocity(Vec u) const {
    PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArray(u, &x));
    if (rank_ == 0) x[1] *= -e_;
    PetscCall(VecRestoreArray(u, &x));
    PetscFunctionReturn(0);
  }
  PetscReal e_;
  Direction dir_;
};

// Closed form of the ball from (10, 0) with e = 0.8 at T = 5 (two impacts).
const PetscReal qT = 3.41068478181, vT = -3.66686304364;

// J = ∫ q² dt: an integral cost (the quadrature reads the integrator's stages).
class IntegralOfSquare : public CostFunction {
public:
  bool hasIntegrand() const override { return true; }
  PetscErrorCode integrand(PetscReal, Vec u, const ModeContext &, PetscScalar *value) const override {
    const PetscScalar *x;
    PetscMPIInt rank;
    PetscFunctionBeginUser;
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
    PetscCall(VecGetArrayRead(u, &x));
    if (rank == 0) *value = x[0] * x[0];
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode integrandGradient(PetscReal, Vec u, const ModeContext &, Vec ru, PetscScalar *) const override {
    const PetscScalar *x;
    PetscMPIInt rank;
    PetscScalar q = 0;
    PetscFunctionBeginUser;
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
    PetscCall(VecGetArrayRead(u, &x));
    if (rank == 0) q = x[0];
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscCall(VecSet(ru, 0.0));
    if (rank == 0) PetscCall(VecSetValue(ru, 0, 2 * q, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(ru));
    PetscCall(VecAssemblyEnd(ru));
    PetscFunctionReturn(0);
  }
};

double finalStateError(Solver &s) {
  const PetscScalar *x;
  double err = 0;
  PetscMPIInt rank;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  VecGetArrayRead(s.result().finalState(), &x);
  if (rank == 0) err = std::max(std::fabs(x[0] - qT), std::fabs(x[1] - vT));
  VecRestoreArrayRead(s.result().finalState(), &x);
  MPI_Bcast(&err, 1, MPI_DOUBLE, 0, PETSC_COMM_WORLD);
  return err;
}

} // namespace

// PETSc's theta method is defined for 0 < θ ≤ 1; θ = 2 with -ts_theta_endpoint used to return
// forward/adjoint gradients 0.4–1.3 % off finite differences through the impacts.
TEST(RunConfiguration, ThetaOutOfRangeIsRefused) {
  for (const char *theta : {"2", "1.5", "0", "-1"})
    for (bool forward : {false, true}) {
      Ball model(10, 0, 0.8);
      Solver s(model);
      ASSERT_EQ(configureFixedStep(s, TSTHETA, 0.01, 5.0, std::string("-ts_theta_endpoint -ts_theta_theta ") + theta), 0);
      s.setForwardSensitivities(forward);
      ErrorCapture err;
      EXPECT_NE(s.solve(), 0) << "theta " << theta << (forward ? " forward" : " plain");
      EXPECT_NE(err.message().find("-ts_theta_theta"), std::string::npos) << err.message();
      EXPECT_NE(err.message().find("0 < theta <= 1"), std::string::npos) << err.message();
    }
  // Inside the range: legal, with sensitivities too; except θ = 1 in the endpoint form with
  // forward sensitivities, whose PETSc tangent step divides by θ − 1 (NaN, reported as if the
  // model's resetJacobianAction had returned it): refused, pointing to beuler.
  for (const char *theta : {"1", "0.5"})
    for (int run = 0; run < 3; ++run) {
      Ball model(10, 0, 0.8);
      IntegralOfSquare J;
      Solver s(model);
      s.addCost(J);
      ASSERT_EQ(configureFixedStep(s, TSTHETA, 0.01, 5.0, std::string("-ts_theta_endpoint -ts_theta_theta ") + theta), 0);
      s.setForwardSensitivities(run == 1);
      s.setAdjoint(run == 2);
      ErrorCapture err;
      const PetscErrorCode ierr = s.solve();
      if (run == 1 && !strcmp(theta, "1")) {
        EXPECT_NE(ierr, 0);
        EXPECT_NE(err.message().find("-ts_type beuler"), std::string::npos) << err.message();
      } else EXPECT_EQ(ierr, 0) << "theta " << theta << " run " << run << ": " << err.message();
    }
}

// The midpoint form's stage is X(t + θh): the integral cost's quadrature, written for endpoint
// stages, was first-order accurate only (bouncing_ball -ts_type theta: ψ off by 0.032 at dt
// 1e-3, 0.016 at 5e-4) although the state is second-order. Refused with integral costs even
// in a plain run; a plain run without integral costs stays legal.
TEST(RunConfiguration, MidpointThetaWithIntegralCostIsRefused) {
  {
    Ball model(10, 0, 0.8);
    IntegralOfSquare J;
    Solver s(model);
    s.addCost(J);
    ASSERT_EQ(configureFixedStep(s, TSTHETA, 0.01, 5.0), 0);
    ErrorCapture err;
    EXPECT_NE(s.solve(), 0);
    EXPECT_NE(err.message().find("midpoint"), std::string::npos) << err.message();
    EXPECT_NE(err.message().find("-ts_theta_endpoint"), std::string::npos) << err.message();
  }
  Ball model(10, 0, 0.8);
  Solver s(model);
  ASSERT_EQ(configureFixedStep(s, TSTHETA, 0.01, 5.0), 0);
  ASSERT_EQ(s.solve(), 0);
  EXPECT_LT(finalStateError(s), 1e-8);  // θ = 1/2 integrates the quadratic motion exactly
}

// Types the engine cannot use get the library's message listing the supported ones, not
// PETSc's "Cannot locate function TSThetaGetTheta_C" or "No method step".
TEST(RunConfiguration, UnsupportedTypesAreNamed) {
  for (const char *type : {TSGLLE, TSMIMEX, TSEIMEX}) {
    Ball model(10, 0, 0.8);
    Solver s(model);
    ASSERT_EQ(configureFixedStep(s, type, 0.01, 5.0), 0);
    ErrorCapture err;
    EXPECT_NE(s.solve(), 0) << type;
    EXPECT_NE(err.message().find(std::string("-ts_type ") + type + " is not supported"), std::string::npos) << err.message();
    EXPECT_NE(err.message().find("beuler, cn or rk"), std::string::npos) << err.message();
  }
  // Types that step a plain simulation correctly but whose stages the integral costs (and the
  // sensitivities) cannot read.
  for (const char *type : {TSEULER, TSSSP, TSBDF, TSARKIMEX, TSROSW, TSALPHA})
    for (int sens = 0; sens < 3; ++sens) {
      Ball model(10, 0, 0.8);
      IntegralOfSquare J;
      Solver s(model);
      if (sens == 0) s.addCost(J);
      if (sens == 1) s.setForwardSensitivities(true);
      if (sens == 2) s.setAdjoint(true);
      ASSERT_EQ(configureFixedStep(s, type, 0.01, 5.0), 0);
      ErrorCapture err;
      EXPECT_NE(s.solve(), 0) << type << " case " << sens;
      EXPECT_NE(err.message().find(std::string("-ts_type ") + type + " is not supported with integral costs or sensitivities"),
                std::string::npos)
          << err.message();
    }
}

// The engine re-takes steps from a saved start (ts->steprollback): the one-step and BDF types
// allowed in plain runs converge through two impacts with resets at their order.
TEST(RunConfiguration, PlainTypesStepThroughImpacts) {
  for (const char *type : {TSEULER, TSSSP, TSBDF, TSARKIMEX, TSROSW, TSALPHA, TSBEULER, TSCN, TSRK}) {
    double err[2];
    for (int k = 0; k < 2; ++k) {
      Ball model(10, 0, 0.8);
      Solver s(model);
      ASSERT_EQ(configureFixedStep(s, type, k ? 0.005 : 0.01, 5.0), 0);
      ASSERT_EQ(s.solve(), 0) << type;
      ASSERT_EQ(s.result().events().size(), 2u) << type;
      err[k] = finalStateError(s);
    }
    // Exact for the quadratic motion (up to event location), or halved with the step.
    EXPECT_TRUE(err[1] < 1e-9 || err[1] < 0.6 * err[0]) << type << ": " << err[0] << " then " << err[1];
  }
}

// A guard on its surface with zero rate at the start (or right after a reset) had side 0 and
// could never fire: the ball fell through the floor with exit 0.
TEST(RunConfiguration, GuardRestingOnItsSurfaceIsGrazing) {
  struct Case {
    PetscReal q0, v0, e;
    const char *what;
  } cases[] = {{0, 0, 0.8, "starts on the floor at rest"}, {10, 0, 0.0, "rests on the floor after e = 0"}};
  for (const auto &c : cases)
    for (const char *type : {TSRK, TSCN}) {
      Ball model(c.q0, c.v0, c.e);
      Solver s(model);
      ASSERT_EQ(configureFixedStep(s, type, 0.01, 5.0), 0);
      ErrorCapture err;
      EXPECT_NE(s.solve(), 0) << c.what << " " << type;
      EXPECT_NE(err.message().find("Grazing"), std::string::npos) << err.message();
      EXPECT_NE(err.message().find("'impact'"), std::string::npos) << err.message();
      EXPECT_NE(err.message().find("-hs_grazing_tol"), std::string::npos) << err.message();
      EXPECT_NE(err.message().find("discrete state [" + std::string(c.e == 0 ? "1" : "0") + "]"), std::string::npos) << err.message();
    }
}

// Legal neighbours of the grazing case: on the surface with a nonzero rate moving away (every
// impact's post-reset state, here also the initial state), and on the surface at zero rate
// leaving it away from the direction the guard fires.
TEST(RunConfiguration, GuardLeavingItsSurfaceIsLegal) {
  {
    Ball model(0, 9.81, 0.8);  // thrown up from the floor: lands at t = 2
    Solver s(model);
    ASSERT_EQ(configureFixedStep(s, TSRK, 0.01, 3.0), 0);
    ASSERT_EQ(s.solve(), 0);
    ASSERT_EQ(s.result().events().size(), 1u);
    EXPECT_NEAR(s.result().events().records()[0].time, 2.0, 1e-10);
  }
  Ball model(0, 0, 0.8, Direction::Rising);  // falls from the surface of a rising guard
  Solver s(model);
  ASSERT_EQ(configureFixedStep(s, TSRK, 0.01, 3.0), 0);
  ASSERT_EQ(s.solve(), 0);
  EXPECT_EQ(s.result().events().size(), 0u);
}

// x' = −x + sin t declared time-independent: refused in a plain run too (a model without events
// at its initial state), naming explicitTime() and rhsTimeDerivative().
TEST(RunConfiguration, HiddenTimeDependenceIsRefusedInPlainRuns) {
  TestModel model(1);
  model.x0 = {1};
  model.f = [](PetscReal t, const PetscScalar *x, PetscScalar *y, const ModeContext &) { y[0] = -x[0] + std::sin(t); };
  model.dfdu = [](PetscReal, const PetscScalar *, PetscScalar *a, const ModeContext &) { a[0] = -1; };
  Solver s(model);
  ASSERT_EQ(configureFixedStep(s, TSRK, 0.01, 1.0), 0);
  ErrorCapture err;
  EXPECT_NE(s.solve(), 0);
  EXPECT_NE(err.message().find("explicitTime()"), std::string::npos) << err.message();
  EXPECT_NE(err.message().find("rhsTimeDerivative()"), std::string::npos) << err.message();
}

// A fixed step too small to reach the final time ran for hours (1e-300: forever); now refused
// before the first step with the number of steps it would take.
TEST(RunConfiguration, StepTooSmallToFinishIsRefused) {
  struct Case {
    PetscReal dt, T;
    const char *options, *expected;
  } cases[] = {{1e-300, 5, "", "more than -ts_max_steps"},
               {1e-9, 100, "", "1e+11 fixed steps"},
               {1e-6, 5, "-ts_max_steps 1000", "more than -ts_max_steps 1000"},
               {1e-3, 5, "-ts_max_steps 1000", "more than -ts_max_steps 1000"}};
  for (const auto &c : cases) {
    Ball model(10, 0, 0.8);
    Solver s(model);
    ASSERT_EQ(configureFixedStep(s, TSRK, c.dt, c.T, c.options), 0);
    ErrorCapture err;
    EXPECT_NE(s.solve(), 0) << c.dt;
    EXPECT_NE(err.message().find("-ts_dt"), std::string::npos) << err.message();
    EXPECT_NE(err.message().find(c.expected), std::string::npos) << err.message();
  }
  // 5000 steps of 1e-3 fit in -ts_max_steps 6000; an adaptive controller grows a tiny step.
  {
    Ball model(10, 0, 0.8);
    Solver s(model);
    ASSERT_EQ(configureFixedStep(s, TSRK, 1e-3, 5.0, "-ts_max_steps 6000"), 0);
    EXPECT_EQ(s.solve(), 0);
  }
  Ball model(10, 0, 0.8);
  Solver s(model);
  ScopedOptions o("-ts_adapt_type basic -ts_rk_type 5dp");
  ASSERT_EQ(s.setFromOptions(), 0);
  ASSERT_EQ(TSSetType(s.ts(), TSRK), 0);
  ASSERT_EQ(TSSetTimeStep(s.ts(), 1e-300), 0);
  ASSERT_EQ(TSSetMaxTime(s.ts(), 5.0), 0);
  ASSERT_EQ(s.setFromOptions(), 0);
  ASSERT_EQ(s.solve(), 0);
  EXPECT_LT(finalStateError(s), 1e-6);
}
