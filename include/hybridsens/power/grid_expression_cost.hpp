// User costs of a CaseGrid from named quantities (hybridsens-grid -grid_terminal_cost,
// -grid_integral_cost), the grid command's form of the examples' wecc9 user costs:
//   terminal  ψ = e(u(T));   integral  ∫₀ᵀ e(u(t))² dt.
// An expression e is a sum of terms ±name, ±c*name or ±c, e.g. delta2-delta1 (a rotor-angle
// difference), Vm9-1 (a voltage deviation from 1 pu), 0.5*dw1+0.5*dw2. Names:
//   delta<g> δ (rad), omega<g> ω (rad/s), dw<g> ω − ω_s, Efd<g> the field voltage (not GENCLS),
//   VR<g> the exciter's limited state (with an exciter)   of generator g, by its label (the bus
//   number, or bus_id where a bus has several: delta1034_2);
//   Vr<b>, Vi<b>, Vm<b> = |V|                                of the bus numbered b in the case.
// (Vm<b> here is the bus voltage along the trajectory, not the power-flow parameter -Vm<b>.)
#pragma once

#include <hybridsens/power/case_grid.hpp>

#include <string>
#include <vector>

namespace hybridsens {
namespace power {
namespace grid {

struct GridExpression {
  enum Kind { Plain, SpeedDeviation, Magnitude };
  struct Term {
    PetscReal coef;
    Kind kind;
    PetscInt a, b;  // positions in reads (b: Magnitude only)
  };
  std::string text;
  std::vector<PetscInt> reads;  // global state rows, each once
  std::vector<Term> terms;
  PetscReal constant = 0;
};

// Parses text for grid; a malformed expression or an unknown name is an error naming `option`
// and the position. Collective (every rank parses the same text).
PetscErrorCode parseGridExpression(const CaseGrid &grid, const std::string &text, const char *option, GridExpression *out);

class GridExpressionCost : public LocalKernelCost {
public:
  // integral: ∫ e² dt, named "int[e]^2"; else e(u(T)), named "[e](T)".
  GridExpressionCost(const CaseGrid &grid, const GridExpression &e, bool integral);
  std::string name() const override { return name_; }

private:
  std::string name_;
};

} // namespace grid
} // namespace power
} // namespace hybridsens
