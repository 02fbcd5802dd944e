// The 9-bus initial-state kernels of the example; the grid components themselves (machine,
// exciter, governor, network, loads, fault, costs) are hybridsens::power::grid's
// (hybridsens/power/grid_kernels.hpp).
#pragma once

#include "power_flow.hpp"

namespace wecc9 {
using namespace hybridsens;
using namespace hybridsens::power::grid;

// -wecc9_init closed_form: generator g from its own parameters (P_g, Q_g, Vm_b, θ_b, KA_g).
struct ClosedFormStart {
  static constexpr int numReads = 0, numWrites = Dynamic, numParams = 5;
  GenData c;
  bool governed;
  template <class S> void initialState(const S *p, S *u0) const { generatorStart<S>(c, p[0], p[1], p[2], p[3], p[4], governed, u0); }
};
// -wecc9_init power_flow: the power flow of the area for params (Vm1, θ1, P2, P3, Vm2, Vm3, KA1,
// KA2, KA3), then every generator at rest on it and the loads' reference |V|; writes the
// generator rows (generatorStart order) of generators 1..3, the 3 load references, and (Vr, Vi)
// of the 9 buses (so u0 is consistent on the algebraic rows as well).
struct PowerFlowStart {
  static constexpr int numReads = 0, numWrites = Dynamic, numParams = pfSpecs + areaGens;
  bool governed;
  template <class S> void initialState(const S *p, S *u0) const {
    const PowerFlow<S> pf = solvePowerFlow<S>(p);
    const int rows = genStartRows + (governed ? govStartRows : 0);
    if (!pf.converged) {  // main() refuses such a p before the solve; never a silent number here
      for (int w = 0; w < areaGens * rows + 3 + 2 * areaBuses; ++w) u0[w] = std::numeric_limits<PetscReal>::quiet_NaN();
      return;
    }
    for (PetscInt g = 0; g < areaGens; ++g) {
      const PetscInt b = genBus[g];
      generatorStart<S>(gen[g], pf.P[g], pf.Q[g], pf.v.Vm[b], pf.v.th[b], p[pfSpecs + g], governed, u0 + g * rows);
    }
    for (PetscInt l = 0; l < 3; ++l) u0[areaGens * rows + l] = pf.v.Vm[loadBus[l]];
    using std::cos;
    using std::sin;
    for (PetscInt b = 0; b < areaBuses; ++b) {
      u0[areaGens * rows + 3 + 2 * b] = pf.v.Vm[b] * cos(pf.v.th[b]);
      u0[areaGens * rows + 3 + 2 * b + 1] = pf.v.Vm[b] * sin(pf.v.th[b]);
    }
  }
};

} // namespace wecc9
