// five_bar — the planar five-bar mechanism of Corner, Sandu & Sandu (Modeling and sensitivity
// analysis methodology for hybrid dynamical systems, 2017/2024, §7) whose bottom joint bounces
// on the ground: a constrained multibody system with impacts, written as a Hessenberg index-2
// DAE (stabilized index reduction of Gear, Gupta & Leimkuhler). docs/index2-daes.md explains
// the formulation and the jump conditions; examples/pendulum_impact.cpp is the smaller sibling.
//
// Geometry (natural coordinates): ground joints A = (−0.5, 0), B = (0.5, 0); moving joints
// q = (q1, q2, q3), q_i = (x_i, y_i); bars A–1, 1–2, 2–3, 3–B of lengths √2, √3.25, √3.25, √2
// (the paper prints 1.4142 and 1.8027) and masses 1, 1.5, 1.5, 1 kg, uniform (a bar i–j has the
// mass matrix m/6 [[2, 1], [1, 2]] ⊗ I₂ and carries half its weight at each end); g = 9.81.
// Constraints Φ(q) = ½(|q_j − q_i|² − L²) per bar. Springs (k = 100 N/m each, natural lengths
// L01 = 2.2360, L02 = 2.0615 as printed) from A to joint 3 and from B to joint 2 — the paper's
// figure, which would say where they attach, is missing; these are the two attachments whose
// rest lengths at the initial configuration are √5 = 2.2361 and √4.25 = 2.0616, the printed
// values. Initial state (unstated in the paper; chosen): the symmetric configuration
// q1 = (−1.5, −1), q2 = (0, −2), q3 = (1.5, −1), at rest — consistent with Φ = 0 exactly.
//
// GGL index-2 form, u = (q, v, λ, μ) with 6 + 6 + 4 + 4 entries:
//   q' = v + Φ_qᵀ μ,   M v' = Q(q) − Φ_qᵀ λ,   0 = Φ(q),   0 = Φ_q v.
// Ground contact: guard γ = y2 − ground (falling), ground = −2.35 m. Impact (the paper's rule
// for its independent coordinates q2): ẏ2⁺ = −e ẏ2⁻, ẋ2⁺ = ẋ2⁻ (e = 1 in the paper), and the
// dependent velocities v1, v3 from the velocity constraints Φ_q v⁺ = 0 (two 2×2 solves): the
// reset projects onto the hidden constraint; its derivative with respect to q (the turning
// bars) is part of R_u — AD derives it, -test_drop_projection_derivative freezes it (must-fail).
// Parameters p = (L01, L02, e, ground). The paper's study: sensitivities of y2, ẏ2 and of the
// quadratures ∫ẏ2 dt and ∫ÿ2 dt with respect to (L01, L02) over 5 s. Costs here:
//   "y2" = y2(T), "vy2" = ẏ2(T) (terminal), "int_vy2" = ∫ẏ2 dt, "int_ay2" = ∫ÿ2 dt with
//   ÿ2 = (M⁻¹(Q − Φ_qᵀλ))_{y2} (reads the multipliers: fine for the backward Euler quadrature).
// Defaults: backward Euler (the only method accepted for index 2), dt = 2e-3, T = 5, Newton to
// 1e-12 with full steps; SuperLU on one rank (MUMPS, the library's default, in parallel).
//
// Run:
//   build/examples/five_bar -hs_forward -hs_adjoint
//   build/examples/five_bar -hs_check_gradient
//   build/examples/five_bar -e 0.7 -ts_max_time 3 -hs_adjoint
// Options (-help lists them): -L01 -L02 (> 0), -e (in [0, 1]), -ground (below y2(0) = −2),
// -test_drop_projection_derivative, -hs_summary FILE.
// Prints the impacts (time, ẏ2⁻, ẏ2⁺, constraint residuals after the impact), the costs and
// the gradient tables.
#include <hybridsens/ad.hpp>
#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

#include "example_options.hpp"

#include <array>
#include <cmath>

using namespace hybridsens;

namespace {

constexpr PetscReal gravity = 9.81, stiffness = 100.0;
constexpr PetscReal groundA[2] = {-0.5, 0.0}, groundB[2] = {0.5, 0.0};
constexpr PetscReal barMass[4] = {1.0, 1.5, 1.5, 1.0};  // A–1, 1–2, 2–3, 3–B
const PetscReal barLength[4] = {std::sqrt(2.0), std::sqrt(3.25), std::sqrt(3.25), std::sqrt(2.0)};

class FiveBar : public ADModel<FiveBar> {
public:
  enum { Q = 0, V = 6, LAMBDA = 12, MU = 16, SIZE = 20 };  // offsets in u
  enum { L01, L02, RESTITUTION, GROUND };                  // parameters

