#include "util/gather.hpp"

namespace hybridsens {

PetscErrorCode gatherToAll(Vec v, std::vector<PetscScalar> &out) {
  VecScatter scatter;
  Vec all;
  const PetscScalar *a;
  PetscInt n;
  PetscFunctionBeginUser;
  PetscCall(VecScatterCreateToAll(v, &scatter, &all));
  PetscCall(VecScatterBegin(scatter, v, all, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(scatter, v, all, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGetLocalSize(all, &n));
  PetscCall(VecGetArrayRead(all, &a));
  out.assign(a, a + n);
  PetscCall(VecRestoreArrayRead(all, &a));
  PetscCall(VecScatterDestroy(&scatter));
  PetscCall(VecDestroy(&all));
  PetscFunctionReturn(0);
}

} // namespace hybridsens
