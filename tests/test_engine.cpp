// Engine behaviour on small models with known answers: direction filtering, exact and
// simultaneous time events, and every error case (grazing, Zeno, NaN, location failure,
// DAE reinitialization failure, size mismatch).
#include "small_model.hpp"
#include "test_support.hpp"

#include <hybridsens/hybridsens.hpp>

#include <cmath>
#include <functional>

using namespace hybridsens;
using hstest::ErrorCapture;
using hstest::ScopedOptions;

using hstest::TestModel;

namespace {

// x1 = sin t (x1' = x2, x2' = -x1) with one guard on x1 in a chosen direction; every firing
// bumps d[0] and leaves the guard active.
class Oscillator : public TestModel {
public:
  explicit Oscillator(Direction dir, PetscReal level = 0) : TestModel(2), dir_(dir), level_(level) {
    x0 = {0, 1};
    f = [](PetscReal, const PetscScalar *x, PetscScalar *y, const ModeContext &) { y[0] = x[1], y[1] = -x[0]; };
    dfdu = [](PetscReal, const PetscScalar *, PetscScalar *a, const ModeContext &) { a[1] = 1, a[2] = -1; };
  }
  PetscInt numGuards() const override { return 1; }
  GuardInfo guardInfo(PetscInt) const override { return {"x1_level", dir_}; }
  PetscErrorCode guards(PetscReal, Vec u, const ModeContext &, PetscScalar *g) const override {
    return firstComponentGuard(u, level_, g);
  }
  PetscErrorCode guardGradient(PetscInt, PetscReal, Vec, const ModeContext &, Vec gu, PetscScalar *gt, PetscScalar *) const override {
    return firstComponentGradient(gu, gt);
  }
  PetscErrorCode transition(const EventId &, PetscReal, Vec, DiscreteState &d) const override {
    d[0] += 1;
    return 0;
  }

private:
  Direction dir_;
  PetscReal level_;
};

PetscErrorCode runModel(Solver &solver, const char *tsType, PetscReal dt, PetscReal tf) {
  PetscFunctionBeginUser;
  PetscCall(solver.setFromOptions());
  PetscCall(TSSetType(solver.ts(), tsType));
  if (!strcmp(tsType, TSRK)) PetscCall(TSRKSetType(solver.ts(), TSRK4));
  PetscCall(TSSetTimeStep(solver.ts(), dt));
  PetscCall(TSSetMaxTime(solver.ts(), tf));
  PetscCall(solver.setFromOptions());
  PetscCall(solver.solve());
  PetscFunctionReturn(0);
}

std::vector<PetscReal> eventTimes(const Solver &s) {
  std::vector<PetscReal> t;
  for (auto &r : s.result().events().records()) t.push_back(r.time);
  return t;
}

} // namespace

TEST(Engine, DirectionIsFiltered) {
  const PetscReal pi = M_PI;
  struct Case {
    Direction dir;
    std::vector<PetscReal> expected;
  } cases[] = {{Direction::Rising, {2 * pi}}, {Direction::Falling, {pi, 3 * pi}}, {Direction::Both, {pi, 2 * pi, 3 * pi}}};
  for (const auto &c : cases) {
    for (const char *type : {TSRK, TSCN}) {
      Oscillator model(c.dir);
      Solver solver(model);
      ScopedOptions o("-ts_adapt_type none");
      ASSERT_EQ(runModel(solver, type, 1e-3, 10.0), 0);
      auto t = eventTimes(solver);
      ASSERT_EQ(t.size(), c.expected.size()) << "direction " << (int)c.dir << " " << type;
      // RK4 at dt=1e-3 is accurate to ~1e-12; CN to ~1e-7 (second order).
      const PetscReal tol = !strcmp(type, TSRK) ? 1e-9 : 1e-5;
      for (size_t i = 0; i < t.size(); ++i) EXPECT_NEAR(t[i], c.expected[i], tol) << type;
      EXPECT_EQ(solver.result().finalDiscreteState[0], (PetscInt)c.expected.size());
    }
  }
}

