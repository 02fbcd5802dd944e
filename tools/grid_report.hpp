// What hybridsens-grid prints and writes besides the library's JSON summary: the sensitivity
// table (printed, and as CSV with -grid_csv), the trajectory CSV for scripts/plot_grid.py
// (-grid_trajectory: frequencies f<gen> (Hz), rotor angles delta<gen> (rad), bus voltages V<bus>
// (pu), limited states (VR<gen>, Pv<gen>), running costs and their running
// gradients at every step end and event; the event column names the event and, after ";", each
// limiter flag it changed, e.g. "limiter_check_off;VR3_leaves_max") and the progress line of long runs.
#pragma once

#include <hybridsens/hybridsens.hpp>
#include <hybridsens/power/case_grid.hpp>

#include <petscts.h>

#include <memory>
#include <string>
#include <vector>

namespace hybridsens {
namespace power {
namespace grid {

// The columns of the sensitivity tables: the dispatch P of the generators it sets (not the
// slack's), then the disturbances' times and sizes (fault clearing times first).
std::vector<PetscInt> tableParameters(const CaseGrid &grid);

// Prints the rows cost × tableParameters (adjoint if it ran, else forward).
PetscErrorCode printSensitivityTable(const CaseGrid &grid, const std::vector<std::string> &costs, const SolveResult &result);
// CSV: cost,method,value,<every parameter that has an effect>; one row per cost and method that ran.
PetscErrorCode writeSensitivityCsv(const CaseGrid &grid, const std::vector<std::string> &costs, const SolveResult &result, const std::string &path);

// The forward monitor of the command: the trajectory CSV (first solve only) and the progress line.
class GridMonitor {
public:
  GridMonitor(const CaseGrid &grid, std::vector<std::string> costs, std::string trajectoryFile, PetscReal progressSeconds, PetscReal finalTime);
  ~GridMonitor();
  PetscErrorCode sample(const ForwardSample &s);
  // Collective: writes the trajectory file (if asked) from the rows collected.
  PetscErrorCode finish();

private:
  PetscErrorCode header(bool sensitivities);
  const CaseGrid &grid_;
  std::vector<std::string> costs_;
  std::string file_;
  PetscReal progress_, finalTime_;
  double start_ = 0, lastPrint_ = 0;
  bool firstSolveDone_ = false, headerDone_ = false;
  PetscInt events_ = 0;
  std::vector<PetscInt> columns_;  // parameter columns of the running gradients
  std::string text_;               // rank 0: the CSV so far
  VecScatter toZero_ = nullptr;
  Vec gathered_ = nullptr;
};

} // namespace grid
} // namespace power
} // namespace hybridsens
