#include "sensitivity/adjoint_sensitivity.hpp"

#include "sensitivity/configuration.hpp"
#include "util/dense_columns.hpp"
#include "util/gather.hpp"
#include "util/petsc_internals.hpp"
#include "util/user_call.hpp"

#include <algorithm>
#include <cmath>

namespace hybridsens {

AdjointSensitivity::AdjointSensitivity(Engine &engine, CostEvaluator &costs, JumpAlgebra &jumps)
    : engine_(engine), costs_(costs), jumps_(jumps), integrandDerivatives_(engine.dynamics(), costs) {}

AdjointSensitivity::~AdjointSensitivity() { teardown(); }

PetscErrorCode AdjointSensitivity::teardown() {
  PetscFunctionBeginUser;
  for (auto &v : lambda_) PetscCall(VecDestroy(&v));
  for (auto &v : mu_) PetscCall(VecDestroy(&v));
  lambda_.clear();
  mu_.clear();
  PetscCall(MatDestroy(&drdu_));
  PetscCall(MatDestroy(&drdp_));
  PetscFunctionReturn(0);
}

// Quadrature TS callbacks: r_u (columns) and r_p. (No r: the sweep integrates no values.)
PetscErrorCode AdjointSensitivity::QuadratureJacobian(TS, PetscReal t, Vec u, Mat A, Mat, void *ctx) {
  auto *self = static_cast<AdjointSensitivity *>(ctx);
  const IntegrandDerivatives::Values *v;
  PetscFunctionBeginUser;
  PetscCall(self->integrandDerivatives_.at(t, u, self->engine_.dynamics().mode, &v));
  PetscCall(MatCopy(v->ru, A, SAME_NONZERO_PATTERN));
  PetscFunctionReturn(0);
}

PetscErrorCode AdjointSensitivity::QuadratureJacobianP(TS, PetscReal t, Vec u, Mat A, void *ctx) {
  auto *self = static_cast<AdjointSensitivity *>(ctx);
  const PetscInt np = self->engine_.dynamics().numParameters();
  const IntegrandDerivatives::Values *v;
  PetscInt lo, hi, lda;
  PetscScalar *a;
  PetscFunctionBeginUser;
  PetscCall(self->integrandDerivatives_.at(t, u, self->engine_.dynamics().mode, &v));
  PetscCall(MatGetOwnershipRange(A, &lo, &hi));
  PetscCall(MatDenseGetLDA(A, &lda));
  PetscCall(MatDenseGetArrayWrite(A, &a));  // one array access, not one lookup per entry
  for (size_t k = 0; k < v->rp.size(); ++k)
    for (PetscInt i = lo; i < hi; ++i) a[(i - lo) + (PetscInt)k * lda] = i < np ? v->rp[k][i] : 0.0;
  PetscCall(MatDenseRestoreArrayWrite(A, &a));
  PetscFunctionReturn(0);
}

PetscErrorCode AdjointSensitivity::setUpQuadrature() {
  TS ts = engine_.ts();
  Dynamics &dyn = engine_.dynamics();
  const PetscInt ncost = (PetscInt)costs_.size();
  PetscInt n, N, pn, pN;
  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(dyn.templateVec(), &n));
  PetscCall(VecGetSize(dyn.templateVec(), &N));
  PetscCall(MatCreateDense(dyn.comm(), n, PETSC_DECIDE, N, ncost, nullptr, &drdu_));
  PetscCall(MatGetLocalSize(dyn.parameterJacobian(), nullptr, &pn));
  PetscCall(MatGetSize(dyn.parameterJacobian(), nullptr, &pN));
  PetscCall(MatCreateDense(dyn.comm(), pn, PETSC_DECIDE, pN, ncost, nullptr, &drdp_));
  PetscCall(TSCreateQuadratureTS(ts, PETSC_FALSE, &quadts_));
  PetscCall(TSSetRHSJacobian(quadts_, drdu_, drdu_, QuadratureJacobian, this));
  if (dyn.numParameters() > 0) PetscCall(TSSetRHSJacobianP(quadts_, drdp_, QuadratureJacobianP, this));
  PetscFunctionReturn(0);
}