TEST(Engine, GuardIsZeroAtTheEventToTolerance) {
  Oscillator model(Direction::Both, 0.5);
  Solver solver(model);
  ScopedOptions o("-ts_adapt_type none");
  ASSERT_EQ(runModel(solver, TSRK, 0.1, 7.0), 0);  // large steps: location does the work
  ASSERT_EQ(solver.result().events().size(), 3u);            // sin t = 0.5 at π/6, 5π/6, 13π/6 (< 7)
  for (auto &r : solver.result().events().records()) {
    const PetscScalar *x;
    VecGetArrayRead(r.uminus, &x);
    PetscMPIInt rank;
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
    if (rank == 0) EXPECT_LE(std::fabs(x[0] - 0.5), 1e-12) << "guard not located at t=" << r.time;
    VecRestoreArrayRead(r.uminus, &x);
  }
}

// x' = 1; time events 0 and 1 both at 0.3 (event 1 doubles x), event 2 at 0.7.
class Clock : public TestModel {
public:
  Clock() : TestModel(1) {
    x0 = {0};
    f = [](PetscReal, const PetscScalar *, PetscScalar *y, const ModeContext &) { y[0] = 1; };
    dfdu = [](PetscReal, const PetscScalar *, PetscScalar *, const ModeContext &) {};
  }
  PetscInt numTimeEvents() const override { return 3; }
  TimeEventInfo timeEvent(PetscInt k, const std::vector<PetscReal> &) const override {
    return {"te" + std::to_string(k), k < 2 ? 0.3 : 0.7, {}};
  }
  PetscErrorCode transition(const EventId &id, PetscReal, Vec, DiscreteState &d) const override {
    d[0] = 10 * d[0] + id.index + 1;  // records the order of application
    return 0;
  }
  bool hasReset(const EventId &id) const override { return id.index == 1; }
  PetscErrorCode reset(const EventId &, PetscReal, Vec um, const ModeContext &, Vec up) const override {
    PetscFunctionBeginUser;
    PetscCall(VecCopy(um, up));
    PetscCall(VecScale(up, 2.0));
    PetscFunctionReturn(0);
  }
};

TEST(Engine, TimeEventsLandExactlyAndSimultaneousOnesApplyInOrder) {
  for (const char *type : {TSRK, TSCN, TSBEULER}) {
    Clock model;
    Solver solver(model);
    ScopedOptions o("-ts_adapt_type none");
    ASSERT_EQ(runModel(solver, type, 0.25, 1.0), 0);
    const auto &r = solver.result().events().records();
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(r[0].time, 0.3);  // exactly, not approximately
    EXPECT_EQ(r[1].time, 0.3);
    EXPECT_EQ(r[2].time, 0.7);
    EXPECT_EQ(r[0].step, r[1].step);  // same instant, same step boundary
    EXPECT_EQ(r[0].orderAtInstant, 0);
    EXPECT_EQ(r[1].orderAtInstant, 1);
    EXPECT_EQ(solver.result().finalDiscreteState[0], 123);  // te0, then te1, then te2
    // Each transition has its own snapshot: te1 starts where te0 ended, and doubles x.
    std::vector<PetscScalar> a, b, c;
    PetscScalar v;
    PetscReal diff;
    Vec w;
    VecDuplicate(r[0].uplus, &w);
    VecWAXPY(w, -1.0, r[0].uplus, r[1].uminus);
    VecNorm(w, NORM_INFINITY, &diff);
    EXPECT_EQ(diff, 0.0);
    VecWAXPY(w, -2.0, r[1].uminus, r[1].uplus);
    VecNorm(w, NORM_INFINITY, &diff);
    EXPECT_LE(diff, 1e-15);
    VecDestroy(&w);
    VecSum(solver.result().finalState(), &v);
    EXPECT_NEAR(v, 2 * 0.3 + 0.7, 1e-13) << type;
  }
}

