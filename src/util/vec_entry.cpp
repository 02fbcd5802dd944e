#include "hybridsens/vec_entry.hpp"

namespace hybridsens {

OwnedEntries::~OwnedEntries() {
  if (v_) restore();  // an early return: its error is the one being reported
}

PetscErrorCode OwnedEntries::get(Vec v, Access access) {
  PetscFunctionBeginUser;
  PetscCheck(!v_, PetscObjectComm((PetscObject)v), PETSC_ERR_ARG_WRONGSTATE, "OwnedEntries::get: the view is open; restore() it first");
  PetscCall(VecGetSize(v, &size_));
  PetscCall(VecGetOwnershipRange(v, &lo_, &hi_));
  if (access == Write) {
    PetscCall(VecGetArray(v, &writable_));
    array_ = writable_;
  } else PetscCall(VecGetArrayRead(v, &array_));
  v_ = v;
  badIndex_ = -1;
  writeToReadView_ = false;
  PetscFunctionReturn(0);
}

PetscErrorCode OwnedEntries::restore() {
  PetscFunctionBeginUser;
  if (!v_) PetscFunctionReturn(0);
  Vec v = v_;
  v_ = nullptr;
  if (writable_) PetscCall(VecRestoreArray(v, &writable_));
  else PetscCall(VecRestoreArrayRead(v, &array_));
  array_ = nullptr;
  writable_ = nullptr;
  lo_ = hi_ = 0;
  const bool wroteToReadView = writeToReadView_;
  writeToReadView_ = false;
  PetscCheck(badIndex_ < 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "OwnedEntries: index %" PetscInt_FMT " used, outside the vector [0, %" PetscInt_FMT ")",
             badIndex_, size_);
  PetscCheck(!wroteToReadView, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE,
             "OwnedEntries: write() or add() on a view taken for reading: the values were not stored (take it with OwnedEntries::Write)");
  PetscFunctionReturn(0);
}

PetscErrorCode readOwned(Vec v, PetscInt i, PetscScalar *value) {
  OwnedEntries e;
  PetscFunctionBeginUser;
  PetscCall(e.get(v, OwnedEntries::Read));
  if (e.owns(i)) *value = e.read(i);
  else (void)e.read(i);  // records an index outside the vector for restore()
  PetscCall(e.restore());
  PetscFunctionReturn(0);
}

PetscErrorCode writeOwned(Vec v, PetscInt i, PetscScalar x) {
  OwnedEntries e;
  PetscFunctionBeginUser;
  PetscCall(e.get(v, OwnedEntries::Write));
  e.write(i, x);
  PetscCall(e.restore());
  PetscFunctionReturn(0);
}

PetscErrorCode globalEntry(Vec v, PetscInt i, PetscScalar *value) {
  PetscInt n;
  PetscScalar mine = 0;
  MPI_Comm comm;
  PetscFunctionBeginUser;
  PetscCall(VecGetSize(v, &n));
  PetscCheck(i >= 0 && i < n, PetscObjectComm((PetscObject)v), PETSC_ERR_ARG_OUTOFRANGE, "globalEntry: index %" PetscInt_FMT " outside [0, %" PetscInt_FMT ")", i, n);
  PetscCall(readOwned(v, i, &mine));
  PetscCall(PetscObjectGetComm((PetscObject)v, &comm));
  PetscCall(MPIU_Allreduce(&mine, value, 1, MPIU_SCALAR, MPIU_SUM, comm));
  PetscFunctionReturn(0);
}

} // namespace hybridsens
