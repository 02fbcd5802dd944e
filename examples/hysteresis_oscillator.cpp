// hysteresis_oscillator — a forced oscillator whose spring is a rate-independent hysteretic
// material (the exponential model of Vaiana et al. for steel bars): a hybrid system with
// memory ([SerbanRecuero2019] §5.2; docs/validation.md, hysteresis oscillator).
//
// Model (m = A = 1):
//   u̇ = v,   m v̇ = −A z + f(t),   f(t) = 0.5 t sin 2πt,   z = σ(u; u*, z*, ξ, p),
// p = (k_a, k_b, α, β) = (32π², π², 205, 0), u = v = 0 at t = 0, T = 10.
// The loading direction ξ = sign(v) is the discrete state; a load reversal is a zero crossing
// of v (guard γ = ξ v, falling, γ_u = (0, ξ, 0, 0)). At a reversal ξ flips and the memory
// (u*, z*) = (u, z) is captured. The stress in a mode with memory (u*, z*) is [SerbanRecuero2019]'s eq. 46
//   σ = −2βu + 2 sinh βu + k_b u − ξ (k_a − k_b)/α [e^{−α(ξu − ξu_i* + 2u₀)} − e^{−2αu₀}] + ξ f̄,
//   u_i* = u* + 2ξu₀ + (ξ/α) ln[ ξα/(k_a − k_b) (−2βu* + 2 sinh βu* + k_b u*
//                                   + ξ (k_a − k_b)/α e^{−2αu₀} + ξ f̄ − z*) ],
//   u₀ = −ln(δ/(k_a − k_b))/(2α),  f̄ = (k_a − k_b)(1 − e^{−2αu₀})/(2α),  δ = 1e-20,
// with the corrections of docs/references.md [SerbanRecuero2019]: 2 sinh βu* inside u_i* (without the 2, σ is not
// continuous at a reversal), start with ξ = +1 and memory (0, 0) without an event at t = 0,
// and u₀, f̄ depend on (k_a, k_b, α). Substituting u_i* (e^{−2αu₀} = δ/(k_a − k_b)) gives the
// same law without logarithms, which is what this file evaluates and differentiates:
//   σ = B(u) + C − (B(u*) + C − z*) e^{−αξ(u − u*)},
//   B(x) = −2βx + 2 sinh βx + k_b x,   C = ξ (k_a − k_b + δ)/(2α).
// It shows at once that σ = z* at u = u* (the stress is continuous at a reversal), that the
// memory fades like e^{−α|u − u*|} (α = 205: within a few thousandths of displacement), and
// that ∂σ/∂β = 0 at β = 0, hence ∂G/∂β = 0 exactly. (tests/example_hysteresis_oscillator.py
// compares the written stress with the literal eq. 46 at every output point.)
//
// Memory (hybridsens/memory.hpp): the state is (u, v, u*, z*) with u̇* = ż* = 0 and, at a
// reversal, the capture u*⁺ = u⁻, z*⁺ = σ(u⁻; u*⁻, z*⁻, ξ⁻, p). The library's reset jump then
// carries the total derivatives of the captured values (docs/theory.md §9). Here the jump vector
// c = R_u u̇⁻ − u̇⁺ vanishes (v = 0 at a reversal and σ is continuous), so the states and the
// sensitivities are continuous; the adjoint is not: at every reversal
//   λ_u⁻ = λ_u⁺ + λ_{u*}⁺ + σ_u λ_{z*}⁺,  λ_v⁻ = λ_v⁺,  λ_{u*}⁻ = σ_{u*} λ_{z*}⁺,  λ_{z*}⁻ = σ_{z*} λ_{z*}⁺
// ([SerbanRecuero2019] Fig. 8: λ for the displacement jumps, the velocity adjoint stays continuous —
// exactly with -hs_event_derivative continuous; with the default discrete-exact event
// derivative λ_v also carries the O(h⁴) event-time term of the RK4 step that locates the
// reversal, 1e-9 of its size at dt = 1e-3).
//
// -dae: [SerbanRecuero2019]'s own index-1 form, with the stress z as an algebraic state: the algebraic row
// 0 = z − σ(u; u*, z*, ξ, p), v̇ = (−A z + f)/m, and the capture z*⁺ = z⁻ reads the algebraic
// component (the library's DAE jump re-solves z⁺ = σ_new(u⁺) = z* after it). Same trajectory and
// gradient as the ODE with the same implicit method (CN by default for -dae). The discrete
// adjoint λ of CN on the DAE alternates from step to step after each reversal (the trapezoidal
// rule's undamped (−1)ⁿ mode of an algebraic component, R(∞) = −1): harmless for the gradient,
// but plot λ from the ODE form (or BEULER).
//
// Cost: G = ∫₀ᵀ u² dt. Published ([SerbanRecuero2019], ode15s): G = 0.04994 and
//   dG/dp ≈ [−1.34e−5, 3.267e−3, −1.53e−6, 0]   (FD, forward and adjoint agree within ≈ 1 %).
// f depends on t explicitly, so the model provides ∂f/∂t (rhsTimeDerivative).
//
// Defaults: RK4 (CN with -dae), dt = 1e-3, T = 10 (19 reversals).
//
// Run:
//   build/examples/hysteresis_oscillator                        (G, reversals)
//   build/examples/hysteresis_oscillator -hs_forward -hs_adjoint  (dG/dp both ways)
//   build/examples/hysteresis_oscillator -hs_adjoint -ts_type cn -ts_dt 2e-4
//   build/examples/hysteresis_oscillator -hs_check_gradient -hs_check_gradient_step 1e-5
//   build/examples/hysteresis_oscillator -hs_forward -hs_adjoint -trajectory_csv traj.csv -adjoint_csv adj.csv
//     then  python3 scripts/plot_hysteresis.py traj.csv adj.csv hysteresis.png
//   build/examples/hysteresis_oscillator -dae -hs_forward -hs_adjoint      (index-1 DAE, CN)
//   mpiexec -n 2 build/examples/hysteresis_oscillator -hs_adjoint
// Options (-help lists them with their defaults): -ka -kb -alpha -beta (parameters; k_a > 0,
// k_a > k_b, alpha > 0), -dae, -hs_summary FILE, -trajectory_csv FILE
// (t, ξ, u, v, u*, z*, z and, with -hs_forward, du/dp_j, dz/dp_j after every step),
// -adjoint_csv FILE (t, kind, λ of G for (u, v, u*, z*) at every step boundary of the reverse
// sweep, on both sides of every reversal).
// Prints the reversals (time, captured u*, z*, and v⁻), G and the gradient tables.
#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