  explicit FiveBar(bool dropProjectionDerivative) : dropProjectionDerivative_(dropProjectionDerivative) {
    // M = M3 ⊗ I₂ with M3 tridiagonal over the joints 1, 2, 3 (the ground joints do not move).
    const PetscReal *m = barMass;
    const PetscReal a[3][3] = {{(m[0] + m[1]) / 3, m[1] / 6, 0}, {m[1] / 6, (m[1] + m[2]) / 3, m[2] / 6}, {0, m[2] / 6, (m[2] + m[3]) / 3}};
    const PetscReal det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {  // cofactor / det (a is symmetric)
        const int r0 = (j + 1) % 3, r1 = (j + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
        massInverse_[i][j] = (a[r0][c0] * a[r1][c1] - a[r0][c1] * a[r1][c0]) / det;
      }
  }
  PetscInt stateSize() const override { return SIZE; }
  std::vector<PetscInt> algebraicIndices() const override {
    PetscMPIInt rank;
    MPI_Comm_rank(comm(), &rank);
    std::vector<PetscInt> alg;
    if (rank == 0)  // ADModel keeps the whole state on rank 0
      for (PetscInt i = LAMBDA; i < SIZE; ++i) alg.push_back(i);
    return alg;
  }
  PetscInt daeIndex() const override { return 2; }
  DiscreteState initialDiscreteState() const override { return {0}; }
  std::vector<PetscReal> defaultParameters() const override { return {2.2360, 2.0615, 1.0, -2.35}; }
  std::vector<std::string> parameterNames() const override { return {"L01", "L02", "e", "ground"}; }

  template <class S> void initialState(const S *, S *u0) const {
    const PetscReal q0[6] = {-1.5, -1.0, 0.0, -2.0, 1.5, -1.0};
    for (int i = 0; i < SIZE; ++i) u0[i] = i < 6 ? q0[i] : 0.0;
  }

  // d_b = (end − start) of bar b, with the ground joints as constants.
  template <class S> static void barVector(int b, const S *q, S d[2]) {
    for (int c = 0; c < 2; ++c) {
      const S start = b == 0 ? S(groundA[c]) : q[2 * (b - 1) + c];
      const S end = b == 3 ? S(groundB[c]) : q[2 * b + c];
      d[c] = end - start;
    }
  }
  // Adds s·Φ_qᵀ w to out (6 entries): bar b pulls its moving ends along ±d_b.
  template <class S> static void addConstraintTranspose(const S *q, const S *w, S s, S *out) {
    for (int b = 0; b < 4; ++b) {
      S d[2];
      barVector(b, q, d);
      for (int c = 0; c < 2; ++c) {
        if (b > 0) out[2 * (b - 1) + c] -= s * w[b] * d[c];
        if (b < 3) out[2 * b + c] += s * w[b] * d[c];
      }
    }
  }
  // Spring from a ground point to a joint: force on the joint −k(ℓ − L0)(q − g)/ℓ.
  template <class S> static void addSpring(const PetscReal g[2], int joint, S restLength, const S *q, S *force) {
    using std::sqrt;
    const S dx = q[2 * joint] - g[0], dy = q[2 * joint + 1] - g[1];
    const S len = sqrt(dx * dx + dy * dy);
    const S scale = -stiffness * (len - restLength) / len;
    force[2 * joint] += scale * dx;
    force[2 * joint + 1] += scale * dy;
  }
  // Q − Φ_qᵀλ, then M⁻¹: the accelerations.
  template <class S> void accelerations(const S *u, const S *p, S *a) const {
    const S *q = u + Q;
    S force[6];
    for (int i = 0; i < 6; ++i) force[i] = 0.0;
    for (int j = 0; j < 3; ++j) force[2 * j + 1] = -gravity * (barMass[j] + barMass[j + 1]) / 2;
    addSpring(groundA, 2, p[L01], q, force);  // A – joint 3
    addSpring(groundB, 1, p[L02], q, force);  // B – joint 2
    addConstraintTranspose(q, u + LAMBDA, S(-1.0), force);
    for (int j = 0; j < 3; ++j)
      for (int c = 0; c < 2; ++c) {
        a[2 * j + c] = 0.0;
        for (int k = 0; k < 3; ++k) a[2 * j + c] += massInverse_[j][k] * force[2 * k + c];
      }
  }

  template <class S> void rhs(S, const S *u, const S *p, const DiscreteState &, S *f) const {
    const S *q = u + Q, *v = u + V;
    for (int i = 0; i < 6; ++i) f[Q + i] = v[i];
    addConstraintTranspose(q, u + MU, S(1.0), f + Q);  // q' = v + Φ_qᵀ μ
    accelerations(u, p, f + V);
    for (int b = 0; b < 4; ++b) {
      S d[2], dv[2];
      barVector(b, q, d);
      for (int c = 0; c < 2; ++c) {  // the bar's relative velocity
        const S vs = b == 0 ? S(0.0) : v[2 * (b - 1) + c];
        const S ve = b == 3 ? S(0.0) : v[2 * b + c];
        dv[c] = ve - vs;
      }
      f[LAMBDA + b] = 0.5 * (d[0] * d[0] + d[1] * d[1] - barLength[b] * barLength[b]);
      f[MU + b] = d[0] * dv[0] + d[1] * dv[1];
    }
  }

  PetscInt numGuards() const override { return 1; }
  GuardInfo guardInfo(PetscInt) const override { return {"ground", Direction::Falling}; }
  template <class S> S guard(PetscInt, S, const S *u, const S *p, const DiscreteState &) const { return u[Q + 3] - p[GROUND]; }
  PetscErrorCode transition(const EventId &, PetscReal, Vec, DiscreteState &d) const override {
    ++d[0];
    return 0;
  }
  bool hasReset(const EventId &) const override { return true; }
  // v2⁺ = (ẋ2⁻, −e ẏ2⁻); v1⁺ from (q1 − A)·v1 = 0, (q2 − q1)·(v2 − v1) = 0; v3⁺ likewise.
  template <class S> void reset(const EventId &, S, const S *u, const S *p, const DiscreteState &, S *up) const {
    for (int i = 0; i < SIZE; ++i) up[i] = u[i];
    S q[6];
    for (int i = 0; i < 6; ++i) q[i] = dropProjectionDerivative_ ? S(Sacado::ScalarValue<S>::eval(u[Q + i])) : u[Q + i];
    S *v = up + V;
    v[2] = u[V + 2];
    v[3] = -p[RESTITUTION] * u[V + 3];
    // Rows r (a 2×2 system) with right-hand side (0, n·v2): the outer joint is fixed to ground.
    auto dependent = [&](const PetscReal g[2], int joint, S *out) {
      const S r0x = q[2 * joint] - g[0], r0y = q[2 * joint + 1] - g[1];
      const S r1x = q[2] - q[2 * joint], r1y = q[3] - q[2 * joint + 1];
      const S rhs1 = r1x * v[2] + r1y * v[3];
      const S det = r0x * r1y - r0y * r1x;
      out[0] = -r0y * rhs1 / det;
      out[1] = r0x * rhs1 / det;
    };
    dependent(groundA, 0, v);
    dependent(groundB, 2, v + 4);
  }

private:
  bool dropProjectionDerivative_;
  PetscReal massInverse_[3][3];
};

class Y2 : public ADCost<Y2> {
public:
  std::string name() const override { return "y2"; }
  template <class S> S terminal(S, const S *u, const S *, const DiscreteState &) const { return u[FiveBar::Q + 3]; }
};
class VY2 : public ADCost<VY2> {
public:
  std::string name() const override { return "vy2"; }
  template <class S> S terminal(S, const S *u, const S *, const DiscreteState &) const { return u[FiveBar::V + 3]; }
};
class IntVY2 : public ADCost<IntVY2> {
public:
  std::string name() const override { return "int_vy2"; }
  template <class S> S integrand(S, const S *u, const S *, const DiscreteState &) const { return u[FiveBar::V + 3]; }
};
class IntAY2 : public ADCost<IntAY2> {
public:
  explicit IntAY2(const FiveBar &m) : model_(m) {}
  std::string name() const override { return "int_ay2"; }
  template <class S> S integrand(S, const S *u, const S *p, const DiscreteState &) const {
    S a[6];
    model_.accelerations(u, p, a);
    return a[3];
  }

private:
  const FiveBar &model_;
};

} // namespace

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, "Five-bar mechanism bouncing on the ground (Corner, Sandu & Sandu §7) as an index-2 DAE.\n"));
  {
    PetscBool dropProjection = PETSC_FALSE;
    PetscOptionsBegin(PETSC_COMM_WORLD, nullptr, "Five-bar: testing switches", "");
    PetscCall(examples::boolOption(PetscOptionsObject, "-test_drop_projection_derivative",
                                   "Testing only: freeze the joint positions in the impact's velocity projection (gradients become wrong)",
                                   &dropProjection));
    PetscOptionsEnd();
    FiveBar model(dropProjection);
    Solver solver(model);
    Y2 y2;
    VY2 vy2;
    IntVY2 intVy2;
    IntAY2 intAy2(model);
    for (CostFunction *c : std::array<CostFunction *, 4>{&y2, &vy2, &intVy2, &intAy2}) solver.addCost(*c);
    std::vector<PetscReal> p = model.defaultParameters();
    TS ts = solver.ts();
    const char *prefix;
    PetscCall(TSGetOptionsPrefix(ts, &prefix));
    PetscOptionsBegin(PETSC_COMM_WORLD, prefix, "Five-bar parameters", "");
    PetscCall(examples::realOption(PetscOptionsObject, "-L01", "natural length of the spring A - joint 3", &p[FiveBar::L01], examples::positive()));
    PetscCall(examples::realOption(PetscOptionsObject, "-L02", "natural length of the spring B - joint 2", &p[FiveBar::L02], examples::positive()));
    PetscCall(examples::realOption(PetscOptionsObject, "-e", "coefficient of restitution of joint 2 at the ground", &p[FiveBar::RESTITUTION],
                                   examples::closedInterval(0, 1)));
    PetscCall(examples::realOption(PetscOptionsObject, "-ground", "height of the ground (below y2(0) = -2)", &p[FiveBar::GROUND],
                                   {-PETSC_MAX_REAL, -2.0, false, true}));
    PetscOptionsEnd();
    PetscCall(solver.setParameters(p));
    SNES snes;
    KSP ksp;
    PC pc;
    SNESLineSearch ls;
    PetscMPIInt size;
    PetscCall(TSSetType(ts, TSBEULER));
    PetscCall(TSGetSNES(ts, &snes));
    // As pendulum_impact: Newton to 1e-12 with full steps (docs/index2-daes.md §3).
    PetscCall(SNESSetTolerances(snes, 1e-12, 1e-12, 1e-14, 50, PETSC_DEFAULT));
    PetscCall(SNESGetLineSearch(snes, &ls));
    PetscCall(SNESLineSearchSetType(ls, SNESLINESEARCHBASIC));
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    if (size == 1) {  // a pivoting serial LU that is several times cheaper than MUMPS on 20 unknowns
      PetscCall(SNESGetKSP(snes, &ksp));
      PetscCall(KSPGetPC(ksp, &pc));
      PetscCall(PCSetType(pc, PCLU));
      PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERSUPERLU));
    }
    PetscCall(TSSetTimeStep(ts, 2e-3));
    PetscCall(TSSetMaxTime(ts, 5.0));
    PetscCall(TSSetMaxSteps(ts, 100000000));
    PetscCall(solver.setFromOptions());  // the command line overrides these defaults
    PetscCall(solver.solve());
    const SolveResult &result = solver.result();

    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "five_bar: L01 = %g, L02 = %g, e = %g, ground = %g, T = %g: %zu impacts\n", (double)p[0], (double)p[1],
                          (double)p[2], (double)p[3], (double)result.finalTime, result.events().size()));
    PetscReal worst = 0;
    for (const auto &r : result.events().records()) {
      std::vector<PetscReal> u(FiveBar::SIZE), f(FiveBar::SIZE);
      PetscScalar vm;
      for (PetscInt i = 0; i < FiveBar::SIZE; ++i) PetscCall(globalEntry(r.uplus, i, &u[i]));
      PetscCall(globalEntry(r.uminus, FiveBar::V + 3, &vm));
      model.rhs<PetscReal>(r.time, u.data(), p.data(), r.after, f.data());
      PetscReal position = 0, velocity = 0;
      for (int b = 0; b < 4; ++b) {
        position = std::max(position, std::fabs(f[FiveBar::LAMBDA + b]));
        velocity = std::max(velocity, std::fabs(f[FiveBar::MU + b]));
      }
      worst = std::max(worst, std::max(position, velocity));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  impact t = %.17g  vy2- = %.17g  vy2+ = %.17g  |Phi| = %.3g  |Phi_q v| = %.3g\n", (double)r.time,
                            (double)vm, (double)u[FiveBar::V + 3], (double)position, (double)velocity));
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "max constraint residual after the impacts: %.3g\n", (double)worst));
    PetscCall(solver.viewGradients());
    PetscCall(solver.writeSummaryFromOptions());
    PetscCall(solver.checkGradientFromOptions());
  }
  PetscCall(PetscFinalize());
  return 0;
}
