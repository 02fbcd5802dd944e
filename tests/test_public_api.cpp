// The newcomer-facing API: SolveResult (a value that outlives later solves), SmallModel (a model
// as lambdas on plain arrays, here with a time event and a reset) and the owned-entry helpers.
//   * a copied SolveResult keeps its numbers, final state, S and event log after the Solver
//     solves again with other parameters;
//   * SmallModel: x' = −k x, a time event at τ with the reset x⁺ = x⁻ + a, J = x(T):
//     x(T) = (x0 e^{−kτ} + a) e^{−k(T−τ)}, dJ/dk = −T x0 e^{−kT} − a (T−τ) e^{−k(T−τ)},
//     dJ/dτ = k a e^{−k(T−τ)}, dJ/da = e^{−k(T−τ)} — forward and adjoint against the closed form;
//   * a SmallModel reset without R_p is refused naming resetJacobianP and the event;
//   * OwnedEntries: an index outside the vector is reported by restore().
#include "test_support.hpp"

#include <hybridsens/hybridsens.hpp>
#include <hybridsens/small_model.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

using namespace hybridsens;
using hstest::configureFixedStep;
using hstest::ErrorCapture;

namespace {

constexpr PetscReal kX0 = 2, kT = 1;

// p = (k, τ, a).
class KickedDecay : public SmallModel {
public:
  explicit KickedDecay(bool withResetP = true) : SmallModel(1) {
    params = {0.7, 0.4, 0.5};
    paramNames = {"k", "tau", "a"};
    d0 = {0};
    x0 = {kX0};
    f = [](PetscReal, const PetscScalar *u, PetscScalar *y, const ModeContext &c) { y[0] = -c.p[0] * u[0]; };
    dfdu = [](PetscReal, const PetscScalar *, PetscScalar *J, const ModeContext &c) { J[0] = -c.p[0]; };
    dfdp = [](PetscReal, const PetscScalar *u, PetscScalar *Jp, const ModeContext &) { Jp[0] = -u[0]; };
    TimeEvent kick;
    kick.name = "kick";
    kick.time = [](const std::vector<PetscReal> &p) { return p[1]; };
    kick.dtimedp = [](const std::vector<PetscReal> &, PetscReal *dt) { dt[1] = 1; };
    kick.transition = [](PetscReal, const PetscScalar *, DiscreteState &d) { ++d[0]; };
    kick.reset = [](PetscReal, const PetscScalar *, const ModeContext &c, PetscScalar *up) { up[0] += c.p[2]; };
    kick.resetJacobian = [](PetscReal, const PetscScalar *, const ModeContext &, PetscScalar *Ru) { Ru[0] = 1; };
    if (withResetP) kick.resetJacobianP = [](PetscReal, const PetscScalar *, const ModeContext &, PetscScalar *Rp) { Rp[2] = 1; };
    kick.resetTimeDerivative = [](PetscReal, const PetscScalar *, const ModeContext &, PetscScalar *) {};
    addTimeEvent(kick);
  }
};

class FinalValue : public CostFunction {
public:
  std::string name() const override { return "x(T)"; }
  bool hasTerminal() const override { return true; }
  PetscErrorCode terminal(PetscReal, Vec u, const ModeContext &, PetscScalar *value) const override { return readOwned(u, 0, value); }
  PetscErrorCode terminalGradient(PetscReal, Vec, const ModeContext &, Vec psi_u, PetscScalar *) const override { return writeOwned(psi_u, 0, 1.0); }
};

// Every entry of v on every rank.
std::vector<double> gatherAll(Vec v) {
  PetscInt n = 0;
  VecGetSize(v, &n);
  std::vector<double> out(n);
  for (PetscInt i = 0; i < n; ++i) {
    PetscScalar x = 0;
    globalEntry(v, i, &x);
    out[i] = PetscRealPart(x);
  }
  return out;
}

// S[0][0] on every rank (collective).
PetscScalar firstSensitivity(Mat S) {
  Vec col;
  PetscScalar x = 0;
  MatDenseGetColumnVecRead(S, 0, &col);
  globalEntry(col, 0, &x);
  MatDenseRestoreColumnVecRead(S, 0, &col);
  return x;
}

PetscErrorCode solveKicked(Solver &s, const std::vector<PetscReal> &p) {
  PetscFunctionBeginUser;
  PetscCall(s.setParameters(p));
  PetscCall(s.solve());
  PetscFunctionReturn(0);
}

// Solves with J on a fixed RK grid, expecting a refusal; returns the PETSc error message.
std::string refusalOf(const HybridModel &model, const CostFunction &J, bool forward = false) {
  Solver s(model);
  s.addCost(J);
  EXPECT_EQ(configureFixedStep(s, TSRK, 1e-2, kT), 0);
  s.setForwardSensitivities(forward);
  ErrorCapture err;
  EXPECT_NE(s.solve(), 0);
  return err.message();
}

} // namespace

