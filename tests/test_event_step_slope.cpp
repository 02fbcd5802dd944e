// The slope du1/dh of a theta-method step's end state (StepDerivative), which makes event
// location's samples Hermite data. Linear models, where every theta method has a closed form:
// for u' = λu, u1 = u0 (1 + (1 − θ)λh)/(1 − θλh) (endpoint or not), so du1/dh = u0 λ/(1 − θλh)²;
// for x' = −x + y, 0 = y − a x (consistent start), x1 = x0 (1 + (1 − θ)μh)/(1 − θμh) with
// μ = a − 1 and y1 = a x1. A linear step's Newton matrix is exact, so the slope is exact to
// round-off.
#include "test_support.hpp"

#include "engine/dynamics.hpp"
#include "engine/step_derivative.hpp"

#include <hybridsens/hybridsens.hpp>

#include <cmath>

using namespace hybridsens;

#define HS_OK(expr) ASSERT_EQ((PetscErrorCode)(expr), 0)

namespace {

// dae = false: u' = λu (one state). dae = true: x' = −x + y, 0 = y − a x.
class LinearModel : public HybridModel {
public:
  explicit LinearModel(bool dae) : dae_(dae) {}
  static constexpr PetscReal lambda = -3.0, a = 2.0;
  MPI_Comm comm() const override { return PETSC_COMM_SELF; }
  PetscInt localSize() const override { return dae_ ? 2 : 1; }
  std::vector<PetscInt> algebraicIndices() const override { return dae_ ? std::vector<PetscInt>{1} : std::vector<PetscInt>{}; }
  DiscreteState initialDiscreteState() const override { return {0}; }
  std::vector<PetscReal> defaultParameters() const override { return {}; }
  PetscErrorCode initialState(const ModeContext &, Vec u0) const override { return VecSet(u0, 1.0); }
  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &, Vec f) const override {
    const PetscScalar *x;
    PetscScalar *fa;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(VecGetArray(f, &fa));
    if (dae_) {
      fa[0] = -x[0] + x[1];
      fa[1] = x[1] - a * x[0];
    } else fa[0] = lambda * x[0];
    PetscCall(VecRestoreArray(f, &fa));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobian(PetscReal, Vec, const ModeContext &, Mat J) const override {
    const PetscInt cols[2] = {0, 1};
    const PetscScalar dae[4] = {-1.0, 1.0, -a, 1.0}, ode[1] = {lambda};
    PetscFunctionBeginUser;
    if (dae_) PetscCall(MatSetValues(J, 2, cols, 2, cols, dae, INSERT_VALUES));
    else PetscCall(MatSetValues(J, 1, cols, 1, cols, ode, INSERT_VALUES));
    PetscFunctionReturn(0);
  }

private:
  bool dae_;
};

// u' = −u², u(0) = 1: a nonlinear step, whose Newton iteration factors its last matrix at the
// iterate before the converged one. CN: u1 − u0 + h (u0² + u1²)/2 = 0, so du1/dh =
// −(u0² + u1²)/2 / (1 + h u1); backward Euler: u1 − u0 + h u1² = 0, so du1/dh = −u1²/(1 + 2h u1).
class QuadraticModel : public HybridModel {
public:
  MPI_Comm comm() const override { return PETSC_COMM_SELF; }
  PetscInt localSize() const override { return 1; }
  DiscreteState initialDiscreteState() const override { return {0}; }
  std::vector<PetscReal> defaultParameters() const override { return {}; }
  PetscErrorCode initialState(const ModeContext &, Vec u0) const override { return VecSet(u0, 1.0); }
  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &, Vec f) const override {
    const PetscScalar *x;
    PetscScalar *fa;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(VecGetArray(f, &fa));
    fa[0] = -x[0] * x[0];
    PetscCall(VecRestoreArray(f, &fa));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobian(PetscReal, Vec u, const ModeContext &, Mat J) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    const PetscScalar v = -2 * x[0];
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscCall(MatSetValue(J, 0, 0, v, INSERT_VALUES));
    PetscFunctionReturn(0);
  }
};

// The same model with f undefined (NaN) at times 0.5–5 % of a step of size kNanStep from its
// end: where the curvature's differences of f probe, not where the step or its slope evaluate.
class QuadraticModelNanOffTrajectory : public QuadraticModel {
public:
  static constexpr PetscReal kNanStep = 0.5;
  PetscErrorCode rhs(PetscReal t, Vec u, const ModeContext &c, Vec f) const override {
    PetscFunctionBeginUser;
    PetscCall(QuadraticModel::rhs(t, u, c, f));
    const PetscReal off = std::fabs(t - kNanStep) / kNanStep;
    if (off > 5e-3 && off < 5e-2) PetscCall(VecSet(f, NAN));
    PetscFunctionReturn(0);
  }
};

struct Slope {
  bool available = false, secondAvailable = false;
  std::vector<PetscScalar> dudh, u1, d2udh2;
};

