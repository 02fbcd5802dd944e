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

#include <petscts.h>

#include "example_options.hpp"

using namespace hybridsens;

class BouncingBall : public HybridModel {
public:
  static constexpr PetscReal gravity = 9.81;

  BouncingBall() { MPI_Comm_rank(PETSC_COMM_WORLD, &rank_); }
  // The whole (two-entry) state (q, v) lives on rank 0; other ranks own nothing.
  PetscInt localSize() const override { return rank_ == 0 ? 2 : 0; }
  DiscreteState initialDiscreteState() const override { return {0}; }
  std::vector<PetscReal> defaultParameters() const override { return {10.0, 0.8}; }
  std::vector<std::string> parameterNames() const override { return {"q0", "e"}; }

  PetscErrorCode initialState(const ModeContext &c, Vec u0) const override {
    PetscFunctionBeginUser;
    if (rank_ == 0) {
      PetscCall(VecSetValue(u0, 0, c.p[0], INSERT_VALUES));
      PetscCall(VecSetValue(u0, 1, 0.0, INSERT_VALUES));
    }
    PetscCall(VecAssemblyBegin(u0));
    PetscCall(VecAssemblyEnd(u0));
    PetscFunctionReturn(0);
  }

  PetscErrorCode initialStateJacobianP(const ModeContext &, Mat du0dp) const override {
    PetscFunctionBeginUser;
    if (rank_ == 0) PetscCall(MatSetValue(du0dp, 0, 0, 1.0, INSERT_VALUES));
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &, Vec f) const override {
    const PetscScalar *x;
    PetscScalar *y;
    PetscFunctionBeginUser;
    // VecGetArray/VecRestoreArray on every rank, not only on the owner: restoring bumps the
    // vector's state, and ranks whose state did not move would answer the engine's VecNorm from
    // a cached value and skip its reduction (a deadlock or MPI_ERR_TRUNCATE).
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(VecGetArray(f, &y));
    if (rank_ == 0) {
      y[0] = x[1];
      y[1] = -gravity;
    }
    PetscCall(VecRestoreArray(f, &y));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhsJacobian(PetscReal, Vec, const ModeContext &, Mat J) const override {
    PetscFunctionBeginUser;
    if (rank_ == 0) PetscCall(MatSetValue(J, 0, 1, 1.0, INSERT_VALUES));
    PetscFunctionReturn(0);
  }

  PetscInt numGuards() const override { return 1; }
  GuardInfo guardInfo(PetscInt) const override { return {"impact", Direction::Falling}; }

  PetscErrorCode guards(PetscReal, Vec u, const ModeContext &, PetscScalar *g) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    if (rank_ == 0) {
      PetscCall(VecGetArrayRead(u, &x));
      g[0] = x[0];
      PetscCall(VecRestoreArrayRead(u, &x));
    }
    PetscFunctionReturn(0);
  }

  PetscErrorCode guardGradient(PetscInt, PetscReal, Vec, const ModeContext &, Vec gu, PetscScalar *gt,
                               PetscScalar *) const override {
    PetscFunctionBeginUser;
    if (rank_ == 0) PetscCall(VecSetValue(gu, 0, 1.0, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(gu));
    PetscCall(VecAssemblyEnd(gu));
    *gt = 0;  // γ_p = 0: the floor does not move with (q0, e)
    PetscFunctionReturn(0);
  }

  PetscErrorCode transition(const EventId &, PetscReal, Vec, DiscreteState &d) const override {
    ++d[0];
    return 0;
  }

  bool hasReset(const EventId &) const override { return true; }

  PetscErrorCode reset(const EventId &, PetscReal, Vec uminus, const ModeContext &c, Vec uplus) const override {
    PetscFunctionBeginUser;
    PetscCall(VecCopy(uminus, uplus));
    PetscCall(scaleVelocity(uplus, -c.p[1]));
    PetscFunctionReturn(0);
  }

  // R_u = diag(1, −e) is symmetric: both actions scale the velocity component by −e.
  PetscErrorCode resetJacobianAction(const EventId &, PetscReal, Vec, const ModeContext &c, Vec v,
                                     Vec out) const override {
    PetscFunctionBeginUser;
    PetscCall(VecCopy(v, out));
    PetscCall(scaleVelocity(out, -c.p[1]));
    PetscFunctionReturn(0);
  }

  PetscErrorCode resetJacobianTransposeAction(const EventId &, PetscReal, Vec, const ModeContext &c, Vec w,
                                              Vec out) const override {
    PetscFunctionBeginUser;
    PetscCall(VecCopy(w, out));
    PetscCall(scaleVelocity(out, -c.p[1]));
    PetscFunctionReturn(0);
  }

  PetscErrorCode resetJacobianP(const EventId &, PetscReal, Vec uminus, const ModeContext &, Mat Rp) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(uminus, &x));
    if (rank_ == 0) PetscCall(MatSetValue(Rp, 1, 1, -x[1], INSERT_VALUES));  // ∂v⁺/∂e = −v⁻
    PetscCall(VecRestoreArrayRead(uminus, &x));
    PetscFunctionReturn(0);
  }

  PetscErrorCode resetTimeDerivative(const EventId &, PetscReal, Vec, const ModeContext &, Vec Rt) const override {
    PetscFunctionBeginUser;
    PetscCall(VecZeroEntries(Rt));
    PetscFunctionReturn(0);
  }

