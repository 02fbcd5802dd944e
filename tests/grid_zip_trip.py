#!/usr/bin/env python3
"""hybridsens-grid on data/grids/wecc9.raw/.dyr: ZIP loads (-load_model zip) and the
generator_trip event, exact through their events.

Checks:
  * ZIP loads (fractions 0.2,0.3,0.5 of P and 0.1,0.2,0.7 of Q): without a fault the state stays
    at the start (drift <= 1e-8 over 10 s, no event);
  * -load_zip_p 1,0,0 -load_zip_q 1,0,0 is the constant-impedance model: the same objectives and
    gradients as the default -load_model z (<= 1e-13 relative);
  * through the default fault (off the step grid) the loads pass their break voltages as a state
    event and at the fault's switches (the switch converts every part, the first check restores
    those above their break, the second and third change nothing);
    adjoint = forward <= 1e-12; adjoint vs central differences <= 1e-6 for t_off, t_on, P2 and Vm2
    (Vm2 moves every load's power-flow voltage, hence its constant-current part; -load_i_break
    0.53 makes bus 5's constant-current part cross its break during the fault);
    must-fail: the constant-impedance model's gradient is not the ZIP one (> 1e-2 off);
  * without a network switch (a Vref step down, breaks 0.99 and 0.98) the load voltages cross
    their breaks both ways as state events: adjoint = forward <= 1e-12, central differences
    <= 1e-6 for the step's size and P2; the crossings' event-time terms are <= 1e-5 of the
    gradient (the load current is continuous across a break, so they vanish but for the
    location tolerance);
  * a generator trip (generator 3 after the fault, ZIP loads): adjoint = forward <= 1e-12;
    central differences <= 1e-6 for the trip time gentrip2_t, P2 and t_off; the tripped machine's
    states stay frozen and its H3 stops growing; must-fail: without the event-time terms
    (-hs_test_drop_event_time_term) d/d(gentrip2_t) is off by far more than 1e-6;
  * 2 ranks (mpiexec -n 2) give the trip run's objectives and gradients to <= 1e-12;
  * ieee39 with ZIP loads, a fault and a generator trip: the second load-mode check after the trip
    restores parts the first left converted (one check would not do), the third changes nothing;
    adjoint = forward <= 1e-12.
"""
import argparse, csv, json, os, shutil, subprocess, sys, tempfile

from grid_support import check_central_differences, row_rel

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--source", required=True)
ap.add_argument("--mpiexec", default="mpiexec")
args = ap.parse_args()
tool = os.path.join(args.build, "src", "power", "hybridsens-grid")
RAW = os.path.join(args.source, "data", "grids", "wecc9.raw")
DYR = os.path.join(args.source, "data", "grids", "wecc9.dyr")
ZIP = ["-load_model", "zip", "-load_zip_p", "0.2,0.3,0.5", "-load_zip_q", "0.1,0.2,0.7"]
OFFGRID = ["-t_on", "1.0025", "-t_off", "1.1025"]
failures = 0
tmp = tempfile.mkdtemp()


def check(ok, msg):
    global failures
    print(("ok   " if ok else "FAIL ") + msg, flush=True)
    failures += not ok


def run(opts, files=(), np=1, expect_ok=True):
    """hybridsens-grid RAW DYR [files] opts; returns the JSON summary (or the failed run's output)."""
    s = os.path.join(tmp, "s.json")
    if os.path.exists(s):
        os.remove(s)
    cmd = ([args.mpiexec, "-n", str(np), "--oversubscribe"] if np > 1 else []) + [tool, RAW, DYR] + list(files) + ["-hs_summary", s, "-grid_progress", "0"] + opts
    r = subprocess.run(cmd, capture_output=True, text=True)
    if not expect_ok:
        return r
    if r.returncode != 0:
        print(r.stdout[-2000:], r.stderr[-3000:])
        raise SystemExit(f"FAIL: {' '.join(cmd)} exited {r.returncode}")
    out = json.load(open(s))
    out["stdout"] = r.stdout
    return out


def grad_rel(s, t, key="gradient"):
    return max(row_rel(a, b) for a, b in zip(s[key]["p"], t[key]["p"]) if max(abs(x) for x in a) > 0)


def adjoint_forward(s):
    return max(row_rel(a, f) for a, f in zip(s["gradient"]["p"], s["forward_gradient"]["p"]) if max(abs(x) for x in a) > 0)


def check_fd(label, opts, files, s, costs, params, tol=1e-6, step=1e-6):
    check_central_differences(run, check, label, opts, files, s, costs, params, tol, step)


