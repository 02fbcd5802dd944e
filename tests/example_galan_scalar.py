#!/usr/bin/env python3
"""Acceptance test of examples/galan_scalar (docs/validation.md, scalar hybrid ODE) against its exact solution.

ẋ = 4 − x in mode 1, ẋ = 10 − 2x in mode 2; both drive x upwards (x < 4 < 5), so x(t) is
monotone and the events are exactly the roots of h(x) = x³ − 5x² + 7x = p met in increasing x:
a root where h rises fires 1 → 2 (only while in mode 1), a root where h falls fires 2 → 1 (only
in mode 2). h is monotone on [0, 1], [1, 7/3] and [7/3, 5], so bisection on each piece finds
every root. Between events the solution is exponential, which gives the event times in closed
form. Checks:
  * small steps (RK4, dt = 1e-3 and the example's default dt = 0.01): event times to ≤ 1e-9;
  * large steps (RK4 and CN, dt = 0.25 and 0.5; the first two events are 0.057 apart): all
    events found, in order, with the right guards and modes;
  * every run: the state at each event lies on the guard surface, |x⁻ − root| ≤ 1e-11 (event
    location is on the numerical solution's guard, so this holds for any step size: the engine
    locates γ to -hs_event_tol 1e-12 relative to |γ| ≲ 10 over a step, and γ_x ≈ 2 at the roots);
  * p = 3.1 and p = 1.5 (one event each): the exact solution is not hard-wired to p = 2.9;
  * 2 and 3 MPI ranks reproduce the serial run.
"""
import argparse, json, math, os, re, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--mpiexec", default="mpiexec")
args = ap.parse_args()
exe = os.path.join(args.build, "examples", "galan_scalar")
T = 5.0


def h(x):
    return ((x - 5) * x + 7) * x


def root_on(a, b, p):
    """The root of h(x) = p on [a, b], where h is monotone; None if there is none."""
    fa, fb = h(a) - p, h(b) - p
    if fa == 0:
        return a
    if (fa > 0) == (fb > 0):
        return None
    for _ in range(200):
        m = 0.5 * (a + b)
        if m in (a, b):
            break
        fm = h(m) - p
        if fm == 0:
            return m
        if (fm > 0) == (fa > 0):
            a, fa = m, fm
        else:
            b = m
    return 0.5 * (a + b)


def exact(p):
    """Events [(t, x, guard, from, to)] and x(T) of the exact solution."""
    pieces = [(0.0, 1.0, +1), (1.0, 7.0 / 3.0, -1), (7.0 / 3.0, 5.0, +1)]  # h rising / falling
    roots = []
    for a, b, slope in pieces:
        r = root_on(a, b, p)
        if r is not None and r > 0 and (not roots or r > roots[-1][0]):
            roots.append((r, slope))
    equilibrium = {1: 4.0, 2: 5.0}
    rate = {1: 1.0, 2: 2.0}
    t, x, mode, events = 0.0, 0.0, 1, []
    for r, slope in roots:
        # Mode 1 waits for a rising crossing (guard 0), mode 2 for a falling one (guard 1).
        if (mode == 1 and slope < 0) or (mode == 2 and slope > 0) or r >= equilibrium[mode]:
            continue
        te = t + math.log((equilibrium[mode] - x) / (equilibrium[mode] - r)) / rate[mode]
        if te > T:
            break
        new = 2 if mode == 1 else 1
        events.append((te, r, 0 if mode == 1 else 1, mode, new))
        t, x, mode = te, r, new
    xT = equilibrium[mode] - (equilibrium[mode] - x) * math.exp(-rate[mode] * (T - t))
    return events, xT


def run(opts, np=1):
    with tempfile.TemporaryDirectory() as d:
        summary = os.path.join(d, "s.json")
        cmd = ([args.mpiexec, "-n", str(np), "--oversubscribe"] if np > 1 else []) + [exe, "-hs_summary", summary] + opts
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited with {res.returncode}:\n{res.stdout}\n{res.stderr}")
        s = json.load(open(summary))
    # The JSON has no states at events; the example prints x⁻ with 17 digits.
    s["event_states"] = [float(x) for x in re.findall(r"^\s+t = \S+ .* x = (\S+)$", res.stdout, re.M)]
    return s


passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"  FAIL: {what}")


