// The dense AD path's state access and matrix/vector writes (hybridsens/detail/ad_dense.hpp):
// independent of the user's model, so compiled once here rather than in every model's
// translation unit.
#include "hybridsens/detail/ad_dense.hpp"

namespace hybridsens {
namespace ad {
namespace detail {

PetscErrorCode ownsWholeState(Vec v, PetscInt *n, PetscBool *owner) {
  PetscInt nl, N;
  PetscMPIInt rank;
  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(v, &nl));
  PetscCall(VecGetSize(v, &N));
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)v), &rank));
  *owner = rank == 0 ? PETSC_TRUE : PETSC_FALSE;
  PetscCheck(rank == 0 ? nl == N : nl == 0, PETSC_COMM_SELF, PETSC_ERR_SUP,
             "hybridsens AD (dense path): the whole state must live on rank 0 (rank %d owns %" PetscInt_FMT " of %" PetscInt_FMT ")",
             (int)rank, nl, N);
  *n = N;
  PetscFunctionReturn(0);
}

PetscErrorCode readLocal(Vec v, std::vector<PetscReal> &x) {
  const PetscScalar *a;
  PetscInt nl;
  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(v, &nl));
  PetscCall(VecGetArrayRead(v, &a));
  x.assign(a, a + nl);
  PetscCall(VecRestoreArrayRead(v, &a));
  PetscFunctionReturn(0);
}

PetscErrorCode readLocalOrZero(Vec v, PetscInt nl, std::vector<PetscReal> &x) {
  PetscFunctionBeginUser;
  if (v) PetscCall(readLocal(v, x));
  else x.assign(nl, 0.0);
  PetscFunctionReturn(0);
}

PetscErrorCode writeLocal(Vec v, const std::vector<PetscReal> &y) {
  PetscScalar *a;
  PetscInt nl;
  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(v, &nl));
  PetscCheck((size_t)nl == y.size() || nl == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "AD write: size mismatch");
  PetscCall(VecGetArray(v, &a));
  for (PetscInt i = 0; i < nl; ++i) a[i] = y[i];
  PetscCall(VecRestoreArray(v, &a));
  PetscFunctionReturn(0);
}

PetscErrorCode checkDirections(int nd, int maxDerivatives) {
  PetscFunctionBeginUser;
  PetscCheck(maxDerivatives == 0 || nd <= maxDerivatives, PETSC_COMM_SELF, PETSC_ERR_SUP,
             "hybridsens AD: %d derivative directions needed, the static Fad holds %d (raise MaxDerivatives)", nd, maxDerivatives);
  PetscFunctionReturn(0);
}

PetscErrorCode setDenseBlock(Mat M, PetscInt n, PetscInt col0, PetscInt ncols, const PetscScalar *a) {
  std::vector<PetscInt> rows(n), cols(ncols);
  PetscFunctionBeginUser;
  for (PetscInt i = 0; i < n; ++i) rows[i] = i;
  for (PetscInt k = 0; k < ncols; ++k) cols[k] = col0 + k;
  PetscCall(MatSetValues(M, n, rows.data(), ncols, cols.data(), a, INSERT_VALUES));
  PetscFunctionReturn(0);
}

PetscErrorCode writeHessianOutput(const Fad2 *L, PetscInt n, PetscInt np, const SecondOrderOutput &out) {
  std::vector<PetscReal> hu(n, 0.0);
  PetscFunctionBeginUser;
  if (L)
    for (PetscInt i = 0; i < n; ++i) hu[i] = second(*L, (int)i);
  if (out.u) PetscCall(writeLocal(out.u, hu));
  if (out.p)
    for (PetscInt k = 0; k < np; ++k) out.p[k] = L ? second(*L, (int)(n + k)) : 0.0;
  if (out.t) *out.t = L ? second(*L, (int)(n + np)) : 0.0;
  PetscFunctionReturn(0);
}

} // namespace detail
} // namespace ad
} // namespace hybridsens
