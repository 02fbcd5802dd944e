// A DISTRIBUTED Hessenberg index-2 DAE with impacts (docs/index2-daes.md, "Distributed"): the
// GGL projection check, the multiplier recomputation after every reset, MUMPS on the step and
// hidden-constraint matrices and the jump sensitivities must give the serial answer when the
// state is split over the ranks.
//
// Model: a bank of M = 7 Cartesian GGL pendulums (unit masses, pivots at the origin), written
// with LocalKernelModel; pendulum i has u[6i .. 6i+5] = (x, y, vx, vy, λ, μ):
//   x' = vx + x μ,  y' = vy + y μ,  vx' = −x λ + F_x,  vy' = −g s − y λ + F_y,
//   0 = ½(x² + y² − L_i²),  0 = x vx + y vy,
// with g = 9.81, s the gravity scale and F the force of weak springs (stiffness κ) between
// consecutive bobs — the spring kernel adds to the velocity rows of pendulum i + 1, which may
// live on another rank, so the Jacobian has off-rank entries. 42 unknowns split by PETSc: at 2
// ranks 21 + 21 (the cut runs through pendulum 3), at 3 ranks 14 + 14 + 14 (through pendulums
// 2 and 4). Wall i: guard x − w_i (falling), w_i = −0.2 L_i; impact: the restitution reset of
// examples/pendulum_impact.cpp (impulses along the wall normal and the rod, so that v⁺ is on
// the velocity constraint); the state starts at rest at θ0_i = 0.9 + 0.04 i.
// Parameters p = (e, s, L_0 .. L_6) = (0.8, 1, 0.25 + 0.1 i). Costs: "energy" Σ ½|v_i|² + g s
// y_i at T (terminal), "mean_square" ∫ Σ x_i² + 0.01 λ_i dt (an integrand reading λ).
//
// Asserted at 1, 2 and 3 ranks: forward = adjoint; the gradients, event list and states after
// the impacts equal a serial reference (the same model on PETSC_COMM_SELF, solved on every
// rank); central finite differences; the constraints and the recomputed multipliers after every
// impact; and the must-fails (a reset off the velocity constraint is refused; dropping the
// event-time term changes the gradient).
#include "test_support.hpp"
#include "util/gather.hpp"

#include <hybridsens/ad_local.hpp>
#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

#include <cmath>
#include <set>

using namespace hybridsens;

#define HS_OK(expr) ASSERT_EQ((PetscErrorCode)(expr), 0)

