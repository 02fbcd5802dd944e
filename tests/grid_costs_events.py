#!/usr/bin/env python3
"""hybridsens-grid on data/grids/wecc9.raw/.dyr: the costs besides H_i (centre-of-inertia
rotor-angle spread, voltage-dip integral), the events file (bus faults, setpoint steps), the
sensitivity CSV and the trajectory CSV, and 1 rank against 2.

Checks:
  * the first run `CASE.raw CASE.dyr -hs_adjoint -hs_forward -hs_summary s.json` works, its JSON
    has the examples' summary keys, and every cost's adjoint gradient equals the forward one to
    <= 1e-12 relative (to the largest entry of the cost's row);
  * central differences of re-solves agree with the adjoint gradient to <= 1e-6 relative for
    P2, P3 (dispatch), t_off, t_on (fault times off the step grid), KA3 (moves the limiter hit) and
    Vm2, for coi_spread and voltage_dip (and H3);
  * the costs are what they claim: coi_spread and voltage_dip equal the trapezoidal rule (the
    quadrature of the Crank-Nicolson run) of sum_g w_g (delta_g - delta_COI)^2 and
    sum_b max(0, 0.9 - |V_b|)^2 over the trajectory CSV's rows, to <= 1e-9 relative;
    must-fail: equal inertia weights instead of H_g / sum H give a visibly different integral;
  * the sensitivity CSV holds the same numbers as the JSON summary (exactly, 17 digits);
  * events file: a second fault, a Vref and a Pref step and a line trip: adjoint = forward <= 1e-12,
    central differences <= 1e-6 for the second fault's t_off, both steps' sizes, the Vref step's
    time and the trip's time;
    the Vref step raises |V| of its bus; must-fail: without the event-time terms
    (-hs_test_drop_event_time_term) the fault-time gradient of voltage_dip is off by far more
    than 1e-6, without the reset terms (-hs_test_drop_reset_terms) the step sizes' gradients are;
  * 2 ranks (mpiexec -n 2) give the same objectives and gradients as 1 rank to <= 1e-12.
"""
import argparse, csv, json, math, os, shutil, subprocess, sys, tempfile

from grid_support import central_difference, check_central_differences, row_rel

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--source", required=True)
ap.add_argument("--mpiexec", default="mpiexec")
ap.add_argument("--ranks-only", action="store_true", help="only the first run's command at 1 and 2 ranks (the ctest grid_command_np2)")
args = ap.parse_args()
tool = os.path.join(args.build, "src", "power", "hybridsens-grid")
RAW = os.path.join(args.source, "data", "grids", "wecc9.raw")
DYR = os.path.join(args.source, "data", "grids", "wecc9.dyr")
# Fault times off the step grid (dt = 0.01): the computed costs are smooth in them there.
OFFGRID = ["-t_on", "1.0025", "-t_off", "1.1025"]
H = {1: 23.64, 2: 6.40, 3: 3.01}  # DYR inertias (the machines' MBASE is the system base)
failures = 0


def check(ok, msg):
    global failures
    print(("ok   " if ok else "FAIL ") + msg, flush=True)
    failures += not ok


def run(opts, files=(), np=1, tmp=None):
    """hybridsens-grid RAW DYR [files] opts; returns the JSON summary."""
    d = tmp or tempfile.mkdtemp()
    s = os.path.join(d, "s.json")
    cmd = ([args.mpiexec, "-n", str(np), "--oversubscribe"] if np > 1 else []) + [tool, RAW, DYR] + list(files) + ["-hs_summary", s, "-grid_progress", "0"] + opts
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout[-2000:], r.stderr[-3000:])
        raise SystemExit(f"FAIL: {' '.join(cmd)} exited {r.returncode}")
    out = json.load(open(s))
    out["stdout"] = r.stdout
    if tmp is None:
        shutil.rmtree(d)
    return out


def fd(opts, files, name, base, k, h):
    return central_difference(run, opts, files, name, base, k, h)


def check_fd(label, opts, files, s, costs, params, tol=1e-6, step=1e-6):
    check_central_differences(run, check, label, opts, files, s, costs, params, tol, step)


if args.ranks_only:  # the first run's command, mpiexec -n 2 against 1 rank
    one, two = run(["-hs_adjoint", "-hs_forward"]), run(["-hs_adjoint", "-hs_forward"], np=2)
    e_obj = row_rel(one["objective"], two["objective"])
    e_grad = max(row_rel(a, b) for key in ("gradient", "forward_gradient") for a, b in zip(one[key]["p"], two[key]["p"]) if max(abs(x) for x in a) > 0)
    e_u = row_rel(one["final_state"], two["final_state"])
    check(one["costs"] == two["costs"] and [e["guard"] for e in one["events"]] == [e["guard"] for e in two["events"]], "2 ranks: the same costs and events")
    check(max(e_obj, e_grad, e_u) <= 1e-12, f"mpiexec -n 2 = 1 rank: final state {e_u:.1e}, objectives {e_obj:.1e}, adjoint and forward gradients {e_grad:.1e} <= 1e-12")
    print("FAILED" if failures else "PASSED", f"({failures} failures)")
    sys.exit(1 if failures else 0)

