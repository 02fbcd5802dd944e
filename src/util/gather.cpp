#include "util/gather.hpp"

namespace hybridsens {

namespace {

// One implementation for both targets: PETSc's scatter to all or to rank 0 (whose target Vec
// has length 0 on the other ranks).
PetscErrorCode gather(Vec v, bool toAll, std::vector<PetscScalar> &out) {
  VecScatter scatter;
  Vec all;
  const PetscScalar *a;
  PetscInt n;
  PetscFunctionBeginUser;
  if (toAll) PetscCall(VecScatterCreateToAll(v, &scatter, &all));
  else PetscCall(VecScatterCreateToZero(v, &scatter, &all));
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

} // namespace

PetscErrorCode gatherToAll(Vec v, std::vector<PetscScalar> &out) { return gather(v, true, out); }

PetscErrorCode gatherToZero(Vec v, std::vector<PetscScalar> &out) { return gather(v, false, out); }

} // namespace hybridsens
