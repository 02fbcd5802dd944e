// IntegrandDerivatives: r_u and r_p of every cost's integrand at a point (t, u, d), evaluated
// together (one CostEvaluator::integrandGradient per cost gives both) and kept for the last two
// points. PETSc's theta adjoint asks for r_u and, separately, r_p at both ends of every
// reversed step — at (t_{n+1}, u_{n+1}) and (t_n, u_n) — and again at (t_n, u_n) when it
// reverses the next step: twelve gradient evaluations per step with three costs, where one
// point's three are new. A hit is bit-identical to an evaluation (see EvaluationPoint).
#pragma once

#include "engine/evaluation_cache.hpp"
#include "engine/cost_evaluator.hpp"

#include <array>
#include <vector>

namespace hybridsens {

class IntegrandDerivatives {
public:
  struct Values {
    Mat ru = nullptr;                         // n × ncost dense: column k = ∂r_k/∂u
    std::vector<std::vector<PetscScalar>> rp;  // rp[k] = ∂r_k/∂p (np entries)
  };

  IntegrandDerivatives(Dynamics &dyn, CostEvaluator &costs) : dyn_(dyn), costs_(costs) {}
  ~IntegrandDerivatives();
  IntegrandDerivatives(const IntegrandDerivatives &) = delete;
  IntegrandDerivatives &operator=(const IntegrandDerivatives &) = delete;

  // reuse false: every call evaluates (the cache is then only the place the values live).
  void setReuse(bool reuse) {
    reuse_ = reuse;
    for (auto &s : slots_) s.point.clear();
  }
  // Collective. The values stay valid until the call after next.
  PetscErrorCode at(PetscReal t, Vec u, const DiscreteState &d, const Values **out);
  PetscInt hits() const { return hits_; }

private:
  struct Slot {
    EvaluationPoint point;
    Values values;
  };
  Dynamics &dyn_;
  CostEvaluator &costs_;
  std::array<Slot, 2> slots_;
  size_t next_ = 0;  // the slot the next evaluation overwrites (the older one)
  bool reuse_ = true;
  PetscInt hits_ = 0;
  Vec ru_ = nullptr;
};

} // namespace hybridsens
