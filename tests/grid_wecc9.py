#!/usr/bin/env python3
"""hybridsens-grid on data/grids/wecc9.raw/.dyr against examples/wecc9 (the same model written by
hand from the same data): the case builder, the RAW/DYR mapping and the case power flow must
reproduce the example.

Checks:
  * without governors (-governors 0 against the example's default) and with them (the DYR's
    TGOV1 against the example's -governors with R_g = S_g/100 MVA * R_DYR, the same droop on the
    system base): the same final state, the same events at the same times, the same objectives
    H_1..H_3 and the same adjoint and forward gradients for the parameters both expose (P, t_on,
    t_off, KA, and the |V| of the slack and PV buses), each to <= 1e-10 relative (the DYR's
    printed digits, e.g. the exciter saturation points, leave differences of ~1e-11);
  * must-fail: a temporary copy of the DYR with one value changed (H of generator 2, 6.4 -> 6.41)
    breaks the agreement of the final state and the objective by far more than 1e-10;
  * flat start: with -no_fault (the fault's times put beyond the horizon) the state stays at the power-flow
    start: drift <= 1e-8 over 10 s, and the start solves the DAE;
  * refusal: a GENROU record with only one subtransient time constant (T''do > 0, T''qo = 0)
    is refused naming the record's file:line;
  * GENCLS (generator 3 as a classical machine, no exciter): at rest without a fault, E' constant
    through a fault, and -hs_check_gradient passes (adjoint = forward, FD, Taylor order 2);
  * user costs from named quantities (-grid_terminal_cost / -grid_integral_cost against the
    example's -wecc9_terminal_cost / -wecc9_integral_cost: one expression parser and cost, each
    command's own names on its own model): the same
    costs and adjoint and forward gradients to <= 1e-10 relative to each cost's largest common
    entry (measured 3.1e-11), adjoint = forward <= 1e-12; the costs -grid_costs chooses come first.
"""
import argparse, json, os, re, subprocess, sys, tempfile

import wecc9_support as support
from wecc9_support import check, finish

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--source", required=True)
args = ap.parse_args()
example = os.path.join(args.build, "examples", "wecc9")
tool = os.path.join(args.build, "src", "power", "hybridsens-grid")
RAW = os.path.join(args.source, "data", "grids", "wecc9.raw")
DYR = os.path.join(args.source, "data", "grids", "wecc9.dyr")
FAULT = ["-fault_bus", "9", "-t_on", "1.0", "-t_off", "1.2", "-ts_max_time", "5"]
BOTH = ["-hs_forward", "-hs_adjoint"]
# Machine ratings (MVA) of the example's governors and the DYR's TGOV1 droops on MBASE = 100 MVA.
RATING = [247.5, 192.0, 128.0]
with open(DYR) as f:
    R_DYR = [float(l.split()[3]) for l in f if "'TGOV1'" in l]


def run_tool(opts, dyr=DYR):
    """hybridsens-grid RAW DYR opts (the case files come first) with its JSON summary."""
    with tempfile.TemporaryDirectory() as d:
        summary = os.path.join(d, "s.json")
        subprocess.run([tool, RAW, dyr, "-hs_summary", summary] + opts, capture_output=True, text=True, check=True)
        return json.load(open(summary))


def run_example(opts):
    return support.run(example, opts)


def rel(a, b):
    scale = max(abs(x) for x in a)
    return max(abs(x - y) for x, y in zip(a, b)) / scale


