// MemoryModel (hybridsens/memory.hpp) on a distributed model whose memory slots capture values
// owned by other ranks: the reset family against finite differences and its own transpose,
// full solves (forward = adjoint, central FD, must-fail with the partial derivative of [SerbanRecuero2019]),
// the ṁ = 0 and layout checks, and the adjoint monitor (Solver::setAdjointMonitor).
#include "test_support.hpp"

#include <hybridsens/hybridsens.hpp>

#include <cmath>

using namespace hybridsens;
using hstest::ErrorCapture;
using hstest::ScopedOptions;

namespace {

// Rank r owns x_r (global 2r) and the memory slot m_r (global 2r + 1); s ranks.
//   ẋ_r = −a x_r + b m_r + 1,   ṁ_r = 0,   x_r(0) = 0.1 (r + 1),  m_r(0) = 0.
// Time event at T₁ = p₂ captures every slot: m_r⁺ = x_{r+1 mod s}⁻ + a m_r⁻ (another rank's state,
// a parameter and the slot itself). Guard "level" x₀ − 1.5 (rising, owned by rank 0) captures
// the even slots only: m_k⁺ = (x_k⁻)². p = (a, b, T₁) = (0.5, 0.3, 0.6).
class MemoryRing : public MemoryModel {
public:
  MemoryRing() {
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank_);
    MPI_Comm_size(PETSC_COMM_WORLD, &size_);
  }
  PetscInt localSize() const override { return 2; }
  DiscreteState initialDiscreteState() const override { return {0}; }
  std::vector<PetscReal> defaultParameters() const override { return {0.5, 0.3, 0.6}; }
  bool nonzeroMemoryDynamics = false;  // for the ṁ = 0 check
  std::vector<PetscInt> indicesOverride;

  PetscErrorCode initialState(const ModeContext &, Vec u0) const override {
    PetscFunctionBeginUser;
    PetscCall(VecSetValue(u0, 2 * rank_, 0.1 * (rank_ + 1), INSERT_VALUES));
    PetscCall(VecAssemblyBegin(u0));
    PetscCall(VecAssemblyEnd(u0));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &c, Vec f) const override {
    const PetscScalar *x;
    PetscScalar *y;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(VecGetArray(f, &y));
    y[0] = -c.p[0] * x[0] + c.p[1] * x[1] + 1;
    y[1] = nonzeroMemoryDynamics ? 1e-3 : 0.0;
    PetscCall(VecRestoreArray(f, &y));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobian(PetscReal, Vec, const ModeContext &c, Mat J) const override {
    PetscFunctionBeginUser;
    PetscCall(MatSetValue(J, 2 * rank_, 2 * rank_, -c.p[0], INSERT_VALUES));
    PetscCall(MatSetValue(J, 2 * rank_, 2 * rank_ + 1, c.p[1], INSERT_VALUES));
    PetscFunctionReturn(0);
  }
  PetscErrorCode rhsJacobianP(PetscReal, Vec u, const ModeContext &, Mat Jp) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(MatSetValue(Jp, 2 * rank_, 0, -x[0], INSERT_VALUES));
    PetscCall(MatSetValue(Jp, 2 * rank_, 1, x[1], INSERT_VALUES));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }

