// Reading single entries of a distributed state after a solve (for reports and tables).
#pragma once

#include <petscvec.h>

namespace hybridsens {

// Entry i (global index) of v, returned on every rank: the owner reads it and the value is
// summed across the communicator. Collective on v; not for inner loops.
PetscErrorCode vecEntry(Vec v, PetscInt i, PetscScalar *value);

} // namespace hybridsens
