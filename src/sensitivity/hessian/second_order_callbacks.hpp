// SecondOrderCallbacks: the user's second-derivative products, called with the library's
// conventions (outputs zeroed before the call, parameter parts summed over ranks, NaN/Inf is an
// error naming the callback, C++ exceptions turned into PETSc errors).
#pragma once

#include "engine/dynamics.hpp"
#include "hybridsens/second_order.hpp"
#include "engine/cost_evaluator.hpp"

#include <vector>

namespace hybridsens {

class SecondOrderCallbacks {
public:
  // costProducts[k] may be null only for a cost with no terminal, integrand or measurement part.
  SecondOrderCallbacks(Dynamics &dyn, CostEvaluator &costs, const SecondOrderModel &model, std::vector<const SecondOrderCost *> costProducts);
  ~SecondOrderCallbacks() { VecDestroy(&work_); }
  SecondOrderCallbacks(const SecondOrderCallbacks &) = delete;
  SecondOrderCallbacks &operator=(const SecondOrderCallbacks &) = delete;
  PetscInt numParameters() const { return dyn_.numParameters(); }

  // (hu, hp) = ∇²(wᵀf)(t, u; d)·(v, vp).
  PetscErrorCode model(PetscReal t, Vec u, const DiscreteState &d, Vec w, Vec v, const PetscScalar *vp, Vec hu, std::vector<PetscScalar> &hp);
  // hp = (wᵀu0)_pp vp.
  PetscErrorCode initialState(Vec w, const PetscScalar *vp, std::vector<PetscScalar> &hp);
  // The same for cost k's integrand, terminal part, and the sum of its measurements at time t
  // (zero when the cost has no such part / no measurement at t).
  PetscErrorCode integrand(size_t k, PetscReal t, Vec u, const DiscreteState &d, Vec v, const PetscScalar *vp, Vec hu,
                           std::vector<PetscScalar> &hp);
  PetscErrorCode terminal(size_t k, PetscReal t, Vec u, const DiscreteState &d, Vec v, const PetscScalar *vp, Vec hu,
                          std::vector<PetscScalar> &hp);
  PetscErrorCode measurements(size_t k, PetscReal t, Vec u, const DiscreteState &d, Vec v, const PetscScalar *vp, Vec hu,
                              std::vector<PetscScalar> &hp);
  // Whether cost k has a measurement at exactly t (measurement times are step boundaries).
  bool hasMeasurementAt(size_t k, PetscReal t) const;

private:
  PetscErrorCode finish(const char *callback, PetscReal t, const DiscreteState &d, Vec hu, std::vector<PetscScalar> &hp);

  Dynamics &dyn_;
  CostEvaluator &costs_;
  const SecondOrderModel &model_;
  std::vector<const SecondOrderCost *> costProducts_;
  std::vector<std::vector<PetscReal>> times_;  // measurement times per cost
  Vec work_ = nullptr;
};

} // namespace hybridsens
