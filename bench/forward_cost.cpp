// forward_cost — what forward (tangent-linear) sensitivities cost relative to a plain solve, as
// a function of the number of parameters m. A measurement, not a test.
//
// Two hybrid models with a few hundred events each, both serial (PETSC_COMM_SELF), defined in
// bench_models.hpp (shared with adjoint_cost):
// (1) "thermostats": a chain of N weakly coupled thermostats, gains and guard levels scaled by
//     parameters shared cyclically (q_i = p_{i mod m} for m ≤ N), hysteresis guards with a
//     reset. ODE, Crank–Nicolson by default.
// (2) "dae": a chain of N thermostats whose coupled heating powers are algebraic (n = 2N),
//     same guards, no reset (the algebraic part jumps and is re-solved at every event).
//     Semi-explicit index-1 DAE, Crank–Nicolson.
//
// All p_j = 1, so the trajectory (steps, events, location steps) is the same for every m and
// only the number of sensitivity columns changes; and Σ_j dJ/dp_j = dJ/dq (all gains and levels
// scaled together) must be the same for every m — printed as a consistency check, together
// with a central finite difference of the terminal cost at m = 1.
//
// Costs: J_0 = Σ_i x_i(T) and J_1 = ∫ Σ_i x_i² dt. For each m the program times solve() of a
// plain Solver and of one with setForwardSensitivities(true), setInitialStateSensitivities({})
// (parameter columns only), takes the minimum over -reps repetitions (round-robin over all
// cases, after one untimed warm-up solve each), and prints ratio = forward / plain per m and a
// least-squares fit ratio ≈ a + b·m.
//
// Options:
//   -reps R          timed repetitions per case (default 9)
//   -m 1,2,4,...     parameter counts (default 1,2,4,8,16,32)
//   -n N             thermostats in model (1) (default 40);   -tf T  horizon (default 2)
//   -dae_n N         components in model (2) (default 40);    -dae_tf T (default 2)
//   -ode 0 / -dae 0  skip a model
//   -ts_*            PETSc TS options of model (1), e.g. -ts_type rk -ts_rk_type 4 -ts_dt 1e-3
//                    (defaults: cn, dt 2e-3, -ts_adapt_type none, -ksp_type preonly -pc_type lu)
//   -dae_ts_*, -dae_ksp_*, -dae_pc_*   the same for model (2) (theta methods only)
//   -hs_*            engine options (both models); do not pass -hs_forward / -hs_forward_u0.
// Run:  build/bench/forward_cost [-reps 7] [-ts_type rk -ts_rk_type 4]
#include "bench_models.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using namespace hybridsens;
using namespace hsbench;

