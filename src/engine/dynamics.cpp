#include "engine/dynamics.hpp"

#include "util/direct_solver.hpp"
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
    PetscCall(setDirectSolveDefaults(consistencyKsp_, N));
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
    PetscCall(TSSetEquationType(ts, TS_EQ_DAE_SEMI_EXPLICIT_INDEX1));
    PetscCall(TSSetIFunction(ts, nullptr, IFunction, this));
    PetscCall(TSSetIJacobian(ts, J_, J_, IJacobian, this));
    if (numSensitivityColumns() > 0) PetscCall(TSSetIJacobianP(ts, Jp_, IJacobianP, this));
  }
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
  PetscCall(checkFinite(f, "rhs", t, d));
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::rhsJacobian(PetscReal t, Vec u, const DiscreteState &d) {
  bool hit = false;
  PetscFunctionBeginUser;
  if (reuse_) PetscCall(jacobianCache_.lookup(t, u, d, J_, &hit));
  if (hit) PetscFunctionReturn(0);
  PetscCall(rhsJacobian(t, u, d, J_));
  if (reuse_) PetscCall(jacobianCache_.store(t, u, d, J_));
  PetscFunctionReturn(0);
}

PetscErrorCode Dynamics::rhsJacobian(PetscReal t, Vec u, const DiscreteState &d, Mat out) {
  PetscReal nrm;
  PetscFunctionBeginUser;
  PetscCall(MatZeroEntries(out));
  HS_USER_CALL(comm(), "rhsJacobian", model_.rhsJacobian(t, u, context(d), out));
  PetscCall(MatAssemblyBegin(out, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(out, MAT_FINAL_ASSEMBLY));
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

} // namespace hybridsens
