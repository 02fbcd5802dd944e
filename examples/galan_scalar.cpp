// galan_scalar — the scalar hybrid ODE of [Galan1999], [SerbanRecuero2019] §5.1 (docs/validation.md).
//
// Model:  ẋ = 4 − x      while x³ − 5x² + 7x ≤ p   (mode d = {1})
//         ẋ = 10 − 2x    otherwise                  (mode d = {2})
// x(0) = 0, d(0) = {1}, p = 2.9, T = 5.
// Guards, both γ = x³ − 5x² + 7x − p (γ_x = 3x² − 10x + 7, γ_p = −1, γ_t = 0):
//   guard 0, active in mode 1, rising  → mode 2
//   guard 1, active in mode 2, falling → mode 1
// h(x) = x³ − 5x² + 7x has a local maximum h(1) = 3 and a local minimum h(7/3) ≈ 1.815, so for
// p = 2.9 the rising trajectory meets h = p three times: at x_a ≈ 0.78741 (h rising: 1 → 2),
// x_b ≈ 1.23825 (h falling: 2 → 1) and x_c ≈ 2.97435 (h rising: 1 → 2). The solution is piecewise
// analytic: x = 4 − 4e^{−t} up to t_a, x = 5 − (5 − x_a)e^{−2(t−t_a)} up to t_b,
// x = 4 − (4 − x_b)e^{−(t−t_b)} up to t_c, x = 5 − (5 − x_c)e^{−2(t−t_c)} after. Exact event
// times: t_a = 0.21921592229, t_b = 0.27581259147, t_c = 1.26634784180; x(5) = 4.99884240622.
// The first two events are only 0.0566 apart: a detector that only compares guard signs at
// step ends steps over both with larger steps (with dt = 0.5, γ < 0 at both ends of the first
// step); the engine's Hermite check for hidden crossings must find them.
// p appears only in the guards: its influence on x(T) comes entirely from the jump conditions.
// Cost: G = ∫₀ᵀ x dt (integrand r = x, r_x = 1, r_p = 0, no terminal part); published
// dG/dp = −2.31195. With ẋ = 4 − x (mode 1) and ẋ = 10 − 2x (mode 2), ∫ x dt over a mode-1 piece
// is 4Δt − Δx and over a mode-2 piece 5Δt − Δx/2, so G = 5T − t_a − (t_c − t_b) −
// (x_a − x_b + x_c + x(T))/2 with the event states x_{a,b,c} the roots of h(x) = p
// (dx_i/dp = 1/h'(x_i)); differentiating gives dG/dp = −2.311953107444 (G = 20.0290746533596;
// tests/forward_galan_scalar.py derives both). r = x is continuous at the events, so the
// integrand jump r⁻ − r⁺ vanishes: the whole gradient comes from the state jump S⁺ = S⁻ + (ẋ⁻ − ẋ⁺) τ_p, τ_p = −(h'(x) S⁻ − 1)/(h'(x) ẋ⁻).
//
// Defaults: RK4 (-ts_type rk -ts_rk_type 4) with fixed dt = 0.01 to T = 5 (RK4 has no error
// estimator, so the step stays fixed; event times are then accurate to ~1e-10).
//
// Run:
//   build/examples/galan_scalar -hs_monitor
//   build/examples/galan_scalar -ts_dt 0.5 -hs_summary out.json
//   build/examples/galan_scalar -ts_type cn -ts_dt 0.25 -p 2.5
//   mpiexec -n 2 build/examples/galan_scalar
//   build/examples/galan_scalar -hs_forward -ts_dt 1e-3   (G and dG/d(p, x(0))), prints
//     objective: G = 20.0290746533597
//     forward sensitivities:
//       cost             d/dp         d/du0[0]
//       G    -2.311953107e+00  1.249710602e+00
// Options: -p (the switching level, any finite number; -help lists it with its default).
// Prints each event (time, guard, modes, state x at the event), the final state and, with
// -hs_forward, the objective and the forward gradient table.
#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

#include "example_options.hpp"

using namespace hybridsens;

class GalanScalar : public HybridModel {
public:
  GalanScalar() { MPI_Comm_rank(PETSC_COMM_WORLD, &rank_); }
  // The single state entry lives on rank 0; other ranks own nothing.
  PetscInt localSize() const override { return rank_ == 0 ? 1 : 0; }
  DiscreteState initialDiscreteState() const override { return {1}; }
  std::vector<PetscReal> defaultParameters() const override { return {2.9}; }
  std::vector<std::string> parameterNames() const override { return {"p"}; }