// The state of one reverse sweep, shared by its named steps; owns its work vectors (an error
// anywhere in the sweep leaves nothing behind).
struct AdjointSensitivity::Sweep {
  Vec finalState = nullptr;  // u(T): the sweep loads every stored step into the TS solution vector
  Vec work = nullptr;
  PetscInt M = 0;                                      // the last step
  long e = -1;                                         // the latest event not yet undone
  std::vector<std::vector<PetscScalar>> muExtra;       // ψ_p and the jumps' parameter terms, per cost
  std::vector<PetscScalar> deferred, unusedValues;     // event-time term from the step after an event; measurement values (unused)
  std::vector<PetscReal> measured;                     // measurement times of every cost
  JumpIngredients J;
  ~Sweep() {
    VecDestroy(&finalState);
    VecDestroy(&work);
  }
};

// Terminal conditions λ(T) = ψ_u; ψ_p kept with the event contributions (both additive). The
// objective values come from the forward solve: the sweep computes only gradients.
PetscErrorCode AdjointSensitivity::setUpSweep(Sweep &s) {
  TS ts = engine_.ts();
  Dynamics &dyn = engine_.dynamics();
  const TrajectoryStore &traj = engine_.trajectory();
  const size_t ncost = costs_.size();
  const PetscInt np = dyn.numParameters();
  Vec X;
  PetscFunctionBeginUser;
  PetscCall(TSGetSolution(ts, &X));
  PetscCall(VecDuplicate(X, &s.finalState));
  PetscCall(VecCopy(X, s.finalState));
  PetscCall(VecDuplicate(X, &s.work));
  s.M = traj.size() - 1;
  s.e = (long)engine_.log().size() - 1;
  s.muExtra.assign(ncost, {});
  s.deferred.assign(ncost, 0.0);
  s.unusedValues.assign(ncost, 0.0);
  s.measured = costs_.measurementTimes();
  lambda_.resize(ncost);
  for (size_t k = 0; k < ncost; ++k) {
    PetscCall(VecDuplicate(X, &lambda_[k]));
    PetscCall(costs_.terminalGradient(k, traj.time(s.M), s.finalState, dyn.mode, lambda_[k], s.muExtra[k]));
    if (np) {
      Vec m;
      PetscCall(MatCreateVecs(dyn.parameterJacobian(), &m, nullptr));
      PetscCall(VecZeroEntries(m));
      mu_.push_back(m);
    }
  }
  PetscCall(TSSetCostGradients(ts, (PetscInt)ncost, lambda_.data(), np ? mu_.data() : nullptr));
  if (costs_.anyIntegrand()) PetscCall(setUpQuadrature());
  // TSAdjointSetUp insists on a trajectory object; the steps come from our own store.
  PetscCall(tsEnsureTrajectoryObject(ts));
  PetscCall(TSAdjointSetSteps(ts, s.M));
  PetscCall(tsResetAdjointStepCount(ts));
  PetscFunctionReturn(0);
}

// Measurements at t_n see the right limit: the state after every transition at t_n, in the
// mode after them; their λ jump comes before the transitions are undone.
PetscErrorCode AdjointSensitivity::addMeasurements(Sweep &s, PetscInt n) {
  const TrajectoryStore &traj = engine_.trajectory();
  const auto &events = engine_.log().records();
  PetscFunctionBeginUser;
  Vec u = s.finalState;
  if (n < s.M) PetscCall(traj.state(n, &u));
  DiscreteState d = n == s.M ? engine_.dynamics().mode : traj.mode(n);
  if (n < s.M && s.e >= 0 && events[s.e].step == n) u = events[s.e].uplus, d = events[s.e].after;
  for (size_t k = 0; k < costs_.size(); ++k)
    if (!costs_.cost(k).measurementTimes().empty())
      PetscCall(costs_.measurementsAt(k, traj.time(n), u, d, &s.unusedValues[k], lambda_[k], s.muExtra[k], s.work));
  PetscFunctionReturn(0);
}

