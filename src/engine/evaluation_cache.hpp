// Caches of model evaluations keyed on the point (t, u, discrete state) they were made at.
// PETSc 3.18's theta adjoint evaluates f_u, f_p and the cost derivatives r_u, r_p at (t_n, u_n)
// at the end of reversing one step and again at the start of reversing the next (theta.c
// TSAdjointStep_Theta, endpoint form): with a cache, the second evaluation is a copy. A hit
// needs the same time, the same discrete state and a bitwise-equal state vector, so a hit
// returns exactly what the model would have (its callbacks are functions of (t, u, p, mode);
// p does not change while a cache is on).
#pragma once

#include "hybridsens/model.hpp"

#include <petscmat.h>

namespace hybridsens {

// One point (t, u, d): whether another is the same one, bit for bit.
class EvaluationPoint {
public:
  EvaluationPoint() = default;
  ~EvaluationPoint();
  EvaluationPoint(const EvaluationPoint &) = delete;
  EvaluationPoint &operator=(const EvaluationPoint &) = delete;

  // Collective (VecEqual): every rank holds the same (t, d), so all take the same branch.
  PetscErrorCode matches(PetscReal t, Vec u, const DiscreteState &d, bool *same) const;
  PetscErrorCode set(PetscReal t, Vec u, const DiscreteState &d);
  void clear() { valid_ = false; }

private:
  bool valid_ = false;
  PetscReal t_ = 0;
  DiscreteState d_;
  Vec u_ = nullptr;
};

// The last value of a matrix-valued model evaluation (f_u or f_p). A hit also needs an
// unchanged nonzero pattern of the target matrix.
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
  void clear() { point_.clear(); }
  PetscInt hits() const { return hits_; }

private:
  EvaluationPoint point_;
  Mat values_ = nullptr, target_ = nullptr;  // target_: the matrix the values came from (not owned)
  PetscObjectState nonzeroState_ = 0;
  PetscInt hits_ = 0;
};

} // namespace hybridsens
