// The library's option reading: every bad value is refused with an error that names the option
// (NaN, overflow, a missing value, a misspelled -hs_ name), under the TS's options prefix; the
// Solver's TS exists before setFromOptions; a gradient check that meets NaN fails.
#include "small_model.hpp"
#include "test_support.hpp"

#include <hybridsens/option_reader.hpp>
#include <hybridsens/verify.hpp>

#include <cmath>

using namespace hybridsens;
using hstest::ErrorCapture;
using hstest::ScopedOptions;
using hstest::TestModel;

namespace {

// ẋ = −p x, x(0) = 1: J = x(T) = e^{−pT}.
class Decay : public TestModel {
public:
  Decay() : TestModel(1) {
    x0 = {1};
    params = {0.7};
    f = [](PetscReal, const PetscScalar *x, PetscScalar *y, const ModeContext &c) { y[0] = -c.p[0] * x[0]; };
    dfdu = [](PetscReal, const PetscScalar *, PetscScalar *a, const ModeContext &c) { a[0] = -c.p[0]; };
    dfdp = [](PetscReal, const PetscScalar *x, PetscScalar *a, const ModeContext &) { a[0] = -x[0]; };
  }
};

class Terminal : public CostFunction {
public:
  bool hasTerminal() const override { return true; }
  PetscErrorCode terminal(PetscReal, Vec u, const ModeContext &, PetscScalar *v) const override {
    PetscFunctionBeginUser;
    PetscCall(VecSum(u, v));
    PetscFunctionReturn(0);
  }
  PetscErrorCode terminalGradient(PetscReal, Vec, const ModeContext &, Vec gu, PetscScalar *) const override {
    PetscFunctionBeginUser;
    PetscCall(VecSet(gu, 1.0));
    PetscFunctionReturn(0);
  }
};

// RK4 with fixed steps: the discrete solution is e^{−pT} to ~1e-10 at dt = 0.01, and the
// computed objective is smooth in p (an adaptive step would make it rough at its tolerance).
void fixedRK4(TS ts) {
  TSAdapt adapt;
  TSSetType(ts, TSRK);
  TSRKSetType(ts, TSRK4);
  TSGetAdapt(ts, &adapt);
  TSAdaptSetType(adapt, TSADAPTNONE);
}

struct Read {
  PetscReal x = 1;
  PetscInt n = 3, choice = 1;
  PetscBool b = PETSC_FALSE;
  std::vector<PetscReal> times;
  std::vector<PetscInt> indices;
};

// Reads the test options of one block; the error code and, through ErrorCapture, the message.
PetscErrorCode readBlock(const char *prefix, Read &r) {
  PetscFunctionBeginUser;
  PetscOptionsBegin(PETSC_COMM_WORLD, prefix, "test options", "");
  OptionReader opt(PetscOptionsObject);
  PetscCall(opt.real("-t_x", "a positive real", &r.x, Range::positive()));
  PetscCall(opt.integer("-t_n", "an integer in [1, 10]", &r.n, 1, 10));
  PetscCall(opt.choice("-t_kind", "a choice", {"left", "right"}, &r.choice));
  PetscCall(opt.boolean("-t_flag", "a flag", &r.b));
  PetscCall(opt.realList("-t_times", "times", &r.times, Range::nonNegative()));
  PetscCall(opt.integerList("-t_indices", "indices", &r.indices, 0, PETSC_MAX_INT));
  PetscOptionsEnd();
  PetscFunctionReturn(0);
}

// The message of the error that reading `opts` raises ("" if none).
std::string errorOf(const std::string &opts, const char *prefix = nullptr) {
  ScopedOptions o(opts);
  ErrorCapture cap;
  Read r;
  return readBlock(prefix, r) ? cap.message() + " " : "";
}

} // namespace

TEST(OptionReader, GoodValuesAreRead) {
  ScopedOptions o("-t_x 2.5 -t_n 10 -t_kind left -t_flag -t_times 0,1.5,2 -t_indices 3,1");
  Read r;
  ASSERT_EQ(readBlock(nullptr, r), 0);
  EXPECT_EQ(r.x, 2.5);
  EXPECT_EQ(r.n, 10);
  EXPECT_EQ(r.choice, 0);
  EXPECT_EQ(r.b, PETSC_TRUE);
  EXPECT_EQ(r.times, (std::vector<PetscReal>{0, 1.5, 2}));
  EXPECT_EQ(r.indices, (std::vector<PetscInt>{3, 1}));
}

