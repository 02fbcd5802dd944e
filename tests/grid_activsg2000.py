#!/usr/bin/env python3
"""hybridsens-grid on ACTIVSg2000 (2000 buses, 3607 power-flow unknowns: the sparse start), with
-skip_unknown_models and -generic_machine gencls (98 generators without a machine record).

  grid_activsg2000.py --build B --source S [--mpiexec M]

Checks:
  * (its IEEEG1 governors cannot start at rest: refused by record, tests/bad_inputs/cases_grid.py)
  * without governors, a flat run (-no_fault, 10 s): no event, drift of every state <= 1e-8
    (relative to max(1, |u0|));
  * the default fault (bus 8160, off the step grid on [1.0025, 1.0825] s, T = 1.5 s), three
    costs (H8155 with the band 60 +- 0.01 Hz, coi_spread, voltage_dip): adjoint vs central
    differences <= 1e-6 (relative to the table's largest entry) for t_off, P8155, Vm8155, KA8155;
  * 2 ranks = 1 rank: objectives and adjoint gradient <= 1e-12 relative to the largest entry.
"""
import argparse, json, os, subprocess, tempfile

from wecc9_support import check, finish, relmax

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--source", required=True)
ap.add_argument("--mpiexec", default="mpiexec")
args = ap.parse_args()
tool = os.path.join(args.build, "src", "power", "hybridsens-grid")
G = os.path.join(args.source, "data", "grids")
CASE = [os.path.join(G, "ACTIVSg2000.raw"), os.path.join(G, "ACTIVSg2000.dyr"), "-skip_unknown_models", "-generic_machine", "gencls"]
FAULT = ["-governors", "0", "-t_on", "1.0025", "-t_off", "1.0825", "-ts_max_time", "1.5", "-freq_max", "60.01", "-freq_min", "59.99",
         "-grid_costs", "H8155,coi_spread,voltage_dip"]


def run(opts, np=1):
    with tempfile.TemporaryDirectory() as d:
        summary = os.path.join(d, "s.json")
        cmd = ([args.mpiexec, "-n", str(np)] if np > 1 else []) + [tool] + CASE + ["-hs_summary", summary] + opts
        subprocess.run(cmd, capture_output=True, text=True, check=True)
        return json.load(open(summary))


# ---- at rest ------------------------------------------------------------------------------------
flat = run(["-governors", "0", "-no_fault", "-ts_max_time", "10", "-hs_output_times", "0,10"])
u0, uT = flat["outputs"][0]["state"], flat["outputs"][-1]["state"]
drift = max(abs(a - b) / max(1.0, abs(a)) for a, b in zip(u0, uT))
check(len(flat["events"]) == 0 and drift <= 1e-8, f"no fault: at rest over 10 s, drift {drift:.1e} <= 1e-8 ({len(u0)} states)")

# ---- gradients through the fault ----------------------------------------------------------------
base = run(FAULT + ["-hs_adjoint"])
names, p = base["parameter_names"], base["parameters"]
grad = base["gradient"]["p"]
check(all(h > 0 for h in base["objective"]), f"the three costs see the fault: {', '.join(f'{h:.3g}' for h in base['objective'])}")
scale = max(abs(x) for row in grad for x in row)
worst = 0.0
for name in ["t_off", "P8155", "Vm8155", "KA8155"]:
    j = names.index(name)
    h = 1e-6 * max(abs(p[j]), 1.0)
    sp = run(FAULT + ["-" + name, repr(p[j] + h)])
    sm = run(FAULT + ["-" + name, repr(p[j] - h)])
    err = max(abs((a - b) / (2 * h) - row[j]) for a, b, row in zip(sp["objective"], sm["objective"], grad)) / scale
    worst = max(worst, err)
    print(f"    d/d{name}: adjoint vs central difference {err:.1e} (h = {h:.1e}; largest |dJ/d{name}| {max(abs(row[j]) for row in grad):.3g})")
check(worst <= 1e-6, f"adjoint vs central differences {worst:.1e} <= 1e-6 (t_off, P8155, Vm8155, KA8155)")

two = run(FAULT + ["-hs_adjoint"], np=2)
dobj = max(abs(a - b) for a, b in zip(two["objective"], base["objective"])) / max(abs(b) for b in base["objective"])
dg = relmax(two["gradient"]["p"], grad)
check(dobj <= 1e-12 and dg <= 1e-12, f"2 ranks = 1 rank: objectives {dobj:.1e}, adjoint gradient {dg:.1e} <= 1e-12")
finish()
