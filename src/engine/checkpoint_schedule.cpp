#include "engine/checkpoint_schedule.hpp"

namespace hybridsens {

// t(l, s) of revolve: r·l − β(s + 1, r − 1) with the least r such that β(s, r) ≥ l. β(s, r) grows
// as r increases by the factor (s + r)/r and β(s + 1, r − 1) = β(s, r − 1)·(s + r)/(s + 1) (both
// divisions exact); 128-bit products, so nothing overflows for any PetscInt l.
static PetscInt revolveForwardSteps(PetscInt l, PetscInt s) {
  if (l <= 1) return 0;
  __int128 betaPrev = 1, beta = 1;  // β(s, r − 1), β(s, r)
  PetscInt r = 0;
  while (beta < l) {
    ++r;
    betaPrev = beta;
    beta = beta * (s + r) / r;
  }
  const __int128 betaUp = betaPrev * (s + r) / (s + 1);  // β(s + 1, r − 1)
  return (PetscInt)((__int128)r * l - betaUp);
}

PetscInt binomialReplays(PetscInt l, PetscInt c) {
  if (c <= 0) return l * (l + 1) / 2;  // from the held state to each step in turn
  return l + revolveForwardSteps(l, c + 1);
}

PetscInt binomialAdvance(PetscInt l, PetscInt c) {
  const PetscInt best = binomialReplays(l, c);
  for (PetscInt m = l - 1; m >= 1; --m)
    if (m + binomialReplays(l - m, c - 1) + binomialReplays(m, c) == best) return m;
  return 1;  // (unreachable: the closed form is the minimum of the recursion)
}

std::vector<PetscInt> statesToKeep(PetscInt n, PetscInt from, PetscInt freeSlots) {
  std::vector<PetscInt> keep;
  PetscInt at = from;
  while (freeSlots > 0 && n - at > 1) {
    at += binomialAdvance(n - at, freeSlots);
    keep.push_back(at);
    --freeSlots;
  }
  return keep;
}

} // namespace hybridsens
