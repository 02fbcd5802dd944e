// Output of the wecc9 driver: state and sensitivity-trajectory CSV files (rank 0 writes) and the
// -wecc9_check_start report.
#pragma once

#include "wecc9_costs.hpp"

#include "hybridsens/atomic_file.hpp"

namespace wecc9 {
using namespace hybridsens;

// -wecc9_states FILE: every step start (post-event state) and the final state, one CSV line
// "t,u_0,...,u_{n-1}" each, written by rank 0 (for the PETSc peer test and the plotting script).
// Every output file of the driver is an AtomicFile: complete after the solve, or an error and
// the previous file untouched.
struct StateWriter {
  AtomicFile out;
  FILE *file = nullptr;  // out.file(): rank 0 only
  VecScatter toZero = nullptr;
  Vec all = nullptr;
  PetscReal lastT = -1;
  PetscInt lastStep = -1;
};
inline PetscErrorCode writeStates(TS, PetscInt step, PetscReal t, Vec u, void *ctx) {
  auto *w = static_cast<StateWriter *>(ctx);
  PetscFunctionBeginUser;
  if (step == w->lastStep && t == w->lastT) PetscFunctionReturn(0);  // the final monitor call repeats the last start
  w->lastStep = step, w->lastT = t;
  if (!w->toZero) PetscCall(VecScatterCreateToZero(u, &w->toZero, &w->all));
  PetscCall(VecScatterBegin(w->toZero, u, w->all, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(w->toZero, u, w->all, INSERT_VALUES, SCATTER_FORWARD));
  if (w->file) {
    const PetscScalar *a;
    PetscInt n;
    PetscCall(VecGetLocalSize(w->all, &n));
    PetscCall(VecGetArrayRead(w->all, &a));
    std::fprintf(w->file, "%.17g", (double)t);
    for (PetscInt i = 0; i < n; ++i) std::fprintf(w->file, ",%.17g", (double)a[i]);
    std::fprintf(w->file, "\n");
    PetscCall(VecRestoreArrayRead(w->all, &a));
  }
  PetscFunctionReturn(0);
}

// Values on rank 0 of the given global rows of u and, if S is given, of S's first np columns:
// out[r (1 + np) + 0] = u_row, out[r (1 + np) + 1 + j] = S_row,j (zeros elsewhere). Collective.
inline PetscErrorCode gatherRows(Vec u, Mat S, PetscInt np, const std::vector<PetscInt> &rows, std::vector<PetscReal> &out) {
  PetscInt lo, hi, lda = 0;
  const PetscScalar *ua, *sa = nullptr;
  PetscMPIInt rank;
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)u), &rank));
  std::vector<PetscReal> mine(rows.size() * (1 + np), 0.0);
  PetscCall(VecGetOwnershipRange(u, &lo, &hi));
  PetscCall(VecGetArrayRead(u, &ua));
  if (S) {
    PetscCall(MatDenseGetArrayRead(S, &sa));
    PetscCall(MatDenseGetLDA(S, &lda));
  }
  for (size_t r = 0; r < rows.size(); ++r) {
    if (rows[r] < lo || rows[r] >= hi) continue;
    mine[r * (1 + np)] = ua[rows[r] - lo];
    for (PetscInt j = 0; S && j < np; ++j) mine[r * (1 + np) + 1 + j] = sa[(rows[r] - lo) + j * lda];
  }
  if (S) PetscCall(MatDenseRestoreArrayRead(S, &sa));
  PetscCall(VecRestoreArrayRead(u, &ua));
  out.assign(mine.size(), 0.0);
  PetscCallMPI(MPI_Reduce(mine.data(), out.data(), (int)mine.size(), MPIU_REAL, MPIU_SUM, 0, PetscObjectComm((PetscObject)u)));
  PetscFunctionReturn(0);
}

