// impact_oscillator — a forced mass on a spring that hits a rigid stop: a second-order
// mechanical system whose velocity jumps at every impact ([Corner2019]), with many impacts.
//
// Model (m = 1):  ẋ = v,  v̇ = −c v − k x + F cos ωt + F₀,  while x < δ;
// impact when x reaches the stop at the gap δ (guard γ = x − δ, rising; γ_u = (1, 0), γ_δ = −1):
//   x⁺ = x⁻,  v⁺ = −e v⁻   (Newton's restitution law; R_u = diag(1, −e), ∂v⁺/∂e = −v⁻).
// Parameters p = (δ, e, k, x₀) = (0.5, 0.8, 1, 0): the gap is a parameter of the guard, the
// restitution one of the reset, the stiffness one of the dynamics, x₀ one of the initial state
// (x(0) = x₀, v(0) = v₀ = 0). Fixed: c = 0.1, F = 1, ω = 1.6, F₀ = 0, T = 100 (options).
// The forcing depends on t explicitly: the model provides ∂f/∂t (rhsTimeDerivative).
// With the defaults the motion settles on a stable impacting orbit: 25 impacts, the slowest at
// |v⁻| ≈ 1.35, so every impact is transversal (D = γ_u u̇⁻ = v⁻ ≠ 0) and the costs are smooth
// functions of p (the test compares with central finite differences to 1e-6).
// Costs: "energy" ψ = ½ v(T)² + ½ k x(T)² (terminal; ψ_k = ½ x(T)²), "mean_square" ∫₀ᵀ x² dt.
//
// Grazing: an orbit that touches the stop with v ≈ 0 has an event time that is not
// differentiable in p. The engine refuses it (-hs_grazing_tol): e.g. the free undamped
// oscillation from x₀ = −δ(1 + 1e-13) reaches the stop at t ≈ π with |v⁻| ≈ 4.5e-7 |v̇⁻|:
//   build/examples/impact_oscillator -F 0 -c 0 -x0 -0.50000000000005 -ts_max_time 5 -ts_dt 1e-3
//   → "Grazing event: guard 'impact' at t = 3.14159…"
//
// Chattering: when the net force presses the mass against the stop (e.g. -F 0 -F0 1: the
// spring's equilibrium F₀/k = 1 lies beyond δ), the impacts accumulate in finite time
// (t∞ ≈ t₁ + 2e|v₁⁻|/((1 − e)a), a the net deceleration at the stop) — a Zeno solution. The
// engine stops with a clear error rather than hang or return a wrong gradient: the grazing check
// fires as |v⁻| → 0 (here at t ≈ 10.77, the 64th impact, |v⁻| ≈ 5e-7); -hs_max_events N and
// -hs_min_event_spacing s (relative to the horizon) bound the count and the spacing.
// The user-chosen alternative is -stick_velocity v_s: an impact with |v⁻| < v_s ends the
// chattering sequence — the mass sticks to the stop (mode "stuck": ẋ = v̇ = 0, reset v⁺ = 0)
// until the net force −k x + F cos ωt + F₀ turns away from it (guard "release", falling,
// γ_t = −Fω sin ωt, γ_k = −x). This truncates the remaining impacts, which would have lasted
// at most 2e v_s/((1 − e) a) and travelled at most v_s²/(2a) (a: the net deceleration at the
// stop); the derivatives are exact for the model with that rule as long as no impact has
// |v⁻| = v_s exactly. Example: -F 0.6 -omega 1 -F0 1 -ts_max_time 40 chatters into a grazing
// error at t ≈ 12.07 (59 impacts); with -stick_velocity 1e-2 the mass sticks at t ≈ 12.00,
// is released at t ≈ 15.12, and so on (83 impacts, five sticks, four releases by T = 40).
//
// Discrete state d = {mode (0 free, 1 stuck), number of impacts}.
// Defaults: RK4 (-ts_type rk -ts_rk_type 4), dt = 5e-3, T = 100.
//
// Run:
//   build/examples/impact_oscillator -hs_forward -hs_adjoint
//   build/examples/impact_oscillator -hs_check_gradient
//   build/examples/impact_oscillator -ts_type cn -ts_dt 2e-4 -hs_adjoint
//   build/examples/impact_oscillator -F 0 -F0 1 -ts_max_time 20                 (chattering: error)
//   build/examples/impact_oscillator -F 0 -F0 1 -ts_max_time 20 -hs_max_events 30
//   build/examples/impact_oscillator -F 0.6 -omega 1 -F0 1 -ts_max_time 40 -stick_velocity 1e-2 -hs_adjoint
//   mpiexec -n 2 build/examples/impact_oscillator -hs_adjoint
// Options (-help lists them with their defaults): -delta -e -k -x0 (parameters; e in [0, 1],
// k >= 0, x0 < delta), -c -F -omega -F0 -v0 -stick_velocity (c, omega, stick_velocity >= 0),
// -hs_summary FILE.
// Prints the impacts (time, v⁻, v⁺) and releases, the costs and the gradient tables.
#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

