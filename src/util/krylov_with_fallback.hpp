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
// of the inner GMRES; -krylov_ksp_reuse_blocks (below); -krylov_sub_pc_type etc. for its blocks
// (default PETSc's LU); a user's -ksp_type / -pc_type replaces all of this (see
// linear_solve_defaults.hpp).
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

// Keeping the blocks' factorization. Factoring costs as much as several block-Jacobi GMRES
// iterations (63k-state grid, 2 ranks: 3.2 ms against about 0.7 ms), and the operators of
// consecutive Newton iterations and time steps differ little: with the factorization of an
// earlier operator, GMRES (which always applies the current operator) converges in about as many
// iterations. Where allowed, a solve keeps the blocks' factorization until one needs more than
// kReuseExtraIterations iterations beyond the first solve after the last factorization; then the
// next solve factors. (Measured on that grid, stage time of a 2-rank simulation: 0 extra
// iterations 2.00-2.11 s, 1: 2.10-2.15 s, 3: 2.11-2.17 s, factoring at every solve 2.31 s.)
// A solve with kept blocks that needs more than kReuseGiveUpIterations beyond that, or stalls,
// is repeated with fresh blocks (a stall with kept blocks is slow progress, not round-off:
// counted as converged, such solves ended at 4e-12..1e-10 of their initial residual).
//
// Allowed only for the Newton solves of forward steps (and the event location's slopes taken
// with their matrix), where the linear solve's accuracy changes the Newton iterates but not what
// they converge to: on the 63k-state grid at 2 ranks the adjoint gradients stayed within 1.6e-13
// of serial ones. Sensitivity solves need the full accuracy of their own tolerance, which a
// slower-converging GMRES stopped at 1e-12 does not give to the same degree (with kept blocks in
// the transposed and tangent-linear solves: 1.3e-12 from serial gradients, 3e-12 between forward
// and adjoint ones). Steps re-taken from a checkpoint must repeat the stored bits, so the
// engine does not allow it when checkpointing.
constexpr PetscInt kReuseExtraIterations = 0;
constexpr PetscInt kReuseGiveUpIterations = 4;

// Whether the solves of ksp may keep the blocks' factorization of an earlier operator (a no-op
// for a KSP not set up by setKrylovWithDirectFallback). Off unless set.
PetscErrorCode allowFactorizationReuse(KSP ksp, bool allowed);
// The next solve of ksp factors its operator whatever the iteration counts (a new run starts
// with nothing kept from the last one, so that a run's results depend on its inputs alone).
PetscErrorCode factorAtNextSolve(KSP ksp);

// Makes ksp's PC (ksp is PREONLY: setLinearSolveKind) the Krylov solve above; globalSize picks the
// fallback (redundant LU below kRedundantLUBelow unknowns, else MUMPS).
PetscErrorCode setKrylovWithDirectFallback(KSP ksp, PetscInt globalSize);

// Whether ksp's Krylov solve has given way to the direct one (false for any other KSP).
PetscErrorCode krylovFellBack(KSP ksp, bool *fellBack);

// The inner GMRES of a KSP set up by setKrylovWithDirectFallback, and (if direct is not null) its
// fallback direct solve (nullptr for any other KSP).
PetscErrorCode innerKrylov(KSP ksp, KSP *krylov, KSP *direct = nullptr);

} // namespace hybridsens
