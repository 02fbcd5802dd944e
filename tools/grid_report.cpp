#include "grid_report.hpp"

#include <hybridsens/atomic_file.hpp>

#include <cmath>
#include <cstdio>

namespace hybridsens {
namespace power {
namespace grid {

std::vector<PetscInt> tableParameters(const CaseGrid &grid) {
  std::vector<PetscInt> cols;
  for (PetscInt g = 0; g < grid.numGens(); ++g)
    if (grid.ineffectiveParameter(grid.pP(g)).empty()) cols.push_back(grid.pP(g));
  for (PetscInt e = 0; e < (PetscInt)grid.events().size(); ++e) {
    const auto [a, b] = grid.eventParameters(e);
    // a fault: its clearing time, then its start; a step: its time, then its size
    if (grid.events()[e].kind == GridEvent::BusFault) cols.push_back(b), cols.push_back(a);
    else if (b < 0) cols.push_back(a);  // a line or generator trip: its time
    else cols.push_back(a), cols.push_back(b);
  }
  return cols;
}

PetscErrorCode printSensitivityTable(const CaseGrid &grid, const std::vector<std::string> &costs, const SolveResult &result) {
  PetscFunctionBeginUser;
  if (!result.adjointComputed && !result.forwardComputed) PetscFunctionReturn(0);
  const auto table = result.gradientTable(result.adjointComputed ? &CostGradient::adjointP : &CostGradient::forwardP);
  const auto names = grid.parameterNames();
  const std::vector<PetscInt> cols = tableParameters(grid);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "sensitivities d(cost)/d(parameter) at t = %g (%s):\n  %-12s", (double)result.finalTime,
                        result.adjointComputed ? "adjoint" : "forward", "cost"));
  for (PetscInt j : cols) PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %13s", names[j].c_str()));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
  for (size_t k = 0; k < costs.size(); ++k) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %-12s", costs[k].c_str()));
    for (PetscInt j : cols) PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %13.6e", (double)table[k][j]));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
  }
  PetscFunctionReturn(0);
}

