#!/usr/bin/env python3
"""Checkpointed adjoint (-hs_checkpoints K) against full storage: peak RSS and wall time.

Runs `examples/wecc9 -areas A -ts_max_time T -hs_adjoint` with full storage and with
-hs_checkpoints K, alternately (full, K, full, K, …) so that the load of a shared machine hits
both alike; peak RSS of the child from getrusage (ru_maxrss of the waited-for process), wall time
around it, CPU time (user + system) of the child, and the forward and adjoint phases from the
JSON summary. Prints each pair (with the load average), the medians, and the ratios K / full (RSS, time) of each pair and
their median, and checks that both give the same gradient bits.
Usage: bench/checkpointing.py --build DIR [--areas 112] [--time 20] [--checkpoints 30] [--reps 3] [--log-view PREFIX]
"""
import argparse, json, os, resource, statistics, subprocess, sys, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--areas", type=int, default=112)
ap.add_argument("--time", default="20")
ap.add_argument("--checkpoints", type=int, default=30)
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--extra", default="", help="more options for both runs")
ap.add_argument("--exe", default="", help="the wecc9 program (default: BUILD/examples/wecc9)")
ap.add_argument("--log-view", default="", help="write each run's -log_view to PREFIX-full-R.txt / PREFIX-K-R.txt")
args = ap.parse_args()
exe = args.exe or os.path.join(os.path.abspath(args.build), "examples", "wecc9")
base = [exe, "-areas", str(args.areas), "-ts_max_time", args.time, "-hs_adjoint"] + args.extra.split()


def run(extra, log):
    with tempfile.TemporaryDirectory() as d:
        summary = os.path.join(d, "s.json")
        cmd = base + extra + ["-hs_summary", summary] + (["-log_view", ":" + os.path.abspath(log)] if log else [])
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        err = p.stderr.read()
        p.stderr.close()
        if status != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{err[-3000:]}")
        s = json.load(open(summary))
    return {"rss_mib": usage.ru_maxrss / 1024.0, "wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "gradient": s["gradient"],
            "stats": s["stats"]}


print("command:", " ".join(os.path.relpath(base[0]) if i == 0 else a for i, a in enumerate(base)), flush=True)
full, ckpt = [], []
for rep in range(args.reps):
    log = lambda what: f"{args.log_view}-{what}-{rep + 1}.txt" if args.log_view else ""
    f = run([], log("full"))
    c = run(["-hs_checkpoints", str(args.checkpoints)], log(f"K{args.checkpoints}"))
    full.append(f)
    ckpt.append(c)
    cs = c["stats"].get("checkpointing", {})
    phases = lambda r: f"forward {r['stats']['wall_seconds']:.1f} s, adjoint {r['stats']['adjoint_wall_seconds']:.1f} s, CPU {r['cpu']:.1f} s"
    print(f"rep {rep + 1} (load {os.getloadavg()[0]:.1f}): full {f['rss_mib']:.0f} MiB {f['wall']:.1f} s ({phases(f)}) | "
          f"K={args.checkpoints} {c['rss_mib']:.0f} MiB {c['wall']:.1f} s ({phases(c)}, "
          f"{cs.get('recomputed_steps')} steps re-taken, ratio {cs.get('recompute_ratio', 0):.2f}) | "
          f"RSS ratio {c['rss_mib'] / f['rss_mib']:.3f}, time ratio {c['wall'] / f['wall']:.2f}, CPU ratio {c['cpu'] / f['cpu']:.2f}, "
          f"same gradient bits: {c['gradient'] == f['gradient']}", flush=True)
med = lambda xs: statistics.median(xs)
print(f"steps {full[0]['stats']['steps']}, events {full[0]['stats']['events']}")
print(f"median: full {med([r['rss_mib'] for r in full]):.0f} MiB {med([r['wall'] for r in full]):.1f} s; "
      f"K={args.checkpoints} {med([r['rss_mib'] for r in ckpt]):.0f} MiB {med([r['wall'] for r in ckpt]):.1f} s")
print(f"median of pair ratios: RSS {med([c['rss_mib'] / f['rss_mib'] for f, c in zip(full, ckpt)]):.3f}, "
      f"CPU {med([c['cpu'] / f['cpu'] for f, c in zip(full, ckpt)]):.2f}, time {med([c['wall'] / f['wall'] for f, c in zip(full, ckpt)]):.2f} "
      f"[{min(c['wall'] / f['wall'] for f, c in zip(full, ckpt)):.2f}–{max(c['wall'] / f['wall'] for f, c in zip(full, ckpt)):.2f}]")
sys.exit(0 if all(c["gradient"] == f["gradient"] for f, c in zip(full, ckpt)) else 1)
