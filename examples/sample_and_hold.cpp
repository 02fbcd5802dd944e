// sample_and_hold — event-triggered control: an unstable plant stabilized by a controller that
// holds the last sampled state and samples again only when the state has drifted δ away from
// it. The held sample is memory that never fades: the dynamics depend on the state at the last
// transition for as long as the mode lasts, and the state moves at every sampling instant —
// the case where the memory sensitivity s⁺ of [SerbanRecuero2019] is wrong and the total derivative is needed.
//
// Model:  ẋ = a x − k m,   m = x at the last sample,   x(0) = m(0) = x₀,   T = 10.
// A sample is taken when |x − m| reaches δ: guards "upper" γ = x − m − δ and "lower"
// γ = m − x − δ, both rising (γ_u = ±(1, −1), γ_δ = −1). The memory slot m (hybridsens/memory.hpp)
// has ṁ = 0 and the capture m⁺ = x⁻. Discrete state: the number of samples (the dynamics do
// not depend on it). Parameters p = (a, k, δ, x₀) = (0.5, 1.5, 0.15, 1).
//
// Closed form (ρ = k/a): after a sample m at τ_i,  x(τ_i + s) = m [(1 − ρ) e^{as} + ρ], so
// x − m = m (1 − ρ)(e^{as} − 1) moves away from m towards zero (ρ > 1); the next sample is at
//   s_i = ln(1 + δ / (|m| (ρ − 1))) / a,   with x⁻ = m − sign(m) δ,
// i.e. the held value steps by δ towards zero until it settles in a limit cycle around 0
// (defaults: 11 samples, at 0.1446, 0.3138, …, 8.6643). Each segment contributes
//   ∫ x² = m² [(1 − ρ)² (e^{2as} − 1)/(2a) + 2ρ(1 − ρ)(e^{as} − 1)/a + ρ² s],
// and the control effort ∫ (k m)² = k² m² s. tests/example_sample_and_hold.py differentiates
// this closed form exactly (dual numbers) as the reference for both costs.
//
// Why the total derivative matters here: the captured value is m⁺ = x(τ⁻), and
//   dm⁺/dp = S_x(τ⁻) + ẋ(τ⁻) τ_p  (= dm/dp − sign(m) dδ/dp in the closed form),
// while ẋ(τ⁻) = a x − k m ≠ 0. The library's reset jump gives exactly this (docs/theory.md §9).
// -hs_test_memory_partial_derivative switches to [SerbanRecuero2019]'s s⁺ = S_x(τ⁻): the gradient is then
// wrong (a must-fail test), whereas in hysteresis_oscillator (ẋ = v = 0 at a reversal) the same
// switch changes nothing.
//
// Costs: "quadratic" J₁ = ∫₀ᵀ (x² + w (k m)²) dt (w = 0.1: state and held control effort),
//        "final"     J₂ = x(T).
// Defaults: RK4, dt = 1e-3.
//
// Run:
//   build/examples/sample_and_hold -hs_monitor
//   build/examples/sample_and_hold -hs_forward -hs_adjoint -hs_summary out.json
//   build/examples/sample_and_hold -hs_check_gradient
//   build/examples/sample_and_hold -hs_forward -hs_test_memory_partial_derivative   (wrong on purpose)
//   mpiexec -n 2 build/examples/sample_and_hold -hs_adjoint
// Options (-help lists them with their defaults): -a -k -delta -x0 (parameters; delta > 0),
// -w (effort weight, >= 0), -hs_summary FILE.
// Prints every sample (time, guard, x⁻ = new m, ẋ⁻), the costs and the gradient tables
// (parameters, then d/du0[0] = d/dx(0) and d/du0[1] = d/dm(0)).
#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

#include "example_options.hpp"

using namespace hybridsens;

class SampleAndHold : public MemoryModel {
public:
  enum { X, M };                   // state (x, m): plant state and held sample
  enum { A, K, DELTA, X0 };        // parameters

  SampleAndHold() { MPI_Comm_rank(PETSC_COMM_WORLD, &rank_); }
  // The whole state lives on rank 0.
  PetscInt localSize() const override { return rank_ == 0 ? 2 : 0; }
  DiscreteState initialDiscreteState() const override { return {0}; }
  std::vector<PetscReal> defaultParameters() const override { return {0.5, 1.5, 0.15, 1.0}; }
  std::vector<std::string> parameterNames() const override { return {"a", "k", "delta", "x0"}; }

