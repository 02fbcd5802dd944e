// Hessians through the discrete adjoint (hybridsens/hessian.hpp).
//
// Model (everything on rank 0): a damped pendulum with a parameter-dependent stiffening term and
// an initial state that depends nonlinearly on p, so that every second-derivative block is
// non-zero (f_uu, f_up, f_pp, u0_pp):
//   x' = y,   y' = -p0 sin x - p1 y + p2 x y + 0.1 p0² x,   x(0) = 0.5 + 0.1 p2², y(0) = 0.2,
//   p = (1.3, 0.4, 0.25), T = 2.
// Three costs in one solver (each exercises one kind of term):
//   terminal     ψ = x(T)² y(T) + p0 x(T),
//   integral     ∫ x² y² + p1 y² dt,
//   measurements Σ_i (x(t_i) - d_i)² + p2 y(t_i)², t_i = 0.1 i (i = 0…20), d_i = cos(t_i).
// Asserted for RK4, RK3, RK2a, Crank–Nicolson, backward Euler and endpoint θ = 0.7:
//   * the second-order sweep's gradient equals the library's adjoint gradient (≤ 1e-12);
//   * Hessians symmetric (≤ 1e-10), forward-over-adjoint = hybrid formula (≤ 1e-10), and each
//     parameter column = central differences of the adjoint gradient (≤ 1e-7, checkHessian);
//   * a Hessian-vector product in an arbitrary direction equals H·v (≤ 1e-12);
// and: initial-state components as variables equal the same variables written as parameters;
// a mode switch at a fixed time is differentiated exactly; a missing measurement term is caught
// by the finite-difference check (must fail); refusals: state event, reset, p-dependent event
// time, DAE, missing products, parameters changed since the solve.
#include "hessian_products.hpp"
#include "test_support.hpp"

#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

#include <cmath>

using namespace hybridsens;
using hstest::ErrorCapture;
using hstest::ScopedOptions;

#define HS_OK(expr) ASSERT_EQ((PetscErrorCode)(expr), 0)

