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

PetscErrorCode AdjointSensitivity::solve(PetscReal t0, Vec u0, const std::vector<PetscInt> &u0Indices, AdjointResults &out) {
  TS ts = engine_.ts();
  Dynamics &dyn = engine_.dynamics();
  const TrajectoryStore &traj = engine_.trajectory();
  const auto &events = engine_.log().records();
  const size_t ncost = costs_.size();
  const PetscInt np = dyn.numParameters();
  Vec X;
  PetscFunctionBeginUser;
  PetscCheck(ncost > 0, dyn.comm(), PETSC_ERR_ARG_WRONGSTATE, "The adjoint needs at least one cost function (Solver::addCost)");
  PetscCall(checkSensitivityConfiguration(ts, dyn, true));
  PetscCall(teardown());
  PetscCall(TSGetSolution(ts, &X));
  // The sweep loads every stored step into the solution vector; callers expect u(T) after.
  Vec finalState;
  PetscCall(VecDuplicate(X, &finalState));
  PetscCall(VecCopy(X, finalState));
  X = finalState;
  const PetscInt M = traj.size() - 1;
  const PetscReal T = traj.time(M);

  // Terminal conditions λ(T) = ψ_u, and ψ_p kept with the event contributions (both additive).
  // (The objective values come from the forward solve; the sweep computes only gradients.)
  std::vector<std::vector<PetscScalar>> muExtra(ncost);
  std::vector<PetscScalar> unusedValues(ncost, 0.0);
  lambda_.resize(ncost);
  for (size_t k = 0; k < ncost; ++k) {
    PetscCall(VecDuplicate(X, &lambda_[k]));
    PetscCall(costs_.terminalGradient(k, T, X, dyn.mode, lambda_[k], muExtra[k]));
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
  PetscCall(TSAdjointSetSteps(ts, M));
  PetscCall(tsResetAdjointStepCount(ts));

  JumpIngredients J;
  long e = (long)events.size() - 1;
  const EventTangents *tangents = jumps_.tangents();
  std::vector<PetscScalar> deferred(ncost, 0.0);
  Vec work;
  PetscCall(VecDuplicate(X, &work));
  // Measurements at t_n see the right limit: the state after every transition at t_n, in
  // the mode after them; their λ jump comes before the transitions are undone.
  auto addMeasurements = [&](PetscInt n) -> PetscErrorCode {
    PetscFunctionBeginUser;
    Vec u = X;
    if (n < M) PetscCall(traj.state(n, &u));
    DiscreteState d = n == M ? engine_.dynamics().mode : traj.mode(n);
    if (n < M && e >= 0 && events[e].step == n) u = events[e].uplus, d = events[e].after;
    for (size_t k = 0; k < ncost; ++k)
      if (!costs_.cost(k).measurementTimes().empty())
        PetscCall(costs_.measurementsAt(k, traj.time(n), u, d, &unusedValues[k], lambda_[k], muExtra[k], work));
    PetscFunctionReturn(0);
  };
  // The optional monitor sees λ at every boundary, on both sides of every jump.
  const std::vector<PetscReal> measured = costs_.measurementTimes();
  auto report = [&](AdjointSample::Kind kind, PetscInt n, const EventRecord *ev) -> PetscErrorCode {
    PetscFunctionBeginUser;
    if (!monitor_) PetscFunctionReturn(0);
    if (kind == AdjointSample::AfterMeasurements && std::find(measured.begin(), measured.end(), traj.time(n)) == measured.end())
      PetscFunctionReturn(0);
    PetscCall(monitor_(AdjointSample{kind, n, traj.time(n), ev, lambda_}));
    PetscFunctionReturn(0);
  };
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
  for (PetscInt n = M; n >= 1; --n) {
    if (n == M) dyn.mode = finalMode;
    PetscCall(report(AdjointSample::Arrived, n, nullptr));
    PetscCall(addMeasurements(n));
    PetscCall(report(AdjointSample::AfterMeasurements, n, nullptr));
    // Transitions at the end of step n, undone in reverse order of application; the last one
    // gets what step n + 1 contributed to its event time (see EventTangents).
    for (bool lastAtInstant = true; e >= 0 && events[e].step == n; --e, lastAtInstant = false) {
      PetscCall(jumps_.prepare(events[e], (size_t)e, J, false));
      for (size_t k = 0; k < ncost; ++k)
        PetscCall(jumps_.adjoint(events[e], J, k, lambda_[k], muExtra[k], lastAtInstant ? deferred[k] : 0.0));
      PetscCall(report(AdjointSample::AfterTransition, n, &events[e]));
    }
    // If the step about to be reversed followed an event, λ here is what its correction sees.
    deferred.assign(ncost, 0.0);
    const EventTangent *tangent = tangents && e >= 0 && events[e].step == n - 1 ? tangents->at((size_t)e) : nullptr;
    if (tangent)
      for (size_t k = 0; k < ncost; ++k) PetscCall(jumps_.adjointCorrection(*tangent, k, lambda_[k], &deferred[k]));
    dyn.mode = traj.mode(n);
    PetscCall(traj.load(ts, n));
    PetscCall(TSSetStepNumber(ts, n));
    PetscCall(tsInvalidateRHSJacobian(ts));  // the cache is keyed on time, not on the mode
    // -ts_adjoint_monitor and friends, as TSAdjointSolve calls them: before each step back.
    Vec Un;
    PetscCall(TSGetSolution(ts, &Un));
    PetscCall(TSAdjointMonitor(ts, n, traj.time(n), Un, (PetscInt)ncost, lambda_.data(), np ? mu_.data() : nullptr));
    PetscCall(TSAdjointStep(ts));
  }
  out.reusedJacobians = dyn.reusedJacobians() + integrandDerivatives_.hits() - reusedBefore;
  PetscCall(jumps_.destroy(J));
  PetscCheck(e < 0, dyn.comm(), PETSC_ERR_PLIB, "adjoint replay left %ld events unapplied", e + 1);
  dyn.mode = traj.mode(0);
  PetscCall(report(AdjointSample::Arrived, 0, nullptr));
  PetscCall(addMeasurements(0));
  PetscCall(report(AdjointSample::AfterMeasurements, 0, nullptr));
  PetscCall(traj.load(ts, 0));  // the final λ(t0), as TSAdjointSolve's last monitor call
  Vec U0;
  PetscCall(TSGetSolution(ts, &U0));
  PetscCall(TSAdjointMonitor(ts, 0, traj.time(0), U0, (PetscInt)ncost, lambda_.data(), np ? mu_.data() : nullptr));
  PetscCall(VecDestroy(&work));

  // Initial state u0(p) (consistent for a DAE): w = A0⁻ᵀλ(t0), dJ/du0_i = w_i,
  // dJ/dp += (∂u0/∂p)_xᵀ w_x - g_pᵀ w_y (the model's transposed product; g_pᵀ w_y by columnDots).
  if (dyn.isDAE()) {
    PetscCall(dyn.setConsistencyPoint(t0, u0, dyn.mode));
    if (np) PetscCall(dyn.rhsJacobianP(t0, u0, dyn.mode));
  }
  std::vector<Vec> w(ncost), wx(ncost);
  out.gradientP.assign(ncost, std::vector<PetscScalar>(np, 0.0));
  out.gradientU0.assign(ncost, std::vector<PetscScalar>(u0Indices.size(), 0.0));
  for (size_t k = 0; k < ncost; ++k) {
    std::vector<PetscScalar> wall;
    PetscCall(VecDuplicate(X, &w[k]));
    if (dyn.isDAE()) PetscCall(dyn.consistencySolve(lambda_[k], w[k], true));
    else PetscCall(VecCopy(lambda_[k], w[k]));
    PetscCall(gatherToAll(w[k], wall));
    for (size_t i = 0; i < u0Indices.size(); ++i) out.gradientU0[k][i] = wall[u0Indices[i]];
    PetscCall(VecDuplicate(w[k], &wx[k]));
    PetscCall(VecCopy(w[k], wx[k]));
    PetscCall(dyn.zeroAlgebraic(wx[k]));
  }
  if (np) {
    std::vector<std::vector<PetscScalar>> d;
    HS_USER_CALL(dyn.comm(), "initialStateJacobianPTranspose", dyn.model().initialStateJacobianPTranspose(dyn.context(), wx, d));
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
        PetscCall(VecDuplicate(w[k], &wy));
        PetscCall(VecCopy(w[k], wy));
        PetscCall(dyn.zeroDifferential(wy));
        PetscCall(columnDots(dyn.parameterJacobian(), wy, np, gy));
        PetscCall(VecDestroy(&wy));
      }
      for (PetscInt j = 0; j < np; ++j) out.gradientP[k][j] = muall[j] + muExtra[k][j] + d[k][j] - gy[j];
    }
  }
  for (size_t k = 0; k < ncost; ++k) {
    PetscCall(VecDestroy(&w[k]));
    PetscCall(VecDestroy(&wx[k]));
  }
  Vec sol;
  PetscCall(TSGetSolution(ts, &sol));
  PetscCall(VecCopy(finalState, sol));
  PetscCall(VecDestroy(&finalState));
  // Leave the TS ready for another forward solve.
  PetscCall(TSAdjointReset(ts));
  PetscCall(tsDestroyQuadratureTS(ts));
  quadts_ = nullptr;
  PetscCall(tsDestroyTrajectoryObject(ts));
  PetscFunctionReturn(0);
}

} // namespace hybridsens
