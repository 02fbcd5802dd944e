#include "util/krylov_with_fallback.hpp"

#include "hybridsens/option_reader.hpp"
#include "util/linear_solve_defaults.hpp"

#include <string>

namespace hybridsens {

namespace {

constexpr const char *kShellName = "hybridsens: GMRES + block Jacobi (rank-local LU), direct solve if it does not converge";

struct KrylovWithFallback {
  KSP krylov = nullptr;    // GMRES + block Jacobi, prefix <outer>krylov_
  KSP direct = nullptr;    // used from the first failure of `krylov` on
  PetscInt globalSize = 0; // picks the direct solve
  bool fellBack = false;
  KSP configuredBlock = nullptr;  // the first block solver configureBlocks configured (blocks made anew are configured again)
  // Keeping the blocks' factorization across solves (krylovSolve).
  PetscBool reuseOption = PETSC_TRUE;  // -<prefix>krylov_ksp_reuse_blocks
  bool reuseAllowed = false;           // allowFactorizationReuse: only Newton solves of forward steps
  bool refactorNext = true;            // the next solve factors the blocks of its operator (the first one does)
  bool refactoredThisSolve = false;
  PetscInt itsAfterRefactor = 0;       // iterations of the first solve after the last factorization
  PetscInt solves = 0, solvesWithKeptBlocks = 0, iterations = 0;  // for -ksp_view
};

// The inner GMRES's convergence test: PETSc's, and a stall at round-off counts as converged --
// with blocks factored for this operator. With blocks kept from an earlier operator, slow progress
// is no evidence of round-off (measured: such "stalls" at 4e-12..1e-10 of the initial residual
// after 14-20 iterations put 2-rank gradients 5e-11 from serial ones), so a stall, or more
// iterations than a fresh factorization would need, ends the solve as diverged and it is repeated
// with fresh blocks.
struct StallAwareTest {
  void *defaultCtx = nullptr;
  const KrylovWithFallback *owner = nullptr;
  std::vector<PetscReal> history;
};

PetscErrorCode convergedOrStalled(KSP ksp, PetscInt it, PetscReal rnorm, KSPConvergedReason *reason, void *ctx) {
  auto *test = static_cast<StallAwareTest *>(ctx);
  PetscFunctionBeginUser;
  PetscCall(KSPConvergedDefault(ksp, it, rnorm, reason, test->defaultCtx));
  if (it == 0) test->history.clear();
  test->history.resize((size_t)it + 1);
  test->history[(size_t)it] = rnorm;
  if (*reason != KSP_CONVERGED_ITERATING) PetscFunctionReturn(0);
  const bool reusedBlocks = !test->owner->refactoredThisSolve;
  if (reusedBlocks && it > test->owner->itsAfterRefactor + kReuseGiveUpIterations) *reason = KSP_DIVERGED_ITS;
  else if (stalledAtRoundOff(test->history, kSensitivityRtolMax)) *reason = reusedBlocks ? KSP_DIVERGED_ITS : KSP_CONVERGED_RTOL;
  PetscFunctionReturn(0);
}

PetscErrorCode destroyStallAwareTest(void *ctx) {
  auto *test = static_cast<StallAwareTest *>(ctx);
  PetscFunctionBeginUser;
  PetscCall(KSPConvergedDefaultDestroy(test->defaultCtx));
  delete test;
  PetscFunctionReturn(0);
}

// Block Jacobi's blocks get their solvers when the PC is set up, with ILU(0) as PETSc's default:
// before the first solve (and so before the blocks are factored), give every block PETSc's LU
// with a fill-reducing ordering unless the options name the blocks' preconditioner
// (-<prefix>sub_pc_type). Once per set of blocks, not at every solve (reading the options
// database each time).
PetscErrorCode configureBlocks(KrylovWithFallback *ctx, PetscInt nLocal, KSP *blocks) {
  PetscFunctionBeginUser;
  if (nLocal == 0 || blocks[0] == ctx->configuredBlock) PetscFunctionReturn(0);
  ctx->configuredBlock = blocks[0];
  for (PetscInt b = 0; b < nLocal; ++b) {
    const char *subPrefix;
    PetscBool chosen;
    PC subPc;
    PetscCall(KSPGetOptionsPrefix(blocks[b], &subPrefix));
    PetscCall(PetscOptionsHasName(nullptr, subPrefix, "-pc_type", &chosen));
    if (chosen) continue;
    PetscCall(KSPGetPC(blocks[b], &subPc));
    PetscCall(PCSetType(subPc, PCLU));
    PetscCall(useFillReducingOrdering(subPc));
    PetscCall(KSPSetFromOptions(blocks[b]));  // the blocks' LU options (-<prefix>sub_pc_factor_...) apply to the LU now
  }
  PetscFunctionReturn(0);
}

// KSPSetUp sets a PC up only after KSPSetOperators: to factor again an operator the last solve
// already had (a retry, a second right-hand side), its operators are set again.
PetscErrorCode renewOperators(KSP ksp) {
  Mat A, P;
  PetscFunctionBeginUser;
  PetscCall(KSPGetOperators(ksp, &A, &P));
  PetscCall(KSPSetOperators(ksp, A, P));
  PetscFunctionReturn(0);
}

// The inner GMRES's pre-solve: configures new blocks, and either keeps the blocks' factorization
// or has them factor the current operator (krylovSolve decides which). PETSc passes block Jacobi's
// reuse flag on to the blocks only in PCApply, not in PCApplyTranspose or PCSetUpOnBlocks, so the
// blocks get theirs here: otherwise transposed solves (the adjoint sweep) never factor again.
PetscErrorCode prepareBlocks(KSP ksp, Vec, Vec, void *shell) {
  auto *ctx = static_cast<KrylovWithFallback *>(shell);
  PC pc;
  PetscBool isBJacobi;
  PetscInt nLocal;
  KSP *blocks;
  PetscFunctionBeginUser;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCBJACOBI, &isBJacobi));
  const bool reuse = isBJacobi && ctx->reuseOption && ctx->reuseAllowed && !ctx->refactorNext;
  ctx->refactoredThisSolve = !reuse;
  if (!isBJacobi) PetscFunctionReturn(0);  // another -krylov_pc_type: set up as PETSc does
  PetscCall(KSPSetReusePreconditioner(ksp, reuse ? PETSC_TRUE : PETSC_FALSE));
  if (!reuse) PetscCall(renewOperators(ksp));
  PetscCall(KSPSetUp(ksp));  // creates the blocks' solvers; factoring waits for KSPSetUpOnBlocks
  PetscCall(PCBJacobiGetSubKSP(pc, &nLocal, nullptr, &blocks));
  PetscCall(configureBlocks(ctx, nLocal, blocks));
  for (PetscInt b = 0; b < nLocal; ++b) {
    PetscCall(KSPSetReusePreconditioner(blocks[b], reuse ? PETSC_TRUE : PETSC_FALSE));
    if (!reuse) PetscCall(renewOperators(blocks[b]));
  }
  PetscFunctionReturn(0);
}

