// User-chosen costs from named quantities (-wecc9_terminal_cost, -wecc9_integral_cost) and the
// rows reported by the sensitivity-trajectory writers: the library's expression parser and cost
// (hybridsens/power/quantity_expression.hpp, grid_expression_cost.hpp) with this layout's names.
#pragma once

#include "wecc9_grid.hpp"

#include <hybridsens/power/grid_expression_cost.hpp>
#include <hybridsens/power/quantity_expression.hpp>

#include <cstdlib>
#include <string>

namespace wecc9 {
using namespace hybridsens;
using power::QuantityExpression;
using Expression = QuantityExpression;

// ---- user-chosen costs and sensitivity rows: named quantities --------------------------------
// Names (generators g and buses b numbered globally from 1: generator k of area a is 3(a−1)+k,
// bus k of area a is 9(a−1)+k, as for -fault_bus):
//   Eqp<g> E'q, Edp<g> E'd, delta<g> δ (rad), omega<g> ω (rad/s), dw<g> ω − ω_s (speed
//   deviation, rad/s), Id<g>, Iq<g>, Efd<g>, RF<g>, VR<g>;   Vr<b>, Vi<b>, Vm<b> = |V_b| (pu).
// An expression is a sum of terms ±name, ±c*name or ±c: delta2-delta1 (rotor-angle spread),
// Vm9-1 (voltage deviation from 1 pu), 0.5*dw1+0.5*dw2. (Vm<b> here is the bus voltage along
// the trajectory, not the parameter Vm<b> of the initial power flow.)
// Collective (every rank parses the same option); `option` names the source in errors.
inline PetscErrorCode parseExpression(const Layout &L, const std::string &text, const char *option, Expression &e) {
  static const char *genNames[] = {"Eqp", "Edp", "delta", "omega", "Id", "Iq", "Efd", "RF", "VR"};  // = the state order
  char help[160];
  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(help, sizeof help, "names: Eqp Edp delta omega dw Id Iq Efd RF VR + generator 1..%" PetscInt_FMT ", Vr Vi Vm + bus 1..%" PetscInt_FMT,
                          L.numGens(), L.numBuses()));
  const power::QuantityResolver resolve = [&](const std::string &base, const std::string &label, Expression &ex, Expression::Term &term) {
    PetscFunctionBeginUser;
    // The index as written (a long run of digits is out of range, not wrapped into it).
    const long long written = label.size() > 18 || label.find('_') != std::string::npos ? -1 : std::strtoll(label.c_str(), nullptr, 10);
    const PetscInt n = written >= 1 && written <= PETSC_MAX_INT ? (PetscInt)(written - 1) : -1;
    const auto gen = std::find(std::begin(genNames), std::end(genNames), base);
    if (gen != std::end(genNames) || base == "dw") {
      PetscCheck(n >= 0 && n < L.numGens(), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "wecc9: %s '%s': no generator %s (1..%" PetscInt_FMT ")", option,
                 text.c_str(), label.c_str(), L.numGens());
      term.a = ex.slot(L.gs(n, base == "dw" ? 3 : (PetscInt)(gen - std::begin(genNames))));
      if (base == "dw") term.kind = Expression::SpeedDeviation;
      PetscFunctionReturn(0);
    }
    PetscCheck(base == "Vr" || base == "Vi" || base == "Vm", PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "wecc9: %s '%s': unknown quantity '%s' (%s)", option,
               text.c_str(), base.c_str(), help);
    PetscCheck(n >= 0 && n < L.numBuses(), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "wecc9: %s '%s': no bus %s (1..%" PetscInt_FMT ")", option,
               text.c_str(), label.c_str(), L.numBuses());
    if (base == "Vm") term.kind = Expression::Magnitude, term.a = ex.slot(L.vr(n)), term.b = ex.slot(L.vi(n));
    else term.a = ex.slot(base == "Vr" ? L.vr(n) : L.vi(n));
    PetscFunctionReturn(0);
  };
  PetscCall(power::parseQuantityExpression(text, "wecc9", option, help, resolve, omegaS, &e));
  PetscFunctionReturn(0);
}

// -wecc9_terminal_cost e1,e2,...: one cost e_i(u(T)) each; -wecc9_integral_cost: ∫_0^T e_i² dt each.
using ExpressionCost = power::QuantityCost;

} // namespace wecc9
