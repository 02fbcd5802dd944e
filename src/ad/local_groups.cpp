// The kernel-type-independent part of the local-kernel AD path's instance groups
// (hybridsens/detail/ad_local_groups.hpp): where each instance reads and writes, the Jacobian
// pattern and its block-wise fill.
#include "hybridsens/detail/ad_local_groups.hpp"

#include <algorithm>

namespace hybridsens {
namespace ad {
namespace local {

void KernelGroupBase::addInstance(const std::vector<PetscInt> &reads, const std::vector<PetscInt> &readPos,
                                  const std::vector<PetscInt> &writes, const std::vector<PetscInt> &writePos,
                                  const std::vector<PetscInt> &params, const std::vector<PetscInt> &guards) {
  Instance s;
  s.r0 = (PetscInt)readGlob_.size(), s.w0 = (PetscInt)writeGlob_.size(), s.p0 = (PetscInt)par_.size(), s.g0 = (PetscInt)guard_.size();
  s.nr = (int)reads.size(), s.nw = (int)writes.size(), s.np = (int)params.size(), s.ng = (int)guards.size();
  readGlob_.insert(readGlob_.end(), reads.begin(), reads.end());
  readPos_.insert(readPos_.end(), readPos.begin(), readPos.end());
  writeGlob_.insert(writeGlob_.end(), writes.begin(), writes.end());
  writePos_.insert(writePos_.end(), writePos.begin(), writePos.end());
  par_.insert(par_.end(), params.begin(), params.end());
  guard_.insert(guard_.end(), guards.begin(), guards.end());
  // For resets: where each written row sits among the reads (the model checked it does).
  for (PetscInt w : writes) {
    const auto it = std::find(reads.begin(), reads.end(), w);
    writeInReads_.push_back(it == reads.end() ? -1 : (PetscInt)(it - reads.begin()));
  }
  inst_.push_back(s);
}

std::vector<PetscInt> KernelGroupBase::guardsOf(PetscInt k) const {
  const Instance &s = inst_[k];
  return {guard_.begin() + s.g0, guard_.begin() + s.g0 + s.ng};
}

PetscCount KernelGroupBase::jacobianValueCount() const {
  PetscCount c = 0;
  if (hasResidual())
    for (const Instance &s : inst_) c += (PetscCount)s.nr * s.nw;
  return c;
}

void KernelGroupBase::jacobianEntries(std::vector<PetscInt> &rows, std::vector<PetscInt> &cols) const {
  if (!hasResidual()) return;
  for (const Instance &s : inst_)
    for (int w = 0; w < s.nw; ++w)
      for (int i = 0; i < s.nr; ++i) {
        rows.push_back(writeGlob_[s.w0 + w]);
        cols.push_back(readGlob_[s.r0 + i]);
      }
}

PetscErrorCode KernelGroupBase::addJacobianValues(const PetscScalar *v, Mat J) const {
  PetscFunctionBeginUser;
  if (hasResidual())
    for (const Instance &s : inst_) {
      if (s.nr && s.nw) PetscCall(MatSetValues(J, s.nw, &writeGlob_[s.w0], s.nr, &readGlob_[s.r0], v, ADD_VALUES));
      v += (PetscCount)s.nr * s.nw;
    }
  PetscFunctionReturn(0);
}

PetscErrorCode KernelGroupBase::parameterPattern(Mat P) const {
  std::vector<PetscScalar> zeros;
  PetscFunctionBeginUser;
  if (hasResidual())
    for (const Instance &s : inst_) {
      zeros.assign((size_t)s.np * s.nw, 0.0);
      if (s.np && s.nw) PetscCall(MatSetValues(P, s.nw, &writeGlob_[s.w0], s.np, &par_[s.p0], zeros.data(), INSERT_VALUES));
    }
  PetscFunctionReturn(0);
}

void CostGroupBase::addInstance(const std::vector<PetscInt> &readPos, const std::vector<PetscInt> &params) {
  Instance s;
  s.r0 = (PetscInt)readPos_.size(), s.p0 = (PetscInt)par_.size();
  s.nr = (int)readPos.size(), s.np = (int)params.size();
  readPos_.insert(readPos_.end(), readPos.begin(), readPos.end());
  par_.insert(par_.end(), params.begin(), params.end());
  inst_.push_back(s);
}

} // namespace local
} // namespace ad
} // namespace hybridsens
