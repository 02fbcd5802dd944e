// The library's default for every linear solve it owns or configures (the integrator's, the DAE
// consistency solves, the step tangent, the Hessian sweeps). Forward and adjoint sensitivities
// agree to round-off only with exact solves (docs/petsc-3.18.md §9), so a direct LU, chosen by
// the system's global size and the number of ranks (docs/parallel.md has the measurements):
//   one rank                              PETSc's LU;
//   several ranks, below kRedundantLUBelow  PCREDUNDANT: every rank factors a copy with PETSc's LU
//                                         (measured 2.7-5x faster than MUMPS at 2 ranks on 6.4k
//                                         and 63k unknowns; exact like the serial LU);
//   several ranks, larger                 MUMPS, whose factor is distributed over the ranks.
// A matrix with structural zeros on its diagonal (an index-2 DAE's) needs a pivoting LU: MUMPS
// on one rank and on large systems; below kRedundantLUBelow on several ranks PCREDUNDANT with a
// serial pivoting LU inside (SuperLU, else MUMPS on each rank's copy) — MUMPS across the ranks
// synchronizes them at every solve: a 42-unknown index-2 DAE's forward + adjoint solve and
// serial reference took 4.4 s at 2 ranks and 11.4 s at 3 with it, 1.2 s and 2.8 s redundant.
// A user's -ksp_type, -pc_type or -pc_factor_mat_solver_type for the KSP's prefix selects the
// plain direct LU (MUMPS in parallel) instead, which those options then change — so that
// e.g. -pc_factor_mat_solver_type superlu_dist alone means an LU by SuperLU_dist.
#pragma once

#include <petscksp.h>

#include <string>

namespace hybridsens {

enum class LinearSolveKind { SerialLU, RedundantLU, RedundantPivotingLU, ParallelDirect };

// Below this many unknowns every rank factors the whole system: on the measured grids (up to 63k
// unknowns) a parallel direct solver's messages per factorization and solve cost more than the
// factorization they share out (docs/parallel.md). Beyond, untested: MUMPS, so that no rank
// has to hold a whole factor of a very large system.
constexpr PetscInt kRedundantLUBelow = 200000;

// The default for a system of globalSize unknowns on `ranks` ranks (needsPivoting: see
// setDirectSolveDefaults).
LinearSolveKind defaultLinearSolve(PetscInt globalSize, PetscMPIInt ranks, bool needsPivoting = false);

// Sets ksp's type and preconditioner to the default for a system of globalSize unknowns on the
// KSP's communicator (globalSize < 0: not known yet — the plain direct LU, MUMPS in parallel).
// Call before KSPSetFromOptions, which lets the command line override it. needsPivoting (a
// matrix with structural zeros on its diagonal, e.g. an index-2 DAE's): a pivoting LU (MUMPS, or
// SuperLU inside PCREDUNDANT), since PETSc's own LU stops at a zero pivot.
PetscErrorCode setDirectSolveDefaults(KSP ksp, PetscInt globalSize = -1, bool needsPivoting = false);

// For a KSP whose defaults were set before its system size was known: applies the default for
// globalSize if the KSP still holds what the library set last (*applied; empty: what
// setDirectSolveDefaults(ksp) sets), and leaves a configuration the program changed through
// the API alone. *applied is updated to what the KSP holds afterwards.
PetscErrorCode refreshDirectSolveDefaults(KSP ksp, PetscInt globalSize, std::string *applied, bool needsPivoting = false);

} // namespace hybridsens