// The inner GMRES's options prefix, for messages ("" if it has none).
const char *krylovPrefix(const KrylovWithFallback *ctx) {
  const char *prefix = nullptr;
  if (KSPGetOptionsPrefix(ctx->krylov, &prefix) || !prefix) return "";
  return prefix;
}

PetscErrorCode shellContext(PC pc, KrylovWithFallback **ctx) {
  void *c;
  PetscFunctionBeginUser;
  PetscCall(PCShellGetContext(pc, &c));
  *ctx = static_cast<KrylovWithFallback *>(c);
  PetscFunctionReturn(0);
}

PetscErrorCode setUpShell(PC pc) {
  KrylovWithFallback *ctx = nullptr;
  Mat A, P;
  PetscFunctionBeginUser;
  PetscCall(shellContext(pc, &ctx));
  PetscCall(PCGetOperators(pc, &A, &P));
  PetscCall(KSPSetOperators(ctx->krylov, A, P));
  PetscCall(KSPSetOperators(ctx->direct, A, P));
  PetscFunctionReturn(0);
}

// The fallback is made with the Krylov solve, so that its options are read (and checked, in
// sensitivity runs: requireExactSolve) before the run, not on a failure hours into it; it factors
// nothing until it first solves.
PetscErrorCode makeDirect(KSP outer, KrylovWithFallback *ctx) {
  const char *prefix;
  PetscFunctionBeginUser;
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)outer), &ctx->direct));
  PetscCall(KSPGetOptionsPrefix(outer, &prefix));
  PetscCall(KSPSetOptionsPrefix(ctx->direct, prefix));
  PetscCall(KSPAppendOptionsPrefix(ctx->direct, "direct_"));
  PetscCall(setLinearSolveKind(ctx->direct, ctx->globalSize < kRedundantLUBelow ? LinearSolveKind::RedundantLU : LinearSolveKind::ParallelDirect,
                               ctx->globalSize));
  PetscCall(KSPSetFromOptions(ctx->direct));
  PetscFunctionReturn(0);
}

