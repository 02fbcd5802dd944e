#include "util/dense_columns.hpp"

namespace hybridsens {

PetscErrorCode columnDots(Mat M, Vec v, PetscInt ncols, std::vector<PetscScalar> &out) {
  PetscFunctionBeginUser;
  out.assign(ncols, 0.0);
  for (PetscInt j = 0; j < ncols; ++j) {
    Vec col;
    PetscCall(MatDenseGetColumnVecRead(M, j, &col));
    PetscCall(VecDot(v, col, &out[j]));
    PetscCall(MatDenseRestoreColumnVecRead(M, j, &col));
  }
  PetscFunctionReturn(0);
}

} // namespace hybridsens
