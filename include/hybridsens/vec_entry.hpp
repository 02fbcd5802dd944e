// Entries of a distributed Vec by global index: the one helper set for callbacks and reports.
//
//   * OwnedEntries — inside a callback: read and write the entries THIS rank owns. Every rank
//     runs the same code; read(i) gives u[i] where owned and 0 elsewhere (exactly "this rank's
//     contribution" for a value the library sums over ranks), write(i, x) stores on the owner
//     only. Open it on every rank, also ranks that own nothing (see model.hpp, "Ownership").
//   * readOwned / writeOwned — the same for one entry in one call.
//   * globalEntry — after a solve: entry i on every rank (collective; not for inner loops).
//
//   PetscErrorCode terminal(PetscReal, Vec u, const ModeContext &, PetscScalar *value) const override {
//     return readOwned(u, 0, value);  // ψ = u[0]
//   }
//   PetscErrorCode terminalGradient(PetscReal, Vec u, const ModeContext &, Vec psi_u, PetscScalar *) const override {
//     return writeOwned(psi_u, 0, 1.0);  // ψ_u = e_0
//   }
#pragma once

#include <petscvec.h>

namespace hybridsens {

// A view of this rank's part of a Vec, addressed by global index; restored by restore() or,
// on an early return, by the destructor. An index outside [0, global size) is a programming
// error that restore() reports (PETSC_ERR_ARG_OUTOFRANGE); reading or writing it does nothing.
// So is writing through a view taken with Read access (the default): restore() reports it.
class OwnedEntries {
public:
  enum Access { Read, Write };
  OwnedEntries() = default;
  ~OwnedEntries();
  OwnedEntries(const OwnedEntries &) = delete;
  OwnedEntries &operator=(const OwnedEntries &) = delete;

  // VecGetArrayRead (Read) or VecGetArray (Write). Call on every rank of v: restoring a
  // written vector bumps its state, and a rank whose state did not move would answer a later
  // norm from its cache and skip the reduction the other ranks wait in.
  PetscErrorCode get(Vec v, Access access = Read);
  PetscErrorCode restore();

  bool owns(PetscInt i) const { return i >= lo_ && i < hi_; }
  // v[i] if this rank owns i, else 0.
  PetscScalar read(PetscInt i) const {
    check(i);
    return owns(i) ? array_[i - lo_] : 0;
  }
  // v[i] = x if this rank owns i, else nothing. Needs Write access: an owned entry written
  // through a Read view would be lost, so restore() reports it (PETSC_ERR_ARG_WRONGSTATE).
  void write(PetscInt i, PetscScalar x) {
    check(i);
    if (owns(i)) writable_ ? void(writable_[i - lo_] = x) : void(writeToReadView_ = true);
  }
  // v[i] += x if this rank owns i, else nothing. Needs Write access, as write().
  void add(PetscInt i, PetscScalar x) {
    check(i);
    if (owns(i)) writable_ ? void(writable_[i - lo_] += x) : void(writeToReadView_ = true);
  }

private:
  void check(PetscInt i) const {
    if ((i < 0 || i >= size_) && badIndex_ < 0) badIndex_ = i;
  }
  Vec v_ = nullptr;
  const PetscScalar *array_ = nullptr;
  PetscScalar *writable_ = nullptr;  // Write access only
  PetscInt lo_ = 0, hi_ = 0, size_ = 0;
  mutable PetscInt badIndex_ = -1;  // the first out-of-range index used, for restore()
  bool writeToReadView_ = false;    // write() or add() on a Read view, for restore()
};

// *value = v[i] on the rank owning i; untouched elsewhere (outputs are zero on entry, so this
// is that rank's contribution). Call on every rank.
PetscErrorCode readOwned(Vec v, PetscInt i, PetscScalar *value);
// v[i] = x on the rank owning i; the other entries are left as they are. Call on every rank.
PetscErrorCode writeOwned(Vec v, PetscInt i, PetscScalar x);

// Entry i (global index) of v, returned on every rank: the owner reads it and the value is
// summed across the communicator. Collective on v; not for inner loops.
PetscErrorCode globalEntry(Vec v, PetscInt i, PetscScalar *value);

} // namespace hybridsens
