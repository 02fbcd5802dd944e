// adjoint_cost — what the discrete adjoint gradient costs, relative to a plain solve and to
// forward (tangent-linear) sensitivities, as a function of the number of parameters m.
// A measurement, not a test.
//
// Models, costs and solver set-up are those of forward_cost (bench_models.hpp): 40 coupled
// thermostats (ODE, resets) and a chain of 40 thermostats with algebraic heating powers (DAE,
// n = 80), both Crank–Nicolson, dt 2e-3, T 2, LU; costs J_0 = Σ x_i(T) and J_1 = ∫ Σ x_i² dt;
// m parameters shared cyclically (for m > N each component averages m/N of them, so every
// parameter has a non-zero gradient). All p_j = 1: the trajectory is the same for every m.
//
// For each m three solvers of the same model are timed (solve(), costs attached to all three):
//   plain    — the forward solve (the cost values come with it);
//   forward  — setForwardSensitivities(true), parameter columns only (setInitialStateSensitivities({}));
//   adjoint  — setAdjoint(true), parameter gradients only: the forward solve, then one reverse
//              sweep for both costs.
// Every case is run once untimed (warm-up), then -reps rounds, round-robin over all cases and
// models; each time is the minimum over the rounds. Printed per model and m: the times, the
// ratios adjoint/plain (the project's goal: ≤ 2.5 at any m), forward/plain, adjoint/forward,
// the agreement of the two gradients (max_kj |a - f| / max_j |f_k|, and the largest
// element-wise relative difference), and the crossover m above which the adjoint is cheaper
// than forward sensitivities. Σ_j dJ_k/dp_j of the adjoint must not depend on m (printed).
//
// Options:
//   -reps R          timed repetitions per case (default 5)
//   -m 1,2,4,...     parameter counts (default 1,2,4,8,16,32,64,128,256)
//   -fwd_max_m M     time forward sensitivities only for m ≤ M (default: every m)
//   -n N, -tf T, -dae_n N, -dae_tf T, -ode 0, -dae 0, -ts_*, -dae_ts_*, -hs_*: as forward_cost
//                    (do not pass -hs_forward / -hs_adjoint / -hs_forward_u0).
// Run:  build/bench/adjoint_cost [-reps 5] [-m 1,16,256]
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

using Grad = std::vector<std::vector<PetscScalar>>;

struct Case {
  PetscInt m;
  bool withForward;
  std::unique_ptr<ChainBase> model;
  std::unique_ptr<SumAtFinalTime> terminal;
  std::unique_ptr<SquareIntegral> integral;
  Run plain, fwd, adj;
  SolveStats stats;
  size_t events = 0;
  Grad gradF, gradA;
};

struct Bench {
  std::string title;
  const char *prefix;
  PetscReal tf;
  std::vector<Case> cases;
};

PetscErrorCode setUpBench(Bench &b, bool dae, PetscInt n, const std::vector<PetscInt> &ms, PetscInt fwdMaxM) {
  PetscFunctionBeginUser;
  b.cases.resize(ms.size());
  for (size_t c = 0; c < ms.size(); ++c) {
    Case &k = b.cases[c];
    k.m = ms[c];
    k.withForward = k.m <= fwdMaxM;
    if (dae) k.model = std::make_unique<PowerChainDAE>(n, k.m);
    else k.model = std::make_unique<ThermostatChain>(n, k.m);
    k.terminal = std::make_unique<SumAtFinalTime>(*k.model);
    k.integral = std::make_unique<SquareIntegral>(*k.model);
    const std::vector<const CostFunction *> costs = {k.terminal.get(), k.integral.get()};
    PetscCall(k.plain.setUp(*k.model, costs, Sens::None, b.prefix, 2e-3, b.tf));
    if (k.withForward) PetscCall(k.fwd.setUp(*k.model, costs, Sens::Forward, b.prefix, 2e-3, b.tf));
    PetscCall(k.adj.setUp(*k.model, costs, Sens::Adjoint, b.prefix, 2e-3, b.tf));
  }
  PetscFunctionReturn(0);
}

