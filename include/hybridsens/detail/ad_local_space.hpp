// hybridsens/detail/ad_local_space.hpp — implementation detail of hybridsens/ad_local.hpp:
// which global state entries the kernels evaluated on this rank touch, and the one VecScatter
// that moves them (independent of the kernels: compiled in src/ad/local_space.cpp).
//
// Every global index a local kernel reads or writes gets a position in [0, m) of small
// sequential work vectors. One scatter serves everything:
//   gather      (forward, INSERT): a distributed Vec → work (owned and ghost entries alike);
//   scatterAdd  (reverse, ADD):    work → a distributed Vec, summing the contributions of all
//                                  ranks (rows written by kernels evaluated elsewhere).
// No C++ exception leaves these functions' PETSc calls; allocation happens in add() (before
// setUp, outside PETSc callbacks).
#pragma once

#include <petscvec.h>

#include <array>
#include <unordered_map>
#include <vector>

namespace hybridsens {
namespace ad {
namespace local {

class IndexSpace {
public:
  static constexpr int numWork = 5;

  IndexSpace() = default;
  IndexSpace(const IndexSpace &) = delete;
  IndexSpace &operator=(const IndexSpace &) = delete;
  ~IndexSpace();

  // Contiguous ownership: rank r owns [ranges[r], ranges[r+1]).
  void setRanges(std::vector<PetscInt> ranges, PetscMPIInt rank) {
    ranges_ = std::move(ranges);
    rank_ = rank;
  }
  bool hasRanges() const { return !ranges_.empty(); }
  const std::vector<PetscInt> &ranges() const { return ranges_; }
  PetscMPIInt rank() const { return rank_; }
  PetscInt globalSize() const { return ranges_.empty() ? 0 : ranges_.back(); }
  PetscInt begin() const { return ranges_[rank_]; }
  PetscInt end() const { return ranges_[rank_ + 1]; }
  bool owns(PetscInt g) const { return g >= begin() && g < end(); }

  // Position of global index g in the work vectors (new positions before setUp only).
  PetscInt add(PetscInt g);
  PetscInt size() const { return (PetscInt)globals_.size(); }
  const std::vector<PetscInt> &globals() const { return globals_; }
  bool isSetUp() const { return scatter_ != nullptr; }

  // Creates the scatter against vectors laid out like templ (collective).
  PetscErrorCode setUp(Vec templ);

  Vec work(int k) const { return work_[k]; }
  // work ← v at the local positions (owned and ghost entries).
  PetscErrorCode gather(Vec v, Vec work) const;
  // v += work summed over all ranks (v keeps what it had).
  PetscErrorCode scatterAdd(Vec work, Vec v) const;

private:
  std::vector<PetscInt> ranges_;
  PetscMPIInt rank_ = 0;
  std::unordered_map<PetscInt, PetscInt> pos_;
  std::vector<PetscInt> globals_;
  VecScatter scatter_ = nullptr;
  std::array<Vec, numWork> work_{};
};

// Read access to a work vector's array for the lifetime of the object (Get/Restore paired).
class WorkRead {
public:
  explicit WorkRead(Vec v) : v_(v) { VecGetArrayRead(v_, &a_); }
  ~WorkRead() { VecRestoreArrayRead(v_, &a_); }
  const PetscScalar *data() const { return a_; }

private:
  Vec v_;
  const PetscScalar *a_ = nullptr;
};
class WorkWrite {
public:
  explicit WorkWrite(Vec v) : v_(v) { VecGetArray(v_, &a_); }
  ~WorkWrite() { VecRestoreArray(v_, &a_); }
  PetscScalar *data() const { return a_; }

private:
  Vec v_;
  PetscScalar *a_ = nullptr;
};

} // namespace local
} // namespace ad
} // namespace hybridsens
