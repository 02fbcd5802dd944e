#!/usr/bin/env python3
"""Power-grid timings in the layout of [Zhang2017] Table VII: simulation, forward sensitivities,
adjoint and finite differences on the WECC 9-bus system and on N coupled 9-bus areas
(examples/wecc9 -areas N; 112 areas = 1008 buses, 6384 states, 336 generators). A measurement,
not a test: nothing is asserted; all ratios come from this one run.

    python3 bench/grid_timing.py --build build [--areas 112] [--reps 3] [--small-reps 25] [--np 1] [--T 1.5]

Each case runs examples/wecc9 (CN, dt = 0.01, fault at bus 9 of area 1 on [1.0, 1.2]) and reads
its "timing:" line: the wall time of Solver::solve(), i.e. the forward solve plus, when on, the
tangent-linear model or the reverse sweep (set-up of the model and output are excluded).
These machines are shared: another tenant's load can slow one run by 30 %. So every
repetition runs the simulation and all cases back to back, each case's ratio is taken to the
simulation of its own repetition, and the table shows the median time and the median ratio
over the repetitions (with the range of the ratios).
Parameters: -param_areas K makes the data of the first K areas parameters (27K + 2: dispatch
P and Q, exciter gains, initial bus voltage magnitudes and angles, and the two fault times).
Costs: -cost_generators M keeps the frequency-violation metrics H_1..H_M.
Finite differences: central differences need 2 simulations per parameter; the table shows that
estimate, 2 · (parameters) × the median simulation (labelled so), not a measurement.
Ratios (forward/adjoint, work beyond the simulation) are medians over the repetitions of
each repetition's own ratio. Last, the reverse sweep alone with and without
-hs_adjoint_reuse_jacobians, alternating.
"""
import argparse, json, os, re, statistics, subprocess, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--areas", type=int, default=112)
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--small-reps", type=int, default=25, help="repetitions for the 9-bus system (a solve takes ~10 ms: timer and scheduler noise need more)")
ap.add_argument("--np", type=int, default=1)
ap.add_argument("--T", type=float, default=1.5)
ap.add_argument("--mpiexec", default="mpiexec")
a = ap.parse_args()
exe = os.path.join(a.build, "examples", "wecc9")
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")


def timed(areas, opts):
    cmd = ([a.mpiexec, "-n", str(a.np)] if a.np > 1 else []) + [exe, "-areas", str(areas), "-ts_max_time", str(a.T), "-hs_forward_u0", "-1"] + opts
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env).stdout
    return float(re.search(r"timing: .* ([0-9.]+) s", out).group(1))


def nparams(K, areas):
    return 27 * min(K, areas) + 2


def table(areas, cases, reps):
    """cases: (label, K parameter areas, M costs, mode). Returns the per-repetition times
    {(mode, K, M): [...]} and the simulations [...] (same repetitions)."""
    cases = list(dict.fromkeys((l, min(K, areas), min(M, 3 * areas), m) for l, K, M, m in cases))  # small grids: no repeats
    with tempfile.TemporaryDirectory() as d:
        summary = os.path.join(d, "s.json")
        timed(areas, ["-param_areas", "1", "-cost_generators", "3", "-hs_summary", summary])
        run = json.load(open(summary))
    sims, times = [], {(m, K, M): [] for _, K, M, m in cases}
    for _ in range(reps):  # one repetition = the simulation and every case, back to back
        sims.append(timed(areas, ["-param_areas", "1", "-cost_generators", "3"]))
        for _, K, M, mode in cases:
            times[(mode, K, M)].append(timed(areas, ["-param_areas", str(K), "-cost_generators", str(M), "-hs_" + mode]))
    buses = 9 * areas
    print(f"\n{buses} buses ({areas} area{'s' if areas > 1 else ''}, {len(run['final_state'])} states, {3 * areas} generators), "
          f"T = {a.T}, {run['stats']['steps']} steps, {len(run['events'])} events, {a.np} rank{'s' if a.np > 1 else ''}, "
          f"median of {reps} repetitions (ratio range in brackets):")
    sim = statistics.median(sims)
    print(f"  {'simulation':44s} {sim:9.3f} s   1.00 x simulation   [{min(sims):.3f} .. {max(sims):.3f} s]")
    for label, K, M, mode in cases:
        r = [t / s_ for t, s_ in zip(times[(mode, K, M)], sims)]
        print(f"  {label.format(np=nparams(K, areas), M=M):44s} {statistics.median(times[(mode, K, M)]):9.3f} s  {statistics.median(r):5.2f} x simulation"
              f"   [{min(r):.2f} .. {max(r):.2f}]")
    for K in sorted({K for _, K, _, mode in cases if mode == "forward"}):
        n = nparams(K, areas)
        print(f"  {'central differences, %d parameters' % n:44s} {2 * n * sim:9.3f} s  {2 * n:5d} x simulation   (estimate: 2 simulations per parameter)")
    return times, sims


