#!/usr/bin/env python3
"""Valgrind memcheck on three examples and three error paths: no invalid reads or writes, no
use of uninitialised values, no definite leaks.

Runs (short horizons, one rank): galan_scalar with the adjoint; bouncing_ball with the adjoint
and the trajectory on disk; hysteresis_oscillator with forward sensitivities; and the error
paths of a bad option value (-hs_event_tol 0), an unwritable summary (-hs_summary /dev/full)
and a grazing/Zeno bouncing ball (e = 0.5 to T = 5). An error path must still end in its
PETSc error. Open MPI's own start-up and shut-down allocations are suppressed
(tests/valgrind.supp explains each entry); nothing of hybridsens or PETSc is.
Each run must report "ERROR SUMMARY: 0 errors" and no definitely lost bytes.
Labelled "valgrind" in ctest (exclude it from a fast run with -LE valgrind).
Usage: valgrind.py --build DIR
"""
import argparse, os, re, shutil, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
args = ap.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
if not shutil.which("valgrind"):
    # scripts/install-deps installs it: a missing valgrind is a broken set-up, not a pass.
    print("FAIL valgrind is not installed (scripts/install-deps installs it)")
    sys.exit(1)

RUNS = [
    ("galan_scalar adjoint", "galan_scalar", ["-ts_max_time", "2", "-hs_adjoint"], None),
    ("bouncing_ball adjoint, trajectory on disk", "bouncing_ball", ["-ts_max_time", "2", "-hs_adjoint", "-hs_trajectory_dir", "{tmp}/traj"], None),
    ("hysteresis_oscillator forward", "hysteresis_oscillator", ["-ts_max_time", "0.3", "-hs_forward"], None),
    ("bad option value", "galan_scalar", ["-hs_event_tol", "0"], r"Option -hs_event_tol 0: must be in \(0, 1e-06\]"),
    ("unwritable summary", "galan_scalar", ["-ts_max_time", "1", "-hs_summary", "/dev/full"], r"-hs_summary /dev/full: write failed"),
    ("grazing/Zeno", "bouncing_ball", ["-e", "0.5", "-ts_dt", "0.05"], r"Grazing|Zeno"),
]

failed = 0
for name, example, opts, error in RUNS:
    exe = os.path.abspath(os.path.join(args.build, "examples", example))
    if not os.path.exists(exe):
        print(f"skip  {name}: {example} not built")
        continue
    with tempfile.TemporaryDirectory() as tmp:
        cmd = ["valgrind", "--num-callers=50", "--leak-check=full", "--show-leak-kinds=definite", "--errors-for-leak-kinds=definite",
               "--suppressions=" + os.path.join(here, "valgrind.supp"), exe] + [o.replace("{tmp}", tmp) for o in opts]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp)
    out = p.stdout + p.stderr
    problems = []
    m = re.search(r"ERROR SUMMARY: (\d+) errors", out)
    if not m or m.group(1) != "0":
        problems.append("ERROR SUMMARY: " + (m.group(1) if m else "missing"))
    lost = re.search(r"definitely lost: ([\d,]+) bytes", out)
    if lost and lost.group(1) != "0":
        problems.append(f"definitely lost: {lost.group(1)} bytes")
    if error is None and p.returncode != 0:
        problems.append(f"exit {p.returncode}")
    if error is not None and (p.returncode == 0 or not re.search(error, out)):
        problems.append(f"expected the error /{error}/ (exit {p.returncode})")
    print(("ok    " if not problems else "FAIL  ") + name + ("" if not problems else ": " + "; ".join(problems)), flush=True)
    if problems:
        failed += 1
        print("\n".join([l for l in out.splitlines() if l.startswith("==")][-60:]))

print("valgrind:", "FAILED" if failed else "passed")
sys.exit(1 if failed else 0)
