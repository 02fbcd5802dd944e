#!/usr/bin/env python3
"""examples/bouncing_ball_ad (every derivative by Sacado AD) against the hand-coded
examples/bouncing_ball, kept as the oracle (identical trajectories and gradients).

For each configuration both executables run with the same options; compared, each to ≤ 1e-14
relative (to the largest magnitude of the compared array):
  * the whole trajectory: every accepted state, written by -ts_monitor_solution binary:FILE
    (PETSc binary, exact doubles), and the number of states;
  * the event list (time, source, modes, step) and the printed impact states q⁻, v⁻, v⁺;
  * the final state, objective, forward gradient (p and u0), adjoint gradient (p and u0), final
    sensitivity matrix and step statistics (-hs_forward -hs_adjoint -hs_summary).
The trajectory and final state come from a forward-only run: with -hs_adjoint the summary's
final_state is the state after the reverse sweep (a core issue, independent of AD).
Negative control: the same comparison between the hand-coded run at e = 0.8 and the AD run at
e = 0.8 + 1e-12 must report a difference (the check can fail).
"""
import argparse, json, os, re, struct, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--mpiexec", default="mpiexec")
args = ap.parse_args()
HAND = os.path.join(args.build, "examples", "bouncing_ball")
AD = os.path.join(args.build, "examples", "bouncing_ball_ad")
TOL = 1e-14


def read_petsc_vecs(path):
    b = open(path, "rb").read()
    out, off = [], 0
    while off < len(b):
        cls, m = struct.unpack(">ii", b[off:off + 8])
        assert cls == 1211214, f"{path}: not a PETSc Vec stream"
        off += 8
        out.append(list(struct.unpack(f">{m}d", b[off:off + 8 * m])))
        off += 8 * m
    return out


def run(exe, opts, np=1):
    with tempfile.TemporaryDirectory() as d:
        fwd, full, traj = (os.path.join(d, x) for x in ("fwd.json", "full.json", "traj.bin"))
        pre = [args.mpiexec, "-n", str(np), "--oversubscribe"] if np > 1 else []
        r1 = subprocess.run(pre + [exe, "-hs_summary", fwd, "-ts_monitor_solution", f"binary:{traj}"] + opts,
                            capture_output=True, text=True)
        r2 = subprocess.run(pre + [exe, "-hs_forward", "-hs_adjoint", "-hs_summary", full] + opts,
                            capture_output=True, text=True)
        if r1.returncode or r2.returncode:
            raise RuntimeError(f"{exe} {opts} failed:\n{r1.stdout}{r1.stderr}\n{r2.stdout}{r2.stderr}")
        s = json.load(open(full))
        s["final_state"] = json.load(open(fwd))["final_state"]
        s["trajectory"] = read_petsc_vecs(traj)
        s["impacts"] = [list(map(float, m)) for m in
                        re.findall(r"^\s+t = (\S+) .* q- = (\S+)  v- = (\S+)  v\+ = (\S+)$", r1.stdout, re.M)]
        for key in ("wall_seconds", "adjoint_wall_seconds"):  # timings differ run to run
            s["stats"].pop(key, None)
    return s


def flat(x):
    if isinstance(x, list):
        return [y for e in x for y in flat(e)]
    return [x]


def differences(a, b):
    """[(what, relative difference)] above TOL, and the largest relative difference seen."""
    bad, worst = [], 0.0

    def cmp(what, x, y):
        nonlocal worst
        fx, fy = flat(x), flat(y)
        if len(fx) != len(fy):
            bad.append((what + " (size)", float("inf")))
            return
        scale = max([abs(v) for v in fx + fy] + [1e-300])
        rel = max([abs(u - v) / scale for u, v in zip(fx, fy)] + [0.0])
        worst = max(worst, rel)
        if rel > TOL:
            bad.append((what, rel))

    ev = lambda s: [(e["kind"], e["index"], e["from"], e["to"], e["step"]) for e in s["events"]]
    if ev(a) != ev(b):
        bad.append(("event list", float("inf")))
    if a["stats"] != b["stats"]:
        bad.append((f"stats {a['stats']} vs {b['stats']}", float("inf")))
    cmp("event times", [e["time"] for e in a["events"]], [e["time"] for e in b["events"]])
    cmp("impact states", a["impacts"], b["impacts"])
    if len(a["trajectory"]) != len(b["trajectory"]):
        bad.append(("trajectory length", float("inf")))
    else:
        for i, (x, y) in enumerate(zip(a["trajectory"], b["trajectory"])):
            cmp(f"trajectory state {i}", x, y)
    for key in ("final_state", "objective", "sensitivity_final"):
        cmp(key, a[key], b[key])
    for key in ("forward_gradient", "gradient"):
        cmp(key + ".p", a[key]["p"], b[key]["p"])
        cmp(key + ".u0", a[key]["u0"], b[key]["u0"])
    return bad, worst


passed = failed = 0


def check(ok, what):
    global passed, failed
    passed += ok
    failed += not ok
    print(("ok    " if ok else "FAIL  ") + what)


configs = [
    ("default RK4 dt=0.01", [], 1),
    ("RK4 dt=0.5", ["-ts_dt", "0.5"], 1),
    ("CN dt=0.1", ["-ts_type", "cn", "-ts_dt", "0.1"], 1),
    ("beuler dt=0.05", ["-ts_type", "beuler", "-ts_dt", "0.05"], 1),
    ("e=0.5 T=4 RK4 dt=0.1", ["-e", "0.5", "-ts_max_time", "4", "-ts_dt", "0.1"], 1),
    ("q0=5 theta dt=0.1", ["-q0", "5", "-ts_type", "theta", "-ts_theta_theta", "0.7", "-ts_theta_endpoint", "-ts_dt", "0.1"], 1),
    ("default, 2 ranks", [], 2),
    ("CN dt=0.1, 3 ranks", ["-ts_type", "cn", "-ts_dt", "0.1"], 3),
]
for label, opts, np in configs:
    try:
        a, b = run(HAND, opts, np), run(AD, opts, np)
    except RuntimeError as e:
        check(False, f"{label}: {e}")
        continue
    bad, worst = differences(a, b)
    check(not bad and len(a["events"]) > 0,
          f"{label}: {len(a['events'])} events, {len(a['trajectory'])} states, AD vs hand-coded max relative difference "
          f"{worst:.3g}" + ("" if not bad else "; differs: " + ", ".join(f"{w} ({r:.3g})" for w, r in bad[:6])))

# Negative control: a 1e-12 change of e must be seen by the comparison.
a, b = run(HAND, ["-ts_dt", "0.1"]), run(AD, ["-ts_dt", "0.1", "-e", str(0.8 + 1e-12)])
bad, worst = differences(a, b)
check(bool(bad), f"negative control (e + 1e-12): comparison reports {len(bad)} differences, max {worst:.3g}")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