private:
  PetscErrorCode scaleVelocity(Vec u, PetscScalar factor) const {
    PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArray(u, &x));  // on every rank: see rhs()
    if (rank_ == 0) x[1] *= factor;
    PetscCall(VecRestoreArray(u, &x));
    PetscFunctionReturn(0);
  }
  PetscMPIInt rank_ = 0;
};

// ψ = q(T) + ∫₀ᵀ v² dt: one cost with a terminal and an integral part. The state lives on
// the rank that owns it; this rank returns its contribution (the library sums over ranks).
class HeightPlusKinetic : public CostFunction {
public:
  std::string name() const override { return "psi"; }
  bool hasTerminal() const override { return true; }
  bool hasIntegrand() const override { return true; }
  PetscErrorCode terminal(PetscReal, Vec u, const ModeContext &, PetscScalar *value) const override {
    return component(u, 0, value);
  }
  PetscErrorCode terminalGradient(PetscReal, Vec u, const ModeContext &, Vec psi_u, PetscScalar *) const override {
    return setComponent(u, 0, 1.0, psi_u);
  }
  PetscErrorCode integrand(PetscReal, Vec u, const ModeContext &, PetscScalar *value) const override {
    PetscScalar v = 0;
    PetscFunctionBeginUser;
    PetscCall(component(u, 1, &v));
    *value = v * v;
    PetscFunctionReturn(0);
  }
  PetscErrorCode integrandGradient(PetscReal, Vec u, const ModeContext &, Vec r_u, PetscScalar *) const override {
    PetscScalar v = 0;
    PetscFunctionBeginUser;
    PetscCall(component(u, 1, &v));
    PetscCall(setComponent(u, 1, 2 * v, r_u));
    PetscFunctionReturn(0);
  }

private:
  // u[i] on the rank owning it; *value is left untouched elsewhere (zero on entry).
  static PetscErrorCode component(Vec u, PetscInt i, PetscScalar *value) {
    PetscInt lo, hi;
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetOwnershipRange(u, &lo, &hi));
    PetscCall(VecGetArrayRead(u, &x));
    if (i >= lo && i < hi) *value = x[i - lo];
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  // out[i] = a on the owning rank (out is zero on entry).
  static PetscErrorCode setComponent(Vec u, PetscInt i, PetscScalar a, Vec out) {
    PetscInt lo, hi;
    PetscFunctionBeginUser;
    PetscCall(VecGetOwnershipRange(u, &lo, &hi));
    if (i >= lo && i < hi) PetscCall(VecSetValue(out, i, a, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(out));
    PetscCall(VecAssemblyEnd(out));
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
      PetscCall(vecEntry(r.uminus, 0, &q));
      PetscCall(vecEntry(r.uminus, 1, &vminus));
      PetscCall(vecEntry(r.uplus, 1, &vplus));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  t = %.17g  %s mode %s -> %s  q- = %.17g  v- = %.17g  v+ = %.17g\n",
                            (double)r.time, r.name.c_str(), describe(r.before).c_str(), describe(r.after).c_str(),
                            (double)q, (double)vminus, (double)vplus));
    }
    PetscScalar q, v;
    PetscCall(vecEntry(result.finalState(), 0, &q));
    PetscCall(vecEntry(result.finalState(), 1, &v));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "final state at t = %g: q = %.17g, v = %.17g\n", (double)result.finalTime,
                          (double)q, (double)v));
    PetscCall(solver.viewGradients());
    PetscCall(solver.writeSummaryFromOptions());
    PetscCall(solver.checkGradientFromOptions());
  }
  PetscCall(PetscFinalize());
  return 0;
}
