// The library's default for every linear solve it owns or configures: forward and adjoint
// sensitivities agree to round-off only with exact solves (docs/petsc-3.18.md §9), so a direct LU
// (PETSc's serially, MUMPS in parallel). Options for the KSP's prefix may override.
#pragma once

#include <petscksp.h>

namespace hybridsens {

PetscErrorCode setDirectSolveDefaults(KSP ksp);

} // namespace hybridsens
