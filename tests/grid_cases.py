#!/usr/bin/env python3
"""hybridsens-grid on a shipped case with dynamics (data/grids/ieee39, ieee118): at rest, and exact
gradients through a fault and limiter events.

  grid_cases.py --build B --source S --case ieee39|ieee118 [--mpiexec M]

Checks:
  * flat run (-no_fault, 10 s): no event, drift of every state <= 1e-8 (relative to max(1, |u0|));
  * a three-phase fault (bus and times per case, off the step grid; frequency band +-0.1 Hz so
    that at least 5 H_i are live costs: all 10 of ieee39, 6 of 54 of ieee118) with exciter limiter events: adjoint = forward <= 1e-12
    relative over the whole gradient table;
  * adjoint vs central differences <= 1e-6 (relative to the table's largest entry) for a sample
    of parameters: t_off, a dispatch P, a PV voltage and the exciter gain KA of a generator whose
    limiter hit moves with it (asserted: the hit time differs between the two FD runs);
  * must-fail: without the event-time terms (-hs_test_drop_event_time_term) the gradient w.r.t.
    that gain and t_off is off by > 1e-3;
  * 2 ranks = 1 rank: objectives and adjoint gradient <= 1e-12 relative to the largest entry.
"""
import argparse, json, os, subprocess, tempfile

import wecc9_support as support
from wecc9_support import check, finish, relmax

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--source", required=True)
ap.add_argument("--case", required=True, choices=["ieee39", "ieee118"])
ap.add_argument("--mpiexec", default="mpiexec")
args = ap.parse_args()
tool = os.path.join(args.build, "src", "power", "hybridsens-grid")
RAW = os.path.join(args.source, "data", "grids", args.case + ".raw")
DYR = os.path.join(args.source, "data", "grids", args.case + ".dyr")
# fault bus, the gain whose limiter hit the FD must move (its event), and the other sampled parameters
SCENARIO = {
    "ieee39": ("16", "KA35", "VR35_hits_max", ["P32", "Vm33"]),
    "ieee118": ("77", "KA80", "VR80_hits_max", ["P80", "Vm77"]),
}[args.case]
FAULT = ["-fault_bus", SCENARIO[0], "-t_on", "1.0025", "-t_off", "1.0825", "-ts_max_time", "3", "-freq_max", "60.1", "-freq_min", "59.9"]


def run(opts, np=1):
    with tempfile.TemporaryDirectory() as d:
        summary = os.path.join(d, "s.json")
        cmd = ([args.mpiexec, "-n", str(np)] if np > 1 else []) + [tool, RAW, DYR, "-hs_summary", summary] + opts
        subprocess.run(cmd, capture_output=True, text=True, check=True)
        return json.load(open(summary))


# ---- at rest ------------------------------------------------------------------------------------
flat = run(["-no_fault", "-ts_max_time", "10", "-hs_output_times", "0,10"])
u0, uT = flat["outputs"][0]["state"], flat["outputs"][-1]["state"]
drift = max(abs(a - b) / max(1.0, abs(a)) for a, b in zip(u0, uT))
check(len(flat["events"]) == 0 and drift <= 1e-8, f"{args.case}, no fault: at rest over 10 s, drift {drift:.1e} <= 1e-8 ({len(u0)} states)")

# ---- gradients through the fault and the limiter events ------------------------------------------
base = run(FAULT + ["-hs_adjoint", "-hs_forward"])
names, p = base["parameter_names"], base["parameters"]
grad = base["gradient"]["p"]
guards = [e["guard"] for e in base["events"]]
print(f"  {len(names)} parameters, {len(grad)} costs, events: {', '.join(guards)}")
live = sum(1 for h in base["objective"] if h > 0)
# at least 5 costs non-zero, so that the gradient checks below are not about zeros (measured: all 10
# of the 39-bus case, 6 of 54 on the 118-bus case, whose far generators stay within the band)
check(live >= 5, f"{live} of {len(grad)} H_i > 0 (up to {max(base['objective']):.3g}): the costs see the fault")
check(SCENARIO[2] in guards, f"the fault makes {SCENARIO[2].split('_')[0]} hit its limit")
af = relmax(grad, base["forward_gradient"]["p"])
check(af <= 1e-12, f"adjoint = forward over {len(grad)} x {len(names)}: {af:.1e} <= 1e-12")

scale = max(abs(x) for row in grad for x in row)
worst = 0.0
for name in ["t_off", SCENARIO[1]] + SCENARIO[3]:
    j = names.index(name)
    h = 1e-6 * max(abs(p[j]), 1.0)
    pp, pm = list(p), list(p)
    pp[j] += h
    pm[j] -= h
    sp = run(FAULT + ["-" + name, repr(pp[j])])
    sm = run(FAULT + ["-" + name, repr(pm[j])])
    err = max(abs((a - b) / (2 * h) - row[j]) for a, b, row in zip(sp["objective"], sm["objective"], grad)) / scale
    worst = max(worst, err)
    print(f"    d/d{name}: adjoint vs central difference {err:.1e} (h = {h:.1e})")
    if name == SCENARIO[1]:
        tp = [e["time"] for e in sp["events"] if e["guard"] == SCENARIO[2]]
        tm = [e["time"] for e in sm["events"] if e["guard"] == SCENARIO[2]]
        check(len(tp) == len(tm) >= 1 and tp[0] != tm[0], f"{name} moves {SCENARIO[2]} ({tm[0]:.15f} -> {tp[0]:.15f})")
check(worst <= 1e-6, f"adjoint vs central differences {worst:.1e} <= 1e-6 (t_off, {', '.join([SCENARIO[1]] + SCENARIO[3])})")

bad = run(FAULT + ["-hs_adjoint", "-hs_test_drop_event_time_term"])["gradient"]["p"]
for name in ("t_off", SCENARIO[1]):
    j = names.index(name)
    col = max(abs(row[j]) for row in grad)
    wrong = max(abs(a[j] - b[j]) for a, b in zip(grad, bad)) / col
    check(wrong > 1e-3, f"must-fail: without the event-time terms d(H)/d{name} is off by {wrong:.2g} > 1e-3")

two = run(FAULT + ["-hs_adjoint"], np=2)
# relative to the largest objective, as the gradient table is to its largest entry (a small H_i
# is a difference f - f+ integrated: its own relative round-off is larger)
dobj = max(abs(a - b) for a, b in zip(two["objective"], base["objective"])) / max(abs(b) for b in base["objective"])
dg = relmax(two["gradient"]["p"], grad)
check(dobj <= 1e-12 and dg <= 1e-12, f"2 ranks = 1 rank: objectives {dobj:.1e}, adjoint gradient {dg:.1e} <= 1e-12")
finish()
