// Column-wise dot products of a dense matrix with a vector: out[j] = Σ_i M(i,j) v(i), the
// same on every rank (one reduction per column).
#pragma once

#include <petscmat.h>

#include <vector>

namespace hybridsens {

PetscErrorCode columnDots(Mat M, Vec v, PetscInt ncols, std::vector<PetscScalar> &out);

} // namespace hybridsens