def check_run(label, opts, p, time_tol, time_sanity=None, xT_tol=None):
    ev_exact, xT_exact = exact(p)
    try:
        s = run(opts)
    except RuntimeError as e:
        print(f"{label}: {e}")
        check(False, f"{label}: run failed")
        return None
    ev = s["events"]
    print(f"{label}: {len(ev)} events " + ", ".join(f"{e['from']}->{e['to']} at {e['time']:.15f}" for e in ev))
    print(f"{'':{len(label)}}  exact    " + ", ".join(f"[{a}]->[{b}] at {t:.15f}" for t, _, _, a, b in ev_exact))
    check(len(ev) == len(ev_exact), f"{label}: {len(ev)} events, exact solution has {len(ev_exact)}")
    check(len(s["event_states"]) == len(ev), f"{label}: printed {len(s['event_states'])} event states for {len(ev)} events")
    check(all(a["time"] < b["time"] for a, b in zip(ev, ev[1:])), f"{label}: event times not increasing")
    if len(ev) != len(ev_exact):
        return s  # events cannot be paired with the exact ones; the count failure says it all
    for k, (e, (te, xe, guard, a, b)) in enumerate(zip(ev, ev_exact)):
        check(e["kind"] == "guard" and e["index"] == guard and e["from"] == [a] and e["to"] == [b],
              f"{label}: event {k} is {e['kind']} {e['index']} {e['from']}->{e['to']}, expected guard {guard} [{a}]->[{b}]")
        err = abs(e["time"] - te)
        if time_tol is not None:
            check(err <= time_tol, f"{label}: event {k} time {e['time']!r} vs exact {te!r} (error {err:.3g} > {time_tol:g})")
        if time_sanity is not None:
            check(err <= time_sanity, f"{label}: event {k} time {e['time']!r} vs exact {te!r} (error {err:.3g} > {time_sanity:g})")
        if k < len(s["event_states"]):
            xerr = abs(s["event_states"][k] - xe)
            check(xerr <= 1e-11, f"{label}: event {k} state {s['event_states'][k]!r} vs root {xe!r} (error {xerr:.3g})")
    check(s["final_discrete_state"] == [ev_exact[-1][4] if ev_exact else 1], f"{label}: final mode {s['final_discrete_state']}")
    check(s["final_time"] == T, f"{label}: final time {s['final_time']!r}")
    if xT_tol is not None:
        err = abs(s["final_state"][0] - xT_exact)
        check(err <= xT_tol, f"{label}: x(T) = {s['final_state'][0]!r} vs exact {xT_exact!r} (error {err:.3g})")
    if time_tol is not None:
        print(f"{'':{len(label)}}  max event-time error {max([abs(e['time'] - x[0]) for e, x in zip(ev, ev_exact)] or [0]):.3g}, "
              f"x(T) error {abs(s['final_state'][0] - xT_exact):.3g}")
    return s


# The test's own exact solution for p = 2.9 must have the three events V2 describes.
ev29, _ = exact(2.9)
check([(g, a, b) for _, _, g, a, b in ev29] == [(0, 1, 2), (1, 2, 1), (0, 1, 2)] and 0.05 < ev29[1][0] - ev29[0][0] < 0.06,
      f"exact solution for p = 2.9: {ev29}")

rk4 = ["-ts_type", "rk", "-ts_rk_type", "4"]
check_run("RK4 dt=1e-3", rk4 + ["-ts_dt", "1e-3"], 2.9, time_tol=1e-9, xT_tol=1e-9)
serial = check_run("default (RK4 dt=0.01)", [], 2.9, time_tol=1e-9, xT_tol=1e-9)
# Large steps: only detection, order and modes are asserted, plus a sanity bound on the time far
# below the 0.057 spacing of the first two events, so each event matches the right exact one.
for ts in (rk4, ["-ts_type", "cn"]):
    for dt in ("0.25", "0.5"):
        check_run(f"{ts[1].upper() if ts[1] == 'cn' else 'RK4'} dt={dt}", ts + ["-ts_dt", dt], 2.9, time_tol=None, time_sanity=0.02)
check_run("p=3.1 RK4 dt=1e-3", rk4 + ["-ts_dt", "1e-3", "-p", "3.1"], 3.1, time_tol=1e-9, xT_tol=1e-9)
check_run("p=1.5 RK4 dt=1e-3", rk4 + ["-ts_dt", "1e-3", "-p", "1.5"], 1.5, time_tol=1e-9, xT_tol=1e-9)

# MPI: the whole state lives on rank 0; other ranks must take the same decisions.
for np in (2, 3):
    try:
        s = run([], np)
    except RuntimeError as e:
        print(f"np={np}: {e}")
        check(False, f"np={np}: run failed")
        continue
    same = serial is not None and [(e["time"], e["from"], e["to"]) for e in s["events"]] == \
        [(e["time"], e["from"], e["to"]) for e in serial["events"]]
    check(same, f"np={np}: events {s['events']} differ from the serial run")
    if serial is not None:
        err = abs(s["final_state"][0] - serial["final_state"][0])
        check(err <= 1e-12 * abs(serial["final_state"][0]), f"np={np}: x(T) differs from serial by {err:.3g}")
    print(f"np={np}: {len(s['events'])} events, x(T) = {s['final_state'][0]!r}")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
