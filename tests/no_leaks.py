#!/usr/bin/env python3
"""Nothing the library allocates outlives a solve: PETSc's -malloc_dump lists every allocation
still held at PetscFinalize. Forward sensitivities and the adjoint (integral, terminal and
measurement costs, events with resets, a DAE with AD local kernels when built) on the examples;
asserted: no line of the dump. (The adjoint's PETSc quadrature work vector leaked until
this test was written.)
"""
import argparse, os, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
args = ap.parse_args()
runs = [["bouncing_ball", "-hs_forward", "-hs_adjoint", "-ts_dt", "0.1"],
        ["galan_scalar", "-hs_forward", "-hs_adjoint"],
        ["scalar_measurements", "-hs_forward", "-hs_adjoint"],
        ["wecc9", "-hs_forward", "-hs_adjoint", "-ts_max_time", "1.5"]]
failures = 0
for r in runs:
    exe = os.path.join(args.build, "examples", r[0])
    if not os.path.exists(exe):
        print(f"skip {r[0]} (not built)")
        continue
    p = subprocess.run([exe] + r[1:] + ["-malloc_dump"], capture_output=True, text=True, check=True)
    dump = [l for l in (p.stdout + p.stderr).splitlines() if l.startswith("[ 0]") or l.startswith("[0]Maximum")]
    ok = not dump
    failures += not ok
    print(("ok   " if ok else "FAIL ") + " ".join(r) + f": {len(dump)} allocations left at PetscFinalize" + ("" if ok else "\n  " + "\n  ".join(dump[:5])))
sys.exit(1 if failures else 0)