TEST(OptionReader, LongListsAreNotCut) {
  // PETSc's array options stop at the caller's buffer; the reader has none.
  std::string list;
  for (int i = 0; i < 3000; ++i) list += (i ? "," : "") + std::to_string(i);
  ScopedOptions o("-t_indices " + list);
  Read r;
  ASSERT_EQ(readBlock(nullptr, r), 0);
  ASSERT_EQ(r.indices.size(), 3000u);
  EXPECT_EQ(r.indices.back(), 2999);
}

TEST(OptionReader, BadValuesNameTheOption) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"-t_x nan", "Option -t_x nan: must be a finite number"},
      {"-t_x inf", "Option -t_x inf: must be a finite number"},
      {"-t_x 0", "Option -t_x 0: must be > 0"},
      {"-t_x 1e999", "Option -t_x 1e999: must be a finite number"},
      {"-t_x 1.5x", "Option -t_x 1.5x: not a number"},
      {"-t_x", "Option -t_x needs a value"},
      {"-t_n 4294967297", "Option -t_n 4294967297: does not fit a PetscInt"},
      {"-t_n 0", "Option -t_n 0: must be 1..10"},
      {"-t_n 2.0", "Option -t_n 2.0: not an integer"},
      {"-t_n", "Option -t_n needs a value"},
      {"-t_kind", "Option -t_kind needs a value (one of left, right)"},
      {"-t_kind up", "Option -t_kind up: not one of left, right"},
      {"-t_flag perhaps", "Option -t_flag perhaps: not a truth value"},
      {"-t_times 1,-1", "Option -t_times -1: must be >= 0"},
      {"-t_times 1,,2", "Option -t_times : not a number"},
      {"-t_times 1,nan", "Option -t_times nan: must be a finite number"},
      {"-t_indices 1,x", "Option -t_indices x: not an integer"},
  };
  for (auto &[opts, expected] : cases) {
    const std::string m = errorOf(opts);
    EXPECT_NE(m.find(expected), std::string::npos) << opts << " gave: " << m;
  }
}

TEST(OptionReader, PrefixIsPartOfTheName) {
  const std::string m = errorOf("-pre_t_x nan", "pre_");
  EXPECT_NE(m.find("Option -pre_t_x nan"), std::string::npos) << m;
}

TEST(SolverOptions, TsExistsBeforeSetFromOptions) {
  Decay model;
  Solver solver(model);
  ASSERT_NE(solver.ts(), nullptr);
  EXPECT_EQ(TSSetTimeStep(solver.ts(), 0.01), 0);
  EXPECT_EQ(TSSetMaxTime(solver.ts(), 1.0), 0);
  ASSERT_EQ(solver.setFromOptions(), 0);
  PetscReal dt;
  TSGetTimeStep(solver.ts(), &dt);
  EXPECT_EQ(dt, 0.01);  // the program's default survives a setFromOptions without -ts_dt
}

TEST(SolverOptions, MisspelledLibraryOptionIsAnError) {
  Decay model;
  Solver solver(model);
  ScopedOptions o("-hs_adjiont");
  ErrorCapture cap;
  EXPECT_NE(solver.setFromOptions(), 0);
  EXPECT_NE(cap.message().find("-hs_adjiont (did you mean -hs_adjoint?)"), std::string::npos) << cap.message();
}

TEST(SolverOptions, ReadUnderTheTsPrefix) {
  Decay model;
  Terminal cost;
  Solver solver(model);
  solver.addCost(cost);
  ASSERT_EQ(TSSetOptionsPrefix(solver.ts(), "a_"), 0);
  TSSetTimeStep(solver.ts(), 0.01);
  TSSetMaxTime(solver.ts(), 1.0);
  fixedRK4(solver.ts());
  {
    ScopedOptions o("-a_hs_adjoint");
    ASSERT_EQ(solver.setFromOptions(), 0);
  }
  EXPECT_TRUE(solver.adjoint());
  ASSERT_EQ(solver.solve(), 0);
  EXPECT_NEAR(solver.result().gradient[0].adjointP[0], -std::exp(-0.7), 1e-8);  // d/dp e^{−p}
  ScopedOptions o("-a_hs_adjiont");
  ErrorCapture cap;
  EXPECT_NE(solver.setFromOptions(), 0);
  EXPECT_NE(cap.message().find("-a_hs_adjiont (did you mean -a_hs_adjoint?)"), std::string::npos) << cap.message();
}