// One round over all cases: plain, forward, adjoint solve of each m. timed = false: warm-up.
PetscErrorCode round(Bench &b, bool timed) {
  PetscFunctionBeginUser;
  for (Case &k : b.cases) {
    double s = 0;
    PetscCall(k.plain.solve(&s));
    if (timed) k.plain.best = std::min(k.plain.best, s);
    k.stats = k.plain.solver->result().stats;
    k.events = k.plain.solver->result().events().size();
    if (k.withForward) {
      PetscCall(k.fwd.solve(&s));
      if (timed) k.fwd.best = std::min(k.fwd.best, s);
      k.gradF = k.fwd.solver->result().gradientTable(&CostGradient::forwardP);
    }
    PetscCall(k.adj.solve(&s));
    if (timed) k.adj.best = std::min(k.adj.best, s);
    k.gradA = k.adj.solver->result().gradientTable(&CostGradient::adjointP);
  }
  PetscFunctionReturn(0);
}

// max_k max_j |a - f| / max_j |f_k| (norm-wise) and max_kj |a - f| / |f| over f ≠ 0 (element-wise).
void compare(const Grad &a, const Grad &f, double *normwise, double *elementwise) {
  *normwise = *elementwise = 0;
  for (size_t k = 0; k < f.size(); ++k) {
    double scale = 0, diff = 0;
    for (size_t j = 0; j < f[k].size(); ++j) {
      const double d = std::abs((double)(a[k][j] - f[k][j])), fv = std::abs((double)f[k][j]);
      scale = std::max(scale, fv);
      diff = std::max(diff, d);
      if (fv > 0) *elementwise = std::max(*elementwise, d / fv);
    }
    *normwise = std::max(*normwise, scale > 0 ? diff / scale : diff);
  }
}

PetscErrorCode report(const Bench &b, PetscReal goal) {
  PetscFunctionBeginUser;
  const Case &k0 = b.cases.front();
  TSType type;
  PetscCall(TSGetType(k0.plain.solver->ts(), &type));
  bool same = true;
  for (const Case &k : b.cases)
    same = same && k.events == k0.events && k.stats.steps == k0.stats.steps && k.stats.locationSteps == k0.stats.locationSteps;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "\n== %s: n = %" PetscInt_FMT " unknowns, ts_type %s, dt %g, T %g: %zu events, %" PetscInt_FMT
                        " steps, %" PetscInt_FMT " location steps (identical for every m: %s)\n",
                        b.title.c_str(), k0.model->localSize(), type, (double)k0.plain.dt, (double)b.tf, k0.events, k0.stats.steps,
                        k0.stats.locationSteps, same ? "yes" : "NO"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "   %4s %10s %12s %12s %9s %9s %9s %11s %11s %14s %14s\n", "m", "plain[ms]", "forward[ms]",
                        "adjoint[ms]", "fwd/plain", "adj/plain", "adj/fwd", "|a-f|/|f|", "max elem.", "sum_j dJ0/dpj", "sum_j dJ1/dpj"));
  double worst = 0, maxNorm = 0, maxElem = 0;
  PetscInt worstM = 0;
  PetscInt cross = -1, lastSlower = -1;  // smallest m from which on the adjoint is faster; last m where it is not
  std::vector<double> xs, ys;
  std::vector<PetscScalar> sum0(2, 0.0);
  double sumDev = 0;
  for (const Case &k : b.cases) {
    const double ap = k.adj.best / k.plain.best;
    if (ap > worst) worst = ap, worstM = k.m;
    xs.push_back((double)k.m);
    ys.push_back(ap);
    std::vector<PetscScalar> sum(k.gradA.size(), 0.0);
    for (size_t c = 0; c < k.gradA.size(); ++c)
      for (PetscScalar v : k.gradA[c]) sum[c] += v;
    if (&k == &k0) sum0 = sum;
    for (size_t c = 0; c < sum.size(); ++c) sumDev = std::max(sumDev, (double)(std::abs(sum[c] - sum0[c]) / std::abs(sum0[c])));
    if (k.withForward) {
      double nw, ew;
      compare(k.gradA, k.gradF, &nw, &ew);
      maxNorm = std::max(maxNorm, nw), maxElem = std::max(maxElem, ew);
      if (k.adj.best < k.fwd.best) {
        if (cross < 0) cross = k.m;
      } else cross = -1, lastSlower = k.m;
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "   %4" PetscInt_FMT " %10.2f %12.2f %12.2f %9.3f %9.3f %9.3f %11.1e %11.1e %14.8g %14.8g\n",
                            k.m, 1e3 * k.plain.best, 1e3 * k.fwd.best, 1e3 * k.adj.best, k.fwd.best / k.plain.best, ap,
                            k.adj.best / k.fwd.best, nw, ew, (double)sum[0], (double)sum[1]));
    } else {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "   %4" PetscInt_FMT " %10.2f %12s %12.2f %9s %9.3f %9s %11s %11s %14.8g %14.8g\n", k.m,
                            1e3 * k.plain.best, "-", 1e3 * k.adj.best, "-", ap, "-", "-", "-", (double)sum[0], (double)sum[1]));
    }
  }
  // Least squares adj/plain ≈ a + b m.
  const double nn = (double)xs.size();
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < xs.size(); ++i) sx += xs[i], sy += ys[i], sxx += xs[i] * xs[i], sxy += xs[i] * ys[i];
  const double den = nn * sxx - sx * sx;
  const double slope = den != 0 ? (nn * sxy - sx * sy) / den : 0, icpt = (sy - slope * sx) / nn;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "   adjoint/plain: %.3f … %.3f, fit ≈ %.3f + %.5f·m; worst %.3f at m = %" PetscInt_FMT
                        " — goal ≤ %.2g: %s\n",
                        *std::min_element(ys.begin(), ys.end()), worst, icpt, slope, worst, worstM, (double)goal,
                        worst <= goal ? "met" : "NOT met"));
  if (cross > 0)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "   crossover: the adjoint is faster than forward sensitivities from m = %" PetscInt_FMT
                          " on (slower or equal at m = %" PetscInt_FMT ")\n", cross, lastSlower));
  else
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "   crossover: the adjoint is not faster than forward sensitivities at the largest m timed with both\n"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "   adjoint vs forward gradient: max norm-wise rel. difference %.1e, max element-wise %.1e; "
                        "sum_j dJ/dp_j (adjoint) across m: max rel. deviation %.1e\n",
                        maxNorm, maxElem, sumDev));
  PetscFunctionReturn(0);
}

} // namespace

