// pendulum_impact — a planar pendulum in Cartesian coordinates, a Hessenberg index-2 DAE
// (stabilized index reduction of Gear, Gupta & Leimkuhler 1985), that swings against a wall;
// the same pendulum in its angle (an ODE) for comparison. docs/index2-daes.md explains the
// formulation, why backward Euler, and how the jumps treat the constraints.
//
// Cartesian model (unit mass, gravity g = 9.81, rod length L), u = (x, y, vx, vy, λ, μ):
//   x' = vx + x μ,   y' = vy + y μ,   vx' = −x λ,   vy' = −g − y λ,
//   0 = ½(x² + y² − L²)            (position constraint; on the row of λ, though any pairing works)
//   0 = x vx + y vy                 (velocity constraint, the derivative of the first).
// λ is the rod tension (per length), μ the GGL multiplier that keeps the position constraint
// (μ = 0 on exact solutions). The algebraic rows read only (x, y, vx, vy): index 2, with
// k_x f_y = [[0, L²], [−L², 0]] regular. The library computes (λ, μ) from the hidden
// constraint k_x f = 0 at t0 and after every impact: μ = 0, λ = (vx² + vy² − g y)/L².
// Wall: the vertical line x = w (guard γ = x − w, falling). Impact: Newton's law on the
// wall-normal velocity together with the rod, i.e. an impulse Λ_n along the wall normal
// n = (1, 0) and Λ_c along the rod G = (x, y):
//   v⁺ = v⁻ + Λ_n n + Λ_c G,   n·v⁺ = −e n·v⁻,   G·v⁺ = 0      (a 2×2 solve; det = y²),
// so v⁺ lies on the velocity constraint (the reset projects onto it) and positions stay. On the
// constraint the solution is v⁺ = −e v⁻; its derivative is not: perturbing (x, y) turns the
// constraint normal G, and that term (the projection's derivative) is part of R_u. AD derives
// it; -test_drop_projection_derivative freezes G in the derivative (must-fail tests).
// Angle model, u = (θ, ω), θ from the downward vertical (x = L sin θ, y = −L cos θ):
//   θ' = ω,  ω' = −(g/L) sin θ;  guard L sin θ − w (falling);  reset ω⁺ = −e ω⁻.
// Parameters p = (L, e, w, θ0) = (1, 0.8, −0.5, 1): released at rest from θ0.
// Costs: "energy" ψ = ½|v(T)|² + g y(T) (terminal; angle form ½L²ω² − gL cos θ) and
// "mean_square" ∫₀ᵀ x² dt (angle form ∫ L² sin²θ dt).
// Defaults: Cartesian backward Euler (the only method accepted for index 2), dt = 1e-3,
// Newton to 1e-12 with full steps, SuperLU on one rank (MUMPS in parallel); angle RK4,
// dt = 1e-3; T = 3 (two impacts).
//
// Run:
//   build/examples/pendulum_impact -hs_forward -hs_adjoint
//   build/examples/pendulum_impact -hs_check_gradient
//   build/examples/pendulum_impact -coordinates angle -hs_adjoint
//   build/examples/pendulum_impact -ts_type cn          (refused: index 2 needs backward Euler)
// Options (-help lists them): -L (> 0), -e (in [0, 1]), -wall (in (−L, L sin θ0): within reach),
// -theta0 (in (−π/2, π/2)), -coordinates cartesian|angle, -test_drop_projection_derivative,
// -hs_summary FILE.
// Prints the impacts (time, x, v⁻, v⁺, constraint residuals after the impact), the costs and
// the gradient tables.
#include <hybridsens/ad.hpp>
#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

#include "example_options.hpp"

#include <cmath>

using namespace hybridsens;

namespace {

constexpr PetscReal gravity = 9.81;
enum { LENGTH, RESTITUTION, WALL, THETA0 };  // parameters
const std::vector<std::string> parameterNamesList = {"L", "e", "wall", "theta0"};

class CartesianPendulum : public ADModel<CartesianPendulum> {
public:
  enum { X, Y, VX, VY, LAMBDA, MU };

  explicit CartesianPendulum(bool dropProjectionDerivative) : dropProjectionDerivative_(dropProjectionDerivative) {}
  PetscInt stateSize() const override { return 6; }
  std::vector<PetscInt> algebraicIndices() const override { return ownsState() ? std::vector<PetscInt>{LAMBDA, MU} : std::vector<PetscInt>{}; }
  PetscInt daeIndex() const override { return 2; }
  DiscreteState initialDiscreteState() const override { return {0}; }
  std::vector<PetscReal> defaultParameters() const override { return {1.0, 0.8, -0.5, 1.0}; }
  std::vector<std::string> parameterNames() const override { return parameterNamesList; }

