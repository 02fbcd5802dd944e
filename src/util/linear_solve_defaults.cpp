#include "util/linear_solve_defaults.hpp"

#include "util/krylov_with_fallback.hpp"

namespace hybridsens {

LinearSolveKind defaultLinearSolve(PetscInt globalSize, PetscMPIInt ranks, bool needsPivoting) {
  if (ranks <= 1) return needsPivoting ? LinearSolveKind::ParallelDirect : LinearSolveKind::SerialLU;
  if (needsPivoting) return globalSize >= kRedundantLUBelow ? LinearSolveKind::ParallelDirect : LinearSolveKind::RedundantPivotingLU;
  return globalSize >= kKrylovFrom ? LinearSolveKind::BlockJacobiKrylov : LinearSolveKind::RedundantLU;
}

// Whether the user chose the solver for this KSP's prefix on the command line (or in the
// options database): then the plain direct LU is the base their options act on.
static PetscErrorCode userChoseSolver(KSP ksp, bool *chose) {
  const char *prefix;
  PetscFunctionBeginUser;
  *chose = false;
  PetscCall(KSPGetOptionsPrefix(ksp, &prefix));
  for (const char *name : {"-ksp_type", "-pc_type", "-pc_factor_mat_solver_type"}) {
    PetscBool set;
    PetscCall(PetscOptionsHasName(nullptr, prefix, name, &set));
    if (set) *chose = true;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode useFillReducingOrdering(PC pc) {
  PetscFunctionBeginUser;
#if defined(PETSC_HAVE_SUITESPARSE)
  const char *prefix;
  PetscBool chosen;
  PetscCall(PCGetOptionsPrefix(pc, &prefix));
  PetscCall(PetscOptionsHasName(nullptr, prefix, "-pc_factor_mat_ordering_type", &chosen));
  if (!chosen) PetscCall(PCFactorSetMatOrderingType(pc, MATORDERINGAMD));
#else
  (void)pc;
#endif
  PetscFunctionReturn(0);
}

PetscErrorCode setLinearSolveKind(KSP ksp, LinearSolveKind kind, PetscInt globalSize) {
  PC pc;
  PetscFunctionBeginUser;
  PetscCall(KSPSetType(ksp, KSPPREONLY));
  PetscCall(KSPGetPC(ksp, &pc));
  switch (kind) {
  case LinearSolveKind::BlockJacobiKrylov:
    PetscCall(setKrylovWithDirectFallback(ksp, globalSize));
    break;
  case LinearSolveKind::SerialLU:
    PetscCall(PCSetType(pc, PCLU));
    PetscCall(useFillReducingOrdering(pc));
    break;
  case LinearSolveKind::RedundantLU:
  case LinearSolveKind::RedundantPivotingLU: {
    // Every rank factors a copy with PREONLY + LU; PETSc's own LU stops at a zero pivot, so a
    // matrix that needs pivoting gets SuperLU (several times cheaper than MUMPS on small systems).
    KSP inner;
    PC innerPc;
    PetscCall(PCSetType(pc, PCREDUNDANT));
    PetscCall(PCRedundantGetKSP(pc, &inner));
    PetscCall(KSPSetType(inner, KSPPREONLY));
    PetscCall(KSPGetPC(inner, &innerPc));
    PetscCall(PCSetType(innerPc, PCLU));
    if (kind == LinearSolveKind::RedundantLU) {
      PetscCall(useFillReducingOrdering(innerPc));
    } else {
#if defined(PETSC_HAVE_SUPERLU)
      PetscCall(PCFactorSetMatSolverType(innerPc, MATSOLVERSUPERLU));
#else
      PetscCall(PCFactorSetMatSolverType(innerPc, MATSOLVERMUMPS));
#endif
    }
    break;
  }
  case LinearSolveKind::ParallelDirect:
    PetscCall(PCSetType(pc, PCLU));
    PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERMUMPS));
    break;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode setLinearSolveDefaults(KSP ksp, PetscInt globalSize, bool needsPivoting) {
  PetscMPIInt size;
  bool chose;
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp), &size));
  PetscCall(userChoseSolver(ksp, &chose));
  const LinearSolveKind kind = globalSize < 0 || chose ? (size > 1 || needsPivoting ? LinearSolveKind::ParallelDirect : LinearSolveKind::SerialLU)
                                                      : defaultLinearSolve(globalSize, size, needsPivoting);
  PetscCall(setLinearSolveKind(ksp, kind, globalSize));
  PetscFunctionReturn(0);
}

static std::string optionPrefix(KSP ksp) {
  const char *prefix = nullptr;
  (void)KSPGetOptionsPrefix(ksp, &prefix);
  return std::string("-") + (prefix ? prefix : "");
}

