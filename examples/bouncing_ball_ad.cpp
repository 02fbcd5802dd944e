// bouncing_ball_ad — examples/bouncing_ball.cpp with every function written ONCE, as a
// template over the scalar type; all derivatives (∂f/∂u, ∂f/∂p, γ_u/γ_t/γ_p, R_u v, R_uᵀ w,
// R_p, R_t, ∂u0/∂p, ψ_u, r_u, …) come from hybridsens/ad.hpp (Sacado forward mode).
//
// Same model, parameters, cost, defaults and output as bouncing_ball (which is kept, hand-coded,
// as the oracle: tests/ad_bouncing_ball.py asserts identical events, trajectory, objective and
// forward/adjoint gradients):
//   q̇ = v, v̇ = −g;  guard γ = q (falling);  reset q⁺ = q⁻, v⁺ = −e v⁻;  u0 = (q0, 0);
//   ψ = q(T) + ∫₀ᵀ v² dt;  p = (q0, e) = (10, 0.8);  RK4, dt = 0.01, T = 5.
// Built only when the AD component is enabled (Trilinos Sacado found).
//
// Options as bouncing_ball: -q0 (> 0), -e (in [0, 1]).
//
// Run:
//   build/examples/bouncing_ball_ad -hs_forward -hs_adjoint
//   build/examples/bouncing_ball_ad -hs_check_gradient
#include <hybridsens/ad.hpp>
#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

#include "example_options.hpp"

using namespace hybridsens;

class BouncingBall : public ADModel<BouncingBall> {
public:
  static constexpr PetscReal gravity = 9.81;

  PetscInt stateSize() const override { return 2; }  // (q, v), on rank 0
  DiscreteState initialDiscreteState() const override { return {0}; }
  std::vector<PetscReal> defaultParameters() const override { return {10.0, 0.8}; }
  std::vector<std::string> parameterNames() const override { return {"q0", "e"}; }

  template <class S> void initialState(const S *p, S *u0) const {
    u0[0] = p[0];
    u0[1] = 0.0;
  }
  template <class S> void rhs(S, const S *u, const S *, const DiscreteState &, S *f) const {
    f[0] = u[1];
    f[1] = -gravity;
  }

  PetscInt numGuards() const override { return 1; }
  GuardInfo guardInfo(PetscInt) const override { return {"impact", Direction::Falling}; }
  template <class S> S guard(PetscInt, S, const S *u, const S *, const DiscreteState &) const { return u[0]; }

  PetscErrorCode transition(const EventId &, PetscReal, Vec, DiscreteState &d) const override {
    ++d[0];  // d counts the impacts
    return 0;
  }
  bool hasReset(const EventId &) const override { return true; }
  template <class S> void reset(const EventId &, S, const S *u, const S *p, const DiscreteState &, S *uplus) const {
    uplus[0] = u[0];
    uplus[1] = -p[1] * u[1];
  }
};

// ψ = q(T) + ∫₀ᵀ v² dt.
class HeightPlusKinetic : public ADCost<HeightPlusKinetic> {
public:
  std::string name() const override { return "psi"; }
  bool hasTerminal() const override { return true; }
  bool hasIntegrand() const override { return true; }
  template <class S> S terminal(S, const S *u, const S *, const DiscreteState &) const { return u[0]; }
  template <class S> S integrand(S, const S *u, const S *, const DiscreteState &) const { return u[1] * u[1]; }
};

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, "Bouncing ball (impacts with a velocity reset), derivatives by automatic differentiation.\n"));
  {
    BouncingBall model;
    Solver solver(model);
    HeightPlusKinetic psi;
    solver.addCost(psi);
    std::vector<PetscReal> p = model.defaultParameters();
    TS ts = solver.ts();
    const char *prefix;
    PetscCall(TSGetOptionsPrefix(ts, &prefix));
    PetscOptionsBegin(PETSC_COMM_WORLD, prefix, "Bouncing ball (AD) options", "");
    PetscCall(examples::realOption(PetscOptionsObject, "-q0", "initial height of the ball above the floor", &p[0], examples::positive()));
    // e = 0 is in the domain (a plastic impact): the ball then rests on the floor, on its guard,
    // after the first impact; refusing that state is the engine's business, not this check's.
    PetscCall(examples::realOption(PetscOptionsObject, "-e", "coefficient of restitution", &p[1], examples::closedInterval(0, 1)));
    PetscOptionsEnd();
    PetscCall(solver.setParameters(p));
    PetscCall(TSSetType(ts, TSRK));
    PetscCall(TSRKSetType(ts, TSRK4));
    PetscCall(TSSetTimeStep(ts, 0.01));
    PetscCall(TSSetMaxTime(ts, 5.0));
    PetscCall(solver.setFromOptions());  // the command line overrides these defaults
    PetscCall(solver.solve());
    const SolveResult &result = solver.result();

    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "bouncing_ball_ad: q0 = %g, e = %g, %zu impacts\n", (double)p[0], (double)p[1],
                          result.events().size()));
    for (const auto &r : result.events().records()) {
      PetscScalar q, vminus, vplus;
      PetscCall(globalEntry(r.uminus, 0, &q));
      PetscCall(globalEntry(r.uminus, 1, &vminus));
      PetscCall(globalEntry(r.uplus, 1, &vplus));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  t = %.17g  %s mode %s -> %s  q- = %.17g  v- = %.17g  v+ = %.17g\n",
                            (double)r.time, r.name.c_str(), describe(r.before).c_str(), describe(r.after).c_str(),
                            (double)q, (double)vminus, (double)vplus));
    }
    PetscScalar q, v;
    PetscCall(globalEntry(result.finalState(), 0, &q));
    PetscCall(globalEntry(result.finalState(), 1, &v));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "final state at t = %g: q = %.17g, v = %.17g\n", (double)result.finalTime,
                          (double)q, (double)v));
    PetscCall(solver.viewGradients());
    PetscCall(solver.writeSummaryFromOptions());
    PetscCall(solver.checkGradientFromOptions());
  }
  PetscCall(PetscFinalize());
  return 0;
}
