// The discrete event derivative of an index-1 DAE when an event lands next to a step point.
//
// Relay DAE (x differential on rank 0, y algebraic on the last rank):
//   x' = (y − x)/τ,   0 = y − (k1 x + b1) in mode 0,   0 = y − (k2 x + b2) in mode 1;
//   guard "y_up"   y − up rising  in mode 0 → mode 1,
//   guard "y_down" y − dn falling in mode 1 → mode 0.
// With p = (τ, k1, b1, k2, b2, up, dn) = (1, 0.5, 1, 0.5, −0.5, 1.8, 0): x relaxes towards 2 in
// mode 0 and −1 in mode 1, so y oscillates between the thresholds (three events on [0, 3.5]).
// Cost: x(T) + ∫ y² dt. The first event time is placed at t_N + d (t_N a step point of the fixed
// grid, h = 0.01) by tuning x0; d runs over ±1e-15 … ±1e-10.
//
// An event exactly at a step point is where the discrete map changes its step structure
// (event inside step N−1 and a remainder up to t_N, or event inside step N after a full step N−1),
// so the computed objective has a kink there: the one-sided derivatives differ by O(h^order).
#include "test_support.hpp"
#include "util/gather.hpp"

#include <hybridsens/hybridsens.hpp>

#include <petscts.h>

#include <cmath>
#include <cstdio>

using namespace hybridsens;

namespace {

constexpr PetscReal kH = 0.01, kT = 3.5;

class RelayDAE : public HybridModel {
public:
  explicit RelayDAE(PetscReal x0) : x0_(x0) {
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank_);
    MPI_Comm_size(PETSC_COMM_WORLD, &size_);
  }
  ~RelayDAE() override {
    VecScatterDestroy(&toAll_);
    VecDestroy(&all_);
  }
  void setX0(PetscReal x0) { x0_ = x0; }
  bool ownsX() const { return rank_ == 0; }
  bool ownsY() const { return rank_ == size_ - 1; }
  PetscInt localSize() const override { return (ownsX() ? 1 : 0) + (ownsY() ? 1 : 0); }
  std::vector<PetscInt> algebraicIndices() const override { return ownsY() ? std::vector<PetscInt>{1} : std::vector<PetscInt>{}; }
  DiscreteState initialDiscreteState() const override { return {0}; }
  std::vector<PetscReal> defaultParameters() const override { return {1.0, 0.5, 1.0, 0.5, -0.5, 1.8, 0.0}; }
  std::vector<std::string> parameterNames() const override { return {"tau", "k1", "b1", "k2", "b2", "up", "dn"}; }

  // Slope and offset of the constraint in mode d, and their parameter indices.
  static PetscInt slopeIndex(const ModeContext &c) { return c.d[0] == 0 ? 1 : 3; }