// Projectile x1' = x2, x2' = -1 from (0, 1): apex x1 = 0.5 at t = 1. A guard at the apex
// level minus delta crosses with a vanishing rate when delta → 0: grazing.
class Projectile : public TestModel {
public:
  explicit Projectile(PetscReal delta) : TestModel(2), delta_(delta) {
    x0 = {0, 1};
    f = [](PetscReal, const PetscScalar *x, PetscScalar *y, const ModeContext &) { y[0] = x[1], y[1] = -1; };
    dfdu = [](PetscReal, const PetscScalar *, PetscScalar *a, const ModeContext &) { a[1] = 1; };
  }
  PetscInt numGuards() const override { return 1; }
  GuardInfo guardInfo(PetscInt) const override { return {"apex", Direction::Rising}; }
  PetscErrorCode guards(PetscReal, Vec u, const ModeContext &, PetscScalar *g) const override {
    return firstComponentGuard(u, 0.5 - delta_, g);
  }
  PetscErrorCode guardGradient(PetscInt, PetscReal, Vec, const ModeContext &, Vec gu, PetscScalar *gt, PetscScalar *) const override {
    return firstComponentGradient(gu, gt);
  }
  PetscErrorCode transition(const EventId &, PetscReal, Vec, DiscreteState &d) const override {
    d[0] = 1;
    return 0;
  }
  bool guardActive(PetscInt, const DiscreteState &d) const override { return d[0] == 0; }

private:
  PetscReal delta_;
};

TEST(EngineErrors, GrazingIsAnError) {
  {
    Projectile control(1e-3);  // crosses with rate ~0.045: fine
    Solver solver(control);
    ScopedOptions o("-ts_adapt_type none");
    ASSERT_EQ(runModel(solver, TSRK, 0.01, 2.0), 0);
    EXPECT_EQ(solver.result().events().size(), 1u);
  }
  Projectile model(1e-14);  // crosses with rate ~1.4e-7 relative to its scale
  Solver solver(model);
  ScopedOptions o("-ts_adapt_type none");
  ErrorCapture err;
  EXPECT_NE(runModel(solver, TSRK, 0.01, 2.0), 0);
  EXPECT_NE(err.message().find("Grazing"), std::string::npos) << err.message();
  EXPECT_NE(err.message().find("apex"), std::string::npos) << err.message();
}

// Ball dropped from 1 (g = 1) with restitution 0.5: impacts accumulate (Zeno).
class Ball : public TestModel {
public:
  Ball() : TestModel(2) {
    x0 = {1, 0};
    f = [](PetscReal, const PetscScalar *x, PetscScalar *y, const ModeContext &) { y[0] = x[1], y[1] = -1; };
    dfdu = [](PetscReal, const PetscScalar *, PetscScalar *a, const ModeContext &) { a[1] = 1; };
  }
  PetscInt numGuards() const override { return 1; }
  GuardInfo guardInfo(PetscInt) const override { return {"impact", Direction::Falling}; }
  PetscErrorCode guards(PetscReal, Vec u, const ModeContext &, PetscScalar *g) const override {
    return firstComponentGuard(u, 0.0, g);
  }
  PetscErrorCode guardGradient(PetscInt, PetscReal, Vec, const ModeContext &, Vec gu, PetscScalar *gt, PetscScalar *) const override {
    return firstComponentGradient(gu, gt);
  }
  bool hasReset(const EventId &) const override { return true; }
  PetscErrorCode reset(const EventId &, PetscReal, Vec um, const ModeContext &, Vec up) const override {
    PetscFunctionBeginUser;
    PetscCall(VecCopy(um, up));
    if (rank_ == 0) {
      const PetscScalar *x;
      PetscCall(VecGetArrayRead(um, &x));
      PetscCall(VecSetValue(up, 1, -0.5 * x[1], INSERT_VALUES));
      PetscCall(VecRestoreArrayRead(um, &x));
    }
    PetscCall(VecAssemblyBegin(up));
    PetscCall(VecAssemblyEnd(up));
    PetscFunctionReturn(0);
  }
};

