// quickstart: the smallest complete hybridsens program. A ball falls from height q0 and bounces
// with restitution e (q' = v, v' = -g; at q = 0 falling, v+ = -e v-). Cost: the height at T = 5.
// Run: quickstart -hs_adjoint -hs_forward     (dq(T)/d(q0, e) both ways)   -hs_check_gradient
#include <hybridsens/ad.hpp>
#include <hybridsens/hybridsens.hpp>

using namespace hybridsens;

struct Ball : ADModel<Ball> {  // every derivative comes from the templates, by AD
  PetscInt stateSize() const override { return 2; }  // u = (q, v)
  DiscreteState initialDiscreteState() const override { return {0}; }
  std::vector<PetscReal> defaultParameters() const override { return {10.0, 0.8}; }  // p = (q0, e)
  std::vector<std::string> parameterNames() const override { return {"q0", "e"}; }
  template <class S> void initialState(const S *p, S *u0) const { u0[0] = p[0], u0[1] = 0.0; }
  template <class S> void rhs(S, const S *u, const S *, const DiscreteState &, S *f) const { f[0] = u[1], f[1] = -9.81; }
  PetscInt numGuards() const override { return 1; }
  GuardInfo guardInfo(PetscInt) const override { return {"impact", Direction::Falling}; }
  template <class S> S guard(PetscInt, S, const S *u, const S *, const DiscreteState &) const { return u[0]; }
  PetscErrorCode transition(const EventId &, PetscReal, Vec, DiscreteState &d) const override { return ++d[0], 0; }
  bool hasReset(const EventId &) const override { return true; }
  template <class S> void reset(const EventId &, S, const S *u, const S *p, const DiscreteState &, S *up) const {
    up[0] = u[0], up[1] = -p[1] * u[1];
  }
};

struct FinalHeight : ADCost<FinalHeight> {  // J = q(T)
  std::string name() const override { return "q(T)"; }
  bool hasTerminal() const override { return true; }
  template <class S> S terminal(S, const S *u, const S *, const DiscreteState &) const { return u[0]; }
};

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, "hybridsens quickstart: a bouncing ball.\n"));
  {
    Ball ball;
    FinalHeight height;
    Solver solver(ball);
    solver.addCost(height);
    PetscCall(TSSetType(solver.ts(), TSRK));  // defaults; the command line overrides them
    PetscCall(TSSetTimeStep(solver.ts(), 0.01));
    PetscCall(TSSetMaxTime(solver.ts(), 5.0));
    PetscCall(solver.setFromOptions());
    PetscCall(solver.solve());
    PetscCall(solver.viewGradients());            // objective and gradient tables
    PetscCall(solver.writeSummaryFromOptions());  // -hs_summary FILE (JSON)
    PetscCall(solver.checkGradientFromOptions());  // -hs_check_gradient
  }
  PetscCall(PetscFinalize());
  return 0;
}