#include "example_options.hpp"

#include <cmath>

using namespace hybridsens;

struct ImpactOscillatorSettings {
  PetscReal damping = 0.1, force = 1.0, omega = 1.6, constantForce = 0.0, v0 = 0.0, stickVelocity = 0.0;
};

class ImpactOscillator : public HybridModel {
public:
  enum { X, V };                 // state
  enum { DELTA, E, K, X0 };      // parameters
  enum { FREE = 0, STUCK = 1 };  // d[0]
  enum { IMPACT = 0, RELEASE = 1 };

  explicit ImpactOscillator(ImpactOscillatorSettings s) : s_(s) { MPI_Comm_rank(PETSC_COMM_WORLD, &rank_); }
  PetscInt localSize() const override { return rank_ == 0 ? 2 : 0; }  // (x, v) on rank 0
  DiscreteState initialDiscreteState() const override { return {FREE, 0}; }
  std::vector<PetscReal> defaultParameters() const override { return {0.5, 0.8, 1.0, 0.0}; }
  std::vector<std::string> parameterNames() const override { return {"delta", "e", "k", "x0"}; }

  PetscReal load(PetscReal t) const { return s_.force * std::cos(s_.omega * t) + s_.constantForce; }
  PetscReal loadRate(PetscReal t) const { return -s_.force * s_.omega * std::sin(s_.omega * t); }
  bool sticks(PetscReal vminus) const { return std::fabs(vminus) < s_.stickVelocity; }