namespace {

constexpr PetscInt kM = 7;
constexpr PetscReal kGravity = 9.81, kSpring = 0.5, kHorizon = 1.1, kStep = 4e-3;
enum { X, Y, VX, VY, LAMBDA, MU };
enum { RESTITUTION, GRAVITY_SCALE, LENGTH0 };  // p[LENGTH0 + i] = L_i

PetscReal defaultLength(PetscInt i) { return 0.2 + 0.05 * i; }
PetscReal wallFraction() { return 0.1; }
PetscReal initialAngle(PetscInt i) { return 0.9 + 0.04 * i; }
PetscInt at(PetscInt i, PetscInt k) { return 6 * i + k; }

// One pendulum: reads and writes its six rows; params (e, s, L_i); guard: its wall.
struct Pendulum {
  static constexpr int numReads = 6, numWrites = 6, numParams = 3;
  PetscReal theta0, wallFraction;
  bool offConstraint;  // must-fail variant: v⁺ = (−e vx⁻, vy⁻), off the velocity constraint
  PetscInt index;
  template <class S> void residual(S, const S *u, const S *p, const DiscreteState &, S *f) const {
    f[X] = u[VX] + u[X] * u[MU];
    f[Y] = u[VY] + u[Y] * u[MU];
    f[VX] = -u[X] * u[LAMBDA];
    f[VY] = -kGravity * p[1] - u[Y] * u[LAMBDA];
    f[LAMBDA] = 0.5 * (u[X] * u[X] + u[Y] * u[Y] - p[2] * p[2]);
    f[MU] = u[X] * u[VX] + u[Y] * u[VY];
  }
  template <class S> void initialState(const S *p, S *u0) const {
    using std::cos;
    using std::sin;
    u0[X] = p[2] * sin(theta0);
    u0[Y] = -p[2] * cos(theta0);
  }
  template <class S> S guard(PetscInt, S, const S *u, const S *p, const DiscreteState &) const { return u[X] - wallFraction * p[2]; }
  template <class S> void reset(const EventId &id, S, const S *u, const S *p, const DiscreteState &, S *up) const {
    if (id.kind != EventId::Guard || id.index != index) return;
    if (offConstraint) {
      up[VX] = -p[0] * u[VX];
      return;
    }
    // Impulses Λ_n along n = (1, 0) and Λ_c along the rod G = (x, y):
    // [1 x; x |G|²] (Λ_n, Λ_c) = (−(1 + e) vx⁻, −G·v⁻), so n·v⁺ = −e n·v⁻ and G·v⁺ = 0.
    const S a12 = u[X], a22 = u[X] * u[X] + u[Y] * u[Y];
    const S b1 = -(1.0 + p[0]) * u[VX], b2 = -(u[X] * u[VX] + u[Y] * u[VY]);
    const S det = a22 - a12 * a12;
    const S ln = (a22 * b1 - a12 * b2) / det, lc = (b2 - a12 * b1) / det;
    up[VX] = u[VX] + ln + lc * u[X];
    up[VY] = u[VY] + lc * u[Y];
  }
};

// A spring between bobs i and i + 1: reads (x_i, y_i, x_{i+1}, y_{i+1}), adds its force to
// (vx_i, vy_i, vx_{i+1}, vy_{i+1}).
struct Spring {
  static constexpr int numReads = 4, numWrites = 4, numParams = 0;
  template <class S> void residual(S, const S *u, const S *, const DiscreteState &, S *f) const {
    const S dx = u[2] - u[0], dy = u[3] - u[1];
    f[0] = kSpring * dx;
    f[1] = kSpring * dy;
    f[2] = -kSpring * dx;
    f[3] = -kSpring * dy;
  }
};

class PendulumBank : public LocalKernelModel {
public:
  PendulumBank(MPI_Comm comm, bool offConstraint) : LocalKernelModel(comm) {
    PetscCallAbort(comm, setSizes(6 * kM));
    std::vector<PetscInt> alg;
    for (PetscInt i = 0; i < kM; ++i) alg.insert(alg.end(), {at(i, LAMBDA), at(i, MU)});
    setAlgebraic(alg);
    for (PetscInt i = 0; i < kM; ++i) {
      std::vector<PetscInt> rows;
      for (PetscInt k = 0; k < 6; ++k) rows.push_back(at(i, k));
      add(Pendulum{initialAngle(i), wallFraction(), offConstraint, i}, {rows, rows, {RESTITUTION, GRAVITY_SCALE, LENGTH0 + i}, {i}});
      if (i + 1 < kM)
        add(Spring{}, {{at(i, X), at(i, Y), at(i + 1, X), at(i + 1, Y)}, {at(i, VX), at(i, VY), at(i + 1, VX), at(i + 1, VY)}, {}, {}});
    }
    PetscCallAbort(comm, setUp());
  }
  PetscInt daeIndex() const override { return 2; }
  DiscreteState initialDiscreteState() const override { return DiscreteState(kM, 0); }
  std::vector<PetscReal> defaultParameters() const override {
    std::vector<PetscReal> p = {0.8, 1.0};
    for (PetscInt i = 0; i < kM; ++i) p.push_back(defaultLength(i));
    return p;
  }
  std::vector<std::string> parameterNames() const override {
    std::vector<std::string> n = {"e", "gravity_scale"};
    for (PetscInt i = 0; i < kM; ++i) n.push_back("L_" + std::to_string(i));
    return n;
  }
  PetscInt numGuards() const override { return kM; }
  GuardInfo guardInfo(PetscInt j) const override { return {"wall_" + std::to_string(j), Direction::Falling}; }
  bool guardActive(PetscInt, const DiscreteState &) const override { return true; }
  PetscErrorCode transition(const EventId &id, PetscReal, Vec, DiscreteState &d) const override {
    ++d[id.index];  // counts pendulum i's impacts
    return 0;
  }
  bool hasReset(const EventId &id) const override { return id.kind == EventId::Guard; }
};

struct Energy {  // reads (y, vx, vy), params (s)
  static constexpr int numReads = 3, numParams = 1;
  template <class S> S terminal(S, const S *u, const S *p, const DiscreteState &) const {
    return 0.5 * (u[1] * u[1] + u[2] * u[2]) + kGravity * p[0] * u[0];
  }
};
struct MeanSquare {  // reads (x, λ)
  static constexpr int numReads = 2;
  template <class S> S integrand(S, const S *u, const S *, const DiscreteState &) const { return u[0] * u[0] + 0.01 * u[1]; }
};

class EnergyCost : public LocalKernelCost {
public:
  explicit EnergyCost(const PendulumBank &m) : LocalKernelCost(m) {
    for (PetscInt i = 0; i < kM; ++i) add(Energy{}, {{at(i, Y), at(i, VX), at(i, VY)}, {}, {GRAVITY_SCALE}, {}});
    PetscCallAbort(m.comm(), setUp());
  }
  std::string name() const override { return "energy"; }
};
class MeanSquareCost : public LocalKernelCost {
public:
  explicit MeanSquareCost(const PendulumBank &m) : LocalKernelCost(m) {
    for (PetscInt i = 0; i < kM; ++i) add(MeanSquare{}, {{at(i, X), at(i, LAMBDA)}, {}, {}, {}});
    PetscCallAbort(m.comm(), setUp());
  }
  std::string name() const override { return "mean_square"; }
};

struct Impact {
  PetscReal time;
  PetscInt pendulum;
  std::vector<PetscScalar> uplus;  // gathered, global ordering
};

struct BankRun {
  std::vector<PetscScalar> objective;
  std::vector<std::vector<PetscScalar>> forward, adjoint;  // [cost][parameter]
  std::vector<Impact> impacts;
  std::vector<PetscInt> ownedImpacts;  // per pendulum whose x this rank owns: its impacts
  std::string solverType;              // the step's factorization package
};

// "pc/package" of a direct solve, "redundant:" and the inner one's for PCREDUNDANT.
PetscErrorCode describeSolver(KSP ksp, std::string &out) {
  PC pc;
  PCType type;
  PetscBool redundant, lu;
  PetscFunctionBeginUser;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCREDUNDANT, &redundant));
  if (redundant) {
    KSP inner;
    PetscCall(PCRedundantGetKSP(pc, &inner));
    PetscCall(describeSolver(inner, out));
    out = "redundant:" + out;
    PetscFunctionReturn(0);
  }
  PetscCall(PCGetType(pc, &type));
  out = type ? type : "";
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCLU, &lu));
  if (lu) {
    MatSolverType package = nullptr;
    PetscCall(PCFactorGetMatSolverType(pc, &package));
    out += std::string("/") + (package ? package : "");
  }
  PetscFunctionReturn(0);
}

