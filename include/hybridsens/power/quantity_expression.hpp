// Named quantities of a grid's state: the one parser behind the user costs of hybridsens-grid
// (-grid_terminal_cost, -grid_integral_cost; grid_expression_cost.hpp) and of the wecc9 example
// (-wecc9_terminal_cost, -wecc9_sensitivity_rows, ...). An expression is a sum of terms ±name, ±c*name or
// ±c, a name being letters then a label of digits and '_' (delta2, Vm9, delta1034_2): e.g.
// delta2-delta1, Vm9-1, 0.5*dw1+0.5*dw2. What a name means is the caller's (QuantityResolver).
#pragma once

#include <hybridsens/model.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace hybridsens {
namespace power {

struct QuantityExpression {
  enum Kind { Plain, SpeedDeviation, Magnitude };  // u[a]; u[a] − ω_s; |(u[a], u[b])|
  struct Term {
    PetscReal coef;
    Kind kind;
    PetscInt a, b;  // positions in reads (b: Magnitude only)
  };
  std::string text;
  std::vector<PetscInt> reads;  // global state rows, each once
  std::vector<Term> terms;
  PetscReal constant = 0;
  PetscReal omegaS = 0;  // the synchronous speed a SpeedDeviation subtracts

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
  // The quantity is one state entry (up to a constant): λ at that row is its adjoint; a scaled
  // entry or a magnitude has no single row.
  bool isStateEntry() const { return terms.size() == 1 && terms[0].kind != Magnitude && terms[0].coef == 1; }
  // Position of global row r in reads (added if new).
  PetscInt slot(PetscInt r) {
    const auto it = std::find(reads.begin(), reads.end(), r);
    if (it != reads.end()) return (PetscInt)(it - reads.begin());
    reads.push_back(r);
    return (PetscInt)reads.size() - 1;
  }
};

// Sets term's kind and rows (through e.slot) for the quantity base + label, or returns an error
// (collective: every rank resolves the same names) that names what is wrong.
using QuantityResolver = std::function<PetscErrorCode(const std::string &base, const std::string &label, QuantityExpression &e, QuantityExpression::Term &term)>;

// Parses text; errors start with `who` and name `option`, the text and the position, and end with
// `names` (the caller's list of quantities) where a name is malformed or unknown. Collective.
PetscErrorCode parseQuantityExpression(const std::string &text, const char *who, const char *option, const std::string &names,
                                       const QuantityResolver &resolve, PetscReal omegaS, QuantityExpression *out);

} // namespace power
} // namespace hybridsens
