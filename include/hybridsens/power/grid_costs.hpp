// Transient-stability costs of a CaseGrid besides the frequency violations H_i
// (FrequencyViolationCost, case_grid.hpp), as integrals over the run:
//   * centre-of-inertia rotor-angle spread  ∫ Σ_g w_g (δ_g − δ_COI)² dt  (rad²·s), with inertia
//     weights w_g = H_g / Σ_k H_k and δ_COI = Σ_g w_g δ_g: how far the machines swing apart
//     (a loss of synchronism makes it grow without bound);
//   * voltage-dip integral  ∫ Σ_b max(0, V_min − |V_b|)² dt  (pu²·s) over every bus: depth and
//     duration of the voltage dips below V_min (differentiable: the square of the shortfall).
#pragma once

#include <hybridsens/power/case_grid.hpp>

#include <string>

namespace hybridsens {
namespace power {
namespace grid {

class RotorAngleSpreadCost : public LocalKernelCost {
public:
  explicit RotorAngleSpreadCost(const CaseGrid &grid);
  std::string name() const override { return "coi_spread"; }
};

class VoltageDipCost : public LocalKernelCost {
public:
  VoltageDipCost(const CaseGrid &grid, PetscReal vmin);
  std::string name() const override { return "voltage_dip"; }
};

} // namespace grid
} // namespace power
} // namespace hybridsens