namespace {

// Local arrays of a rank-0 state (other ranks own nothing).
struct Local {
  Vec v;
  const PetscScalar *a = nullptr;
  explicit Local(Vec x) : v(x) { VecGetArrayRead(v, &a); }
  ~Local() { VecRestoreArrayRead(v, &a); }
};
struct LocalW {
  Vec v;
  PetscScalar *a = nullptr;
  explicit LocalW(Vec x) : v(x) { VecGetArray(v, &a); }
  ~LocalW() { VecRestoreArray(v, &a); }
};

int rank() {
  PetscMPIInt r;
  MPI_Comm_rank(PETSC_COMM_WORLD, &r);
  return r;
}

class Pendulum : public HybridModel, public hstest::ModelProducts {
public:
  // parametersForU0: x(0), y(0) are the extra parameters p3, p4 (instead of fixed values).
  explicit Pendulum(bool parametersForU0 = false) : u0p_(parametersForU0) {}
  PetscInt localSize() const override { return rank() == 0 ? 2 : 0; }
  DiscreteState initialDiscreteState() const override { return {0}; }
  std::vector<PetscReal> defaultParameters() const override {
    if (u0p_) return {1.3, 0.4, 0.25, 0.5 + 0.1 * 0.25 * 0.25, 0.2};
    return {1.3, 0.4, 0.25};
  }
  PetscErrorCode initialState(const ModeContext &c, Vec u0) const override {
    LocalW u(u0);
    if (rank() == 0) {
      u.a[0] = u0p_ ? c.p[3] : 0.5 + 0.1 * c.p[2] * c.p[2];
      u.a[1] = u0p_ ? c.p[4] : 0.2;
    }
    return 0;
  }
  PetscErrorCode initialStateJacobianP(const ModeContext &c, Mat du0dp) const override {
    PetscFunctionBeginUser;
    if (rank() == 0) {
      if (u0p_) {
        PetscCall(MatSetValue(du0dp, 0, 3, 1.0, INSERT_VALUES));
        PetscCall(MatSetValue(du0dp, 1, 4, 1.0, INSERT_VALUES));
      } else PetscCall(MatSetValue(du0dp, 0, 2, 0.2 * c.p[2], INSERT_VALUES));
    }
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &c, Vec f) const override {
    Local x(u);
    LocalW y(f);
    if (rank() == 0) {
      const PetscReal *p = c.p.data(), s = switchFactor(c);
      y.a[0] = x.a[1];
      y.a[1] = s * (-p[0] * std::sin(x.a[0]) - p[1] * x.a[1] + p[2] * x.a[0] * x.a[1] + 0.1 * p[0] * p[0] * x.a[0]);
    }
    return 0;
  }
  PetscErrorCode rhsJacobian(PetscReal, Vec u, const ModeContext &c, Mat J) const override {
    Local x(u);
    PetscFunctionBeginUser;
    if (rank() == 0) {
      const PetscReal *p = c.p.data(), s = switchFactor(c);
      const PetscInt idx[2] = {0, 1};
      const PetscScalar a[4] = {0, 1, s * (-p[0] * std::cos(x.a[0]) + p[2] * x.a[1] + 0.1 * p[0] * p[0]), s * (-p[1] + p[2] * x.a[0])};
      PetscCall(MatSetValues(J, 2, idx, 2, idx, a, INSERT_VALUES));
    }
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobianP(PetscReal, Vec u, const ModeContext &c, Mat Jp) const override {
    Local x(u);
    PetscFunctionBeginUser;
    if (rank() == 0) {
      const PetscReal *p = c.p.data(), s = switchFactor(c);
      PetscCall(MatSetValue(Jp, 1, 0, s * (-std::sin(x.a[0]) + 0.2 * p[0] * x.a[0]), INSERT_VALUES));
      PetscCall(MatSetValue(Jp, 1, 1, -s * x.a[1], INSERT_VALUES));
      PetscCall(MatSetValue(Jp, 1, 2, s * x.a[0] * x.a[1], INSERT_VALUES));
    }
    PetscFunctionReturn(0);
  }
  // h = w·f: only the second row depends on (x, y, p) nonlinearly.
  PetscErrorCode product(PetscReal, Vec u, const ModeContext &c, Vec w, Vec v, const PetscScalar *vp, Vec hu,
                                   PetscScalar *hp) const override {
    Local x(u), wl(w), vl(v);
    LocalW h(hu);
    if (rank() == 0) {
      const PetscReal *p = c.p.data(), w1 = switchFactor(c) * wl.a[1], X = x.a[0], Y = x.a[1], v0 = vl.a[0], v1 = vl.a[1];
      const PetscReal hxx = w1 * p[0] * std::sin(X), hxy = w1 * p[2];
      const PetscReal hxp0 = w1 * (-std::cos(X) + 0.2 * p[0]), hyp1 = -w1, hxp2 = w1 * Y, hyp2 = w1 * X;
      h.a[0] = hxx * v0 + hxy * v1 + hxp0 * vp[0] + hxp2 * vp[2];
      h.a[1] = hxy * v0 + hyp1 * vp[1] + hyp2 * vp[2];
      hp[0] = hxp0 * v0 + 0.2 * w1 * X * vp[0];
      hp[1] = hyp1 * v1;
      hp[2] = hxp2 * v0 + hyp2 * v1;
    }
    return 0;
  }
  PetscErrorCode initialStateHessianProduct(const ModeContext &, Vec w, const PetscScalar *vp, PetscScalar *hp) const override {
    Local wl(w);
    if (rank() == 0 && !u0p_) hp[2] = 0.2 * wl.a[0] * vp[2];  // x(0) = 0.5 + 0.1 p2²
    return 0;
  }

protected:
  // Mode 1 (after the optional time event) runs the same dynamics slowed down.
  virtual PetscReal switchFactor(const ModeContext &c) const { return c.d.empty() || c.d[0] == 0 ? 1.0 : 0.6; }
  bool u0p_;
};

class Terminal : public CostFunction, public hstest::CostProducts {
public:
  std::string name() const override { return "terminal"; }
  bool hasTerminal() const override { return true; }
  PetscErrorCode terminal(PetscReal, Vec u, const ModeContext &c, PetscScalar *v) const override {
    Local x(u);
    if (rank() == 0) *v = x.a[0] * x.a[0] * x.a[1] + c.p[0] * x.a[0];
    return 0;
  }
  PetscErrorCode terminalGradient(PetscReal, Vec u, const ModeContext &c, Vec gu, PetscScalar *gp) const override {
    Local x(u);
    LocalW g(gu);
    if (rank() == 0) g.a[0] = 2 * x.a[0] * x.a[1] + c.p[0], g.a[1] = x.a[0] * x.a[0], gp[0] = x.a[0];
    return 0;
  }
  PetscErrorCode terminalProduct(PetscReal, Vec u, const ModeContext &, Vec v, const PetscScalar *vp, Vec hu,
                                        PetscScalar *hp) const override {
    Local x(u), vl(v);
    LocalW h(hu);
    if (rank() == 0) {
      h.a[0] = 2 * x.a[1] * vl.a[0] + 2 * x.a[0] * vl.a[1] + vp[0];
      h.a[1] = 2 * x.a[0] * vl.a[0];
      hp[0] = vl.a[0];
    }
    return 0;
  }

};

class Integral : public CostFunction, public hstest::CostProducts {
public:
  std::string name() const override { return "integral"; }
  bool hasIntegrand() const override { return true; }
  PetscErrorCode integrand(PetscReal, Vec u, const ModeContext &c, PetscScalar *v) const override {
    Local x(u);
    if (rank() == 0) *v = x.a[0] * x.a[0] * x.a[1] * x.a[1] + c.p[1] * x.a[1] * x.a[1];
    return 0;
  }
  PetscErrorCode integrandGradient(PetscReal, Vec u, const ModeContext &c, Vec gu, PetscScalar *gp) const override {
    Local x(u);
    LocalW g(gu);
    if (rank() == 0) {
      const PetscReal X = x.a[0], Y = x.a[1];
      g.a[0] = 2 * X * Y * Y, g.a[1] = 2 * X * X * Y + 2 * c.p[1] * Y, gp[1] = Y * Y;
    }
    return 0;
  }
  PetscErrorCode integrandProduct(PetscReal, Vec u, const ModeContext &c, Vec v, const PetscScalar *vp, Vec hu,
                                         PetscScalar *hp) const override {
    Local x(u), vl(v);
    LocalW h(hu);
    if (rank() == 0) {
      const PetscReal X = x.a[0], Y = x.a[1];
      h.a[0] = 2 * Y * Y * vl.a[0] + 4 * X * Y * vl.a[1];
      h.a[1] = 4 * X * Y * vl.a[0] + (2 * X * X + 2 * c.p[1]) * vl.a[1] + 2 * Y * vp[1];
      hp[1] = 2 * Y * vl.a[1];
    }
    return 0;
  }
};

class Measurements : public CostFunction, public hstest::CostProducts {
public:
  explicit Measurements(bool dropSecondOrder = false) : drop_(dropSecondOrder) {
    for (int i = 0; i <= 20; ++i) t_.push_back(0.1 * i);
  }
  std::string name() const override { return "measurements"; }
  std::vector<PetscReal> measurementTimes() const override { return t_; }
  PetscErrorCode measurement(PetscInt i, PetscReal, Vec u, const ModeContext &c, PetscScalar *v) const override {
    Local x(u);
    if (rank() == 0) *v = std::pow(x.a[0] - std::cos(t_[i]), 2) + c.p[2] * x.a[1] * x.a[1];
    return 0;
  }
  PetscErrorCode measurementGradient(PetscInt i, PetscReal, Vec u, const ModeContext &c, Vec gu, PetscScalar *gp) const override {
    Local x(u);
    LocalW g(gu);
    if (rank() == 0) g.a[0] = 2 * (x.a[0] - std::cos(t_[i])), g.a[1] = 2 * c.p[2] * x.a[1], gp[2] = x.a[1] * x.a[1];
    return 0;
  }
  PetscErrorCode measurementProduct(PetscInt, PetscReal, Vec u, const ModeContext &c, Vec v, const PetscScalar *vp, Vec hu,
                                           PetscScalar *hp) const override {
    Local x(u), vl(v);
    LocalW h(hu);
    if (rank() == 0 && !drop_) {
      h.a[0] = 2 * vl.a[0];
      h.a[1] = 2 * c.p[2] * vl.a[1] + 2 * x.a[1] * vp[2];
      hp[2] = 2 * x.a[1] * vl.a[1];
    }
    return 0;
  }

private:
  bool drop_;
  std::vector<PetscReal> t_;
};

using Tensor = std::vector<std::vector<std::vector<PetscScalar>>>;

PetscReal maxAbs(const std::vector<std::vector<PetscScalar>> &A) {
  PetscReal m = 0;
  for (auto &r : A)
    for (auto v : r) m = std::max(m, (PetscReal)std::fabs(v));
  return m;
}

struct Fixture {
  Pendulum model;
  Terminal terminal;
  Integral integral;
  Measurements measurements;
  Solver solver{model};
  explicit Fixture(const std::string &opts, bool u0p = false) : model(u0p) {
    solver.keepTrajectory(true);
    ScopedOptions o(opts);
    solver.addCost(terminal);
    solver.addCost(integral);
    solver.addCost(measurements);
    solver.setFromOptions();
  }
};

// All Hessian properties for one integrator configuration.
void checkAll(const std::string &opts) {
  SCOPED_TRACE(opts);
  Fixture f(opts + " -ts_max_time 2");
  f.solver.setInitialStateSensitivities({0, 1});
  f.solver.setAdjoint(true);
  HS_OK(f.solver.solve());
  // The second-order sweep's own first-order adjoint = the library's adjoint.
  std::vector<std::vector<PetscScalar>> g;
  HS_OK(f.solver.secondOrderGradient(g));
  for (size_t k = 0; k < 3; ++k) {
    std::vector<PetscScalar> ref = f.solver.result().gradient[k].adjointP;
    ref.insert(ref.end(), f.solver.result().gradient[k].adjointU0.begin(), f.solver.result().gradient[k].adjointU0.end());
    PetscReal scale = 0, diff = 0;
    for (size_t i = 0; i < ref.size(); ++i) scale = std::max(scale, (PetscReal)std::fabs(ref[i]));
    for (size_t i = 0; i < ref.size(); ++i) diff = std::max(diff, (PetscReal)std::fabs(ref[i] - g[k][i]));
    EXPECT_LE(diff / scale, 1e-12) << "cost " << k;
  }
  // Symmetry, forward-over-adjoint vs hybrid, and FD of adjoint gradients (parameter columns).
  HessianCheckOptions opt;
  HessianCheckReport rep;
  HS_OK(checkHessian(f.solver, opt, rep));
  EXPECT_TRUE(rep.passed);
  EXPECT_LE(rep.asymmetry, 1e-10);
  EXPECT_LE(rep.foaVsHybrid, 1e-10);
  EXPECT_LE(rep.foaVsFD, 1e-7);
  // Every block is exercised: mixed (u0, p) and (p, p) entries are far from zero.
  for (size_t k = 0; k < 3; ++k) EXPECT_GT(maxAbs(rep.foa[k]), 1e-3) << "cost " << k;
  // A product in an arbitrary direction equals H·v.
  const std::vector<PetscScalar> v = {0.3, -1.1, 0.7, 2.0, -0.4};
  Tensor Hv;
  HS_OK(f.solver.hessianVectorProducts({v}, Hv));
  for (size_t k = 0; k < 3; ++k) {
    const PetscReal scale = maxAbs(rep.foa[k]);
    for (size_t i = 0; i < v.size(); ++i) {
      PetscScalar ref = 0;
      for (size_t j = 0; j < v.size(); ++j) ref += rep.foa[k][i][j] * v[j];
      EXPECT_LE(std::fabs(Hv[k][0][i] - ref), 1e-12 * scale * 5) << "cost " << k << " row " << i;
    }
  }
}

} // namespace

TEST(Hessian, RK4) { checkAll("-ts_type rk -ts_rk_type 4 -ts_dt 0.01"); }
TEST(Hessian, RK3) { checkAll("-ts_type rk -ts_rk_type 3 -ts_dt 0.01"); }
TEST(Hessian, RK2a) { checkAll("-ts_type rk -ts_rk_type 2a -ts_adapt_type none -ts_dt 0.01"); }
TEST(Hessian, CrankNicolson) { checkAll("-ts_type cn -ts_dt 0.01"); }
TEST(Hessian, BackwardEuler) { checkAll("-ts_type beuler -ts_dt 0.01"); }
TEST(Hessian, EndpointTheta07) { checkAll("-ts_type theta -ts_theta_theta 0.7 -ts_theta_endpoint -ts_dt 0.01 -snes_rtol 1e-14 -snes_atol 1e-14"); }

// ---- initial-state components as variables ------------------------------------------------

// With u0 = (p3, p4) and the initial-state components (0, 1) as variables too, the columns of
// p3 and u0[0] (and of p4 and u0[1]) are the same direction: the Hessian must have equal rows
// and columns there. The parameter columns are verified by finite differences above, so this
// verifies the initial-state path (δu_0 = E v, dJ/du0 = λ_0[idx], ∇²J v = σ_0[idx]).
TEST(Hessian, InitialStateComponentsEqualTheSameVariablesAsParameters) {
  for (const char *opts : {"-ts_type rk -ts_rk_type 4 -ts_dt 0.02", "-ts_type cn -ts_dt 0.02"}) {
    SCOPED_TRACE(opts);
    Fixture f(std::string(opts) + " -ts_max_time 2", true);
    f.solver.setInitialStateSensitivities({0, 1});
    HS_OK(f.solver.solve());
    for (HessianMethod m : {HessianMethod::ForwardOverAdjoint, HessianMethod::Hybrid}) {
      Tensor H;
      HS_OK(f.solver.computeHessian(m, H));
      ASSERT_EQ(H[0].size(), 7u);
      for (size_t k = 0; k < 3; ++k) {
        const PetscReal scale = maxAbs(H[k]);
        for (size_t i = 0; i < 7; ++i)
          for (int a = 0; a < 2; ++a) {
            EXPECT_LE(std::fabs(H[k][i][3 + a] - H[k][i][5 + a]), 1e-12 * scale) << "cost " << k << " row " << i;
            EXPECT_LE(std::fabs(H[k][3 + a][i] - H[k][5 + a][i]), 1e-12 * scale) << "cost " << k << " col " << i;
          }
      }
    }
  }
}

// ---- a mode switch at a fixed time (no reset) carries no jump: exact Hessians through it ---

class SwitchedPendulum : public Pendulum {
public:
  enum Variant { FixedTime, WithReset, ParameterTime, StateEvent, GuardNeverFires };
  explicit SwitchedPendulum(Variant v) : v_(v) {}
  PetscInt numTimeEvents() const override { return v_ == StateEvent || v_ == GuardNeverFires ? 0 : 1; }
  TimeEventInfo timeEvent(PetscInt, const std::vector<PetscReal> &p) const override {
    if (v_ == ParameterTime) return {"slow_down", 1.0 + 0.1 * p[1], {0.0, 0.1, 0.0}};
    return {"slow_down", 1.05, {}};
  }
  PetscInt numGuards() const override { return v_ == StateEvent || v_ == GuardNeverFires ? 1 : 0; }
  GuardInfo guardInfo(PetscInt) const override { return {"x_low", v_ == StateEvent ? Direction::Falling : Direction::Rising}; }
  PetscErrorCode guards(PetscReal, Vec u, const ModeContext &c, PetscScalar *g) const override {
    Local x(u);
    if (rank() == 0) g[0] = v_ == StateEvent ? x.a[0] - 0.3 : x.a[0] - 5.0;  // |x| stays below 5: never fires
    return 0;
  }
  PetscErrorCode guardGradient(PetscInt, PetscReal, Vec, const ModeContext &, Vec gu, PetscScalar *gt, PetscScalar *) const override {
    LocalW g(gu);
    if (rank() == 0) g.a[0] = 1.0;
    *gt = 0;
    return 0;
  }
  PetscErrorCode transition(const EventId &, PetscReal, Vec, DiscreteState &d) const override {
    d[0] = 1;
    return 0;
  }
  bool hasReset(const EventId &) const override { return v_ == WithReset; }
  PetscErrorCode reset(const EventId &, PetscReal, Vec um, const ModeContext &, Vec up) const override {
    PetscFunctionBeginUser;
    PetscCall(VecCopy(um, up));
    PetscCall(VecScale(up, 0.9));
    PetscFunctionReturn(0);
  }
  PetscErrorCode resetJacobianAction(const EventId &, PetscReal, Vec, const ModeContext &, Vec v, Vec out) const override {
    PetscFunctionBeginUser;
    PetscCall(VecAXPBY(out, 0.9, 0.0, v));
    PetscFunctionReturn(0);
  }
  PetscErrorCode resetJacobianTransposeAction(const EventId &, PetscReal, Vec, const ModeContext &, Vec w, Vec out) const override {
    PetscFunctionBeginUser;
    PetscCall(VecAXPBY(out, 0.9, 0.0, w));
    PetscFunctionReturn(0);
  }
  // The reset depends on neither p nor t: R_p = 0 (left untouched), R_t = 0.
  PetscErrorCode resetJacobianP(const EventId &, PetscReal, Vec, const ModeContext &, Mat) const override { return 0; }
  PetscErrorCode resetTimeDerivative(const EventId &, PetscReal, Vec, const ModeContext &, Vec Rt) const override {
    return VecZeroEntries(Rt);
  }

private:
  Variant v_;
};

struct SwitchedFixture {
  SwitchedPendulum model;
  Terminal terminal;
  Integral integral;
  Measurements measurements;
  Solver solver{model};
  SwitchedFixture(SwitchedPendulum::Variant v, const std::string &opts) : model(v) {
    solver.keepTrajectory(true);
    ScopedOptions o(opts + " -ts_max_time 2");
    solver.addCost(terminal);
    solver.addCost(integral);
    solver.addCost(measurements);
    solver.setFromOptions();
    solver.setInitialStateSensitivities({1});
  }
};

TEST(Hessian, ModeSwitchAtAFixedTimeIsExact) {
  for (const char *opts : {"-ts_type rk -ts_rk_type 4 -ts_dt 0.01", "-ts_type cn -ts_dt 0.01 -snes_rtol 1e-14 -snes_atol 1e-14"}) {
    SCOPED_TRACE(opts);
    SwitchedFixture f(SwitchedPendulum::FixedTime, opts);
    HS_OK(f.solver.solve());
    ASSERT_EQ(f.solver.result().events().size(), 1u);
    HessianCheckOptions opt;
    HessianCheckReport rep;
    HS_OK(checkHessian(f.solver, opt, rep));
    EXPECT_LE(rep.foaVsFD, 1e-7);
    EXPECT_LE(rep.foaVsHybrid, 1e-10);
    EXPECT_LE(rep.asymmetry, 1e-10);
  }
}

TEST(Hessian, GuardThatNeverFiresIsFine) {
  SwitchedFixture f(SwitchedPendulum::GuardNeverFires, "-ts_type rk -ts_rk_type 4 -ts_dt 0.01");
  HS_OK(f.solver.solve());
  ASSERT_EQ(f.solver.result().events().size(), 0u);
  HessianCheckOptions opt;
  HessianCheckReport rep;
  HS_OK(checkHessian(f.solver, opt, rep));
  EXPECT_TRUE(rep.passed);
}

// ---- must fail: without the measurements' second-order term the FD check catches it --------

TEST(Hessian, MissingMeasurementTermFailsTheFiniteDifferenceCheck) {
  Pendulum model;
  Measurements broken(true);
  Solver solver(model);
  solver.keepTrajectory(true);
  {
    ScopedOptions o("-ts_type rk -ts_rk_type 4 -ts_dt 0.01 -ts_max_time 2");
    solver.addCost(broken);
    HS_OK(solver.setFromOptions());
  }
  HessianCheckOptions opt;
  HessianCheckReport rep;
  ErrorCapture err;
  EXPECT_NE(checkHessian(solver, opt, rep), 0);
  EXPECT_NE(err.message().find("Hessian check FAILED"), std::string::npos) << err.message();
  EXPECT_GT(rep.foaVsFD, 1e-3);        // wrong by a wide margin ...
  EXPECT_LE(rep.foaVsHybrid, 1e-10);   // ... although both exact formulas agree on the wrong model
}

// ---- refusals ------------------------------------------------------------------------------

void expectRefusal(SwitchedPendulum::Variant v, const char *what) {
  SwitchedFixture f(v, "-ts_type rk -ts_rk_type 4 -ts_dt 0.01");
  f.solver.setAdjoint(true);
  HS_OK(f.solver.solve());  // first-order sensitivities through the event are fine
  ASSERT_GE(f.solver.result().events().size(), 1u);
  Tensor H;
  ErrorCapture err;
  EXPECT_NE(f.solver.computeHessian(HessianMethod::Auto, H), 0);
  EXPECT_NE(err.message().find("Hessians through this event are not supported"), std::string::npos) << err.message();
  EXPECT_NE(err.message().find(what), std::string::npos) << err.message();
  ErrorCapture err2;
  EXPECT_NE(f.solver.hessianVectorProducts({{1, 0, 0, 0}}, H), 0);
}

TEST(HessianRefuses, StateEvent) { expectRefusal(SwitchedPendulum::StateEvent, "state event 'x_low'"); }
TEST(HessianRefuses, TimeEventWithReset) { expectRefusal(SwitchedPendulum::WithReset, "with a reset"); }
TEST(HessianRefuses, ParameterDependentEventTime) { expectRefusal(SwitchedPendulum::ParameterTime, "parameter-dependent time"); }

TEST(HessianRefuses, SolveWithHessianOptionThroughAStateEvent) {
  SwitchedFixture f(SwitchedPendulum::StateEvent, "-ts_type rk -ts_rk_type 4 -ts_dt 0.01");
  f.solver.setHessian(true);
  ErrorCapture err;
  EXPECT_NE(f.solver.solve(), 0);
  EXPECT_NE(err.message().find("not supported"), std::string::npos) << err.message();
}

TEST(HessianRefuses, ParametersChangedSinceTheSolve) {
  Fixture f("-ts_type rk -ts_rk_type 4 -ts_dt 0.05 -ts_max_time 1");
  HS_OK(f.solver.solve());
  HS_OK(f.solver.setParameters({1.0, 0.4, 0.25}));
  Tensor H;
  ErrorCapture err;
  EXPECT_NE(f.solver.computeHessian(HessianMethod::Auto, H), 0);
  EXPECT_NE(err.message().find("parameters changed"), std::string::npos) << err.message();
}

// A model without second-derivative products.
class NoProducts : public HybridModel {
public:
  PetscInt localSize() const override { return rank() == 0 ? 1 : 0; }
  std::vector<PetscReal> defaultParameters() const override { return {1.0}; }
  PetscErrorCode initialState(const ModeContext &, Vec u0) const override { return VecSet(u0, 1.0); }
  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &c, Vec f) const override {
    PetscFunctionBeginUser;
    PetscCall(VecCopy(u, f));
    PetscCall(VecScale(f, -c.p[0]));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobian(PetscReal, Vec, const ModeContext &c, Mat J) const override {
    PetscFunctionBeginUser;
    if (rank() == 0) PetscCall(MatSetValue(J, 0, 0, -c.p[0], INSERT_VALUES));
    PetscFunctionReturn(0);
  }
};

TEST(HessianRefuses, MissingProducts) {
  NoProducts model;
  Terminal terminal;
  Solver solver(model);
  solver.keepTrajectory(true);
  solver.addCost(terminal);
  {
    ScopedOptions o("-ts_type rk -ts_rk_type 4 -ts_dt 0.1 -ts_max_time 1");
    HS_OK(solver.setFromOptions());
  }
  HS_OK(solver.solve());
  Tensor H;
  ErrorCapture err;
  EXPECT_NE(solver.computeHessian(HessianMethod::Auto, H), 0);
  EXPECT_NE(err.message().find("SecondOrderModel"), std::string::npos) << err.message();
}

// A plain solve keeps no trajectory (memory and a copy per step that nothing reads); a Hessian
// of it is refused with the remedy named, and keepTrajectory(true) makes the same call work.
TEST(HessianRefuses, PlainSolveKeptNoTrajectory) {
  Pendulum model;
  Terminal terminal;
  Solver solver(model);
  solver.addCost(terminal);
  {
    ScopedOptions o("-ts_type rk -ts_rk_type 4 -ts_dt 0.1 -ts_max_time 1");
    HS_OK(solver.setFromOptions());
  }
  HS_OK(solver.solve());
  Tensor H;
  {
    ErrorCapture err;
    EXPECT_NE(solver.computeHessian(HessianMethod::Auto, H), 0);
    EXPECT_NE(err.message().find("keepTrajectory(true)"), std::string::npos) << err.message();
  }
  solver.keepTrajectory(true);
  HS_OK(solver.solve());
  HS_OK(solver.computeHessian(HessianMethod::Auto, H));
  EXPECT_TRUE(std::isfinite(PetscRealPart(H[0][0][0])));
}

// A semi-explicit DAE (x' = -p x + y, 0 = y - x²/2), with products: refused because it is a DAE.
class SmallDAE : public Pendulum {
public:
  std::vector<PetscInt> algebraicIndices() const override { return rank() == 0 ? std::vector<PetscInt>{1} : std::vector<PetscInt>{}; }
  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &c, Vec f) const override {
    Local x(u);
    LocalW y(f);
    if (rank() == 0) y.a[0] = -c.p[0] * x.a[0] + x.a[1], y.a[1] = x.a[1] - 0.5 * x.a[0] * x.a[0];
    return 0;
  }
  PetscErrorCode rhsJacobian(PetscReal, Vec u, const ModeContext &c, Mat J) const override {
    Local x(u);
    PetscFunctionBeginUser;
    if (rank() == 0) {
      const PetscInt idx[2] = {0, 1};
      const PetscScalar a[4] = {-c.p[0], 1, -x.a[0], 1};
      PetscCall(MatSetValues(J, 2, idx, 2, idx, a, INSERT_VALUES));
    }
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobianP(PetscReal, Vec, const ModeContext &, Mat) const override { return 0; }
};

TEST(HessianRefuses, DAE) {
  SmallDAE model;
  Terminal terminal;
  Solver solver(model);
  solver.keepTrajectory(true);
  solver.addCost(terminal);
  {
    ScopedOptions o("-ts_type beuler -ts_dt 0.1 -ts_max_time 1");
    HS_OK(solver.setFromOptions());
  }
  solver.setInitialStateSensitivities({0});
  HS_OK(solver.solve());
  Tensor H;
  ErrorCapture err;
  EXPECT_NE(solver.computeHessian(HessianMethod::Auto, H), 0);
  EXPECT_NE(err.message().find("DAE"), std::string::npos) << err.message();
}

// ---- a distributed model gives the serial Hessian at every rank count -----------------------
//
// N = 7 uncoupled components split over the ranks in blocks:
//   x_i' = -p0 x_i² + p1 sin x_i + 0.1 p0 p1,  x_i(0) = 1 + 0.1 i;
// costs (sums over all components, each rank contributing its own): terminal p0 Σ x_i³,
// integral p1 Σ x_i², measurements Σ (x_i − 0.5)² at t = 0.5 and 1. Variables: (p0, p1) and
// the initial-state components 0 and N−1 (owned by different ranks). Reference: the same model
// on PETSC_COMM_SELF, solved redundantly on every rank, with the default dense ∂f/∂p (the
// distributed run stores it as AIJ).
constexpr PetscInt kN = 7;

class Decays : public HybridModel, public hstest::ModelProducts {
public:
  bool sparseParameterJacobian = false;  // ∂f/∂p as AIJ (HybridModel::createParameterJacobian)
  PetscErrorCode createParameterJacobian(PetscInt ncols, Mat *Jp) const override {
    *Jp = nullptr;
    if (!sparseParameterJacobian) return 0;
    return MatCreateAIJ(comm(), hi_ - lo_, PETSC_DECIDE, kN, ncols, 2, nullptr, 2, nullptr, Jp);
  }
  explicit Decays(bool distributed) : distributed_(distributed) {
    PetscMPIInt r = 0, size = 1;
    if (distributed) MPI_Comm_rank(PETSC_COMM_WORLD, &r), MPI_Comm_size(PETSC_COMM_WORLD, &size);
    for (PetscMPIInt q = 0; q < r; ++q) lo_ += kN / size + (q < kN % size ? 1 : 0);
    hi_ = lo_ + kN / size + (r < kN % size ? 1 : 0);
  }
  MPI_Comm comm() const override { return distributed_ ? PETSC_COMM_WORLD : PETSC_COMM_SELF; }
  PetscInt localSize() const override { return hi_ - lo_; }
  std::vector<PetscReal> defaultParameters() const override { return {0.8, 0.5}; }
  PetscErrorCode initialState(const ModeContext &, Vec u0) const override {
    LocalW u(u0);
    for (PetscInt i = lo_; i < hi_; ++i) u.a[i - lo_] = 1 + 0.1 * i;
    return 0;
  }
  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &c, Vec f) const override {
    Local x(u);
    LocalW y(f);
    for (PetscInt i = 0; i < hi_ - lo_; ++i) y.a[i] = -c.p[0] * x.a[i] * x.a[i] + c.p[1] * std::sin(x.a[i]) + 0.1 * c.p[0] * c.p[1];
    return 0;
  }
  PetscErrorCode rhsJacobian(PetscReal, Vec u, const ModeContext &c, Mat J) const override {
    Local x(u);
    PetscFunctionBeginUser;
    for (PetscInt i = lo_; i < hi_; ++i)
      PetscCall(MatSetValue(J, i, i, -2 * c.p[0] * x.a[i - lo_] + c.p[1] * std::cos(x.a[i - lo_]), INSERT_VALUES));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobianP(PetscReal, Vec u, const ModeContext &c, Mat Jp) const override {
    Local x(u);
    PetscFunctionBeginUser;
    for (PetscInt i = lo_; i < hi_; ++i) {
      const PetscReal X = x.a[i - lo_];
      PetscCall(MatSetValue(Jp, i, 0, -X * X + 0.1 * c.p[1], INSERT_VALUES));
      PetscCall(MatSetValue(Jp, i, 1, std::sin(X) + 0.1 * c.p[0], INSERT_VALUES));
    }
    PetscFunctionReturn(0);
  }
  PetscErrorCode product(PetscReal, Vec u, const ModeContext &c, Vec w, Vec v, const PetscScalar *vp, Vec hu,
                                   PetscScalar *hp) const override {
    Local x(u), wl(w), vl(v);
    LocalW h(hu);
    PetscReal sumw = 0;
    for (PetscInt i = 0; i < hi_ - lo_; ++i) {
      const PetscReal X = x.a[i], W = wl.a[i], V = vl.a[i];
      h.a[i] = W * (-2 * c.p[0] - c.p[1] * std::sin(X)) * V - 2 * W * X * vp[0] + W * std::cos(X) * vp[1];
      hp[0] += -2 * W * X * V;
      hp[1] += W * std::cos(X) * V;
      sumw += W;
    }
    hp[0] += 0.1 * sumw * vp[1];
    hp[1] += 0.1 * sumw * vp[0];
    return 0;
  }
  PetscErrorCode initialStateHessianProduct(const ModeContext &, Vec, const PetscScalar *, PetscScalar *) const override { return 0; }

private:
  bool distributed_;
  PetscInt lo_ = 0, hi_ = 0;
};

class DecayCosts : public CostFunction, public hstest::CostProducts {
public:
  std::string name() const override { return "decay costs"; }
  bool hasTerminal() const override { return true; }
  bool hasIntegrand() const override { return true; }
  std::vector<PetscReal> measurementTimes() const override { return {0.5, 1.0}; }
  PetscErrorCode terminal(PetscReal, Vec u, const ModeContext &c, PetscScalar *v) const override { return sum(u, v, [&](PetscReal X) { return c.p[0] * X * X * X; }); }
  PetscErrorCode terminalGradient(PetscReal, Vec u, const ModeContext &c, Vec gu, PetscScalar *gp) const override {
    Local x(u);
    LocalW g(gu);
    for (PetscInt i = 0; i < size(u); ++i) g.a[i] = 3 * c.p[0] * x.a[i] * x.a[i], gp[0] += x.a[i] * x.a[i] * x.a[i];
    return 0;
  }
  PetscErrorCode terminalProduct(PetscReal, Vec u, const ModeContext &c, Vec v, const PetscScalar *vp, Vec hu,
                                        PetscScalar *hp) const override {
    Local x(u), vl(v);
    LocalW h(hu);
    for (PetscInt i = 0; i < size(u); ++i) h.a[i] = 6 * c.p[0] * x.a[i] * vl.a[i] + 3 * x.a[i] * x.a[i] * vp[0], hp[0] += 3 * x.a[i] * x.a[i] * vl.a[i];
    return 0;
  }
  PetscErrorCode integrand(PetscReal, Vec u, const ModeContext &c, PetscScalar *v) const override { return sum(u, v, [&](PetscReal X) { return c.p[1] * X * X; }); }
  PetscErrorCode integrandGradient(PetscReal, Vec u, const ModeContext &c, Vec gu, PetscScalar *gp) const override {
    Local x(u);
    LocalW g(gu);
    for (PetscInt i = 0; i < size(u); ++i) g.a[i] = 2 * c.p[1] * x.a[i], gp[1] += x.a[i] * x.a[i];
    return 0;
  }
  PetscErrorCode integrandProduct(PetscReal, Vec u, const ModeContext &c, Vec v, const PetscScalar *vp, Vec hu,
                                         PetscScalar *hp) const override {
    Local x(u), vl(v);
    LocalW h(hu);
    for (PetscInt i = 0; i < size(u); ++i) h.a[i] = 2 * c.p[1] * vl.a[i] + 2 * x.a[i] * vp[1], hp[1] += 2 * x.a[i] * vl.a[i];
    return 0;
  }
  PetscErrorCode measurement(PetscInt, PetscReal, Vec u, const ModeContext &, PetscScalar *v) const override { return sum(u, v, [](PetscReal X) { return (X - 0.5) * (X - 0.5); }); }
  PetscErrorCode measurementGradient(PetscInt, PetscReal, Vec u, const ModeContext &, Vec gu, PetscScalar *) const override {
    Local x(u);
    LocalW g(gu);
    for (PetscInt i = 0; i < size(u); ++i) g.a[i] = 2 * (x.a[i] - 0.5);
    return 0;
  }
  PetscErrorCode measurementProduct(PetscInt, PetscReal, Vec, const ModeContext &, Vec v, const PetscScalar *, Vec hu,
                                           PetscScalar *) const override {
    PetscFunctionBeginUser;
    PetscCall(VecAXPBY(hu, 2.0, 0.0, v));
    PetscFunctionReturn(0);
  }

private:
  static PetscInt size(Vec u) {
    PetscInt n;
    VecGetLocalSize(u, &n);
    return n;
  }
  template <class F> static PetscErrorCode sum(Vec u, PetscScalar *v, F &&f) {
    Local x(u);
    *v = 0;
    for (PetscInt i = 0; i < size(u); ++i) *v += f(x.a[i]);
    return 0;
  }
};

// ... and so does a sparse ∂f/∂p (AIJ; the distributed run uses it, the serial reference is dense).
TEST(Hessian, DistributedEqualsSerial) {
  for (const char *opts : {"-ts_type rk -ts_rk_type 4 -ts_dt 0.02", "-ts_type cn -ts_dt 0.05 -snes_rtol 1e-14 -snes_atol 1e-14"}) {
    SCOPED_TRACE(opts);
    Tensor H[2][2];  // [distributed][method]
    for (int dist = 0; dist < 2; ++dist) {
      Decays model(dist == 1);
      model.sparseParameterJacobian = dist == 1;
      DecayCosts cost;
      Solver solver(model);
      solver.keepTrajectory(true);
      solver.addCost(cost);
      {
        ScopedOptions o(std::string(opts) + " -ts_max_time 1");
        HS_OK(solver.setFromOptions());
      }
      solver.setInitialStateSensitivities({0, kN - 1});
      HS_OK(solver.solve());
      HS_OK(solver.computeHessian(HessianMethod::ForwardOverAdjoint, H[dist][0]));
      HS_OK(solver.computeHessian(HessianMethod::Hybrid, H[dist][1]));
      if (dist == 1) {
        HessianCheckOptions opt;
        HessianCheckReport rep;
        HS_OK(checkHessian(solver, opt, rep));
        EXPECT_TRUE(rep.passed);
      }
    }
    for (int m = 0; m < 2; ++m) {
      const PetscReal scale = maxAbs(H[0][m][0]);
      ASSERT_EQ(H[1][m][0].size(), 4u);
      for (size_t i = 0; i < 4; ++i)
        for (size_t j = 0; j < 4; ++j) EXPECT_LE(std::fabs(H[1][m][0][i][j] - H[0][m][0][i][j]), 1e-12 * scale) << i << "," << j;
    }
  }
}

// The sweeps read the trajectory through the store: on disk (-hs_trajectory_dir) the Hessian is
// bit-identical to the one from memory.
TEST(Hessian, DiskTrajectoryIsBitIdenticalToMemory) {
  Tensor H[2];
  for (int disk = 0; disk < 2; ++disk) {
    const std::string dir = "hs_hessian_trajectory";
    Fixture f(std::string("-ts_type cn -ts_dt 0.02 -ts_max_time 1") + (disk ? " -hs_trajectory_dir " + dir : ""));
    f.solver.setInitialStateSensitivities({1});
    HS_OK(f.solver.solve());
    HS_OK(f.solver.computeHessian(HessianMethod::ForwardOverAdjoint, H[disk]));
  }
  for (size_t k = 0; k < H[0].size(); ++k)
    for (size_t i = 0; i < H[0][k].size(); ++i)
      for (size_t j = 0; j < H[0][k][i].size(); ++j) EXPECT_EQ(H[0][k][i][j], H[1][k][i][j]) << k << " " << i << " " << j;
}
