#!/usr/bin/env python3
"""Strong scaling, 1 against 2 MPI ranks, on the coupled-area grids of examples/wecc9
(-areas 112: 1008 buses, 6384 states; -areas 1112: 10008 buses, 63384 states). A measurement,
not a test: it asserts only the agreement check below.

    python3 bench/scaling.py --build build [--areas 112,1112] [--reps 3] [--T 1.5] [--extra "OPTIONS"]

For each grid, simulation and adjoint (3 costs H_1..H_3, the 29 parameters of area 1): every
repetition runs 1 rank and 2 ranks back to back, alternating which goes first (ABBA), so that a
change in the machine's load hits both alike; the table shows the median time of each and the
median of the per-repetition ratios t(1 rank) / t(2 ranks) (the speed-up; its range in
brackets). Times are the example's "timing:" line (Solver::solve: the forward solve and, when on,
the reverse sweep; model set-up and output excluded). The load average is printed before and
after each grid: on a shared machine it says how far the figures can be trusted.
Peak RSS per rank: each rank runs under this script (--report-rss mode), which reports the
maximum resident set size of the process it started (getrusage of the child). That figure
includes the pages of the shared libraries the process has touched (PETSc, MPI, BLAS, and the
libraries Debian's PETSc links: about 37 MiB in every process, shared between the ranks of a
node, not divided by them); the script also samples /proc every 10 ms for the largest anonymous
plus shared-memory resident size ("without the shared libraries' pages": the rank's own data,
heap, stacks and MPI buffers; a sample can miss a peak shorter than 10 ms).
Agreement: on the largest grid, the adjoint gradients at 2 ranks against 1 rank, max relative
difference (must be <= 1e-12; the script exits non-zero otherwise).
MPI: the variables of scripts/env.sh (ranks yield when idle) are set here too.
"""
import argparse, json, os, re, resource, statistics, subprocess, sys, tempfile

if len(sys.argv) > 1 and sys.argv[1] == "--report-rss":
    # One rank: run the program, then report its peak RSS (KiB) on stderr, and the largest of its
    # anonymous plus shared-memory resident pages seen by sampling /proc every 10 ms.
    import threading, time
    child = subprocess.Popen(sys.argv[2:])
    peak_private = 0

    def sample():
        global peak_private
        while child.poll() is None:
            try:
                f = dict(l.split(":", 1) for l in open(f"/proc/{child.pid}/status"))
                kib = sum(int(f[k].split()[0]) for k in ("RssAnon", "RssShmem"))
                peak_private = max(peak_private, kib)
            except (OSError, KeyError, ValueError):
                pass
            time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    rc = child.wait()
    sampler.join()
    rank = os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "0"))
    print(f"peak-rss rank {rank}: {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss} {peak_private}", file=sys.stderr)
    sys.exit(rc)

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build")
ap.add_argument("--areas", default="112,1112")
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--T", type=float, default=1.5)
ap.add_argument("--mpiexec", default="mpiexec")
ap.add_argument("--extra", default="", help="more options for every run (e.g. \"-pc_type redundant\" to compare with the default)")
a = ap.parse_args()
exe = os.path.join(a.build, "examples", "wecc9")
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
env.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")


def loadavg():
    return open("/proc/loadavg").read().split()[0]


def run(areas, np_, mode, summary=None):
    """Solve time (s) and peak RSS per rank (MiB) of one run."""
    cmd = [a.mpiexec, "-n", str(np_), sys.executable, os.path.abspath(__file__), "--report-rss", exe,
           "-areas", str(areas), "-param_areas", "1", "-cost_generators", "3", "-ts_max_time", str(a.T), "-hs_forward_u0", "-1", *a.extra.split()]
    if mode == "adjoint":
        cmd.append("-hs_adjoint")
    if summary:
        cmd += ["-hs_summary", summary]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode:
        sys.exit(f"scaling: {' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    t = float(re.search(r"timing: .* ([0-9.]+) s", p.stdout).group(1))
    rss = sorted((int(r), int(k) / 1024, int(q) / 1024) for r, k, q in re.findall(r"peak-rss rank (\d+): (\d+) (\d+)", p.stderr))
    return t, [(m, q) for _, m, q in rss]


def grid(areas):
    states = 57 * areas
    print(f"\nwecc9 -areas {areas} ({9 * areas} buses, {states} states), T = {a.T}, {a.reps} repetitions, "
          f"load average before: {loadavg()}")
    for mode in ("simulation", "adjoint"):
        t = {1: [], 2: []}
        rss = {1: [], 2: []}
        for rep in range(a.reps):
            for np_ in ((1, 2) if rep % 2 == 0 else (2, 1)):
                s, m = run(areas, np_, mode)
                t[np_].append(s)
                rss[np_].append(m)
        ratios = [x / y for x, y in zip(t[1], t[2])]
        peak1 = max(m[0][0] for m in rss[1])
        peak2 = [max(m[r][0] for m in rss[2]) for r in range(2)]
        priv1 = max(m[0][1] for m in rss[1])
        priv2 = [max(m[r][1] for m in rss[2]) for r in range(2)]
        label = mode if mode == "simulation" else "adjoint, 3 costs, 29 parameters"
        print(f"  {label:32s} 1 rank {statistics.median(t[1]):8.3f} s   2 ranks {statistics.median(t[2]):8.3f} s   "
              f"speed-up {statistics.median(ratios):5.2f} [{min(ratios):.2f} .. {max(ratios):.2f}]   "
              f"peak RSS 1 rank {peak1:6.0f} MiB, 2 ranks {peak2[0]:.0f} + {peak2[1]:.0f} MiB "
              f"({max(peak2) / peak1:.2f} x per rank); without the shared libraries' pages "
              f"{priv1:.0f} MiB, {priv2[0]:.0f} + {priv2[1]:.0f} MiB ({max(priv2) / priv1:.2f} x)")
    print(f"  load average after: {loadavg()}")


def agreement(areas):
    with tempfile.TemporaryDirectory() as d:
        g = {}
        for np_ in (1, 2):
            s = os.path.join(d, f"s{np_}.json")
            run(areas, np_, "adjoint", s)
            g[np_] = json.load(open(s))["gradient"]["p"]
    scale = max(abs(x) for row in g[1] for x in row)
    diff = max(abs(x - y) for r1, r2 in zip(g[1], g[2]) for x, y in zip(r1, r2))
    rel = diff / scale if scale else diff
    print(f"\nagreement, wecc9 -areas {areas}: adjoint gradients (3 costs x 29 parameters) at 2 ranks against 1 rank: "
          f"max |difference| {diff:.2e}, relative to max |gradient| {scale:.3g}: {rel:.2e} (must be <= 1e-12)")
    return rel <= 1e-12


areas = [int(x) for x in a.areas.split(",")]
for n in areas:
    grid(n)
ok = agreement(max(areas))
sys.exit(0 if ok else 1)