// -wecc9_sensitivities FILE (needs -hs_forward): the forward sensitivities over time, from
// Solver::setForwardMonitor. One CSV line (after a header) per step end and per transition:
//   t, kind (step|event), event name, then for every cost with an integral its running value
//   ∫_0^t r dt and d/dp of it by every parameter (Fig. 6 bottom: dH_i/dP_g over time), then for
//   every quantity of -wecc9_sensitivity_rows (default VR and omega of generators 1-3) its
//   value and its derivative by every parameter, i.e. rows of S = du/dp (Fig. 7 bottom).
// -wecc9_adjoint FILE (needs -hs_adjoint): from Solver::setAdjointMonitor, one line per
//   adjoint sample (time decreasing): t, kind (arrived|measurements|event), event name, then
//   λ_k at the state row of every single-state quantity of -wecc9_sensitivity_rows, for every
//   cost k (∂J_k/∂u(t); e.g. for -wecc9_terminal_cost VR3 it jumps at VR3's limiter events).
struct TrajectoryCSV {
  AtomicFile out;
  FILE *file = nullptr;  // out.file(): rank 0 only
  std::vector<Expression> quantities;
  std::vector<PetscInt> rows;  // union of the quantities' reads
  std::vector<size_t> integralCosts;
  PetscInt np = 0;
  // Value and gradient (np) of expression e from gathered rows.
  void expression(const Expression &e, const std::vector<PetscReal> &g, std::vector<PetscReal> &out) const {
    using AD = Sacado::Fad::DFad<PetscReal>;
    const PetscInt nr = (PetscInt)e.reads.size();
    std::vector<AD> x(nr);
    std::vector<size_t> at(nr);
    for (PetscInt i = 0; i < nr; ++i) {
      at[i] = (size_t)(std::find(rows.begin(), rows.end(), e.reads[i]) - rows.begin());
      x[i] = AD(nr, i, g[at[i] * (1 + np)]);
    }
    const AD v = e.value(x.data());
    out.assign(1 + np, 0.0);
    out[0] = v.val();
    for (PetscInt j = 0; j < np; ++j)
      for (PetscInt i = 0; i < nr; ++i) out[1 + j] += v.dx(i) * g[at[i] * (1 + np) + 1 + j];
  }
};

// Collective; `option` names the file in errors.
inline PetscErrorCode openCSV(const char *option, const char *name, TrajectoryCSV &w) {
  PetscFunctionBeginUser;
  PetscCall(w.out.open(PETSC_COMM_WORLD, option, name));
  w.file = w.out.file();
  for (const Expression &e : w.quantities)
    for (PetscInt r : e.reads)
      if (std::find(w.rows.begin(), w.rows.end(), r) == w.rows.end()) w.rows.push_back(r);
  PetscFunctionReturn(0);
}

// Collective: the file is complete (an error if any write failed); no-op if it was not opened.
template <class Writer> PetscErrorCode commitOutput(Writer &w) {
  PetscFunctionBeginUser;
  w.file = nullptr;
  PetscCall(w.out.commit());
  PetscFunctionReturn(0);
}

inline PetscErrorCode writeForwardSample(TrajectoryCSV &w, const ForwardSample &s) {
  std::vector<PetscReal> g, q;
  PetscFunctionBeginUser;
  PetscCall(gatherRows(s.u, s.S, w.np, w.rows, g));
  if (!w.file) PetscFunctionReturn(0);
  const char *kind = s.kind == ForwardSample::AfterTransition ? "event" : s.kind == ForwardSample::StepEnd ? "step" : "measurements";
  std::fprintf(w.file, "%.17g,%s,%s", (double)s.time, kind, s.event ? s.event->name.c_str() : "");
  for (size_t k : w.integralCosts) {
    std::fprintf(w.file, ",%.17g", (double)s.running[k]);
    for (PetscInt j = 0; j < w.np; ++j) std::fprintf(w.file, ",%.17g", (double)s.runningGradient[k][j]);
  }
  for (const Expression &e : w.quantities) {
    w.expression(e, g, q);
    for (PetscReal x : q) std::fprintf(w.file, ",%.17g", (double)x);
  }
  std::fprintf(w.file, "\n");
  PetscFunctionReturn(0);
}