// The optional monitor sees λ at every boundary, on both sides of every jump.
PetscErrorCode AdjointSensitivity::report(const Sweep &s, AdjointSample::Kind kind, PetscInt n, const EventRecord *ev) {
  const PetscReal t = engine_.trajectory().time(n);
  PetscFunctionBeginUser;
  if (!monitor_) PetscFunctionReturn(0);
  if (kind == AdjointSample::AfterMeasurements && std::find(s.measured.begin(), s.measured.end(), t) == s.measured.end())
    PetscFunctionReturn(0);
  PetscCall(monitor_(AdjointSample{kind, n, t, ev, lambda_}));
  PetscFunctionReturn(0);
}

// Everything at the boundary after step n, in reverse: measurements, then the transitions
// there undone in reverse order of application (the last one gets what step n + 1 contributed
// to its event time; see EventTangents), then the correction that the step about to be
// reversed carries if it followed an event.
PetscErrorCode AdjointSensitivity::undoInstant(Sweep &s, PetscInt n) {
  const auto &events = engine_.log().records();
  const size_t ncost = costs_.size();
  PetscFunctionBeginUser;
  PetscCall(report(s, AdjointSample::Arrived, n, nullptr));
  PetscCall(addMeasurements(s, n));
  PetscCall(report(s, AdjointSample::AfterMeasurements, n, nullptr));
  for (bool lastAtInstant = true; s.e >= 0 && events[s.e].step == n; --s.e, lastAtInstant = false) {
    PetscCall(jumps_.prepare(events[s.e], (size_t)s.e, s.J, false));
    for (size_t k = 0; k < ncost; ++k)
      PetscCall(jumps_.adjoint(events[s.e], s.J, k, lambda_[k], s.muExtra[k], lastAtInstant ? s.deferred[k] : 0.0));
    PetscCall(report(s, AdjointSample::AfterTransition, n, &events[s.e]));
  }
  s.deferred.assign(ncost, 0.0);
  const EventTangents *tangents = jumps_.tangents();
  const EventTangent *tangent = tangents && s.e >= 0 && events[s.e].step == n - 1 ? tangents->at((size_t)s.e) : nullptr;
  if (tangent)
    for (size_t k = 0; k < ncost; ++k) PetscCall(jumps_.adjointCorrection(*tangent, k, lambda_[k], &s.deferred[k]));
  PetscFunctionReturn(0);
}

// Reverse step n with PETSc's TSAdjointStep, in the mode it ran in, from its stored state.
PetscErrorCode AdjointSensitivity::stepBack(PetscInt n) {
  TS ts = engine_.ts();
  Dynamics &dyn = engine_.dynamics();
  const TrajectoryStore &traj = engine_.trajectory();
  const PetscInt np = dyn.numParameters();
  Vec Un;
  PetscFunctionBeginUser;
  dyn.mode = traj.mode(n);
  PetscCall(traj.load(ts, n));
  PetscCall(TSSetStepNumber(ts, n));
  PetscCall(tsInvalidateRHSJacobian(ts));  // the cache is keyed on time, not on the mode
  // -ts_adjoint_monitor and friends, as TSAdjointSolve calls them: before each step back.
  PetscCall(TSGetSolution(ts, &Un));
  PetscCall(TSAdjointMonitor(ts, n, traj.time(n), Un, (PetscInt)costs_.size(), lambda_.data(), np ? mu_.data() : nullptr));
  PetscCall(TSAdjointStep(ts));
  // Index 2 (backward Euler only): λ_n = (∂u_{n+1}/∂u_n)ᵀλ_{n+1} = (M/h)ᵀν is exactly zero on the
  // algebraic rows (M is); PETSc forms it as a sum that leaves round-off there. Exact zeros keep
  // the jump's "λ⁺ has no algebraic part" (docs/index2-daes.md §4) literally true.
  if (dyn.isIndex2())
    for (Vec l : lambda_) PetscCall(dyn.zeroAlgebraic(l));
  PetscFunctionReturn(0);
}

