#!/usr/bin/env python3
"""Runs sharing one -hs_trajectory_dir do not touch each other's files.

Each run keeps its trajectory in a directory of its own inside -hs_trajectory_dir (one per rank)
and removes it at the end. Two bouncing_ball runs with different parameters (so different
trajectories, same step numbering) are started together on one directory, ten times; every
time, each adjoint gradient must be bitwise the one of the same run made alone in memory (the
disk store is bit-identical to memory), and the directory must be empty afterwards. Then: a
pair at 2 ranks each, and a run that fails half-way (Zeno: e = 0.5 to T = 5) leaves nothing.
The assertion is equality of results, which holds whatever the interleaving.
Usage: trajectory_dir.py --build DIR [--mpiexec M] [--repeat N]
"""
import argparse, json, os, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--mpiexec", default="mpiexec")
ap.add_argument("--repeat", type=int, default=10)
args = ap.parse_args()
exe = os.path.join(args.build, "examples", "bouncing_ball")
# Different parameters and steps: the runs write different data under the same step numbers.
RUNS = [["-q0", "10", "-e", "0.8", "-ts_dt", "0.01"], ["-q0", "7", "-e", "0.7", "-ts_dt", "0.0125"]]

failed = 0


def check(ok, what):
    global failed
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    failed += not ok


def start(opts, tmp, name, np=1):
    summary = os.path.join(tmp, name + ".json")
    cmd = ([args.mpiexec, "-n", str(np), "--oversubscribe"] if np > 1 else []) + [exe, "-hs_adjoint", "-hs_summary", summary] + opts
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True), summary


def finish(proc_summary):
    proc, summary = proc_summary
    out, _ = proc.communicate(timeout=120)
    if proc.returncode != 0:
        return None, out
    try:
        with open(summary) as f:
            return json.load(f)["gradient"], out
    except (OSError, ValueError, KeyError) as e:
        return None, out + f"\n(summary: {e})"


def listing(d):
    left = sorted(os.listdir(d))
    return f": {len(left)} entries, {left[:4]}" if left else ""


with tempfile.TemporaryDirectory() as tmp:
    reference = []
    for i, opts in enumerate(RUNS):
        g, out = finish(start(opts, tmp, f"alone{i}"))
        check(g is not None, f"run {i} alone in memory" + ("" if g is not None else ": " + out[-500:]))
        reference.append(g)
    shared = os.path.join(tmp, "shared")
    for rep in range(args.repeat):
        procs = [start(opts + ["-hs_trajectory_dir", shared], tmp, f"pair{i}") for i, opts in enumerate(RUNS)]
        results = [finish(p) for p in procs]
        for i, (g, out) in enumerate(results):
            check(g == reference[i], f"pair {rep + 1}: run {i} on the shared directory = alone"
                  + ("" if g == reference[i] else f": {g} vs {reference[i]} " + out[-500:]))
        check(not os.listdir(shared), f"pair {rep + 1}: nothing left in the shared directory" + listing(shared))

    procs = [start(opts + ["-hs_trajectory_dir", shared], tmp, f"np2pair{i}", np=2) for i, opts in enumerate(RUNS)]
    for i, (g, out) in enumerate(finish(p) for p in procs):
        check(g == reference[i], f"2 ranks: run {i} on the shared directory = serial alone"
              + ("" if g == reference[i] else f": {g} vs {reference[i]} " + out[-500:]))
    check(not os.listdir(shared), "2 ranks: nothing left in the shared directory" + listing(shared))

    g, out = finish(start(["-e", "0.5", "-hs_trajectory_dir", shared], tmp, "zeno"))
    check(g is None and ("Zeno" in out or "grazing" in out), "a run failing half-way (Zeno) ends in its error")
    check(not os.listdir(shared), "the failed run left nothing in the directory" + listing(shared))

print("trajectory_dir:", "FAILED" if failed else "passed")
sys.exit(1 if failed else 0)