  PetscInt numTimeEvents() const override { return 1; }
  TimeEventInfo timeEvent(PetscInt, const std::vector<PetscReal> &p) const override { return {"sample", p[2], {0, 0, 1}}; }
  PetscInt numGuards() const override { return 1; }
  GuardInfo guardInfo(PetscInt) const override { return {"level", Direction::Rising}; }
  PetscErrorCode guards(PetscReal, Vec u, const ModeContext &, PetscScalar *g) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    if (rank_ == 0) g[0] = x[0] - 1.5;
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode guardGradient(PetscInt, PetscReal, Vec, const ModeContext &, Vec gu, PetscScalar *gt, PetscScalar *) const override {
    PetscFunctionBeginUser;
    if (rank_ == 0) PetscCall(VecSetValue(gu, 0, 1.0, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(gu));
    PetscCall(VecAssemblyEnd(gu));
    *gt = 0;
    PetscFunctionReturn(0);
  }
  PetscErrorCode transition(const EventId &, PetscReal, Vec, DiscreteState &d) const override {
    ++d[0];
    return 0;
  }

  std::vector<PetscInt> memoryIndices() const override {
    if (!indicesOverride.empty()) return indicesOverride;
    std::vector<PetscInt> idx;
    for (PetscMPIInt r = 0; r < size_; ++r) idx.push_back(2 * r + 1);
    return idx;
  }
  bool capturesAt(const EventId &id, PetscInt k) const override { return id.kind == EventId::Time || k % 2 == 0; }
  PetscErrorCode capture(const EventId &id, PetscReal, Vec uminus, const ModeContext &c, PetscScalar *values) const override {
    PetscFunctionBeginUser;
    std::vector<PetscScalar> all;
    PetscCall(gather(uminus, all));
    // Slot k lives on rank k: that rank writes it.
    if (id.kind == EventId::Time) values[rank_] = all[2 * ((rank_ + 1) % size_)] + c.p[0] * all[2 * rank_ + 1];
    else if (rank_ % 2 == 0) values[rank_] = all[2 * rank_] * all[2 * rank_];
    PetscFunctionReturn(0);
  }
  PetscErrorCode captureGradient(const EventId &id, PetscInt k, PetscReal, Vec uminus, const ModeContext &c, Vec cu, PetscScalar *ct,
                                 PetscScalar *cp) const override {
    PetscFunctionBeginUser;
    std::vector<PetscScalar> all;
    PetscCall(gather(uminus, all));
    if (rank_ == k) {  // the owner of slot k writes its gradient (any rank may set entries of cu)
      if (id.kind == EventId::Time) {
        PetscCall(VecSetValue(cu, 2 * ((k + 1) % size_), 1.0, ADD_VALUES));
        PetscCall(VecSetValue(cu, 2 * k + 1, c.p[0], ADD_VALUES));
        cp[0] = all[2 * k + 1];
      } else PetscCall(VecSetValue(cu, 2 * k, 2 * all[2 * k], ADD_VALUES));
    }
    PetscCall(VecAssemblyBegin(cu));
    PetscCall(VecAssemblyEnd(cu));
    *ct = 0;
    PetscFunctionReturn(0);
  }

  static PetscErrorCode gather(Vec v, std::vector<PetscScalar> &out) {
    VecScatter sc;
    Vec all;
    const PetscScalar *a;
    PetscInt N;
    PetscFunctionBeginUser;
    PetscCall(VecScatterCreateToAll(v, &sc, &all));
    PetscCall(VecScatterBegin(sc, v, all, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(sc, v, all, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecGetSize(all, &N));
    PetscCall(VecGetArrayRead(all, &a));
    out.assign(a, a + N);
    PetscCall(VecRestoreArrayRead(all, &a));
    PetscCall(VecScatterDestroy(&sc));
    PetscCall(VecDestroy(&all));
    PetscFunctionReturn(0);
  }

  PetscMPIInt rank_ = 0, size_ = 1;
};

// J = Σ_r (x_r(T) + m_r(T)) + ∫ Σ_r x_r² dt.
class RingCost : public CostFunction {
public:
  bool hasTerminal() const override { return true; }
  bool hasIntegrand() const override { return true; }
  PetscErrorCode terminal(PetscReal, Vec u, const ModeContext &, PetscScalar *value) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    *value = x[0] + x[1];
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode terminalGradient(PetscReal, Vec u, const ModeContext &, Vec psi_u, PetscScalar *) const override {
    return VecSet(psi_u, 1.0);
  }
  PetscErrorCode integrand(PetscReal, Vec u, const ModeContext &, PetscScalar *value) const override {
    const PetscScalar *x;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    *value = x[0] * x[0];
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
  PetscErrorCode integrandGradient(PetscReal, Vec u, const ModeContext &, Vec r_u, PetscScalar *) const override {
    const PetscScalar *x;
    PetscScalar *g;
    PetscFunctionBeginUser;
    PetscCall(VecGetArrayRead(u, &x));
    PetscCall(VecGetArray(r_u, &g));
    g[0] = 2 * x[0];
    g[1] = 0;
    PetscCall(VecRestoreArray(r_u, &g));
    PetscCall(VecRestoreArrayRead(u, &x));
    PetscFunctionReturn(0);
  }
};

PetscErrorCode setUpSolver(Solver &solver, const std::vector<PetscReal> &p) {
  PetscFunctionBeginUser;
  PetscCall(solver.setParameters(p));
  PetscCall(solver.setFromOptions());
  PetscCall(TSSetType(solver.ts(), TSRK));
  PetscCall(TSRKSetType(solver.ts(), TSRK4));
  PetscCall(TSSetTimeStep(solver.ts(), 4e-3));
  PetscCall(TSSetMaxTime(solver.ts(), 3.0));
  PetscCall(solver.setFromOptions());
  PetscFunctionReturn(0);
}

PetscReal objectiveAt(const MemoryRing &model, const CostFunction &cost, std::vector<PetscReal> p) {
  Solver solver(model);
  solver.addCost(cost);
  EXPECT_EQ(setUpSolver(solver, p), 0);
  EXPECT_EQ(solver.solve(), 0);
  return solver.result().objective.at(0);
}

PetscErrorCode randomVec(Vec v, PetscInt seed) {
  PetscRandom rnd;
  PetscFunctionBeginUser;
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetSeed(rnd, (unsigned long)seed));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(VecSetRandom(v, rnd));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscFunctionReturn(0);
}

} // namespace

// R_u v against a central difference of the reset (R is at most quadratic here), the transpose
// against ⟨R_u v, w⟩ = ⟨v, R_uᵀ w⟩, R_p against a difference in p, identity on uncaptured rows.
TEST(MemoryModel, ResetFamilyMatchesDifferencesAndTranspose) {
  MemoryRing model;
  const std::vector<PetscReal> p = model.defaultParameters();
  const DiscreteState d = {0};
  const ModeContext c{p, d};
  Vec u, v, w, a, b, out;
  ASSERT_EQ(VecCreateMPI(PETSC_COMM_WORLD, 2, PETSC_DETERMINE, &u), 0);
  for (Vec *x : {&v, &w, &a, &b, &out}) ASSERT_EQ(VecDuplicate(u, x), 0);
  ASSERT_EQ(randomVec(u, 1), 0);
  ASSERT_EQ(randomVec(v, 2), 0);
  ASSERT_EQ(randomVec(w, 3), 0);
  for (EventId id : {EventId{EventId::Time, 0}, EventId{EventId::Guard, 0}}) {
    ASSERT_TRUE(model.hasReset(id));
    // Uncaptured rows (odd slots at the guard, every x) keep their values.
    ASSERT_EQ(model.reset(id, 0.7, u, c, out), 0);
    std::vector<PetscScalar> uu, uo;
    ASSERT_EQ(MemoryRing::gather(u, uu), 0);
    ASSERT_EQ(MemoryRing::gather(out, uo), 0);
    for (size_t i = 0; i < uu.size(); ++i) {
      const PetscInt slot = (PetscInt)i / 2;
      const bool captured = i % 2 == 1 && (id.kind == EventId::Time || slot % 2 == 0);
      if (!captured) EXPECT_EQ(uo[i], uu[i]) << "row " << i;
      else if (id.kind == EventId::Guard) EXPECT_DOUBLE_EQ(uo[i], uu[2 * slot] * uu[2 * slot]);
      else EXPECT_DOUBLE_EQ(uo[i], uu[2 * ((slot + 1) % (uu.size() / 2))] + p[0] * uu[i]);
    }
    // R_u v vs (R(u + εv) − R(u − εv)) / 2ε: exact for a quadratic map up to round-off.
    const PetscReal eps = 1e-3;
    PetscReal nrm, nd;
    ASSERT_EQ(model.resetJacobianAction(id, 0.7, u, c, v, out), 0);
    ASSERT_EQ(VecWAXPY(a, eps, v, u), 0);
    ASSERT_EQ(VecWAXPY(b, -eps, v, u), 0);
    Vec ra, rb;
    ASSERT_EQ(VecDuplicate(u, &ra), 0);
    ASSERT_EQ(VecDuplicate(u, &rb), 0);
    ASSERT_EQ(model.reset(id, 0.7, a, c, ra), 0);
    ASSERT_EQ(model.reset(id, 0.7, b, c, rb), 0);
    ASSERT_EQ(VecAXPY(ra, -1.0, rb), 0);
    ASSERT_EQ(VecScale(ra, 0.5 / eps), 0);
    ASSERT_EQ(VecAXPY(ra, -1.0, out), 0);
    ASSERT_EQ(VecNorm(ra, NORM_INFINITY, &nd), 0);
    ASSERT_EQ(VecNorm(out, NORM_INFINITY, &nrm), 0);
    EXPECT_LE(nd, 1e-12 * nrm) << "R_u v vs central difference, event kind " << id.kind;
    // ⟨R_u v, w⟩ = ⟨v, R_uᵀ w⟩.
    PetscScalar lhs, rhs;
    ASSERT_EQ(VecDot(out, w, &lhs), 0);
    ASSERT_EQ(model.resetJacobianTransposeAction(id, 0.7, u, c, w, out), 0);
    ASSERT_EQ(VecDot(v, out, &rhs), 0);
    EXPECT_LE(std::fabs(lhs - rhs), 1e-14 * std::fabs(lhs)) << "transpose, event kind " << id.kind;
    // R_p column of a vs a central difference in a.
    Mat Rp;
    ASSERT_EQ(MatCreateDense(PETSC_COMM_WORLD, 2, PETSC_DECIDE, PETSC_DETERMINE, 3, nullptr, &Rp), 0);
    ASSERT_EQ(MatZeroEntries(Rp), 0);
    ASSERT_EQ(model.resetJacobianP(id, 0.7, u, c, Rp), 0);
    ASSERT_EQ(MatAssemblyBegin(Rp, MAT_FINAL_ASSEMBLY), 0);
    ASSERT_EQ(MatAssemblyEnd(Rp, MAT_FINAL_ASSEMBLY), 0);
    std::vector<PetscReal> pp = p, pm = p;
    pp[0] += eps, pm[0] -= eps;
    ASSERT_EQ(model.reset(id, 0.7, u, ModeContext{pp, d}, ra), 0);
    ASSERT_EQ(model.reset(id, 0.7, u, ModeContext{pm, d}, rb), 0);
    ASSERT_EQ(VecAXPY(ra, -1.0, rb), 0);
    ASSERT_EQ(VecScale(ra, 0.5 / eps), 0);
    Vec col;
    ASSERT_EQ(MatDenseGetColumnVecRead(Rp, 0, &col), 0);
    ASSERT_EQ(VecAXPY(ra, -1.0, col), 0);
    ASSERT_EQ(MatDenseRestoreColumnVecRead(Rp, 0, &col), 0);
    ASSERT_EQ(VecNorm(ra, NORM_INFINITY, &nd), 0);
    EXPECT_LE(nd, 1e-12) << "R_p vs central difference, event kind " << id.kind;
    ASSERT_EQ(VecDestroy(&ra), 0);
    ASSERT_EQ(VecDestroy(&rb), 0);
    ASSERT_EQ(MatDestroy(&Rp), 0);
  }
  for (Vec *x : {&u, &v, &w, &a, &b, &out}) ASSERT_EQ(VecDestroy(x), 0);
}

// A full solve: forward = adjoint, both = central FD, for every parameter (including the time
// event's T₁, whose memory jump needs the total derivative ẋ⁻ τ_p); [SerbanRecuero2019]'s partial
// derivative is wrong for T₁; the adjoint monitor reports λ(t₀) = dJ/du₀ last.
TEST(MemoryModel, SolveMatchesFiniteDifferencesOnEveryRankCount) {
  MemoryRing model;
  RingCost cost;
  const std::vector<PetscReal> p = model.defaultParameters();
  Solver solver(model);
  solver.addCost(cost);
  solver.setForwardSensitivities(true);
  solver.setAdjoint(true);
  std::vector<AdjointSample::Kind> kinds;
  std::vector<PetscScalar> lambda0;
  solver.setAdjointMonitor([&](const AdjointSample &s) -> PetscErrorCode {
    kinds.push_back(s.kind);
    if (s.step == 0) {
      PetscFunctionBeginUser;
      PetscCall(MemoryRing::gather(s.lambda[0], lambda0));
      PetscFunctionReturn(0);
    }
    return 0;
  });
  ASSERT_EQ(setUpSolver(solver, p), 0);
  ASSERT_EQ(solver.solve(), 0);
  ASSERT_GE(solver.result().events().size(), 2u);  // the time event and the guard
  const auto &fwd = solver.result().gradient[0].forwardP, &adj = solver.result().gradient[0].adjointP;
  PetscReal scale = 0;
  for (PetscScalar g : adj) scale = std::max(scale, (PetscReal)std::fabs(g));
  for (size_t j = 0; j < p.size(); ++j) {
    EXPECT_LE(std::fabs(fwd[j] - adj[j]), 1e-12 * scale) << "parameter " << j;
    const PetscReal h = 1e-6;
    std::vector<PetscReal> pp = p, pm = p;
    pp[j] += h, pm[j] -= h;
    const PetscReal fd = (objectiveAt(model, cost, pp) - objectiveAt(model, cost, pm)) / (2 * h);
    EXPECT_LE(std::fabs(adj[j] - fd), 1e-6 * scale) << "parameter " << j << ": adjoint " << adj[j] << " FD " << fd;
  }
  // The monitor: Arrived/AfterTransition samples, the last one at t₀ with λ(t₀) = dJ/du₀.
  ASSERT_FALSE(kinds.empty());
  EXPECT_EQ(kinds.back(), AdjointSample::Arrived);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), AdjointSample::AfterTransition), (long)solver.result().events().size());
  const auto &u0idx = solver.result().initialStateIndices;
  ASSERT_FALSE(u0idx.empty());
  for (size_t i = 0; i < u0idx.size(); ++i) EXPECT_EQ(lambda0.at(u0idx[i]), solver.result().gradient[0].adjointU0[i]);

  // The partial memory derivative of Serban & Recuero (2019) misses ẋ⁻ τ_p at the time event: dJ/dT₁ goes wrong.
  {
    ScopedOptions o("-hs_test_memory_partial_derivative");
    Solver wrong(model);
    wrong.addCost(cost);
    wrong.setAdjoint(true);
    ASSERT_EQ(setUpSolver(wrong, p), 0);
    ASSERT_EQ(wrong.solve(), 0);
    EXPECT_GT(std::fabs(wrong.result().gradient[0].adjointP[2] - adj[2]), 1e-2 * scale);
  }
}

TEST(MemoryModel, MemoryRowsMustHaveZeroDynamics) {
  MemoryRing model;
  model.nonzeroMemoryDynamics = true;
  Solver solver(model);
  ErrorCapture err;
  ASSERT_EQ(setUpSolver(solver, model.defaultParameters()), 0);
  EXPECT_NE(solver.solve(), 0);
  EXPECT_NE(err.message().find("nonzero dynamics"), std::string::npos) << err.message();
}

TEST(MemoryModel, LayoutErrors) {
  for (std::vector<PetscInt> bad : {std::vector<PetscInt>{1, 1}, std::vector<PetscInt>{1, 1000}}) {
    MemoryRing model;
    model.indicesOverride = bad;
    Solver solver(model);
    ErrorCapture err;
    ASSERT_EQ(setUpSolver(solver, model.defaultParameters()), 0);
    EXPECT_NE(solver.solve(), 0);
    EXPECT_TRUE(err.message().find("listed twice") != std::string::npos || err.message().find("outside the state") != std::string::npos)
        << err.message();
  }
}