  PetscErrorCode initialState(const ModeContext &c, Vec u0) const override {
    PetscFunctionBeginUser;
    if (rank_ == 0) {
      PetscCall(VecSetValue(u0, X, c.p[X0], INSERT_VALUES));
      PetscCall(VecSetValue(u0, V, s_.v0, INSERT_VALUES));
    }
    PetscCall(VecAssemblyBegin(u0));
    PetscCall(VecAssemblyEnd(u0));
    PetscFunctionReturn(0);
  }
  PetscErrorCode initialStateJacobianP(const ModeContext &, Mat du0dp) const override {
    PetscFunctionBeginUser;
    if (rank_ == 0) PetscCall(MatSetValue(du0dp, X, X0, 1.0, INSERT_VALUES));
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhs(PetscReal t, Vec u, const ModeContext &c, Vec f) const override {
    const PetscScalar *x;
    PetscScalar *y;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));  // Get/Restore on every rank: see bouncing_ball.cpp
    PetscCall(VecGetArray(f, &y));
    if (rank_ == 0) {
      const bool free = c.d[0] == FREE;
      y[X] = free ? x[V] : 0.0;
      y[V] = free ? -s_.damping * x[V] - c.p[K] * x[X] + load(t) : 0.0;
    }
    PetscCall(VecRestoreArray(f, &y));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobian(PetscReal, Vec, const ModeContext &c, Mat J) const override {
    PetscFunctionBeginUser;
    if (rank_ == 0 && c.d[0] == FREE) {
      PetscCall(MatSetValue(J, X, V, 1.0, INSERT_VALUES));
      PetscCall(MatSetValue(J, V, X, -c.p[K], INSERT_VALUES));
      PetscCall(MatSetValue(J, V, V, -s_.damping, INSERT_VALUES));
    }
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobianP(PetscReal, Vec u, const ModeContext &c, Mat Jp) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    if (rank_ == 0 && c.d[0] == FREE) PetscCall(MatSetValue(Jp, V, K, -x[X], INSERT_VALUES));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  // The periodic forcing depends on t explicitly: the event derivatives need ∂f/∂t.
  bool explicitTime() const override { return true; }
  PetscErrorCode rhsTimeDerivative(PetscReal t, Vec, const ModeContext &c, Vec ft) const override {
    PetscFunctionBeginUser;
    PetscCall(VecZeroEntries(ft));
    if (rank_ == 0 && c.d[0] == FREE) PetscCall(VecSetValue(ft, V, loadRate(t), INSERT_VALUES));
    PetscCall(VecAssemblyBegin(ft));
    PetscCall(VecAssemblyEnd(ft));
    PetscFunctionReturn(0);
  }

  // ---- guards: the impact (free flight) and the release from the stop (stuck) --------------
  PetscInt numGuards() const override { return 2; }
  GuardInfo guardInfo(PetscInt j) const override {
    return j == IMPACT ? GuardInfo{"impact", Direction::Rising} : GuardInfo{"release", Direction::Falling};
  }
  bool guardActive(PetscInt j, const DiscreteState &d) const override { return j == IMPACT ? d[0] == FREE : d[0] == STUCK; }
  PetscErrorCode guards(PetscReal t, Vec u, const ModeContext &c, PetscScalar *g) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    if (rank_ == 0) {
      g[IMPACT] = x[X] - c.p[DELTA];
      g[RELEASE] = -c.p[K] * x[X] + load(t);  // net force towards the stop while at rest there
    }
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode guardGradient(PetscInt j, PetscReal t, Vec u, const ModeContext &c, Vec gu, PetscScalar *gt,
                               PetscScalar *gp) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    *gt = 0;
    if (rank_ == 0) {
      if (j == IMPACT) {
        PetscCall(VecSetValue(gu, X, 1.0, INSERT_VALUES));
        gp[DELTA] = -1.0;
      } else {
        PetscCall(VecSetValue(gu, X, -c.p[K], INSERT_VALUES));
        *gt = loadRate(t);
        gp[K] = -x[X];
      }
    }
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscCall(VecAssemblyBegin(gu));
    PetscCall(VecAssemblyEnd(gu));
    PetscFunctionReturn(0);
  }

  // ---- transitions and the impact law --------------------------------------------------------
  PetscErrorCode transition(const EventId &id, PetscReal, Vec u, DiscreteState &d) const override {
    PetscScalar vminus = 0;
    PetscFunctionBeginUser;
    if (id.index == RELEASE) {
      d[0] = FREE;
      PetscFunctionReturn(0);
    }
    PetscCall(velocity(u, &vminus));
    ++d[1];
    if (sticks(vminus)) d[0] = STUCK;
    PetscFunctionReturn(0);
  }
  bool hasReset(const EventId &id) const override { return id.kind == EventId::Guard && id.index == IMPACT; }
  PetscErrorCode reset(const EventId &, PetscReal, Vec uminus, const ModeContext &c, Vec uplus) const override {
    PetscScalar vminus = 0;
    PetscFunctionBeginUser;
    PetscCall(velocity(uminus, &vminus));
    PetscCall(VecCopy(uminus, uplus));
    PetscCall(scaleVelocity(uplus, sticks(vminus) ? 0.0 : -c.p[E]));
    PetscFunctionReturn(0);
  }
  // R_u = diag(1, −e) (bounce) or diag(1, 0) (stick): symmetric, so both actions agree.
  PetscErrorCode resetJacobianAction(const EventId &, PetscReal, Vec uminus, const ModeContext &c, Vec v, Vec out) const override {
    PetscScalar vminus = 0;
    PetscFunctionBeginUser;
    PetscCall(velocity(uminus, &vminus));
    PetscCall(VecCopy(v, out));
    PetscCall(scaleVelocity(out, sticks(vminus) ? 0.0 : -c.p[E]));
    PetscFunctionReturn(0);
  }
  PetscErrorCode resetJacobianTransposeAction(const EventId &id, PetscReal t, Vec uminus, const ModeContext &c, Vec w,
                                              Vec out) const override {
    return resetJacobianAction(id, t, uminus, c, w, out);
  }
  PetscErrorCode resetJacobianP(const EventId &, PetscReal, Vec uminus, const ModeContext &, Mat Rp) const override {
    PetscScalar vminus = 0;
    PetscFunctionBeginUser;
    PetscCall(velocity(uminus, &vminus));
    if (rank_ == 0 && !sticks(vminus)) PetscCall(MatSetValue(Rp, V, E, -vminus, INSERT_VALUES));  // ∂v⁺/∂e = −v⁻
    PetscFunctionReturn(0);
  }
  PetscErrorCode resetTimeDerivative(const EventId &, PetscReal, Vec, const ModeContext &, Vec Rt) const override {
    return VecZeroEntries(Rt);
  }

private:
  // v on rank 0, broadcast: every rank must take the same stick/bounce decision.
  PetscErrorCode velocity(Vec u, PetscScalar *v) const {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    *v = rank_ == 0 ? x[V] : 0.0;
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscCallMPI(MPI_Bcast(v, 1, MPIU_SCALAR, 0, PETSC_COMM_WORLD));
    PetscFunctionReturn(0);
  }
  PetscErrorCode scaleVelocity(Vec u, PetscScalar factor) const {
    PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArray(u, &x));  // on every rank: see rhs()
    if (rank_ == 0) x[V] *= factor;
    PetscCall(VecRestoreArray(u, &x));
    PetscFunctionReturn(0);
  }
  ImpactOscillatorSettings s_;
  PetscMPIInt rank_ = 0;
};