// Backward Euler with fixed steps, Newton to 1e-12 with full steps (docs/index2-daes.md §3).
PetscErrorCode solveBank(const PendulumBank &model, const std::vector<PetscReal> &p, bool forward, bool adjoint, const std::string &extra,
                         BankRun &out) {
  PetscFunctionBeginUser;
  Solver solver(model);
  EnergyCost energy(model);
  MeanSquareCost meanSquare(model);
  solver.addCost(energy);
  solver.addCost(meanSquare);
  solver.setForwardSensitivities(forward);
  solver.setAdjoint(adjoint);
  PetscCall(hstest::configureFixedStep(solver, TSBEULER, kStep, kHorizon,
                                       "-snes_atol 1e-12 -snes_rtol 1e-12 -snes_stol 1e-14 -snes_max_it 50 -snes_linesearch_type basic " + extra));
  PetscCall(solver.setParameters(p));
  PetscCall(solver.solve());
  const SolveResult &r = solver.result();
  out = BankRun{};
  out.objective = r.objective;
  if (forward) out.forward = r.gradientTable(&CostGradient::forwardP);
  if (adjoint) out.adjoint = r.gradientTable(&CostGradient::adjointP);
  for (const auto &e : r.events().records()) {
    PetscCheck(e.id.kind == EventId::Guard, model.comm(), PETSC_ERR_PLIB, "unexpected event kind");
    Impact imp{e.time, e.id.index, {}};
    PetscCall(gatherToAll(e.uplus, imp.uplus));
    out.impacts.push_back(std::move(imp));
  }
  {
    SNES snes;
    KSP ksp;
    PetscCall(TSGetSNES(solver.ts(), &snes));
    PetscCall(SNESGetKSP(snes, &ksp));
    PetscCall(describeSolver(ksp, out.solverType));
  }
  PetscFunctionReturn(0);
}

