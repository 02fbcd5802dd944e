#!/usr/bin/env python3
"""-log_view shows where a hybrid solve spends its time: the library's stages ("hybridsens
forward", "hybridsens adjoint") and its log events inside them, on examples/bouncing_ball
(two impacts located by the engine, RK4) with forward sensitivities and the adjoint.
Asserted, from the -log_view table:
  * the stages are there;
  * HSGuardValues, HSGuardRates and HSTrajectory run at every step (count >= steps);
  * HSEventLocation and HSTransition once per impact, HSJumpPrepare at every event in the
    forward sweep and again in the reverse one, HSJumpForward / HSJumpAdjoint per event.
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
# Event lines of the overall table ("Event Count ..." per stage; the summed counts).
counts = {}
for line in out.splitlines():
    m = re.match(r"^(HS\w+)\s+(\d+)\s", line)
    if m:
        counts[m.group(1)] = counts.get(m.group(1), 0) + int(m.group(2))
print("log events (summed over stages):", counts)
for name in ("HSGuardValues", "HSGuardRates", "HSTrajectory"):
    check(counts.get(name, 0) >= steps, f"{name}: {counts.get(name, 0)} >= {steps} steps")
for name in ("HSEventLocation", "HSTransition", "HSJumpForward", "HSJumpAdjoint"):
    check(counts.get(name, 0) >= events, f"{name}: {counts.get(name, 0)} >= {events} events")
check(counts.get("HSJumpPrepare", 0) >= 2 * events, f"HSJumpPrepare: {counts.get('HSJumpPrepare', 0)} >= 2 x {events} (both sweeps)")
sys.exit(1 if failures else 0)
