// Gather a distributed Vec into a std::vector in global ordering (on every rank).
#pragma once

#include <petscvec.h>

#include <vector>

namespace hybridsens {

PetscErrorCode gatherToAll(Vec v, std::vector<PetscScalar> &out);

} // namespace hybridsens
