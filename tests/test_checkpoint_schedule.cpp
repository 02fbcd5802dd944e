// The binomial checkpoint schedule (src/engine/checkpoint_schedule.*): its closed form equals the
// minimum of the recursion it is derived from, and the schedule the trajectory store follows for a
// reverse sweep costs exactly that minimum while holding no more states than allowed.
#include "engine/checkpoint_schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <vector>

using namespace hybridsens;

namespace {

// F(l, c) by its definition: the cheapest first advance, found by trying every one.
std::vector<std::vector<PetscInt>> recursionTable(PetscInt L, PetscInt C) {
  std::vector<std::vector<PetscInt>> F(L + 1, std::vector<PetscInt>(C + 1, 0));
  for (PetscInt c = 0; c <= C; ++c)
    for (PetscInt l = 1; l <= L; ++l) {
      if (l == 1) F[l][c] = 1;
      else if (c == 0) F[l][c] = l * (l + 1) / 2;
      else {
        PetscInt best = PETSC_MAX_INT;
        for (PetscInt m = 1; m < l; ++m) best = std::min(best, m + F[l - m][c - 1] + F[m][c]);
        F[l][c] = best;
      }
    }
  return F;
}

// A reverse sweep over steps l … 1 as TrajectoryStore::materialize runs it: drop the kept states
// at or after the record asked for, re-take from the nearest kept state, keep what statesToKeep
// names. Returns the re-taken steps; *most: the most states held at once.
PetscInt simulateReverseSweep(PetscInt l, PetscInt c, size_t *most) {
  std::set<PetscInt> held{0};
  PetscInt retaken = 0;
  *most = 1;
  for (PetscInt n = l; n >= 1; --n) {
    for (auto it = held.begin(); it != held.end();) it = (*it >= n && *it != 0) ? held.erase(it) : std::next(it);
    const PetscInt from = *std::prev(held.lower_bound(n));
    for (PetscInt k : statesToKeep(n, from, c + 1 - (PetscInt)held.size())) held.insert(k);
    *most = std::max(*most, held.size());
    retaken += n - from;
  }
  return retaken;
}

} // namespace

TEST(CheckpointSchedule, ClosedFormIsTheMinimumOfTheRecursion) {
  const auto F = recursionTable(200, 10);
  for (PetscInt c = 0; c <= 10; ++c)
    for (PetscInt l = 1; l <= 200; ++l) ASSERT_EQ(binomialReplays(l, c), F[l][c]) << "l = " << l << ", c = " << c;
}

TEST(CheckpointSchedule, AdvanceIsOptimal) {
  for (PetscInt c = 1; c <= 6; ++c)
    for (PetscInt l = 2; l <= 150; ++l) {
      const PetscInt m = binomialAdvance(l, c);
      ASSERT_GE(m, 1);
      ASSERT_LT(m, l);
      EXPECT_EQ(m + binomialReplays(l - m, c - 1) + binomialReplays(m, c), binomialReplays(l, c)) << "l = " << l << ", c = " << c;
    }
}

TEST(CheckpointSchedule, ReverseSweepCostsTheMinimumWithinTheStates) {
  for (PetscInt c = 0; c <= 7; ++c)
    for (PetscInt l = 1; l <= 160; ++l) {
      size_t most;
      EXPECT_EQ(simulateReverseSweep(l, c, &most), binomialReplays(l, c)) << "l = " << l << ", c = " << c;
      EXPECT_LE(most, (size_t)c + 1) << "l = " << l << ", c = " << c;
    }
}

// Revolve's repetition bound: with s states (c = s − 1 spare) no step is taken more than r times
// when l ≤ β(s, r); here as total cost ≤ r·l + l. And large arguments do not overflow.
TEST(CheckpointSchedule, BinomialBoundAndLargeArguments) {
  EXPECT_EQ(binomialReplays(1, 0), 1);
  EXPECT_EQ(binomialReplays(3, 1), 5);  // advance 2, reverse 1; advance 1, reverse 1; reverse 1
  // s = 31 states, l = 2000: β(31, 2) = 528 < 2000 ≤ β(31, 3) = 5984, so at most 3 forward re-takes per step.
  EXPECT_LE(binomialReplays(2000, 30), 3 * 2000 + 2000);
  EXPECT_GT(binomialReplays(2000, 30), 2 * 2000);
  const PetscInt big = binomialReplays(100000000, 1000);
  EXPECT_GT(big, 100000000);
  EXPECT_LT(big, 5 * (PetscInt)100000000);
}