#include "example_options.hpp"

#include <cmath>
#include <cstdio>
#include <string>

using namespace hybridsens;

// The stress law in one loading direction ξ with memory (u*, z*): value and derivatives.
struct StressLaw {
  static constexpr PetscReal delta = 1e-20;
  PetscReal ka, kb, alpha, beta;

  struct Value {
    PetscReal s = 0, du = 0, dus = 0, dzs = 0;  // σ, ∂σ/∂u, ∂σ/∂u*, ∂σ/∂z*
    PetscReal dp[4] = {0, 0, 0, 0};             // ∂σ/∂(k_a, k_b, α, β)
  };

  explicit StressLaw(const std::vector<PetscReal> &p) : ka(p[0]), kb(p[1]), alpha(p[2]), beta(p[3]) {}

  PetscReal B(PetscReal x) const { return -2 * beta * x + 2 * std::sinh(beta * x) + kb * x; }
  PetscReal dBdx(PetscReal x) const { return -2 * beta + 2 * beta * std::cosh(beta * x) + kb; }
  PetscReal dBdbeta(PetscReal x) const { return -2 * x + 2 * x * std::cosh(beta * x); }  // exactly 0 at β = 0

  Value operator()(PetscReal u, PetscReal us, PetscReal zs, PetscInt xi) const {
    Value r;
    const PetscReal C = xi * (ka - kb + delta) / (2 * alpha);
    const PetscReal M = B(us) + C - zs;  // the remembered distance from the bounding curve
    const PetscReal E = std::exp(-alpha * xi * (u - us));
    r.s = B(u) + C - M * E;
    r.du = dBdx(u) + alpha * xi * M * E;
    r.dus = -E * dBdx(us) - alpha * xi * M * E;
    r.dzs = E;
    r.dp[0] = xi / (2 * alpha) * (1 - E);                          // ∂C/∂k_a = ∂M/∂k_a = ξ/(2α)
    r.dp[1] = u - xi / (2 * alpha) - (us - xi / (2 * alpha)) * E;  // ∂B/∂k_b = x, ∂C/∂k_b = −ξ/(2α)
    r.dp[2] = -C / alpha * (1 - E) + M * xi * (u - us) * E;        // ∂C/∂α = −C/α, ∂E/∂α = −ξ(u − u*)E
    r.dp[3] = dBdbeta(u) - dBdbeta(us) * E;
    return r;
  }
};

