#!/usr/bin/env python3
"""PETSc's monitoring conventions on a hybrid solve, on examples/bouncing_ball (two impacts
located by the engine, RK4) with forward sensitivities and the adjoint.
-ts_monitor and -ts_adjoint_monitor print one line per step and per step back (the reverse
sweep calls the TS's adjoint monitors as TSAdjointSolve does, each once although every
TSSetFromOptions registers -ts_adjoint_monitor again in PETSc 3.18).
-log_view shows where the time goes: the library's stages ("hybridsens forward+TLM",
"hybridsens adjoint") and its log events inside them. Asserted, from the -log_view table:
  * the stages are there;
  * HSGuardValues, HSGuardRates and HSTrajectory run at every step (count >= steps);
  * HSEventLocation and HSTransition once per impact, HSJumpPrepare at every event in the
    forward sweep and again in the reverse one, HSJumpForward / HSJumpAdjoint per event;
  * with -hs_event_hermite 0 the guard rates decide nothing at an ordinary step end: HSGuardRates
    runs only at the start, after each transition and at each location (at its step start, and
    with this explicit method at its samples, whose slopes they are), not at every step.
"""
import argparse, json, os, re, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
args = ap.parse_args()
exe = os.path.join(os.path.abspath(args.build), "examples", "bouncing_ball")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


with tempfile.TemporaryDirectory() as d:
    summary = os.path.join(d, "s.json")
    out = subprocess.run([exe, "-hs_forward", "-hs_adjoint", "-ts_type", "rk", "-ts_rk_type", "4", "-ts_dt", "1e-2",
                          "-log_view", "-hs_summary", summary], capture_output=True, text=True, check=True).stdout
    s = json.load(open(summary))
steps, events = s["stats"]["steps"], len(s["events"])
check(events >= 2, f"the run has impacts ({events})")
for stage in ("hybridsens forward+TLM", "hybridsens adjoint"):
    check(re.search(r"^\s*\d+:\s+" + re.escape(stage) + ":", out, re.M) is not None, f"stage '{stage}' in -log_view")


def log_counts(text):
    """Event lines of the overall table ("Event Count ..." per stage; the summed counts)."""
    counts = {}
    for line in text.splitlines():
        m = re.match(r"^(HS\w+)\s+(\d+)\s", line)
        if m:
            counts[m.group(1)] = counts.get(m.group(1), 0) + int(m.group(2))
    return counts


counts = log_counts(out)
print("log events (summed over stages):", counts)
for name in ("HSGuardValues", "HSGuardRates", "HSTrajectory"):
    check(counts.get(name, 0) >= steps, f"{name}: {counts.get(name, 0)} >= {steps} steps")
for name in ("HSEventLocation", "HSTransition", "HSJumpForward", "HSJumpAdjoint"):
    check(counts.get(name, 0) >= events, f"{name}: {counts.get(name, 0)} >= {events} events")
with tempfile.TemporaryDirectory() as d:
    summary = os.path.join(d, "s.json")
    plain = subprocess.run([exe, "-ts_type", "rk", "-ts_rk_type", "4", "-ts_dt", "1e-2", "-hs_event_hermite", "0", "-log_view",
                            "-hs_summary", summary], capture_output=True, text=True, check=True).stdout
    st = json.load(open(summary))["stats"]
rates = log_counts(plain).get("HSGuardRates", 0)
# A location's samples: its full step and every re-take but the last, at most located + re-takes.
samples = st["located_events"] + st["location_steps"]
check(0 < rates <= 1 + 2 * events + samples,
      f"-hs_event_hermite 0: HSGuardRates {rates} <= 1 + 2 x {events} events + {samples} location samples (start, transitions, "
      f"locations; {steps} steps)")
check(counts.get("HSJumpPrepare", 0) >= 2 * events, f"HSJumpPrepare: {counts.get('HSJumpPrepare', 0)} >= 2 x {events} (both sweeps)")

# Monitors: forward lines "n TS dt h time t" for n = 0..steps, adjoint lines (dt < 0) for n = steps..0.
mon = subprocess.run([exe, "-hs_adjoint", "-ts_type", "rk", "-ts_rk_type", "4", "-ts_dt", "1e-2", "-ts_monitor", "-ts_adjoint_monitor"],
                     capture_output=True, text=True, check=True).stdout
lines = [l.split() for l in mon.splitlines() if re.match(r"^\s*\d+ TS dt ", l)]
fwd = [int(l[0]) for l in lines if float(l[3]) > 0]
adj = [int(l[0]) for l in lines if float(l[3]) < 0]
check(fwd == list(range(steps + 1)), f"-ts_monitor: steps 0..{steps} once each ({len(fwd)} lines)")
check(adj == list(range(steps, -1, -1)), f"-ts_adjoint_monitor: steps {steps}..0 once each ({len(adj)} lines)")
sys.exit(1 if failures else 0)
