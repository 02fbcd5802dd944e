// bouncing_ball — a ball bouncing on the floor: an impact with a velocity reset
// (docs/validation.md, bouncing ball).
//
// Model:  q̇ = v,  v̇ = −g  (g = 9.81),  q(0) = q0,  v(0) = 0,  T = 5.
// Guard γ = q (γ_q = 1), falling. Reset at an impact: q⁺ = q⁻, v⁺ = −e v⁻, so
//   R_u = diag(1, −e),  ∂v⁺/∂e = −v⁻ (R_p column of e),  R_t = 0.
// Parameters (q0, e) = (10, 0.8); q0 enters only through u0 (∂u0/∂p: entry (q, q0) = 1).
// Discrete state d = {number of impacts so far}: each transition increments it, so the event
// list reads [0] -> [1] -> [2]. The dynamics do not depend on d.
// Closed form: t1 = sqrt(2 q0/g) = 1.42784312293, v1⁻ = −g t1 = −14.0071410359,
// v1⁺ = −e v1⁻ = 11.2057128287; between impacts the ball flies for 2 v_k⁺/g, so
// t2 = t1 + 2 v1⁺/g = 3.71239211961, v2⁻ = −v1⁺, v2⁺ = e v1⁺ = 8.96457026299; the third impact
// would be at 5.54 > T, hence two impacts. q(5) = 3.41068478181, v(5) = −3.66686304364.
// The motion is quadratic in t, so RK4 integrates it exactly (up to round-off) with any step;
// only event location limits the accuracy.
// With e = 0.5 the impacts accumulate at t∞ = t1 (1 + e)/(1 − e) = 4.2835 (Zeno): use a
// horizon before that (e.g. -ts_max_time 4, four impacts); to T = 5 the engine must stop with a
// Zeno or grazing error instead of a wrong answer.
// Cost: ψ = q(T) + ∫₀ᵀ v² dt (terminal ψ_u = (1, 0); integrand r = v², r_u = (0, 2v); r_p = 0).
// With t1 = sqrt(2 q0/g), V1 = e g t1, V2 = e V1 (post-impact speeds), t2 = t1 (1 + 2e),
// s = T − t2 and v(T) = V2 − g s:
//   q(T) = V2 s − g s²/2,
//   ∫v² = g² t1³/3 (fall)  +  2 V1³/(3g) (first flight)  +  (V2³ − v(T)³)/(3g) (since the last impact),
// ψ = 218.568265722416, dψ/dq0 = 30.1699502350, dψ/de = 512.390738363
// (tests/forward_bouncing_ball.py differentiates this closed form). With v(0) = 0 a change of
// v(0) only delays the motion after the first impact by 1/g, so dψ/dv(0) = −(v(T) + v(T)²)/g
// = −0.996842155. The integrand jumps at an impact (r⁻ − r⁺ = (1 − e²) v⁻²), so the quadrature
// sensitivity gains (r⁻ − r⁺) τ_p there, with τ_p = −S_q⁻ / v⁻ (γ = q, γ_p = 0);
// the state jump is S⁺ = R_u S⁻ + R_p + c τ_p with c = R_u u̇⁻ − u̇⁺ = (1 + e)(v⁻, g).
//
// Defaults: RK4 (-ts_type rk -ts_rk_type 4), dt = 0.01, T = 5.
//
// Run:
//   build/examples/bouncing_ball -hs_monitor
//   build/examples/bouncing_ball -e 0.5 -ts_max_time 4 -ts_dt 0.1 -hs_summary out.json
//   build/examples/bouncing_ball -q0 5 -ts_type cn
//   mpiexec -n 3 build/examples/bouncing_ball
//   build/examples/bouncing_ball -hs_forward     (ψ and dψ/d(q0, e, q(0), v(0))), prints
//     objective: psi = 218.568265722416
//     forward sensitivities:
//       cost            d/dq0             d/de         d/du0[0]         d/du0[1]
//       psi   3.016995023e+01  5.123907384e+02  3.016995023e+01 -9.968421547e-01
//   (u0[0] = q(0), u0[1] = v(0); with -hs_adjoint also the adjoint table and their difference)
// Options: -q0 (initial height, > 0), -e (restitution, in [0, 1]); -help lists them with their
// defaults, and a value outside its domain is refused by name.
// Prints each impact (time, modes, q⁻, v⁻, v⁺), the final state and, with -hs_forward, the
// objective and the forward gradient table.
#include <hybridsens/hybridsens.hpp>
#include <hybridsens/small_model.hpp>

#include <petscts.h>

#include "example_options.hpp"

using namespace hybridsens;

