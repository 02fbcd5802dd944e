#include <hybridsens/power/grid_costs.hpp>

#include <cmath>

namespace hybridsens {
namespace power {
namespace grid {
namespace {

// Σ_g w_g (δ_g − δ_COI)² of the rotor angles u[0..n) of the generators in service: a tripped
// one (its flag in d is 1) leaves the sum and the weights of the others are renormalized (its
// frozen angle would otherwise make the spread grow with the others' frequency drift).
struct RotorAngleSpread {
  static constexpr int numReads = Dynamic;
  std::vector<PetscReal> H;       // inertias
  std::vector<PetscInt> tripFlag; // per generator: its trip flag, or -1
  template <class S> S integrand(S, const S *u, const S *, const DiscreteState &d) const {
    std::vector<PetscReal> w(H.size(), 0.0);
    PetscReal total = 0;
    for (size_t g = 0; g < H.size(); ++g)
      if (tripFlag[g] < 0 || d[tripFlag[g]] != 1) w[g] = H[g], total += H[g];
    S coi = 0.0;
    for (size_t g = 0; g < w.size(); ++g) coi += w[g] / total * u[g];
    S spread = 0.0;
    for (size_t g = 0; g < w.size(); ++g) spread += w[g] / total * (u[g] - coi) * (u[g] - coi);
    return spread;
  }
};

// max(0, V_min − |V|)² of one bus from (Vr, Vi).
struct VoltageDip {
  static constexpr int numReads = 2;
  PetscReal vmin;
  template <class S> S integrand(S, const S *u, const S *, const DiscreteState &) const {
    using std::sqrt;
    const S shortfall = vmin - sqrt(u[0] * u[0] + u[1] * u[1]);
    return shortfall > 0 ? S(shortfall * shortfall) : S(0.0);
  }
};

} // namespace

RotorAngleSpreadCost::RotorAngleSpreadCost(const CaseGrid &grid) : LocalKernelCost(grid) {
  RotorAngleSpread k;
  std::vector<PetscInt> deltas;
  for (PetscInt g = 0; g < grid.numGens(); ++g) k.H.push_back(grid.inertia(g)), k.tripFlag.push_back(grid.generatorTripFlag(g)), deltas.push_back(grid.deltaRow(g));
  add(k, {deltas, {}, {}, {}});
}

VoltageDipCost::VoltageDipCost(const CaseGrid &grid, PetscReal vmin) : LocalKernelCost(grid) {
  for (PetscInt b = 0; b < grid.numBuses(); ++b) add(VoltageDip{vmin}, {{grid.vr(b), grid.vi(b)}, {}, {}, {}});
}

} // namespace grid
} // namespace power
} // namespace hybridsens
