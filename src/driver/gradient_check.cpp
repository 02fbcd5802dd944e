#include "hybridsens/verify.hpp"

#include "util/user_call.hpp"

#include <algorithm>
#include <cmath>

namespace hybridsens {

// NaN or Inf anywhere in a table makes the check fail (std::max would skip a NaN silently).
static bool allFinite(const std::vector<std::vector<PetscScalar>> &g) {
  for (auto &row : g)
    for (auto v : row)
      if (!std::isfinite((PetscReal)v)) return false;
  return true;
}

static PetscReal maxAbs(const std::vector<std::vector<PetscScalar>> &g) {
  PetscReal m = 0;
  for (auto &row : g)
    for (auto v : row) m = std::max(m, (PetscReal)std::fabs(v));
  return m;
}

static PetscReal maxDiff(const std::vector<std::vector<PetscScalar>> &a, const std::vector<std::vector<PetscScalar>> &b) {
  PetscReal m = 0;
  for (size_t k = 0; k < a.size(); ++k)
    for (size_t j = 0; j < a[k].size(); ++j) m = std::max(m, (PetscReal)std::fabs(a[k][j] - b[k][j]));
  return m;
}

PetscErrorCode centralDifferences(Solver &solver, const std::vector<PetscInt> &indices, PetscReal relativeStep,
                                  std::vector<std::vector<PetscScalar>> &fd) {
  const std::vector<PetscReal> p0 = solver.parameters();
  const bool wasForward = solver.forwardSensitivities(), wasAdjoint = solver.adjoint();
  PetscFunctionBeginUser;
  solver.setForwardSensitivities(false);
  solver.setAdjoint(false);
  fd.clear();
  for (size_t i = 0; i < indices.size(); ++i) {
    const PetscInt j = indices[i];
    PetscCheck(j >= 0 && j < (PetscInt)p0.size(), PetscObjectComm((PetscObject)solver.ts()), PETSC_ERR_ARG_OUTOFRANGE,
               "centralDifferences: parameter %" PetscInt_FMT " outside [0, %zu)", j, p0.size());
    const PetscReal h = relativeStep * std::max<PetscReal>(std::fabs(p0[j]), 1e-2);
    std::vector<PetscReal> q = p0;
    q[j] = p0[j] + h;
    PetscCall(solver.setParameters(q));
    PetscCall(solver.solve());
    const std::vector<PetscScalar> Jp = solver.result().objective;
    q[j] = p0[j] - h;
    PetscCall(solver.setParameters(q));
    PetscCall(solver.solve());
    const std::vector<PetscScalar> &Jm = solver.result().objective;
    fd.resize(Jm.size(), std::vector<PetscScalar>(indices.size(), 0.0));
    for (size_t k = 0; k < Jm.size(); ++k) fd[k][i] = (Jp[k] - Jm[k]) / (2 * h);
  }
  PetscCall(solver.setParameters(p0));
  solver.setForwardSensitivities(wasForward);
  solver.setAdjoint(wasAdjoint);
  PetscFunctionReturn(0);
}

// For each parameter, the side on which the computed objective is differentiated: 0 where it is
// smooth (central differences), +1 / -1 where the parameter moves a time event that sits on the
// step grid (a kink: the one-sided derivatives differ by O(h)). There the library returns the
// derivative for an earlier event (the left one in the event time), so the differences move p_j
// in the direction that advances the event. A parameter that moves such events in opposite directions has no one-sided difference
// to compare with: an error, not a guess.
static PetscErrorCode kinkSides(Solver &solver, std::vector<int> &side) {
  const HybridModel &model = solver.model();
  const std::vector<PetscReal> &p = solver.parameters();
  MPI_Comm comm = PetscObjectComm((PetscObject)solver.ts());
  PetscFunctionBeginUser;
  side.assign(p.size(), 0);
  for (const EventRecord &r : solver.result().events().records()) {
    if (!r.onStepGrid) continue;
    TimeEventInfo info;
    HS_USER_QUERY(comm, "timeEvent", info = model.timeEvent(r.id.index, p));
    for (size_t j = 0; j < info.dtime_dp.size() && j < p.size(); ++j) {
      if (info.dtime_dp[j] == 0) continue;
      const int s = info.dtime_dp[j] > 0 ? -1 : 1;  // the event moves earlier
      PetscCheck(side[j] == 0 || side[j] == s, comm, PETSC_ERR_SUP,
                 "gradient check: parameter %zu moves time events that sit on step points in opposite directions; the computed objective has "
                 "no one-sided derivative to compare with there (move the events off the step grid, e.g. with another -ts_dt)",
                 j);
      side[j] = s;
    }
  }
  PetscFunctionReturn(0);
}

// One-sided differences in the direction side_j, Richardson-extrapolated from steps h and h/2:
// D(h) = D + a h + O(h^2), so 2 D(h/2) - D(h) = D + O(h^2).
static PetscErrorCode oneSidedDifferences(Solver &solver, PetscInt j, int side, PetscReal relativeStep, const std::vector<PetscScalar> &J0,
                                          std::vector<PetscScalar> &d) {
  const std::vector<PetscReal> p0 = solver.parameters();
  const PetscReal h = relativeStep * std::max<PetscReal>(std::fabs(p0[j]), 1e-2);
  std::vector<PetscScalar> D[2];
  PetscFunctionBeginUser;
  for (int r = 0; r < 2; ++r) {
    const PetscReal hr = h / (1 << r);
    std::vector<PetscReal> q = p0;
    q[j] = p0[j] + side * hr;
    PetscCall(solver.setParameters(q));
    PetscCall(solver.solve());
    D[r].resize(J0.size());
    for (size_t k = 0; k < J0.size(); ++k) D[r][k] = (solver.result().objective[k] - J0[k]) / (side * hr);
  }
  PetscCall(solver.setParameters(p0));
  d.resize(J0.size());
  for (size_t k = 0; k < J0.size(); ++k) d[k] = 2 * D[1][k] - D[0][k];
  PetscFunctionReturn(0);
}

PetscErrorCode checkGradient(Solver &solver, const GradientCheckOptions &opt, GradientCheckReport &rep) {
  MPI_Comm comm = PetscObjectComm((PetscObject)solver.ts());
  const std::vector<PetscReal> p0 = solver.parameters();
  const size_t np = p0.size();
  PetscFunctionBeginUser;
  PetscCheck(np > 0, comm, PETSC_ERR_ARG_WRONGSTATE, "gradient check: the model has no parameters");
  const bool wasForward = solver.forwardSensitivities(), wasAdjoint = solver.adjoint();
  // Reference: forward and adjoint on the same trajectory.
  solver.setForwardSensitivities(true);
  solver.setAdjoint(true);
  PetscCall(solver.solve());
  const std::vector<PetscScalar> J0 = solver.result().objective;
  PetscCheck(!J0.empty(), comm, PETSC_ERR_ARG_WRONGSTATE, "gradient check: no cost function (Solver::addCost)");
  rep.adjoint = solver.result().gradientTable(&CostGradient::adjointP);
  rep.forward = solver.result().gradientTable(&CostGradient::forwardP);
  const size_t ncost = J0.size();
  std::vector<int> side;
  PetscCall(kinkSides(solver, side));
  // Finite differences and the Taylor test use objective values only.
  solver.setForwardSensitivities(false);
  solver.setAdjoint(false);
  auto objectiveAt = [&](const std::vector<PetscReal> &p, std::vector<PetscScalar> &J) -> PetscErrorCode {
    PetscFunctionBeginUser;
    PetscCall(solver.setParameters(p));
    PetscCall(solver.solve());
    J = solver.result().objective;
    PetscFunctionReturn(0);
  };
  // Central differences where J is smooth, one-sided ones at kinks (each parameter solved once).
  std::vector<PetscInt> smooth;
  for (size_t j = 0; j < np; ++j)
    if (!side[j]) smooth.push_back((PetscInt)j);
  std::vector<std::vector<PetscScalar>> central;
  PetscCall(centralDifferences(solver, smooth, opt.relativeStep, central));
  rep.finiteDifference.assign(ncost, std::vector<PetscScalar>(np, 0.0));
  for (size_t i = 0; i < smooth.size(); ++i)
    for (size_t k = 0; k < ncost; ++k) rep.finiteDifference[k][smooth[i]] = central[k][i];
  for (size_t j = 0; j < np; ++j) {
    if (!side[j]) continue;
    std::vector<PetscScalar> d;
    PetscCall(oneSidedDifferences(solver, (PetscInt)j, side[j], opt.relativeStep, J0, d));
    for (size_t k = 0; k < ncost; ++k) rep.finiteDifference[k][j] = d[k];
  }
  // Taylor test on the cost with the largest scaled gradient, along that gradient in scaled
  // coordinates (s_j = max(|p_j|, 1e-2)): v_j = s_j (g_j s_j)/‖g s‖, so |ε v_j| ≤ ε s_j;
  // |J(p+εv) − J(p) − ε g·v| ~ ε².
  std::vector<PetscReal> v(np), s(np);
  for (size_t j = 0; j < np; ++j) s[j] = std::max<PetscReal>(std::fabs(p0[j]), 1e-2);
  PetscReal nv = -1, gv = 0;
  for (size_t k = 0; k < ncost; ++k) {
    PetscReal n2 = 0;
    for (size_t j = 0; j < np; ++j) n2 += std::pow(rep.adjoint[k][j] * s[j], 2);
    if (std::sqrt(n2) > nv) nv = std::sqrt(n2), rep.taylorCost = k;  // NaN never wins: caught below
  }
  const size_t kt = rep.taylorCost;
  nv = std::max<PetscReal>(nv, 0);
  for (size_t j = 0; j < np; ++j) {
    v[j] = s[j] * (nv > 0 ? rep.adjoint[kt][j] * s[j] / nv : 1.0 / std::sqrt((PetscReal)np));
    // Across a kink the Taylor step must go to the side the gradient is for.
    if (side[j] && v[j] * side[j] < 0) v[j] = -v[j];
    gv += rep.adjoint[kt][j] * v[j];
  }
  rep.taylorRemainders.clear();
  rep.taylorSteps.clear();
  for (int i = 0; i < 4; ++i) {
    const PetscReal eps = opt.taylorStep / std::pow(2.0, i);
    std::vector<PetscReal> pe = p0;
    std::vector<PetscScalar> Je;
    for (size_t j = 0; j < np; ++j) pe[j] += eps * v[j];
    PetscCall(objectiveAt(pe, Je));
    rep.taylorSteps.push_back(eps);
    rep.taylorRemainders.push_back(std::fabs(Je[kt] - J0[kt] - eps * gv));
  }
  PetscCall(solver.setParameters(p0));
  solver.setForwardSensitivities(wasForward);
  solver.setAdjoint(wasAdjoint);
  const size_t nt = rep.taylorRemainders.size();
  const PetscReal r1 = rep.taylorRemainders[nt - 2], r2 = rep.taylorRemainders[nt - 1];
  rep.taylorOrder = r1 > 0 && r2 > 0 ? std::log2(r1 / r2) : 0;  // 0/0: no order to show (at round-off, below)
  const PetscReal scale = std::max<PetscReal>(std::max(maxAbs(rep.adjoint), maxAbs(rep.finiteDifference)), 1e-300);
  rep.adjointVsForward = maxDiff(rep.adjoint, rep.forward) / scale;
  rep.adjointVsFD = maxDiff(rep.adjoint, rep.finiteDifference) / scale;
  // A remainder already at round-off of J cannot show its order.
  const bool taylorAtRoundoff = r2 < 1e-12 * std::max<PetscReal>(std::fabs(J0[kt]), 1.0);
  const bool taylorOk = taylorAtRoundoff || rep.taylorOrder > 1.8;
  bool finite = allFinite(rep.adjoint) && allFinite(rep.forward) && allFinite(rep.finiteDifference) && std::isfinite(rep.taylorOrder);
  for (PetscReal r : rep.taylorRemainders) finite = finite && std::isfinite(r);
  rep.passed = finite && rep.adjointVsForward <= opt.consistencyTol && rep.adjointVsFD <= opt.tolerance && taylorOk;

  PetscCall(PetscPrintf(comm, "hybridsens gradient check (%zu costs, %zu parameters)\n  %-4s %-5s %22s %22s %22s\n", ncost, np, "cost",
                        "param", "adjoint", "forward", "finite differences"));
  for (size_t k = 0; k < ncost; ++k)
    for (size_t j = 0; j < np; ++j)
      PetscCall(PetscPrintf(comm, "  %-4zu %-5zu %22.14e %22.14e %22.14e%s\n", k, j, (double)rep.adjoint[k][j], (double)rep.forward[k][j],
                            (double)rep.finiteDifference[k][j], side[j] ? "  one-sided: moves a time event on the step grid earlier" : ""));
  PetscCall(PetscPrintf(comm, "  Taylor remainders (cost %zu, along its gradient):", rep.taylorCost));
  for (size_t i = 0; i < nt; ++i) PetscCall(PetscPrintf(comm, " %.3e", (double)rep.taylorRemainders[i]));
  if (!finite) PetscCall(PetscPrintf(comm, "\n  NaN or Inf in the gradients, differences or Taylor remainders"));
  PetscCall(PetscPrintf(comm, "\n  adjoint vs forward %.2e (tol %.0e), adjoint vs FD %.2e (tol %.0e), Taylor order %.2f%s: %s\n",
                        (double)rep.adjointVsForward, (double)opt.consistencyTol, (double)rep.adjointVsFD, (double)opt.tolerance,
                        (double)rep.taylorOrder, taylorAtRoundoff ? " (at round-off)" : "", rep.passed ? "PASSED" : "FAILED"));
  PetscCheck(rep.passed, comm, PETSC_ERR_NOT_CONVERGED,
             "Gradient check FAILED: %sadjoint vs forward %.2e, adjoint vs finite differences %.2e, Taylor order %.2f", finite ? "" : "NaN or Inf; ",
             (double)rep.adjointVsForward, (double)rep.adjointVsFD, (double)rep.taylorOrder);
  PetscFunctionReturn(0);
}

} // namespace hybridsens
