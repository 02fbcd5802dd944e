// The library's default for every linear solve it owns or configures (the integrator's, the DAE
// consistency solves, the step tangent, the Hessian sweeps), chosen by the system's global size
// and the number of ranks (docs/parallel.md has the measurements). Forward and adjoint
// sensitivities agree to round-off only with solves exact to round-off (docs/petsc-3.18.md §9):
// a direct LU, or a Krylov method run to a relative residual of kKrylovRtol.
//   one rank                                PETSc's LU;
//   several ranks, below kKrylovFrom         PCREDUNDANT: every rank factors a copy with PETSc's
//                                           LU (exact like the serial LU; on small systems the
//                                           Krylov iterations' synchronizations cost more than
//                                           the work they share out);
//   several ranks, from kKrylovFrom          GMRES preconditioned by block Jacobi with one block
//                                           per rank, each factored by PETSc's LU: the
//                                           factorization and the factor's memory divide over
//                                           the ranks (1.5x faster than one rank for the adjoint
//                                           of a 63k-unknown grid on 2 ranks, where the
//                                           redundant LU was 1.1x slower). Where block Jacobi
//                                           does not converge (ranks cutting a meshed network),
//                                           the KSP falls back to the direct solve below
//                                           (util/krylov_with_fallback.hpp).
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

enum class LinearSolveKind { SerialLU, RedundantLU, RedundantPivotingLU, BlockJacobiKrylov, ParallelDirect };

// From this many unknowns on several ranks: block Jacobi + GMRES (measured on the coupled-area
// grids at 2 ranks: slower than the redundant LU at 1.7k unknowns, faster from 6.4k).
constexpr PetscInt kKrylovFrom = 5000;
// The Krylov default's relative tolerance (left-preconditioned residual; block Jacobi with exact
// blocks leaves the identity plus a low-rank coupling, so GMRES ends with a steep drop). On a
// 6.4k-unknown grid at 2 and 3 ranks it gives forward = adjoint to 2e-14 and the serial
// gradients to 6e-14 (1e-10 gives the same; 1e-6 parts from serial by 7e-12, 1e-4 by 7e-8).
// Tighter is not safe: at 3 ranks the consistency solves stall at 2.8e-13 (round-off).
constexpr PetscReal kKrylovRtol = 1e-12;
// A pivoting LU below this many unknowns on several ranks: every rank factors a copy; from it
// MUMPS, so that no rank has to hold a whole factor of a very large system (not measured).
constexpr PetscInt kRedundantLUBelow = 200000;

// The default for a system of globalSize unknowns on `ranks` ranks (needsPivoting: see
// setLinearSolveDefaults).
LinearSolveKind defaultLinearSolve(PetscInt globalSize, PetscMPIInt ranks, bool needsPivoting = false);

// Sets ksp's type and preconditioner to the default for a system of globalSize unknowns on the
// KSP's communicator (globalSize < 0: not known yet — the plain direct LU, MUMPS in parallel).
// Call before KSPSetFromOptions, which lets the command line override it. needsPivoting (a
// matrix with structural zeros on its diagonal, e.g. an index-2 DAE's): a pivoting LU (MUMPS, or
// SuperLU inside PCREDUNDANT), since PETSc's own LU stops at a zero pivot.
PetscErrorCode setLinearSolveDefaults(KSP ksp, PetscInt globalSize = -1, bool needsPivoting = false);

// PETSc's LU on pc with AMD ordering (SuiteSparse's, where PETSc has it) unless the options
// name one for pc's prefix: on the grids measured it needs 6x fewer flops per factorization
// than PETSc's default nested dissection (63k unknowns: 2.6 against 15.4 Mflop) and made a
// one-rank adjoint 1.3-1.5x faster.
PetscErrorCode useFillReducingOrdering(PC pc);

// The loosest relative tolerance a Krylov method may have in a solve that sensitivities read
// (on the 6.4k-unknown grid at 2 ranks: gradients equal the serial ones to 5.8e-14 at 1e-10,
// 7e-12 at 1e-6, 7e-8 at 1e-4).
constexpr PetscReal kSensitivityRtolMax = 1e-10;
// ... and the largest absolute tolerance: PETSc's default (an absolute tolerance has no scale that
// would be safe for every problem).
constexpr PetscReal kSensitivityAtolMax = 1e-50;

// Refuses (PETSC_ERR_SUP, naming the options of ksp's prefix) a solve that sensitivities cannot
// use: PREONLY with a preconditioner that is not a factorization of the whole matrix (e.g.
// -pc_type bjacobi, ilu, jacobi: the tangent and the adjoint then differentiate the inexact
// solve — they still agree with each other, but not with the gradient), or a Krylov method
// with a relative tolerance above kSensitivityRtolMax, an absolute one above kSensitivityAtolMax,
// or without a residual norm to test it by
// (-ksp_norm_type none). A Krylov method that passes is made to stop with an error if it does not
// converge. The Krylov default (krylov_with_fallback.hpp) is checked in both its parts: its inner
// solve (-krylov_ksp_type preonly would be block Jacobi alone) and its fall-back.
// `role` names the solve in the message.
PetscErrorCode requireExactSolve(KSP ksp, const char *role);

// Sets ksp to one kind of solve (globalSize: the system's, for the Krylov kind's fallback).
PetscErrorCode setLinearSolveKind(KSP ksp, LinearSolveKind kind, PetscInt globalSize);

// For a KSP whose defaults were set before its system size was known: applies the default for
// globalSize if the KSP still holds what the library set last (*applied; empty: what
// setLinearSolveDefaults(ksp) sets), and leaves a configuration the program changed through
// the API alone. *applied is updated to what the KSP holds afterwards.
PetscErrorCode refreshLinearSolveDefaults(KSP ksp, PetscInt globalSize, std::string *applied, bool needsPivoting = false);

} // namespace hybridsens
