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
  if (*converged) {  // the derivatives take F_x at the solution, its factors checked
    PetscReal backward;
    jacobian<PetscReal>(x.data(), spec, F.data(), J.data());
    PetscCall(lu.factor(J.data()));
    PetscCall(lu.checkBackwardError(1e-12, &backward));
  }
  PetscFunctionReturn(0);
}

void CaseGrid::PowerFlowData::injectionGradient(PetscInt b, const std::vector<PetscReal> &Vm, const std::vector<PetscReal> &th, std::vector<PetscInt> &buses,
                                                std::vector<PetscReal> &dP, std::vector<PetscReal> &dQ) const {
  using A = Sacado::Fad::DFad<PetscReal>;
  buses.assign(1, b);
  for (const AdmittanceEntry &y : rowY[b]) buses.push_back((PetscInt)y.j);
  std::sort(buses.begin(), buses.end());
  buses.erase(std::unique(buses.begin(), buses.end()), buses.end());
  const int n = 2 * (int)buses.size();
  A P, Q;
  injection(
      b,
      [&](PetscInt j, A &m, A &a) {
        const int q = (int)(std::lower_bound(buses.begin(), buses.end(), j) - buses.begin());
        m = A(n, 2 * q, Vm[j]), a = A(n, 2 * q + 1, th[j]);
      },
      P, Q);
  dP.assign(n, 0.0), dQ.assign(n, 0.0);
  for (int i = 0; i < n; ++i) dP[i] = P.size() ? P.fastAccessDx(i) : 0.0, dQ[i] = Q.size() ? Q.fastAccessDx(i) : 0.0;
}

PetscErrorCode CaseGrid::PowerFlowData::voltagesTranspose(const PetscReal *spec, const std::vector<PetscReal> &x, const SparseLU &lu,
                                                          const std::vector<std::vector<PetscReal>> &barVm, const std::vector<std::vector<PetscReal>> &barTh,
                                                          PetscScalar *const *out) const {
  using A = Sacado::Fad::DFad<PetscReal>;
  const PetscInt n = nUnknowns, ns = numSpecs(), vmSpec = 2 + (PetscInt)pvGen.size();
  const size_t count = barVm.size();
  std::vector<std::vector<PetscReal>> lambda(count, std::vector<PetscReal>(n, 0.0));
  PetscFunctionBeginUser;
  for (size_t k = 0; k < count; ++k) {
    std::vector<PetscReal> barX(n, 0.0);
    for (PetscInt b = 0; b < nB; ++b) {
      if (b == slack) out[k][0] += barVm[k][b], out[k][1] += barTh[k][b];
      else barX[thIdx[b]] += barTh[k][b];
      if (pvOf[b] >= 0) out[k][vmSpec + pvOf[b]] += barVm[k][b];
      else if (vmIdx[b] >= 0) barX[vmIdx[b]] += barVm[k][b];
    }
    PetscCall(lu.solveTranspose(barX.data(), lambda[k].data()));
  }
  // spec̄ −= F_specᵀ λ, bus by bus: F_spec by forward AD over the specs a bus's equations read.
  std::vector<A> specA(spec, spec + ns);
  std::vector<A> Fb(n);
  std::vector<PetscInt> local;
  for (PetscInt b = 0; b < nB; ++b) {
    if (b == slack) continue;
    local = pSpecsAt[b];
    auto reads = [&](PetscInt j) {
      if (j == slack) local.push_back(0), local.push_back(1);
      if (pvOf[j] >= 0) local.push_back(vmSpec + pvOf[j]);
    };
    reads(b);
    for (const AdmittanceEntry &y : rowY[b]) reads((PetscInt)y.j);
    std::sort(local.begin(), local.end());
    local.erase(std::unique(local.begin(), local.end()), local.end());
    if (local.empty()) continue;
    const int nl = (int)local.size();
    for (int q = 0; q < nl; ++q) specA[local[q]] = A(nl, q, spec[local[q]]);
    A P, Q;
    injection(
        b,
        [&](PetscInt j, A &m, A &a) {  // the unknowns passive: only the specs are seeded
          m = j == slack ? specA[0] : pvOf[j] >= 0 ? specA[vmSpec + pvOf[j]] : A(x[vmIdx[j]]);
          a = j == slack ? specA[1] : A(x[thIdx[j]]);
        },
        P, Q);
    busMismatch(b, P, Q, specA.data(), Fb.data());
    for (int q = 0; q < nl; ++q) specA[local[q]] = A(spec[local[q]]);
    for (PetscInt r : {thIdx[b], vmIdx[b]}) {
      if (r < 0 || !Fb[r].size()) continue;
      for (size_t k = 0; k < count; ++k)
        for (int q = 0; q < nl; ++q) out[k][local[q]] -= lambda[k][r] * Fb[r].fastAccessDx(q);
    }
  }
  PetscFunctionReturn(0);
}

} // namespace grid
} // namespace power
} // namespace hybridsens