PetscReal maxAbs(const std::vector<PetscScalar> &v) {
  PetscReal m = 0;
  for (PetscScalar x : v) m = std::max(m, std::abs(x));
  return m;
}

// The serial reference is solved once per process and kept: every test compares with it. It
// factors with SuperLU where the runs under test use MUMPS (one rank) or PCREDUNDANT (several),
// so that at one rank too the comparison is between two different computations.
const BankRun &serialReference() {
  static BankRun ref;
  static bool done = false;
  if (!done) {
    PendulumBank serial(PETSC_COMM_SELF, false);
    EXPECT_EQ(solveBank(serial, serial.defaultParameters(), true, true,
                        "-pc_factor_mat_solver_type superlu -hs_consistency_pc_factor_mat_solver_type superlu "
                        "-hs_tangent_pc_factor_mat_solver_type superlu",
                        ref),
              0);
    EXPECT_EQ(ref.solverType, "lu/superlu");
    done = true;
  }
  return ref;
}

class Index2Distributed : public ::testing::Test {
protected:
  void SetUp() override {
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank_);
    MPI_Comm_size(PETSC_COMM_WORLD, &size_);
  }
  PetscMPIInt rank_ = 0, size_ = 1;
};

// (1) forward = adjoint, (2) = the serial gradient, (4) constraints and multipliers after every
// impact, and the scenario is what it claims (several impacts per pendulum, on every rank).
TEST_F(Index2Distributed, GradientsMatchSerialAndConstraintsHoldAfterEveryImpact) {
  const BankRun &ref = serialReference();
  ASSERT_EQ(ref.objective.size(), 2u);
  PendulumBank model(PETSC_COMM_WORLD, false);
  const std::vector<PetscReal> p = model.defaultParameters();
  BankRun run;
  HS_OK(solveBank(model, p, true, true, "", run));
  // Index 2 needs a pivoting LU: MUMPS on one rank; on several, a copy per rank (MUMPS across
  // the ranks synchronizes them at every solve: minutes instead of seconds here).
#if defined(PETSC_HAVE_SUPERLU)
  const std::string redundant = "redundant:lu/superlu";
#else
  const std::string redundant = "redundant:lu/mumps";
#endif
  EXPECT_EQ(run.solverType, size_ == 1 ? "lu/mumps" : redundant);

  // (1) and (2), relative to each cost's largest entry.
  PetscReal worstFA = 0, worstSerial = 0;
  for (size_t k = 0; k < 2; ++k) {
    SCOPED_TRACE("cost " + std::to_string(k));
    const PetscReal scale = maxAbs(ref.adjoint[k]);
    ASSERT_GT(scale, 0);
    ASSERT_EQ(run.adjoint[k].size(), p.size());
    for (size_t j = 0; j < p.size(); ++j) {
      const PetscReal fa = std::abs(run.adjoint[k][j] - run.forward[k][j]) / maxAbs(run.adjoint[k]);
      const PetscReal ser = std::abs(run.adjoint[k][j] - ref.adjoint[k][j]) / scale;
      const PetscReal serF = std::abs(run.forward[k][j] - ref.forward[k][j]) / scale;
      worstFA = std::max(worstFA, fa);
      worstSerial = std::max({worstSerial, ser, serF});
      EXPECT_LE(fa, 1e-12) << "forward vs adjoint, parameter " << j;
      EXPECT_LE(ser, 1e-12) << "adjoint vs serial, parameter " << j;
      EXPECT_LE(serF, 1e-12) << "forward vs serial, parameter " << j;
    }
    EXPECT_LE(hstest::relDiff(run.objective[k], ref.objective[k]), 1e-12);
  }

  // The same impacts (pendulum, time) and the same states after them.
  ASSERT_EQ(run.impacts.size(), ref.impacts.size());
  PetscReal worstTime = 0, worstState = 0, worstConstraint = 0, worstMultiplier = 0;
  std::vector<PetscInt> perPendulum(kM, 0);
  std::set<PetscInt> ownedHere;
  for (size_t e = 0; e < run.impacts.size(); ++e) {
    const Impact &a = run.impacts[e], &b = ref.impacts[e];
    SCOPED_TRACE("impact " + std::to_string(e) + " of pendulum " + std::to_string(a.pendulum) + " at t = " + std::to_string(a.time));
    ASSERT_EQ(a.pendulum, b.pendulum);
    worstTime = std::max(worstTime, std::abs(a.time - b.time));
    EXPECT_LE(std::abs(a.time - b.time), 1e-12);
    ASSERT_EQ(a.uplus.size(), (size_t)(6 * kM));
    for (size_t i = 0; i < a.uplus.size(); ++i) {
      worstState = std::max(worstState, std::abs(a.uplus[i] - b.uplus[i]) / (1.0 + std::abs(b.uplus[i])));
      EXPECT_LE(std::abs(a.uplus[i] - b.uplus[i]), 1e-10 * (1.0 + std::abs(b.uplus[i]))) << "u+[" << i << "]";
    }
    ++perPendulum[a.pendulum];
    if (model.owns(at(a.pendulum, X))) ownedHere.insert(a.pendulum);
    // (4) every pendulum's constraints, and the multipliers the library recomputed from the
    // hidden constraint: μ⁺ = 0, λ⁺ = (|v|² − g s y + x F_x + y F_y) / L² (d/dt of x vx + y vy).
    for (PetscInt i = 0; i < kM; ++i) {
      const PetscScalar *u = &a.uplus[at(i, 0)];
      const PetscReal L = p[LENGTH0 + i];
      const PetscReal position = std::abs(0.5 * (u[X] * u[X] + u[Y] * u[Y] - L * L));
      const PetscReal velocity = std::abs(u[X] * u[VX] + u[Y] * u[VY]);
      worstConstraint = std::max({worstConstraint, position, velocity});
      EXPECT_LE(position, 1e-10) << "position constraint of pendulum " << i;
      EXPECT_LE(velocity, 1e-10) << "velocity constraint of pendulum " << i;
      PetscReal Fx = 0, Fy = 0;
      for (PetscInt j : {i - 1, i + 1}) {
        if (j < 0 || j >= kM) continue;
        Fx += kSpring * (a.uplus[at(j, X)] - u[X]);
        Fy += kSpring * (a.uplus[at(j, Y)] - u[Y]);
      }
      const PetscReal lambda = (u[VX] * u[VX] + u[VY] * u[VY] - kGravity * p[GRAVITY_SCALE] * u[Y] + u[X] * Fx + u[Y] * Fy) / (L * L);
      const PetscReal lambdaError = std::abs(u[LAMBDA] - lambda) / (1.0 + std::abs(lambda));
      worstMultiplier = std::max({worstMultiplier, lambdaError, std::abs(u[MU])});
      EXPECT_LE(lambdaError, 1e-10) << "lambda+ of pendulum " << i;
      EXPECT_LE(std::abs(u[MU]), 1e-10) << "mu+ of pendulum " << i;
    }
  }
  for (PetscInt i = 0; i < kM; ++i) EXPECT_GE(perPendulum[i], 2) << "pendulum " << i << " should hit its wall several times";
  EXPECT_FALSE(ownedHere.empty()) << "rank " << rank_ << " owns no pendulum that hit its wall";
  PetscReal worstAll[6] = {worstFA, worstSerial, worstTime, worstState, worstConstraint, worstMultiplier}, worstMax[6];
  MPI_Allreduce(worstAll, worstMax, 6, MPIU_REAL, MPI_MAX, PETSC_COMM_WORLD);
  PetscPrintf(PETSC_COMM_WORLD,
              "[index-2 bank, %d ranks] %zu impacts (per pendulum %d..%d); max: |adjoint - forward| %.2e, vs serial %.2e (gradients), "
              "%.2e (impact times), %.2e (u+); constraints after impacts %.2e, multipliers %.2e\n",
              size_, run.impacts.size(), (int)*std::min_element(perPendulum.begin(), perPendulum.end()),
              (int)*std::max_element(perPendulum.begin(), perPendulum.end()), (double)worstMax[0], (double)worstMax[1], (double)worstMax[2],
              (double)worstMax[3], (double)worstMax[4], (double)worstMax[5]);
}

