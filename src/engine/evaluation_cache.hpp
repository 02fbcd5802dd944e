// The last value of a matrix-valued model evaluation (f_u or f_p), keyed on (t, u, discrete
// state). PETSc 3.18's theta adjoint evaluates both at (t_n, u_n) at the end of reversing one
// step and again at the start of reversing the next (theta.c TSAdjointStep_Theta, endpoint
// form): with the cache on, the second evaluation is a copy. A hit needs the same time, the
// same discrete state, a bitwise-equal state vector and an unchanged nonzero pattern of the
// target matrix, so a hit returns exactly what the model would have (the model callbacks are
// functions of (t, u, p, mode); p does not change while the cache is on).
#pragma once

#include "hybridsens/model.hpp"

#include <petscmat.h>

namespace hybridsens {

class MatEvaluationCache {
public:
  MatEvaluationCache() = default;
  ~MatEvaluationCache();
  MatEvaluationCache(const MatEvaluationCache &) = delete;
  MatEvaluationCache &operator=(const MatEvaluationCache &) = delete;

  // Copies the stored values into out when (t, u, d, out) match the last store; *hit says so.
  PetscErrorCode lookup(PetscReal t, Vec u, const DiscreteState &d, Mat out, bool *hit);
  // Remembers values (just evaluated at (t, u, d)).
  PetscErrorCode store(PetscReal t, Vec u, const DiscreteState &d, Mat values);
  void clear() { valid_ = false; }
  PetscInt hits() const { return hits_; }

private:
  bool valid_ = false;
  PetscReal t_ = 0;
  DiscreteState d_;
  Vec u_ = nullptr;
  Mat values_ = nullptr, target_ = nullptr;  // target_: the matrix the values came from (not owned)
  PetscObjectState nonzeroState_ = 0;
  PetscInt hits_ = 0;
};

} // namespace hybridsens