// One step of size h from the consistent start (1, a) or 1 with the given TS type, then its
// slope; with `reassemble`, the model's Jacobian is evaluated again in between.
PetscErrorCode slopeOfOneStep(const HybridModel &model, TSType type, PetscReal theta, PetscBool endpoint, PetscReal h, bool reassemble, Slope &out,
                              bool tightNewton = false) {
  const bool dae = !model.algebraicIndices().empty();
  Dynamics dyn(model, {}, 0);
  TS ts;
  Vec u, u0, dudh;
  PetscFunctionBeginUser;
  PetscCall(dyn.setUp());
  dyn.mode = {0};
  PetscCall(TSCreate(PETSC_COMM_SELF, &ts));
  PetscCall(dyn.attach(ts));
  PetscCall(TSSetType(ts, type));
  if (theta > 0) {
    PetscCall(TSThetaSetTheta(ts, theta));
    PetscCall(TSThetaSetEndpoint(ts, endpoint));
  }
  PetscCall(VecDuplicate(dyn.templateVec(), &u));
  PetscCall(VecSet(u, 1.0));
  if (dae) PetscCall(VecSetValue(u, 1, LinearModel::a, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(u));
  PetscCall(VecAssemblyEnd(u));
  PetscCall(VecDuplicate(u, &u0));
  PetscCall(VecCopy(u, u0));
  PetscCall(VecDuplicate(u, &dudh));
  PetscCall(TSSetSolution(ts, u));
  PetscCall(TSSetTime(ts, 0.0));
  PetscCall(TSSetTimeStep(ts, h));
  PetscCall(TSSetMaxTime(ts, 1.0));
  PetscCall(TSSetUp(ts));
  if (tightNewton) {  // the step equation solved to round-off: closed forms hold at the computed u1
    SNES snes;
    PetscCall(TSGetSNES(ts, &snes));
    PetscCall(SNESSetTolerances(snes, 1e-15, 1e-15, 0.0, 50, PETSC_DEFAULT));
  }
  PetscCall(TSStep(ts));
  StepDerivative sd(dyn);
  PetscCall(sd.noteStepTaken(ts));
  if (reassemble) PetscCall(dyn.rhsJacobian(h, u, dyn.mode));
  PetscCall(sd.compute(ts, 0.0, u0, h, u, dudh, &out.available));
  Vec d2udh2 = nullptr;
  PetscCall(sd.secondDerivative(0.0, h, dudh, &d2udh2, &out.secondAvailable));
  PetscInt n;
  const PetscScalar *d;
  PetscCall(VecGetLocalSize(dudh, &n));
  if (out.secondAvailable) {
    PetscCall(VecGetArrayRead(d2udh2, &d));
    out.d2udh2.assign(d, d + n);
    PetscCall(VecRestoreArrayRead(d2udh2, &d));
  }
  PetscCall(VecGetArrayRead(dudh, &d));
  out.dudh.assign(d, d + n);
  PetscCall(VecGetArrayRead(u, &d));
  out.u1.assign(d, d + n);
  PetscCall(VecRestoreArrayRead(u, &d));
  PetscCall(VecRestoreArrayRead(dudh, &d));
  PetscCall(VecDestroy(&dudh));
  PetscCall(VecDestroy(&u0));
  PetscCall(VecDestroy(&u));
  PetscCall(TSDestroy(&ts));
  PetscFunctionReturn(0);
}

PetscReal closedForm(PetscReal rate, PetscReal theta, PetscReal h) { return rate / std::pow(1 - theta * rate * h, 2); }
// d²u1/dh² of the same closed form: 2θ rate² / (1 − θ rate h)³.
PetscReal closedFormSecond(PetscReal rate, PetscReal theta, PetscReal h) { return 2 * theta * rate * rate / std::pow(1 - theta * rate * h, 3); }

} // namespace

TEST(EventStepSlope, ThetaMethodsOnAnOdeMatchTheClosedForm) {
  struct Case {
    TSType type;
    PetscReal theta;  // 0: the type's own
    PetscBool endpoint;
    PetscReal effectiveTheta;
  };
  const PetscReal h = 0.2;
  for (const Case &c : {Case{TSCN, 0, PETSC_TRUE, 0.5}, Case{TSBEULER, 0, PETSC_FALSE, 1.0}, Case{TSTHETA, 0.7, PETSC_FALSE, 0.7},
                        Case{TSTHETA, 0.7, PETSC_TRUE, 0.7}}) {
    Slope s;
    HS_OK(slopeOfOneStep(LinearModel(false), c.type, c.theta, c.endpoint, h, false, s));
    ASSERT_TRUE(s.available) << c.type;
    const PetscReal want = closedForm(LinearModel::lambda, c.effectiveTheta, h);
    EXPECT_NEAR(s.dudh[0], want, 1e-12 * std::fabs(want)) << c.type << " theta " << c.effectiveTheta << " endpoint " << c.endpoint;
    // The second derivative: f is linear, so its central differences are exact up to rounding.
    ASSERT_TRUE(s.secondAvailable) << c.type;
    const PetscReal want2 = closedFormSecond(LinearModel::lambda, c.effectiveTheta, h);
    EXPECT_NEAR(s.d2udh2[0], want2, 1e-8 * std::fabs(want2)) << c.type << " theta " << c.effectiveTheta << " endpoint " << c.endpoint;
  }
}

