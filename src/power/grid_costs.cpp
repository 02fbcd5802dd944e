#include <hybridsens/power/grid_costs.hpp>

#include <cmath>

namespace hybridsens {
namespace power {
namespace grid {
namespace {

// Σ_g w_g (δ_g − δ_COI)² of the rotor angles u[0..n).
struct RotorAngleSpread {
  static constexpr int numReads = Dynamic;
  std::vector<PetscReal> w;  // inertia weights, summing to 1
  template <class S> S integrand(S, const S *u, const S *, const DiscreteState &) const {
    S coi = 0.0;
    for (size_t g = 0; g < w.size(); ++g) coi += w[g] * u[g];
    S spread = 0.0;
    for (size_t g = 0; g < w.size(); ++g) spread += w[g] * (u[g] - coi) * (u[g] - coi);
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
  PetscReal total = 0;
  for (PetscInt g = 0; g < grid.numGens(); ++g) total += grid.inertia(g);
  RotorAngleSpread k;
  std::vector<PetscInt> deltas;
  for (PetscInt g = 0; g < grid.numGens(); ++g) k.w.push_back(grid.inertia(g) / total), deltas.push_back(grid.deltaRow(g));
  add(k, {deltas, {}, {}, {}});
}

VoltageDipCost::VoltageDipCost(const CaseGrid &grid, PetscReal vmin) : LocalKernelCost(grid) {
  for (PetscInt b = 0; b < grid.numBuses(); ++b) add(VoltageDip{vmin}, {{grid.vr(b), grid.vi(b)}, {}, {}, {}});
}

} // namespace grid
} // namespace power
} // namespace hybridsens
