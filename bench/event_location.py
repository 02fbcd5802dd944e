#!/usr/bin/env python3
"""Event location cost and accuracy over the examples.

For each example run (plain simulation, default options, plus a few variants with other
integrators), prints the located state events, the re-taken steps (`location_steps` in the JSON
stats) and their average per located event. With --save FILE it stores the event times; with
--compare FILE it prints the largest difference of every event time from the stored ones
(relative to the run's time horizon), so a change of the location algorithm can be checked to
leave every event where it was.

  python3 bench/event_location.py --build build [--save before.json | --compare before.json]
"""
import argparse, json, os, subprocess, sys, tempfile

RUNS = [
    ("switched_linear", []),
    ("switched_linear", ["-ts_type", "rk", "-ts_rk_type", "4"]),
    ("galan_scalar", []),
    ("galan_scalar", ["-ts_type", "cn", "-ts_dt", "0.01"]),
    ("bouncing_ball", []),
    ("bouncing_ball", ["-ts_type", "cn", "-ts_dt", "0.05"]),
    ("impact_oscillator", []),
    ("hysteresis_oscillator", []),
    ("sample_and_hold", []),
    ("wecc9", []),
    ("wecc9", ["-governors", "-tgov_Vmin", "0.5"]),
    ("wecc9", ["-areas", "3", "-t_off", "1.25"]),
]


def run(build, ex, opts):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "s.json")
        cmd = [os.path.join(build, "examples", ex), "-hs_summary", path, *opts]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{r.stdout}{r.stderr}")
        return json.load(open(path))


ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--save")
ap.add_argument("--compare")
args = ap.parse_args()
reference = json.load(open(args.compare)) if args.compare else None
saved, total_located, total_retakes, worst = {}, 0, 0, 0.0
print(f"{'run':55s} {'events':>6s} {'located':>7s} {'re-takes':>8s} {'per event':>9s}" + ("  max |Δt|/T" if reference else ""))
for ex, opts in RUNS:
    key = " ".join([ex, *opts])
    s = run(args.build, ex, opts)
    times = [e["time"] for e in s["events"]]
    located = sum(1 for e in s["events"] if e["kind"] == "guard")
    retakes = s["stats"]["location_steps"]
    total_located += located
    total_retakes += retakes
    saved[key] = times
    line = f"{key:55s} {len(times):6d} {located:7d} {retakes:8d} {retakes / max(located, 1):9.2f}"
    if reference:
        ref = reference.get(key)
        if ref is None or len(ref) != len(times):
            line += "  event sequence differs"
            worst = float("inf")
        elif times:
            d = max(abs(a - b) for a, b in zip(times, ref)) / s["final_time"]
            worst = max(worst, d)
            line += f"  {d:.1e}"
    print(line)
print(f"{'all runs':55s} {'':6s} {total_located:7d} {total_retakes:8d} {total_retakes / max(total_located, 1):9.2f}")
if reference:
    print(f"largest event-time change relative to the horizon: {worst:.2e}")
if args.save:
    json.dump(saved, open(args.save, "w"), indent=1)
