#!/usr/bin/env python3
"""Power-grid timings in the layout of seed 002 Table VII: simulation, forward sensitivities,
adjoint and finite differences on the WECC 9-bus system and on N coupled 9-bus areas
(examples/wecc9 -areas N; 112 areas = 1008 buses, 6384 states, 336 generators). A measurement,
not a test: nothing is asserted; all ratios come from this one run.

    python3 bench/grid_timing.py --build build [--areas 112] [--reps 1] [--np 1] [--T 1.5]

Each case runs examples/wecc9 (CN, dt = 0.01, fault at bus 9 of area 1 on [1.0, 1.2]) and reads
its "timing:" line: the wall time of Solver::solve(), i.e. the forward solve plus, when on, the
tangent-linear model or the reverse sweep (set-up of the model and output are excluded).
Parameters: -param_areas K makes the data of the first K areas parameters (27K + 2: dispatch
P and Q, exciter gains, initial bus voltage magnitudes and angles, and the two fault times).
Costs: -cost_generators M keeps the frequency-violation metrics H_1..H_M.
Finite differences: central differences need 2 simulations per parameter; they are timed on
--fd-params parameters and the per-parameter cost is multiplied out (labelled so).
"""
import argparse, json, os, re, subprocess, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--areas", type=int, default=112)
ap.add_argument("--reps", type=int, default=1)
ap.add_argument("--np", type=int, default=1)
ap.add_argument("--T", type=float, default=1.5)
ap.add_argument("--fd-params", type=int, default=2)
ap.add_argument("--mpiexec", default="mpiexec")
a = ap.parse_args()
exe = os.path.join(a.build, "examples", "wecc9")
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")


def timed(areas, opts):
    cmd = ([a.mpiexec, "-n", str(a.np)] if a.np > 1 else []) + [exe, "-areas", str(areas), "-ts_max_time", str(a.T), "-hs_forward_u0", "-1"] + opts
    if a.np > 1:
        cmd += ["-pc_factor_mat_solver_type", "mumps"]
    best = None
    for _ in range(a.reps):
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env).stdout
        t = float(re.search(r"timing: .* ([0-9.]+) s", out).group(1))
        best = t if best is None else min(best, t)
    return best


def table(areas, cases):
    buses = 9 * areas
    with tempfile.TemporaryDirectory() as d:
        summary = os.path.join(d, "s.json")
        sim = timed(areas, ["-param_areas", "1", "-cost_generators", "3", "-hs_summary", summary])
        run = json.load(open(summary))
    print(f"\n{buses} buses ({areas} area{'s' if areas > 1 else ''}, {len(run['final_state'])} states, {3 * areas} generators), "
          f"T = {a.T}, {run['stats']['steps']} steps, {len(run['events'])} events, {a.np} rank{'s' if a.np > 1 else ''}, best of {a.reps}:")
    print(f"  {'simulation':44s} {sim:9.3f} s   1.00 x simulation")
    times = {}
    for label, Kreq, Mreq, mode in cases:
        K, M = min(Kreq, areas), min(Mreq, 3 * areas)
        np_ = 27 * K + 2
        t = timed(areas, ["-param_areas", str(K), "-cost_generators", str(M), "-hs_" + mode])
        times[(mode, Kreq, Mreq)] = t
        print(f"  {label.format(np=np_, M=M):44s} {t:9.3f} s  {t / sim:5.2f} x simulation")
    # Finite differences: 2 solves per parameter, timed on a few parameters.
    fd_solves = 0
    nominal = {"P2": 1.63, "P3": 0.85, "KA3": 20.0, "KA2": 20.0}
    per = []
    for n in list(nominal)[: a.fd_params]:
        for sign in (+1, -1):
            per.append(timed(areas, ["-param_areas", "1", "-cost_generators", "3", "-" + n, repr(nominal[n] * (1 + sign * 1e-6))]))
            fd_solves += 1
    per_solve = sum(per) / len(per)
    for K in sorted({min(K, areas) for _, K, _, mode in cases if mode == "forward"}):
        np_ = 27 * K + 2
        print(f"  {'central differences, %d parameters' % np_:44s} {2 * np_ * per_solve:9.3f} s  {2 * np_ * per_solve / sim:5.2f} x simulation"
              f"   (2·{np_} solves at {per_solve:.3f} s, timed on {fd_solves})")
    return sim, times


if a.areas > 1:
    big = [("forward, {np} parameters", 1, 3, "forward"), ("forward, {np} parameters", 4, 3, "forward"),
           ("forward, {np} parameters", 13, 3, "forward"), ("forward, {np} parameters", 20, 3, "forward"),
           ("forward, {np} parameters", 30, 3, "forward"),
           ("adjoint, {M} costs, {np} parameters", 13, 3, "adjoint"), ("adjoint, {M} costs, {np} parameters", 112, 3, "adjoint"),
           ("adjoint, {M} costs, {np} parameters", 13, 54, "adjoint"), ("adjoint, {M} costs, {np} parameters", 1, 3, "adjoint")]
    sim, t = table(a.areas, big)
    print(f"  adjoint (3 costs) / simulation: {t[('adjoint', 13, 3)] / sim:.2f}   (goal <= 2)")
    print(f"  forward / adjoint at 29 parameters: {t[('forward', 1, 3)] / t[('adjoint', 1, 3)]:.2f}   at 110: "
          f"{t[('forward', 4, 3)] / t[('adjoint', 13, 3)]:.2f}   at 353: {t[('forward', 13, 3)] / t[('adjoint', 13, 3)]:.2f}"
          f"   at 542 and 812 (against the adjoint at 3026): {t[('forward', 20, 3)] / t[('adjoint', 112, 3)]:.2f}, "
          f"{t[('forward', 30, 3)] / t[('adjoint', 112, 3)]:.2f}"
          f"   (seed 002: 2.4 at 24 on 9 buses, 7.7 at 344 on 118 buses)")
small = [("forward, {np} parameters", 1, 3, "forward"), ("adjoint, {M} costs, {np} parameters", 1, 3, "adjoint")]
sim, t = table(1, small)
print(f"  adjoint / simulation: {t[('adjoint', 1, 3)] / sim:.2f}   forward / adjoint: {t[('forward', 1, 3)] / t[('adjoint', 1, 3)]:.2f}")
print("seed 002 Table VII: 9 bus simulation 0.03 s, forward 0.12 s, adjoint 0.05 s; 118 bus 0.33 s, 14.00 s, 1.82 s")