def ratio(times, sims, num, den=None):
    """Median over the repetitions of num/den (den None: the simulation) and its range."""
    r = [x / (y if den else s_) for x, y, s_ in zip(times[num], times[den] if den else sims, sims)]
    return statistics.median(r), min(r), max(r)


def beyond(times, sims, fwd, adj):
    """Median over the repetitions of the sensitivity work beyond the simulation, forward / adjoint."""
    return statistics.median((f - s_) / (b - s_) if b > s_ else float("inf") for f, b, s_ in zip(times[fwd], times[adj], sims))


def reuse_comparison(areas, K):
    """The reverse sweep alone (stats.adjoint_wall_seconds) with -hs_adjoint_reuse_jacobians 0 and 1,
    alternating, minimum over the repetitions."""
    best = {0: float("inf"), 1: float("inf")}
    with tempfile.TemporaryDirectory() as d:
        summary = os.path.join(d, "s.json")
        for _ in range(a.reps):
            for r in (0, 1):
                timed(areas, ["-param_areas", str(K), "-cost_generators", "3", "-hs_adjoint", "-hs_adjoint_reuse_jacobians", str(r), "-hs_summary", summary])
                best[r] = min(best[r], json.load(open(summary))["stats"]["adjoint_wall_seconds"])
    print(f"  reverse sweep alone, {nparams(K, areas)} parameters: {best[0]:.4f} s without / {best[1]:.4f} s with -hs_adjoint_reuse_jacobians"
          f" (alternating, minimum of {a.reps})")


SEED = "(Zhang et al. 2017: 2.4 at 24 on 9 buses, 7.7 at 344 on 118 buses)"
SEED_BEYOND = "(Zhang et al. 2017: (0.12-0.03)/(0.05-0.03) = 4.5 on 9 buses, (14.0-0.33)/(1.82-0.33) = 9.2 on 118 buses)"
if a.areas > 1:
    Ks = [1, 4, 13, 20, 30]
    big = [("forward, {np} parameters", K, 3, "forward") for K in Ks] + \
          [("adjoint, {M} costs, {np} parameters", K, 3, "adjoint") for K in (1, 4, 13, 112)] + [("adjoint, {M} costs, {np} parameters", 13, 54, "adjoint")]
    times, sims = table(a.areas, big, a.reps)
    C = lambda *Ks: sorted({min(K, a.areas) for K in Ks})  # distinct parameter areas on this grid
    A = lambda K: ("adjoint", K, 3)
    F = lambda K: ("forward", K, 3)
    print("  adjoint (3 costs) / simulation: " + ", ".join(f"{ratio(times, sims, A(K))[0]:.2f} [max {ratio(times, sims, A(K))[2]:.2f}] at {nparams(K, a.areas)}"
                                                           for K in C(1, 13, 112)) + " parameters   (goal <= 2)")
    # Forward at K areas against the adjoint with the same parameters (the largest adjoint case for the rest).
    adjointKs = C(1, 4, 13, 112)
    pairs = [(K, K if K in adjointKs else max(adjointKs)) for K in C(*Ks)]
    print("  forward / adjoint: " + ", ".join(f"{ratio(times, sims, F(K), A(J))[0]:.2f} at {nparams(K, a.areas)}"
                                            + ("" if J == K else f" (adjoint at {nparams(J, a.areas)})") for K, J in pairs) + "   " + SEED)
    # The adjoint includes a simulation, so forward/adjoint can never exceed forward/simulation;
    # the sensitivity work alone (time beyond the simulation) compares the two sweeps themselves.
    print("  sensitivity work beyond the simulation, forward / adjoint: " + ", ".join(f"{beyond(times, sims, F(K), A(K)):.1f} at {nparams(K, a.areas)}"
                                                                               for K in C(1, 4, 13)) + "   " + SEED_BEYOND)
    reuse_comparison(a.areas, min(13, a.areas))
small = [("forward, {np} parameters", 1, 3, "forward"), ("adjoint, {M} costs, {np} parameters", 1, 3, "adjoint")]
times, sims = table(1, small, a.small_reps)
f, ad = ("forward", 1, 3), ("adjoint", 1, 3)
print(f"  adjoint / simulation: {ratio(times, sims, ad)[0]:.2f}   forward / adjoint: {ratio(times, sims, f, ad)[0]:.2f}"
      f"   (bounded by forward / simulation = {ratio(times, sims, f)[0]:.2f})   sensitivity work beyond the simulation, "
      f"forward / adjoint: {beyond(times, sims, f, ad):.1f}")
reuse_comparison(1, 1)
print("Zhang et al. 2017, Table VII: 9 bus simulation 0.03 s, forward 0.12 s, adjoint 0.05 s; 118 bus 0.33 s, 14.00 s, 1.82 s")