  PetscErrorCode initialState(const ModeContext &, Vec u0) const override {
    PetscFunctionBeginUser;
    if (rank_ == 0) PetscCall(VecSetValue(u0, 0, 0.0, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(u0));
    PetscCall(VecAssemblyEnd(u0));
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &c, Vec f) const override {
    const PetscScalar *x;
    PetscScalar *y;
    PetscFunctionBeginUser;
    // VecGetArray/VecRestoreArray on every rank, not only on the owner: restoring bumps the
    // vector's state, and ranks whose state did not move would answer the engine's VecNorm from
    // a cached value and skip its reduction (a deadlock or MPI_ERR_TRUNCATE).
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(VecGetArray(f, &y));
    if (rank_ == 0) y[0] = c.d[0] == 1 ? 4 - x[0] : 10 - 2 * x[0];
    PetscCall(VecRestoreArray(f, &y));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhsJacobian(PetscReal, Vec, const ModeContext &c, Mat J) const override {
    PetscFunctionBeginUser;
    if (rank_ == 0) PetscCall(MatSetValue(J, 0, 0, c.d[0] == 1 ? -1.0 : -2.0, INSERT_VALUES));
    PetscFunctionReturn(0);
  }

  PetscInt numGuards() const override { return 2; }
  GuardInfo guardInfo(PetscInt j) const override {
    return j == 0 ? GuardInfo{"enter_mode_2", Direction::Rising} : GuardInfo{"enter_mode_1", Direction::Falling};
  }
  bool guardActive(PetscInt j, const DiscreteState &d) const override { return d[0] == j + 1; }

  static PetscScalar h(PetscScalar x) { return ((x - 5) * x + 7) * x; }

  PetscErrorCode guards(PetscReal, Vec u, const ModeContext &c, PetscScalar *g) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    if (rank_ == 0) {
      PetscCall(VecGetArrayRead(u, &x));
      g[0] = g[1] = h(x[0]) - c.p[0];
      PetscCall(VecRestoreArrayRead(u, &x));
    }
    PetscFunctionReturn(0);
  }

  PetscErrorCode guardGradient(PetscInt, PetscReal, Vec u, const ModeContext &, Vec gu, PetscScalar *gt,
                               PetscScalar *gp) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    if (rank_ == 0) {
      PetscCall(VecGetArrayRead(u, &x));
      PetscCall(VecSetValue(gu, 0, (3 * x[0] - 10) * x[0] + 7, INSERT_VALUES));
      PetscCall(VecRestoreArrayRead(u, &x));
      gp[0] = -1;  // written by the owner only: the engine sums γ_p over ranks
    }
    PetscCall(VecAssemblyBegin(gu));
    PetscCall(VecAssemblyEnd(gu));
    *gt = 0;
    PetscFunctionReturn(0);
  }

  PetscErrorCode transition(const EventId &id, PetscReal, Vec, DiscreteState &d) const override {
    d[0] = id.index == 0 ? 2 : 1;
    return 0;
  }

private:
  PetscMPIInt rank_ = 0;
};

// G = ∫ x dt: the integrand is the state itself, read on the rank that owns it (the library
// sums the ranks' contributions).
class IntegralOfX : public CostFunction {
public:
  std::string name() const override { return "G"; }
  bool hasIntegrand() const override { return true; }
  PetscErrorCode integrand(PetscReal, Vec u, const ModeContext &, PetscScalar *value) const override { return readOwned(u, 0, value); }
  PetscErrorCode integrandGradient(PetscReal, Vec, const ModeContext &, Vec r_u, PetscScalar *) const override {
    return writeOwned(r_u, 0, 1.0);  // r_u = e_0, r_p = 0
  }
};

// tests/test_ad_examples.cpp includes this file (without main) to reuse the hand-coded model
// and cost as the oracle of their AD versions.
#ifndef HYBRIDSENS_EXAMPLE_NO_MAIN
int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, "Scalar hybrid ODE of Galan et al. 1999 (Serban & Recuero 2019, §5.1) with hybridsens.\n"));
  {
    GalanScalar model;
    Solver solver(model);
    IntegralOfX G;
    solver.addCost(G);
    std::vector<PetscReal> p = model.defaultParameters();
    TS ts = solver.ts();
    const char *prefix;
    PetscCall(TSGetOptionsPrefix(ts, &prefix));
    PetscOptionsBegin(PETSC_COMM_WORLD, prefix, "Scalar hybrid ODE options", "");
    PetscCall(examples::realOption(PetscOptionsObject, "-p", "switching level p of the guard x^3 - 5x^2 + 7x = p", &p[0]));
    PetscOptionsEnd();
    PetscCall(solver.setParameters(p));
    PetscCall(TSSetType(ts, TSRK));
    PetscCall(TSRKSetType(ts, TSRK4));
    PetscCall(TSSetTimeStep(ts, 0.01));
    PetscCall(TSSetMaxTime(ts, 5.0));
    PetscCall(solver.setFromOptions());  // the command line overrides these defaults
    PetscCall(solver.solve());
    const SolveResult &result = solver.result();

    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "galan_scalar: p = %g, %zu events\n", (double)p[0], result.events().size()));
    for (const auto &e : result.events().records()) {
      PetscScalar x;
      PetscCall(globalEntry(e.uminus, 0, &x));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  t = %.17g  %-12s mode %s -> %s  x = %.17g\n", (double)e.time, e.name.c_str(),
                            describe(e.before).c_str(), describe(e.after).c_str(), (double)x));
    }
    PetscScalar xT;
    PetscCall(globalEntry(result.finalState(), 0, &xT));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "final state at t = %g: x = %.17g, mode %s\n", (double)result.finalTime,
                          (double)xT, describe(result.finalDiscreteState).c_str()));
    PetscCall(solver.viewGradients());
    PetscCall(solver.writeSummaryFromOptions());
    PetscCall(solver.checkGradientFromOptions());
  }
  PetscCall(PetscFinalize());
  return 0;
}
#endif
