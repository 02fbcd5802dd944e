// Solver: Hessian entry points (hybridsens/hessian.hpp). They differentiate the trajectory of
// the last solve() with the library's own second-order sweeps (src/sensitivity/hessian).
#include "hybridsens/solver.hpp"

#include "engine/dynamics.hpp"
#include "engine/engine.hpp"
#include "engine/cost_evaluator.hpp"
#include "sensitivity/hessian/hessian_sweeps.hpp"
#include "sensitivity/hessian/second_order_callbacks.hpp"

#include <algorithm>

namespace hybridsens {

const char *hessianMethodName(HessianMethod m) {
  switch (m) {
  case HessianMethod::ForwardOverAdjoint: return "foa";
  case HessianMethod::Hybrid: return "hybrid";
  default: return "auto";
  }
}

void Solver::setSecondOrderCost(const CostFunction &c, const SecondOrderCost &h) { costHessians_.push_back({&c, &h}); }

template <class F> PetscErrorCode Solver::withHessianSweeps(F &&f) {
  MPI_Comm comm = model_.comm();
  PetscFunctionBeginUser;
  PetscCheck(engine_ && costEval_ && engine_->trajectory().size() > 1, comm, PETSC_ERR_ARG_WRONGSTATE, "Hessians need a solve() first");
  PetscCheck(solvedParams_ == params_, comm, PETSC_ERR_ARG_WRONGSTATE,
             "the parameters changed since the last solve(): solve again before asking for Hessians");
  const SecondOrderModel *mh = modelHessian_ ? modelHessian_ : dynamic_cast<const SecondOrderModel *>(&model_);
  PetscCheck(mh, comm, PETSC_ERR_ARG_WRONGSTATE,
             "Hessians need second-derivative products of the model: derive the model from hybridsens::SecondOrderModel "
             "(hybridsens/second_order.hpp; the AD front ends do) or register them with Solver::setSecondOrderModel()");
  PetscCheck(engine_->trajectory().keepsStates(), comm, PETSC_ERR_ARG_WRONGSTATE,
             "Hessians need the trajectory of the last solve(), which was not kept (a plain solve keeps none): call "
             "Solver::keepTrajectory(true) before solve(), or solve with -hs_adjoint, -hs_hessian or -hs_check_hessian");
  std::vector<const SecondOrderCost *> ch;
  for (const CostFunction *c : costs_) {
    const SecondOrderCost *h = nullptr;
    for (auto &kv : costHessians_)
      if (kv.first == c) h = kv.second;
    if (!h) h = dynamic_cast<const SecondOrderCost *>(c);
    const bool needed = c->hasTerminal() || c->hasIntegrand() || !c->measurementTimes().empty();
    PetscCheck(h || !needed, comm, PETSC_ERR_ARG_WRONGSTATE,
               "Hessians need second-derivative products of cost '%s': derive it from hybridsens::SecondOrderCost "
               "(hybridsens/second_order.hpp; ADCost does) or register them with Solver::setSecondOrderCost()",
               c->name().c_str());
    ch.push_back(h);
  }
  PetscCall(resolveInitialStateIndices());
  SecondOrderCallbacks cb(*dyn_, *costEval_, *mh, ch);
  HessianSweeps sweeps(*engine_, *costEval_, cb, u0Indices_);
  PetscCall(sweeps.setUp());
  PetscCall(f(sweeps));
  PetscFunctionReturn(0);
}

PetscErrorCode Solver::hessianVectorProducts(const std::vector<std::vector<PetscScalar>> &v,
                                             std::vector<std::vector<std::vector<PetscScalar>>> &Hv) {
  PetscFunctionBeginUser;
  PetscCall(withHessianSweeps([&](HessianSweeps &sw) -> PetscErrorCode {
    const PetscInt np = (PetscInt)params_.size(), nz = (PetscInt)u0Indices_.size();
    SecondOrderResults res;
    PetscFunctionBeginUser;
    for (const auto &row : v)
      PetscCheck((PetscInt)row.size() == np + nz, model_.comm(), PETSC_ERR_ARG_SIZ,
                 "Hessian-vector product: direction has %zu entries, expected %" PetscInt_FMT " (parameters, then initial-state components)",
                 row.size(), np + nz);
    PetscCall(sw.forwardOverAdjoint(HessianDirections::fromRows(v, np, nz), res));
    Hv = res.products;
    PetscFunctionReturn(0);
  }));
  PetscFunctionReturn(0);
}

PetscErrorCode Solver::computeHessian(HessianMethod method, std::vector<std::vector<std::vector<PetscScalar>>> &H, HessianMethod *used) {
  PetscFunctionBeginUser;
  PetscCall(withHessianSweeps([&](HessianSweeps &sw) -> PetscErrorCode {
    const PetscInt np = (PetscInt)params_.size(), nz = (PetscInt)u0Indices_.size(), nq = np + nz;
    const size_t ncost = costs_.size();
    SecondOrderResults res;
    PetscFunctionBeginUser;
    // Auto: the hybrid formula needs no second-order adjoint; it stores one multiplier set per
    // cost where forward-over-adjoint stores one tangent per column — prefer it unless there
    // are more costs than columns.
    HessianMethod m = method;
    if (m == HessianMethod::Auto) m = ncost <= (size_t)std::max<PetscInt>(nq, 1) ? HessianMethod::Hybrid : HessianMethod::ForwardOverAdjoint;
    const HessianDirections V = HessianDirections::identity(np, nz);
    H.assign(ncost, std::vector<std::vector<PetscScalar>>(nq, std::vector<PetscScalar>(nq, 0.0)));
    if (m == HessianMethod::Hybrid) {
      PetscCall(sw.hybrid(V, res));
      for (size_t k = 0; k < ncost; ++k) H[k] = res.quadratic[k];
    } else {
      PetscCall(sw.forwardOverAdjoint(V, res));
      for (size_t k = 0; k < ncost; ++k)
        for (PetscInt i = 0; i < nq; ++i)
          for (PetscInt j = 0; j < nq; ++j) H[k][i][j] = res.products[k][j][i];  // column j is H e_j
    }
    if (used) *used = m;
    PetscFunctionReturn(0);
  }));
  PetscFunctionReturn(0);
}

PetscErrorCode Solver::secondOrderGradient(std::vector<std::vector<PetscScalar>> &g) {
  PetscFunctionBeginUser;
  PetscCall(withHessianSweeps([&](HessianSweeps &sw) -> PetscErrorCode {
    SecondOrderResults res;
    PetscFunctionBeginUser;
    PetscCall(sw.gradient(res));
    g = res.gradient;
    PetscFunctionReturn(0);
  }));
  PetscFunctionReturn(0);
}

PetscErrorCode Solver::checkHessianFromOptions() {
  PetscFunctionBeginUser;
  if (!opt_.checkHessian) PetscFunctionReturn(0);
  HessianCheckReport rep;
  PetscCall(checkHessian(*this, opt_.hessianCheck, rep));
  PetscFunctionReturn(0);
}

} // namespace hybridsens