// Indices into u = (q, v) and p = (q0, e); matrices are dense row-major (entry (i, j) at i * columns + j).
enum : PetscInt { Q, V, N };
enum : PetscInt { Q0, E, NP };

// The model as lambdas on plain arrays (hybridsens/small_model.hpp): the two-entry state lives
// on rank 0, and the same program runs on any number of ranks.
class BouncingBall : public SmallModel {
public:
  static constexpr PetscReal gravity = 9.81;

  BouncingBall() : SmallModel(N) {
    params = {10.0, 0.8};
    paramNames = {"q0", "e"};
    d0 = {0};  // number of impacts so far
    initial = [](const ModeContext &c, PetscScalar *u0) { u0[Q] = c.p[Q0], u0[V] = 0; };
    initialJacobianP = [](const ModeContext &, PetscScalar *du0dp) { du0dp[Q * NP + Q0] = 1; };
    f = [](PetscReal, const PetscScalar *u, PetscScalar *f, const ModeContext &) { f[Q] = u[V], f[V] = -gravity; };
    dfdu = [](PetscReal, const PetscScalar *, PetscScalar *J, const ModeContext &) { J[Q * N + V] = 1; };
    // f does not depend on p: dfdp stays unset (the library verifies it).

    Guard impact;
    impact.name = "impact";
    impact.direction = Direction::Falling;
    impact.value = [](PetscReal, const PetscScalar *u, const ModeContext &) { return u[Q]; };
    // γ_u = (1, 0); γ_t = γ_p = 0: the floor does not move with (q0, e).
    impact.gradient = [](PetscReal, const PetscScalar *, const ModeContext &, PetscScalar *gu, PetscScalar *, PetscScalar *) { gu[Q] = 1; };
    impact.transition = [](PetscReal, const PetscScalar *, DiscreteState &d) { ++d[0]; };
    // u⁺ = (q⁻, −e v⁻): uplus holds u⁻ on entry.
    impact.reset = [](PetscReal, const PetscScalar *, const ModeContext &c, PetscScalar *uplus) { uplus[V] *= -c.p[E]; };
    impact.resetJacobian = [](PetscReal, const PetscScalar *, const ModeContext &c, PetscScalar *Ru) { Ru[Q * N + Q] = 1, Ru[V * N + V] = -c.p[E]; };
    impact.resetJacobianP = [](PetscReal, const PetscScalar *uminus, const ModeContext &, PetscScalar *Rp) { Rp[V * NP + E] = -uminus[V]; };
    impact.resetTimeDerivative = [](PetscReal, const PetscScalar *, const ModeContext &, PetscScalar *) {};  // R_t = 0
    addGuard(impact);
  }
};

// ψ = q(T) + ∫₀ᵀ v² dt: one cost with a terminal and an integral part. Each rank returns its
// contribution (readOwned: u[i] on the rank owning it, zero elsewhere; the library sums).
class HeightPlusKinetic : public CostFunction {
public:
  std::string name() const override { return "psi"; }
  bool hasTerminal() const override { return true; }
  bool hasIntegrand() const override { return true; }
  PetscErrorCode terminal(PetscReal, Vec u, const ModeContext &, PetscScalar *value) const override { return readOwned(u, Q, value); }
  PetscErrorCode terminalGradient(PetscReal, Vec, const ModeContext &, Vec psi_u, PetscScalar *) const override {
    return writeOwned(psi_u, Q, 1.0);
  }
  PetscErrorCode integrand(PetscReal, Vec u, const ModeContext &, PetscScalar *value) const override {
    PetscScalar v = 0;
    PetscFunctionBeginUser;
    PetscCall(readOwned(u, V, &v));
    *value = v * v;
    PetscFunctionReturn(0);
  }
  PetscErrorCode integrandGradient(PetscReal, Vec u, const ModeContext &, Vec r_u, PetscScalar *) const override {
    PetscScalar v = 0;
    PetscFunctionBeginUser;
    PetscCall(readOwned(u, V, &v));
    PetscCall(writeOwned(r_u, V, 2 * v));
    PetscFunctionReturn(0);
  }
};

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, "Bouncing ball (impacts with a velocity reset) with hybridsens.\n"));
  {
    BouncingBall model;
    Solver solver(model);
    HeightPlusKinetic psi;
    solver.addCost(psi);
    std::vector<PetscReal> p = model.defaultParameters();
    TS ts = solver.ts();
    const char *prefix;
    PetscCall(TSGetOptionsPrefix(ts, &prefix));
    PetscOptionsBegin(PETSC_COMM_WORLD, prefix, "Bouncing ball options", "");
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

    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "bouncing_ball: q0 = %g, e = %g, %zu impacts\n", (double)p[0], (double)p[1],
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
