// SolveResult's derived quantities (hybridsens/result.hpp).
#include "hybridsens/result.hpp"

#include <algorithm>

namespace hybridsens {

PetscReal SolveResult::adjointForwardDifference() const {
  if (!forwardComputed || !adjointComputed || gradient.empty()) return -1;
  PetscReal diff = 0, scale = 0;
  auto accumulate = [&](const std::vector<PetscScalar> &adj, const std::vector<PetscScalar> &fwd) {
    for (size_t j = 0; j < adj.size(); ++j) {
      diff = std::max(diff, (PetscReal)PetscAbsScalar(adj[j] - fwd[j]));
      scale = std::max(scale, (PetscReal)PetscAbsScalar(adj[j]));
    }
  };
  for (const CostGradient &g : gradient) {
    accumulate(g.adjointP, g.forwardP);
    accumulate(g.adjointU0, g.forwardU0);
  }
  return scale > 0 ? diff / scale : diff;
}

std::vector<std::vector<PetscScalar>> SolveResult::gradientTable(std::vector<PetscScalar> CostGradient::*part) const {
  std::vector<std::vector<PetscScalar>> t;
  for (const CostGradient &g : gradient) t.push_back(g.*part);
  return t;
}

const EventLog &SolveResult::events() const {
  static const EventLog none;  // before the first solve
  return events_ ? *events_ : none;
}

} // namespace hybridsens
