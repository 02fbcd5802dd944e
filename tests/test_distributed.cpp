// A DISTRIBUTED hybrid model must give the same answer at every rank count (docs/theory.md §12).
//
// Model: a bank of N = 13 weakly coupled thermostats (first-order decays),
//   x_i' = -k_i x_i + k_i d_i + κ (x_{i-1} - 2 x_i + x_{i+1})   (chain; missing neighbours dropped)
// with one discrete flag per component, d_i ∈ {0 = off, 1 = on}, k_i = 1 + 0.17 i, κ = 0.05.
//   guard 2i   "high_i" = x_i - 0.6, rising,  active while d_i = 1 → d_i = 0, reset x_i -= 0.05
//   guard 2i+1 "low_i"  = x_i - 0.4, falling, active while d_i = 0 → d_i = 1 (identity reset)
//   time event at t = 1 "toggle_all": d_i = 1 - d_i for all i, reset x_i += 0.02 for all i
// x_i(0) = 0.42 + 0.013 i, d_i(0) = i mod 2. Within a mode every x_i is monotone (|κ Δx| ≤ 0.02
// is smaller than the drive), so no guard grazes.
//
// The rows are split over the ranks in blocks (13 does not divide evenly by 2 or 3); each guard
// is written only by the rank owning x_i; the coupling makes the Jacobian (created by
// createJacobian(), MatCreateAIJ with the local sizes) and the residual need off-rank values.
// Reference: the same model with comm() = PETSC_COMM_SELF and all 13 rows local, solved
// redundantly on every rank (serial LU). The distributed run (PETSC_COMM_WORLD; MUMPS for the
// implicit method in parallel) must reproduce the reference's event list (times ≤ 1e-12
// relative, ids, discrete states, step indices) and its gathered u⁺ at every event and final
// state (≤ 1e-12 relative). Registered at 1, 2 and 3 ranks, for CN and RK4.
#include "test_support.hpp"
#include "util/krylov_with_fallback.hpp"
#include "util/linear_solve_defaults.hpp"
#include "util/gather.hpp"

#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

#include <cmath>
#include <set>

using namespace hybridsens;

#define HS_OK(expr) ASSERT_EQ((PetscErrorCode)(expr), 0)

namespace {

constexpr PetscInt kN = 13;
constexpr PetscReal kCoupling = 0.05, kHigh = 0.6, kLow = 0.4, kDrop = 0.05, kKick = 0.02, kToggleTime = 1.0;

class ThermostatBank : public HybridModel {
public:
  explicit ThermostatBank(bool distributed) : distributed_(distributed) {
    PetscMPIInt rank = 0, size = 1;
    if (distributed_) {
      MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
      MPI_Comm_size(PETSC_COMM_WORLD, &size);
    }
    // Block rows, the first N mod size ranks one larger.
    lo_ = 0;
    for (PetscMPIInt r = 0; r < rank; ++r) lo_ += kN / size + (r < kN % size ? 1 : 0);
    hi_ = lo_ + kN / size + (rank < kN % size ? 1 : 0);
  }
  ~ThermostatBank() override {
    VecScatterDestroy(&ghostScatter_);
    VecDestroy(&ghost_);
  }

  MPI_Comm comm() const override { return distributed_ ? PETSC_COMM_WORLD : PETSC_COMM_SELF; }
  PetscInt localSize() const override { return hi_ - lo_; }
  bool owns(PetscInt i) const { return i >= lo_ && i < hi_; }
  PetscInt lo() const { return lo_; }
  PetscInt hi() const { return hi_; }
  static PetscReal k(PetscInt i) { return 1.0 + 0.17 * i; }

  DiscreteState initialDiscreteState() const override {
    DiscreteState d(kN);
    for (PetscInt i = 0; i < kN; ++i) d[i] = i % 2;
    return d;
  }

  PetscErrorCode initialState(const ModeContext &, Vec u0) const override {
    PetscScalar *a;
    PetscFunctionBeginUser;
    PetscCall(VecGetArray(u0, &a));
    for (PetscInt i = lo_; i < hi_; ++i) a[i - lo_] = 0.42 + 0.013 * i;
    PetscCall(VecRestoreArray(u0, &a));
    PetscFunctionReturn(0);
  }