TEST(SmallModel, TimeEventWithResetMatchesTheClosedForm) {
  KickedDecay model;
  FinalValue J;
  Solver s(model);
  s.addCost(J);
  ASSERT_EQ(configureFixedStep(s, TSRK, 1e-3, kT), 0);
  s.setForwardSensitivities(true);
  s.setAdjoint(true);
  ASSERT_EQ(s.solve(), 0);
  const SolveResult &r = s.result();
  const PetscReal k = 0.7, tau = 0.4, a = 0.5, after = std::exp(-k * (kT - tau));
  ASSERT_EQ(r.events().size(), 1u);
  EXPECT_EQ(r.events().records()[0].name, "kick");
  EXPECT_EQ(r.finalDiscreteState, DiscreteState{1});
  EXPECT_NEAR(r.objective.at(0), (kX0 * std::exp(-k * tau) + a) * after, 1e-10);
  const std::vector<PetscReal> exact = {-kT * kX0 * std::exp(-k * kT) - a * (kT - tau) * after, k * a * after, after};
  ASSERT_TRUE(r.forwardComputed && r.adjointComputed);
  for (size_t j = 0; j < exact.size(); ++j) {
    EXPECT_NEAR(r.gradient.at(0).forwardP.at(j), exact[j], 1e-9) << model.parameterNames()[j];
    EXPECT_NEAR(r.gradient.at(0).adjointP.at(j), exact[j], 1e-9) << model.parameterNames()[j];
  }
  EXPECT_LT(r.adjointForwardDifference(), 1e-12);
}

TEST(SmallModel, ResetWithoutParameterDerivativeIsRefused) {
  KickedDecay model(false);
  FinalValue J;
  Solver s(model);
  s.addCost(J);
  ASSERT_EQ(configureFixedStep(s, TSRK, 1e-2, kT), 0);
  s.setForwardSensitivities(true);
  ErrorCapture err;
  EXPECT_NE(s.solve(), 0);
  EXPECT_NE(err.message().find("resetJacobianP"), std::string::npos) << err.message();
  EXPECT_NE(err.message().find("time event 'kick'"), std::string::npos) << err.message();
}

// A lambda that throws after its first call (the first call is the run's set-up) must end in a
// PETSc error naming the callback, never in std::terminate: timeEvent and guardActive are
// queries that return a value, asked again at events and during the jump algebra.
TEST(SmallModel, ExceptionFromTimeEventAfterSetUpIsAnError) {
  KickedDecay model;
  FinalValue J;
  int calls = 0;
  SmallModel::TimeEvent late;
  late.name = "late";
  late.time = [&calls](const std::vector<PetscReal> &) -> PetscReal {
    if (++calls > 1) throw std::runtime_error("time lambda failed on call " + std::to_string(calls));
    return 0.75;
  };
  model.addTimeEvent(late);
  const std::string message = refusalOf(model, J, true);
  EXPECT_NE(message.find("C++ exception in model callback"), std::string::npos) << message;
  EXPECT_NE(message.find("time lambda failed"), std::string::npos) << message;
}

// Its guardRates does not ask guardActive (as AD and hand-written models may not), so the
// engine's own guardActive queries are the first to meet the exception.
class KickedDecayWithOwnRates : public KickedDecay {
public:
  PetscErrorCode guardRates(PetscReal, Vec u, Vec, const ModeContext &c, Vec, PetscScalar *rates) const override {
    PetscScalar x = 0;
    PetscFunctionBeginUser;
    PetscCall(readOwned(u, 0, &x));
    if (onRoot()) rates[0] = -c.p[0] * x;  // γ = x − 0.1: γ̇ = ẋ
    PetscFunctionReturn(0);
  }
};

TEST(SmallModel, ExceptionFromGuardActiveIsAnError) {
  KickedDecayWithOwnRates model;
  FinalValue J;
  SmallModel::Guard low;
  low.name = "low";
  low.direction = Direction::Falling;
  low.value = [](PetscReal, const PetscScalar *u, const ModeContext &) { return u[0] - 0.1; };
  low.gradient = [](PetscReal, const PetscScalar *, const ModeContext &, PetscScalar *gu, PetscScalar *, PetscScalar *) { gu[0] = 1; };
  // Throws once the kick has switched the discrete state to 1.
  low.active = [](const DiscreteState &d) -> bool {
    if (d.at(0) > 0) throw std::runtime_error("active lambda failed in mode " + std::to_string(d.at(0)));
    return true;
  };
  model.addGuard(low);
  const std::string message = refusalOf(model, J);
  EXPECT_NE(message.find("guardActive"), std::string::npos) << message;
  EXPECT_NE(message.find("active lambda failed in mode 1"), std::string::npos) << message;
}

// A cost that implements terminal() but forgets to declare it with hasTerminal() used to give
// J = 0 and a zero gradient with no error.
class UndeclaredFinalValue : public CostFunction {
public:
  std::string name() const override { return "undeclared x(T)"; }
  PetscErrorCode terminal(PetscReal, Vec u, const ModeContext &, PetscScalar *value) const override { return readOwned(u, 0, value); }
  PetscErrorCode terminalGradient(PetscReal, Vec, const ModeContext &, Vec psi_u, PetscScalar *) const override { return writeOwned(psi_u, 0, 1.0); }
};