// The boundary at t0 (measurements there), with the last monitor call as TSAdjointSolve makes it.
PetscErrorCode AdjointSensitivity::finishAtStart(Sweep &s) {
  TS ts = engine_.ts();
  Dynamics &dyn = engine_.dynamics();
  const TrajectoryStore &traj = engine_.trajectory();
  const PetscInt np = dyn.numParameters();
  Vec U0;
  PetscFunctionBeginUser;
  PetscCheck(s.e < 0, dyn.comm(), PETSC_ERR_PLIB, "adjoint replay left %ld events unapplied", s.e + 1);
  dyn.mode = traj.mode(0);
  PetscCall(report(s, AdjointSample::Arrived, 0, nullptr));
  PetscCall(addMeasurements(s, 0));
  PetscCall(report(s, AdjointSample::AfterMeasurements, 0, nullptr));
  PetscCall(traj.load(ts, 0));  // the final λ(t0), as TSAdjointSolve's last monitor call
  PetscCall(TSGetSolution(ts, &U0));
  PetscCall(TSAdjointMonitor(ts, 0, traj.time(0), U0, (PetscInt)costs_.size(), lambda_.data(), np ? mu_.data() : nullptr));
  PetscFunctionReturn(0);
}

// Initial state u0(p) (consistent for a DAE): w = A0⁻ᵀλ(t0), dJ/du0_i = w_i,
// dJ/dp = μ + (ψ_p and jump terms) + (∂u0/∂p)_xᵀ w_x − g_pᵀ w_y (the model's transposed
// product; g_pᵀ w_y by columnDots). Only the requested entries of w are gathered.
PetscErrorCode AdjointSensitivity::initialStateTerms(Sweep &s, PetscReal t0, Vec u0, const std::vector<PetscInt> &u0Indices,
                                                     AdjointResults &out) {
  Dynamics &dyn = engine_.dynamics();
  const size_t ncost = costs_.size();
  const PetscInt np = dyn.numParameters();
  PetscFunctionBeginUser;
  if (dyn.isDAE()) {
    PetscCall(dyn.setConsistencyPoint(t0, u0, dyn.mode));
    if (np) PetscCall(dyn.rhsJacobianP(t0, u0, dyn.mode));
  }
  struct Vecs {
    std::vector<Vec> v;
    ~Vecs() {
      for (Vec &x : v) VecDestroy(&x);
    }
  } w, wx;
  w.v.assign(ncost, nullptr), wx.v.assign(ncost, nullptr);
  out.gradientP.assign(ncost, std::vector<PetscScalar>(np, 0.0));
  out.gradientU0.assign(ncost, std::vector<PetscScalar>(u0Indices.size(), 0.0));
  for (size_t k = 0; k < ncost; ++k) {
    PetscCall(VecDuplicate(s.finalState, &w.v[k]));
    if (dyn.isDAE()) PetscCall(dyn.consistencySolve(lambda_[k], w.v[k], true));
    else PetscCall(VecCopy(lambda_[k], w.v[k]));
    if (!u0Indices.empty()) {
      std::vector<PetscScalar> wall;
      PetscCall(gatherToAll(w.v[k], wall));
      for (size_t i = 0; i < u0Indices.size(); ++i) out.gradientU0[k][i] = wall[u0Indices[i]];
    }
    PetscCall(VecDuplicate(w.v[k], &wx.v[k]));
    PetscCall(VecCopy(w.v[k], wx.v[k]));
    PetscCall(dyn.zeroAlgebraic(wx.v[k]));
  }
  if (!np) PetscFunctionReturn(0);
  std::vector<std::vector<PetscScalar>> d;
  HS_USER_CALL(dyn.comm(), "initialStateJacobianPTranspose", dyn.model().initialStateJacobianPTranspose(dyn.context(), wx.v, d));
  // A wrong size on one rank only must not leave the others in the reduction below.
  PetscBool sizesOk = (PetscBool)(d.size() == ncost), allOk;
  for (size_t k = 0; sizesOk && k < ncost; ++k) sizesOk = (PetscBool)(d[k].size() == (size_t)np);
  PetscCallMPI(MPI_Allreduce(&sizesOk, &allOk, 1, MPIU_BOOL, MPI_LAND, dyn.comm()));
  PetscCheck(allOk, dyn.comm(), PETSC_ERR_ARG_SIZ,
             "initialStateJacobianPTranspose must return %zu products of %" PetscInt_FMT " entries (one per vector, one entry per parameter)", ncost, np);
  for (size_t k = 0; k < ncost; ++k) {
    std::vector<PetscScalar> muall, gy(np, 0.0);
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, d[k].data(), (int)np, MPIU_SCALAR, MPIU_SUM, dyn.comm()));
    for (PetscInt j = 0; j < np; ++j)
      PetscCheck(std::isfinite(d[k][j]), dyn.comm(), PETSC_ERR_FP, "NaN or Inf returned by model callback initialStateJacobianPTranspose (parameter %" PetscInt_FMT ")", j);
    PetscCall(gatherToAll(mu_[k], muall));
    if (dyn.isDAE()) {
      Vec wy;
      PetscCall(VecDuplicate(w.v[k], &wy));
      PetscCall(VecCopy(w.v[k], wy));
      PetscCall(dyn.zeroDifferential(wy));
      PetscCall(columnDots(dyn.parameterJacobian(), wy, np, gy));
      PetscCall(VecDestroy(&wy));
    }
    for (PetscInt j = 0; j < np; ++j) out.gradientP[k][j] = muall[j] + s.muExtra[k][j] + d[k][j] - gy[j];
  }
  PetscFunctionReturn(0);
}