// One solve of the inner GMRES, and the decision whether the next one factors the blocks again
// (see allowFactorizationReuse in the header): once a solve with kept blocks needs more than
// kReuseExtraIterations iterations beyond the first solve after the last factorization, the next
// solve factors. The decision depends only on iteration counts, so it is the same in every run.
PetscErrorCode krylovSolve(KrylovWithFallback *ctx, Vec b, Vec x, bool transpose, KSPConvergedReason *reason, PetscInt *its) {
  PetscFunctionBeginUser;
  if (transpose) PetscCall(KSPSolveTranspose(ctx->krylov, b, x));
  else PetscCall(KSPSolve(ctx->krylov, b, x));
  PetscCall(KSPGetConvergedReason(ctx->krylov, reason));
  PetscCall(KSPGetIterationNumber(ctx->krylov, its));
  ++ctx->solves;
  ctx->iterations += *its;
  if (ctx->refactoredThisSolve) ctx->itsAfterRefactor = *its;
  else ++ctx->solvesWithKeptBlocks;
  ctx->refactorNext = *its > ctx->itsAfterRefactor + kReuseExtraIterations;
  PetscFunctionReturn(0);
}

// Solve with the Krylov method while it converges; on its first failure, switch to the direct
// solve for good (a grid partition that defeats block Jacobi once will again) and redo the solve.
PetscErrorCode solve(PC pc, Vec b, Vec x, bool transpose) {
  KrylovWithFallback *ctx = nullptr;
  KSPConvergedReason reason;
  PetscFunctionBeginUser;
  PetscCall(shellContext(pc, &ctx));
  if (!ctx->fellBack) {
    PetscInt its;
    PetscCall(krylovSolve(ctx, b, x, transpose, &reason, &its));
    if (reason <= 0 && !ctx->refactoredThisSolve) {
      // A factorization from an earlier operator may simply be too far off: try again with fresh blocks
      // before giving up on the Krylov solve.
      ctx->refactorNext = true;
      PetscCall(krylovSolve(ctx, b, x, transpose, &reason, &its));
    }
    if (reason > 0) PetscFunctionReturn(0);
    PetscReal rtol;
    const char *outerPrefix;
    PetscCall(KSPGetTolerances(ctx->krylov, &rtol, nullptr, nullptr, nullptr));
    PetscCall(PCGetOptionsPrefix(pc, &outerPrefix));
    ctx->fellBack = true;
    PetscCall(PetscPrintf(PetscObjectComm((PetscObject)pc),
                          "hybridsens: GMRES with block Jacobi (-%sksp_rtol %g) did not converge (%s after %" PetscInt_FMT
                          " iterations): this solve and the rest of the run use a direct solve instead (-%spc_type redundant from the start "
                          "skips the trial)\n",
                          krylovPrefix(ctx), (double)rtol, KSPConvergedReasons[reason], its, outerPrefix ? outerPrefix : ""));
  }
  if (transpose) PetscCall(KSPSolveTranspose(ctx->direct, b, x));
  else PetscCall(KSPSolve(ctx->direct, b, x));
  PetscCall(KSPGetConvergedReason(ctx->direct, &reason));
  // A direct solve that fails (a zero pivot) fails this PC, as the direct default's own would.
  if (reason < 0) PetscCall(PCSetFailedReason(pc, PC_SUBPC_ERROR));
  PetscFunctionReturn(0);
}