TEST(CostFunction, ImplementedButUndeclaredTerminalIsRefused) {
  KickedDecay model;
  UndeclaredFinalValue J;
  const std::string message = refusalOf(model, J);
  EXPECT_NE(message.find("cost 'undeclared x(T)' implements terminal() but hasTerminal() returns false"), std::string::npos) << message;
}

class UndeclaredIntegral : public CostFunction {
public:
  PetscErrorCode integrand(PetscReal, Vec u, const ModeContext &, PetscScalar *value) const override { return readOwned(u, 0, value); }
};

TEST(CostFunction, ImplementedButUndeclaredIntegrandIsRefused) {
  KickedDecay model;
  UndeclaredIntegral J;
  const std::string message = refusalOf(model, J);
  EXPECT_NE(message.find("implements integrand() but hasIntegrand() returns false"), std::string::npos) << message;
}

class NoPart : public CostFunction {
public:
  std::string name() const override { return "empty"; }
};

TEST(CostFunction, CostWithoutAnyPartIsRefused) {
  KickedDecay model;
  NoPart J;
  const std::string message = refusalOf(model, J);
  EXPECT_NE(message.find("cost 'empty' declares no part"), std::string::npos) << message;
}

TEST(SolveResult, ACopyOutlivesLaterSolves) {
  KickedDecay model;
  FinalValue J;
  Solver s(model);
  s.addCost(J);
  ASSERT_EQ(configureFixedStep(s, TSRK, 1e-2, kT), 0);
  s.setForwardSensitivities(true);
  ASSERT_EQ(solveKicked(s, {0.7, 0.4, 0.5}), 0);
  const SolveResult first = s.result();  // a copy
  const std::vector<double> u1 = gatherAll(first.finalState());
  const PetscScalar s00 = firstSensitivity(first.finalSensitivities());
  const PetscReal t1 = first.events().records().at(0).time;

  ASSERT_EQ(solveKicked(s, {1.5, 0.6, 2.0}), 0);  // different everything
  const SolveResult &second = s.result();
  EXPECT_NE(second.objective.at(0), first.objective.at(0));
  EXPECT_NE(gatherAll(second.finalState()), u1);
  EXPECT_NE(second.finalState(), first.finalState());
  EXPECT_NE(second.finalSensitivities(), first.finalSensitivities());
  // The copy still shows the first solve.
  EXPECT_EQ(gatherAll(first.finalState()), u1);
  EXPECT_DOUBLE_EQ(first.objective.at(0), u1.at(0));  // J = x(T)
  EXPECT_EQ(firstSensitivity(first.finalSensitivities()), s00);
  ASSERT_EQ(first.events().size(), 1u);
  EXPECT_EQ(first.events().records()[0].time, t1);
  EXPECT_NE(second.events().records().at(0).time, t1);
}

TEST(OwnedEntries, IndexOutsideTheVectorIsReported) {
  Vec v;
  ASSERT_EQ(VecCreateMPI(PETSC_COMM_WORLD, PETSC_DECIDE, 3, &v), 0);
  ASSERT_EQ(VecSet(v, 1.0), 0);
  {
    OwnedEntries e;
    ASSERT_EQ(e.get(v, OwnedEntries::Write), 0);
    e.write(1, 5.0);
    EXPECT_EQ(e.read(1), e.owns(1) ? 5.0 : 0.0);
    ASSERT_EQ(e.restore(), 0);
  }
  PetscScalar x;
  ASSERT_EQ(globalEntry(v, 1, &x), 0);
  EXPECT_EQ(x, 5.0);
  {
    ErrorCapture err;
    OwnedEntries e;
    ASSERT_EQ(e.get(v, OwnedEntries::Read), 0);
    EXPECT_EQ(e.read(3), 0.0);
    EXPECT_NE(e.restore(), 0);
    EXPECT_NE(err.message().find("index 3"), std::string::npos) << err.message();
    EXPECT_NE(err.message().find("[0, 3)"), std::string::npos) << err.message();
  }
  {
    // A write of an owned entry through a view taken for reading (the default) would be lost:
    // an error on the rank that owns it, not a no-op (other ranks write nothing either way).
    ErrorCapture err;
    OwnedEntries e;
    ASSERT_EQ(e.get(v), 0);
    e.write(1, 7.0);
    e.add(1, 7.0);
    const bool owner = e.owns(1);
    if (owner) {
      EXPECT_NE(e.restore(), 0);
      EXPECT_NE(err.message().find("OwnedEntries::Write"), std::string::npos) << err.message();
    } else EXPECT_EQ(e.restore(), 0);
  }
  ASSERT_EQ(globalEntry(v, 1, &x), 0);
  EXPECT_EQ(x, 5.0);  // unchanged
  VecDestroy(&v);
}
