#!/usr/bin/env python3
"""Checkpointed adjoint (-hs_checkpoints K) against full storage: peak RSS and wall time.

Runs `examples/wecc9 -areas A -ts_max_time T -hs_adjoint` with full storage and with
-hs_checkpoints K, alternately (full, K, full, K, …) so that the load of a shared machine hits
both alike; peak RSS of the child from getrusage (ru_maxrss of the waited-for process), wall time
around it. Prints each pair, the medians, and the ratios K / full (RSS, time) of each pair and
their median, and checks that both give the same gradient bits.
Usage: bench/checkpointing.py --build DIR [--areas 112] [--time 20] [--checkpoints 30] [--reps 3]
"""
import argparse, json, os, resource, statistics, subprocess, sys, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--areas", type=int, default=112)
ap.add_argument("--time", default="20")
ap.add_argument("--checkpoints", type=int, default=30)
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--extra", default="", help="more options for both runs")
args = ap.parse_args()
exe = os.path.join(os.path.abspath(args.build), "examples", "wecc9")
base = [exe, "-areas", str(args.areas), "-ts_max_time", args.time, "-hs_adjoint"] + args.extra.split()


def run(extra):
    with tempfile.TemporaryDirectory() as d:
        summary = os.path.join(d, "s.json")
        cmd = base + extra + ["-hs_summary", summary]
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        err = p.stderr.read()
        p.stderr.close()
        if status != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{err[-3000:]}")
        s = json.load(open(summary))
    return {"rss_mib": usage.ru_maxrss / 1024.0, "wall": wall, "gradient": s["gradient"], "stats": s["stats"]}


print("command:", " ".join(os.path.relpath(base[0]) if i == 0 else a for i, a in enumerate(base)), flush=True)
full, ckpt = [], []
for rep in range(args.reps):
    f = run([])
    c = run(["-hs_checkpoints", str(args.checkpoints)])
    full.append(f)
    ckpt.append(c)
    cs = c["stats"].get("checkpointing", {})
    print(f"rep {rep + 1}: full {f['rss_mib']:.0f} MiB {f['wall']:.1f} s (adjoint {f['stats']['adjoint_wall_seconds']:.1f} s) | "
          f"K={args.checkpoints} {c['rss_mib']:.0f} MiB {c['wall']:.1f} s (adjoint {c['stats']['adjoint_wall_seconds']:.1f} s, "
          f"{cs.get('recomputed_steps')} steps re-taken, ratio {cs.get('recompute_ratio', 0):.2f}) | "
          f"RSS ratio {c['rss_mib'] / f['rss_mib']:.3f}, time ratio {c['wall'] / f['wall']:.2f}, "
          f"same gradient bits: {c['gradient'] == f['gradient']}", flush=True)
med = lambda xs: statistics.median(xs)
print(f"steps {full[0]['stats']['steps']}, events {full[0]['stats']['events']}")
print(f"median: full {med([r['rss_mib'] for r in full]):.0f} MiB {med([r['wall'] for r in full]):.1f} s; "
      f"K={args.checkpoints} {med([r['rss_mib'] for r in ckpt]):.0f} MiB {med([r['wall'] for r in ckpt]):.1f} s")
print(f"median of pair ratios: RSS {med([c['rss_mib'] / f['rss_mib'] for f, c in zip(full, ckpt)]):.3f}, "
      f"time {med([c['wall'] / f['wall'] for f, c in zip(full, ckpt)]):.2f} "
      f"[{min(c['wall'] / f['wall'] for f, c in zip(full, ckpt)):.2f}–{max(c['wall'] / f['wall'] for f, c in zip(full, ckpt)):.2f}]")
sys.exit(0 if all(c["gradient"] == f["gradient"] for f, c in zip(full, ckpt)) else 1)
