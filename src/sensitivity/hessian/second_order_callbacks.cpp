#include "sensitivity/hessian/second_order_callbacks.hpp"

#include "util/user_call.hpp"

#include <cmath>

namespace hybridsens {

// ---- SecondOrderCallbacks -----------------------------------------------------------------

SecondOrderCallbacks::SecondOrderCallbacks(Dynamics &dyn, CostEvaluator &costs, const SecondOrderModel &model,
                                           std::vector<const SecondOrderCost *> costProducts)
    : dyn_(dyn), costs_(costs), model_(model), costProducts_(std::move(costProducts)) {
  for (size_t k = 0; k < costs_.size(); ++k) times_.push_back(costs_.cost(k).measurementTimes());
}

// The direction (0, v, vp) — δt = 0: the step grid does not move — and the outputs (hu, hp).
static SecondOrderDirection direction(Vec v, const PetscScalar *vp, PetscInt np) {
  SecondOrderDirection d;
  d.du = v;
  d.dp = np ? vp : nullptr;
  return d;
}
static SecondOrderOutput output(Vec hu, std::vector<PetscScalar> &hp) {
  SecondOrderOutput o;
  o.u = hu;
  o.p = hp.empty() ? nullptr : hp.data();
  return o;
}

bool SecondOrderCallbacks::hasMeasurementAt(size_t k, PetscReal t) const {
  for (PetscReal ti : times_[k])
    if (ti == t) return true;
  return false;
}

PetscErrorCode SecondOrderCallbacks::finish(const char *callback, PetscReal t, const DiscreteState &d, Vec hu, std::vector<PetscScalar> &hp) {
  PetscFunctionBeginUser;
  if (!hp.empty()) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, hp.data(), (int)hp.size(), MPIU_SCALAR, MPIU_SUM, dyn_.comm()));
  for (PetscScalar v : hp)
    PetscCheck(std::isfinite(v), dyn_.comm(), PETSC_ERR_FP, "NaN or Inf returned by %s (parameter part) at t = %.17g in discrete state %s",
               callback, (double)t, describe(d).c_str());
  if (hu) PetscCall(dyn_.checkFinite(hu, callback, t, d));
  PetscFunctionReturn(0);
}

PetscErrorCode SecondOrderCallbacks::model(PetscReal t, Vec u, const DiscreteState &d, Vec w, Vec v, const PetscScalar *vp, Vec hu,
                                           std::vector<PetscScalar> &hp) {
  PetscFunctionBeginUser;
  PetscCall(VecZeroEntries(hu));
  hp.assign(numParameters(), 0.0);
  HS_USER_CALL(dyn_.comm(), "rhsHessianProduct",
               model_.rhsHessianProduct(t, u, dyn_.context(d), w, direction(v, vp, numParameters()), output(hu, hp)));
  PetscCall(finish("rhsHessianProduct", t, d, hu, hp));
  PetscFunctionReturn(0);
}

PetscErrorCode SecondOrderCallbacks::initialState(Vec w, const PetscScalar *vp, std::vector<PetscScalar> &hp) {
  PetscFunctionBeginUser;
  hp.assign(numParameters(), 0.0);
  if (hp.empty()) PetscFunctionReturn(0);
  HS_USER_CALL(dyn_.comm(), "initialStateHessianProduct", model_.initialStateHessianProduct(dyn_.context(), w, vp, hp.data()));
  PetscCall(finish("initialStateHessianProduct", 0.0, dyn_.mode, nullptr, hp));
  PetscFunctionReturn(0);
}

PetscErrorCode SecondOrderCallbacks::integrand(size_t k, PetscReal t, Vec u, const DiscreteState &d, Vec v, const PetscScalar *vp, Vec hu,
                                               std::vector<PetscScalar> &hp) {
  PetscFunctionBeginUser;
  PetscCall(VecZeroEntries(hu));
  hp.assign(numParameters(), 0.0);
  if (!costs_.cost(k).hasIntegrand()) PetscFunctionReturn(0);
  HS_USER_CALL(dyn_.comm(), "integrandHessianProduct",
               costProducts_[k]->integrandHessianProduct(t, u, dyn_.context(d), direction(v, vp, numParameters()), output(hu, hp)));
  PetscCall(finish("integrandHessianProduct", t, d, hu, hp));
  PetscFunctionReturn(0);
}

PetscErrorCode SecondOrderCallbacks::terminal(size_t k, PetscReal t, Vec u, const DiscreteState &d, Vec v, const PetscScalar *vp, Vec hu,
                                              std::vector<PetscScalar> &hp) {
  PetscFunctionBeginUser;
  PetscCall(VecZeroEntries(hu));
  hp.assign(numParameters(), 0.0);
  if (!costs_.cost(k).hasTerminal()) PetscFunctionReturn(0);
  HS_USER_CALL(dyn_.comm(), "terminalHessianProduct",
               costProducts_[k]->terminalHessianProduct(t, u, dyn_.context(d), direction(v, vp, numParameters()), output(hu, hp)));
  PetscCall(finish("terminalHessianProduct", t, d, hu, hp));
  PetscFunctionReturn(0);
}

PetscErrorCode SecondOrderCallbacks::measurements(size_t k, PetscReal t, Vec u, const DiscreteState &d, Vec v, const PetscScalar *vp,
                                                  Vec hu, std::vector<PetscScalar> &hp) {
  const PetscInt np = numParameters();
  std::vector<PetscScalar> local(np);
  PetscFunctionBeginUser;
  PetscCall(VecZeroEntries(hu));
  hp.assign(np, 0.0);
  if (!work_) PetscCall(VecDuplicate(hu, &work_));
  for (size_t i = 0; i < times_[k].size(); ++i) {
    if (times_[k][i] != t) continue;  // measurement times are step boundaries, hit exactly
    PetscCall(VecZeroEntries(work_));
    std::fill(local.begin(), local.end(), 0.0);
    HS_USER_CALL(dyn_.comm(), "measurementHessianProduct",
                 costProducts_[k]->measurementHessianProduct((PetscInt)i, t, u, dyn_.context(d), direction(v, vp, np), output(work_, local)));
    PetscCall(VecAXPY(hu, 1.0, work_));
    for (PetscInt j = 0; j < np; ++j) hp[j] += local[j];
  }
  PetscCall(finish("measurementHessianProduct", t, d, hu, hp));
  PetscFunctionReturn(0);
}

} // namespace hybridsens