  PetscErrorCode createJacobian(Mat *J) const override {
    PetscFunctionBeginUser;
    PetscCall(MatCreateAIJ(comm(), localSize(), localSize(), kN, kN, 3, nullptr, 2, nullptr, J));
    PetscCall(MatSetOption(*J, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));  // the pattern is exact
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &c, Vec f) const override {
    const PetscScalar *g;
    PetscScalar *fa;
    PetscFunctionBeginUser;
    PetscCall(updateGhosts(u));
    PetscCall(VecGetArrayRead(ghost_, &g));
    PetscCall(VecGetArray(f, &fa));
    for (PetscInt i = lo_; i < hi_; ++i) {
      const PetscScalar xi = g[i - gLo_];
      PetscScalar lap = 0;
      if (i > 0) lap += g[i - 1 - gLo_] - xi;
      if (i < kN - 1) lap += g[i + 1 - gLo_] - xi;
      fa[i - lo_] = -k(i) * xi + k(i) * c.d[i] + kCoupling * lap;
    }
    PetscCall(VecRestoreArray(f, &fa));
    PetscCall(VecRestoreArrayRead(ghost_, &g));
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhsJacobian(PetscReal, Vec, const ModeContext &, Mat J) const override {
    PetscFunctionBeginUser;
    for (PetscInt i = lo_; i < hi_; ++i) {
      PetscInt cols[3], nc = 0;
      PetscScalar vals[3], diag = -k(i);
      if (i > 0) {
        cols[nc] = i - 1;
        vals[nc++] = kCoupling;
        diag -= kCoupling;
      }
      if (i < kN - 1) {
        cols[nc] = i + 1;
        vals[nc++] = kCoupling;
        diag -= kCoupling;
      }
      cols[nc] = i;
      vals[nc++] = diag;
      PetscCall(MatSetValues(J, 1, &i, nc, cols, vals, INSERT_VALUES));
    }
    PetscFunctionReturn(0);
  }

  PetscInt numGuards() const override { return 2 * kN; }
  static PetscInt component(PetscInt guard) { return guard / 2; }
  static bool isHigh(PetscInt guard) { return guard % 2 == 0; }
  GuardInfo guardInfo(PetscInt j) const override {
    return {(isHigh(j) ? "high_" : "low_") + std::to_string(component(j)), isHigh(j) ? Direction::Rising : Direction::Falling};
  }
  bool guardActive(PetscInt j, const DiscreteState &d) const override { return d[component(j)] == (isHigh(j) ? 1 : 0); }

  PetscErrorCode guards(PetscReal, Vec u, const ModeContext &, PetscScalar *values) const override {
    const PetscScalar *a;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &a));
    for (PetscInt i = lo_; i < hi_; ++i) {  // only the owner of x_i writes guards 2i and 2i+1
      values[2 * i] = a[i - lo_] - kHigh;
      values[2 * i + 1] = a[i - lo_] - kLow;
    }
    PetscCall(VecRestoreArrayRead(u, &a));
    PetscFunctionReturn(0);
  }

  PetscErrorCode guardGradient(PetscInt j, PetscReal, Vec, const ModeContext &, Vec gu, PetscScalar *gt,
                               PetscScalar *) const override {
    PetscFunctionBeginUser;
    const PetscInt i = component(j);
    if (owns(i)) {
      PetscScalar *a;
      PetscCall(VecGetArray(gu, &a));
      a[i - lo_] = 1.0;
      PetscCall(VecRestoreArray(gu, &a));
    }
    *gt = 0;
    PetscFunctionReturn(0);
  }

  PetscInt numTimeEvents() const override { return 1; }
  TimeEventInfo timeEvent(PetscInt, const std::vector<PetscReal> &) const override { return {"toggle_all", kToggleTime, {}}; }