# ---- ZIP loads at rest ------------------------------------------------------------------------
s = run(ZIP + ["-no_fault", "-ts_max_time", "10", "-hs_output_times", "0,10"])
u0, uT = s["outputs"][0]["state"], s["outputs"][-1]["state"]
drift = max(abs(a - b) / max(1.0, abs(a)) for a, b in zip(u0, uT))
check(not s["events"] and drift <= 1e-8, f"ZIP loads, no fault: at rest over 10 s, drift {drift:.1e} <= 1e-8")

# ---- ZIP with only the impedance part = the constant-impedance model ---------------------------
z = run(["-hs_adjoint"] + OFFGRID)
z100 = run(["-hs_adjoint", "-load_model", "zip", "-load_zip_p", "1,0,0", "-load_zip_q", "1,0,0"] + OFFGRID)
e = max(row_rel(z["objective"], z100["objective"]), grad_rel(z, z100))
check(e <= 1e-13, f"-load_zip_p 1,0,0 -load_zip_q 1,0,0 = -load_model z: objectives and gradients {e:.1e} <= 1e-13")

# ---- ZIP through a fault ------------------------------------------------------------------------
ZIPF = ZIP + OFFGRID + ["-load_i_break", "0.53"]  # bus 5's |V| falls through 0.53 during the fault
zf = run(["-hs_adjoint", "-hs_forward", "-grid_trajectory", os.path.join(tmp, "z.csv")] + ZIPF)
fired = [e["guard"] for e in zf["events"]]
marks = {r["event"].split(";")[0]: r["event"].split(";")[1:] for r in csv.DictReader(open(os.path.join(tmp, "z.csv"))) if r["event"]}
check(len(marks["fault_on"]) == 6 and marks["load_modes1_on"] == ["load5_constI_above_break"] and marks["load_modes2_on"] == marks["load_modes3_on"] == [],
      f"fault on: every part converted, the first check restores bus 5's constant current (|V5| 0.545 > 0.53): {marks['load_modes1_on']}, the others change nothing")
breaks = [g for g in fired if g.startswith("load") and "break" in g]
check(any(g.startswith("load_modes") for g in fired) and breaks,
      f"ZIP through the fault: load-mode checks at the switches and {len(breaks)} break crossings as state events ({', '.join(sorted(set(breaks)))})")
e = adjoint_forward(zf)
check(e <= 1e-12, f"ZIP through the fault: adjoint = forward for every cost to {e:.1e} <= 1e-12")
check_fd("ZIP fault", ["-hs_adjoint"] + ZIPF, (), zf, ["voltage_dip", "coi_spread", "H3"], ["t_off", "t_on", "P2", "Vm2"])
names = zf["parameter_names"]
k, j = zf["costs"].index("voltage_dip"), names.index("Vm2")
off = abs(z["gradient"]["p"][k][j] - zf["gradient"]["p"][k][j]) / abs(zf["gradient"]["p"][k][j])
check(off > 1e-2, f"must-fail: the constant-impedance model's dvoltage_dip/dVm2 is {off:.1e} off the ZIP one (> 1e-2)")

# ---- gradual crossings of the breaks (no network switch) ----------------------------------------
# A Vref step down at generator 2 with breaks just below the start's voltages: the load buses'
# |V| drift through their breaks and back, each a state event.
vstep = os.path.join(tmp, "vstep.json")
json.dump({"events": [{"type": "setpoint_step", "bus": 2, "setpoint": "Vref", "time": 1.0035, "size": -0.08}]}, open(vstep, "w"))
GRADUAL = ["-hs_adjoint", "-hs_forward"] + ZIP + ["-load_pq_break", "0.99", "-load_i_break", "0.98"]
gr = run(GRADUAL, [vstep])
crossings = [e["guard"] for e in gr["events"] if "break" in e["guard"]]
check(len(crossings) >= 5 and any("above" in g for g in crossings), f"Vref step: {len(crossings)} break crossings as state events, below and above ({', '.join(crossings)})")
e = adjoint_forward(gr)
check(e <= 1e-12, f"Vref step with crossings: adjoint = forward to {e:.1e} <= 1e-12")
check_fd("Vref step with crossings", GRADUAL[1:], [vstep], gr, ["coi_spread"], ["step1_size", "P2"])
# The load current is continuous across a break, so a crossing's event-time term is (nearly) zero:
# dropping every event-time term leaves d/d(step1_size) (whose time event has no such term) almost unchanged.
drop = run(GRADUAL[:1] + GRADUAL[2:] + ["-hs_test_drop_event_time_term"], [vstep])
k, j = gr["costs"].index("coi_spread"), gr["parameter_names"].index("step1_size")
e = abs(drop["gradient"]["p"][k][j] - gr["gradient"]["p"][k][j]) / abs(gr["gradient"]["p"][k][j])
check(e <= 1e-5, f"the crossings' event-time terms are {e:.1e} of dcoi_spread/dstep1_size (<= 1e-5: the characteristic is continuous)")

