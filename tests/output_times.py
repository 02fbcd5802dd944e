#!/usr/bin/env python3
"""State and forward sensitivities at chosen output times (-hs_output_times), on
examples/bouncing_ball (q̇ = v, v̇ = −g, impact q = 0 with v⁺ = −e v⁻; p = (q0, e)).
Closed form between impacts: t1 = sqrt(2 q0/g); before t1 q = q0 − g t²/2, v = −g t;
after t1 (until the second impact) with V = e g t1: q = V s − g s²/2, v = V − g s, s = t − t1.
Asserted with RK4, dt = 1e-3 (output times 0.5, 1.0 and 2.1 — the last after the first impact):
  * "outputs" has one entry per time with "state" equal to the closed form (≤ 1e-10 rel.) and
    "sensitivity" (n × np) equal to the closed form's derivatives (central differences of the
    closed form itself, ≤ 1e-7 rel. to the largest entry);
  * the output times do not change the result at T: final state and sensitivity_final are
    the same with and without them (≤ 1e-12; output times become step boundaries, and the
    step grid is kept, so only round-off may differ);
  * without -hs_forward "outputs" still has the states but no "sensitivity".
"""
import argparse, math, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwd_common as c

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
args = ap.parse_args()
exe = os.path.join(os.path.abspath(args.build), "examples", "bouncing_ball")
g = 9.81


def closed(t, q0, e):
    t1 = math.sqrt(2 * q0 / g)
    if t < t1:
        return [q0 - g * t * t / 2, -g * t]
    V, s = e * g * t1, t - t1
    assert t < t1 * (1 + 2 * e), "closed form only up to the second impact"
    return [V * s - g * s * s / 2, V - g * s]


def closed_sens(t, q0, e, h=1e-6):
    cols = []
    for dq0, de in ((h, 0), (0, h)):
        a, b = closed(t, q0 + dq0, e + de), closed(t, q0 - dq0, e - de)
        cols.append([(x - y) / (2 * h) for x, y in zip(a, b)])
    return [[cols[j][i] for j in range(2)] for i in range(2)]  # n × np


times = [0.5, 1.0, 2.1]
base = ["-ts_type", "rk", "-ts_rk_type", "4", "-ts_dt", "1e-3"]
s = c.run(exe, base + ["-hs_forward", "-hs_output_times", ",".join(map(str, times))])
outs = s.get("outputs", [])
c.check(len(outs) == len(times), f"{len(outs)} outputs for {len(times)} times")
for o, t in zip(outs, times):
    ref = closed(t, 10.0, 0.8)
    err = max(c.rel(a, b) for a, b in zip(o["state"], ref))
    print(f"t = {o['time']}: state {o['state']} closed form {ref} rel {err:.2e}")
    c.check(abs(o["time"] - t) == 0 and err <= 1e-10, f"state at t = {t}: {o['state']} vs {ref}")
    S, R = o["sensitivity"], closed_sens(t, 10.0, 0.8)
    scale = max(abs(x) for row in R for x in row)
    err = max(abs(S[i][j] - R[i][j]) for i in range(2) for j in range(2)) / scale
    print(f"t = {t}: S {S} closed form {R} rel {err:.2e}")
    c.check(err <= 1e-7, f"sensitivity at t = {t}: {S} vs {R}")
plain = c.run(exe, base + ["-hs_forward"])
d = max(c.rel(a, b) for a, b in zip(s["final_state"], plain["final_state"]))
dS = max(abs(a - b) for ra, rb in zip(s["sensitivity_final"], plain["sensitivity_final"]) for a, b in zip(ra, rb))
print(f"final state / S(T) with vs without output times: {d:.2e} / {dS:.2e}")
c.check(d <= 1e-12 and dS <= 1e-9, f"output times changed the final result: {d:.3g}, {dS:.3g}")
v = c.run(exe, base + ["-hs_output_times", "0.5,2.1"])
c.check(len(v["outputs"]) == 2 and "state" in v["outputs"][1] and "sensitivity" not in v["outputs"][1], f"values-only outputs {v.get('outputs')}")
sys.exit(c.summary_line())