TEST(SolverOptions, InitialStateIndicesAreCheckedForBothSweeps) {
  Decay model;
  Terminal cost;
  for (bool forward : {false, true}) {
    Solver solver(model);
    solver.addCost(cost);
    TSSetTimeStep(solver.ts(), 0.1);
    TSSetMaxTime(solver.ts(), 1.0);
    ASSERT_EQ(solver.setFromOptions(), 0);
    solver.setAdjoint(!forward);
    solver.setForwardSensitivities(forward);
    solver.setInitialStateSensitivities({1});
    ErrorCapture cap;
    EXPECT_NE(solver.solve(), 0);
    EXPECT_NE(cap.message().find("index 1 is outside the state [0, 1)"), std::string::npos) << cap.message();
  }
}

TEST(SolverOptions, OutputTimesOutsideTheHorizonAreRefused) {
  Decay model;
  Solver solver(model);
  TSSetTimeStep(solver.ts(), 0.1);
  TSSetMaxTime(solver.ts(), 1.0);
  ASSERT_EQ(solver.setFromOptions(), 0);
  for (PetscReal t : {-0.5, 1.5, (PetscReal)NAN}) {
    solver.setOutputTimes({0.5, t});
    ErrorCapture cap;
    EXPECT_NE(solver.solve(), 0);
    EXPECT_NE(cap.message().find("is outside the horizon"), std::string::npos) << cap.message();
  }
  solver.setOutputTimes({0.0, 0.5, 1.0});  // both ends are inside
  EXPECT_EQ(solver.solve(), 0);
}

// A cost that is identically zero near p (a frequency that never leaves its band) has zero
// Taylor remainders: the order 0/0 used to be NaN and the check FAILED. The Taylor test now runs
// on the cost with the largest gradient, and a remainder at round-off passes.
class Zero : public CostFunction {
public:
  bool hasTerminal() const override { return true; }
  PetscErrorCode terminal(PetscReal, Vec, const ModeContext &, PetscScalar *v) const override { return *v = 0, 0; }
  PetscErrorCode terminalGradient(PetscReal, Vec gu, const ModeContext &, Vec g, PetscScalar *) const override { return VecSet(g, 0.0); }
};

TEST(GradientCheck, ZeroCostPasses) {
  Decay model;
  Zero zero;
  Terminal cost;
  for (int withNonzero = 0; withNonzero < 2; ++withNonzero) {
    Solver solver(model);
    solver.addCost(zero);  // cost 0 is zero
    if (withNonzero) solver.addCost(cost);
    TSSetTimeStep(solver.ts(), 0.01);
    TSSetMaxTime(solver.ts(), 1.0);
    fixedRK4(solver.ts());
    ASSERT_EQ(solver.setFromOptions(), 0);
    GradientCheckOptions opt;
    GradientCheckReport rep;
    EXPECT_EQ(checkGradient(solver, opt, rep), 0) << withNonzero;
    EXPECT_TRUE(rep.passed) << withNonzero;
    EXPECT_TRUE(std::isfinite(rep.taylorOrder)) << withNonzero;
    EXPECT_EQ(rep.taylorCost, (size_t)withNonzero);           // the nonzero cost when there is one
    if (withNonzero) EXPECT_GT(rep.taylorOrder, 1.8);          // ... and it shows its order
  }
}

TEST(GradientCheck, NaNFails) {
  // A zero difference step gives 0/0 in every finite difference; std::max used to skip the NaN
  // and report PASSED.
  Decay model;
  Terminal cost;
  Solver solver(model);
  solver.addCost(cost);
  TSSetTimeStep(solver.ts(), 0.01);
  TSSetMaxTime(solver.ts(), 1.0);
  fixedRK4(solver.ts());
  ASSERT_EQ(solver.setFromOptions(), 0);
  GradientCheckOptions opt;
  GradientCheckReport rep;
  EXPECT_EQ(checkGradient(solver, opt, rep), 0);  // the same check with a sane step passes
  EXPECT_TRUE(rep.passed);
  opt.relativeStep = 0;
  ErrorCapture cap;
  EXPECT_NE(checkGradient(solver, opt, rep), 0);
  EXPECT_FALSE(rep.passed);
  EXPECT_NE(cap.message().find("NaN or Inf"), std::string::npos) << cap.message();
}
