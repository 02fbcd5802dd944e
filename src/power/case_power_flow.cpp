#include "case_power_flow.hpp"

namespace hybridsens {
namespace power {
namespace grid {

void CaseGrid::PowerFlowData::finishPattern() {
  rowY.assign(nB, {});
  for (const AdmittanceEntry &y : Y) rowY[y.i].push_back(y);
  unknownsOf.assign(nB, {});
  for (PetscInt b = 0; b < nB; ++b) {
    std::vector<PetscInt> &u = unknownsOf[b];
    auto addBus = [&](PetscInt j) {
      if (thIdx[j] >= 0) u.push_back(thIdx[j]);
      if (vmIdx[j] >= 0) u.push_back(vmIdx[j]);
    };
    addBus(b);
    for (const AdmittanceEntry &y : rowY[b]) addBus((PetscInt)y.j);
    std::sort(u.begin(), u.end());
    u.erase(std::unique(u.begin(), u.end()), u.end());
  }
  std::vector<PetscInt> busOfRow(nUnknowns);
  for (PetscInt b = 0; b < nB; ++b) {
    if (thIdx[b] >= 0) busOfRow[thIdx[b]] = b;
    if (vmIdx[b] >= 0) busOfRow[vmIdx[b]] = b;
  }
  rowStart.assign(1, 0), cols.clear();
  for (PetscInt r = 0; r < nUnknowns; ++r) {
    const std::vector<PetscInt> &u = unknownsOf[busOfRow[r]];
    cols.insert(cols.end(), u.begin(), u.end());
    rowStart.push_back((PetscInt)cols.size());
  }
}

PetscErrorCode CaseGrid::PowerFlowData::newton(const PetscReal *spec, std::vector<PetscReal> &x, SparseLU &lu, PetscReal *norm, bool *converged) const {
  const PetscInt n = nUnknowns;
  std::vector<PetscReal> F(n), J(cols.size()), dx(n);
  PetscFunctionBeginUser;
  x.assign(n, 0.0);
  for (PetscInt b = 0; b < nB; ++b) {
    if (thIdx[b] >= 0) x[thIdx[b]] = guessTh[b];
    if (vmIdx[b] >= 0) x[vmIdx[b]] = guessVm[b];
  }
  *converged = false;
  for (int it = 0; it < 30 && !*converged; ++it) {
    jacobian<PetscReal>(x.data(), spec, F.data(), J.data());
    *norm = 0;
    for (PetscReal f : F) *norm = std::max(*norm, std::fabs(f));
    PetscCall(lu.factor(J.data()));
    PetscCall(lu.solve(F.data(), dx.data()));
    for (PetscInt i = 0; i < n; ++i) x[i] -= dx[i];
    *converged = *norm < 1e-12 && it > 0;  // one step after the mismatch reached round-off
  }
  if (*converged) {  // the derivatives take F_x at the solution
    jacobian<PetscReal>(x.data(), spec, F.data(), J.data());
    PetscCall(lu.factor(J.data()));
  }
  PetscFunctionReturn(0);
}

} // namespace grid
} // namespace power
} // namespace hybridsens
