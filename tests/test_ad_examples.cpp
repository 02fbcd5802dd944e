// AD-driven versions of the examples switched_linear, galan_scalar and scalar_measurements
// (hybridsens/ad.hpp): each model and cost written once as templates (ADModel/ADCost), solved side by side
// with the hand-coded classes of the example itself (included below, without its main), which
// serve as the oracle. Asserted, with the example's own solver settings and with a second
// method: the same events (guard/time ids, discrete states, step indices, times), the same
// final state, objective, forward and adjoint gradients (parameters and initial state) —
// ≤ 1e-14 relative (measured: bit-identical or a few ulps). Serial (the state of these small
// models lives on one rank; ADModel under MPI is covered by test_ad_jacobians and ad_bouncing_ball).
#include "ad_support.hpp"
#include "test_support.hpp"

#include <hybridsens/ad.hpp>
#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

#include <cstring>

// The hand-coded examples, each in its own namespace (their headers are already included).
#define HYBRIDSENS_EXAMPLE_NO_MAIN
namespace ex_switched {
#include "../examples/switched_linear.cpp"
}
namespace ex_galan {
#include "../examples/galan_scalar.cpp"
}
namespace ex_riccati {
#include "../examples/scalar_measurements.cpp"
}

using namespace hybridsens;
using namespace hstest;