namespace {

struct Case {
  PetscInt m;
  std::unique_ptr<ChainBase> model;
  std::unique_ptr<SumAtFinalTime> terminal;
  std::unique_ptr<SquareIntegral> integral;
  Run plain, fwd;
  SolveStats stats;
  size_t events = 0;
  std::vector<PetscScalar> gradSum;  // Σ_j dJ_k/dp_j
};

struct Bench {
  std::string title;
  const char *prefix;
  PetscReal tf;
  std::vector<Case> cases;
};

PetscErrorCode setUpBench(Bench &b, bool dae, PetscInt n, const std::vector<PetscInt> &ms) {
  PetscFunctionBeginUser;
  b.cases.resize(ms.size());
  for (size_t c = 0; c < ms.size(); ++c) {
    Case &k = b.cases[c];
    k.m = ms[c];
    if (dae) k.model = std::make_unique<PowerChainDAE>(n, k.m);
    else k.model = std::make_unique<ThermostatChain>(n, k.m);
    k.terminal = std::make_unique<SumAtFinalTime>(*k.model);
    k.integral = std::make_unique<SquareIntegral>(*k.model);
    const std::vector<const CostFunction *> costs = {k.terminal.get(), k.integral.get()};
    PetscCall(k.plain.setUp(*k.model, costs, Sens::None, b.prefix, 2e-3, b.tf));
    PetscCall(k.fwd.setUp(*k.model, costs, Sens::Forward, b.prefix, 2e-3, b.tf));
  }
  PetscFunctionReturn(0);
}

// One round over all cases: plain then forward solve of each m. timed = false: warm-up.
PetscErrorCode round(Bench &b, bool timed) {
  PetscFunctionBeginUser;
  for (Case &k : b.cases) {
    double s = 0;
    PetscCall(k.plain.solve(&s));
    if (timed) k.plain.best = std::min(k.plain.best, s);
    k.stats = k.plain.solver->result().stats;
    k.events = k.plain.solver->result().events().size();
    PetscCall(k.fwd.solve(&s));
    if (timed) k.fwd.best = std::min(k.fwd.best, s);
    const auto &g = k.fwd.solver->result().gradientTable(&CostGradient::forwardP);
    k.gradSum.assign(g.size(), 0.0);
    for (size_t c = 0; c < g.size(); ++c)
      for (PetscScalar v : g[c]) k.gradSum[c] += v;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode terminalValue(Solver &s, const ChainBase &model, PetscScalar *value) {
  const PetscScalar *a;
  PetscFunctionBeginUser;
  PetscCall(VecGetArrayRead(s.result().finalState(), &a));
  *value = 0;
  for (PetscInt i = 0; i < model.components(); ++i) *value += a[model.stride() * i];
  PetscCall(VecRestoreArrayRead(s.result().finalState(), &a));
  PetscFunctionReturn(0);
}

PetscErrorCode report(Bench &b) {
  PetscFunctionBeginUser;
  const Case &k0 = b.cases.front();
  TS ts = k0.plain.solver->ts();
  TSType type;
  PetscCall(TSGetType(ts, &type));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n== %s: n = %" PetscInt_FMT " unknowns, ts_type %s, dt %g, T %g: %zu events, %" PetscInt_FMT
                        " steps, %" PetscInt_FMT " location steps (same for every m: %s)\n",
                        b.title.c_str(), k0.model->localSize(), type, (double)k0.plain.dt, (double)b.tf, k0.events, k0.stats.steps,
                        k0.stats.locationSteps, "checked below"));
  bool same = true;
  PetscReal maxDev = 0;
  for (const Case &k : b.cases) {
    same = same && k.events == k0.events && k.stats.steps == k0.stats.steps && k.stats.locationSteps == k0.stats.locationSteps;
    for (size_t c = 0; c < k.gradSum.size(); ++c)
      maxDev = std::max(maxDev, (PetscReal)(std::abs(k.gradSum[c] - k0.gradSum[c]) / std::max(1e-300, (double)std::abs(k0.gradSum[c]))));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "   %4s %11s %13s %7s %18s %14s %14s\n", "m", "plain [ms]", "forward [ms]", "ratio",
                        "(fwd-plain)/m [ms]", "sum_j dJ0/dpj", "sum_j dJ1/dpj"));
  std::vector<double> xs, ys;
  for (const Case &k : b.cases) {
    const double ratio = k.fwd.best / k.plain.best;
    xs.push_back((double)k.m);
    ys.push_back(ratio);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "   %4" PetscInt_FMT " %11.2f %13.2f %7.3f %18.3f %14.8g %14.8g\n", k.m, 1e3 * k.plain.best,
                          1e3 * k.fwd.best, ratio, 1e3 * (k.fwd.best - k.plain.best) / k.m, (double)k.gradSum[0], (double)k.gradSum[1]));
  }
  // Least squares ratio ≈ a + b m.
  const double nn = (double)xs.size();
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < xs.size(); ++i) sx += xs[i], sy += ys[i], sxx += xs[i] * xs[i], sxy += xs[i] * ys[i];
  const double den = nn * sxx - sx * sx;
  const double slope = den != 0 ? (nn * sxy - sx * sy) / den : 0, icpt = (sy - slope * sx) / nn;
  double maxRes = 0;
  for (size_t i = 0; i < xs.size(); ++i) maxRes = std::max(maxRes, std::abs(ys[i] - (icpt + slope * xs[i])));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "   fit: ratio ≈ %.3f + %.4f·m   (least squares over %zu points, max |residual| %.3f)\n", icpt,
                        slope, xs.size(), maxRes));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "   trajectory identical for every m: %s; sum_j dJ/dp_j across m: max rel. deviation %.2e\n",
                        same ? "yes" : "NO", (double)maxDev));

  // Central finite difference of J_0 in the common scale q (all p_j together), plain solver of
  // the first case. CN's event-time term is O(h²) off the discrete derivative (README).
  Case &k = b.cases.front();
  const PetscReal eps = 1e-6;
  PetscScalar jp, jm;
  std::vector<PetscReal> p(k.m, 1.0 + eps);
  PetscCall(k.plain.solver->setParameters(p));
  double s = 0;
  PetscCall(k.plain.solve(&s));
  PetscCall(terminalValue(*k.plain.solver, *k.model, &jp));
  p.assign(k.m, 1.0 - eps);
  PetscCall(k.plain.solver->setParameters(p));
  PetscCall(k.plain.solve(&s));
  PetscCall(terminalValue(*k.plain.solver, *k.model, &jm));
  p.assign(k.m, 1.0);
  PetscCall(k.plain.solver->setParameters(p));
  const double fd = (double)((jp - jm) / (2 * eps));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "   check: dJ0/dq forward %.8g, central FD (eps %g) %.8g, rel. diff %.1e\n", (double)k.gradSum[0],
                        (double)eps, fd, std::abs(fd - (double)k.gradSum[0]) / std::abs(fd)));
  PetscFunctionReturn(0);
}

} // namespace

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, "Cost of forward sensitivities vs. number of parameters.\n"));
  {
    ChainBenchOptions o(9, {1, 2, 4, 8, 16, 32});
    PetscCall(o.read("forward_cost"));
    const PetscInt reps = o.reps, n = o.n, daeN = o.daeN;
    const PetscReal tf = o.tf, daeTf = o.daeTf;
    const PetscBool ode = o.ode, dae = o.dae;
    const std::vector<PetscInt> &ms = o.ms;

    std::vector<Bench> benches;
    if (ode) benches.push_back({"thermostats (ODE), N = " + std::to_string(n), nullptr, tf, {}});
    if (dae) benches.push_back({"power chain (DAE), N = " + std::to_string(daeN), "dae_", daeTf, {}});
    for (Bench &b : benches) PetscCall(setUpBench(b, b.prefix != nullptr, b.prefix ? daeN : n, ms));

    const auto wall0 = std::chrono::steady_clock::now();
    for (Bench &b : benches) PetscCall(round(b, false));
    for (PetscInt r = 0; r < reps; ++r)
      for (Bench &b : benches) PetscCall(round(b, true));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "forward_cost: wall time / (plain solve time), minimum of %" PetscInt_FMT
                          " repetitions per case (round-robin, after one warm-up round)\n", reps));
    for (Bench &b : benches) PetscCall(report(b));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\ntotal measurement time %.1f s\n",
                          std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count()));
  }
  PetscCall(PetscFinalize());
  return 0;
}
