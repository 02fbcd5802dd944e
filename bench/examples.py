#!/usr/bin/env python3
"""Run time and event counts of the memory and impact examples (a measurement, not a test:
nothing is asserted). For each configuration it runs the example three ways — plain solve,
with forward sensitivities (-hs_forward), with the adjoint (-hs_adjoint) — and reads the times
the library measured itself (JSON summary: stats.wall_seconds for the solve, with the
tangent-linear model when on; stats.adjoint_wall_seconds for the reverse sweep; PETSc start-up
and output excluded), the minimum over --reps repetitions, round-robin, all in one run of this
script; steps, location steps and events come from the same summaries. Ratios: forward sensitivities / plain solve, (plain solve + reverse sweep) / plain.

  bench/examples.py --build build [--reps 3] [--only hysteresis]
"""
import argparse, json, os, subprocess, sys, tempfile

CASES = [
    # name, example, options
    ("hysteresis RK4 dt=1e-3", "hysteresis_oscillator", []),
    ("hysteresis CN dt=2e-4", "hysteresis_oscillator", ["-ts_type", "cn", "-ts_dt", "2e-4"]),
    ("sample_and_hold RK4 dt=1e-3", "sample_and_hold", []),
    ("impact RK4 dt=5e-3 T=100", "impact_oscillator", []),
    ("impact CN dt=1.5e-3 T=30", "impact_oscillator", ["-ts_type", "cn", "-ts_dt", "1.5e-3", "-ts_max_time", "30"]),
    ("impact sticking T=40", "impact_oscillator", ["-F", "0.6", "-omega", "1", "-F0", "1", "-ts_max_time", "40", "-stick_velocity", "1e-2"]),
]
MODES = [("plain", []), ("forward", ["-hs_forward"]), ("adjoint", ["-hs_adjoint"])]


def timed_run(exe, opts):
    """Seconds of the solve (and of the reverse sweep, if any) as the library timed them, and the summary."""
    with tempfile.TemporaryDirectory() as d:
        summary = os.path.join(d, "s.json")
        res = subprocess.run([exe, "-hs_summary", summary] + opts, capture_output=True, text=True)
        if res.returncode != 0:
            sys.exit(f"{exe} {' '.join(opts)} failed:\n{res.stdout}\n{res.stderr}")
        s = json.load(open(summary))
        return s["stats"]["wall_seconds"] + s["stats"].get("adjoint_wall_seconds", 0.0), s


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", default="", help="run only the cases whose name contains this")
    a = ap.parse_args()
    cases = [c for c in CASES if a.only in c[0]]
    best = {}
    stats = {}
    # Round-robin over cases and modes so that a load change hits all of them alike.
    for _ in range(a.reps):
        for name, ex, opts in cases:
            exe = os.path.join(a.build, "examples", ex)
            for mode, extra in MODES:
                wall, s = timed_run(exe, opts + extra)
                key = (name, mode)
                best[key] = min(best.get(key, float("inf")), wall)
                if mode == "plain":
                    stats[name] = s["stats"]
    print(f"{'case':30s} {'steps':>7s} {'loc.':>6s} {'events':>6s} {'plain[s]':>9s} {'fwd[s]':>8s} "
          f"{'adj[s]':>8s} {'fwd/pl':>7s} {'adj/pl':>7s}")
    for name, _, _ in cases:
        st = stats[name]
        pl, fw, ad = (best[(name, m)] for m, _ in MODES)
        print(f"{name:30s} {st['steps']:7d} {st['location_steps']:6d} {st['events']:6d} {pl:9.3f} "
              f"{fw:8.3f} {ad:8.3f} {fw / pl:7.2f} {ad / pl:7.2f}")
    print(f"(minimum of {a.reps} runs; plain = solve, fwd = solve with forward sensitivities, adj = solve + reverse sweep)")


if __name__ == "__main__":
    main()