PetscErrorCode applyShell(PC pc, Vec b, Vec x) { return solve(pc, b, x, false); }
PetscErrorCode applyShellTranspose(PC pc, Vec b, Vec x) { return solve(pc, b, x, true); }

PetscErrorCode viewShell(PC pc, PetscViewer viewer) {
  KrylovWithFallback *ctx = nullptr;
  PetscFunctionBeginUser;
  PetscCall(shellContext(pc, &ctx));
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s\n", ctx->fellBack ? "fell back to the direct solve:" : "Krylov solve:"));
  PetscCall(PetscViewerASCIIPrintf(viewer,
                                   "%" PetscInt_FMT " Krylov solves, %" PetscInt_FMT " iterations, %" PetscInt_FMT
                                   " of the solves with the blocks' factorization of an earlier operator (-%sksp_reuse_blocks %s)\n",
                                   ctx->solves, ctx->iterations, ctx->solvesWithKeptBlocks, krylovPrefix(ctx), ctx->reuseOption ? "true" : "false"));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscCall(KSPView(ctx->fellBack ? ctx->direct : ctx->krylov, viewer));
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(0);
}

PetscErrorCode destroyShell(PC pc) {
  KrylovWithFallback *ctx = nullptr;
  PetscFunctionBeginUser;
  PetscCall(shellContext(pc, &ctx));
  PetscCall(KSPDestroy(&ctx->krylov));
  PetscCall(KSPDestroy(&ctx->direct));
  delete ctx;
  PetscFunctionReturn(0);
}

// -<prefix>krylov_ksp_reuse_blocks, listed by -help with the inner GMRES's options.
PetscErrorCode readReuseOption(PetscObject, PetscOptionItems *PetscOptionsObject, void *shell) {
  auto *ctx = static_cast<KrylovWithFallback *>(shell);
  OptionReader opt(PetscOptionsObject);
  PetscFunctionBeginUser;
  PetscCall(opt.boolean("-ksp_reuse_blocks",
                        "hybridsens: the integrator's Newton solves keep block Jacobi's factorization while GMRES converges in no "
                        "more iterations than after factoring (other solves, sensitivities included, always factor their operator)",
                        &ctx->reuseOption));
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode setKrylovWithDirectFallback(KSP ksp, PetscInt globalSize) {
  PC pc;
  const char *prefix;
  auto *ctx = new KrylovWithFallback;
  PetscFunctionBeginUser;
  ctx->globalSize = globalSize;
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)ksp), &ctx->krylov));
  PetscCall(KSPGetOptionsPrefix(ksp, &prefix));
  PetscCall(KSPSetOptionsPrefix(ctx->krylov, prefix));
  PetscCall(KSPAppendOptionsPrefix(ctx->krylov, "krylov_"));
  PetscCall(KSPSetType(ctx->krylov, KSPGMRES));
  PetscCall(KSPGMRESSetRestart(ctx->krylov, kKrylovTrialIterations));
  PetscCall(KSPSetTolerances(ctx->krylov, kKrylovRtol, 0.0, PETSC_DEFAULT, kKrylovTrialIterations));
  {
    auto *test = new StallAwareTest;
    test->owner = ctx;
    PetscCall(KSPConvergedDefaultCreate(&test->defaultCtx));
    PetscCall(KSPSetConvergenceTest(ctx->krylov, convergedOrStalled, test, destroyStallAwareTest));
  }
  PetscCall(KSPSetPreSolve(ctx->krylov, prepareBlocks, ctx));
  {
    PC inner;
    PetscCall(KSPGetPC(ctx->krylov, &inner));
    PetscCall(PCSetType(inner, PCBJACOBI));
  }
  PetscCall(PetscObjectAddOptionsHandler((PetscObject)ctx->krylov, readReuseOption, nullptr, ctx));
  PetscCall(KSPSetFromOptions(ctx->krylov));
  {
    // PETSc's own reuse flag would be overridden at every solve (prepareBlocks), and keeping one
    // factorization for good fails after the first large change of the operator.
    PetscBool frozen;
    PetscCall(KSPGetReusePreconditioner(ctx->krylov, &frozen));
    PetscCheck(!frozen, PetscObjectComm((PetscObject)ksp), PETSC_ERR_ARG_INCOMP,
               "-%sksp_reuse_preconditioner is not supported by the library's Krylov solve, which decides when block Jacobi factors "
               "again; -%sksp_reuse_blocks false factors at every solve",
               krylovPrefix(ctx), krylovPrefix(ctx));
  }
  PetscCall(makeDirect(ksp, ctx));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCSHELL));
  PetscCall(PCShellSetContext(pc, ctx));
  PetscCall(PCShellSetName(pc, kShellName));
  PetscCall(PCShellSetSetUp(pc, setUpShell));
  PetscCall(PCShellSetApply(pc, applyShell));
  PetscCall(PCShellSetApplyTranspose(pc, applyShellTranspose));
  PetscCall(PCShellSetView(pc, viewShell));
  PetscCall(PCShellSetDestroy(pc, destroyShell));
  PetscFunctionReturn(0);
}