  template <class S> void initialState(const S *p, S *u0) const {
    using std::cos;
    using std::sin;
    u0[X] = p[LENGTH] * sin(p[THETA0]);
    u0[Y] = -p[LENGTH] * cos(p[THETA0]);
    u0[VX] = u0[VY] = 0.0;
    u0[LAMBDA] = u0[MU] = 0.0;  // solved from the hidden constraint by the library
  }
  template <class S> void rhs(S, const S *u, const S *p, const DiscreteState &, S *f) const {
    f[X] = u[VX] + u[X] * u[MU];
    f[Y] = u[VY] + u[Y] * u[MU];
    f[VX] = -u[X] * u[LAMBDA];
    f[VY] = -gravity - u[Y] * u[LAMBDA];
    f[LAMBDA] = 0.5 * (u[X] * u[X] + u[Y] * u[Y] - p[LENGTH] * p[LENGTH]);
    f[MU] = u[X] * u[VX] + u[Y] * u[VY];
  }

  PetscInt numGuards() const override { return 1; }
  GuardInfo guardInfo(PetscInt) const override { return {"wall", Direction::Falling}; }
  template <class S> S guard(PetscInt, S, const S *u, const S *p, const DiscreteState &) const { return u[X] - p[WALL]; }
  PetscErrorCode transition(const EventId &, PetscReal, Vec, DiscreteState &d) const override {
    ++d[0];  // counts the impacts
    return 0;
  }
  bool hasReset(const EventId &) const override { return true; }
  template <class S> void reset(const EventId &, S, const S *u, const S *p, const DiscreteState &, S *up) const {
    // The rod direction G = (x, y); frozen (its derivative dropped) only for must-fail tests.
    S gx = u[X], gy = u[Y];
    if (dropProjectionDerivative_) gx = Sacado::ScalarValue<S>::eval(u[X]), gy = Sacado::ScalarValue<S>::eval(u[Y]);
    // [n·n n·G; G·n G·G] (Λ_n, Λ_c) = (−(1 + e) n·v⁻, −G·v⁻), n = (1, 0).
    const S a11 = 1.0, a12 = gx, a22 = gx * gx + gy * gy;
    const S b1 = -(1.0 + p[RESTITUTION]) * u[VX], b2 = -(gx * u[VX] + gy * u[VY]);
    const S det = a11 * a22 - a12 * a12;
    const S ln = (a22 * b1 - a12 * b2) / det, lc = (a11 * b2 - a12 * b1) / det;
    for (int i = 0; i < 6; ++i) up[i] = u[i];
    up[VX] = u[VX] + ln + lc * gx;
    up[VY] = u[VY] + lc * gy;
  }

private:
  bool ownsState() const {
    PetscMPIInt rank;
    MPI_Comm_rank(comm(), &rank);
    return rank == 0;  // ADModel keeps the whole state on rank 0
  }
  bool dropProjectionDerivative_;
};

class AnglePendulum : public ADModel<AnglePendulum> {
public:
  enum { THETA, OMEGA };
  PetscInt stateSize() const override { return 2; }
  DiscreteState initialDiscreteState() const override { return {0}; }
  std::vector<PetscReal> defaultParameters() const override { return {1.0, 0.8, -0.5, 1.0}; }
  std::vector<std::string> parameterNames() const override { return parameterNamesList; }

