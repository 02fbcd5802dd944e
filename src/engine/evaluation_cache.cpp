#include "engine/evaluation_cache.hpp"

namespace hybridsens {

EvaluationPoint::~EvaluationPoint() { VecDestroy(&u_); }

PetscErrorCode EvaluationPoint::matches(PetscReal t, Vec u, const DiscreteState &d, bool *same) const {
  PetscBool equal;
  PetscFunctionBeginUser;
  *same = false;
  if (!valid_ || t != t_ || d != d_) PetscFunctionReturn(0);
  PetscCall(VecEqual(u, u_, &equal));
  *same = equal;
  PetscFunctionReturn(0);
}

PetscErrorCode EvaluationPoint::set(PetscReal t, Vec u, const DiscreteState &d) {
  PetscFunctionBeginUser;
  if (!u_) PetscCall(VecDuplicate(u, &u_));
  PetscCall(VecCopy(u, u_));
  t_ = t, d_ = d, valid_ = true;
  PetscFunctionReturn(0);
}

MatEvaluationCache::~MatEvaluationCache() { MatDestroy(&values_); }

PetscErrorCode MatEvaluationCache::lookup(PetscReal t, Vec u, const DiscreteState &d, Mat out, bool *hit) {
  PetscObjectState state;
  PetscFunctionBeginUser;
  *hit = false;
  if (out != target_) PetscFunctionReturn(0);
  PetscCall(MatGetNonzeroState(out, &state));
  if (state != nonzeroState_) PetscFunctionReturn(0);
  PetscCall(point_.matches(t, u, d, hit));
  if (!*hit) PetscFunctionReturn(0);
  PetscCall(MatCopy(values_, out, SAME_NONZERO_PATTERN));
  ++hits_;
  PetscFunctionReturn(0);
}

PetscErrorCode MatEvaluationCache::store(PetscReal t, Vec u, const DiscreteState &d, Mat values) {
  PetscObjectState state;
  PetscFunctionBeginUser;
  PetscCall(MatGetNonzeroState(values, &state));
  if (!values_ || values != target_ || state != nonzeroState_) {
    PetscCall(MatDestroy(&values_));
    PetscCall(MatDuplicate(values, MAT_COPY_VALUES, &values_));
  } else PetscCall(MatCopy(values, values_, SAME_NONZERO_PATTERN));
  PetscCall(point_.set(t, u, d));
  target_ = values, nonzeroState_ = state;
  PetscFunctionReturn(0);
}

} // namespace hybridsens
