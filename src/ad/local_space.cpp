// The local-kernel AD path's index space and scatter (hybridsens/detail/ad_local_space.hpp).
#include "hybridsens/detail/ad_local_space.hpp"

namespace hybridsens {
namespace ad {
namespace local {

IndexSpace::~IndexSpace() {
  VecScatterDestroy(&scatter_);
  for (auto &w : work_) VecDestroy(&w);
}

PetscInt IndexSpace::add(PetscInt g) {
  auto it = pos_.find(g);
  if (it != pos_.end()) return it->second;
  const PetscInt p = (PetscInt)globals_.size();
  pos_.emplace(g, p);
  globals_.push_back(g);
  return p;
}

PetscErrorCode IndexSpace::setUp(Vec templ) {
  IS is;
  PetscFunctionBeginUser;
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, size(), globals_.data(), PETSC_USE_POINTER, &is));
  for (auto &w : work_) PetscCall(VecCreateSeq(PETSC_COMM_SELF, size(), &w));
  PetscCall(VecScatterCreate(templ, is, work_[0], nullptr, &scatter_));
  PetscCall(ISDestroy(&is));
  PetscFunctionReturn(0);
}

PetscErrorCode IndexSpace::gather(Vec v, Vec work) const {
  PetscFunctionBeginUser;
  PetscCall(VecScatterBegin(scatter_, v, work, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(scatter_, v, work, INSERT_VALUES, SCATTER_FORWARD));
  PetscFunctionReturn(0);
}

PetscErrorCode IndexSpace::scatterAdd(Vec work, Vec v) const {
  PetscFunctionBeginUser;
  PetscCall(VecScatterBegin(scatter_, work, v, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecScatterEnd(scatter_, work, v, ADD_VALUES, SCATTER_REVERSE));
  PetscFunctionReturn(0);
}

} // namespace local
} // namespace ad
} // namespace hybridsens
