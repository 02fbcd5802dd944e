// checkHessian: the Hessian by forward-over-adjoint against the hybrid formula (two exact
// derivatives of the same discrete map), its symmetry, and its parameter columns against
// central differences of the library's adjoint gradient (Richardson-extrapolated).
#include "hybridsens/hessian.hpp"
#include "hybridsens/solver.hpp"

#include <algorithm>
#include <cmath>

namespace hybridsens {

using Tensor = std::vector<std::vector<std::vector<PetscScalar>>>;

static PetscReal maxAbs(const Tensor &H) {
  PetscReal m = 0;
  for (auto &A : H)
    for (auto &row : A)
      for (auto v : row) m = std::max(m, (PetscReal)std::fabs(v));
  return m;
}

// NaN or Inf anywhere makes the check fail (std::max in the comparisons would skip a NaN).
static bool allFinite(const Tensor &H) {
  for (auto &A : H)
    for (auto &row : A)
      for (auto v : row)
        if (!std::isfinite((PetscReal)v)) return false;
  return true;
}

PetscErrorCode checkHessian(Solver &solver, const HessianCheckOptions &opt, HessianCheckReport &rep) {
  MPI_Comm comm = PetscObjectComm((PetscObject)solver.ts());
  const std::vector<PetscReal> p0 = solver.parameters();
  const size_t np = p0.size();
  const bool wasAdjoint = solver.adjoint(), wasHessian = solver.hessianRequested(), wasForward = solver.forwardSensitivities();
  PetscFunctionBeginUser;
  solver.setHessian(false);
  solver.setForwardSensitivities(false);
  solver.setAdjoint(true);
  PetscCall(solver.solve());
  PetscCall(solver.computeHessian(HessianMethod::ForwardOverAdjoint, rep.foa));
  PetscCall(solver.computeHessian(HessianMethod::Hybrid, rep.hybrid));
  const size_t ncost = rep.foa.size(), nq = ncost ? rep.foa[0].size() : 0;
  // Gradient (parameters, then initial-state components) by the library's adjoint at p.
  auto gradientAt = [&](const std::vector<PetscReal> &p, std::vector<std::vector<PetscScalar>> &g) -> PetscErrorCode {
    PetscFunctionBeginUser;
    PetscCall(solver.setParameters(p));
    PetscCall(solver.solve());
    g.assign(ncost, {});
    for (size_t k = 0; k < ncost; ++k) {
      const CostGradient &gk = solver.result().gradient[k];
      g[k] = gk.adjointP;
      g[k].insert(g[k].end(), gk.adjointU0.begin(), gk.adjointU0.end());
    }
    PetscFunctionReturn(0);
  };
  rep.finiteDifference.assign(ncost, std::vector<std::vector<PetscScalar>>(nq, std::vector<PetscScalar>(np, 0.0)));
  for (size_t j = 0; j < np; ++j) {
    const PetscReal h = opt.relativeStep * std::max<PetscReal>(std::fabs(p0[j]), 1e-2);
    std::vector<std::vector<PetscScalar>> D[2];
    for (int r = 0; r < 2; ++r) {
      const PetscReal hr = r == 0 ? h : h / 2;
      std::vector<PetscReal> pp = p0, pm = p0;
      std::vector<std::vector<PetscScalar>> gp, gm;
      pp[j] += hr;
      pm[j] -= hr;
      PetscCall(gradientAt(pp, gp));
      PetscCall(gradientAt(pm, gm));
      D[r].assign(ncost, std::vector<PetscScalar>(nq));
      for (size_t k = 0; k < ncost; ++k)
        for (size_t i = 0; i < nq; ++i) D[r][k][i] = (gp[k][i] - gm[k][i]) / (2 * hr);
    }
    for (size_t k = 0; k < ncost; ++k)
      for (size_t i = 0; i < nq; ++i) rep.finiteDifference[k][i][j] = (4 * D[1][k][i] - D[0][k][i]) / 3;  // Richardson: O(h⁴)
  }
  // Leave the solver at p with the trajectory of p.
  PetscCall(solver.setParameters(p0));
  solver.setAdjoint(wasAdjoint);
  solver.setForwardSensitivities(wasForward);
  solver.setHessian(wasHessian);
  PetscCall(solver.solve());

  const PetscReal scale = std::max<PetscReal>(maxAbs(rep.foa), 1e-300);
  rep.asymmetry = rep.foaVsHybrid = rep.foaVsFD = 0;
  for (size_t k = 0; k < ncost; ++k)
    for (size_t i = 0; i < nq; ++i)
      for (size_t j = 0; j < nq; ++j) {
        rep.asymmetry = std::max(rep.asymmetry, (PetscReal)std::fabs(rep.foa[k][i][j] - rep.foa[k][j][i]) / scale);
        rep.asymmetry = std::max(rep.asymmetry, (PetscReal)std::fabs(rep.hybrid[k][i][j] - rep.hybrid[k][j][i]) / scale);
        rep.foaVsHybrid = std::max(rep.foaVsHybrid, (PetscReal)std::fabs(rep.foa[k][i][j] - rep.hybrid[k][i][j]) / scale);
        if (j < np) rep.foaVsFD = std::max(rep.foaVsFD, (PetscReal)std::fabs(rep.foa[k][i][j] - rep.finiteDifference[k][i][j]) / scale);
      }
  const bool finite = allFinite(rep.foa) && allFinite(rep.hybrid) && allFinite(rep.finiteDifference);
  rep.passed = finite && rep.asymmetry <= opt.symmetryTol && rep.foaVsHybrid <= opt.consistencyTol && rep.foaVsFD <= opt.tolerance;

  PetscCall(PetscPrintf(comm, "hybridsens Hessian check (%zu costs, %zu variables: %zu parameters, then initial-state components)\n", ncost, nq,
                        np));
  PetscCall(PetscPrintf(comm, "  %-4s %-4s %-4s %22s %22s %22s\n", "cost", "i", "j", "forward-over-adjoint", "hybrid", "FD of gradients"));
  for (size_t k = 0; k < ncost; ++k)
    for (size_t i = 0; i < nq; ++i)
      for (size_t j = 0; j < nq; ++j) {
        char fd[32] = "-";
        if (j < np) snprintf(fd, sizeof(fd), "%22.14e", (double)rep.finiteDifference[k][i][j]);
        PetscCall(PetscPrintf(comm, "  %-4zu %-4zu %-4zu %22.14e %22.14e %22s\n", k, i, j, (double)rep.foa[k][i][j], (double)rep.hybrid[k][i][j], fd));
      }
  if (!finite) PetscCall(PetscPrintf(comm, "  NaN or Inf in the Hessians or the differences of gradients\n"));
  PetscCall(PetscPrintf(comm, "  asymmetry %.2e (tol %.0e), forward-over-adjoint vs hybrid %.2e (tol %.0e), vs FD of gradients %.2e (tol %.0e): %s\n",
                        (double)rep.asymmetry, (double)opt.symmetryTol, (double)rep.foaVsHybrid, (double)opt.consistencyTol, (double)rep.foaVsFD,
                        (double)opt.tolerance, rep.passed ? "PASSED" : "FAILED"));
  PetscCheck(rep.passed, comm, PETSC_ERR_NOT_CONVERGED, "Hessian check FAILED: %sasymmetry %.2e, forward-over-adjoint vs hybrid %.2e, vs FD %.2e",
             finite ? "" : "NaN or Inf; ", (double)rep.asymmetry, (double)rep.foaVsHybrid, (double)rep.foaVsFD);
  PetscFunctionReturn(0);
}

} // namespace hybridsens
