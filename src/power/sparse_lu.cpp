#include "sparse_lu.hpp"

#include <algorithm>
#include <cmath>

namespace hybridsens {
namespace power {

SparseLU::~SparseLU() {
  // Destructors cannot report: PETSc's destroy routines only fail on corrupted objects.
  (void)MatDestroy(&F_);
  (void)MatDestroy(&A_);
  (void)VecDestroy(&b_);
  (void)VecDestroy(&x_);
}

PetscErrorCode SparseLU::factor(const PetscReal *values) {
  const PetscInt n = size();
  PetscFunctionBeginUser;
  if (!A_) {
    std::vector<PetscInt> nnz(n);
    for (PetscInt r = 0; r < n; ++r) nnz[r] = rowStart_[r + 1] - rowStart_[r];
    PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, n, n, 0, nnz.data(), &A_));
    PetscCall(MatSetOption(A_, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, n, &b_));
    PetscCall(VecDuplicate(b_, &x_));
  }
  for (PetscInt r = 0; r < n; ++r)
    PetscCall(MatSetValues(A_, 1, &r, rowStart_[r + 1] - rowStart_[r], cols_.data() + rowStart_[r], values + rowStart_[r], INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A_, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A_, MAT_FINAL_ASSEMBLY));
  MatFactorInfo info;
  PetscCall(MatFactorInfoInitialize(&info));
  if (!F_) {  // the symbolic factorization depends on the pattern only: once
    IS rperm, cperm;
    PetscCall(MatGetFactor(A_, MATSOLVERPETSC, MAT_FACTOR_LU, &F_));
    PetscCall(MatGetOrdering(A_, MATORDERINGND, &rperm, &cperm));
    PetscCall(MatLUFactorSymbolic(F_, A_, rperm, cperm, &info));
    PetscCall(ISDestroy(&rperm));
    PetscCall(ISDestroy(&cperm));
  }
  PetscCall(MatLUFactorNumeric(F_, A_, &info));
  MatFactorError err;
  PetscCall(MatFactorGetError(F_, &err));
  if (err != MAT_FACTOR_NOERROR) {
    PetscReal pivot;
    PetscInt row;
    PetscCall(MatFactorGetErrorZeroPivot(F_, &pivot, &row));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MAT_LU_ZRPVT, "the power flow's Jacobian has a zero pivot (%g) in row %" PetscInt_FMT " of its LU factorization",
            (double)pivot, row);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode SparseLU::solve(const PetscReal *b, PetscReal *x) const { return apply(PETSC_FALSE, b, x); }

PetscErrorCode SparseLU::solveTranspose(const PetscReal *b, PetscReal *x) const { return apply(PETSC_TRUE, b, x); }

PetscErrorCode SparseLU::checkBackwardError(PetscReal tol, PetscReal *error) const {
  const PetscInt n = size();
  std::vector<PetscReal> b(n, 1.0), x(n);
  Vec r;
  PetscReal normA, normX, normR;
  PetscFunctionBeginUser;
  PetscCall(solve(b.data(), x.data()));
  PetscCall(VecDuplicate(b_, &r));
  PetscCall(MatMult(A_, x_, r));  // x_, b_ hold the solve's x and b
  PetscCall(VecAXPY(r, -1.0, b_));
  PetscCall(VecNorm(r, NORM_INFINITY, &normR));
  PetscCall(VecDestroy(&r));
  PetscCall(MatNorm(A_, NORM_INFINITY, &normA));
  normX = 0;
  for (PetscReal v : x) normX = std::max(normX, std::fabs(v));
  *error = normR / (normA * normX + 1.0);
  PetscCall(PetscInfo(nullptr, "power flow Jacobian (%" PetscInt_FMT " unknowns): LU backward error %g\n", n, (double)*error));
  PetscCheck(*error <= tol, PETSC_COMM_SELF, PETSC_ERR_NOT_CONVERGED,
             "the power flow's Jacobian: its LU factors (PETSc's, without pivoting) solve with backward error %g > %g: the start's derivatives "
             "would be inaccurate",
             (double)*error, (double)tol);
  PetscFunctionReturn(0);
}

PetscErrorCode SparseLU::apply(PetscBool transpose, const PetscReal *b, PetscReal *x) const {
  const PetscInt n = size();
  PetscScalar *a;
  PetscFunctionBeginUser;
  PetscCheck(F_, PETSC_COMM_SELF, PETSC_ERR_ORDER, "SparseLU: a solve before factor");
  PetscCall(VecGetArrayWrite(b_, &a));
  std::copy(b, b + n, a);
  PetscCall(VecRestoreArrayWrite(b_, &a));
  PetscCall(transpose ? MatSolveTranspose(F_, b_, x_) : MatSolve(F_, b_, x_));
  const PetscScalar *s;
  PetscCall(VecGetArrayRead(x_, &s));
  std::copy(s, s + n, x);
  PetscCall(VecRestoreArrayRead(x_, &s));
  PetscFunctionReturn(0);
}

} // namespace power
} // namespace hybridsens