  PetscErrorCode transition(const EventId &id, PetscReal, Vec, DiscreteState &d) const override {
    if (id.kind == EventId::Time) {
      for (auto &di : d) di = 1 - di;
    } else {
      d[component(id.index)] = isHigh(id.index) ? 0 : 1;
    }
    return 0;
  }

  bool hasReset(const EventId &id) const override { return id.kind == EventId::Time || isHigh(id.index); }

  PetscErrorCode reset(const EventId &id, PetscReal, Vec uminus, const ModeContext &, Vec uplus) const override {
    PetscScalar *a;
    PetscFunctionBeginUser;
    PetscCall(VecCopy(uminus, uplus));
    PetscCall(VecGetArray(uplus, &a));
    if (id.kind == EventId::Time) {
      for (PetscInt i = lo_; i < hi_; ++i) a[i - lo_] += kKick;
    } else if (owns(component(id.index))) {
      a[component(id.index) - lo_] -= kDrop;
    }
    PetscCall(VecRestoreArray(uplus, &a));
    PetscFunctionReturn(0);
  }

private:
  // Owned entries plus one neighbour on each side, in a sequential Vec starting at gLo_.
  PetscErrorCode updateGhosts(Vec u) const {
    PetscFunctionBeginUser;
    if (!ghostScatter_) {
      IS from;
      gLo_ = std::max<PetscInt>(lo_ - 1, 0);
      const PetscInt gHi = std::min<PetscInt>(hi_ + 1, kN);
      const PetscInt n = hi_ > lo_ ? gHi - gLo_ : 0;
      PetscCall(ISCreateStride(PETSC_COMM_SELF, n, gLo_, 1, &from));
      PetscCall(VecCreateSeq(PETSC_COMM_SELF, n, &ghost_));
      PetscCall(VecScatterCreate(u, from, ghost_, nullptr, &ghostScatter_));
      PetscCall(ISDestroy(&from));
    }
    PetscCall(VecScatterBegin(ghostScatter_, u, ghost_, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(ghostScatter_, u, ghost_, INSERT_VALUES, SCATTER_FORWARD));
    PetscFunctionReturn(0);
  }

  bool distributed_;
  PetscInt lo_ = 0, hi_ = kN;
  mutable PetscInt gLo_ = 0;
  mutable VecScatter ghostScatter_ = nullptr;
  mutable Vec ghost_ = nullptr;
};

struct EventSummary {
  PetscReal time;
  EventId id;
  DiscreteState before, after;
  PetscInt step, order;
  std::vector<PetscScalar> uplus;  // gathered, global ordering
};

struct RunResult {
  std::vector<EventSummary> events;
  std::vector<PetscScalar> finalState;
  PetscReal finalTime = 0;
  DiscreteState finalMode;
  SolveStats stats;
};

enum class Method { CN, RK4 };

PetscErrorCode runBank(const ThermostatBank &model, Method method, PetscReal dt, PetscReal tf, RunResult &out) {
  PetscMPIInt size;
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(model.comm(), &size));
  // Options are read by setFromOptions: keep them scoped to this solver. Direct solvers only:
  // serial LU for the reference, MUMPS when the run is distributed over several ranks.
  std::string opts = "-ts_adapt_type none";
  if (method == Method::CN)
    opts += std::string(" -snes_type newtonls -ksp_type preonly -pc_type lu") + (size > 1 ? " -pc_factor_mat_solver_type mumps" : "");
  hstest::ScopedOptions scoped(opts);
  Solver solver(model);
  PetscCall(solver.setFromOptions());
  if (method == Method::CN) PetscCall(TSSetType(solver.ts(), TSCN));
  else {
    PetscCall(TSSetType(solver.ts(), TSRK));
    PetscCall(TSRKSetType(solver.ts(), TSRK4));
  }
  PetscCall(TSSetTimeStep(solver.ts(), dt));
  PetscCall(TSSetMaxTime(solver.ts(), tf));
  PetscCall(solver.setFromOptions());
  PetscCall(solver.solve());
  if (method == Method::CN && size > 1) {  // the parallel run really used MUMPS
    SNES snes;
    KSP ksp;
    PC pc;
    MatSolverType type;
    PetscCall(TSGetSNES(solver.ts(), &snes));
    PetscCall(SNESGetKSP(snes, &ksp));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCFactorGetMatSolverType(pc, &type));
    PetscCheck(type && std::string(type) == MATSOLVERMUMPS, model.comm(), PETSC_ERR_PLIB, "expected MUMPS, got %s", type ? type : "(none)");
  }
  out.events.clear();
  for (const auto &r : solver.result().events().records()) {
    EventSummary e{r.time, r.id, r.before, r.after, r.step, r.orderAtInstant, {}};
    PetscCall(gatherToAll(r.uplus, e.uplus));
    out.events.push_back(std::move(e));
  }
  PetscCall(gatherToAll(solver.result().finalState(), out.finalState));
  out.finalTime = solver.result().finalTime;
  out.finalMode = solver.result().finalDiscreteState;
  out.stats = solver.result().stats;
  PetscFunctionReturn(0);
}

