#!/usr/bin/env python3
"""Every shipped grid case without a disturbance stays at its power-flow start: hybridsens-grid
-no_fault over 10 s, drift of every state <= 1e-8 (relative to max(1, |u0|)) and no event.
Cases with dynamic data use their DYR (ieee14; wecc9, ieee39 and ieee118 have their own tests:
grid_wecc9, grid_ieee39, grid_ieee118); the MATPOWER cases without dynamics use the generic
machine (-generic_machine gencls). ACTIVSg2000 (a 10-s run takes about half a minute) has its own
test, grid_activsg2000."""
import argparse, json, os, subprocess, tempfile

from wecc9_support import check, finish

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--source", required=True)
args = ap.parse_args()
tool = os.path.join(args.build, "src", "power", "hybridsens-grid")
G = os.path.join(args.source, "data", "grids")

CASES = [("ieee14", ["ieee14.raw", "ieee14.dyr"], []),
         ("case39.m", ["case39.m"], ["-generic_machine", "gencls"]),
         ("case118.m", ["case118.m"], ["-generic_machine", "gencls"])]
for label, files, opts in CASES:
    with tempfile.TemporaryDirectory() as d:
        summary = os.path.join(d, "s.json")
        cmd = [tool] + [os.path.join(G, f) for f in files] + opts + ["-no_fault", "-ts_max_time", "10", "-hs_output_times", "0,10", "-hs_summary", summary]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            check(False, f"{label}: runs ({r.stdout[-300:]}{r.stderr[-300:]})")
            continue
        s = json.load(open(summary))
        u0, uT = s["outputs"][0]["state"], s["outputs"][-1]["state"]
        drift = max(abs(a - b) / max(1.0, abs(a)) for a, b in zip(u0, uT))
        check(not s["events"] and drift <= 1e-8, f"{label}: at rest over 10 s, drift {drift:.1e} <= 1e-8 ({len(u0)} states)")

finish()
