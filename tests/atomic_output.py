#!/usr/bin/env python3
"""Output files are complete or an error, and a failed write keeps the previous file.

A full disk is simulated with RLIMIT_FSIZE (writes past the limit fail with EFBIG, SIGXFSZ
ignored), which needs no root and no special file system. The limit is 64 KiB, with
PMIX_MCA_gds=hash so that MPI's start-up writes no shared-memory files of its own; every output
here is larger than twice that. For -hs_summary and for the examples'
CSV writers (wecc9 -wecc9_states, hysteresis_oscillator -trajectory_csv): a good run writes the
file; the same run again under a file-size limit smaller than the file must fail with an error
naming the option and the path, leave the previous file byte for byte, and leave no temporary
file behind. At 2 ranks (rank 0 writes) the summary is complete and alone in its directory.
Usage: atomic_output.py --build DIR [--mpiexec M]
"""
import argparse, json, os, resource, signal, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--mpiexec", default="mpiexec")
args = ap.parse_args()
failed = 0


def check(ok, what):
    global failed
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    failed += not ok


def limited(nbytes):
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
    return apply


LIMIT = 64 * 1024


def run(cmd, limit=None):
    env = dict(os.environ, PMIX_MCA_gds="hash")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, preexec_fn=limited(limit) if limit else None)


WRITERS = [
    ("-hs_summary", "galan_scalar", ["-hs_forward", "-hs_output_times", ",".join(f"{0.004 * (i + 1):.3f}" for i in range(1000))]),
    ("-wecc9_states", "wecc9", ["-ts_max_time", "3"]),
    ("-trajectory_csv", "hysteresis_oscillator", ["-ts_max_time", "2"]),
]

for option, example, opts in WRITERS:
    exe = os.path.join(args.build, "examples", example)
    if not os.path.exists(exe):
        print(f"skip  {option}: {example} not built")
        continue
    with tempfile.TemporaryDirectory() as tmp:
        target = os.path.join(tmp, "out.file")
        good = run([exe, option, target] + opts)
        check(good.returncode == 0 and os.path.getsize(target) > 0, f"{option}: a good run writes {target}")
        if good.returncode != 0:
            print(good.stdout + good.stderr)
            continue
        before = open(target, "rb").read()
        limit = LIMIT
        check(len(before) > 2 * limit, f"{option}: the output ({len(before)} bytes) exceeds twice the limit")
        bad = run([exe, option, target] + opts, limit=limit)
        out = bad.stdout + bad.stderr
        check(bad.returncode != 0, f"{option}: a write failing half-way (file size limit {limit} bytes) is an error, not exit 0")
        check(f"{option} {target}: write failed: File too large" in out, f"{option}: the error names the option, the path and the cause"
              + ("" if f"{option} {target}: write failed" in out else ": " + out[-400:]))
        check(open(target, "rb").read() == before, f"{option}: the previous file is intact")
        check(os.listdir(tmp) == ["out.file"], f"{option}: no temporary file left ({os.listdir(tmp)})")

# Two ranks: rank 0 writes the whole summary, nothing else appears in the directory.
with tempfile.TemporaryDirectory() as tmp:
    target = os.path.join(tmp, "s.json")
    exe = os.path.join(args.build, "examples", "galan_scalar")
    r = run([args.mpiexec, "-n", "2", "--oversubscribe", exe, "-hs_forward", "-hs_summary", target])
    check(r.returncode == 0, "2 ranks: summary written" + ("" if r.returncode == 0 else ": " + (r.stdout + r.stderr)[-400:]))
    if r.returncode == 0:
        s = json.load(open(target))
        check("forward_gradient" in s and "stats" in s, "2 ranks: the summary is complete")
        check(os.listdir(tmp) == ["s.json"], f"2 ranks: only the summary in the directory ({os.listdir(tmp)})")

print("atomic_output:", "FAILED" if failed else "passed")
sys.exit(1 if failed else 0)