TEST(EngineErrors, ZenoByEventCount) {
  Ball model;
  Solver solver(model);
  ScopedOptions o("-ts_adapt_type none -hs_max_events 5");
  ErrorCapture err;
  EXPECT_NE(runModel(solver, TSRK, 0.01, 10.0), 0);
  EXPECT_NE(err.message().find("Zeno"), std::string::npos) << err.message();
  EXPECT_NE(err.message().find("impact"), std::string::npos) << err.message();
}

TEST(EngineErrors, ZenoByEventSpacing) {
  Ball model;
  Solver solver(model);
  // Impact intervals halve (1.41, 1.41, 0.71, 0.35, 0.18, 0.09...); 1% of the horizon is 0.1.
  ScopedOptions o("-ts_adapt_type none -hs_min_event_spacing 0.01");
  ErrorCapture err;
  EXPECT_NE(runModel(solver, TSRK, 0.01, 10.0), 0);
  EXPECT_NE(err.message().find("Zeno"), std::string::npos) << err.message();
  EXPECT_NE(err.message().find("spacing"), std::string::npos) << err.message();
}

TEST(EngineErrors, LocationFailureIsAnError) {
  Oscillator model(Direction::Both, 0.5);
  Solver solver(model);
  ScopedOptions o("-ts_adapt_type none -hs_event_max_iterations 1");
  ErrorCapture err;
  EXPECT_NE(runModel(solver, TSRK, 0.1, 2.0), 0);
  EXPECT_NE(err.message().find("Event location failed"), std::string::npos) << err.message();
}

TEST(EngineErrors, NaNFromCallbackNamesIt) {
  Oscillator model(Direction::Both);
  model.f = [](PetscReal t, const PetscScalar *x, PetscScalar *y, const ModeContext &) {
    y[0] = x[1];
    y[1] = t > 0.5 ? NAN : -x[0];
  };
  Solver solver(model);
  ScopedOptions o("-ts_adapt_type none");
  ErrorCapture err;
  EXPECT_NE(runModel(solver, TSRK, 0.1, 2.0), 0);
  EXPECT_NE(err.message().find("NaN or Inf"), std::string::npos) << err.message();
  EXPECT_NE(err.message().find("rhs"), std::string::npos) << err.message();
  EXPECT_NE(err.message().find("discrete state [0]"), std::string::npos) << err.message();
}

TEST(EngineErrors, CxxExceptionInCallbackBecomesPetscError) {
  Oscillator model(Direction::Both);
  model.f = [](PetscReal t, const PetscScalar *x, PetscScalar *y, const ModeContext &) {
    if (t > 0.5) throw std::runtime_error("model blew up");
    y[0] = x[1], y[1] = -x[0];
  };
  Solver solver(model);
  ScopedOptions o("-ts_adapt_type none");
  ErrorCapture err;
  EXPECT_NE(runModel(solver, TSRK, 0.1, 2.0), 0);
  EXPECT_NE(err.message().find("model blew up"), std::string::npos) << err.message();
}

