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
ACTIVSg2000 (--cases ACTIVSg2000) runs as the brief of its section in bench/RESULTS.md says:
-skip_unknown_models, -generic_machine gencls, -governors 0 (12 of its IEEEG1 cannot start at
rest), T = 20 s, three costs (-grid_costs H8155,coi_spread,voltage_dip, band 60 +- 0.01 Hz), and
no forward sensitivities (4892 parameters: the dense sensitivity matrix alone would be 370 MB).
The load average is printed with every repetition.
"""
import argparse, json, os, statistics, subprocess, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--cases", default="ieee39,ieee118")
args = ap.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
tool = os.path.join(args.build, "src", "power", "hybridsens-grid")
FAULT_BUS = {"ieee39": "16", "ieee118": "77", "ieee14": "4", "ACTIVSg2000": "8160"}
CASE_OPTIONS = {"ACTIVSg2000": ["-skip_unknown_models", "-generic_machine", "gencls", "-governors", "0", "-ts_max_time", "20", "-freq_max", "60.01",
                                "-freq_min", "59.99", "-grid_costs", "H8155,coi_spread,voltage_dip"]}
NO_FORWARD = {"ACTIVSg2000"}


def run(case, extra):
    g = os.path.join(here, "..", "data", "grids", case)
    with tempfile.TemporaryDirectory() as d:
        summary = os.path.join(d, "s.json")
        cmd = [tool, g + ".raw", g + ".dyr", "-fault_bus", FAULT_BUS[case], "-t_on", "1.0025", "-t_off", "1.0825", "-ts_max_time", "5",
               "-freq_max", "60.1", "-freq_min", "59.9", "-hs_summary", summary] + CASE_OPTIONS.get(case, []) + extra
        subprocess.run(cmd, capture_output=True, text=True, check=True)
        return json.load(open(summary))


print("| case | states | parameters | costs | events | simulation (s) | forward sensitivities (s) | adjoint (s): forward + reverse | forward / simulation | adjoint / simulation |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for case in args.cases.split(","):
    sims, fwds, adjs, rf, ra = [], [], [], [], []
    for _ in range(args.reps):
        load = os.getloadavg()[0]
        s = run(case, [])
        f = None if case in NO_FORWARD else run(case, ["-hs_forward"])
        a = run(case, ["-hs_adjoint"])
        sim = s["stats"]["wall_seconds"]
        fwd = f["stats"]["wall_seconds"] if f else float("nan")
        adj = a["stats"]["wall_seconds"] + a["stats"]["adjoint_wall_seconds"]
        sims.append(sim), fwds.append(fwd), adjs.append(adj), rf.append(fwd / sim), ra.append(adj / sim)
        print(f"  {case}: load {load:.1f} -> {os.getloadavg()[0]:.1f}; simulation {sim:.2f} s, forward {fwd:.2f} s, adjoint {adj:.2f} s "
              f"(reverse sweep {a['stats']['adjoint_wall_seconds']:.2f} s)", flush=True)
    m = statistics.median
    fwd_cols = ("not measured", "—") if case in NO_FORWARD else (f"{m(fwds):.2f}", f"{m(rf):.1f} ({min(rf):.1f}–{max(rf):.1f})")
    print(f"| {case} | {len(s['final_state'])} | {len(s['parameter_names'])} | {len(s['objective'])} | {len(s['events'])} | {m(sims):.2f} | {fwd_cols[0]} | "
          f"{m(adjs):.2f} | {fwd_cols[1]} | {m(ra):.2f} ({min(ra):.2f}–{max(ra):.2f}) |", flush=True)
