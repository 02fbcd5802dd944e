#include "util/dense_columns.hpp"

#include "util/gather.hpp"

namespace hybridsens {

// One transposed product for all columns (one reduction): column by column would cost ncols
// reductions, and for a sparse matrix a MatGetColumnVector per column.
PetscErrorCode columnDots(Mat M, Vec v, PetscInt ncols, std::vector<PetscScalar> &out) {
  PetscBool dense;
  PetscFunctionBeginUser;
  out.assign(ncols, 0.0);
  PetscCall(PetscObjectTypeCompareAny((PetscObject)M, &dense, MATSEQDENSE, MATMPIDENSE, ""));
  if (!dense) {  // a sparse ∂f/∂p
    Vec r;
    std::vector<PetscScalar> all;
    PetscCall(MatCreateVecs(M, &r, nullptr));
    PetscCall(MatMultTranspose(M, v, r));
    PetscCall(gatherToAll(r, all));
    PetscCall(VecDestroy(&r));
    for (PetscInt j = 0; j < ncols; ++j) out[j] = all[j];
    PetscFunctionReturn(0);
  }
  // Dense (S, ∂u0/∂p, R_p: n × N): this rank's partial sums, then one reduction. A v with few
  // nonzeros — the gradient of a cost that reads a few state entries, at every step against
  // S — costs O(nnz(v)·N) instead of O(n·N): the zero entries add nothing, and the nonzero
  // ones are summed in the same (row) order as the full product.
  Mat Ml;
  Vec vl, rl;
  PetscInt nl, nc, lda, nz = 0;
  const PetscScalar *a, *x;
  std::vector<PetscScalar> part(ncols, 0.0);
  PetscCall(MatDenseGetLocalMatrix(M, &Ml));
  PetscCall(MatGetSize(Ml, &nl, &nc));
  PetscCheck(ncols <= nc, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "columnDots: %" PetscInt_FMT " columns requested of %" PetscInt_FMT, ncols, nc);
  PetscCall(VecGetArrayRead(v, &x));
  for (PetscInt i = 0; i < nl; ++i) nz += x[i] != 0.0;
  if (8 * nz <= nl) {
    std::vector<PetscInt> rows;
    rows.reserve(nz);
    for (PetscInt i = 0; i < nl; ++i)
      if (x[i] != 0.0) rows.push_back(i);
    PetscCall(MatDenseGetLDA(Ml, &lda));
    PetscCall(MatDenseGetArrayRead(Ml, &a));
    for (PetscInt j = 0; j < ncols; ++j) {
      PetscScalar s = 0;
      for (PetscInt i : rows) s += a[i + j * lda] * x[i];
      part[j] = s;
    }
    PetscCall(MatDenseRestoreArrayRead(Ml, &a));
  } else {
    const PetscScalar *r;
    PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, nl, x, &vl));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, nc, &rl));
    PetscCall(MatMultTranspose(Ml, vl, rl));
    PetscCall(VecGetArrayRead(rl, &r));
    for (PetscInt j = 0; j < ncols; ++j) part[j] = r[j];
    PetscCall(VecRestoreArrayRead(rl, &r));
    PetscCall(VecDestroy(&rl));
    PetscCall(VecDestroy(&vl));
  }
  PetscCall(VecRestoreArrayRead(v, &x));
  PetscCallMPI(MPI_Allreduce(part.data(), out.data(), (int)ncols, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)M)));
  PetscFunctionReturn(0);
}

} // namespace hybridsens