// DAE x' = -x, 0 = y² - x in mode 0; a time event at 0.5 switches to 0 = y² + 1 (no solution).
class ImpossibleDAE : public TestModel {
public:
  ImpossibleDAE() : TestModel(2) {
    x0 = {1, 1};
    f = [](PetscReal, const PetscScalar *x, PetscScalar *y, const ModeContext &c) {
      y[0] = -x[0];
      y[1] = c.d[0] == 0 ? x[1] * x[1] - x[0] : x[1] * x[1] + 1;
    };
    dfdu = [](PetscReal, const PetscScalar *x, PetscScalar *a, const ModeContext &c) {
      a[0] = -1;
      a[2] = c.d[0] == 0 ? -1 : 0;
      a[3] = 2 * x[1];
    };
  }
  std::vector<PetscInt> algebraicIndices() const override {
    if (rank_ == 0) return {1};
    return {};
  }
  PetscInt numTimeEvents() const override { return 1; }
  TimeEventInfo timeEvent(PetscInt, const std::vector<PetscReal> &) const override { return {"break", 0.5, {}}; }
  PetscErrorCode transition(const EventId &, PetscReal, Vec, DiscreteState &d) const override {
    d[0] = 1;
    return 0;
  }
};

TEST(EngineErrors, DAEReinitializationFailure) {
  ImpossibleDAE model;
  Solver solver(model);
  ScopedOptions o("-ts_adapt_type none");
  ErrorCapture err;
  EXPECT_NE(runModel(solver, TSBEULER, 0.1, 1.0), 0);
  EXPECT_NE(err.message().find("DAE reinitialization failed"), std::string::npos) << err.message();
  EXPECT_NE(err.message().find("break"), std::string::npos) << err.message();
}

class WrongJacobianSize : public Oscillator {
public:
  WrongJacobianSize() : Oscillator(Direction::Both) {}
  PetscErrorCode createJacobian(Mat *J) const override {
    return MatCreateDense(PETSC_COMM_WORLD, localSize() + (rank_ == 0), localSize() + (rank_ == 0), PETSC_DETERMINE,
                          PETSC_DETERMINE, nullptr, J);
  }
};

TEST(EngineErrors, SizeMismatchAtSetUp) {
  WrongJacobianSize model;
  Solver solver(model);
  ErrorCapture err;
  EXPECT_NE(solver.setFromOptions(), 0);
  EXPECT_NE(err.message().find("does not match localSize()"), std::string::npos) << err.message();
}

// Adaptive steps (error-controlled RK and theta): events are still located exactly and the
// controller's rejections are counted.
TEST(Engine, AdaptiveStepsLocateEvents) {
  const PetscReal pi = M_PI;
  struct Case {
    const char *type, *opts;
    PetscReal tol, dt0;
  } cases[] = {{TSRK, "-ts_adapt_type basic -ts_rk_type 5dp -ts_rtol 1e-10 -ts_atol 1e-10", 1e-8, 0.3},
               // PETSc's theta error estimate needs one step of history, so the first step (and
               // the first after each restart) is accepted unchecked: start small.
               {TSCN, "-ts_adapt_type basic -ts_rtol 1e-8 -ts_atol 1e-8", 1e-5, 1e-3}};
  for (const auto &c : cases) {
    Oscillator model(Direction::Both, 0.5);
    Solver solver(model);
    ScopedOptions o(c.opts);
    ASSERT_EQ(solver.setFromOptions(), 0);
    ASSERT_EQ(TSSetType(solver.ts(), c.type), 0);
    ASSERT_EQ(TSSetTimeStep(solver.ts(), c.dt0), 0);
    ASSERT_EQ(TSSetMaxTime(solver.ts(), 7.0), 0);
    ASSERT_EQ(solver.setFromOptions(), 0);
    ASSERT_EQ(solver.solve(), 0);
    const std::vector<PetscReal> expected = {pi / 6, 5 * pi / 6, 13 * pi / 6};
    auto t = eventTimes(solver);
    ASSERT_EQ(t.size(), expected.size()) << c.type;
    for (size_t i = 0; i < t.size(); ++i) EXPECT_NEAR(t[i], expected[i], c.tol) << c.type;
    EXPECT_GT(solver.result().stats.steps, 10) << "the controller should have refined the initial step";
    EXPECT_NEAR(solver.result().finalTime, 7.0, 0.0);
  }
}
