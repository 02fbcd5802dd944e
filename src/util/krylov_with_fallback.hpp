// The library's linear solve for large systems on several ranks: GMRES preconditioned by block
// Jacobi (one block per rank, each factored by PETSc's LU), run to a relative residual of
// kKrylovRtol, inside a shell preconditioner of a PREONLY KSP, so that it can give up:
//
// Block Jacobi converges in a few iterations when the rank blocks meet at a few unknowns (the
// coupled-area grids: 5.5 iterations, every rank factoring only its own block), and not at all
// when the ranks cut a meshed network arbitrarily (ACTIVSg2000 at 2 ranks, rows split by bus
// number: a relative residual of 5e-5 after 100 iterations). A solve that has not converged
// after kKrylovTrialIterations therefore switches this KSP, for the rest of the run, to the
// direct solve the library would use otherwise (a redundant LU, or MUMPS from kRedundantLUBelow
// unknowns), repeats the solve with it, and says so once on the KSP's communicator. Either way
// the solution is exact to round-off, so results do not depend on which one ran.
//
// Options (under the KSP's prefix): -krylov_ksp_rtol, -krylov_ksp_max_it and the other options
// of the inner GMRES; -krylov_sub_pc_type etc. for its blocks (default PETSc's LU); a user's
// -ksp_type / -pc_type replaces all of this (see linear_solve_defaults.hpp).
#pragma once

#include <petscksp.h>

#include <vector>

namespace hybridsens {

// Iterations of the inner GMRES before it gives way to the direct solve.
constexpr PetscInt kKrylovTrialIterations = 50;

// Whether a GMRES residual history (history[i] after i iterations; history[0] the initial one)
// has stalled at round-off: the last kStallWindow iterations did not halve the residual, and it
// is already below maxRelative of the initial one. A block-Jacobi GMRES reaches such a floor when
// the right-hand side is itself at round-off (a guard rate's ẏ solve at rest: |b| = 3e-13, a
// floor of 1.6e-12 relative, above the 1e-12 tolerance); the inner GMRES then counts as
// converged (the solution is as exact as the arithmetic allows, and within the tolerance
// sensitivities accept) instead of giving way to the direct solve. Pure, for tests.
constexpr size_t kStallWindow = 5;
bool stalledAtRoundOff(const std::vector<PetscReal> &history, PetscReal maxRelative);

// Makes ksp's PC (ksp is PREONLY: setLinearSolveKind) the Krylov solve above; globalSize picks the
// fallback (redundant LU below kRedundantLUBelow unknowns, else MUMPS).
PetscErrorCode setKrylovWithDirectFallback(KSP ksp, PetscInt globalSize);

// Whether ksp's Krylov solve has given way to the direct one (false for any other KSP).
PetscErrorCode krylovFellBack(KSP ksp, bool *fellBack);

// The inner GMRES of a KSP set up by setKrylovWithDirectFallback, and (if direct is not null) its
// fallback direct solve (nullptr for any other KSP).
PetscErrorCode innerKrylov(KSP ksp, KSP *krylov, KSP *direct = nullptr);

} // namespace hybridsens