void compareRuns(const RunResult &ref, const RunResult &par, const ThermostatBank &distModel) {
  PetscMPIInt rank, size;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  ASSERT_EQ(par.events.size(), ref.events.size());
  ASSERT_EQ(par.finalState.size(), (size_t)kN);
  ASSERT_EQ(ref.finalState.size(), (size_t)kN);
  PetscReal maxTime = 0, maxState = 0;
  for (size_t e = 0; e < ref.events.size(); ++e) {
    const auto &a = ref.events[e], &b = par.events[e];
    SCOPED_TRACE("event " + std::to_string(e) + " at t = " + std::to_string(a.time));
    EXPECT_TRUE(a.id == b.id);
    EXPECT_EQ(a.before, b.before);
    EXPECT_EQ(a.after, b.after);
    EXPECT_EQ(a.step, b.step);
    EXPECT_EQ(a.order, b.order);
    maxTime = std::max(maxTime, hstest::relDiff(a.time, b.time));
    EXPECT_LE(hstest::relDiff(a.time, b.time), 1e-12);
    ASSERT_EQ(b.uplus.size(), (size_t)kN);
    for (PetscInt i = 0; i < kN; ++i) {
      maxState = std::max(maxState, hstest::relDiff(a.uplus[i], b.uplus[i]));
      EXPECT_LE(hstest::relDiff(a.uplus[i], b.uplus[i]), 1e-12) << "u+[" << i << "]";
    }
  }
  PetscReal maxFinal = 0;
  for (PetscInt i = 0; i < kN; ++i) {
    maxFinal = std::max(maxFinal, hstest::relDiff(ref.finalState[i], par.finalState[i]));
    EXPECT_LE(hstest::relDiff(ref.finalState[i], par.finalState[i]), 1e-12) << "x_" << i << "(tf)";
  }
  EXPECT_EQ(ref.finalTime, par.finalTime);
  EXPECT_EQ(ref.finalMode, par.finalMode);
  EXPECT_EQ(ref.stats.steps, par.stats.steps);
  EXPECT_EQ(ref.stats.locationSteps, par.stats.locationSteps);
  EXPECT_EQ(ref.stats.events, par.stats.events);

  // The scenario is what it claims: guard events owned by every rank, both guard kinds, the
  // time event, and resets visibly applied (x_i⁺ = 0.6 - 0.05 after high_i).
  std::set<PetscInt> components;
  PetscInt nHigh = 0, nLow = 0, nTime = 0, ownedHere = 0;
  for (const auto &e : par.events) {
    if (e.id.kind == EventId::Time) {
      ++nTime;
      EXPECT_EQ(e.time, kToggleTime);
      continue;
    }
    const PetscInt i = ThermostatBank::component(e.id.index);
    components.insert(i);
    if (distModel.owns(i)) ++ownedHere;
    if (ThermostatBank::isHigh(e.id.index)) {
      ++nHigh;
      EXPECT_NEAR(e.uplus[i], kHigh - kDrop, 1e-10) << "reset of high_" << i;
      EXPECT_EQ(e.after[i], 0);
    } else {
      ++nLow;
      EXPECT_NEAR(e.uplus[i], kLow, 1e-10);
      EXPECT_EQ(e.after[i], 1);
    }
  }
  EXPECT_EQ(nTime, 1);
  EXPECT_GT(nHigh, 0);
  EXPECT_GT(nLow, 0);
  EXPECT_EQ((PetscInt)components.size(), kN) << "every component should switch at least once";
  EXPECT_GT(ownedHere, 0) << "rank " << rank << " owns no component that fired";
  PetscPrintf(PETSC_COMM_WORLD,
              "[distributed, %d ranks] %zu events (%d high, %d low, %d time), %d steps, %d location steps; "
              "max rel diff vs serial: event times %.2e, u+ %.2e, final state %.2e\n",
              size, par.events.size(), (int)nHigh, (int)nLow, (int)nTime, (int)par.stats.steps, (int)par.stats.locationSteps,
              (double)maxTime, (double)maxState, (double)maxFinal);
}

