#include "util/dense_columns.hpp"

#include "util/gather.hpp"

namespace hybridsens {

// One transposed product (one reduction) for all columns, dense or sparse: column by column
// would cost ncols reductions, and for a sparse matrix MatGetColumnVector per column.
PetscErrorCode columnDots(Mat M, Vec v, PetscInt ncols, std::vector<PetscScalar> &out) {
  Vec r;
  std::vector<PetscScalar> all;
  PetscFunctionBeginUser;
  out.assign(ncols, 0.0);
  PetscCall(MatCreateVecs(M, &r, nullptr));
  PetscCall(MatMultTranspose(M, v, r));
  PetscCall(gatherToAll(r, all));
  PetscCall(VecDestroy(&r));
  for (PetscInt j = 0; j < ncols; ++j) out[j] = all[j];
  PetscFunctionReturn(0);
}

} // namespace hybridsens