# ---- the first run ---------------------------------------------------------------------------
tmp = tempfile.mkdtemp()
first = run(["-hs_adjoint", "-hs_forward", "-grid_csv", os.path.join(tmp, "g.csv"), "-grid_trajectory", os.path.join(tmp, "t.csv")] + OFFGRID, tmp=tmp)
keys = {"costs", "events", "final_state", "final_time", "gradient", "forward_gradient", "objective", "parameter_names", "parameters", "stats"}
check(keys <= set(first), f"first run: the JSON summary has the examples' keys ({', '.join(sorted(keys))})")
check(first["costs"] == ["H1", "H2", "H3", "coi_spread", "voltage_dip"], f"first run: costs {first['costs']}")
check("sensitivities d(cost)/d(parameter)" in first["stdout"] and "t_off" in first["stdout"], "first run: the sensitivity table (dispatch, clearing time) is printed")
worst = max(row_rel(a, f) for a, f in zip(first["gradient"]["p"], first["forward_gradient"]["p"]) if max(abs(x) for x in a) > 0)
check(worst <= 1e-12, f"first run: adjoint = forward for every cost to {worst:.1e} <= 1e-12")
check(min(first["objective"][3:]) > 0, f"coi_spread = {first['objective'][3]:.6g}, voltage_dip = {first['objective'][4]:.6g} (both > 0 with the fault)")

# ---- the costs recomputed from the trajectory CSV -------------------------------------------
rows = list(csv.DictReader(open(os.path.join(tmp, "t.csv"))))
check(len(rows) > 100 and float(rows[-1]["time"]) == first["final_time"], f"trajectory CSV: {len(rows)} rows up to t = {rows[-1]['time']}")


def trapezoid(f):
    total, prev = 0.0, None
    for r in rows:
        t, v = float(r["time"]), f(r)
        if prev is not None and r["event"] == "":  # a step: from the previous row (after any event) to its end
            total += 0.5 * (t - prev[0]) * (v + prev[1])
        prev = (t, v)
    return total


def spread(weights):
    def f(r):
        d = [float(r[f"delta{g}"]) for g in (1, 2, 3)]
        coi = sum(w * x for w, x in zip(weights, d))
        return sum(w * (x - coi) ** 2 for w, x in zip(weights, d))
    return f


w = [H[g] / sum(H.values()) for g in (1, 2, 3)]
coi = trapezoid(spread(w))
e = abs(coi - first["objective"][3]) / first["objective"][3]
check(e <= 1e-9, f"coi_spread = trapezoidal rule of sum w_g (delta_g - delta_COI)^2 (w = H_g / sum H) over the CSV: {e:.1e} <= 1e-9")
wrong = trapezoid(spread([1 / 3] * 3))
e = abs(wrong - first["objective"][3]) / first["objective"][3]
check(e > 1e-3, f"must-fail: with equal weights the integral differs by {e:.1e} (> 1e-3)")
dip = trapezoid(lambda r: sum(max(0.0, 0.9 - float(r[f"V{b}"])) ** 2 for b in range(1, 10)))
e = abs(dip - first["objective"][4]) / first["objective"][4]
check(e <= 1e-9, f"voltage_dip = trapezoidal rule of sum_b max(0, 0.9 - |V_b|)^2 over the CSV: {e:.1e} <= 1e-9")
running = float(rows[-1]["coi_spread"])
check(abs(running - first["objective"][3]) <= 1e-12 * first["objective"][3], "trajectory CSV: the last running coi_spread is the objective")

# ---- the sensitivity CSV = the JSON summary --------------------------------------------------
table = list(csv.DictReader(open(os.path.join(tmp, "g.csv"))))
same, count = True, 0
for r in table:
    k = first["costs"].index(r["cost"])
    grad = first["gradient" if r["method"] == "adjoint" else "forward_gradient"]["p"][k]
    for j, n in enumerate(first["parameter_names"]):
        if n in r:
            same = same and float(r[n]) == grad[j]
            count += 1
    same = same and float(r["value"]) == first["objective"][k]
check(same and len(table) == 10 and "Q2" not in table[0], f"-grid_csv: {len(table)} rows (5 costs x adjoint, forward), {count} entries equal to the JSON summary; no power-flow outputs (Q2)")
shutil.rmtree(tmp)

# ---- gradients against central differences -------------------------------------------------
check_fd("default fault", ["-hs_adjoint"] + OFFGRID, (), first, ["coi_spread", "voltage_dip", "H3"], ["P2", "P3", "t_off", "t_on", "KA3", "Vm2"])

