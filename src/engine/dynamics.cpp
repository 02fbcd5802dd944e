#include "engine/dynamics.hpp"

#include "util/linear_solve_defaults.hpp"
#include "util/petsc_internals.hpp"
#include "util/user_call.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hybridsens {

Dynamics::Dynamics(const HybridModel &model, std::vector<PetscReal> params, PetscInt extraSensitivityColumns)
    : mode(model.initialDiscreteState()), model_(model), params_(std::move(params)),
      extraColumns_(extraSensitivityColumns) {}

Dynamics::~Dynamics() {
  VecDestroy(&templ_);
  VecDestroy(&mass_);
  VecDestroy(&work_);
  VecDestroy(&work2_);
  VecDestroy(&fullUdot_);
  MatDestroy(&J_);
  MatDestroy(&Jp_);
  MatDestroy(&A_);
  KSPDestroy(&consistencyKsp_);
  ISDestroy(&algIS_);
  ISDestroy(&diffIS_);
}

PetscErrorCode Dynamics::setUp() {
  PetscInt n = model_.localSize(), N, lo, hi;
  PetscFunctionBeginUser;
  PetscCall(VecCreateMPI(comm(), n, PETSC_DETERMINE, &templ_));
  PetscCall(VecGetSize(templ_, &N));
  PetscCall(VecGetOwnershipRange(templ_, &lo, &hi));
  PetscCall(VecDuplicate(templ_, &mass_));
  PetscCall(VecDuplicate(templ_, &work_));
  PetscCall(VecDuplicate(templ_, &work2_));

  // Differential / algebraic split, validated against the ownership range.
  std::vector<PetscInt> alg = model_.algebraicIndices();
  std::sort(alg.begin(), alg.end());
  for (PetscInt i : alg)
    PetscCheck(i >= lo && i < hi, comm(), PETSC_ERR_ARG_OUTOFRANGE,
               "algebraicIndices(): index %" PetscInt_FMT " is not owned by this rank (range [%" PetscInt_FMT ",%" PetscInt_FMT "))", i, lo, hi);
  PetscInt nalgLocal = (PetscInt)alg.size();
  PetscCallMPI(MPI_Allreduce(&nalgLocal, &numAlgebraic_, 1, MPIU_INT, MPI_SUM, comm()));
  const PetscInt index = model_.daeIndex();
  PetscCheck(index == 1 || index == 2, comm(), PETSC_ERR_ARG_OUTOFRANGE,
             "daeIndex() returns %" PetscInt_FMT ": 1 (semi-explicit index 1, g_y nonsingular) or 2 (Hessenberg index 2, "
             "algebraic rows 0 = k(t, x, p) with k_x f_y nonsingular) are supported", index);
  PetscCheck(index == 1 || numAlgebraic_ > 0, comm(), PETSC_ERR_ARG_WRONG,
             "daeIndex() returns 2 but algebraicIndices() is empty: an index-2 DAE needs algebraic rows 0 = k(t, x, p)");
  index2_ = index == 2;
  if (index2_) {
    // K (assembleHiddenConstraintMatrix) needs to know which columns, on any rank, are algebraic.
    PetscMPIInt size, nl = (PetscMPIInt)nalgLocal;
    PetscCallMPI(MPI_Comm_size(comm(), &size));
    std::vector<PetscMPIInt> counts(size), displs(size, 0);
    PetscCallMPI(MPI_Allgather(&nl, 1, MPI_INT, counts.data(), 1, MPI_INT, comm()));
    for (PetscMPIInt r = 1; r < size; ++r) displs[r] = displs[r - 1] + counts[r - 1];
    allAlgRows_.resize(numAlgebraic_);
    PetscCallMPI(MPI_Allgatherv(alg.data(), nl, MPIU_INT, allAlgRows_.data(), counts.data(), displs.data(), MPIU_INT, comm()));
    std::sort(allAlgRows_.begin(), allAlgRows_.end());
  }
  diffRows_.clear();
  for (PetscInt i = lo, k = 0; i < hi; ++i) {
    if (k < nalgLocal && alg[k] == i) { ++k; continue; }
    diffRows_.push_back(i);
  }
  algRows_ = alg;
  PetscCall(ISCreateGeneral(comm(), nalgLocal, alg.data(), PETSC_COPY_VALUES, &algIS_));
  PetscCall(ISCreateGeneral(comm(), (PetscInt)diffRows_.size(), diffRows_.data(), PETSC_COPY_VALUES, &diffIS_));
  PetscCall(VecSet(mass_, 1.0));
  PetscCall(VecISSet(mass_, algIS_, 0.0));

  HS_USER_CALL(comm(), "createJacobian", model_.createJacobian(&J_));
  PetscInt m, nn;
  PetscCall(MatGetLocalSize(J_, &m, &nn));
  PetscCheck(m == n && nn == n, comm(), PETSC_ERR_ARG_SIZ,
             "createJacobian(): local size %" PetscInt_FMT "x%" PetscInt_FMT " does not match localSize() = %" PetscInt_FMT, m, nn, n);
  PetscCall(MatSetOption(J_, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(createParameterJacobianMatrix());

  if (isDAE()) {
    PetscCall(KSPCreate(comm(), &consistencyKsp_));
    PetscCall(KSPSetOptionsPrefix(consistencyKsp_, "hs_consistency_"));
    // An index-2 DAE's hidden-constraint matrix [I −f_y; k_x 0] has zeros on its algebraic
    // diagonal: a pivoting LU (MUMPS) factors it where PETSc's own LU stops at a zero pivot.
    PetscCall(setLinearSolveDefaults(consistencyKsp_, N, index2_));
    PetscCall(KSPSetFromOptions(consistencyKsp_));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::createDenseParameterMatrix(Mat *M) const {
  PetscInt n, N;
  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(templ_, &n));
  PetscCall(VecGetSize(templ_, &N));
  PetscCall(MatCreateDense(comm(), n, PETSC_DECIDE, N, std::max<PetscInt>(numSensitivityColumns(), 1), nullptr, M));
  PetscCall(MatZeroEntries(*M));
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::createParameterJacobianMatrix() {
  const PetscInt ncols = std::max<PetscInt>(numSensitivityColumns(), 1);
  PetscInt m, N, n, cols;
  PetscFunctionBeginUser;
  HS_USER_CALL(comm(), "createParameterJacobian", model_.createParameterJacobian(ncols, &Jp_));
  if (!Jp_) {
    PetscCall(createDenseParameterMatrix(&Jp_));
    PetscFunctionReturn(0);
  }
  PetscCall(VecGetLocalSize(templ_, &n));
  PetscCall(MatGetLocalSize(Jp_, &m, nullptr));
  PetscCall(MatGetSize(Jp_, &N, &cols));
  PetscCheck(m == n && cols == ncols, comm(), PETSC_ERR_ARG_SIZ,
             "createParameterJacobian(): %" PetscInt_FMT " local rows x %" PetscInt_FMT " columns, expected %" PetscInt_FMT " x %" PetscInt_FMT,
             m, cols, n, ncols);
  PetscCall(MatSetOption(Jp_, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatAssemblyBegin(Jp_, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(Jp_, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::parameterColumn(PetscInt j, Vec v) const {
  PetscFunctionBeginUser;
  PetscCall(MatGetColumnVector(Jp_, v, j));
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::setExtraSensitivityColumns(PetscInt extra, TS ts) {
  PetscFunctionBeginUser;
  if (extra == extraColumns_ && Jp_) PetscFunctionReturn(0);
  extraColumns_ = extra;
  PetscCall(MatDestroy(&Jp_));
  PetscCall(createParameterJacobianMatrix());
  if (numSensitivityColumns() > 0) {
    if (!isDAE()) {
      PetscCall(TSSetRHSJacobianP(ts, Jp_, RHSJacobianP, this));
      // TSSetUp aliased the TS's ∂f/∂p to the RHS matrix once (ts.c:2538); re-alias to the new one.
      PetscCall(tsRealiasParameterJacobian(ts, Jp_));
    } else PetscCall(TSSetIJacobianP(ts, Jp_, IJacobianP, this));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::attach(TS ts) {
  PetscFunctionBeginUser;
  PetscCall(TSSetProblemType(ts, TS_NONLINEAR));
  if (!isDAE()) {
    PetscCall(TSSetRHSFunction(ts, nullptr, RHSFunction, this));
    PetscCall(TSSetRHSJacobian(ts, J_, J_, RHSJacobian, this));
    if (numSensitivityColumns() > 0) PetscCall(TSSetRHSJacobianP(ts, Jp_, RHSJacobianP, this));
  } else {
    PetscCall(TSSetEquationType(ts, index2_ ? TS_EQ_DAE_SEMI_EXPLICIT_INDEX2 : TS_EQ_DAE_SEMI_EXPLICIT_INDEX1));
    if (index2_) {
      // The step's matrix [I/h − f_x, −f_y; −k_x, 0] has zeros on its algebraic diagonal, where
      // PETSc's own LU stops at a zero pivot: a pivoting LU (MUMPS), still a direct solve (the
      // adjoint solves with its transpose). -pc_factor_mat_solver_type overrides it.
      SNES snes;
      KSP ksp;
      PetscCall(TSGetSNES(ts, &snes));
      PetscCall(SNESGetKSP(snes, &ksp));
      PetscCall(setLinearSolveDefaults(ksp, -1, true));
      PetscCall(SNESSetConvergenceTest(snes, Index2StepConverged, this, nullptr));
    }
    PetscCall(TSSetIFunction(ts, nullptr, IFunction, this));
    PetscCall(TSSetIJacobian(ts, J_, J_, IJacobian, this));
    if (numSensitivityColumns() > 0) PetscCall(TSSetIJacobianP(ts, Jp_, IJacobianP, this));
  }
  PetscFunctionReturn(0);
}

// PETSc's default test, and also converged once the Newton update of the differential
// variables is at round-off of their size. An index-2 step's residual cannot get below
// ε|x|/h on its differential rows (F = M(X − x_n)/h − f), nor its algebraic variables below
// ε|x|/h² (the step's matrix has condition O(h⁻²)): a step shortened to h = 1e-6 by event
// location stalls at a residual far above any fixed -snes_atol, while x has converged.
PetscErrorCode Dynamics::Index2StepConverged(SNES snes, PetscInt it, PetscReal xnorm, PetscReal ynorm, PetscReal fnorm,
                                             SNESConvergedReason *reason, void *ctx) {
  auto *self = static_cast<Dynamics *>(ctx);
  Vec X, Y;
  PetscReal dx, x;
  PetscFunctionBeginUser;
  PetscCall(SNESConvergedDefault(snes, it, xnorm, ynorm, fnorm, reason, nullptr));
  if (*reason != SNES_CONVERGED_ITERATING || it == 0) PetscFunctionReturn(0);
  PetscCall(SNESGetSolution(snes, &X));
  PetscCall(SNESGetSolutionUpdate(snes, &Y));
  PetscCall(VecCopy(Y, self->work_));
  PetscCall(self->zeroAlgebraic(self->work_));
  PetscCall(VecNorm(self->work_, NORM_INFINITY, &dx));
  PetscCall(VecCopy(X, self->work_));
  PetscCall(self->zeroAlgebraic(self->work_));
  PetscCall(VecNorm(self->work_, NORM_INFINITY, &x));
  if (dx <= 1e-14 * (1.0 + x)) *reason = SNES_CONVERGED_SNORM_RELATIVE;
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::checkFinite(Vec v, const char *callback, PetscReal t, const DiscreteState &d) const {
  PetscReal nrm;
  PetscFunctionBeginUser;
  // A callback that wrote through VecGetArray on some ranks only leaves the object state
  // unchanged on the others, whose cached norms would then skip the reduction and desynchronize
  // the ranks: mark the output as modified everywhere.
  PetscCall(markObjectModified((PetscObject)v));
  PetscCall(VecNorm(v, NORM_1, &nrm));
  PetscCheck(std::isfinite(nrm), comm(), PETSC_ERR_FP, "NaN or Inf returned by model callback %s at t = %.17g in discrete state %s",
             callback, (double)t, describe(d).c_str());
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::rhs(PetscReal t, Vec u, const DiscreteState &d, Vec f) {
  PetscFunctionBeginUser;
  HS_USER_CALL(comm(), "rhs", model_.rhs(t, u, context(d), f));
  // (A re-take skips the norm, not the marking: see checkFinite.)
  if (retaking_) PetscCall(markObjectModified((PetscObject)f));
  else PetscCall(checkFinite(f, "rhs", t, d));
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::rhsProbe(PetscReal t, Vec u, const DiscreteState &d, Vec f) {
  PetscFunctionBeginUser;
  HS_USER_CALL(comm(), "rhs", model_.rhs(t, u, context(d), f));
  PetscCall(markObjectModified((PetscObject)f));  // see checkFinite
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::rhsJacobian(PetscReal t, Vec u, const DiscreteState &d) {
  bool hit = false;
  const bool cached = reuse_ && !retaking_;
  PetscFunctionBeginUser;
  if (cached) PetscCall(jacobianCache_.lookup(t, u, d, J_, &hit));
  if (hit) PetscFunctionReturn(0);
  PetscCall(rhsJacobian(t, u, d, J_));
  if (cached) PetscCall(jacobianCache_.store(t, u, d, J_));
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::rhsJacobian(PetscReal t, Vec u, const DiscreteState &d, Mat out) {
  PetscReal nrm;
  PetscFunctionBeginUser;
  PetscCall(MatZeroEntries(out));
  HS_USER_CALL(comm(), "rhsJacobian", model_.rhsJacobian(t, u, context(d), out));
  PetscCall(MatAssemblyBegin(out, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(out, MAT_FINAL_ASSEMBLY));
  if (retaking_) PetscFunctionReturn(0);
  PetscCall(MatNorm(out, NORM_FROBENIUS, &nrm));
  PetscCheck(std::isfinite(nrm), comm(), PETSC_ERR_FP, "NaN or Inf returned by model callback rhsJacobian at t = %.17g in discrete state %s",
             (double)t, describe(d).c_str());
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::rhsTimeDerivative(PetscReal t, Vec u, const DiscreteState &d, Vec ft) {
  PetscFunctionBeginUser;
  if (model_.explicitTime()) {
    HS_USER_CALL(comm(), "rhsTimeDerivative", model_.rhsTimeDerivative(t, u, context(d), ft));
    PetscCall(checkFinite(ft, "rhsTimeDerivative", t, d));
    PetscFunctionReturn(0);
  }
  // A model that does not read t returns bit-identical values at another time; anything else
  // means it depends on t and the event derivatives would silently miss ∂f/∂t.
  const PetscReal dt = 1e-3 * std::max<PetscReal>(1, std::fabs(t));
  PetscReal diff;
  PetscCall(rhs(t, u, d, ft));
  PetscCall(rhs(t + dt, u, d, work2_));
  PetscCall(VecAXPY(work2_, -1.0, ft));
  PetscCall(VecNorm(work2_, NORM_INFINITY, &diff));
  PetscCheck(diff == 0, comm(), PETSC_ERR_USER_INPUT,
             "the model's rhs depends on t explicitly (f(t + %g) - f(t) = %g at t = %.17g in discrete state %s), but "
             "explicitTime() is false: override HybridModel::explicitTime() and rhsTimeDerivative() (∂f/∂t enters the "
             "event derivatives)",
             (double)dt, (double)diff, (double)t, describe(d).c_str());
  PetscCall(VecZeroEntries(ft));
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::rhsJacobianP(PetscReal t, Vec u, const DiscreteState &d) {
  bool hit = false;
  PetscFunctionBeginUser;
  if (reuse_) PetscCall(parameterJacobianCache_.lookup(t, u, d, Jp_, &hit));
  if (hit) PetscFunctionReturn(0);
  PetscCall(evaluateParameterJacobian(t, u, d));
  if (reuse_) PetscCall(parameterJacobianCache_.store(t, u, d, Jp_));
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::evaluateParameterJacobian(PetscReal t, Vec u, const DiscreteState &d) {
  PetscInt m, N, lda;
  const PetscScalar *a;
  PetscBool bad = PETSC_FALSE, dense;
  PetscFunctionBeginUser;
  PetscCall(MatZeroEntries(Jp_));
  HS_USER_CALL(comm(), "rhsJacobianP", model_.rhsJacobianP(t, u, context(d), Jp_));
  PetscCall(MatAssemblyBegin(Jp_, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(Jp_, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)Jp_, &dense, MATSEQDENSE, MATMPIDENSE, ""));
  if (!dense) {
    PetscReal nrm;
    PetscCall(MatNorm(Jp_, NORM_FROBENIUS, &nrm));
    PetscCheck(std::isfinite(nrm), comm(), PETSC_ERR_FP, "NaN or Inf returned by model callback rhsJacobianP at t = %.17g in discrete state %s",
               (double)t, describe(d).c_str());
    PetscFunctionReturn(0);
  }
  // Finiteness in one pass over the local block (MatNorm costs several times more).
  PetscCall(MatGetLocalSize(Jp_, &m, nullptr));
  PetscCall(MatGetSize(Jp_, nullptr, &N));
  PetscCall(MatDenseGetLDA(Jp_, &lda));
  PetscCall(MatDenseGetArrayRead(Jp_, &a));
  for (PetscInt j = 0; j < N && !bad; ++j)
    for (PetscInt i = 0; i < m; ++i)
      if (!std::isfinite(a[i + j * lda])) bad = PETSC_TRUE;
  PetscCall(MatDenseRestoreArrayRead(Jp_, &a));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPIU_BOOL, MPI_LOR, comm()));
  PetscCheck(!bad, comm(), PETSC_ERR_FP, "NaN or Inf returned by model callback rhsJacobianP at t = %.17g in discrete state %s",
             (double)t, describe(d).c_str());
  PetscFunctionReturn(0);
}

// ---- TS callbacks: always in the current discrete state `mode` --------------------------

PetscErrorCode Dynamics::RHSFunction(TS, PetscReal t, Vec u, Vec f, void *ctx) {
  auto *self = static_cast<Dynamics *>(ctx);
  PetscFunctionBeginUser;
  PetscCall(self->rhs(t, u, self->mode, f));
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::RHSJacobian(TS, PetscReal t, Vec u, Mat A, Mat, void *ctx) {
  auto *self = static_cast<Dynamics *>(ctx);
  PetscFunctionBeginUser;
  PetscCheck(A == self->J_, self->comm(), PETSC_ERR_PLIB, "unexpected Jacobian matrix");
  PetscCall(self->rhsJacobian(t, u, self->mode));
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::RHSJacobianP(TS, PetscReal t, Vec u, Mat, void *ctx) {
  auto *self = static_cast<Dynamics *>(ctx);
  PetscFunctionBeginUser;
  PetscCall(self->rhsJacobianP(t, u, self->mode));
  PetscFunctionReturn(0);
}

// F(t, u, u̇) = M u̇ - f(t, u)
PetscErrorCode Dynamics::IFunction(TS, PetscReal t, Vec u, Vec udot, Vec F, void *ctx) {
  auto *self = static_cast<Dynamics *>(ctx);
  PetscFunctionBeginUser;
  PetscCall(self->rhs(t, u, self->mode, F));
  PetscCall(VecPointwiseMult(self->work2_, self->mass_, udot));
  PetscCall(VecAYPX(F, -1.0, self->work2_));
  PetscFunctionReturn(0);
}

// dF/du + shift dF/du̇ = shift M - f_u. The Jacobian does not depend on u̇, so PETSc's
// stale-Xdot adjoint evaluation (docs/petsc-3.18.md §5) is harmless here.
PetscErrorCode Dynamics::IJacobian(TS, PetscReal t, Vec u, Vec, PetscReal shift, Mat A, Mat, void *ctx) {
  auto *self = static_cast<Dynamics *>(ctx);
  PetscFunctionBeginUser;
  PetscCheck(A == self->J_, self->comm(), PETSC_ERR_PLIB, "unexpected Jacobian matrix");
  PetscCall(self->rhsJacobian(t, u, self->mode));
  PetscCall(MatScale(A, -1.0));
  PetscCall(VecAXPBY(self->work2_, shift, 0.0, self->mass_));
  PetscCall(MatDiagonalSet(A, self->work2_, ADD_VALUES));
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::IJacobianP(TS, PetscReal t, Vec u, Vec, PetscReal, Mat, void *ctx) {
  auto *self = static_cast<Dynamics *>(ctx);
  PetscFunctionBeginUser;
  PetscCall(self->rhsJacobianP(t, u, self->mode));
  PetscCall(MatScale(self->Jp_, -1.0));
  PetscFunctionReturn(0);
}

// ---- DAE machinery ----------------------------------------------------------------------

PetscErrorCode Dynamics::zeroAlgebraic(Vec v) const {
  PetscFunctionBeginUser;
  if (isDAE()) PetscCall(VecISSet(v, algIS_, 0.0));
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::zeroDifferential(Vec v) const {
  PetscFunctionBeginUser;
  PetscCall(VecISSet(v, diffIS_, 0.0));
  PetscFunctionReturn(0);
}

// A = J with the differential rows replaced by identity rows. A keeps that pattern (J's on the
// algebraic rows, the diagonal on the differential ones) from one call to the next: only the
// algebraic rows' values are refreshed, so the LU factorization reuses its ordering and
// symbolic phase. A is rebuilt when J's nonzero pattern changed (a model may add entries).
// (Copying J into A with DIFFERENT_NONZERO_PATTERN at every call re-inserted every entry into
// the compressed A and refactored symbolically: ≈ 30 % of a plain DAE solve with guards.)
PetscErrorCode Dynamics::setConsistencyPoint(PetscReal t, Vec u, const DiscreteState &d) {
  PetscObjectState jState;
  PetscFunctionBeginUser;
  if (index2_) {
    // Index 2: consistencySolve is the projection onto the differential rows (no matrix).
    consistencyT_ = t;
    consistencyMode_ = d;
    PetscFunctionReturn(0);
  }
  PetscCall(rhsJacobian(t, u, d));
  PetscCall(MatGetNonzeroState(J_, &jState));
  if (!A_ || jState != consistencyJState_) {
    // The same Mat object throughout: its nonzero state tells the factorization to start over.
    if (!A_) {
      PetscCall(MatDuplicate(J_, MAT_COPY_VALUES, &A_));
      PetscCall(MatSetOption(A_, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    } else PetscCall(MatCopy(J_, A_, DIFFERENT_NONZERO_PATTERN));
    PetscCall(MatZeroRows(A_, (PetscInt)diffRows_.size(), diffRows_.data(), 1.0, nullptr, nullptr));
    // Every algebraic row gets a diagonal entry (an explicit zero where rhsJacobian has none):
    // PETSc's LU refuses a matrix without one ("missing diagonal entry") before it looks at the
    // values, which hid the actual problem, a singular g_y, behind a message about storage. With
    // the entry, a singular g_y fails the factorization and consistencySolve names it; a g_y
    // that is regular with a zero diagonal is factored by a pivoting LU (MUMPS).
    for (PetscInt i : algRows_) PetscCall(MatSetValue(A_, i, i, 0.0, ADD_VALUES));
    PetscCall(MatAssemblyBegin(A_, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A_, MAT_FINAL_ASSEMBLY));
    consistencyJState_ = jState;
  } else {
    for (PetscInt i : algRows_) {
      PetscInt nc;
      const PetscInt *cols;
      const PetscScalar *vals;
      PetscCall(MatGetRow(J_, i, &nc, &cols, &vals));
      PetscCall(MatSetValues(A_, 1, &i, nc, cols, vals, INSERT_VALUES));
      PetscCall(MatRestoreRow(J_, i, &nc, &cols, &vals));
    }
    PetscCall(MatAssemblyBegin(A_, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A_, MAT_FINAL_ASSEMBLY));
  }
  PetscCall(KSPSetOperators(consistencyKsp_, A_, A_));
  PetscCall(KSPSetUp(consistencyKsp_));
  consistencyT_ = t;
  consistencyMode_ = d;
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::consistencySolve(Vec b, Vec out, bool transpose) {
  KSPConvergedReason reason;
  PetscFunctionBeginUser;
  if (index2_) {
    // Φ_u = P_x R_u, Φ_p = P_x R_p, Φ_t = P_x R_t and the initial S = [S_x; 0] (docs/index2-daes.md
    // §4): a backward Euler step reads only M·u of its start, so the rows of the reinitialized
    // y never reach a later state. Both sweeps use this one definition; they stay transposes.
    if (b != out) PetscCall(VecCopy(b, out));
    PetscCall(zeroAlgebraic(out));
    PetscFunctionReturn(0);
  }
  if (transpose) PetscCall(KSPSolveTranspose(consistencyKsp_, b, out));
  else PetscCall(KSPSolve(consistencyKsp_, b, out));
  PetscCall(KSPGetConvergedReason(consistencyKsp_, &reason));
  PetscCheck(reason >= 0, comm(), PETSC_ERR_NOT_CONVERGED,
             "DAE consistency solve failed (%s) at t = %.17g in discrete state %s: the algebraic block g_y of model callback "
             "rhsJacobian (the algebraic rows' derivative with respect to the algebraic variables) is singular there, so the DAE "
             "is not of index 1 (or g_y has a zero on its diagonal, which LU without pivoting cannot factor: try "
             "-hs_consistency_pc_factor_mat_solver_type mumps)",
             KSPConvergedReasons[reason], (double)consistencyT_, describe(consistencyMode_).c_str());
  PetscFunctionReturn(0);
}

// out = u̇ from f (only its differential rows are read): A out = [f_x; -g_t]. out may be f.
PetscErrorCode Dynamics::solveTimeDerivative(PetscReal t, Vec u, const DiscreteState &d, Vec f, Vec out) {
  PetscInt lo;
  PetscScalar *b;
  const PetscScalar *fa;
  PetscFunctionBeginUser;
  if (index2_) {
    // ẏ of an index-2 DAE needs second derivatives of k (differentiate k_x f + k_t = 0 once
    // more); it is never read (docs/index2-daes.md §4), so its rows are zero, not a guess that
    // something could use: completeTimeDerivative, the one reader that would, refuses.
    if (f != out) PetscCall(VecCopy(f, out));
    PetscCall(zeroAlgebraic(out));
    PetscFunctionReturn(0);
  }
  PetscCall(rhsTimeDerivative(t, u, d, work_));
  PetscCall(VecScale(work_, -1.0));
  PetscCall(zeroDifferential(work_));
  PetscCall(VecGetOwnershipRange(work_, &lo, nullptr));
  PetscCall(VecGetArray(work_, &b));
  PetscCall(VecGetArrayRead(f, &fa));
  for (PetscInt i : diffRows_) b[i - lo] += fa[i - lo];
  PetscCall(VecRestoreArrayRead(f, &fa));
  PetscCall(VecRestoreArray(work_, &b));
  PetscCall(setConsistencyPoint(t, u, d));
  PetscCall(consistencySolve(work_, out, false));
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::timeDerivative(PetscReal t, Vec u, const DiscreteState &d, Vec udot) {
  PetscFunctionBeginUser;
  PetscCall(rhs(t, u, d, udot));
  if (isDAE()) PetscCall(solveTimeDerivative(t, u, d, udot, udot));
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::differentialTimeDerivative(PetscReal t, Vec u, const DiscreteState &d, Vec udot) {
  PetscFunctionBeginUser;
  PetscCall(rhs(t, u, d, udot));
  if (isDAE()) PetscCall(VecISSet(udot, algIS_, std::numeric_limits<PetscReal>::quiet_NaN()));
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::completeTimeDerivative(PetscReal t, Vec u, const DiscreteState &d, Vec udot) {
  PetscInt lo;
  PetscScalar *out;
  const PetscScalar *full;
  PetscFunctionBeginUser;
  if (!isDAE()) PetscFunctionReturn(0);
  PetscCheck(!index2_, comm(), PETSC_ERR_SUP,
             "a guard's rate (model callback guardRates) reads an algebraic variable of the index-2 DAE at t = %.17g in discrete "
             "state %s: its time derivative would need second derivatives of the constraint; write guards of an index-2 DAE on "
             "differential variables only",
             (double)t, describe(d).c_str());
  if (!fullUdot_) PetscCall(VecDuplicate(templ_, &fullUdot_));
  PetscCall(solveTimeDerivative(t, u, d, udot, fullUdot_));  // f_x is already in udot
  PetscCall(VecGetOwnershipRange(udot, &lo, nullptr));
  PetscCall(VecGetArrayRead(fullUdot_, &full));
  PetscCall(VecGetArray(udot, &out));
  for (PetscInt i : algRows_) out[i - lo] = full[i - lo];
  PetscCall(VecRestoreArray(udot, &out));
  PetscCall(VecRestoreArrayRead(fullUdot_, &full));
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::constraintResidual(PetscReal t, Vec u, const DiscreteState &d, PetscReal *norm) {
  PetscFunctionBeginUser;
  *norm = 0;
  if (!isDAE()) PetscFunctionReturn(0);
  PetscCall(rhs(t, u, d, work_));
  PetscCall(zeroDifferential(work_));
  PetscCall(VecNorm(work_, NORM_INFINITY, norm));
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::reinitialize(PetscReal t, Vec u, const DiscreteState &d, const char *where) {
  const PetscInt maxit = 50;
  PetscReal res0 = 0, res = 0, unorm;
  PetscFunctionBeginUser;
  if (!isDAE()) PetscFunctionReturn(0);
  if (index2_) {
    // The differential state must already lie on k = 0: the library does not choose a
    // projection for the model (which one is physics: a constraint impulse, a mass metric), and
    // the derivative of the one the model chose must be in its reset Jacobian.
    const PetscReal tol = 1e-10;
    PetscCall(assembleHiddenConstraintMatrix(t, u, d));  // refuses k reading y before k is judged
    PetscCall(rhs(t, u, d, work_));
    PetscCall(zeroDifferential(work_));
    PetscCall(VecNorm(work_, NORM_INFINITY, &res));
    PetscCall(VecNorm(u, NORM_INFINITY, &unorm));
    PetscCheck(res <= tol * (1.0 + unorm), comm(), PETSC_ERR_USER_INPUT,
               "index-2 DAE: the state %s at t = %.17g in discrete state %s is off the constraint, |k|_inf = %g > %g (1 + |u|_inf): "
               "initialState and every reset must put the differential variables on k(t, x, p) = 0 (project them, and include the "
               "projection's derivative in the reset Jacobian); after a step, tighten -snes_atol / -snes_rtol",
               where, (double)t, describe(d).c_str(), (double)res, (double)tol);
    PetscCall(solveHiddenConstraint(t, u, d, where));
    PetscFunctionReturn(0);
  }
  for (PetscInt it = 0; it < maxit; ++it) {
    PetscCall(rhs(t, u, d, work_));
    PetscCall(zeroDifferential(work_));
    PetscCall(VecNorm(work_, NORM_INFINITY, &res));
    PetscCall(VecNorm(u, NORM_INFINITY, &unorm));
    if (it == 0) res0 = res;
    // Converged when g is zero to round-off of the state's scale.
    if (res <= 1e-14 * (1.0 + unorm) || (it > 0 && res == 0)) PetscFunctionReturn(0);
    PetscCall(setConsistencyPoint(t, u, d));
    PetscCall(consistencySolve(work_, work2_, false));
    PetscCall(VecAXPY(u, -1.0, work2_)); // Newton: A δ = [0; g], y -= δ_y (δ_x = 0)
  }
  SETERRQ(comm(), PETSC_ERR_NOT_CONVERGED,
          "DAE reinitialization failed %s at t = %.17g in discrete state %s: |g| went from %g to %g in %" PetscInt_FMT " Newton iterations",
          where, (double)t, describe(d).c_str(), (double)res0, (double)res, maxit);
}

// K = [I −f_y; k_x 0] at (t, u, d): the differential rows keep only −f_y (the columns of the
// algebraic variables) next to an identity, the algebraic rows are J's, i.e. [k_x 0]. K [a; δy]
// = [0; h] gives a = f_y δy and k_x f_y δy = h: one Newton step on the hidden constraint
// h(y) = k_x f(t, x, y) + k_t = 0 with x fixed, without forming k_x f_y. K is regular exactly
// when k_x f_y is, the index-2 condition.
PetscErrorCode Dynamics::assembleHiddenConstraintMatrix(PetscReal t, Vec u, const DiscreteState &d) {
  PetscInt lo, hi;
  PetscFunctionBeginUser;
  PetscCall(rhsJacobian(t, u, d));
  if (!A_) {
    PetscCall(MatDuplicate(J_, MAT_COPY_VALUES, &A_));
    PetscCall(MatSetOption(A_, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  } else PetscCall(MatCopy(J_, A_, DIFFERENT_NONZERO_PATTERN));
  PetscCall(MatSetOption(A_, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatSetOption(A_, MAT_KEEP_NONZERO_PATTERN, PETSC_TRUE));  // −f_y goes back into the zeroed rows
  PetscCall(MatZeroRows(A_, (PetscInt)diffRows_.size(), diffRows_.data(), 1.0, nullptr, nullptr));
  PetscCall(MatGetOwnershipRange(J_, &lo, &hi));
  auto isAlgebraic = [&](PetscInt col) { return std::binary_search(allAlgRows_.begin(), allAlgRows_.end(), col); };
  PetscInt badRow = -1, badCol = -1;
  for (PetscInt i = lo; i < hi; ++i) {
    const bool algRow = std::binary_search(algRows_.begin(), algRows_.end(), i);
    PetscInt nc;
    const PetscInt *cols;
    const PetscScalar *vals;
    PetscCall(MatGetRow(J_, i, &nc, &cols, &vals));
    std::vector<PetscInt> c;
    std::vector<PetscScalar> v;
    for (PetscInt k = 0; k < nc; ++k) {
      if (!isAlgebraic(cols[k])) continue;
      if (algRow && vals[k] != 0.0 && badRow < 0) badRow = i, badCol = cols[k];
      if (!algRow) c.push_back(cols[k]), v.push_back(-vals[k]);
    }
    PetscCall(MatRestoreRow(J_, i, &nc, &cols, &vals));
    if (!c.empty()) PetscCall(MatSetValues(A_, 1, &i, (PetscInt)c.size(), c.data(), v.data(), INSERT_VALUES));
    if (algRow) PetscCall(MatSetValue(A_, i, i, 0.0, INSERT_VALUES));  // LU wants the entry to exist (k_y = 0, checked)
  }
  PetscCall(MatAssemblyBegin(A_, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A_, MAT_FINAL_ASSEMBLY));
  PetscInt bad[2] = {badRow, badCol};
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, bad, 2, MPIU_INT, MPI_MAX, comm()));
  PetscCheck(bad[0] < 0, comm(), PETSC_ERR_ARG_WRONG,
             "daeIndex() is 2 but model callback rhsJacobian's algebraic row %" PetscInt_FMT " depends on algebraic variable %" PetscInt_FMT
             " at t = %.17g in discrete state %s: the constraints of a Hessenberg index-2 DAE read only t, x and p",
             bad[0], bad[1], (double)t, describe(d).c_str());
  PetscCall(KSPSetOperators(consistencyKsp_, A_, A_));
  PetscCall(KSPSetUp(consistencyKsp_));
  PetscFunctionReturn(0);
}

// y from the hidden constraint h(y) = k_x f(t, x, y) + k_t = 0 with x fixed (Newton with K).
PetscErrorCode Dynamics::solveHiddenConstraint(PetscReal t, Vec u, const DiscreteState &d, const char *where) {
  const PetscInt maxit = 50;
  PetscReal res = 0, step = 0, unorm;
  KSPConvergedReason reason;
  PetscFunctionBeginUser;
  if (!fullUdot_) PetscCall(VecDuplicate(templ_, &fullUdot_));
  for (PetscInt it = 0; it < maxit; ++it) {
    PetscCall(rhsTimeDerivative(t, u, d, fullUdot_));  // first: it uses work2_ as scratch
    PetscCall(rhs(t, u, d, work_));
    PetscCall(zeroAlgebraic(work_));  // P_x f
    PetscCall(assembleHiddenConstraintMatrix(t, u, d));
    PetscCall(MatMult(J_, work_, work2_));  // algebraic rows: k_x f
    PetscCall(VecAXPY(work2_, 1.0, fullUdot_));
    PetscCall(zeroDifferential(work2_));  // [0; h]
    PetscCall(VecNorm(work2_, NORM_INFINITY, &res));
    PetscCall(KSPSolve(consistencyKsp_, work2_, fullUdot_));
    PetscCall(KSPGetConvergedReason(consistencyKsp_, &reason));
    PetscCheck(reason >= 0, comm(), PETSC_ERR_NOT_CONVERGED,
               "index-2 DAE: the hidden constraint k_x f + k_t = 0 cannot be solved for the algebraic variables %s at t = %.17g in "
               "discrete state %s (%s): k_x f_y (from model callback rhsJacobian) is singular there, so the DAE is not of index 2",
               where, (double)t, describe(d).c_str(), KSPConvergedReasons[reason]);
    PetscCall(zeroDifferential(fullUdot_));  // only y moves
    PetscCall(VecAXPY(u, -1.0, fullUdot_));
    PetscCall(VecNorm(fullUdot_, NORM_INFINITY, &step));
    PetscCall(VecNorm(u, NORM_INFINITY, &unorm));
    // Newton converges quadratically: a step at round-off of the state leaves y exact to round-off.
    if (step <= 1e-13 * (1.0 + unorm)) PetscFunctionReturn(0);
  }
  SETERRQ(comm(), PETSC_ERR_NOT_CONVERGED,
          "index-2 DAE: the hidden constraint k_x f + k_t = 0 did not converge %s at t = %.17g in discrete state %s (|h| = %g, last "
          "Newton step %g after %" PetscInt_FMT " iterations)",
          where, (double)t, describe(d).c_str(), (double)res, (double)step, maxit);
}

} // namespace hybridsens
