#!/usr/bin/env python3
"""WECC 9-bus forward-vs-adjoint agreement at several final times ([Zhang2017] Table VI style), in
[Zhang2017]'s scenario (six-cycle fault at bus 9 on [0.1, 0.2]), with and without TGOV1 governors.
A measurement, not a test: nothing is asserted. (Timings, Table VII: bench/grid_timing.py.)

    python3 bench/wecc9_agreement.py --build build
"""
import argparse, json, os, subprocess, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
a = ap.parse_args()
exe = os.path.join(a.build, "examples", "wecc9")

print("forward vs adjoint, max |difference| over H_1..H_3 and every parameter (Table VI style;\n"
      "the scenario of Zhang et al. 2017: six-cycle fault at bus 9 on [0.1, 0.2], with and without TGOV1 governors):")
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
    print(f"  T = {T:4.1f}{' governors' if extra else ''} ({len(A[0])} parameters): {diff:.1e} (max |gradient| {scale:.3g}, "
          f"relative {diff / scale if scale else 0:.1e})")
