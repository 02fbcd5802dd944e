// User costs of a grid model from named quantities (quantity_expression.hpp):
//   terminal  ψ = e(u(T)), named "[e](T)";   integral  ∫₀ᵀ e(u(t))² dt, named "int[e]^2".
// hybridsens-grid's names (parseGridExpression), e.g. delta2-delta1, Vm9-1, 0.5*dw1+0.5*dw2:
//   delta<g> δ (rad), omega<g> ω (rad/s), dw<g> ω − ω_s, Efd<g> the field voltage (not GENCLS),
//   VR<g> the exciter's limited state (with an exciter)   of generator g, by its label (the bus
//   number, or bus_id where a bus has several: delta1034_2);
//   Vr<b>, Vi<b>, Vm<b> = |V|                                of the bus numbered b in the case.
// (Vm<b> here is the bus voltage along the trajectory, not the power-flow parameter -Vm<b>.)
#pragma once

#include <hybridsens/power/case_grid.hpp>
#include <hybridsens/power/quantity_expression.hpp>

#include <string>

namespace hybridsens {
namespace power {

// A cost of any LocalKernelModel's state from an expression (the grid command's and the wecc9
// example's user costs).
class QuantityCost : public LocalKernelCost {
public:
  QuantityCost(const LocalKernelModel &model, const QuantityExpression &e, bool integral);
  std::string name() const override { return name_; }

private:
  std::string name_;
};

namespace grid {

// Parses text with hybridsens-grid's names for grid; errors name `option` and the position.
// Collective (every rank parses the same text).
PetscErrorCode parseGridExpression(const CaseGrid &grid, const std::string &text, const char *option, QuantityExpression *out);

} // namespace grid
} // namespace power
} // namespace hybridsens