TEST(EventStepSlope, CrankNicolsonOnADaeMatchesTheClosedFormInBothComponents) {
  const PetscReal h = 0.2, mu = LinearModel::a - 1, want = closedForm(mu, 0.5, h);
  Slope s;
  HS_OK(slopeOfOneStep(LinearModel(true), TSCN, 0, PETSC_TRUE, h, false, s));
  ASSERT_TRUE(s.available);
  EXPECT_NEAR(s.dudh[0], want, 1e-12 * want);
  EXPECT_NEAR(s.dudh[1], LinearModel::a * want, 1e-12 * want);
  const PetscReal want2 = closedFormSecond(mu, 0.5, h);
  ASSERT_TRUE(s.secondAvailable);
  EXPECT_NEAR(s.d2udh2[0], want2, 1e-8 * want2);
  EXPECT_NEAR(s.d2udh2[1], LinearModel::a * want2, 1e-8 * want2);  // the algebraic row too
}

// Only the step's own factored matrix is used: once something re-assembled it, or for a method
// without one (explicit RK), there is no slope (location then interpolates values alone).
TEST(EventStepSlope, NoSlopeFromAReassembledMatrixOrAnExplicitMethod) {
  Slope s;
  HS_OK(slopeOfOneStep(LinearModel(true), TSCN, 0, PETSC_TRUE, 0.2, true, s));
  EXPECT_FALSE(s.available);
  EXPECT_FALSE(s.secondAvailable);
  HS_OK(slopeOfOneStep(LinearModel(false), TSRK, 0, PETSC_TRUE, 0.2, false, s));
  EXPECT_FALSE(s.available);
  EXPECT_FALSE(s.secondAvailable);
}

// A nonlinear step: the slope is exact to round-off, not one Newton iterate behind. With the
// matrix the Newton iteration factored last (at the iterate before the converged one) it is
// 5e-10 off here even with the step solved to round-off (1e-3 on the stiff 3-area grid, where
// event location then gained only three digits per re-take).
TEST(EventStepSlope, NonlinearStepSlopeIsExactNotOneNewtonIterateBehind) {
  const PetscReal h = 0.5;
  QuadraticModel model;
  Slope s;
  HS_OK(slopeOfOneStep(model, TSCN, 0, PETSC_TRUE, h, false, s, true));
  ASSERT_TRUE(s.available);
  const PetscReal u1 = PetscRealPart(s.u1[0]), cn = -(1 + u1 * u1) / 2 / (1 + h * u1);
  EXPECT_NEAR(PetscRealPart(s.dudh[0]), cn, 1e-13 * std::fabs(cn));
  HS_OK(slopeOfOneStep(model, TSBEULER, 0, PETSC_FALSE, h, false, s, true));
  ASSERT_TRUE(s.available);
  const PetscReal v1 = PetscRealPart(s.u1[0]), be = -v1 * v1 / (1 + 2 * h * v1);
  EXPECT_NEAR(PetscRealPart(s.dudh[0]), be, 1e-13 * std::fabs(be));
}

// The second derivative of a nonlinear step, where f_uu enters (through the central difference
// of f, exact here up to rounding: f is quadratic). CN, differentiating u1 − u0 + h(u0² + u1²)/2 = 0
// twice: u1'' = −(2u1 u1' + h u1'²)/(1 + h u1). Without the f_uu term the value would be
// −2u1 u1'/(1 + h u1), 10 % off here.
TEST(EventStepSlope, NonlinearStepSecondDerivativeMatchesTheClosedForm) {
  const PetscReal h = 0.5;
  QuadraticModel model;
  Slope s;
  HS_OK(slopeOfOneStep(model, TSCN, 0, PETSC_TRUE, h, false, s, true));
  ASSERT_TRUE(s.secondAvailable);
  const PetscReal u1 = PetscRealPart(s.u1[0]), d1 = PetscRealPart(s.dudh[0]);
  const PetscReal want = -(2 * u1 * d1 + h * d1 * d1) / (1 + h * u1);
  EXPECT_NEAR(PetscRealPart(s.d2udh2[0]), want, 1e-8 * std::fabs(want));
  EXPECT_GT(std::fabs(-2 * u1 * d1 / (1 + h * u1) - want), 0.05 * std::fabs(want));  // the f_uu term matters
}

// f undefined where the curvature's differences probe (off the trajectory): the location does
// without the curvature — values and slopes as before — instead of ending the run with a NaN
// error from a point the integrator never visits.
TEST(EventStepSlope, CurvatureIsDroppedWhereFIsUndefinedOffTheTrajectory) {
  QuadraticModelNanOffTrajectory model;
  Slope s;
  HS_OK(slopeOfOneStep(model, TSCN, 0, PETSC_TRUE, QuadraticModelNanOffTrajectory::kNanStep, false, s, true));
  EXPECT_TRUE(s.available) << "the slope needs no probe";
  EXPECT_FALSE(s.secondAvailable);
}
