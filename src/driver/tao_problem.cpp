// TaoProblem: objective, adjoint gradient and Hessian of a Solver's cost for PETSc TAO.
#include "hybridsens/tao.hpp"

#include "util/gather.hpp"

#include <string>

namespace hybridsens {

TaoProblem::TaoProblem(Solver &solver, size_t cost) : solver_(solver), cost_(cost), comm_(PetscObjectComm((PetscObject)solver.ts())) {}

TaoProblem::~TaoProblem() {
  VecDestroy(&x_);
  MatDestroy(&H_);
}

PetscErrorCode taoVectorValues(Vec x, std::vector<PetscReal> &values) {
  std::vector<PetscScalar> all;
  PetscFunctionBeginUser;
  PetscCall(gatherToAll(x, all));
  values.assign(all.begin(), all.end());
  PetscFunctionReturn(0);
}

PetscErrorCode setTaoVectorValues(const std::vector<PetscScalar> &values, Vec x) {
  PetscScalar *a;
  PetscInt lo, hi, n;
  PetscFunctionBeginUser;
  PetscCall(VecGetSize(x, &n));
  PetscCheck((size_t)n == values.size(), PetscObjectComm((PetscObject)x), PETSC_ERR_ARG_SIZ, "setTaoVectorValues: %zu values for a vector of size %" PetscInt_FMT,
             values.size(), n);
  PetscCall(VecGetOwnershipRange(x, &lo, &hi));
  PetscCall(VecGetArrayWrite(x, &a));
  for (PetscInt i = lo; i < hi; ++i) a[i - lo] = values[i];
  PetscCall(VecRestoreArrayWrite(x, &a));
  PetscFunctionReturn(0);
}

PetscErrorCode checkTaoType(Tao tao) {
  // The methods that need an objective and its gradient only (TAONM: the objective only), and
  // the Newton methods, which also need the Hessian; each pair: those that keep bounds, those
  // that ignore them.
  static const char *const boundedFirstOrder[] = {TAOBLMVM, TAOBQNLS, TAOBNCG, TAOBQNKLS, TAOBQNKTR, TAOBQNKTL};
  static const char *const unboundedFirstOrder[] = {TAOLMVM, TAOCG, TAONM};
  static const char *const boundedNewton[] = {TAOBNLS, TAOBNTR, TAOBNTL, TAOTRON};
  // (TAONTL is left out: in PETSc 3.18 it crashes in MatSolve with an assembled dense Hessian;
  // TAOBNTL, the same method with bounds, works.)
  static const char *const unboundedNewton[] = {TAONLS, TAONTR};
  TaoType type;
  const char *prefix;
  Vec lower, upper;
  Mat H, Hpre;
  PetscErrorCode (*hessian)(Tao, Vec, Mat, Mat, void *) = nullptr;
  void *ctx;
  PetscFunctionBeginUser;
  PetscCall(TaoGetType(tao, &type));
  PetscCall(TaoGetOptionsPrefix(tao, &prefix));
  PetscCall(TaoGetVariableBounds(tao, &lower, &upper));
  PetscCall(TaoGetHessian(tao, &H, &Hpre, &hessian, &ctx));
  const bool bounded = lower || upper, haveHessian = hessian != nullptr;
  std::string allowed;
  bool ok = false;
  auto consider = [&](const char *const *names, size_t n, bool usable) {
    if (!usable) return;
    for (size_t i = 0; i < n; ++i) {
      ok = ok || (type && std::string(type) == names[i]);
      allowed += std::string(allowed.empty() ? "" : ", ") + names[i];
    }
  };
  consider(boundedFirstOrder, sizeof boundedFirstOrder / sizeof *boundedFirstOrder, true);
  consider(unboundedFirstOrder, sizeof unboundedFirstOrder / sizeof *unboundedFirstOrder, !bounded);
  consider(boundedNewton, sizeof boundedNewton / sizeof *boundedNewton, haveHessian);
  consider(unboundedNewton, sizeof unboundedNewton / sizeof *unboundedNewton, haveHessian && !bounded);
  PetscCheck(ok, PetscObjectComm((PetscObject)tao), PETSC_ERR_SUP,
             "-%stao_type %s is not supported for this problem: an objective with its gradient%s%s (no least-squares residuals, no constraints); "
             "use one of %s",
             prefix ? prefix : "", type ? type : "(none)", haveHessian ? ", its Hessian" : ", no Hessian", bounded ? ", bounds on the variables" : "",
             allowed.c_str());
  PetscFunctionReturn(0);
}

PetscErrorCode TaoProblem::attach(Tao tao, TaoGradient gradient, TaoHessian hessian, bool fromOptions) {
  PetscMPIInt rank;
  PetscFunctionBeginUser;
  PetscCheck(comm_ != MPI_COMM_NULL, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "TaoProblem: call Solver::setFromOptions() first");
  if (fromOptions) {
    // Read with the solver's other options (Solver::setFromOptions).
    const SolverOptions &o = solver_.solverOptions();
    if (o.taoHessian >= 0) hessian = (TaoHessian)o.taoHessian;
    if (o.taoGradient >= 0) gradient = (TaoGradient)o.taoGradient;
  }
  // TAO varies the parameters; it asks for the derivatives it needs itself.
  solver_.setInitialStateSensitivities({});
  solver_.setForwardSensitivities(false);
  solver_.setHessian(false);
  // A Newton method asks for the Hessian at a point whose solve may have been a plain one (a
  // line-search trial): keep every solve's trajectory then.
  solver_.keepTrajectory(hessian != TaoHessian::None);
  nq_ = (PetscInt)solver_.parameters().size();
  PetscCheck(nq_ > 0, comm_, PETSC_ERR_ARG_WRONGSTATE, "TaoProblem: the model has no parameters to optimize");
  PetscCallMPI(MPI_Comm_rank(comm_, &rank));
  const PetscInt nlocal = rank == 0 ? nq_ : 0;
  PetscCall(VecDestroy(&x_));
  PetscCall(VecCreateMPI(comm_, nlocal, nq_, &x_));
  std::vector<PetscScalar> p(solver_.parameters().begin(), solver_.parameters().end());
  PetscCall(setTaoVectorValues(p, x_));
  PetscCall(TaoSetSolution(tao, x_));
  if (gradient == TaoGradient::Adjoint) PetscCall(TaoSetObjectiveAndGradient(tao, nullptr, ObjectiveAndGradient, this));
  else {
    PetscCall(TaoSetObjective(tao, Objective, this));
    PetscCall(TaoSetGradient(tao, nullptr, TaoDefaultComputeGradient, this));
  }
  PetscCall(MatDestroy(&H_));
  if (hessian == TaoHessian::Assembled) {
    PetscCall(MatCreateDense(comm_, nlocal, nlocal, nq_, nq_, nullptr, &H_));
    PetscCall(TaoSetHessian(tao, H_, H_, Hessian, this));
  } else if (hessian == TaoHessian::MatrixFree) {
    PetscCall(MatCreateShell(comm_, nlocal, nlocal, nq_, nq_, this, &H_));
    PetscCall(MatShellSetOperation(H_, MATOP_MULT, (void (*)(void))HessianMult));
    PetscCall(MatShellSetOperation(H_, MATOP_MULT_TRANSPOSE, (void (*)(void))HessianMult));  // symmetric
    PetscCall(MatSetOption(H_, MAT_SYMMETRIC, PETSC_TRUE));
    PetscCall(TaoSetHessian(tao, H_, H_, Hessian, this));
  }
  solved_ = false;
  PetscFunctionReturn(0);
}

// A trial point where the simulation itself fails (the state overflows: NaN/Inf from a model
// callback, or an integrator or event failure) is reported to TAO as f = PETSC_INFINITY
// (PETSC_MAX_REAL/4: larger than any objective but finite, so TAO's trust-region and
// line-search methods reject the step and shrink it instead of stopping on an IEEE Inf). Any
// other error (a bug, a refused configuration) is raised as usual.
PetscErrorCode TaoProblem::moveTo(Vec x, bool needAdjoint) {
  std::vector<PetscReal> p;
  PetscFunctionBeginUser;
  PetscCall(taoVectorValues(x, p));
  PetscCall(moveTo(p, needAdjoint));
  PetscFunctionReturn(0);
}

PetscErrorCode TaoProblem::moveTo(const std::vector<PetscReal> &p, bool needAdjoint) {
  PetscReal t0, dt0;
  PetscFunctionBeginUser;
  if (solved_ && p == at_ && (solvedWithAdjoint_ || !needAdjoint)) PetscFunctionReturn(0);
  PetscCall(solver_.setParameters(p));
  solver_.setAdjoint(needAdjoint);
  PetscCall(TSGetTime(solver_.ts(), &t0));
  PetscCall(TSGetTimeStep(solver_.ts(), &dt0));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, nullptr));
  const PetscErrorCode ierr = solver_.solve();
  PetscCall(PetscPopErrorHandler());
  ++counters_.solves;
  failed_ = ierr == PETSC_ERR_FP || ierr == PETSC_ERR_NOT_CONVERGED;
  if (failed_) {
    // The aborted solve left the TS inside the run; put it back where solve() starts.
    PetscCall(TSSetTime(solver_.ts(), t0));
    PetscCall(TSSetTimeStep(solver_.ts(), dt0));
    ++counters_.failedSolves;
    PetscCall(PetscInfo(nullptr, "hybridsens TaoProblem: the simulation failed at this trial point (error %d): f = PETSC_INFINITY\n", (int)ierr));
  } else PetscCall(ierr);
  if (needAdjoint && !failed_) ++counters_.gradients;
  solved_ = true, solvedWithAdjoint_ = needAdjoint, at_ = p;
  PetscFunctionReturn(0);
}

