#!/usr/bin/env python3
"""hybridsens-grid on the shipped dynamic cases in the layout of [Zhang2017] Table VII:
simulation, forward sensitivities and adjoint wall time. A measurement, not a test: nothing is
asserted.

    python3 bench/grid_cases.py --build build [--reps 3] [--cases ieee39,ieee118]

Each case runs `hybridsens-grid CASE.raw CASE.dyr` (CN, dt = 0.01, T = 5 s, a three-phase fault
on [1.0025, 1.0825] s at the case's bus; all parameters of the command: dispatch P and Q, the
fault times, exciter gains, bus voltages, governor droops; one frequency-violation cost H_i per
generator with the band 60 ± 0.1 Hz) on one rank, and reads the JSON summary's stats:
wall_seconds (Solver::solve: the forward solve, with -hs_forward the tangent-linear model too)
and adjoint_wall_seconds (the reverse sweep). The machines are shared: every repetition runs the
three configurations back to back, and the table shows medians over the repetitions, the
ratios taken within each repetition.
ACTIVSg2000 is not runnable yet (the start's power flow is solved densely: refused beyond 1000
unknowns), so it is not measured.
"""
import argparse, json, os, statistics, subprocess, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--cases", default="ieee39,ieee118")
args = ap.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
tool = os.path.join(args.build, "src", "power", "hybridsens-grid")
FAULT_BUS = {"ieee39": "16", "ieee118": "77", "ieee14": "4"}


def run(case, extra):
    g = os.path.join(here, "..", "data", "grids", case)
    with tempfile.TemporaryDirectory() as d:
        summary = os.path.join(d, "s.json")
        cmd = [tool, g + ".raw", g + ".dyr", "-fault_bus", FAULT_BUS[case], "-t_on", "1.0025", "-t_off", "1.0825", "-ts_max_time", "5",
               "-freq_max", "60.1", "-freq_min", "59.9", "-hs_summary", summary] + extra
        subprocess.run(cmd, capture_output=True, text=True, check=True)
        return json.load(open(summary))


print("| case | states | parameters | costs | events | simulation (s) | forward sensitivities (s) | adjoint (s): forward + reverse | forward / simulation | adjoint / simulation |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for case in args.cases.split(","):
    sims, fwds, adjs, rf, ra = [], [], [], [], []
    for _ in range(args.reps):
        s = run(case, [])
        f = run(case, ["-hs_forward"])
        a = run(case, ["-hs_adjoint"])
        sim = s["stats"]["wall_seconds"]
        fwd = f["stats"]["wall_seconds"]
        adj = a["stats"]["wall_seconds"] + a["stats"]["adjoint_wall_seconds"]
        sims.append(sim), fwds.append(fwd), adjs.append(adj), rf.append(fwd / sim), ra.append(adj / sim)
    m = statistics.median
    print(f"| {case} | {len(s['final_state'])} | {len(s['parameter_names'])} | {len(s['objective'])} | {len(s['events'])} | {m(sims):.2f} | {m(fwds):.2f} | "
          f"{m(adjs):.2f} | {m(rf):.1f} ({min(rf):.1f}–{max(rf):.1f}) | {m(ra):.2f} ({min(ra):.2f}–{max(ra):.2f}) |", flush=True)