// Put u(T) back and leave the TS ready for another forward solve.
PetscErrorCode AdjointSensitivity::restoreTs(const Sweep &s) {
  TS ts = engine_.ts();
  Vec sol;
  PetscFunctionBeginUser;
  PetscCall(TSGetSolution(ts, &sol));
  PetscCall(VecCopy(s.finalState, sol));
  PetscCall(TSAdjointReset(ts));
  PetscCall(tsDestroyQuadratureTS(ts));
  quadts_ = nullptr;
  PetscCall(tsDestroyTrajectoryObject(ts));
  PetscFunctionReturn(0);
}

PetscErrorCode AdjointSensitivity::solve(PetscReal t0, Vec u0, const std::vector<PetscInt> &u0Indices, AdjointResults &out) {
  Dynamics &dyn = engine_.dynamics();
  PetscFunctionBeginUser;
  PetscCheck(costs_.size() > 0, dyn.comm(), PETSC_ERR_ARG_WRONGSTATE, "The adjoint needs at least one cost function (Solver::addCost)");
  PetscCall(checkSensitivityConfiguration(engine_.ts(), dyn, true));
  PetscCall(teardown());
  Sweep s;
  PetscCall(setUpSweep(s));
  const DiscreteState finalMode = dyn.mode;
  // PETSc's theta adjoint evaluates f_u, f_p, r_u and r_p at (t_n, u_n) twice (end of one
  // reversed step, start of the next): copy instead (Dynamics::reuseRepeatedJacobians,
  // IntegrandDerivatives), only for this sweep.
  struct ReuseDuringSweep {
    Dynamics &dyn;
    ReuseDuringSweep(Dynamics &d, bool on) : dyn(d) { dyn.reuseRepeatedJacobians(on); }
    ~ReuseDuringSweep() { dyn.reuseRepeatedJacobians(false); }
  } reuse(dyn, engine_.options().reuseAdjointJacobians);
  integrandDerivatives_.setReuse(engine_.options().reuseAdjointJacobians);
  const PetscInt reusedBefore = dyn.reusedJacobians() + integrandDerivatives_.hits();
  for (PetscInt n = s.M; n >= 1; --n) {
    if (n == s.M) dyn.mode = finalMode;
    PetscCall(undoInstant(s, n));
    PetscCall(stepBack(n));
  }
  out.reusedJacobians = dyn.reusedJacobians() + integrandDerivatives_.hits() - reusedBefore;
  PetscCall(jumps_.destroy(s.J));
  PetscCall(finishAtStart(s));
  PetscCall(initialStateTerms(s, t0, u0, u0Indices, out));
  PetscCall(restoreTs(s));
  PetscFunctionReturn(0);
}

} // namespace hybridsens
