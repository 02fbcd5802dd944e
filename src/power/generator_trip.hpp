// A generator's kernel (machine, exciter or governor) that a generator_trip event can switch off.
//
// Once the trip flag is 1 the generator is out of the system: its current injection leaves its
// bus's balance rows, its stator currents Id, Iq are 0, and every differential state of the unit
// freezes at its value at the trip (a tripped unit's dynamics no longer act on the grid, and
// integrating an open-circuit machine with its controls would only add events nobody asked for).
// Other algebraic rows of the unit (an exciter's transducer Vc = |V|, a bypassed lead-lag)
// keep their equations, which stay solvable. The residual changes with the flag only, so the
// trip is an ordinary mode switch at a time event: the library's event-time terms give d/d(trip
// time) and the re-solve after the switch sets the network's new voltages.
#pragma once

#include <hybridsens/ad_local.hpp>

#include <petscsys.h>

#include <utility>
#include <vector>

namespace hybridsens {
namespace power {
namespace grid {

template <class K> struct Trippable {
  static constexpr int numReads = K::numReads, numWrites = K::numWrites, numParams = K::numParams;
  // What row w of the kernel's writes becomes once tripped.
  static constexpr PetscInt Zero = -1, Keep = -2;  // Zero: f = 0 (frozen state, no injection); Keep: the kernel's equation;
  K kernel;                                        // otherwise: f = u[after[w]] (the state itself is 0: Id, Iq)
  PetscInt flag;
  std::vector<PetscInt> after;

  template <class S> void residual(S t, const S *u, const S *p, const DiscreteState &d, S *f) const {
    kernel.template residual<S>(t, u, p, d, f);
    if (d[flag] != 1) return;
    for (size_t w = 0; w < after.size(); ++w)
      if (after[w] == Zero) f[w] = 0.0;
      else if (after[w] >= 0) f[w] = u[after[w]];
  }
  // A tripped unit's limiter guards are inactive (CaseGrid::guardActive); while in service they are the kernel's.
  template <class S>
  auto guard(PetscInt k, S t, const S *u, const S *p, const DiscreteState &d) const
      -> decltype(std::declval<const K &>().template guard<S>(k, t, u, p, d)) {
    return kernel.template guard<S>(k, t, u, p, d);
  }
  template <class S> auto initialState(const S *p, S *u0) const -> decltype(std::declval<const K &>().template initialState<S>(p, u0)) {
    kernel.template initialState<S>(p, u0);
  }
};

} // namespace grid
} // namespace power
} // namespace hybridsens