PetscErrorCode TaoProblem::Objective(Tao, Vec x, PetscReal *f, void *ctx) {
  auto *self = static_cast<TaoProblem *>(ctx);
  PetscFunctionBeginUser;
  PetscCall(self->moveTo(x, false));
  ++self->counters_.objectives;
  *f = self->failed_ ? PETSC_INFINITY : self->solver_.result().objective.at(self->cost_);
  PetscFunctionReturn(0);
}

PetscErrorCode TaoProblem::ObjectiveAndGradient(Tao, Vec x, PetscReal *f, Vec g, void *ctx) {
  auto *self = static_cast<TaoProblem *>(ctx);
  PetscFunctionBeginUser;
  PetscCall(self->moveTo(x, true));
  ++self->counters_.objectives;
  if (self->failed_) {
    *f = PETSC_INFINITY;
    PetscCall(VecSet(g, PETSC_INFINITY));
    PetscFunctionReturn(0);
  }
  *f = self->solver_.result().objective.at(self->cost_);
  PetscCall(setTaoVectorValues(self->solver_.result().gradient.at(self->cost_).adjointP, g));
  PetscFunctionReturn(0);
}

// Assembled: the full Hessian from the trajectory at x (hessian.hpp, method auto), symmetrized
// (the two halves agree to round-off). Matrix-free: only make sure the trajectory is at x.
PetscErrorCode TaoProblem::Hessian(Tao, Vec x, Mat H, Mat, void *ctx) {
  auto *self = static_cast<TaoProblem *>(ctx);
  PetscMPIInt rank;
  PetscBool shell;
  PetscFunctionBeginUser;
  PetscCall(self->moveTo(x, false));
  PetscCheck(!self->failed_, self->comm_, PETSC_ERR_NOT_CONVERGED, "TaoProblem: Hessian requested at a point where the simulation fails");
  PetscCall(PetscObjectTypeCompare((PetscObject)H, MATSHELL, &shell));
  self->hessianAt_ = self->at_;  // products of a shell Hessian are taken here, whatever TAO evaluates in between
  if (shell) PetscFunctionReturn(0);
  std::vector<std::vector<std::vector<PetscScalar>>> Hk;
  PetscCall(self->solver_.computeHessian(self->solver_.hessianMethod(), Hk));
  ++self->counters_.hessians;
  PetscCallMPI(MPI_Comm_rank(self->comm_, &rank));
  const PetscInt n = self->nq_;
  if (rank == 0) {
    const auto &A = Hk.at(self->cost_);
    std::vector<PetscInt> idx(n);
    std::vector<PetscScalar> vals(n * n);
    for (PetscInt i = 0; i < n; ++i) {
      idx[i] = i;
      for (PetscInt j = 0; j < n; ++j) vals[i * n + j] = 0.5 * (A[i][j] + A[j][i]);
    }
    PetscCall(MatSetValues(H, n, idx.data(), n, idx.data(), vals.data(), INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(H, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(H, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

PetscErrorCode TaoProblem::HessianMult(Mat H, Vec v, Vec y) {
  TaoProblem *self;
  std::vector<PetscReal> d;
  std::vector<std::vector<std::vector<PetscScalar>>> Hv;
  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(H, &self));
  PetscCheck(!self->hessianAt_.empty(), self->comm_, PETSC_ERR_ORDER, "TaoProblem: Hessian product requested before the Hessian callback");
  PetscCall(self->moveTo(self->hessianAt_, false));  // TAO may have evaluated trial points since
  PetscCheck(!self->failed_, self->comm_, PETSC_ERR_PLIB, "TaoProblem: the simulation fails at the Hessian's point");
  PetscCall(taoVectorValues(v, d));
  PetscCall(self->solver_.hessianVectorProducts({std::vector<PetscScalar>(d.begin(), d.end())}, Hv));
  ++self->counters_.hessianProducts;
  PetscCall(setTaoVectorValues(Hv.at(self->cost_).at(0), y));
  PetscFunctionReturn(0);
}

PetscErrorCode TaoProblem::finish(Tao tao) {
  Vec x;
  PetscFunctionBeginUser;
  PetscCall(TaoGetSolution(tao, &x));
  PetscCall(moveTo(x, true));
  PetscCheck(!failed_, comm_, PETSC_ERR_NOT_CONVERGED, "TaoProblem: the simulation fails at TAO's solution");
  PetscFunctionReturn(0);
}

} // namespace hybridsens