namespace {

// ---- switched_linear: u̇ = A_d u, guards u1 − p_j u0 (both directions) ------------------------
class SwitchedLinearAD : public ADModel<SwitchedLinearAD> {
public:
  PetscInt stateSize() const override { return 2; }
  DiscreteState initialDiscreteState() const override { return {1}; }
  std::vector<PetscReal> defaultParameters() const override { return {2.75, 0.36}; }
  std::vector<std::string> parameterNames() const override { return {"p0_switch_1_to_2", "p1_switch_2_to_1"}; }
  template <class S> void initialState(const S *, S *u0) const {
    u0[0] = 0.0;
    u0[1] = 1.0;
  }
  template <class S> void rhs(S, const S *u, const S *, const DiscreteState &d, S *f) const {
    if (d[0] == 1) {
      f[0] = 1.0 * u[0] + -100.0 * u[1];
      f[1] = 10.0 * u[0] + 1.0 * u[1];
    } else {
      f[0] = 1.0 * u[0] + 10.0 * u[1];
      f[1] = -100.0 * u[0] + 1.0 * u[1];
    }
  }
  PetscInt numGuards() const override { return 2; }
  GuardInfo guardInfo(PetscInt j) const override { return {j == 0 ? "switch_1_to_2" : "switch_2_to_1", Direction::Both}; }
  bool guardActive(PetscInt j, const DiscreteState &d) const override { return d[0] == j + 1; }
  template <class S> S guard(PetscInt j, S, const S *u, const S *p, const DiscreteState &) const { return u[1] - p[j] * u[0]; }
  PetscErrorCode transition(const EventId &id, PetscReal, Vec, DiscreteState &d) const override {
    d[0] = id.index == 0 ? 2 : 1;
    return 0;
  }
};
class ComponentAD : public ADCost<ComponentAD> {
public:
  explicit ComponentAD(PetscInt i) : i_(i) {}
  bool hasTerminal() const override { return true; }
  template <class S> S terminal(S, const S *u, const S *, const DiscreteState &) const { return u[i_]; }

private:
  PetscInt i_;
};

// ---- galan_scalar: ẋ = 4 − x | 10 − 2x, guards h(x) − p, G = ∫ x dt ------------------------------
class GalanAD : public ADModel<GalanAD> {
public:
  PetscInt stateSize() const override { return 1; }
  DiscreteState initialDiscreteState() const override { return {1}; }
  std::vector<PetscReal> defaultParameters() const override { return {2.9}; }
  std::vector<std::string> parameterNames() const override { return {"p"}; }
  template <class S> void initialState(const S *, S *u0) const { u0[0] = 0.0; }
  template <class S> void rhs(S, const S *u, const S *, const DiscreteState &d, S *f) const {
    f[0] = d[0] == 1 ? S(4 - u[0]) : S(10 - 2 * u[0]);
  }
  PetscInt numGuards() const override { return 2; }
  GuardInfo guardInfo(PetscInt j) const override {
    return j == 0 ? GuardInfo{"enter_mode_2", Direction::Rising} : GuardInfo{"enter_mode_1", Direction::Falling};
  }
  bool guardActive(PetscInt j, const DiscreteState &d) const override { return d[0] == j + 1; }
  template <class S> S guard(PetscInt, S, const S *u, const S *p, const DiscreteState &) const { return ((u[0] - 5) * u[0] + 7) * u[0] - p[0]; }
  PetscErrorCode transition(const EventId &id, PetscReal, Vec, DiscreteState &d) const override {
    d[0] = id.index == 0 ? 2 : 1;
    return 0;
  }
};
class IntegralOfXAD : public ADCost<IntegralOfXAD> {
public:
  std::string name() const override { return "G"; }
  bool hasIntegrand() const override { return true; }
  template <class S> S integrand(S, const S *u, const S *, const DiscreteState &) const { return u[0]; }
};

// ---- scalar_measurements: ẋ = −a x², x(0) = x0, J = Σ 1/x(t_i)² ----------------------------------
class RiccatiAD : public ADModel<RiccatiAD> {
public:
  PetscInt stateSize() const override { return 1; }
  std::vector<PetscReal> defaultParameters() const override { return {1.0, 2.0}; }
  std::vector<std::string> parameterNames() const override { return {"a", "x0"}; }
  template <class S> void initialState(const S *p, S *u0) const { u0[0] = p[1]; }
  template <class S> void rhs(S, const S *u, const S *p, const DiscreteState &, S *f) const { f[0] = -p[0] * (u[0] * u[0]); }
};
class InverseSquareAD : public ADCost<InverseSquareAD> {
public:
  std::vector<PetscReal> measurementTimes() const override {
    std::vector<PetscReal> t;
    for (int i = 0; i <= 100; ++i) t.push_back(0.01 * i);
    return t;
  }
  template <class S> S measurement(PetscInt, S, const S *u, const S *, const DiscreteState &) const { return 1.0 / (u[0] * u[0]); }
};

// ---------------------------------------------------------------------------------------------
struct SolveResult {
  std::vector<double> times, finalState, objective, fwdP, adjP, fwdU0, adjU0;
  std::vector<std::string> ids;
  std::vector<PetscInt> steps;
};

struct Settings {
  const char *type;
  const char *rkType;  // nullptr unless RK
  PetscReal dt, T;
  bool u0FromParameters;  // scalar_measurements: x0 is a parameter, no u0 columns
};

SolveResult solve(HybridModel &model, const std::vector<const CostFunction *> &costs, const Settings &s) {
  SolveResult r;
  Solver solver(model);
  for (auto *c : costs) solver.addCost(*c);
  ScopedOptions o("-ts_adapt_type none");
  EXPECT_EQ(solver.setFromOptions(), 0);
  TSSetType(solver.ts(), s.type);
  if (s.rkType) TSRKSetType(solver.ts(), s.rkType);
  TSSetTimeStep(solver.ts(), s.dt);
  TSSetMaxTime(solver.ts(), s.T);
  if (s.u0FromParameters) solver.setInitialStateSensitivities({});
  EXPECT_EQ(solver.setFromOptions(), 0);
  solver.setForwardSensitivities(true);
  solver.setAdjoint(true);
  EXPECT_EQ(solver.solve(), 0);
  for (const auto &e : solver.result().events().records()) {
    r.times.push_back(e.time);
    r.steps.push_back(e.step);
    r.ids.push_back(e.name + " " + describe(e.before) + "->" + describe(e.after));
  }
  r.finalState = gatherAll(solver.result().finalState());
  r.objective = solver.result().objective;
  for (size_t k = 0; k < costs.size(); ++k) {
    const auto &fp = solver.result().gradient[k].forwardP, &ap = solver.result().gradient[k].adjointP;
    const auto &fu = solver.result().gradient[k].forwardU0, &au = solver.result().gradient[k].adjointU0;
    r.fwdP.insert(r.fwdP.end(), fp.begin(), fp.end());
    r.adjP.insert(r.adjP.end(), ap.begin(), ap.end());
    r.fwdU0.insert(r.fwdU0.end(), fu.begin(), fu.end());
    r.adjU0.insert(r.adjU0.end(), au.begin(), au.end());
  }
  return r;
}

// Identical event sequences, and every number ≤ 1e-14 relative; returns the worst difference.
double compare(const SolveResult &hand, const SolveResult &ad, const std::string &label) {
  EXPECT_EQ(hand.ids, ad.ids) << label;
  EXPECT_EQ(hand.steps, ad.steps) << label;
  double worst = 0;
  for (auto [name, a, b] : {std::tuple<const char *, const std::vector<double> *, const std::vector<double> *>{"event times", &hand.times, &ad.times},
                            {"final state", &hand.finalState, &ad.finalState},
                            {"objective", &hand.objective, &ad.objective},
                            {"forward dJ/dp", &hand.fwdP, &ad.fwdP},
                            {"adjoint dJ/dp", &hand.adjP, &ad.adjP},
                            {"forward dJ/du0", &hand.fwdU0, &ad.fwdU0},
                            {"adjoint dJ/du0", &hand.adjU0, &ad.adjU0}}) {
    EXPECT_EQ(a->size(), b->size()) << label << " " << name;
    if (a->size() != b->size()) continue;
    const double e = relDiffInf(*a, *b);
    EXPECT_LE(e, 1e-14) << label << " " << name;
    worst = std::max(worst, e);
  }
  // Non-vacuous: the gradients are there and nonzero.
  EXPECT_FALSE(ad.adjP.empty()) << label;
  EXPECT_GT(maxAbs(ad.adjP), 1e-6) << label;
  PetscPrintf(PETSC_COMM_WORLD, "%-40s %2zu events, AD vs hand-coded worst relative difference %.2e\n", label.c_str(), ad.times.size(), worst);
  return worst;
}

TEST(ADExamples, SwitchedLinear) {
  ex_switched::SwitchedLinear hand;
  ex_switched::ComponentAtFinalTime h0(0), h1(1);
  SwitchedLinearAD ad;
  ComponentAD a0(0), a1(1);
  for (const Settings &s : {Settings{TSCN, nullptr, 1.0 / 256, 0.125, false}, Settings{TSRK, TSRK4, 1e-3, 0.2, false}}) {
    const std::string label = std::string("switched_linear ") + s.type;
    const SolveResult h = solve(hand, {&h0, &h1}, s), a = solve(ad, {&a0, &a1}, s);
    ASSERT_GE(a.times.size(), 2u) << label;
    compare(h, a, label);
  }
}

TEST(ADExamples, GalanScalar) {
  ex_galan::GalanScalar hand;
  ex_galan::IntegralOfX hG;
  GalanAD ad;
  IntegralOfXAD aG;
  for (const Settings &s : {Settings{TSRK, TSRK4, 0.01, 5.0, false}, Settings{TSCN, nullptr, 0.25, 5.0, false}}) {
    const std::string label = std::string("galan_scalar ") + s.type;
    const SolveResult h = solve(hand, {&hG}, s), a = solve(ad, {&aG}, s);
    ASSERT_EQ(a.times.size(), 3u) << label;
    compare(h, a, label);
  }
}

TEST(ADExamples, ScalarMeasurements) {
  ex_riccati::Riccati hand;
  ex_riccati::InverseSquareMeasurements hJ;
  RiccatiAD ad;
  InverseSquareAD aJ;
  for (const Settings &s : {Settings{TSRK, TSRK4, 0.01, 1.0, true}, Settings{TSCN, nullptr, 1e-3, 1.0, true}}) {
    const std::string label = std::string("scalar_measurements ") + s.type;
    const SolveResult h = solve(hand, {&hJ}, s), a = solve(ad, {&aJ}, s);
    compare(h, a, label);
    EXPECT_NEAR(a.objective[0], 109.585, 1e-3);  // [Nandi2018]'s published value (closed form 109.585)
  }
}

} // namespace
