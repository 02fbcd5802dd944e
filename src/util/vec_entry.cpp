#include "hybridsens/vec_entry.hpp"

namespace hybridsens {

PetscErrorCode vecEntry(Vec v, PetscInt i, PetscScalar *value) {
  PetscInt lo, hi, n;
  PetscScalar mine = 0;
  MPI_Comm comm;
  PetscFunctionBeginUser;
  PetscCall(VecGetSize(v, &n));
  PetscCheck(i >= 0 && i < n, PetscObjectComm((PetscObject)v), PETSC_ERR_ARG_OUTOFRANGE, "vecEntry: index %" PetscInt_FMT " outside [0, %" PetscInt_FMT ")", i, n);
  PetscCall(VecGetOwnershipRange(v, &lo, &hi));
  if (i >= lo && i < hi) {
    const PetscScalar *a;
    PetscCall(VecGetArrayRead(v, &a));
    mine = a[i - lo];
    PetscCall(VecRestoreArrayRead(v, &a));
  }
  PetscCall(PetscObjectGetComm((PetscObject)v, &comm));
  PetscCall(MPIU_Allreduce(&mine, value, 1, MPIU_SCALAR, MPIU_SUM, comm));
  PetscFunctionReturn(0);
}

} // namespace hybridsens