def compare(label, ex, gr):
    check(ex["parameter_names"] == gr["parameter_names"], f"{label}: the same parameters ({len(ex['parameter_names'])})")
    d = rel(ex["final_state"], gr["final_state"]) if len(ex["final_state"]) == len(gr["final_state"]) else float("inf")
    check(d <= 1e-10, f"{label}: final state (all {len(ex['final_state'])} entries) agrees to {d:.1e} <= 1e-10")
    ev = [(e["guard"], e["time"]) for e in ex["events"]]
    eg = [(e["guard"], e["time"]) for e in gr["events"]]
    same = [a[0] for a in ev] == [b[0] for b in eg]
    dt = max(abs(a[1] - b[1]) / max(1.0, abs(a[1])) for a, b in zip(ev, eg)) if same else float("inf")
    check(same and dt <= 1e-10, f"{label}: the same {len(ev)} events ({', '.join(a[0] for a in ev)}), times agree to {dt:.1e}")
    do = rel(ex["objective"], gr["objective"])
    check(do <= 1e-10, f"{label}: objectives H_1..H_3 = {', '.join(f'{x:.6f}' for x in gr['objective'])} agree to {do:.1e}")
    names = ex["parameter_names"]
    common = ["P2", "P3", "t_on", "t_off", "KA1", "KA2", "KA3", "Vm1", "Vm2", "Vm3"]
    for key in ("gradient", "forward_gradient"):
        worst = 0.0
        for n in common:
            i = names.index(n)
            worst = max(worst, rel([r[i] for r in ex[key]["p"]], [r[i] for r in gr[key]["p"]]))
        check(worst <= 1e-10, f"{label}: {key.replace('_', ' ')} d(H_1..H_3)/d({', '.join(common)}) agree to {worst:.1e} (relative to each column)")
    return d, do


# ---- without governors: the example's default model ------------------------------------------
ex = run_example(FAULT + BOTH)
gr = run_tool(FAULT + BOTH + ["-governors", "0"])
compare("no governors", ex, gr)
check(any(e["guard"] == "VR3_hits_max" for e in gr["events"]), "the fault makes VR3 hit its limit (an event of the comparison)")

# ---- with the DYR's TGOV1 governors ----------------------------------------------------------
droops = []
for k, (s, r) in enumerate(zip(RATING, R_DYR)):
    droops += [f"-R{k + 1}", repr(s / 100.0 * r)]
exg = run_example(FAULT + BOTH + ["-governors"] + droops)
grg = run_tool(FAULT + BOTH)
compare("TGOV1 governors", exg, grg)

# ---- must-fail: one DYR value changed ------------------------------------------------------
with tempfile.TemporaryDirectory() as d:
    text = open(DYR).read()
    changed = text.replace("2 'GENROU' 1 6.0000 0.0 0.5350 0.0 6.4000", "2 'GENROU' 1 6.0000 0.0 0.5350 0.0 6.4100")
    check(changed != text, "must-fail: the DYR edit applies (H of generator 2: 6.4 -> 6.41)")
    bad = os.path.join(d, "wecc9.dyr")
    open(bad, "w").write(changed)
    gb = run_tool(FAULT + ["-governors", "0"], dyr=bad)
    db, dob = rel(ex["final_state"], gb["final_state"]), rel(ex["objective"], gb["objective"])
    check(db > 1e-6 and dob > 1e-6, f"must-fail: with H2 = 6.41 the final state differs by {db:.1e}, the objective by {dob:.1e} (> 1e-6: the comparison detects it)")

    # ---- refusal: half a subtransient GENROU (T''do > 0, T''qo = 0) ---------------------------
    sub = os.path.join(d, "sub.dyr")
    open(sub, "w").write(text.replace("1 'GENROU' 1 8.9600 0.0 ", "1 'GENROU' 1 8.9600 0.03 "))
    r = subprocess.run([tool, RAW, sub], capture_output=True, text=True)
    check(r.returncode != 0 and re.search(r"sub\.dyr:1: GENROU at bus 1 .*subtransient", r.stdout + r.stderr) is not None,
          "a GENROU record with T''do > 0, T''qo = 0 is refused naming sub.dyr:1 and the subtransient time constants")

# ---- flat start: no fault inside the horizon ---------------------------------------------------
flat = run_tool(["-no_fault", "-ts_max_time", "10", "-hs_output_times", "0,10"])
u0, uT = flat["outputs"][0]["state"], flat["outputs"][-1]["state"]
drift = max(abs(a - b) / max(1.0, abs(a)) for a, b in zip(u0, uT))
check(len(flat["events"]) == 0 and drift <= 1e-8, f"no fault: the state stays at the power-flow start over 10 s: drift {drift:.1e} <= 1e-8 ({len(u0)} states)")
check(flat["costs"][-1] == "voltage_dip" and max(flat["objective"][:3]) == 0.0 and flat["objective"][-1] == 0.0, "no fault: every H_i and the voltage-dip integral are 0")