// ψ = ½ v(T)² + ½ k x(T)²: the mechanical energy left at T.
class FinalEnergy : public CostFunction {
public:
  std::string name() const override { return "energy"; }
  bool hasTerminal() const override { return true; }
  PetscErrorCode terminal(PetscReal, Vec u, const ModeContext &c, PetscScalar *value) const override {
    PetscScalar x = 0, v = 0;
    PetscFunctionBeginUser;
    PetscCall(readOwned(u, ImpactOscillator::X, &x));
    PetscCall(readOwned(u, ImpactOscillator::V, &v));
    *value = 0.5 * v * v + 0.5 * c.p[ImpactOscillator::K] * x * x;
    PetscFunctionReturn(0);
  }
  PetscErrorCode terminalGradient(PetscReal, Vec u, const ModeContext &c, Vec psi_u, PetscScalar *psi_p) const override {
    OwnedEntries state, grad;
    PetscFunctionBeginUser;
    PetscCall(state.get(u));
    PetscCall(grad.get(psi_u, OwnedEntries::Write));
    const PetscScalar x = state.read(ImpactOscillator::X), v = state.read(ImpactOscillator::V);
    grad.write(ImpactOscillator::X, c.p[ImpactOscillator::K] * x);
    grad.write(ImpactOscillator::V, v);
    if (state.owns(ImpactOscillator::X)) psi_p[ImpactOscillator::K] = 0.5 * x * x;  // once, by the owner of x
    PetscCall(grad.restore());
    PetscCall(state.restore());
    PetscFunctionReturn(0);
  }
};

