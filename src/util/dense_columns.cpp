#include "util/dense_columns.hpp"

#include "util/gather.hpp"

namespace hybridsens {

PetscErrorCode columnDots(Mat M, Vec v, PetscInt ncols, std::vector<PetscScalar> &out) {
  PetscBool dense;
  PetscFunctionBeginUser;
  out.assign(ncols, 0.0);
  PetscCall(PetscObjectTypeCompareAny((PetscObject)M, &dense, MATSEQDENSE, MATMPIDENSE, ""));
  if (!dense) {  // a sparse ∂f/∂p: one transposed product, gathered
    Vec r;
    std::vector<PetscScalar> all;
    PetscCall(MatCreateVecs(M, &r, nullptr));
    PetscCall(MatMultTranspose(M, v, r));
    PetscCall(gatherToAll(r, all));
    PetscCall(VecDestroy(&r));
    for (PetscInt j = 0; j < ncols; ++j) out[j] = all[j];
    PetscFunctionReturn(0);
  }
  for (PetscInt j = 0; j < ncols; ++j) {
    Vec col;
    PetscCall(MatDenseGetColumnVecRead(M, j, &col));
    PetscCall(VecDot(v, col, &out[j]));
    PetscCall(MatDenseRestoreColumnVecRead(M, j, &col));
  }
  PetscFunctionReturn(0);
}

} // namespace hybridsens