// (3) central finite differences of both costs, objectives of the distributed model, against the
// gradient (the serial one: the test above shows the distributed one equal to it), for a shared
// parameter (e), the gravity scale and the length of a pendulum cut by the rank boundaries at 2
// ranks (L_3; at 3 ranks the cuts run through pendulums 2 and 4).
TEST_F(Index2Distributed, GradientMatchesCentralDifferences) {
  const BankRun &base = serialReference();
  PendulumBank model(PETSC_COMM_WORLD, false);
  const std::vector<PetscReal> p = model.defaultParameters();
  PetscReal worst = 0;
  for (PetscInt j : {(PetscInt)RESTITUTION, (PetscInt)GRAVITY_SCALE, (PetscInt)LENGTH0 + 3}) {
    const PetscReal h = 1e-6 * std::max(1.0, std::abs(p[j]));
    std::vector<PetscReal> plus = p, minus = p;
    plus[j] += h;
    minus[j] -= h;
    BankRun rp, rm;
    HS_OK(solveBank(model, plus, false, false, "", rp));
    HS_OK(solveBank(model, minus, false, false, "", rm));
    ASSERT_EQ(rp.impacts.size(), base.impacts.size());
    ASSERT_EQ(rm.impacts.size(), base.impacts.size());
    for (size_t k = 0; k < 2; ++k) {
      const PetscReal fd = (rp.objective[k] - rm.objective[k]) / (2 * h);
      const PetscReal err = std::abs(fd - base.adjoint[k][j]) / maxAbs(base.adjoint[k]);
      worst = std::max(worst, err);
      EXPECT_LE(err, 1e-6) << "cost " << k << ", parameter " << j << ": FD " << fd << ", adjoint " << base.adjoint[k][j];
    }
  }
  PetscPrintf(PETSC_COMM_WORLD, "[index-2 bank, %d ranks] central differences vs adjoint: max %.2e\n", size_, (double)worst);
}

