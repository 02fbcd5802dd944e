#!/usr/bin/env python3
"""WECC 9-bus timings (seed 002 Table VII style) and forward-vs-adjoint agreement at several
final times (Table VI style). A measurement, not a test: nothing is asserted.

    python3 bench/wecc9_timing.py --build build [--reps 3]

Runs examples/wecc9 (CN, dt = 0.01, fault at bus 9 on [1.0, 1.2]) to T = 5 as
  * simulation only,
  * forward sensitivities for the 29 parameters (-hs_forward_u0 -1),
  * forward sensitivities for the 29 parameters and 27 initial differential states,
  * adjoint (3 costs, gradients w.r.t. 29 parameters and the initial state),
and prints the best-of-reps time of Solver::solve() (the example's "timing:" line; the adjoint
and forward times include their forward solve), plus ratios measured in this run.
"""
import argparse, json, os, re, subprocess, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--reps", type=int, default=3)
a = ap.parse_args()
exe = os.path.join(a.build, "examples", "wecc9")


def timed(opts):
    best = None
    for _ in range(a.reps):
        out = subprocess.run([exe] + opts, capture_output=True, text=True, check=True).stdout
        t = float(re.search(r"timing: .* ([0-9.]+) s", out).group(1))
        best = t if best is None else min(best, t)
    return best


cases = [
    ("simulation", ["-hs_forward_u0", "-1"]),
    ("forward, 29 parameters", ["-hs_forward", "-hs_forward_u0", "-1"]),
    ("forward, 29 parameters + 27 u0", ["-hs_forward"]),
    ("adjoint, 3 costs (p and u0)", ["-hs_adjoint"]),
]
times = {name: timed(opts) for name, opts in cases}
sim = times["simulation"]
print(f"wecc9 timings (T = 5, 500 CN steps, best of {a.reps}):")
for name, _ in cases:
    print(f"  {name:34s} {times[name]:8.4f} s   {times[name] / sim:5.2f} x simulation")
print(f"  forward(29) / adjoint: {times['forward, 29 parameters'] / times['adjoint, 3 costs (p and u0)']:.2f}   "
      f"forward(56) / adjoint: {times['forward, 29 parameters + 27 u0'] / times['adjoint, 3 costs (p and u0)']:.2f}")
print("  seed 002 Table VII (9-bus, with governors): simulation 0.03 s, forward 0.12 s, adjoint 0.05 s")

print("forward vs adjoint, max |difference| over H_1..H_3 and the 29 parameters (Table VI style;\n"
      "seed 002's scenario: six-cycle fault at bus 9 on [0.1, 0.2], with and without TGOV1 governors):")
for T, extra in [(T, g) for g in ([], ["-governors"]) for T in (0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 5.0)]:
    with tempfile.TemporaryDirectory() as d:
        s = os.path.join(d, "s.json")
        subprocess.run([exe, "-hs_forward", "-hs_adjoint", "-hs_forward_u0", "-1", "-t_on", "0.1", "-t_off", "0.2",
                        "-ts_max_time", str(T), "-hs_summary", s] + extra,
                       capture_output=True, text=True, check=True)
        r = json.load(open(s))
    A, F = r["gradient"]["p"], r["forward_gradient"]["p"]
    diff = max(abs(x - y) for ra, rf in zip(A, F) for x, y in zip(ra, rf))
    scale = max(abs(x) for ra in A for x in ra)
    print(f"  T = {T:4.1f}{' governors' if extra else ''}: {diff:.1e} (max |gradient| {scale:.3g}, relative {diff / scale if scale else 0:.1e})")
