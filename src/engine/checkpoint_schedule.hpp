// Binomial checkpointing: which steps to keep while recomputing, so that a reverse sweep over a
// stretch of steps costs the fewest recomputed steps for the memory it may use.
//
// The model (Griewank & Walther, "Algorithm 799: revolve: an implementation of checkpointing for
// the reverse or adjoint mode of computational differentiation", ACM TOMS 26(1), 2000): the state
// at step a is held; the records of steps b, b−1, …, a+1 are wanted in that order (the record of
// step n comes from re-taking step n from the state at n−1); c more states may be held at once.
// With l = b − a, the fewest re-taken steps is
//     F(l, c) = l + t(l, c + 1),   t(l, s) = r·l − β(s + 1, r − 1),   β(s, r) = (s + r)! / (s! r!),
// r the least integer with β(s, r) ≥ l (t counts the forward steps of revolve with s snapshots, the
// one holding a included; the l recording steps come on top). An optimal schedule advances m steps
// from a, keeps that state, reverses the last l − m steps with c − 1 more states, drops the state,
// and reverses the first m steps with c: F(l, c) = m + F(l − m, c − 1) + F(m, c) for an optimal m.
// tests/test_checkpoint_schedule.cpp checks the closed form against that recursion.
#pragma once

#include <petscsys.h>

#include <vector>

namespace hybridsens {

// F(l, c): the fewest re-taken steps to produce the records of l steps in reverse order from one
// held state with c more states allowed (l ≥ 1, c ≥ 0).
PetscInt binomialReplays(PetscInt l, PetscInt c);
// The largest m in [1, l − 1] of an optimal first advance (l ≥ 2, c ≥ 1).
PetscInt binomialAdvance(PetscInt l, PetscInt c);

// To produce the record of step n from the held state at step `from` (< n) with `freeSlots` more
// states allowed: the steps whose states to keep on the way (increasing, each < n). Taken from the
// recursion above, one level per kept state; the caller drops every kept state ≥ n' before it asks
// for a record n' (a reverse sweep no longer needs them).
std::vector<PetscInt> statesToKeep(PetscInt n, PetscInt from, PetscInt freeSlots);

} // namespace hybridsens