  PetscErrorCode both(Vec u, PetscScalar v[2]) const {
    const PetscScalar *a;
    PetscFunctionBeginUser;
    if (!toAll_) PetscCall(VecScatterCreateToAll(u, &toAll_, &all_));
    PetscCall(VecScatterBegin(toAll_, u, all_, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(toAll_, u, all_, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecGetArrayRead(all_, &a));
    v[0] = a[0];
    v[1] = a[1];
    PetscCall(VecRestoreArrayRead(all_, &a));
    PetscFunctionReturn(0);
  }

  PetscErrorCode initialState(const ModeContext &, Vec u0) const override {
    PetscFunctionBeginUser;
    if (ownsX()) PetscCall(VecSetValue(u0, 0, x0_, INSERT_VALUES));
    if (ownsY()) PetscCall(VecSetValue(u0, 1, 0.0, INSERT_VALUES));  // made consistent by the solver
    PetscCall(VecAssemblyBegin(u0));
    PetscCall(VecAssemblyEnd(u0));
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhs(PetscReal, Vec u, const ModeContext &c, Vec f) const override {
    PetscScalar v[2], *fa;
    PetscInt lo;
    const PetscInt s = slopeIndex(c);
    PetscFunctionBeginUser;
    PetscCall(both(u, v));
    PetscCall(VecGetOwnershipRange(f, &lo, nullptr));
    PetscCall(VecGetArray(f, &fa));
    if (ownsX()) fa[0 - lo] = (v[1] - v[0]) / c.p[0];
    if (ownsY()) fa[1 - lo] = v[1] - (c.p[s] * v[0] + c.p[s + 1]);
    PetscCall(VecRestoreArray(f, &fa));
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhsJacobian(PetscReal, Vec, const ModeContext &c, Mat J) const override {
    const PetscInt cols[2] = {0, 1};
    PetscFunctionBeginUser;
    if (ownsX()) {
      const PetscScalar row[2] = {-1.0 / c.p[0], 1.0 / c.p[0]};
      PetscCall(MatSetValues(J, 1, &cols[0], 2, cols, row, INSERT_VALUES));
    }
    if (ownsY()) {
      const PetscScalar row[2] = {-c.p[slopeIndex(c)], 1.0};
      PetscCall(MatSetValues(J, 1, &cols[1], 2, cols, row, INSERT_VALUES));
    }
    PetscFunctionReturn(0);
  }

  PetscErrorCode rhsJacobianP(PetscReal, Vec u, const ModeContext &c, Mat Jp) const override {
    PetscScalar v[2];
    const PetscInt s = slopeIndex(c);
    PetscFunctionBeginUser;
    PetscCall(both(u, v));
    if (ownsX()) PetscCall(MatSetValue(Jp, 0, 0, -(v[1] - v[0]) / (c.p[0] * c.p[0]), INSERT_VALUES));
    if (ownsY()) {
      PetscCall(MatSetValue(Jp, 1, s, -v[0], INSERT_VALUES));
      PetscCall(MatSetValue(Jp, 1, s + 1, -1.0, INSERT_VALUES));
    }
    PetscFunctionReturn(0);
  }

  PetscInt numGuards() const override { return 2; }
  GuardInfo guardInfo(PetscInt j) const override {
    return j == 0 ? GuardInfo{"y_up", Direction::Rising} : GuardInfo{"y_down", Direction::Falling};
  }
  bool guardActive(PetscInt j, const DiscreteState &d) const override { return d[0] == j; }
  PetscErrorCode guards(PetscReal, Vec u, const ModeContext &c, PetscScalar *g) const override {
    PetscFunctionBeginUser;
    if (ownsY()) {  // the guards watch y: only its owner writes them
      const PetscScalar *a;
      PetscInt lo;
      PetscCall(VecGetOwnershipRange(u, &lo, nullptr));
      PetscCall(VecGetArrayRead(u, &a));
      g[0] = a[1 - lo] - c.p[5];
      g[1] = a[1 - lo] - c.p[6];
      PetscCall(VecRestoreArrayRead(u, &a));
    }
    PetscFunctionReturn(0);
  }
  PetscErrorCode guardGradient(PetscInt j, PetscReal, Vec, const ModeContext &, Vec gu, PetscScalar *gt, PetscScalar *gp) const override {
    PetscFunctionBeginUser;
    if (ownsY()) {
      PetscCall(VecSetValue(gu, 1, 1.0, INSERT_VALUES));
      gp[5 + j] = -1.0;
    }
    PetscCall(VecAssemblyBegin(gu));
    PetscCall(VecAssemblyEnd(gu));
    *gt = 0;
    PetscFunctionReturn(0);
  }
  PetscErrorCode transition(const EventId &, PetscReal, Vec, DiscreteState &d) const override {
    d[0] = 1 - d[0];
    return 0;
  }

private:
  PetscReal x0_;
  PetscMPIInt rank_ = 0, size_ = 1;
  mutable VecScatter toAll_ = nullptr;
  mutable Vec all_ = nullptr;
};

// x(T) + ∫ y² dt.
class RelayCost : public CostFunction {
public:
  RelayCost() {
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank_);
    MPI_Comm_size(PETSC_COMM_WORLD, &size_);
  }
  bool hasTerminal() const override { return true; }
  bool hasIntegrand() const override { return true; }
  PetscErrorCode terminal(PetscReal, Vec u, const ModeContext &, PetscScalar *v) const override { return entry(u, 0, rank_ == 0, v); }
  PetscErrorCode terminalGradient(PetscReal, Vec, const ModeContext &, Vec gu, PetscScalar *) const override {
    PetscFunctionBeginUser;
    if (rank_ == 0) PetscCall(VecSetValue(gu, 0, 1.0, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(gu));
    PetscCall(VecAssemblyEnd(gu));
    PetscFunctionReturn(0);
  }
  PetscErrorCode integrand(PetscReal, Vec u, const ModeContext &, PetscScalar *v) const override {
    PetscFunctionBeginUser;
    PetscCall(entry(u, 1, rank_ == size_ - 1, v));
    if (rank_ == size_ - 1) *v = *v * *v;
    PetscFunctionReturn(0);
  }
  PetscErrorCode integrandGradient(PetscReal, Vec u, const ModeContext &, Vec gu, PetscScalar *) const override {
    PetscScalar y = 0;
    PetscFunctionBeginUser;
    PetscCall(entry(u, 1, rank_ == size_ - 1, &y));
    PetscCall(VecSet(gu, 0.0));
    if (rank_ == size_ - 1) PetscCall(VecSetValue(gu, 1, 2 * y, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(gu));
    PetscCall(VecAssemblyEnd(gu));
    PetscFunctionReturn(0);
  }

private:
  PetscErrorCode entry(Vec u, PetscInt i, bool owner, PetscScalar *v) const {
    const PetscScalar *a;
    PetscInt lo;
    PetscFunctionBeginUser;
    PetscCall(VecGetOwnershipRange(u, &lo, nullptr));
    PetscCall(VecGetArrayRead(u, &a));
    if (owner) *v = a[i - lo];
    PetscCall(VecRestoreArrayRead(u, &a));
    PetscFunctionReturn(0);
  }
  PetscMPIInt rank_ = 0, size_ = 1;
};

struct RelayRun {
  PetscReal J = 0;
  std::vector<PetscScalar> fwd, adj;  // (p..., x0)
  std::vector<PetscReal> eventTimes;
  std::vector<PetscInt> eventSteps;
};

// Deterministic direct solves on any number of ranks (every rank factors the whole small matrix).
const char *kSolverOptions = "-snes_type newtonls -ksp_type preonly -pc_type redundant -redundant_pc_type lu "
                             "-hs_tangent_pc_type redundant -hs_tangent_redundant_pc_type lu "
                             "-hs_consistency_pc_type redundant -hs_consistency_redundant_pc_type lu";

PetscErrorCode runRelay(PetscReal x0, const std::vector<PetscReal> &p, TSType type, bool gradients, RelayRun &out,
                        const std::string &extra = "") {
  RelayDAE model(x0);
  RelayCost cost;
  PetscFunctionBeginUser;
  Solver s(model);
  s.addCost(cost);
  PetscCall(hstest::configureFixedStep(s, type, kH, kT, std::string(kSolverOptions) + " " + extra));
  PetscCall(s.setParameters(p));
  s.setForwardSensitivities(gradients);
  s.setAdjoint(gradients);
  PetscCall(s.solve());
  out.J = s.objective()[0];
  out.eventTimes.clear();
  out.eventSteps.clear();
  for (const auto &r : s.events().records()) {
    out.eventTimes.push_back(r.time);
    out.eventSteps.push_back(r.step);
  }
  if (gradients) {
    out.fwd = s.forwardGradientP()[0];
    out.adj = s.adjointGradientP()[0];
    out.fwd.push_back(s.forwardGradientU0()[0][0]);
    out.adj.push_back(s.adjointGradientU0()[0][0]);
  }
  PetscFunctionReturn(0);
}

// The N-th point of the engine's fixed grid: the same sums TSStep forms.
PetscReal gridPoint(PetscInt N) {
  PetscReal t = 0;
  for (PetscInt i = 0; i < N; ++i) t = t + kH;
  return t;
}

// x0 such that the first event ("y_up", x = 1.6 in mode 0, where x' ≈ −0.5 (x − 2)) is at target:
// Newton on the computed event time with the continuous dτ/dx0 = 2/(x0 − 2), then the last few
// ulps by walking x0 (the event time moves by ≈ 1e-15 per ulp of x0).
PetscErrorCode placeFirstEvent(PetscReal target, const std::vector<PetscReal> &p, TSType type, PetscReal *x0) {
  RelayRun r;
  PetscFunctionBeginUser;
  *x0 = 2 - 0.4 * std::exp(target / 2);
  for (int it = 0; it < 6; ++it) {
    PetscCall(runRelay(*x0, p, type, false, r));
    const PetscReal err = r.eventTimes.at(0) - target;
    if (err == 0) break;
    *x0 -= err / (2 / (*x0 - 2));
  }
  PetscFunctionReturn(0);
}

} // namespace

// Reproduction: events at t_N ± d for every d, both methods; no abort, forward = adjoint.
TEST(DAENearStep, EventNextToAStepPoint) {
  const std::vector<PetscReal> p = RelayDAE(1.5).defaultParameters();
  const PetscInt N = 45;
  const PetscReal tN = gridPoint(N);
  for (TSType type : {TSCN, TSBEULER}) {
    for (int side : {-1, +1}) {
      for (int e = 15; e >= 10; --e) {
        const PetscReal d = side * std::pow(10.0, -e);
        PetscReal x0;
        ASSERT_EQ(placeFirstEvent(tN + d, p, type, &x0), 0);
        RelayRun r;
        hstest::ErrorCapture capture;
        PetscErrorCode ierr = runRelay(x0, p, type, true, r);
        EXPECT_EQ(ierr, 0) << type << " d = " << d << ": " << capture.message();
        if (ierr) {
          RelayRun q;
          runRelay(x0, p, type, false, q);
          PetscPrintf(PETSC_COMM_WORLD, "%s d=%+.0e actual %+.3e FAILED\n", type, (double)d, (double)(q.eventTimes[0] - tN));
          continue;
        }
        PetscReal maxRel = 0, scale = 0;
        for (size_t j = 0; j < r.fwd.size(); ++j) scale = std::max(scale, std::abs(r.adj[j]));
        for (size_t j = 0; j < r.fwd.size(); ++j) maxRel = std::max(maxRel, std::abs(r.fwd[j] - r.adj[j]) / scale);
        PetscPrintf(PETSC_COMM_WORLD, "%s d=%+.0e actual %+.3e  events %zu  fwd-adj %.2e  g =", type, (double)d,
                    (double)(r.eventTimes[0] - tN), r.eventTimes.size(), (double)maxRel);
        for (auto g : r.adj) PetscPrintf(PETSC_COMM_WORLD, " %.15g", (double)g);
        PetscPrintf(PETSC_COMM_WORLD, "\n");
      }
    }
  }
}
