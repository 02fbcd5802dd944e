// hybridsens/detail/ad_dense.hpp — implementation detail of hybridsens/ad.hpp (ADModel,
// ADCost): the dense path's state access and matrix/vector writes. Nothing here depends on
// the user's model; the functions are compiled once in the hybridsens::ad library
// (src/ad/dense_io.cpp).
//
// The whole state lives on rank 0 of the vectors' communicator; other ranks own nothing. Every
// function still touches the Vec on every rank: VecGetArray/Restore bump the object state
// everywhere, and the callbacks are called collectively.
#pragma once

#include "hybridsens/detail/ad_seed.hpp"
#include "hybridsens/second_order.hpp"

#include <petscmat.h>

#include <vector>

namespace hybridsens {
namespace ad {
namespace detail {

// *owner = whether this rank holds the state (rank 0), *n = its global size; refuses a layout
// where rank 0 does not hold all of it.
PetscErrorCode ownsWholeState(Vec v, PetscInt *n, PetscBool *owner);
// x = the local entries of v (all of them on rank 0, none elsewhere).
PetscErrorCode readLocal(Vec v, std::vector<PetscReal> &x);
// As readLocal; nl zeros when v is null (an absent direction).
PetscErrorCode readLocalOrZero(Vec v, PetscInt nl, std::vector<PetscReal> &x);
// The local entries of v = y (y empty off rank 0).
PetscErrorCode writeLocal(Vec v, const std::vector<PetscReal> &y);
// A static Fad (MaxDerivatives > 0) holds at most MaxDerivatives directions.
PetscErrorCode checkDirections(int nd, int maxDerivatives);
// M(i, col0 + k) = a[i * ncols + k] for rows i < n (rank 0; the caller assembles). Every
// entry is inserted, zeros included: the dense pattern stays the same between calls.
PetscErrorCode setDenseBlock(Mat M, PetscInt n, PetscInt col0, PetscInt ncols, const PetscScalar *a);
// Splits H δz of a scalar L seeded as [u (n) | p (np) | t] into the SecondOrderOutput blocks:
// the Vec part written on every rank (empty off the owner), p and t overwritten everywhere
// (zero where this rank evaluated nothing, L == nullptr: its contribution).
PetscErrorCode writeHessianOutput(const Fad2 *L, PetscInt n, PetscInt np, const SecondOrderOutput &out);

// M(i, col0 + k) = y[i].dx(k), k < ncols, rows i < y.size().
template <class S> PetscErrorCode setDerivativeBlock(Mat M, const std::vector<S> &y, PetscInt col0, PetscInt ncols) {
  const PetscInt n = (PetscInt)y.size();
  std::vector<PetscScalar> a(n * ncols);
  for (PetscInt i = 0; i < n; ++i)
    for (PetscInt k = 0; k < ncols; ++k) a[i * ncols + k] = y[i].dx((int)k);
  return setDenseBlock(M, n, col0, ncols, a.data());
}

// The dense state as Values (whole vector, no index map).
inline Values whole(const std::vector<PetscReal> &x) { return {x.data(), nullptr, (int)x.size()}; }
inline Values whole(const PetscScalar *x, size_t n) { return {x, nullptr, (int)n}; }

} // namespace detail
} // namespace ad
} // namespace hybridsens