static std::string number(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

PetscErrorCode writeSensitivityCsv(const CaseGrid &grid, const std::vector<std::string> &costs, const SolveResult &result, const std::string &path) {
  PetscFunctionBeginUser;
  if (path.empty()) PetscFunctionReturn(0);
  const auto names = grid.parameterNames();
  std::vector<PetscInt> cols;
  for (PetscInt j = 0; j < grid.numParams(); ++j)
    if (grid.ineffectiveParameter(j).empty()) cols.push_back(j);
  std::string text = "cost,method,value";
  for (PetscInt j : cols) text += "," + names[j];
  text += "\n";
  for (int m = 0; m < 2; ++m) {
    const bool adjoint = m == 0;
    if (adjoint ? !result.adjointComputed : !result.forwardComputed) continue;
    const auto table = result.gradientTable(adjoint ? &CostGradient::adjointP : &CostGradient::forwardP);
    for (size_t k = 0; k < costs.size(); ++k) {
      text += costs[k] + (adjoint ? ",adjoint," : ",forward,") + number(result.objective[k]);
      for (PetscInt j : cols) text += "," + number(table[k][j]);
      text += "\n";
    }
  }
  if (!result.adjointComputed && !result.forwardComputed)
    for (size_t k = 0; k < costs.size(); ++k) text += costs[k] + ",none," + number(result.objective[k]) + std::string(cols.size(), ',') + "\n";
  AtomicFile f;
  PetscCall(f.open(PETSC_COMM_WORLD, "-grid_csv", path));
  f.write(text);
  PetscCall(f.commit());
  PetscFunctionReturn(0);
}

GridMonitor::GridMonitor(const CaseGrid &grid, std::vector<std::string> costs, std::string trajectoryFile, PetscReal progressSeconds, PetscReal finalTime)
    : grid_(grid), costs_(std::move(costs)), file_(std::move(trajectoryFile)), progress_(progressSeconds), finalTime_(finalTime), columns_(tableParameters(grid)) {}

GridMonitor::~GridMonitor() {
  if (toZero_) (void)VecScatterDestroy(&toZero_);
  if (gathered_) (void)VecDestroy(&gathered_);
}

PetscErrorCode GridMonitor::header(bool sensitivities) {
  PetscFunctionBeginUser;
  const auto names = grid_.parameterNames();
  text_ = "time,event";
  for (PetscInt g = 0; g < grid_.numGens(); ++g) text_ += ",f" + grid_.genLabel(g);
  for (PetscInt g = 0; g < grid_.numGens(); ++g) text_ += ",delta" + grid_.genLabel(g);
  for (PetscInt b = 0; b < grid_.numBuses(); ++b) text_ += ",V" + std::to_string(grid_.busNumber(b));
  for (PetscInt l = 0; l < grid_.numLimiters(); ++l) text_ += "," + grid_.limiterName(l);
  for (const std::string &c : costs_) text_ += "," + c;
  if (sensitivities)
    for (const std::string &c : costs_)
      for (PetscInt j : columns_) text_ += ",d" + c + "/d" + names[j];
  text_ += "\n";
  headerDone_ = true;
  PetscFunctionReturn(0);
}

PetscErrorCode GridMonitor::sample(const ForwardSample &s) {
  PetscFunctionBeginUser;
  if (s.kind == ForwardSample::StepEnd && s.step == 0) {  // a (re-)solve starts
    if (start_ > 0) firstSolveDone_ = true;
    start_ = lastPrint_ = MPI_Wtime(), events_ = 0;
  }
  if (s.kind == ForwardSample::AfterTransition) ++events_;
  if (progress_ > 0 && s.kind == ForwardSample::StepEnd && MPI_Wtime() - lastPrint_ >= progress_) {
    lastPrint_ = MPI_Wtime();
    PetscCall(PetscFPrintf(PETSC_COMM_WORLD, PETSC_STDERR, "hybridsens-grid: t = %.4g of %g s, step %" PetscInt_FMT ", %" PetscInt_FMT " events, %.1f s\n",
                           (double)s.time, (double)finalTime_, s.step, events_, lastPrint_ - start_));
  }
  if (file_.empty() || firstSolveDone_ || s.kind == ForwardSample::AfterMeasurements) PetscFunctionReturn(0);
  if (!toZero_) PetscCall(VecScatterCreateToZero(s.u, &toZero_, &gathered_));
  PetscCall(VecScatterBegin(toZero_, s.u, gathered_, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(toZero_, s.u, gathered_, INSERT_VALUES, SCATTER_FORWARD));
  PetscMPIInt rank;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  const bool sens = !s.runningGradient.empty() && !s.runningGradient[0].empty();
  if (rank == 0) {
    if (!headerDone_) PetscCall(header(sens));
    const PetscScalar *u;
    PetscCall(VecGetArrayRead(gathered_, &u));
    std::string row = number(s.time) + "," + (s.event ? s.event->name : std::string());
    if (s.event)  // the limiter flags the event changed (a check event releases limiters without naming them)
      for (PetscInt l = 0; l < grid_.numLimiters(); ++l) {
        const PetscInt before = s.event->before[1 + l], after = s.event->after[1 + l];
        if (before != after) row += ";" + grid_.limiterName(l) + (after != 0 ? "_hits_" : "_leaves_") + ((after == 1 || before == 1) ? "max" : "min");
      }
    if (s.event)  // and the ZIP load modes (a switch converts them all, the checks set them from |V|)
      for (const std::string &m : grid_.loadModeChanges(s.event->before, s.event->after)) row += ";" + m;
    for (PetscInt g = 0; g < grid_.numGens(); ++g) row += "," + number(u[grid_.omegaRow(g)] / (2 * PETSC_PI));
    for (PetscInt g = 0; g < grid_.numGens(); ++g) row += "," + number(u[grid_.deltaRow(g)]);
    for (PetscInt b = 0; b < grid_.numBuses(); ++b) row += "," + number(std::hypot(u[grid_.vr(b)], u[grid_.vi(b)]));
    for (PetscInt l = 0; l < grid_.numLimiters(); ++l) row += "," + number(u[grid_.limitedState(l)]);
    PetscCall(VecRestoreArrayRead(gathered_, &u));
    for (size_t k = 0; k < costs_.size(); ++k) row += "," + number(s.running[k]);
    if (sens)
      for (size_t k = 0; k < costs_.size(); ++k)
        for (PetscInt j : columns_) row += "," + number(s.runningGradient[k][j]);
    text_ += row + "\n";
  }
  PetscFunctionReturn(0);
}

PetscErrorCode GridMonitor::finish() {
  PetscFunctionBeginUser;
  if (file_.empty()) PetscFunctionReturn(0);
  AtomicFile f;
  PetscCall(f.open(PETSC_COMM_WORLD, "-grid_trajectory", file_));
  f.write(text_);
  PetscCall(f.commit());
  PetscFunctionReturn(0);
}

} // namespace grid
} // namespace power
} // namespace hybridsens
