#!/usr/bin/env python3
"""examples/quickstart: the program the README shows is the program that is built, and its
gradient is right.

  * The README's quickstart code block is byte-identical to examples/quickstart.cpp.
  * J = q(T) (T = 5, RK4, dt = 0.01, two impacts) and dJ/d(q0, e) from the adjoint and the
    forward sweep equal the closed form: free flight is exact for RK4, so only event location
    (-hs_event_tol 1e-12) separates them; the derivatives of the closed form are taken by the
    complex step (exact to round-off).
  * adjoint = forward ≤ 1e-12 relative; -hs_check_gradient passes.
  * must-fail: without the event-time jump term or without the reset terms the gradient is
    wrong by far more than the tolerance.
"""
import argparse, cmath, json, os, re, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--source", required=True)
args = ap.parse_args()
exe = os.path.join(args.build, "examples", "quickstart")
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


readme = open(os.path.join(args.source, "README.md"), encoding="utf-8").read()
program = open(os.path.join(args.source, "examples", "quickstart.cpp"), encoding="utf-8").read()
blocks = re.findall(r"```cpp\n(.*?)```", readme, re.S)
check(any(b == program for b in blocks), "README shows examples/quickstart.cpp verbatim")

G, T = 9.81, 5.0


def final_height(q0, e):
    """q(T) of the exact bouncing motion; q0, e may be complex (complex-step derivatives)."""
    t1 = cmath.sqrt(2 * q0 / G)
    t, v = t1, e * G * t1  # first impact, velocity after it
    while (t + 2 * v / G).real <= T:
        t, v = t + 2 * v / G, e * v
    s = T - t
    return v * s - 0.5 * G * s * s


def closed_form(q0=10.0, e=0.8, h=1e-30):
    J = final_height(q0, e).real
    return J, [final_height(q0 + 1j * h, e).imag / h, final_height(q0, e + 1j * h).imag / h]


def run(*opts):
    with tempfile.TemporaryDirectory() as tmp:
        summary = os.path.join(tmp, "s.json")
        r = subprocess.run([exe, "-hs_summary", summary, *opts], capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stdout, r.stderr)
            return None, r
        return json.load(open(summary)), r


J, dJ = closed_form()
s, r = run("-hs_adjoint", "-hs_forward")
check(s is not None, "quickstart -hs_adjoint -hs_forward runs")
if s:
    adj, fwd = s["gradient"]["p"][0], s["forward_gradient"]["p"][0]
    rel = lambda a, b: max(abs(x - y) for x, y in zip(a, b)) / max(abs(y) for y in b)
    check(abs(s["objective"][0] - J) <= 1e-10 * abs(J), f"J = {s['objective'][0]:.15g}, closed form {J:.15g}")
    check(rel(adj, fwd) <= 1e-12, f"adjoint vs forward {rel(adj, fwd):.2e} <= 1e-12")
    check(rel(adj, dJ) <= 1e-10, f"adjoint {adj} vs closed form {dJ}: {rel(adj, dJ):.2e} <= 1e-10")
    check(len(s["events"]) == 2, f"two impacts ({len(s['events'])})")

s, r = run("-hs_check_gradient")
check(s is not None and "PASSED" in r.stdout, "-hs_check_gradient PASSED")

for drop in ("-hs_test_drop_event_time_term", "-hs_test_drop_reset_terms"):
    s, r = run("-hs_adjoint", drop)
    if s:
        adj = s["gradient"]["p"][0]
        err = max(abs(a - b) for a, b in zip(adj, dJ)) / max(abs(b) for b in dJ)
        check(err > 1e-3, f"must fail {drop}: gradient off by {err:.2e} > 1e-3")
    else:
        check(False, f"must fail {drop}: the run failed instead")

print("FAILED" if failures else "PASSED")
sys.exit(1 if failures else 0)
