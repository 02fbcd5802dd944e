// User-chosen costs from named quantities (-wecc9_terminal_cost, -wecc9_integral_cost) and the
// rows reported by the sensitivity-trajectory writers.
#pragma once

#include "wecc9_grid.hpp"

#include <cstdlib>
#include <string>

namespace wecc9 {
using namespace hybridsens;

// ---- user-chosen costs and sensitivity rows: named quantities --------------------------------
// Names (generators g and buses b numbered globally from 1: generator k of area a is 3(a−1)+k,
// bus k of area a is 9(a−1)+k, as for -fault_bus):
//   Eqp<g> E'q, Edp<g> E'd, delta<g> δ (rad), omega<g> ω (rad/s), dw<g> ω − ω_s (speed
//   deviation, rad/s), Id<g>, Iq<g>, Efd<g>, RF<g>, VR<g>;   Vr<b>, Vi<b>, Vm<b> = |V_b| (pu).
// An expression is a sum of terms ±name, ±c*name or ±c: delta2-delta1 (rotor-angle spread),
// Vm9-1 (voltage deviation from 1 pu), 0.5*dw1+0.5*dw2. (Vm<b> here is the bus voltage along
// the trajectory, not the parameter Vm<b> of the initial power flow.)
struct Expression {
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
  template <class S> S value(const S *u) const {
    using std::sqrt;
    S v = constant;
    for (const Term &t : terms) {
      if (t.kind == Plain) v += t.coef * u[t.a];
      else if (t.kind == SpeedDeviation) v += t.coef * (u[t.a] - omegaS);
      else v += t.coef * sqrt(u[t.a] * u[t.a] + u[t.b] * u[t.b]);
    }
    return v;
  }
  // The quantity is one state entry (up to a constant): λ at that row is its adjoint, which the
  // adjoint CSV reports; a scaled entry or a magnitude has no single row.
  bool isStateEntry() const { return terms.size() == 1 && terms[0].kind != Magnitude && terms[0].coef == 1; }
  // Position of global row r in reads (added if new).
  PetscInt slot(PetscInt r) {
    const auto it = std::find(reads.begin(), reads.end(), r);
    if (it != reads.end()) return (PetscInt)(it - reads.begin());
    reads.push_back(r);
    return (PetscInt)reads.size() - 1;
  }
};

// Collective (every rank parses the same option); `option` names the source in errors.
inline PetscErrorCode parseExpression(const Layout &L, const std::string &text, const char *option, Expression &e) {
  static const char *genNames[] = {"Eqp", "Edp", "delta", "omega", "Id", "Iq", "Efd", "RF", "VR"};  // = the state order
  char help[160];  // (a format argument of the messages below: its own numbers are filled in here)
  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(help, sizeof help, "names: Eqp Edp delta omega dw Id Iq Efd RF VR + generator 1..%" PetscInt_FMT ", Vr Vi Vm + bus 1..%" PetscInt_FMT,
                          L.numGens(), L.numBuses()));
  e = Expression{};
  e.text = text;
  size_t i = 0;
  PetscCheck(!text.empty(), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "wecc9: empty expression in %s", option);
  while (i < text.size()) {
    PetscReal sign = 1;
    if (text[i] == '+' || text[i] == '-') sign = text[i++] == '-' ? -1 : 1;
    else PetscCheck(i == 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "wecc9: %s '%s': expected + or - at position %zu", option, text.c_str(), i + 1);
    PetscReal coef = sign;
    bool haveNumber = false;
    if (i < text.size() && (std::isdigit((unsigned char)text[i]) || text[i] == '.')) {
      char *end;
      const double c = std::strtod(text.c_str() + i, &end);
      PetscCheck(end != text.c_str() + i, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "wecc9: %s '%s': bad number at position %zu", option, text.c_str(), i + 1);
      i = (size_t)(end - text.c_str());
      coef *= c, haveNumber = true;
      if (i < text.size() && text[i] == '*') ++i;
      else {
        e.constant += coef;
        continue;
      }
    }
    size_t j = i;
    while (j < text.size() && std::isalpha((unsigned char)text[j])) ++j;
    const std::string base = text.substr(i, j - i);
    size_t k = j;
    while (k < text.size() && std::isdigit((unsigned char)text[k])) ++k;
    PetscCheck(!base.empty() && k > j, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "wecc9: %s '%s': expected a quantity%s at position %zu (%s)", option,
               text.c_str(), haveNumber ? " after '*'" : "", i + 1, help);
    // The index as written (a long run of digits is out of range, not wrapped into it).
    const long long written = k - j > 18 ? -1 : std::strtoll(text.substr(j, k - j).c_str(), nullptr, 10);
    const PetscInt n = written >= 1 && written <= PETSC_MAX_INT ? (PetscInt)(written - 1) : -1;
    i = k;
    Expression::Term term{coef, Expression::Plain, 0, 0};
    const auto gen = std::find(std::begin(genNames), std::end(genNames), base);
    if (gen != std::end(genNames) || base == "dw") {
      PetscCheck(n >= 0 && n < L.numGens(), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "wecc9: %s '%s': no generator %s (1..%" PetscInt_FMT ")", option,
                 text.c_str(), text.substr(j, k - j).c_str(), L.numGens());
      term.a = e.slot(L.gs(n, base == "dw" ? 3 : (PetscInt)(gen - std::begin(genNames))));
      if (base == "dw") term.kind = Expression::SpeedDeviation;
    } else {
      PetscCheck(base == "Vr" || base == "Vi" || base == "Vm", PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "wecc9: %s '%s': unknown quantity '%s' (%s)", option,
                 text.c_str(), base.c_str(), help);
      PetscCheck(n >= 0 && n < L.numBuses(), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "wecc9: %s '%s': no bus %s (1..%" PetscInt_FMT ")", option,
                 text.c_str(), text.substr(j, k - j).c_str(), L.numBuses());
      if (base == "Vm") term.kind = Expression::Magnitude, term.a = e.slot(L.vr(n)), term.b = e.slot(L.vi(n));
      else term.a = e.slot(base == "Vr" ? L.vr(n) : L.vi(n));
    }
    e.terms.push_back(term);
  }
  PetscCheck(!e.terms.empty(), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "wecc9: %s '%s' names no quantity", option, text.c_str());
  PetscFunctionReturn(0);
}

// ψ = e(u(T)).
struct TerminalExpression {
  static constexpr int numReads = Dynamic;
  Expression e;
  template <class S> S terminal(S, const S *u, const S *, const DiscreteState &) const { return e.value(u); }
};
// r = e(u(t))².
struct SquaredExpression {
  static constexpr int numReads = Dynamic;
  Expression e;
  template <class S> S integrand(S, const S *u, const S *, const DiscreteState &) const {
    const S v = e.value(u);
    return v * v;
  }
};

// -wecc9_terminal_cost e1,e2,...: one cost e_i(u(T)) each; -wecc9_integral_cost: ∫_0^T e_i² dt each.
class ExpressionCost : public LocalKernelCost {
public:
  ExpressionCost(const Grid &grid, const Expression &e, bool integral)
      : LocalKernelCost(grid), name_(integral ? "int[" + e.text + "]^2" : "[" + e.text + "](T)") {
    if (integral) add(SquaredExpression{e}, {e.reads, {}, {}, {}});
    else add(TerminalExpression{e}, {e.reads, {}, {}, {}});
  }
  std::string name() const override { return name_; }

private:
  std::string name_;
};

} // namespace wecc9
