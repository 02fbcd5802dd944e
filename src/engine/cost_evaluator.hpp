// CostEvaluator: evaluates the user's cost functions with the library's conventions (sums
// over ranks, finiteness checks, exceptions caught at the boundary).
#pragma once

#include "engine/dynamics.hpp"
#include "hybridsens/objective.hpp"

#include <vector>

namespace hybridsens {

class CostEvaluator {
public:
  CostEvaluator(Dynamics &dyn, std::vector<const CostFunction *> costs) : dyn_(dyn), costs_(std::move(costs)) {}
  size_t size() const { return costs_.size(); }
  const CostFunction &cost(size_t k) const { return *costs_[k]; }
  bool anyIntegrand() const;
  // Refuses a cost that implements terminal() or integrand() without declaring it
  // (hasTerminal()/hasIntegrand() false): one call of each undeclared part at (t0, u0, d0).
  PetscErrorCode checkDeclaredParts(PetscReal t, Vec u, const DiscreteState &d);

  // r_k(t, u; d) for every cost (0 where a cost has no integrand).
  PetscErrorCode integrands(PetscReal t, Vec u, const DiscreteState &d, std::vector<PetscScalar> &r);
  // ∂r_k/∂u into ru (a vector like u) and ∂r_k/∂p into rp (np entries); zero if none.
  PetscErrorCode integrandGradient(size_t k, PetscReal t, Vec u, const DiscreteState &d, Vec ru, std::vector<PetscScalar> &rp);
  // ∂r_k/∂t for every cost (0 where none), with the same explicit-time check as the model's f.
  PetscErrorCode integrandTimeDerivatives(PetscReal t, Vec u, const DiscreteState &d, std::vector<PetscScalar> &rt);
  PetscErrorCode terminal(size_t k, PetscReal t, Vec u, const DiscreteState &d, PetscScalar *psi);
  PetscErrorCode terminalGradient(size_t k, PetscReal t, Vec u, const DiscreteState &d, Vec psiu, std::vector<PetscScalar> &psip);

  // Every measurement time of every cost (step boundaries for the engine).
  std::vector<PetscReal> measurementTimes() const;
  // Σ over the measurements of cost k at exactly time t: value, and gradient added to gu/gp
  // (gu = nullptr: value only, measurementGradient is not called).
  PetscErrorCode measurementsAt(size_t k, PetscReal t, Vec u, const DiscreteState &d, PetscScalar *value, Vec gu,
                                std::vector<PetscScalar> &gp, Vec work);

private:
  Dynamics &dyn_;
  std::vector<const CostFunction *> costs_;
};

} // namespace hybridsens