void checkMethod(Method method, PetscReal dt) {
  const PetscReal tf = 2.0;
  ThermostatBank serial(false), distributed(true);
  RunResult ref, par;
  HS_OK(runBank(serial, method, dt, tf, ref));
  HS_OK(runBank(distributed, method, dt, tf, par));
  // Every rank computed the same reference redundantly; make sure they agree bit-for-bit too.
  PetscReal t0 = ref.events.empty() ? -1 : ref.events.front().time, tmax;
  MPI_Allreduce(&t0, &tmax, 1, MPIU_REAL, MPI_MAX, PETSC_COMM_WORLD);
  EXPECT_EQ(t0, tmax);
  compareRuns(ref, par, distributed);
}

} // namespace

TEST(Distributed, CrankNicolsonMatchesSerial) { checkMethod(Method::CN, 2e-3); }

TEST(Distributed, RK4MatchesSerial) { checkMethod(Method::RK4, 2e-3); }

// The library picks the integrator's linear solver by the system's size and the rank count: a
// small distributed system is factored redundantly (every rank a copy, PETSc's LU) instead of by
// MUMPS, whose per-solve synchronization made a 2-state DAE at 2 ranks take minutes. A user's
// -ksp_type/-pc_type/-pc_factor_mat_solver_type under the TS's prefix, and a configuration the
// program set through the API, win.
TEST(Distributed, LinearSolverDefaultBySizeRespectsTheUsersChoice) {
  ThermostatBank model(true);
  PetscMPIInt size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  // The PC type (and, for LU, the factorization package) after setFromOptions.
  auto solverAfter = [&](const char *prefix, const std::string &opts, bool programSetsJacobi = false) {
    hstest::ScopedOptions scoped(opts);
    Solver solver(model);
    SNES snes;
    KSP ksp;
    PC pc;
    PCType t;
    EXPECT_EQ(TSGetSNES(solver.ts(), &snes), 0);
    EXPECT_EQ(SNESGetKSP(snes, &ksp), 0);
    EXPECT_EQ(KSPGetPC(ksp, &pc), 0);
    EXPECT_EQ(solver.setFromOptions(), 0);
    if (prefix) EXPECT_EQ(TSSetOptionsPrefix(solver.ts(), prefix), 0);
    if (programSetsJacobi) EXPECT_EQ(PCSetType(pc, PCJACOBI), 0);
    EXPECT_EQ(TSSetType(solver.ts(), TSCN), 0);
    EXPECT_EQ(solver.setFromOptions(), 0);
    EXPECT_EQ(PCGetType(pc, &t), 0);
    std::string out(t);
    PetscBool isLU;
    EXPECT_EQ(PetscObjectTypeCompare((PetscObject)pc, PCLU, &isLU), 0);
    if (isLU) {
      MatSolverType st = nullptr;
      EXPECT_EQ(PCFactorGetMatSolverType(pc, &st), 0);
      if (st) out += std::string("/") + st;
    }
    return out;
  };
  const std::string small = size > 1 ? PCREDUNDANT : PCLU;  // one rank: PETSc's LU
  EXPECT_EQ(solverAfter(nullptr, ""), small);
  EXPECT_EQ(solverAfter(nullptr, "-pc_type lu"), size > 1 ? "lu/mumps" : "lu");
  EXPECT_EQ(solverAfter("grid_", ""), small);
  EXPECT_EQ(solverAfter("grid_", "-grid_pc_factor_mat_solver_type superlu_dist"), "lu/superlu_dist");
  EXPECT_EQ(solverAfter("grid_", "-pc_type lu"), small) << "an option without the TS's prefix is not the TS's";
  EXPECT_EQ(solverAfter(nullptr, "", true), PCJACOBI) << "the program's choice through the API stays";
}

