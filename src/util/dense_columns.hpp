// Column-wise dot products of a matrix (dense or sparse) with a vector: out[j] = Σ_i M(i,j) v(i)
// for j < ncols, the same on every rank (one transposed product).
#pragma once

#include <petscmat.h>

#include <vector>

namespace hybridsens {

PetscErrorCode columnDots(Mat M, Vec v, PetscInt ncols, std::vector<PetscScalar> &out);

} // namespace hybridsens