class HysteresisOscillator : public MemoryModel {
public:
  static constexpr PetscReal mass = 1, area = 1;
  static constexpr PetscInt U = 0, V = 1, Z = 2;  // Z: the stress as an algebraic state (-dae only)
  const PetscInt USTAR, ZSTAR;                      // the memory slots: 2, 3 (ODE) or 3, 4 (DAE)

  explicit HysteresisOscillator(bool dae) : USTAR(dae ? 3 : 2), ZSTAR(dae ? 4 : 3), dae_(dae) {
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank_);
  }
  bool dae() const { return dae_; }
  // The whole state (u, v, [z,] u*, z*) lives on rank 0.
  PetscInt localSize() const override { return rank_ == 0 ? (dae_ ? 5 : 4) : 0; }
  std::vector<PetscInt> algebraicIndices() const override { return dae_ && rank_ == 0 ? std::vector<PetscInt>{Z} : std::vector<PetscInt>{}; }
  DiscreteState initialDiscreteState() const override { return {+1}; }  // ξ = +1: loading first
  std::vector<PetscReal> defaultParameters() const override { return {32 * M_PI * M_PI, M_PI * M_PI, 205.0, 0.0}; }
  std::vector<std::string> parameterNames() const override { return {"ka", "kb", "alpha", "beta"}; }

  static PetscReal force(PetscReal t) { return 0.5 * t * std::sin(2 * M_PI * t); }
  static PetscReal forceRate(PetscReal t) { return 0.5 * std::sin(2 * M_PI * t) + M_PI * t * std::cos(2 * M_PI * t); }

  // u = v = 0, memory (u*, z*) = (0, 0) (and z = σ = 0): independent of p.
  PetscErrorCode initialState(const ModeContext &, Vec u0) const override { return VecZeroEntries(u0); }

  // ODE: v̇ = (−A σ + f)/m.  DAE: v̇ = (−A z + f)/m with the algebraic row 0 = z − σ.
  PetscErrorCode rhs(PetscReal t, Vec u, const ModeContext &c, Vec f) const override {
    const PetscScalar *x;
    PetscScalar *y;
    PetscFunctionBeginUser;
    // Get/Restore on every rank (not only the owner) so that every rank's vector state moves.
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(VecGetArray(f, &y));
    if (rank_ == 0) {
      const auto s = StressLaw(c.p)(x[U], x[USTAR], x[ZSTAR], c.d[0]);
      y[U] = x[V];
      y[V] = (-area * (dae_ ? x[Z] : s.s) + force(t)) / mass;
      if (dae_) y[Z] = x[Z] - s.s;
      y[USTAR] = y[ZSTAR] = 0;  // memory: zero dynamics
    }
    PetscCall(VecRestoreArray(f, &y));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhsJacobian(PetscReal, Vec u, const ModeContext &c, Mat J) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    if (rank_ == 0) {
      const auto s = StressLaw(c.p)(x[U], x[USTAR], x[ZSTAR], c.d[0]);
      const PetscInt cols[4] = {U, USTAR, ZSTAR, Z};
      PetscCall(MatSetValue(J, U, V, 1.0, INSERT_VALUES));
      if (dae_) {  // v̇ row: −A/m ∂z; algebraic row: ∂(z − σ)
        const PetscInt row = Z;
        const PetscScalar vals[4] = {-s.du, -s.dus, -s.dzs, 1.0};
        PetscCall(MatSetValue(J, V, Z, -area / mass, INSERT_VALUES));
        PetscCall(MatSetValues(J, 1, &row, 4, cols, vals, INSERT_VALUES));
      } else {
        const PetscInt row = V;
        const PetscScalar vals[3] = {-area * s.du / mass, -area * s.dus / mass, -area * s.dzs / mass};
        PetscCall(MatSetValues(J, 1, &row, 3, cols, vals, INSERT_VALUES));
      }
    }
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhsJacobianP(PetscReal, Vec u, const ModeContext &c, Mat Jp) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    if (rank_ == 0) {
      const auto s = StressLaw(c.p)(x[U], x[USTAR], x[ZSTAR], c.d[0]);
      for (PetscInt j = 0; j < 4; ++j)
        PetscCall(MatSetValue(Jp, dae_ ? Z : V, j, dae_ ? -s.dp[j] : -area * s.dp[j] / mass, INSERT_VALUES));
    }
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }

  // The load depends on t explicitly: the event derivatives need ∂f/∂t (zero on the algebraic row).
  bool explicitTime() const override { return true; }
  PetscErrorCode rhsTimeDerivative(PetscReal t, Vec, const ModeContext &, Vec ft) const override {
    PetscFunctionBeginUser;
    PetscCall(VecZeroEntries(ft));
    if (rank_ == 0) PetscCall(VecSetValue(ft, V, forceRate(t) / mass, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(ft));
    PetscCall(VecAssemblyEnd(ft));
    PetscFunctionReturn(0);
  }

  // ---- load reversals: γ = ξ v falls through zero --------------------------------------------
  PetscInt numGuards() const override { return 1; }
  GuardInfo guardInfo(PetscInt) const override { return {"reversal", Direction::Falling}; }

  PetscErrorCode guards(PetscReal, Vec u, const ModeContext &c, PetscScalar *g) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    if (rank_ == 0) g[0] = c.d[0] * x[V];
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }

  PetscErrorCode guardGradient(PetscInt, PetscReal, Vec, const ModeContext &c, Vec gu, PetscScalar *gt, PetscScalar *) const override {
    PetscFunctionBeginUser;
    if (rank_ == 0) PetscCall(VecSetValue(gu, V, (PetscScalar)c.d[0], INSERT_VALUES));
    PetscCall(VecAssemblyBegin(gu));
    PetscCall(VecAssemblyEnd(gu));
    *gt = 0;  // γ_t = γ_p = 0
    PetscFunctionReturn(0);
  }

  PetscErrorCode transition(const EventId &, PetscReal, Vec, DiscreteState &d) const override {
    d[0] = -d[0];
    return 0;
  }

  // ---- memory: (u*, z*) ← (u⁻, z⁻) at every reversal -----------------------------------------
  // In the DAE z⁻ is a state (c_u = e_z; the reset reads an algebraic component, which the
  // library's DAE jump carries through its consistency solves); in the ODE it is σ(u⁻; u*⁻, z*⁻).
  std::vector<PetscInt> memoryIndices() const override { return {USTAR, ZSTAR}; }

  PetscErrorCode capture(const EventId &, PetscReal, Vec uminus, const ModeContext &c, PetscScalar *values) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(uminus, &x));
    if (rank_ == 0) {
      values[0] = x[U];
      values[1] = dae_ ? x[Z] : StressLaw(c.p)(x[U], x[USTAR], x[ZSTAR], c.d[0]).s;
    }
    PetscCall(VecRestoreArrayRead(uminus, &x));
    PetscFunctionReturn(0);
  }

  PetscErrorCode captureGradient(const EventId &, PetscInt k, PetscReal, Vec uminus, const ModeContext &c, Vec cu, PetscScalar *ct,
                                 PetscScalar *cp) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(uminus, &x));
    if (rank_ == 0) {
      if (k == 0) PetscCall(VecSetValue(cu, U, 1.0, INSERT_VALUES));  // u* = u⁻
      else if (dae_) PetscCall(VecSetValue(cu, Z, 1.0, INSERT_VALUES));  // z* = z⁻
      else {                                                          // z* = σ(u⁻; u*⁻, z*⁻, ξ⁻, p)
        const auto s = StressLaw(c.p)(x[U], x[USTAR], x[ZSTAR], c.d[0]);
        const PetscInt cols[3] = {U, USTAR, ZSTAR};
        const PetscScalar vals[3] = {s.du, s.dus, s.dzs};
        PetscCall(VecSetValues(cu, 3, cols, vals, INSERT_VALUES));
        for (PetscInt j = 0; j < 4; ++j) cp[j] = s.dp[j];
      }
    }
    PetscCall(VecRestoreArrayRead(uminus, &x));
    PetscCall(VecAssemblyBegin(cu));
    PetscCall(VecAssemblyEnd(cu));
    *ct = 0;
    PetscFunctionReturn(0);
  }