// The Krylov default's stall test: a residual stuck at round-off counts as converged only below
// the tolerance sensitivities accept, and only after a whole window without halving.
TEST(Distributed, KrylovStallCountsAsConvergedOnlyAtRoundOff) {
  const std::vector<PetscReal> fast = {1, 1e-3, 1e-7, 1e-11, 1e-13};
  EXPECT_FALSE(stalledAtRoundOff(fast, 1e-10)) << "too few iterations to judge";
  std::vector<PetscReal> floorAt = {1, 1e-3, 1e-8, 1.6e-12, 1.6e-12, 1.6e-12, 1.5e-12, 1.5e-12, 1.5e-12};
  EXPECT_TRUE(stalledAtRoundOff(floorAt, 1e-10)) << "5 iterations at 1.5e-12 of the start";
  std::vector<PetscReal> stuckHigh = {1, 1e-2, 5e-5, 5e-5, 5e-5, 5e-5, 5e-5, 5e-5};
  EXPECT_FALSE(stalledAtRoundOff(stuckHigh, 1e-10)) << "a meshed grid's stall at 5e-5 must fall back, not pass";
  std::vector<PetscReal> stillFalling = {1, 2e-12, 1.9e-12, 1.8e-12, 1.7e-12, 1.6e-12, 4e-13};
  EXPECT_FALSE(stalledAtRoundOff(stillFalling, 1e-10)) << "halved over the window: still converging";
  stillFalling.back() = 1.5e-12;
  EXPECT_TRUE(stalledAtRoundOff(stillFalling, 1e-10));
  EXPECT_FALSE(stalledAtRoundOff(stillFalling, 1e-12)) << "not below the given bound";
}

// The choice by size and rank count itself.
TEST(Distributed, DefaultLinearSolveBySizeAndRanks) {
  EXPECT_EQ(defaultLinearSolve(2, 1), LinearSolveKind::SerialLU);
  EXPECT_EQ(defaultLinearSolve(10000000, 1), LinearSolveKind::SerialLU);
  EXPECT_EQ(defaultLinearSolve(2, 2), LinearSolveKind::RedundantLU);
  EXPECT_EQ(defaultLinearSolve(kKrylovFrom - 1, 2), LinearSolveKind::RedundantLU);
  EXPECT_EQ(defaultLinearSolve(kKrylovFrom, 2), LinearSolveKind::BlockJacobiKrylov);
  EXPECT_EQ(defaultLinearSolve(10000000, 3), LinearSolveKind::BlockJacobiKrylov);
  // Zeros on the diagonal (index 2): a pivoting LU — MUMPS alone, or inside PCREDUNDANT.
  EXPECT_EQ(defaultLinearSolve(2, 1, true), LinearSolveKind::ParallelDirect);
  EXPECT_EQ(defaultLinearSolve(2, 2, true), LinearSolveKind::RedundantPivotingLU);
  EXPECT_EQ(defaultLinearSolve(kKrylovFrom, 2, true), LinearSolveKind::RedundantPivotingLU);
  EXPECT_EQ(defaultLinearSolve(kRedundantLUBelow - 1, 2, true), LinearSolveKind::RedundantPivotingLU);
  EXPECT_EQ(defaultLinearSolve(kRedundantLUBelow, 3, true), LinearSolveKind::ParallelDirect);
}