// ∫₀ᵀ x² dt.
class MeanSquare : public CostFunction {
public:
  std::string name() const override { return "mean_square"; }
  bool hasIntegrand() const override { return true; }
  PetscErrorCode integrand(PetscReal, Vec u, const ModeContext &, PetscScalar *value) const override {
    PetscScalar x = 0;
    PetscFunctionBeginUser;
    PetscCall(readOwned(u, ImpactOscillator::X, &x));
    *value = x * x;
    PetscFunctionReturn(0);
  }
  PetscErrorCode integrandGradient(PetscReal, Vec u, const ModeContext &, Vec r_u, PetscScalar *) const override {
    PetscScalar x = 0;
    PetscFunctionBeginUser;
    PetscCall(readOwned(u, ImpactOscillator::X, &x));
    PetscCall(writeOwned(r_u, ImpactOscillator::X, 2 * x));
    PetscFunctionReturn(0);
  }
};

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, "Forced impact oscillator (velocity resets at a stop) with hybridsens.\n"));
  {
    // The fixed data shape the model, which exists before the Solver and its TS: they are read
    // without the TS's options prefix (the TS has none in this example).
    ImpactOscillatorSettings set;
    PetscOptionsBegin(PETSC_COMM_WORLD, nullptr, "Impact oscillator: fixed data", "");
    PetscCall(examples::realOption(PetscOptionsObject, "-c", "damping c", &set.damping, examples::nonNegative()));
    PetscCall(examples::realOption(PetscOptionsObject, "-F", "amplitude F of the forcing F cos(omega t)", &set.force));
    PetscCall(examples::realOption(PetscOptionsObject, "-omega", "angular frequency omega of the forcing", &set.omega, examples::nonNegative()));
    PetscCall(examples::realOption(PetscOptionsObject, "-F0", "constant force F0", &set.constantForce));
    PetscCall(examples::realOption(PetscOptionsObject, "-v0", "initial velocity v(0)", &set.v0));
    PetscCall(examples::realOption(PetscOptionsObject, "-stick_velocity", "an impact slower than this sticks the mass to the stop (0: never)",
                                   &set.stickVelocity, examples::nonNegative()));
    PetscOptionsEnd();
    ImpactOscillator model(set);
    Solver solver(model);
    FinalEnergy energy;
    MeanSquare meanSquare;
    solver.addCost(energy);
    solver.addCost(meanSquare);
    std::vector<PetscReal> p = model.defaultParameters();
    TS ts = solver.ts();
    const char *prefix;
    PetscCall(TSGetOptionsPrefix(ts, &prefix));
    PetscOptionsBegin(PETSC_COMM_WORLD, prefix, "Impact oscillator parameters", "");
    PetscCall(examples::realOption(PetscOptionsObject, "-delta", "gap delta: position of the stop", &p[ImpactOscillator::DELTA]));
    PetscCall(examples::realOption(PetscOptionsObject, "-e", "coefficient of restitution", &p[ImpactOscillator::E], examples::closedInterval(0, 1)));
    PetscCall(examples::realOption(PetscOptionsObject, "-k", "spring stiffness k", &p[ImpactOscillator::K], examples::nonNegative()));
    PetscCall(examples::realOption(PetscOptionsObject, "-x0", "initial position x(0) (before the stop)", &p[ImpactOscillator::X0]));
    PetscOptionsEnd();
    PetscCheck(p[ImpactOscillator::X0] < p[ImpactOscillator::DELTA], PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
               "the mass must start before the stop: -x0 %g >= -delta %g", (double)p[ImpactOscillator::X0], (double)p[ImpactOscillator::DELTA]);
    PetscCall(solver.setParameters(p));
    PetscCall(TSSetType(ts, TSRK));
    PetscCall(TSRKSetType(ts, TSRK4));
    PetscCall(TSSetTimeStep(ts, 5e-3));
    PetscCall(TSSetMaxTime(ts, 100.0));
    PetscCall(TSSetMaxSteps(ts, 100000000));
    PetscCall(solver.setFromOptions());  // the command line overrides these defaults
    PetscCall(solver.solve());
    const SolveResult &result = solver.result();

    PetscInt impacts = 0;
    for (const auto &r : result.events().records()) impacts += r.id.index == ImpactOscillator::IMPACT;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "impact_oscillator: delta = %g, e = %g, k = %g, x0 = %g, T = %g: %" PetscInt_FMT " impacts, %zu events\n",
                          (double)p[0], (double)p[1], (double)p[2], (double)p[3], (double)result.finalTime, impacts, result.events().size()));
    for (const auto &r : result.events().records()) {
      PetscScalar vminus, vplus;
      PetscCall(globalEntry(r.uminus, ImpactOscillator::V, &vminus));
      PetscCall(globalEntry(r.uplus, ImpactOscillator::V, &vplus));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %-7s t = %.17g  %s -> %s  v- = %.17g  v+ = %.17g\n", r.name.c_str(), (double)r.time,
                            describe(r.before).c_str(), describe(r.after).c_str(), (double)vminus, (double)vplus));
    }
    PetscCall(solver.viewGradients());
    PetscCall(solver.writeSummaryFromOptions());
    PetscCall(solver.checkGradientFromOptions());
  }
  PetscCall(PetscFinalize());
  return 0;
}
