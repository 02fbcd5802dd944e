"""Helpers shared by the Python tests over examples/wecc9 and wecc9_opt: the ok/FAIL tally, one
run of an example with its JSON summary, and the relative difference of two gradient tables."""
import argparse, json, os, subprocess, sys, tempfile

failures = 0


def check(ok, msg):
    global failures
    print(("  ok   " if ok else "  FAIL ") + msg)
    if not ok:
        failures += 1


def finish():
    print("FAILED" if failures else "PASSED", f"({failures} failures)")
    sys.exit(1 if failures else 0)


def run(exe, opts, np=1, mpiexec="mpiexec", states=False, summary=None):
    """exe with -hs_summary (in a temporary file unless `summary` names one) and opts on np ranks;
    the summary, with "stdout" and, with states, the -wecc9_states rows as "states"."""
    with tempfile.TemporaryDirectory() as d:
        summary = summary or os.path.join(d, "s.json")
        csv = os.path.join(d, "u.csv")
        cmd = ([mpiexec, "-n", str(np)] if np > 1 else []) + [exe, "-hs_summary", summary] + opts
        if states:
            cmd += ["-wecc9_states", csv]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        s = json.load(open(summary))
        s["stdout"] = out
        if states:
            s["states"] = [list(map(float, l.split(","))) for l in open(csv)]
        return s


def relmax(a, b):
    """max |a − b| over two tables (rows of numbers), relative to max |b|."""
    scale = max(abs(x) for row in b for x in row)
    return max(abs(x - y) for ra, rb in zip(a, b) for x, y in zip(ra, rb)) / scale


def arguments(example="wecc9"):
    """--build and --mpiexec of the tests over examples/wecc9; (args, path of the example)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--mpiexec", default="mpiexec")
    args = ap.parse_args()
    return args, os.path.join(args.build, "examples", example)
