#include <hybridsens/power/grid_expression_cost.hpp>
#include <hybridsens/power/grid_kernels.hpp>

#include <cstdlib>

namespace hybridsens {
namespace power {
namespace {

struct TerminalQuantity {
  static constexpr int numReads = Dynamic;
  QuantityExpression e;
  template <class S> S terminal(S, const S *u, const S *, const DiscreteState &) const { return e.value(u); }
};
struct SquaredQuantity {
  static constexpr int numReads = Dynamic;
  QuantityExpression e;
  template <class S> S integrand(S, const S *u, const S *, const DiscreteState &) const {
    const S v = e.value(u);
    return v * v;
  }
};

} // namespace

QuantityCost::QuantityCost(const LocalKernelModel &model, const QuantityExpression &e, bool integral)
    : LocalKernelCost(model), name_(integral ? "int[" + e.text + "]^2" : "[" + e.text + "](T)") {
  if (integral) add(SquaredQuantity{e}, {e.reads, {}, {}, {}});
  else add(TerminalQuantity{e}, {e.reads, {}, {}, {}});
}

namespace grid {

PetscErrorCode parseGridExpression(const CaseGrid &grid, const std::string &text, const char *option, QuantityExpression *out) {
  const MPI_Comm world = PETSC_COMM_WORLD;
  const std::string names = "names: delta omega dw Efd VR + generator label (e.g. delta" + (grid.numGens() ? grid.genLabel(0) : std::string("1")) +
                            "), Vr Vi Vm + bus number (e.g. Vm" + std::to_string(grid.numBuses() ? grid.busNumber(0) : 1) + ")";
  const QuantityResolver resolve = [&](const std::string &base, const std::string &label, QuantityExpression &e, QuantityExpression::Term &term) {
    PetscFunctionBeginUser;
    if (base == "delta" || base == "omega" || base == "dw" || base == "Efd" || base == "VR") {
      PetscInt g = 0;
      while (g < grid.numGens() && grid.genLabel(g) != label) ++g;
      PetscCheck(g < grid.numGens(), world, PETSC_ERR_ARG_OUTOFRANGE,
                 "hybridsens-grid: %s '%s': no generator labelled %s (labels: the bus number, or bus_id where a bus has several)", option, text.c_str(),
                 label.c_str());
      const PetscInt row = base == "delta" ? grid.deltaRow(g) : base == "Efd" ? grid.fieldVoltageRow(g) : base == "VR" ? grid.regulatorRow(g) : grid.omegaRow(g);
      PetscCheck(row >= 0, world, PETSC_ERR_ARG_WRONG, "hybridsens-grid: %s '%s': generator %s has no %s state (%s)", option, text.c_str(), label.c_str(),
                 base.c_str(), base == "Efd" ? "a GENCLS machine: constant E'" : "no exciter");
      term.a = e.slot(row);
      if (base == "dw") term.kind = QuantityExpression::SpeedDeviation;
      PetscFunctionReturn(0);
    }
    PetscCheck(base == "Vr" || base == "Vi" || base == "Vm", world, PETSC_ERR_ARG_WRONG, "hybridsens-grid: %s '%s': unknown quantity '%s' (%s)", option,
               text.c_str(), base.c_str(), names.c_str());
    const long long number = label.find('_') == std::string::npos && label.size() <= 12 ? std::strtoll(label.c_str(), nullptr, 10) : -1;
    PetscInt b = 0;
    while (b < grid.numBuses() && grid.busNumber(b) != number) ++b;
    PetscCheck(b < grid.numBuses(), world, PETSC_ERR_ARG_OUTOFRANGE, "hybridsens-grid: %s '%s': no bus numbered %s in the case", option, text.c_str(),
               label.c_str());
    if (base == "Vm") term.kind = QuantityExpression::Magnitude, term.a = e.slot(grid.vr(b)), term.b = e.slot(grid.vi(b));
    else term.a = e.slot(base == "Vr" ? grid.vr(b) : grid.vi(b));
    PetscFunctionReturn(0);
  };
  PetscCall(parseQuantityExpression(text, "hybridsens-grid", option, names, resolve, omegaS, out));
  PetscFunctionReturn(0);
}

} // namespace grid
} // namespace power
} // namespace hybridsens