private:
  bool dae_;
  PetscMPIInt rank_ = 0;
};

// G = ∫₀ᵀ u² dt.
class DeformationMeasure : public CostFunction {
public:
  std::string name() const override { return "G"; }
  bool hasIntegrand() const override { return true; }
  PetscErrorCode integrand(PetscReal, Vec u, const ModeContext &, PetscScalar *value) const override {
    PetscScalar x = 0;
    PetscFunctionBeginUser;
    PetscCall(readOwned(u, 0, &x));
    *value = x * x;
    PetscFunctionReturn(0);
  }
  PetscErrorCode integrandGradient(PetscReal, Vec u, const ModeContext &, Vec r_u, PetscScalar *) const override {
    PetscScalar x = 0;
    PetscFunctionBeginUser;
    PetscCall(readOwned(u, 0, &x));
    PetscCall(writeOwned(r_u, 0, 2 * x));
    PetscFunctionReturn(0);
  }
};

// ---- optional CSV output for plots (rank 0 holds the whole state) --------------------------

struct TrajectoryWriter {
  FILE *file = nullptr;  // rank 0 only
  const Solver *solver = nullptr;
  const HysteresisOscillator *model = nullptr;

  // TS monitor: the engine calls it at every step start (after the transitions there) and at T.
  static PetscErrorCode monitor(TS ts, PetscInt, PetscReal t, Vec u, void *ctx) {
    auto *self = static_cast<TrajectoryWriter *>(ctx);
    const PetscScalar *x;
    PetscInt n, nsens = 0;
    Mat S = nullptr;
    PetscFunctionBeginUser;
    if (self->solver->forwardSensitivities()) PetscCall(TSForwardGetSensitivities(ts, &nsens, &S));
    PetscCall(VecGetLocalSize(u, &n));
    PetscCall(VecGetArrayRead(u, &x));
    if (n > 0 && self->file) {
      const HysteresisOscillator &m = *self->model;
      const PetscInt U = m.U, Z = m.Z, US = m.USTAR, ZS = m.ZSTAR;
      const auto &p = self->solver->parameters();
      // The mode after the transitions at t is the solver's current one during the run.
      const PetscInt xi = self->solver->currentDiscreteState()[0];
      const auto s = StressLaw(p)(x[U], x[US], x[ZS], xi);
      PetscCall(PetscFPrintf(PETSC_COMM_SELF, self->file, "%.17g,%d,%.17g,%.17g,%.17g,%.17g,%.17g", (double)t, (int)xi, (double)x[U],
                             (double)x[m.V], (double)x[US], (double)x[ZS], (double)(m.dae() ? x[Z] : s.s)));
      if (S) {
        const PetscScalar *a;
        PetscInt lda;
        PetscCall(MatDenseGetLDA(S, &lda));
        PetscCall(MatDenseGetArrayRead(S, &a));
        for (PetscInt j = 0; j < 4; ++j) PetscCall(PetscFPrintf(PETSC_COMM_SELF, self->file, ",%.17g", (double)a[U + j * lda]));
        for (PetscInt j = 0; j < 4; ++j) {  // dz/dp_j: a state (DAE), or σ_u S_u + σ_u* S_u* + σ_z* S_z* + σ_p (ODE)
          const PetscReal dz = m.dae() ? a[Z + j * lda] : s.du * a[U + j * lda] + s.dus * a[US + j * lda] + s.dzs * a[ZS + j * lda] + s.dp[j];
          PetscCall(PetscFPrintf(PETSC_COMM_SELF, self->file, ",%.17g", (double)dz));
        }
        PetscCall(MatDenseRestoreArrayRead(S, &a));
      }
      PetscCall(PetscFPrintf(PETSC_COMM_SELF, self->file, "\n"));
    }
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
};

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, "Hysteretic oscillator with memory (Serban & Recuero 2019, §5.2) with hybridsens.\n"));
  {
    // -dae shapes the model, which exists before the Solver and its TS: it is read without the
    // TS's options prefix (the TS has none in this example).
    PetscBool dae = PETSC_FALSE;
    PetscOptionsBegin(PETSC_COMM_WORLD, nullptr, "Hysteretic oscillator: model form", "");
    PetscCall(examples::boolOption(PetscOptionsObject, "-dae", "index-1 DAE form with the stress as an algebraic state", &dae));
    PetscOptionsEnd();
    HysteresisOscillator model(dae);
    Solver solver(model);
    DeformationMeasure G;
    solver.addCost(G);
    std::vector<PetscReal> p = model.defaultParameters();
    TS ts = solver.ts();
    const char *prefix;
    char trajectoryPath[PETSC_MAX_PATH_LEN] = "", adjointPath[PETSC_MAX_PATH_LEN] = "";
    PetscBool writeTrajectory = PETSC_FALSE, writeAdjoint = PETSC_FALSE;
    PetscCall(TSGetOptionsPrefix(ts, &prefix));
    PetscOptionsBegin(PETSC_COMM_WORLD, prefix, "Hysteretic oscillator options", "");
    PetscCall(examples::realOption(PetscOptionsObject, "-ka", "initial stiffness k_a of the stress law", &p[0], examples::positive()));
    PetscCall(examples::realOption(PetscOptionsObject, "-kb", "post-yield stiffness k_b of the stress law", &p[1]));
    PetscCall(examples::realOption(PetscOptionsObject, "-alpha", "transition rate alpha of the stress law", &p[2], examples::positive()));
    PetscCall(examples::realOption(PetscOptionsObject, "-beta", "nonlinear hardening beta of the stress law", &p[3]));
    PetscCall(examples::stringOption(PetscOptionsObject, "-trajectory_csv", "write the trajectory (and its sensitivities) to this CSV file",
                                     trajectoryPath, sizeof trajectoryPath, &writeTrajectory));
    PetscCall(examples::stringOption(PetscOptionsObject, "-adjoint_csv", "write the adjoint of G at every reverse step to this CSV file",
                                     adjointPath, sizeof adjointPath, &writeAdjoint));
    PetscOptionsEnd();
    PetscCheck(p[0] > p[1], PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "the stress law needs -ka > -kb (got %g <= %g)", (double)p[0], (double)p[1]);
    PetscCall(solver.setParameters(p));
    if (dae) PetscCall(TSSetType(ts, TSCN));  // a DAE needs an implicit method
    else {
      PetscCall(TSSetType(ts, TSRK));
      PetscCall(TSRKSetType(ts, TSRK4));
    }
    PetscCall(TSSetTimeStep(ts, 1e-3));
    PetscCall(TSSetMaxTime(ts, 10.0));
    PetscCall(TSSetMaxSteps(ts, 10000000));
    PetscCall(solver.setFromOptions());  // the command line overrides these defaults

    TrajectoryWriter traj{nullptr, &solver, &model};
    // Both CSV files are written completely or not at all (rank 0 writes; see atomic_file.hpp).
    AtomicFile trajOut, adjOut;
    if (writeTrajectory) {
      PetscCall(trajOut.open(PETSC_COMM_WORLD, "-trajectory_csv", trajectoryPath));
      traj.file = trajOut.file();
      if (traj.file) {
        std::fprintf(traj.file, "t,xi,u,v,ustar,zstar,z");
        if (solver.forwardSensitivities()) std::fprintf(traj.file, ",du_dka,du_dkb,du_dalpha,du_dbeta,dz_dka,dz_dkb,dz_dalpha,dz_dbeta");
        std::fprintf(traj.file, "\n");
      }
      PetscCall(TSMonitorSet(ts, TrajectoryWriter::monitor, &traj, nullptr));
    }
    FILE *adjFile = nullptr;
    if (writeAdjoint) {
      PetscCall(adjOut.open(PETSC_COMM_WORLD, "-adjoint_csv", adjointPath));
      adjFile = adjOut.file();
      if (adjFile) std::fprintf(adjFile, "t,kind,lambda_u,lambda_v,lambda_ustar,lambda_zstar\n");
      const PetscInt shown[4] = {model.U, model.V, model.USTAR, model.ZSTAR};
      solver.setAdjointMonitor([adjFile, shown](const AdjointSample &s) -> PetscErrorCode {
        PetscScalar l[4];
        PetscFunctionBeginUser;
        for (PetscInt i = 0; i < 4; ++i) PetscCall(globalEntry(s.lambda[0], shown[i], &l[i]));
        const char *kind = s.kind == AdjointSample::AfterTransition ? "after_reversal" : "step";
        if (adjFile)
          PetscCall(PetscFPrintf(PETSC_COMM_SELF, adjFile, "%.17g,%s,%.17g,%.17g,%.17g,%.17g\n", (double)s.time, kind, (double)l[0],
                                 (double)l[1], (double)l[2], (double)l[3]));
        PetscFunctionReturn(0);
      });
    }

    PetscCall(solver.solve());
    const SolveResult &result = solver.result();
    // Output of this solve only (-hs_check_gradient solves again).
    PetscCall(TSMonitorCancel(ts));
    solver.setAdjointMonitor(nullptr);
    PetscCall(trajOut.commit());
    PetscCall(adjOut.commit());

    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "hysteresis_oscillator (%s): k_a = %g, k_b = %g, alpha = %g, beta = %g, T = %g, %zu reversals\n",
                          dae ? "DAE" : "ODE", (double)p[0], (double)p[1], (double)p[2], (double)p[3], (double)result.finalTime,
                          result.events().size()));
    for (const auto &r : result.events().records()) {
      PetscScalar vminus, us, zs;
      PetscCall(globalEntry(r.uminus, 1, &vminus));
      PetscCall(globalEntry(r.uplus, model.USTAR, &us));
      PetscCall(globalEntry(r.uplus, model.ZSTAR, &zs));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  reversal t = %.17g  xi %s -> %s  u* = %.17g  z* = %.17g  v- = %.3g\n", (double)r.time,
                            describe(r.before).c_str(), describe(r.after).c_str(), (double)us, (double)zs, (double)vminus));
    }
    PetscCall(solver.viewGradients());
    PetscCall(solver.writeSummaryFromOptions());
    PetscCall(solver.checkGradientFromOptions());
  }
  PetscCall(PetscFinalize());
  return 0;
}