  // x(0) = m(0) = x₀: the controller starts with a fresh sample.
  PetscErrorCode initialState(const ModeContext &c, Vec u0) const override {
    PetscFunctionBeginUser;
    if (rank_ == 0) {
      PetscCall(VecSetValue(u0, X, c.p[X0], INSERT_VALUES));
      PetscCall(VecSetValue(u0, M, c.p[X0], INSERT_VALUES));
    }
    PetscCall(VecAssemblyBegin(u0));
    PetscCall(VecAssemblyEnd(u0));
    PetscFunctionReturn(0);
  }
  PetscErrorCode initialStateJacobianP(const ModeContext &, Mat du0dp) const override {
    PetscFunctionBeginUser;
    if (rank_ == 0) {
      PetscCall(MatSetValue(du0dp, X, X0, 1.0, INSERT_VALUES));
      PetscCall(MatSetValue(du0dp, M, X0, 1.0, INSERT_VALUES));
    }
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &c, Vec f) const override {
    const PetscScalar *x;
    PetscScalar *y;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));  // Get/Restore on every rank: see bouncing_ball.cpp
    PetscCall(VecGetArray(f, &y));
    if (rank_ == 0) {
      y[X] = c.p[A] * x[X] - c.p[K] * x[M];
      y[M] = 0;  // memory: zero dynamics
    }
    PetscCall(VecRestoreArray(f, &y));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobian(PetscReal, Vec, const ModeContext &c, Mat J) const override {
    PetscFunctionBeginUser;
    if (rank_ == 0) {
      PetscCall(MatSetValue(J, X, X, c.p[A], INSERT_VALUES));
      PetscCall(MatSetValue(J, X, M, -c.p[K], INSERT_VALUES));
    }
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobianP(PetscReal, Vec u, const ModeContext &, Mat Jp) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    if (rank_ == 0) {
      PetscCall(MatSetValue(Jp, X, A, x[X], INSERT_VALUES));
      PetscCall(MatSetValue(Jp, X, K, -x[M], INSERT_VALUES));
    }
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }

  // ---- sampling: |x − m| reaches δ -----------------------------------------------------------
  PetscInt numGuards() const override { return 2; }
  GuardInfo guardInfo(PetscInt j) const override { return {j == 0 ? "upper" : "lower", Direction::Rising}; }
  PetscErrorCode guards(PetscReal, Vec u, const ModeContext &c, PetscScalar *g) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    if (rank_ == 0) {
      g[0] = x[X] - x[M] - c.p[DELTA];
      g[1] = x[M] - x[X] - c.p[DELTA];
    }
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode guardGradient(PetscInt j, PetscReal, Vec, const ModeContext &, Vec gu, PetscScalar *gt, PetscScalar *gp) const override {
    PetscFunctionBeginUser;
    const PetscScalar s = j == 0 ? 1.0 : -1.0;
    if (rank_ == 0) {
      PetscCall(VecSetValue(gu, X, s, INSERT_VALUES));
      PetscCall(VecSetValue(gu, M, -s, INSERT_VALUES));
      gp[DELTA] = -1.0;
    }
    PetscCall(VecAssemblyBegin(gu));
    PetscCall(VecAssemblyEnd(gu));
    *gt = 0;
    PetscFunctionReturn(0);
  }
  PetscErrorCode transition(const EventId &, PetscReal, Vec, DiscreteState &d) const override {
    ++d[0];
    return 0;
  }

  // ---- memory: m ← x⁻ at every sample ---------------------------------------------------------
  std::vector<PetscInt> memoryIndices() const override { return {M}; }
  PetscErrorCode capture(const EventId &, PetscReal, Vec uminus, const ModeContext &, PetscScalar *values) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(uminus, &x));
    if (rank_ == 0) values[0] = x[X];
    PetscCall(VecRestoreArrayRead(uminus, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode captureGradient(const EventId &, PetscInt, PetscReal, Vec, const ModeContext &, Vec cu, PetscScalar *ct,
                                 PetscScalar *) const override {
    PetscFunctionBeginUser;
    if (rank_ == 0) PetscCall(VecSetValue(cu, X, 1.0, INSERT_VALUES));  // ∂m⁺/∂x⁻ = 1; c_t = c_p = 0
    PetscCall(VecAssemblyBegin(cu));
    PetscCall(VecAssemblyEnd(cu));
    *ct = 0;
    PetscFunctionReturn(0);
  }

private:
  PetscMPIInt rank_ = 0;
};

// J₁ = ∫ (x² + w (k m)²) dt: the state and the held control effort (the memory enters the cost).
class QuadraticCost : public CostFunction {
public:
  explicit QuadraticCost(PetscReal w) : w_(w) {}
  std::string name() const override { return "quadratic"; }
  bool hasIntegrand() const override { return true; }
  PetscErrorCode integrand(PetscReal, Vec u, const ModeContext &c, PetscScalar *value) const override {
    PetscScalar x = 0, m = 0;
    PetscFunctionBeginUser;
    PetscCall(readOwned(u, SampleAndHold::X, &x));
    PetscCall(readOwned(u, SampleAndHold::M, &m));
    const PetscReal k = c.p[SampleAndHold::K];
    *value = x * x + w_ * k * k * m * m;
    PetscFunctionReturn(0);
  }
  PetscErrorCode integrandGradient(PetscReal, Vec u, const ModeContext &c, Vec r_u, PetscScalar *r_p) const override {
    OwnedEntries state, grad;
    PetscFunctionBeginUser;
    PetscCall(state.get(u));
    PetscCall(grad.get(r_u, OwnedEntries::Write));
    const PetscScalar x = state.read(SampleAndHold::X), m = state.read(SampleAndHold::M);
    const PetscReal k = c.p[SampleAndHold::K];
    grad.write(SampleAndHold::X, 2 * x);
    grad.write(SampleAndHold::M, 2 * w_ * k * k * m);
    if (state.owns(SampleAndHold::M)) r_p[SampleAndHold::K] = 2 * w_ * k * m * m;  // once, by the owner of m
    PetscCall(grad.restore());
    PetscCall(state.restore());
    PetscFunctionReturn(0);
  }

private:
  PetscReal w_;
};

// J₂ = x(T).
class FinalState : public CostFunction {
public:
  std::string name() const override { return "final"; }
  bool hasTerminal() const override { return true; }
  PetscErrorCode terminal(PetscReal, Vec u, const ModeContext &, PetscScalar *value) const override {
    return readOwned(u, SampleAndHold::X, value);
  }
  PetscErrorCode terminalGradient(PetscReal, Vec u, const ModeContext &, Vec psi_u, PetscScalar *) const override {
    return writeOwned(psi_u, SampleAndHold::X, 1.0);
  }
};

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, "Event-triggered sample-and-hold control (memory) with hybridsens.\n"));
  {
    SampleAndHold model;
    Solver solver(model);
    PetscReal w = 0.1;
    std::vector<PetscReal> p = model.defaultParameters();
    TS ts = solver.ts();
    const char *prefix;
    PetscCall(TSGetOptionsPrefix(ts, &prefix));
    PetscOptionsBegin(PETSC_COMM_WORLD, prefix, "Sample-and-hold control options", "");
    PetscCall(examples::realOption(PetscOptionsObject, "-a", "growth rate a of the plant x' = a x - k m", &p[SampleAndHold::A]));
    PetscCall(examples::realOption(PetscOptionsObject, "-k", "feedback gain k", &p[SampleAndHold::K]));
    PetscCall(examples::realOption(PetscOptionsObject, "-delta", "sampling threshold delta on |x - m|", &p[SampleAndHold::DELTA], examples::positive()));
    PetscCall(examples::realOption(PetscOptionsObject, "-x0", "initial state x(0) = m(0)", &p[SampleAndHold::X0]));
    PetscCall(examples::realOption(PetscOptionsObject, "-w", "weight w of the control effort in the quadratic cost", &w, examples::nonNegative()));
    PetscOptionsEnd();
    QuadraticCost J1(w);
    FinalState J2;
    solver.addCost(J1);
    solver.addCost(J2);
    PetscCall(solver.setParameters(p));
    PetscCall(TSSetType(ts, TSRK));
    PetscCall(TSRKSetType(ts, TSRK4));
    PetscCall(TSSetTimeStep(ts, 1e-3));
    PetscCall(TSSetMaxTime(ts, 10.0));
    PetscCall(TSSetMaxSteps(ts, 10000000));
    PetscCall(solver.setFromOptions());  // the command line overrides these defaults
    PetscCall(solver.solve());
    const SolveResult &result = solver.result();

    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "sample_and_hold: a = %g, k = %g, delta = %g, x0 = %g, T = %g, %zu samples\n", (double)p[0],
                          (double)p[1], (double)p[2], (double)p[3], (double)result.finalTime, result.events().size()));
    for (const auto &r : result.events().records()) {
      PetscScalar xm, xdot;
      PetscCall(globalEntry(r.uminus, SampleAndHold::X, &xm));
      PetscCall(globalEntry(r.udotminus, SampleAndHold::X, &xdot));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  sample t = %.17g  %-5s  m = x- = %.17g  xdot- = %.6g\n", (double)r.time, r.name.c_str(),
                            (double)xm, (double)xdot));
    }
    PetscCall(solver.viewGradients());
    PetscCall(solver.writeSummaryFromOptions());
    PetscCall(solver.checkGradientFromOptions());
  }
  PetscCall(PetscFinalize());
  return 0;
}
