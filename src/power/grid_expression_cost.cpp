#include <hybridsens/power/grid_expression_cost.hpp>
#include <hybridsens/power/grid_kernels.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace hybridsens {
namespace power {
namespace grid {
namespace {

template <class S> S expressionValue(const GridExpression &e, const S *u) {
  using std::sqrt;
  S v = e.constant;
  for (const GridExpression::Term &t : e.terms) {
    if (t.kind == GridExpression::Plain) v += t.coef * u[t.a];
    else if (t.kind == GridExpression::SpeedDeviation) v += t.coef * (u[t.a] - omegaS);
    else v += t.coef * sqrt(u[t.a] * u[t.a] + u[t.b] * u[t.b]);
  }
  return v;
}

struct TerminalKernel {
  static constexpr int numReads = Dynamic;
  GridExpression e;
  template <class S> S terminal(S, const S *u, const S *, const DiscreteState &) const { return expressionValue(e, u); }
};
struct SquaredKernel {
  static constexpr int numReads = Dynamic;
  GridExpression e;
  template <class S> S integrand(S, const S *u, const S *, const DiscreteState &) const {
    const S v = expressionValue(e, u);
    return v * v;
  }
};

// Position of global row r in e.reads (added if new).
PetscInt slot(GridExpression &e, PetscInt r) {
  const auto it = std::find(e.reads.begin(), e.reads.end(), r);
  if (it != e.reads.end()) return (PetscInt)(it - e.reads.begin());
  e.reads.push_back(r);
  return (PetscInt)e.reads.size() - 1;
}

const char *kNames = "names: delta omega dw Efd VR + generator label (e.g. delta%s), Vr Vi Vm + bus number (e.g. Vm%d)";

} // namespace

PetscErrorCode parseGridExpression(const CaseGrid &grid, const std::string &text, const char *option, GridExpression *out) {
  const MPI_Comm world = PETSC_COMM_WORLD;
  char help[200];
  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(help, sizeof help, kNames, grid.numGens() ? grid.genLabel(0).c_str() : "1", grid.numBuses() ? grid.busNumber(0) : 1));
  GridExpression e;
  e.text = text;
  PetscCheck(!text.empty(), world, PETSC_ERR_ARG_WRONG, "hybridsens-grid: %s: an empty expression", option);
  size_t i = 0;
  while (i < text.size()) {
    PetscReal coef = 1;
    if (text[i] == '+' || text[i] == '-') coef = text[i++] == '-' ? -1 : 1;
    else PetscCheck(i == 0, world, PETSC_ERR_ARG_WRONG, "hybridsens-grid: %s '%s': expected + or - at position %zu", option, text.c_str(), i + 1);
    bool haveNumber = false;
    if (i < text.size() && (std::isdigit((unsigned char)text[i]) || text[i] == '.')) {
      char *end;
      const double c = std::strtod(text.c_str() + i, &end);
      PetscCheck(end != text.c_str() + i && std::isfinite(c), world, PETSC_ERR_ARG_WRONG, "hybridsens-grid: %s '%s': bad number at position %zu", option,
                 text.c_str(), i + 1);
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
    size_t k = j;
    while (k < text.size() && (std::isdigit((unsigned char)text[k]) || text[k] == '_')) ++k;
    const std::string base = text.substr(i, j - i), label = text.substr(j, k - j);
    PetscCheck(!base.empty() && !label.empty(), world, PETSC_ERR_ARG_WRONG, "hybridsens-grid: %s '%s': expected a quantity%s at position %zu (%s)", option,
               text.c_str(), haveNumber ? " after '*'" : "", i + 1, help);
    GridExpression::Term term{coef, GridExpression::Plain, 0, 0};
    if (base == "delta" || base == "omega" || base == "dw" || base == "Efd" || base == "VR") {
      PetscInt g = 0;
      while (g < grid.numGens() && grid.genLabel(g) != label) ++g;
      PetscCheck(g < grid.numGens(), world, PETSC_ERR_ARG_OUTOFRANGE, "hybridsens-grid: %s '%s': no generator labelled %s (labels: the bus number, or bus_id where a bus has several)",
                 option, text.c_str(), label.c_str());
      PetscInt row = base == "delta" ? grid.deltaRow(g) : base == "Efd" ? grid.fieldVoltageRow(g) : base == "VR" ? grid.regulatorRow(g) : grid.omegaRow(g);
      PetscCheck(row >= 0, world, PETSC_ERR_ARG_WRONG, "hybridsens-grid: %s '%s': generator %s has no %s state (%s)", option, text.c_str(), label.c_str(),
                 base.c_str(), base == "Efd" ? "a GENCLS machine: constant E'" : "no exciter");
      term.a = slot(e, row);
      if (base == "dw") term.kind = GridExpression::SpeedDeviation;
    } else {
      PetscCheck(base == "Vr" || base == "Vi" || base == "Vm", world, PETSC_ERR_ARG_WRONG, "hybridsens-grid: %s '%s': unknown quantity '%s' (%s)", option,
                 text.c_str(), base.c_str(), help);
      const long long number = label.find('_') == std::string::npos && label.size() <= 12 ? std::strtoll(label.c_str(), nullptr, 10) : -1;
      PetscInt b = 0;
      while (b < grid.numBuses() && grid.busNumber(b) != number) ++b;
      PetscCheck(b < grid.numBuses(), world, PETSC_ERR_ARG_OUTOFRANGE, "hybridsens-grid: %s '%s': no bus numbered %s in the case", option, text.c_str(),
                 label.c_str());
      if (base == "Vm") term.kind = GridExpression::Magnitude, term.a = slot(e, grid.vr(b)), term.b = slot(e, grid.vi(b));
      else term.a = slot(e, base == "Vr" ? grid.vr(b) : grid.vi(b));
    }
    e.terms.push_back(term);
    i = k;
  }
  PetscCheck(!e.terms.empty(), world, PETSC_ERR_ARG_WRONG, "hybridsens-grid: %s '%s' names no quantity (%s)", option, text.c_str(), help);
  *out = std::move(e);
  PetscFunctionReturn(0);
}

GridExpressionCost::GridExpressionCost(const CaseGrid &grid, const GridExpression &e, bool integral)
    : LocalKernelCost(grid), name_(integral ? "int[" + e.text + "]^2" : "[" + e.text + "](T)") {
  if (integral) add(SquaredKernel{e}, {e.reads, {}, {}, {}});
  else add(TerminalKernel{e}, {e.reads, {}, {}, {}});
}

} // namespace grid
} // namespace power
} // namespace hybridsens
