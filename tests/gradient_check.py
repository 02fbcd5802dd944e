#!/usr/bin/env python3
"""-hs_check_gradient (hybridsens/verify.hpp) on the examples: it passes where the gradient is
right (adjoint = forward to round-off, = central FD to 1e-6, Taylor remainder O(ε²)) and fails
loudly (non-zero exit, "FAILED") when a jump term is switched off."""
import argparse, os, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
args = ap.parse_args()
passed = failed = 0


def run(ex, opts):
    r = subprocess.run([os.path.join(args.build, "examples", ex), "-hs_check_gradient"] + opts, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def check(name, ok, detail=""):
    global passed, failed
    print(f"{'ok  ' if ok else 'FAIL'} {name} {detail}")
    passed += ok
    failed += not ok


for ex, opts in [("galan_scalar", []), ("bouncing_ball", []), ("scalar_measurements", []), ("switched_linear", ["-ts_dt", "5e-5"])]:
    rc, out = run(ex, opts)
    line = [l for l in out.splitlines() if "adjoint vs forward" in l]
    check(f"{ex} passes", rc == 0 and "PASSED" in out, line[-1].strip() if line else out[-300:])
for ex, opt in [("galan_scalar", "-hs_test_drop_event_time_term"), ("bouncing_ball", "-hs_test_drop_reset_terms")]:
    rc, out = run(ex, [opt])
    check(f"{ex} {opt} fails loudly", rc != 0 and "Gradient check FAILED" in out)
# A time event on the step grid (smib's clearing time 0.2 at dt 0.01) is a kink of the computed J:
# the check compares with one-sided differences on the side the library's (left) derivative is for
# (central differences average the two sides and missed by 2e-4).
rc, out = run("smib_optimization", ["-smib_optimize", "0", "-ts_dt", "0.01"])
line = [l for l in out.splitlines() if "adjoint vs forward" in l]
check("smib clearing time on the step grid passes with one-sided differences", rc == 0 and "PASSED" in out and "one-sided" in out,
      line[-1].strip() if line else out[-300:])
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