  template <class S> void initialState(const S *p, S *u0) const {
    u0[THETA] = p[THETA0];
    u0[OMEGA] = 0.0;
  }
  template <class S> void rhs(S, const S *u, const S *p, const DiscreteState &, S *f) const {
    using std::sin;
    f[THETA] = u[OMEGA];
    f[OMEGA] = -gravity / p[LENGTH] * sin(u[THETA]);
  }
  PetscInt numGuards() const override { return 1; }
  GuardInfo guardInfo(PetscInt) const override { return {"wall", Direction::Falling}; }
  template <class S> S guard(PetscInt, S, const S *u, const S *p, const DiscreteState &) const {
    using std::sin;
    return p[LENGTH] * sin(u[THETA]) - p[WALL];
  }
  PetscErrorCode transition(const EventId &, PetscReal, Vec, DiscreteState &d) const override {
    ++d[0];
    return 0;
  }
  bool hasReset(const EventId &) const override { return true; }
  template <class S> void reset(const EventId &, S, const S *u, const S *p, const DiscreteState &, S *up) const {
    up[THETA] = u[THETA];
    up[OMEGA] = -p[RESTITUTION] * u[OMEGA];
  }
};

// ψ = ½|v(T)|² + g y(T), the mechanical energy at T.
class CartesianEnergy : public ADCost<CartesianEnergy> {
public:
  std::string name() const override { return "energy"; }
  template <class S> S terminal(S, const S *u, const S *, const DiscreteState &) const {
    using P = CartesianPendulum;
    return 0.5 * (u[P::VX] * u[P::VX] + u[P::VY] * u[P::VY]) + gravity * u[P::Y];
  }
};
class CartesianMeanSquare : public ADCost<CartesianMeanSquare> {
public:
  std::string name() const override { return "mean_square"; }
  template <class S> S integrand(S, const S *u, const S *, const DiscreteState &) const {
    return u[CartesianPendulum::X] * u[CartesianPendulum::X];
  }
};
class AngleEnergy : public ADCost<AngleEnergy> {
public:
  std::string name() const override { return "energy"; }
  template <class S> S terminal(S, const S *u, const S *p, const DiscreteState &) const {
    using std::cos;
    const S L = p[LENGTH], w = u[AnglePendulum::OMEGA];
    return 0.5 * L * L * w * w - gravity * L * cos(u[AnglePendulum::THETA]);
  }
};
class AngleMeanSquare : public ADCost<AngleMeanSquare> {
public:
  std::string name() const override { return "mean_square"; }
  template <class S> S integrand(S, const S *u, const S *p, const DiscreteState &) const {
    using std::sin;
    const S x = p[LENGTH] * sin(u[AnglePendulum::THETA]);
    return x * x;
  }
};

// Reads the parameters, runs, prints the impacts and gradients. `cartesian` adds the
// constraint residuals after every impact.
template <class Model, class Energy, class MeanSquare>
PetscErrorCode runPendulum(Model &model, bool cartesian) {
  PetscFunctionBeginUser;
  Solver solver(model);
  Energy energy;
  MeanSquare meanSquare;
  solver.addCost(energy);
  solver.addCost(meanSquare);
  std::vector<PetscReal> p = model.defaultParameters();
  TS ts = solver.ts();
  const char *prefix;
  PetscCall(TSGetOptionsPrefix(ts, &prefix));
  PetscOptionsBegin(PETSC_COMM_WORLD, prefix, "Pendulum parameters", "");
  PetscCall(examples::realOption(PetscOptionsObject, "-L", "rod length L", &p[LENGTH], examples::positive()));
  PetscCall(examples::realOption(PetscOptionsObject, "-e", "coefficient of restitution at the wall", &p[RESTITUTION], examples::closedInterval(0, 1)));
  PetscCall(examples::realOption(PetscOptionsObject, "-wall", "x position w of the wall (the pendulum swings to it from the right)", &p[WALL]));
  PetscCall(examples::realOption(PetscOptionsObject, "-theta0", "initial angle from the downward vertical (released at rest)", &p[THETA0],
                                 examples::openInterval(-M_PI / 2, M_PI / 2)));
  PetscOptionsEnd();
  // Released at rest right of the wall, and the wall within reach of the rod below its pivot.
  PetscCheck(p[WALL] > -p[LENGTH] && p[WALL] < p[LENGTH] * std::sin(p[THETA0]), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-wall %g must lie in (-L, L sin(theta0)) = (%g, %g): the pendulum starts right of the wall and must be able to reach it",
             (double)p[WALL], (double)-p[LENGTH], (double)(p[LENGTH] * std::sin(p[THETA0])));
  PetscCall(solver.setParameters(p));
  if (cartesian) {
    SNES snes;
    PetscCall(TSSetType(ts, TSBEULER));
    // The constraints hold to the Newton tolerance at every step end: 1e-12, so that a reset
    // starts on k = 0 to far below the library's 1e-10 check, and the discrete derivatives
    // are those of a converged step.
    PetscCall(TSGetSNES(ts, &snes));
    // A step shortened by event location has residual rows (x − x_n)/h whose round-off grows
    // like 1/h: full Newton steps (no backtracking, which would stall there) until the step
    // is at round-off (-snes_stol) if the residual cannot reach -snes_atol.
    SNESLineSearch ls;
    PetscCall(SNESSetTolerances(snes, 1e-12, 1e-12, 1e-14, 50, PETSC_DEFAULT));
    PetscCall(SNESGetLineSearch(snes, &ls));
    PetscCall(SNESLineSearchSetType(ls, SNESLINESEARCHBASIC));
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    if (size == 1) {  // a pivoting serial LU, several times cheaper than MUMPS on 6 unknowns
      KSP ksp;
      PC pc;
      PetscCall(SNESGetKSP(snes, &ksp));
      PetscCall(KSPGetPC(ksp, &pc));
      PetscCall(PCSetType(pc, PCLU));
      PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERSUPERLU));
    }
  } else {
    PetscCall(TSSetType(ts, TSRK));
    PetscCall(TSRKSetType(ts, TSRK4));
  }
  PetscCall(TSSetTimeStep(ts, 1e-3));
  PetscCall(TSSetMaxTime(ts, 3.0));
  PetscCall(TSSetMaxSteps(ts, 100000000));
  PetscCall(solver.setFromOptions());  // the command line overrides these defaults
  PetscCall(solver.solve());
  const SolveResult &result = solver.result();

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "pendulum_impact (%s): L = %g, e = %g, wall = %g, theta0 = %g, T = %g: %zu impacts\n",
                        cartesian ? "cartesian, index-2 DAE" : "angle, ODE", (double)p[LENGTH], (double)p[RESTITUTION], (double)p[WALL],
                        (double)p[THETA0], (double)result.finalTime, result.events().size()));
  PetscReal worst = 0;
  for (const auto &r : result.events().records()) {
    if (cartesian) {
      PetscScalar xy[6], vm[2];
      for (PetscInt i = 0; i < 6; ++i) PetscCall(globalEntry(r.uplus, i, &xy[i]));
      PetscCall(globalEntry(r.uminus, CartesianPendulum::VX, &vm[0]));
      PetscCall(globalEntry(r.uminus, CartesianPendulum::VY, &vm[1]));
      using P = CartesianPendulum;
      const PetscReal position = std::fabs(0.5 * (xy[P::X] * xy[P::X] + xy[P::Y] * xy[P::Y] - p[LENGTH] * p[LENGTH]));
      const PetscReal velocity = std::fabs(xy[P::X] * xy[P::VX] + xy[P::Y] * xy[P::VY]);
      worst = std::max(worst, std::max(position, velocity));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                            "  impact t = %.17g  x = %.17g  v- = (%.17g, %.17g)  v+ = (%.17g, %.17g)  lambda+ = %.17g  mu+ = %.3g  "
                            "|k_pos| = %.3g  |k_vel| = %.3g\n",
                            (double)r.time, (double)xy[P::X], (double)vm[0], (double)vm[1], (double)xy[P::VX], (double)xy[P::VY],
                            (double)xy[P::LAMBDA], (double)xy[P::MU], (double)position, (double)velocity));
    } else {
      PetscScalar theta, wm, wp;
      PetscCall(globalEntry(r.uminus, AnglePendulum::THETA, &theta));
      PetscCall(globalEntry(r.uminus, AnglePendulum::OMEGA, &wm));
      PetscCall(globalEntry(r.uplus, AnglePendulum::OMEGA, &wp));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  impact t = %.17g  x = %.17g  omega- = %.17g  omega+ = %.17g\n", (double)r.time,
                            (double)(p[LENGTH] * std::sin(theta)), (double)wm, (double)wp));
    }
  }
  if (cartesian) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "max constraint residual after the impacts: %.3g\n", (double)worst));
  PetscCall(solver.viewGradients());
  PetscCall(solver.writeSummaryFromOptions());
  PetscCall(solver.checkGradientFromOptions());
  PetscFunctionReturn(0);
}

} // namespace

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, "Planar pendulum hitting a wall: Cartesian index-2 DAE (GGL) or angle ODE.\n"));
  {
    const char *const coordinateNames[] = {"cartesian", "angle", "Coordinates", "", nullptr};
    PetscEnum coordinates = (PetscEnum)0;
    PetscBool dropProjection = PETSC_FALSE;
    PetscOptionsBegin(PETSC_COMM_WORLD, nullptr, "Pendulum: formulation", "");
    PetscCall(examples::enumOption(PetscOptionsObject, "-coordinates", "cartesian (index-2 DAE) or angle (ODE)", coordinateNames, &coordinates));
    PetscCall(examples::boolOption(PetscOptionsObject, "-test_drop_projection_derivative",
                                   "Testing only: freeze the rod direction in the impact's derivative (gradients become wrong)", &dropProjection));
    PetscOptionsEnd();
    if (coordinates == 0) {
      CartesianPendulum model(dropProjection);
      PetscCall(runPendulum<CartesianPendulum, CartesianEnergy, CartesianMeanSquare>(model, true));
    } else {
      AnglePendulum model;
      PetscCall(runPendulum<AnglePendulum, AngleEnergy, AngleMeanSquare>(model, false));
    }
  }
  PetscCall(PetscFinalize());
  return 0;
}
