// TAO integration: minimize one cost of a hybridsens Solver over the model's parameters with
// PETSc TAO, with one call.
//
//   hybridsens::TaoProblem problem(solver);          // cost 0
//   Tao tao;  TaoCreate(comm, &tao);  TaoSetType(tao, TAOBNTR);
//   problem.attach(tao);                              // objective + adjoint gradient + exact Hessian
//   TaoSetFromOptions(tao);  checkTaoType(tao);       // -tao_type: a method this problem can feed
//   TaoSolve(tao);
//   problem.finish(tao);                              // solver's parameters := the solution
//
// Objective and gradient come from one forward solve and one discrete-adjoint sweep; the
// Hessian from the library's second-order sweeps over the same trajectory (hessian.hpp), either
// assembled (dense n_q × n_q, symmetrized) for Newton methods with direct solves (TAONLS,
// TAOBNTR, TAONTR), or as a MATSHELL whose MatMult is one Hessian-vector product (Krylov
// Newton). With TaoGradient::FiniteDifference the gradient is TAO's own finite difference of
// the objective (for comparison). Quasi-Newton methods (TAOBLMVM, TAOLMVM) use objective and
// gradient only.
//
// A trial point where the simulation fails (NaN/Inf in a callback, integrator or event failure)
// is reported to TAO as f = PETSC_INFINITY (larger than any objective, so the step is
// rejected), never as a plausible number.
//
// The TAO variables are the parameters (unknown initial states are written as parameters of
// initialState(p)); attach() therefore switches initial-state sensitivities off, and also
// forward sensitivities and -hs_hessian (TAO asks for what it needs). Options:
// -hs_tao_hessian assembled|matrix_free|none, -hs_tao_gradient adjoint|fd (read by attach()).
// The TAO vectors live on the solver's communicator with every entry on rank 0.
#pragma once

#include "hybridsens/solver.hpp"

#include <petsctao.h>

#include <vector>

namespace hybridsens {

// TAO vectors for a Solver's parameters keep every entry on rank 0 (TaoProblem's, and those
// of programs that drive TAO themselves). taoVectorValues: every entry, on every rank
// (collective); setTaoVectorValues: each rank writes its owned entries from values (global order).
PetscErrorCode taoVectorValues(Vec x, std::vector<PetscReal> &values);
PetscErrorCode setTaoVectorValues(const std::vector<PetscScalar> &values, Vec x);

// Refuses (PETSC_ERR_SUP, naming -tao_type with the TAO's prefix) a TAO method the problem set
// on tao cannot feed: an objective with its gradient, a Hessian if one was set (TaoSetHessian),
// bounds if they were set (TaoSetVariableBounds). Least-squares methods (pounders, brgn) need
// residuals, the constrained and complementarity ones constraints; methods without bounds
// would step outside them; Newton methods need a Hessian. PETSc 3.18 does not check: pounders
// dereferences the missing residual vector in TaoSetUp (SIGSEGV). Call after TaoSetFromOptions(),
// before TaoSolve().
PetscErrorCode checkTaoType(Tao tao);

enum class TaoHessian { Assembled, MatrixFree, None };
enum class TaoGradient { Adjoint, FiniteDifference };

struct TaoCounters {
  PetscInt solves = 0;          // forward solves (each with or without the adjoint sweep)
  PetscInt objectives = 0;      // objective evaluations TAO asked for (with or without gradient)
  PetscInt gradients = 0;       // adjoint gradients
  PetscInt hessians = 0;        // assembled Hessians
  PetscInt hessianProducts = 0; // matrix-free Hessian-vector products
  PetscInt failedSolves = 0;    // trial points where the simulation failed (reported as f = PETSC_INFINITY)
};

class TaoProblem {
public:
  explicit TaoProblem(Solver &solver, size_t cost = 0);
  ~TaoProblem();
  TaoProblem(const TaoProblem &) = delete;
  TaoProblem &operator=(const TaoProblem &) = delete;

  // Installs the initial point (the solver's parameters), the objective, the gradient and the
  // Hessian into tao. With fromOptions, -hs_tao_hessian and -hs_tao_gradient override the
  // arguments.
  PetscErrorCode attach(Tao tao, TaoGradient gradient = TaoGradient::Adjoint, TaoHessian hessian = TaoHessian::Assembled,
                        bool fromOptions = true);
  // After TaoSolve: set the solver's parameters to TAO's solution and solve there (with the
  // adjoint), so that the solver's results describe the optimum.
  PetscErrorCode finish(Tao tao);
  const TaoCounters &counters() const { return counters_; }
  Vec solution() const { return x_; }

private:
  static PetscErrorCode Objective(Tao, Vec x, PetscReal *f, void *ctx);
  static PetscErrorCode ObjectiveAndGradient(Tao, Vec x, PetscReal *f, Vec g, void *ctx);
  static PetscErrorCode Hessian(Tao, Vec x, Mat H, Mat P, void *ctx);
  static PetscErrorCode HessianMult(Mat H, Vec v, Vec y);
  // Make the solver's last solve be at x (re-solving only when needed).
  PetscErrorCode moveTo(Vec x, bool needAdjoint);
  PetscErrorCode moveTo(const std::vector<PetscReal> &p, bool needAdjoint);

  Solver &solver_;
  size_t cost_;
  MPI_Comm comm_;
  PetscInt nq_ = 0;
  Vec x_ = nullptr;
  Mat H_ = nullptr;
  bool solved_ = false, solvedWithAdjoint_ = false, failed_ = false;
  std::vector<PetscReal> at_;         // parameters of the last solve
  std::vector<PetscReal> hessianAt_;  // where TAO last asked for the Hessian
  TaoCounters counters_;
};

} // namespace hybridsens