# ---- GENCLS: generator 3 as a classical machine (no exciter) ---------------------------------
with tempfile.TemporaryDirectory() as d:
    lines = [l for l in open(DYR).read().splitlines() if not l.startswith(("3 'GENROU'", "3 'IEEET1'"))]
    cls = os.path.join(d, "cls.dyr")
    open(cls, "w").write("\n".join(lines + ["3 'GENCLS' 1 3.0100 0.6020 /"]) + "\n")
    flat = run_tool(["-no_fault", "-ts_max_time", "10", "-hs_output_times", "0,10"], dyr=cls)
    u0, uT = flat["outputs"][0]["state"], flat["outputs"][-1]["state"]
    drift = max(abs(a - b) / max(1.0, abs(a)) for a, b in zip(u0, uT))
    check(drift <= 1e-8, f"GENCLS at bus 3, no fault: at rest over 10 s: drift {drift:.1e} <= 1e-8")
    opts = ["-t_on", "1.0025", "-t_off", "1.2025", "-freq_max", "60.2", "-freq_min", "59.8", "-hs_output_times", "0,5"]
    r = subprocess.run([tool, RAW, cls, "-hs_summary", os.path.join(d, "s.json")] + opts + BOTH + ["-hs_check_gradient"], capture_output=True, text=True)
    m = re.search(r"adjoint vs forward ([0-9.e+-]+) .*adjoint vs FD ([0-9.e+-]+) .*Taylor order ([0-9.]+): PASSED", r.stdout)
    check(r.returncode == 0 and m is not None,
          "GENCLS with a fault: -hs_check_gradient passes" + (f" (adjoint vs forward {m.group(1)}, vs FD {m.group(2)}, Taylor order {m.group(3)})" if m else ""))
    s = json.load(open(os.path.join(d, "s.json")))
    e0, e5 = s["outputs"][0]["state"][18:20], s["outputs"][-1]["state"][18:20]
    check(e0 == e5 and min(s["objective"]) > 0, f"GENCLS: E'q, E'd of the classical machine stay at {e0[0]:.6f}, {e0[1]:.6f} through the fault; every H_i > 0")

# ---- user costs from named quantities, against the example's own ones ---------------------------
TERMINAL, INTEGRAL = "delta2-delta1,VR3,0.5*dw1+0.5*dw2", "dw3,Vm9-1"
exu = run_example(FAULT + BOTH + ["-cost_generators", "0", "-wecc9_terminal_cost", TERMINAL, "-wecc9_integral_cost", INTEGRAL])
gru = run_tool(FAULT + BOTH + ["-governors", "0", "-grid_costs", "H1", "-grid_terminal_cost", TERMINAL, "-grid_integral_cost", INTEGRAL])
check(gru["costs"][0] == "H1" and gru["costs"][1:] == exu["costs"], f"user costs: {', '.join(gru['costs'])} (H1 chosen first, then the expressions)")
worst_value = max(abs(a - b) / abs(b) for a, b in zip(gru["objective"][1:], exu["objective"]))
check(worst_value <= 1e-10, f"user costs: values agree with the example's to {worst_value:.1e} <= 1e-10")
gnames, enames = gru["parameter_names"], exu["parameter_names"]
common = [n for n in enames if n in gnames]
for key in ("gradient", "forward_gradient"):
    worst = 0.0
    for k in range(len(exu["costs"])):
        e = [exu[key]["p"][k][enames.index(n)] for n in common]
        g = [gru[key]["p"][k + 1][gnames.index(n)] for n in common]
        worst = max(worst, rel(e, g))
    check(worst <= 1e-10, f"user costs: {key.replace('_', ' ')} over the {len(common)} common parameters agree to {worst:.1e} <= 1e-10")
fa = max(rel(a, f) for a, f in zip(gru["gradient"]["p"], gru["forward_gradient"]["p"]))
check(fa <= 1e-12, f"user costs: adjoint = forward {fa:.1e} <= 1e-12")

finish()