static PetscErrorCode requireTightTolerance(KSP ksp, const char *role) {
  KSPType kt;
  KSPNormType norm;
  PetscReal rtol, atol;
  PetscFunctionBeginUser;
  PetscCall(KSPGetType(ksp, &kt));
  PetscCall(KSPGetTolerances(ksp, &rtol, &atol, nullptr, nullptr));
  PetscCall(KSPGetNormType(ksp, &norm));
  const std::string p = optionPrefix(ksp);
  PetscCheck(rtol <= kSensitivityRtolMax, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP,
             "%s: %sksp_type %s with %sksp_rtol %g: sensitivities need the linear solves to %g or tighter (the gradients move "
             "with the tolerance: by 7e-8 at 1e-4 on a 6.4k-unknown grid); set %sksp_rtol 1e-12 or use a factorization",
             role, p.c_str(), kt, p.c_str(), (double)rtol, (double)kSensitivityRtolMax, p.c_str());
  // An absolute tolerance stops the solve as soon as the residual falls below it, however large
  // that is against the right-hand side: no value above PETSc's default is safe for every scale.
  PetscCheck(atol <= kSensitivityAtolMax, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP,
             "%s: %sksp_type %s with %sksp_atol %g: an absolute tolerance can stop the solve before its relative tolerance "
             "is met, so sensitivities could read an inexact solve; leave %sksp_atol at PETSc's default (%g) and set %sksp_rtol",
             role, p.c_str(), kt, p.c_str(), (double)atol, p.c_str(), (double)kSensitivityAtolMax, p.c_str());
  // Without a residual norm the tolerance is never tested: the solve stops after -ksp_max_it
  // iterations and counts as converged, however far from the solution.
  PetscCheck(norm != KSP_NORM_NONE, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP,
             "%s: %sksp_type %s with %sksp_norm_type none never tests its tolerance, so sensitivities could read an inexact "
             "solve; leave %sksp_norm_type at its default",
             role, p.c_str(), kt, p.c_str(), p.c_str());
  PetscFunctionReturn(0);
}

// PREONLY must apply a factorization of the whole matrix (a redundant PC: its inner solve); any
// other KSP must test a tight tolerance (*iterative: it is such a KSP).
static PetscErrorCode requireExactConfiguration(KSP ksp, const char *role, bool *iterative) {
  KSPType kt;
  PCType pt;
  PC pc;
  PetscBool preonly, direct, redundant;
  PetscFunctionBeginUser;
  PetscCall(KSPGetType(ksp, &kt));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCGetType(pc, &pt));
  const std::string p = optionPrefix(ksp);
  PetscCall(PetscObjectTypeCompareAny((PetscObject)ksp, &preonly, KSPPREONLY, KSPNONE, ""));
  *iterative = !preonly;
  if (!preonly) PetscFunctionReturn(requireTightTolerance(ksp, role));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)pc, &direct, PCLU, PCCHOLESKY, PCQR, PCSVD, ""));
  if (direct) PetscFunctionReturn(0);
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCREDUNDANT, &redundant));
  if (redundant) {
    KSP inner;
    PetscCall(PCRedundantGetKSP(pc, &inner));
    PetscFunctionReturn(requireExactSolve(inner, role));
  }
  SETERRQ(PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP,
          "%s: %spc_type %s with %sksp_type %s is not an exact solve, so sensitivities would be wrong (forward and adjoint would "
          "still agree with each other): use a factorization (%spc_type lu, cholesky or redundant) or a Krylov method run to "
          "%sksp_rtol %g or less (e.g. %sksp_type gmres %sksp_rtol 1e-12)",
          role, p.c_str(), pt ? pt : "(none)", p.c_str(), kt, p.c_str(), p.c_str(), (double)kSensitivityRtolMax, p.c_str(), p.c_str());
}

PetscErrorCode requireExactSolve(KSP ksp, const char *role) {
  KSP inner, fallback;
  bool iterative;
  PetscFunctionBeginUser;
  PetscCall(innerKrylov(ksp, &inner, &fallback));
  // The library's GMRES + block Jacobi (a -krylov_ksp_type preonly would apply block Jacobi
  // alone), and the direct solve it falls back to: a user's -direct_pc_type is checked like any
  // other choice. The inner solve is not made to stop with an error: its failure falls back.
  if (inner) {
    PetscCall(requireExactConfiguration(inner, role, &iterative));
    PetscFunctionReturn(requireExactSolve(fallback, role));
  }
  PetscCall(requireExactConfiguration(ksp, role, &iterative));
  if (iterative) PetscCall(KSPSetErrorIfNotConverged(ksp, PETSC_TRUE));
  PetscFunctionReturn(0);
}

// What identifies a configuration: KSP type, PC type and, for a factorization, its package.
static PetscErrorCode signature(KSP ksp, std::string *out) {
  KSPType kt;
  PCType pt;
  PC pc;
  PetscBool isLU;
  PetscFunctionBeginUser;
  PetscCall(KSPGetType(ksp, &kt));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCGetType(pc, &pt));
  *out = std::string(kt ? kt : "") + "/" + (pt ? pt : "");
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCLU, &isLU));
  if (isLU) {
    MatSolverType st;
    PetscCall(PCFactorGetMatSolverType(pc, &st));
    *out += std::string("/") + (st ? st : "");
  }
  PetscFunctionReturn(0);
}

PetscErrorCode refreshLinearSolveDefaults(KSP ksp, PetscInt globalSize, std::string *applied, bool needsPivoting) {
  std::string now;
  PetscFunctionBeginUser;
  if (applied->empty()) {  // what setLinearSolveDefaults(ksp) set at creation
    KSP probe;
    PetscCall(KSPCreate(PetscObjectComm((PetscObject)ksp), &probe));
    PetscCall(setLinearSolveDefaults(probe));
    PetscCall(signature(probe, applied));
    PetscCall(KSPDestroy(&probe));
  }
  PetscCall(signature(ksp, &now));
  if (now == *applied) {
    PetscCall(setLinearSolveDefaults(ksp, globalSize, needsPivoting));
    PetscCall(signature(ksp, applied));
  }
  PetscFunctionReturn(0);
}

} // namespace hybridsens