int main(int argc, char **argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, "Cost of the discrete adjoint vs. plain solve and forward sensitivities.\n"));
  {
    ChainBenchOptions o(5, {1, 2, 4, 8, 16, 32, 64, 128, 256});
    PetscInt fwdMaxM = PETSC_MAX_INT;
    PetscReal goal = 2.5;
    PetscCall(o.read("adjoint_cost"));
    PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-fwd_max_m", &fwdMaxM, nullptr));
    PetscCall(PetscOptionsGetReal(nullptr, nullptr, "-goal", &goal, nullptr));
    const PetscInt reps = o.reps, n = o.n, daeN = o.daeN;
    const PetscReal tf = o.tf, daeTf = o.daeTf;
    const PetscBool ode = o.ode, dae = o.dae;
    const std::vector<PetscInt> &ms = o.ms;

    std::vector<Bench> benches;
    if (ode) benches.push_back({"thermostats (ODE), N = " + std::to_string(n), nullptr, tf, {}});
    if (dae) benches.push_back({"power chain (DAE), N = " + std::to_string(daeN), "dae_", daeTf, {}});
    for (Bench &b : benches) PetscCall(setUpBench(b, b.prefix != nullptr, b.prefix ? daeN : n, ms, fwdMaxM));

    const auto wall0 = std::chrono::steady_clock::now();
    for (Bench &b : benches) PetscCall(round(b, false));
    for (PetscInt r = 0; r < reps; ++r)
      for (Bench &b : benches) PetscCall(round(b, true));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "adjoint_cost: wall times, minimum of %" PetscInt_FMT
                          " repetitions per case (round-robin, after one warm-up round); costs J0 = sum x_i(T), J1 = int sum x_i^2 dt\n",
                          reps));
    for (const Bench &b : benches) PetscCall(report(b, goal));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\ntotal measurement time %.1f s\n",
                          std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count()));
  }
  PetscCall(PetscFinalize());
  return 0;
}