inline PetscErrorCode writeAdjointSample(TrajectoryCSV &w, const AdjointSample &s) {
  std::vector<PetscReal> g;
  PetscFunctionBeginUser;
  const char *kind = s.kind == AdjointSample::AfterTransition ? "event" : s.kind == AdjointSample::Arrived ? "arrived" : "measurements";
  if (w.file) std::fprintf(w.file, "%.17g,%s,%s", (double)s.time, kind, s.event ? s.event->name.c_str() : "");
  for (Vec lambda : s.lambda) {
    PetscCall(gatherRows(lambda, nullptr, 0, w.rows, g));
    for (const Expression &e : w.quantities)
      if (e.isStateEntry() && w.file) {
        const size_t at = (size_t)(std::find(w.rows.begin(), w.rows.end(), e.reads[0]) - w.rows.begin());
        std::fprintf(w.file, ",%.17g", (double)g[at]);
      }
  }
  if (w.file) std::fprintf(w.file, "\n");
  PetscFunctionReturn(0);
}

// -wecc9_check_start: the initial state as the engine receives it. Prints ‖f(u0)‖∞ (all rows:
// at rest and a consistent network means an equilibrium) and compares ∂u0/∂p from the model's
// callback with central differences of the re-computed u0 (h = 1e-6 max(|p_j|, 1)), per
// parameter and overall (max error relative to max |∂u0/∂p|).
inline PetscErrorCode checkInitialState(const Grid &grid, const std::vector<PetscReal> &p) {
  const PetscInt np = (PetscInt)p.size();
  const auto names = grid.parameterNames();
  const DiscreteState d0 = grid.initialDiscreteState();
  Vec u0, f, up, um;
  Mat J;
  PetscInt nloc, N;
  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(grid.templateVec(), &u0));
  PetscCall(VecDuplicate(u0, &f));
  PetscCall(VecDuplicate(u0, &up));
  PetscCall(VecDuplicate(u0, &um));
  PetscCall(grid.initialState(ModeContext{p, d0}, u0));
  PetscCall(grid.rhs(0.0, u0, ModeContext{p, d0}, f));
  PetscReal fnorm;
  PetscCall(VecNorm(f, NORM_INFINITY, &fnorm));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "start: |f(u0)|_inf = %.3e\n", (double)fnorm));
  PetscCall(VecGetLocalSize(u0, &nloc));
  PetscCall(VecGetSize(u0, &N));
  PetscCall(MatCreateDense(grid.comm(), nloc, PETSC_DECIDE, N, np, nullptr, &J));
  PetscCall(MatZeroEntries(J));
  PetscCall(grid.initialStateJacobianP(ModeContext{p, d0}, J));
  PetscCall(MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY));
  PetscReal Jmax;
  PetscCall(MatNorm(J, NORM_MAX, &Jmax));
  PetscReal worst = 0;
  for (PetscInt j = 0; j < np; ++j) {
    const PetscReal h = 1e-6 * std::max(std::fabs(p[j]), (PetscReal)1.0);
    std::vector<PetscReal> pp(p), pm(p);
    pp[j] += h, pm[j] -= h;
    PetscCall(grid.initialState(ModeContext{pp, d0}, up));
    PetscCall(grid.initialState(ModeContext{pm, d0}, um));
    PetscCall(VecAXPY(up, -1.0, um));
    PetscCall(VecScale(up, 1.0 / (2 * h)));  // central difference
    Vec col;
    PetscReal colNorm, err;
    PetscCall(MatDenseGetColumnVecRead(J, j, &col));
    PetscCall(VecNorm(col, NORM_INFINITY, &colNorm));
    PetscCall(VecAXPY(up, -1.0, col));
    PetscCall(MatDenseRestoreColumnVecRead(J, j, &col));
    PetscCall(VecNorm(up, NORM_INFINITY, &err));
    worst = std::max(worst, err);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "start: du0/d%-5s |column|_inf = %.6e  |column - FD|_inf = %.3e\n", names[j].c_str(), (double)colNorm, (double)err));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "start: du0/dp vs central differences: max error %.3e (relative %.3e)\n", (double)worst, (double)(worst / Jmax)));

  // Second order: (λᵀu0)_pp δp (initialStateHessianProduct) vs central differences of λᵀ ∂u0/∂p
  // along δp, for fixed pseudo-random λ (λ_i = sin(i + 1)) and δp (δp_j = cos(j + 1) max(|p_j|, 1)).
  Vec lambda;
  PetscInt lo, hi;
  PetscCall(VecDuplicate(u0, &lambda));
  PetscCall(VecGetOwnershipRange(lambda, &lo, &hi));
  for (PetscInt i = lo; i < hi; ++i) PetscCall(VecSetValue(lambda, i, std::sin((PetscReal)(i + 1)), INSERT_VALUES));
  PetscCall(VecAssemblyBegin(lambda));
  PetscCall(VecAssemblyEnd(lambda));
  std::vector<PetscScalar> dp(np), hp(np, 0.0), fd(np, 0.0);
  for (PetscInt j = 0; j < np; ++j) dp[j] = std::cos((PetscReal)(j + 1)) * std::max(std::fabs(p[j]), (PetscReal)1.0);
  PetscCall(grid.initialStateHessianProduct(ModeContext{p, d0}, lambda, dp.data(), hp.data()));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, hp.data(), (int)np, MPIU_SCALAR, MPIU_SUM, grid.comm()));  // this rank's contribution
  const PetscReal h2 = 1e-6;
  for (int side = -1; side <= 1; side += 2) {
    std::vector<PetscReal> q(p);
    for (PetscInt j = 0; j < np; ++j) q[j] += side * h2 * dp[j];
    Mat Jq;
    Vec w;
    PetscCall(MatCreateDense(grid.comm(), nloc, PETSC_DECIDE, N, np, nullptr, &Jq));
    PetscCall(MatZeroEntries(Jq));
    PetscCall(grid.initialStateJacobianP(ModeContext{q, d0}, Jq));
    PetscCall(MatAssemblyBegin(Jq, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(Jq, MAT_FINAL_ASSEMBLY));
    PetscCall(MatCreateVecs(Jq, &w, nullptr));
    PetscCall(MatMultTranspose(Jq, lambda, w));  // (∂u0/∂p)ᵀ λ
    const PetscScalar *a;
    PetscInt wlo, whi;
    PetscCall(VecGetOwnershipRange(w, &wlo, &whi));
    std::vector<PetscScalar> mine(np, 0.0);
    PetscCall(VecGetArrayRead(w, &a));
    for (PetscInt j = wlo; j < whi; ++j) mine[j] = a[j - wlo];
    PetscCall(VecRestoreArrayRead(w, &a));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, mine.data(), (int)np, MPIU_SCALAR, MPIU_SUM, grid.comm()));
    for (PetscInt j = 0; j < np; ++j) fd[j] += side * mine[j] / (2 * h2);
    PetscCall(VecDestroy(&w));
    PetscCall(MatDestroy(&Jq));
  }
  PetscReal err2 = 0, scale2 = 0;
  for (PetscInt j = 0; j < np; ++j) err2 = std::max(err2, (PetscReal)std::fabs(hp[j] - fd[j])), scale2 = std::max(scale2, (PetscReal)std::fabs(hp[j]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "start: (lambda^T u0)_pp dp vs central differences of lambda^T du0/dp: max error %.3e (relative %.3e, max |Hv| %.3e)\n",
                        (double)err2, (double)(err2 / scale2), (double)scale2));
  PetscCall(VecDestroy(&lambda));
  PetscCall(MatDestroy(&J));
  PetscCall(VecDestroy(&u0));
  PetscCall(VecDestroy(&f));
  PetscCall(VecDestroy(&up));
  PetscCall(VecDestroy(&um));
  PetscFunctionReturn(0);
}

} // namespace wecc9
