#include "sensitivity/integrand_derivatives.hpp"

namespace hybridsens {

IntegrandDerivatives::~IntegrandDerivatives() {
  for (auto &s : slots_) MatDestroy(&s.values.ru);
  VecDestroy(&ru_);
}

PetscErrorCode IntegrandDerivatives::at(PetscReal t, Vec u, const DiscreteState &d, const Values **out) {
  const PetscInt ncost = (PetscInt)costs_.size();
  PetscFunctionBeginUser;
  if (reuse_)
    for (Slot &s : slots_) {
      bool same;
      PetscCall(s.point.matches(t, u, d, &same));
      if (!same) continue;
      ++hits_;
      *out = &s.values;
      PetscFunctionReturn(0);
    }
  Slot &s = slots_[next_];
  next_ = 1 - next_;
  s.point.clear();  // until the new values are complete
  if (!s.values.ru) {
    PetscInt n, N;
    PetscCall(VecGetLocalSize(u, &n));
    PetscCall(VecGetSize(u, &N));
    PetscCall(MatCreateDense(dyn_.comm(), n, PETSC_DECIDE, N, ncost, nullptr, &s.values.ru));
    s.values.rp.resize((size_t)ncost);
  }
  if (!ru_) PetscCall(VecDuplicate(u, &ru_));
  for (PetscInt k = 0; k < ncost; ++k) {
    Vec col;
    PetscCall(costs_.integrandGradient((size_t)k, t, u, d, ru_, s.values.rp[(size_t)k]));
    PetscCall(MatDenseGetColumnVecWrite(s.values.ru, k, &col));
    PetscCall(VecCopy(ru_, col));
    PetscCall(MatDenseRestoreColumnVecWrite(s.values.ru, k, &col));
  }
  if (reuse_) PetscCall(s.point.set(t, u, d));
  *out = &s.values;
  PetscFunctionReturn(0);
}

} // namespace hybridsens
