// Solver::viewGradients: the result tables every example used to print by hand. Columns are
// named after the model's parameterNames() and the chosen initial-state components, rows after
// the costs' name(), so a reader can match a number to its derivative without the source.
#include "hybridsens/solver.hpp"

#include <petscviewer.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace hybridsens {

namespace {

constexpr size_t kColumnsPerBlock = 8;  // keeps a row within a 132-column terminal

PetscErrorCode viewTable(PetscViewer viewer, const char *title, const std::vector<std::string> &rows, const std::vector<std::string> &columns,
                         const std::vector<CostGradient> &gradient, std::vector<PetscScalar> CostGradient::*parameterPart,
                         std::vector<PetscScalar> CostGradient::*initialStatePart) {
  PetscFunctionBeginUser;
  if (gradient.empty()) PetscFunctionReturn(0);
  size_t rowWidth = 4, width = 16;  // 16: "% .9e" of a negative number with a 3-digit exponent
  for (const auto &r : rows) rowWidth = std::max(rowWidth, r.size());
  for (const auto &c : columns) width = std::max(width, c.size() + 3);
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s:\n", title));
  for (size_t j0 = 0; j0 < columns.size(); j0 += kColumnsPerBlock) {
    const size_t j1 = std::min(columns.size(), j0 + kColumnsPerBlock);
    PetscCall(PetscViewerASCIIPrintf(viewer, "  %-*s", (int)rowWidth, "cost"));
    for (size_t j = j0; j < j1; ++j) PetscCall(PetscViewerASCIIPrintf(viewer, " %*s", (int)width, ("d/d" + columns[j]).c_str()));
    PetscCall(PetscViewerASCIIPrintf(viewer, "\n"));
    for (size_t k = 0; k < gradient.size(); ++k) {
      const std::vector<PetscScalar> &gp = gradient[k].*parameterPart, &gu = gradient[k].*initialStatePart;
      PetscCall(PetscViewerASCIIPrintf(viewer, "  %-*s", (int)rowWidth, rows[k].c_str()));
      for (size_t j = j0; j < j1; ++j) {
        const PetscScalar g = j < gp.size() ? gp[j] : gu[j - gp.size()];
        PetscCall(PetscViewerASCIIPrintf(viewer, " % *.9e", (int)width, (double)PetscRealPart(g)));
      }
      PetscCall(PetscViewerASCIIPrintf(viewer, "\n"));
    }
  }
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode Solver::viewGradients(PetscViewer viewer, bool initialStateColumns) const {
  PetscFunctionBeginUser;
  if (!viewer) viewer = PETSC_VIEWER_STDOUT_(PetscObjectComm((PetscObject)ts_));
  PetscBool ascii;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  PetscCheck(ascii, PetscObjectComm((PetscObject)viewer), PETSC_ERR_SUP, "Solver::viewGradients: ASCII viewers only (the JSON summary, -hs_summary, has the numbers for programs)");
  std::vector<std::string> rows, columns = model_.parameterNames();
  // A name list of the wrong length would shift every column under the wrong heading.
  PetscCheck(columns.size() == params_.size(), PetscObjectComm((PetscObject)viewer), PETSC_ERR_ARG_SIZ,
             "Solver::viewGradients: the model's parameterNames() has %zu names for %zu parameters", columns.size(), params_.size());
  for (const CostFunction *c : costs_) rows.push_back(c->name());
  if (initialStateColumns)
    for (PetscInt i : u0Indices_) columns.push_back("u0[" + std::to_string(i) + "]");
  const SolveResult &r = result_;
  if (!r.objective.empty()) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "objective:"));
    for (size_t k = 0; k < r.objective.size(); ++k)
      PetscCall(PetscViewerASCIIPrintf(viewer, "%s %s = %.15g", k ? "," : "", rows[k].c_str(), (double)PetscRealPart(r.objective[k])));
    PetscCall(PetscViewerASCIIPrintf(viewer, "\n"));
  }
  if (r.forwardComputed) PetscCall(viewTable(viewer, "forward sensitivities", rows, columns, r.gradient, &CostGradient::forwardP, &CostGradient::forwardU0));
  if (r.adjointComputed) PetscCall(viewTable(viewer, "adjoint gradients", rows, columns, r.gradient, &CostGradient::adjointP, &CostGradient::adjointU0));
  const PetscReal diff = r.adjointForwardDifference();
  if (diff >= 0) PetscCall(PetscViewerASCIIPrintf(viewer, "adjoint vs forward: max relative difference %.2e\n", (double)diff));
  PetscFunctionReturn(0);
}

} // namespace hybridsens
