// Gather a distributed Vec into a std::vector in global ordering.
#pragma once

#include <petscvec.h>

#include <vector>

namespace hybridsens {

// On every rank (for values every rank goes on to use).
PetscErrorCode gatherToAll(Vec v, std::vector<PetscScalar> &out);

// On rank 0 only (out is empty elsewhere): for output only rank 0 writes, so that the other
// ranks do not each hold a copy of the global vector (0.5 MB per vector at 63k states).
PetscErrorCode gatherToZero(Vec v, std::vector<PetscScalar> &out);

} // namespace hybridsens