# ---- a generator trip ---------------------------------------------------------------------------
events = os.path.join(tmp, "events.json")
json.dump({"events": [
    {"type": "bus_fault", "bus": 9, "t_on": 1.0025, "t_off": 1.1025},
    {"type": "generator_trip", "bus": 3, "time": 2.0035}]}, open(events, "w"))
TRIP = ["-hs_adjoint", "-hs_forward"] + ZIP
traj = os.path.join(tmp, "t.csv")
tr = run(TRIP + ["-grid_trajectory", traj], [events])
names = tr["parameter_names"]
check("gentrip2_t" in names and "generator_trip_3_2" in [e["guard"] for e in tr["events"]], "generator trip: parameter gentrip2_t, event generator_trip_3_2")
e = adjoint_forward(tr)
check(e <= 1e-12, f"generator trip: adjoint = forward for every cost to {e:.1e} <= 1e-12")
after = [r for r in csv.DictReader(open(traj)) if float(r["time"]) > 2.0035]
frozen = all(r[c] == after[0][c] for r in after for c in ("f3", "delta3", "VR3", "H3"))
moving = len({r["delta1"] for r in after}) > 100
check(frozen and moving, f"generator trip: f3, delta3, VR3 and H3 stay at their values after the trip over {len(after)} rows, delta1 moves")
check_fd("generator trip", ["-hs_adjoint"] + ZIP, [events], tr, ["coi_spread", "voltage_dip", "H1"], ["gentrip2_t", "P2", "t_off"])
drop = run(["-hs_adjoint", "-hs_test_drop_event_time_term"] + ZIP, [events])
j = names.index("gentrip2_t")
worst = max(abs(drop["gradient"]["p"][k][j] - tr["gradient"]["p"][k][j]) / max(abs(x) for x in tr["gradient"]["p"][k]) for k in range(len(tr["costs"])))
check(worst > 1e-3, f"must-fail: without the event-time terms d/d(gentrip2_t) is off by {worst:.1e} (> 1e-3)")
two = run(TRIP, [events], np=2)
e = max(row_rel(tr["objective"], two["objective"]), grad_rel(tr, two), grad_rel(tr, two, "forward_gradient"))
check(e <= 1e-12, f"generator trip: mpiexec -n 2 = 1 rank, objectives and gradients {e:.1e} <= 1e-12")

# ---- ieee39: a trip where the second mode check is needed ------------------------------------------
R39, D39 = (os.path.join(args.source, "data", "grids", "ieee39." + x) for x in ("raw", "dyr"))
e39 = os.path.join(tmp, "e39.json")
json.dump({"events": [{"type": "bus_fault", "bus": 16, "t_on": 1.0025, "t_off": 1.0825}, {"type": "generator_trip", "bus": 32, "time": 1.5035}]},
          open(e39, "w"))
traj = os.path.join(tmp, "t39.csv")
r = subprocess.run([tool, R39, D39, e39, "-hs_summary", os.path.join(tmp, "s39.json"), "-grid_progress", "0", "-grid_trajectory", traj, "-ts_max_time", "3",
                    "-hs_adjoint", "-hs_forward", "-load_model", "zip", "-load_zip_p", "0.3,0.3,0.4", "-load_zip_q", "0.2,0.2,0.6"], capture_output=True, text=True)
s39 = json.load(open(os.path.join(tmp, "s39.json"))) if r.returncode == 0 else None
marks = {r["event"].split(";")[0]: r["event"].split(";")[1:] for r in csv.DictReader(open(traj)) if r["event"]} if s39 else {}
second, third = marks.get("load_modes2_gentrip_2"), marks.get("load_modes3_gentrip_2")
check(s39 is not None and second and third == [] and adjoint_forward(s39) <= 1e-12,
      f"ieee39, a generator trip with ZIP loads: the second mode check restores {second} (the first left them below), the third none; "
      f"adjoint = forward {adjoint_forward(s39) if s39 else float('nan'):.1e} <= 1e-12")

shutil.rmtree(tmp)
print("FAILED" if failures else "PASSED", f"({failures} failures)")
sys.exit(1 if failures else 0)