// (5a) A reset that leaves v⁺ off the velocity constraint is refused, whichever rank owns it.
TEST_F(Index2Distributed, ResetOffTheVelocityConstraintIsRefused) {
  PendulumBank model(PETSC_COMM_WORLD, true);
  BankRun run;
  hstest::ErrorCapture capture;
  const PetscErrorCode ierr = solveBank(model, model.defaultParameters(), false, false, "", run);
  EXPECT_NE(ierr, 0);
  EXPECT_NE(capture.message().find("off the constraint"), std::string::npos) << capture.message();
  EXPECT_NE(capture.message().find("wall_"), std::string::npos) << capture.message();
}

// (5b) The must-fail switch -hs_test_drop_event_time_term changes the gradient visibly.
TEST_F(Index2Distributed, DroppingTheEventTimeTermChangesTheGradient) {
  const BankRun &ref = serialReference();
  PendulumBank model(PETSC_COMM_WORLD, false);
  BankRun run;
  HS_OK(solveBank(model, model.defaultParameters(), false, true, "-hs_test_drop_event_time_term", run));
  PetscReal change = 0;
  for (size_t k = 0; k < 2; ++k)
    for (size_t j = 0; j < ref.adjoint[k].size(); ++j)
      change = std::max(change, std::abs(run.adjoint[k][j] - ref.adjoint[k][j]) / maxAbs(ref.adjoint[k]));
  EXPECT_GT(change, 1e-3);
  PetscPrintf(PETSC_COMM_WORLD, "[index-2 bank, %d ranks] -hs_test_drop_event_time_term changes the gradient by %.2e\n", size_,
              (double)change);
}

} // namespace