# ---- an events file: a second fault, a Vref and a Pref step -----------------------------------
d = tempfile.mkdtemp()
events = os.path.join(d, "events.json")
json.dump({"events": [
    {"type": "bus_fault", "bus": 9, "t_on": 1.0025, "t_off": 1.1025},
    {"type": "bus_fault", "bus": 6, "t_on": 2.0075, "t_off": 2.0575, "r": 0.01},
    {"type": "setpoint_step", "bus": 2, "setpoint": "Vref", "time": 3.0035, "size": 0.03},
    {"type": "setpoint_step", "bus": 3, "setpoint": "Pref", "time": 3.5055, "size": 0.05},
    {"type": "line_trip", "from": 5, "to": 7, "time": 4.0045}]}, open(events, "w"))
ev = run(["-hs_adjoint", "-hs_forward", "-grid_trajectory", os.path.join(d, "t.csv")], [events], tmp=d)
names = ev["parameter_names"]
check(names[-7:] == ["fault2_t_on", "fault2_t_off", "step3_t", "step3_size", "step4_t", "step4_size", "trip5_t"] and "t_on" in names,
      f"events file: parameters t_on, t_off, {', '.join(names[-7:])}")
fired = [e["guard"] for e in ev["events"]]
check(all(n in fired for n in ("fault_on", "fault_off", "fault_on_2", "fault_off_2", "step_Vref2_3", "step_Pref3_4", "line_trip_5_7_5")),
      f"events file: all disturbances fired ({len(fired)} events)")
worst = max(row_rel(a, f) for a, f in zip(ev["gradient"]["p"], ev["forward_gradient"]["p"]) if max(abs(x) for x in a) > 0)
check(worst <= 1e-12, f"events file: adjoint = forward for every cost to {worst:.1e} <= 1e-12")
with_step = float(list(csv.DictReader(open(os.path.join(d, "t.csv"))))[-1]["V2"])
run(["-step3_size", "0", "-grid_trajectory", os.path.join(d, "t0.csv")], [events], tmp=d)
without = float(list(csv.DictReader(open(os.path.join(d, "t0.csv"))))[-1]["V2"])
check(with_step - without > 0.005, f"the Vref step of 0.03 at t = 3.0035 raises |V2| at T from {without:.5f} (size 0) to {with_step:.5f}")
shutil.rmtree(d)
d = tempfile.mkdtemp()
json.dump({"events": [
    {"type": "bus_fault", "bus": 9, "t_on": 1.0025, "t_off": 1.1025},
    {"type": "bus_fault", "bus": 6, "t_on": 2.0075, "t_off": 2.0575, "r": 0.01},
    {"type": "setpoint_step", "bus": 2, "setpoint": "Vref", "time": 3.0035, "size": 0.03},
    {"type": "setpoint_step", "bus": 3, "setpoint": "Pref", "time": 3.5055, "size": 0.05},
    {"type": "line_trip", "from": 5, "to": 7, "time": 4.0045}]}, open(os.path.join(d, "events.json"), "w"))
files = [os.path.join(d, "events.json")]
check_fd("events file", ["-hs_adjoint"], files, ev, ["coi_spread", "voltage_dip", "H3"], ["fault2_t_off", "step3_size", "step3_t", "step4_size", "trip5_t"])

# ---- must-fail: the jump terms ----------------------------------------------------------------
k = ev["costs"].index("voltage_dip")
j = names.index("fault2_t_off")
noev = run(["-hs_adjoint", "-hs_test_drop_event_time_term"], files)
g_fd = fd(["-hs_adjoint"], files, "fault2_t_off", ev["parameters"][j], k, 1e-6)
e = abs(noev["gradient"]["p"][k][j] - g_fd) / abs(g_fd)
check(e > 1e-3, f"must-fail: without the event-time terms dvoltage_dip/dfault2_t_off is off by {e:.1e} (> 1e-3)")
noreset = run(["-hs_adjoint", "-hs_test_drop_reset_terms"], files)
k = ev["costs"].index("coi_spread")
j = names.index("step4_size")
e = abs(noreset["gradient"]["p"][k][j] - ev["gradient"]["p"][k][j]) / abs(ev["gradient"]["p"][k][j])
check(e > 1e-3, f"must-fail: without the reset terms dcoi_spread/dstep4_size is off by {e:.1e} (> 1e-3)")

# ---- 2 ranks = 1 rank --------------------------------------------------------------------------
two = run(["-hs_adjoint", "-hs_forward"], files, np=2)
e_obj = row_rel(ev["objective"], two["objective"])
e_grad = max(row_rel(a, b) for a, b in zip(ev["gradient"]["p"], two["gradient"]["p"]) if max(abs(x) for x in a) > 0)
check(e_obj <= 1e-12 and e_grad <= 1e-12, f"2 ranks = 1 rank: objectives {e_obj:.1e}, adjoint gradients {e_grad:.1e} <= 1e-12")
shutil.rmtree(d)

print("FAILED" if failures else "PASSED", f"({failures} failures)")
sys.exit(1 if failures else 0)