// The shell's context if ksp's PC is this file's shell, else nullptr.
static PetscErrorCode ourShell(KSP ksp, KrylovWithFallback **ctx) {
  PC pc;
  PetscBool isShell;
  const char *name = nullptr;
  PetscFunctionBeginUser;
  *ctx = nullptr;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCSHELL, &isShell));
  if (!isShell) PetscFunctionReturn(0);
  PetscCall(PCShellGetName(pc, &name));
  if (!name || std::string(name) != kShellName) PetscFunctionReturn(0);
  PetscCall(shellContext(pc, ctx));
  PetscFunctionReturn(0);
}

bool stalledAtRoundOff(const std::vector<PetscReal> &history, PetscReal maxRelative) {
  if (history.size() <= kStallWindow) return false;
  const size_t it = history.size() - 1;
  const PetscReal now = history[it];
  return now <= maxRelative * history[0] && now > 0.5 * history[it - kStallWindow];
}

PetscErrorCode krylovFellBack(KSP ksp, bool *fellBack) {
  KrylovWithFallback *ctx = nullptr;
  PetscFunctionBeginUser;
  PetscCall(ourShell(ksp, &ctx));
  *fellBack = ctx && ctx->fellBack;
  PetscFunctionReturn(0);
}

PetscErrorCode allowFactorizationReuse(KSP ksp, bool allowed) {
  KrylovWithFallback *ctx = nullptr;
  PetscFunctionBeginUser;
  PetscCall(ourShell(ksp, &ctx));
  if (ctx) ctx->reuseAllowed = allowed;
  PetscFunctionReturn(0);
}

PetscErrorCode factorAtNextSolve(KSP ksp) {
  KrylovWithFallback *ctx = nullptr;
  PetscFunctionBeginUser;
  PetscCall(ourShell(ksp, &ctx));
  if (ctx) ctx->refactorNext = true;
  PetscFunctionReturn(0);
}

PetscErrorCode innerKrylov(KSP ksp, KSP *krylov, KSP *direct) {
  KrylovWithFallback *ctx = nullptr;
  PetscFunctionBeginUser;
  PetscCall(ourShell(ksp, &ctx));
  *krylov = ctx ? ctx->krylov : nullptr;
  if (direct) *direct = ctx ? ctx->direct : nullptr;
  PetscFunctionReturn(0);
}

} // namespace hybridsens
