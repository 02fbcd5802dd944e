#!/usr/bin/env python3
"""The dynamic models of hybridsens::power::grid::CaseGrid on the 9-bus network (data/grids/wecc9.raw)
with a DYR written here: generator 1 a subtransient GENROU with saturation, an EXDC1 (TR, TB, TC > 0,
quadratic saturation) and a TGOV1; generator 2 a GENSAL with saturation and a SEXS; generator 3 a
two-axis GENROU with an IEEET1 whose KE = 0 (PSS/E's rule: KE = -Sat(Efd0)/Efd0, VR starts at 0).

Checks:
  * the start is an equilibrium: the first Newton residual of the first step <= 1e-12, and
    without a fault the state stays at the start (drift <= 1e-8 over 10 s, no event);
  * the start follows the models: GENROU's psi1d, psi2q rows exist (8 machine rows), VR of the
    IEEET1 with KE = 0 starts at 0, the SEXS field voltage equals K (Vref - |V|);
  * through a fault (off the step grid) with a SEXS limiter hit and release: -hs_check_gradient
    passes (adjoint = forward, adjoint vs central differences, Taylor order 2);
  * IEEEG1 instead of generator 1's TGOV1 (single shaft, K 20, T3 0.1, rate in [-0.05, 0.1]/s, gate
    in [0, 0.74]): at rest; through the fault its rate limit switches and its gate hits PMAX
    (state events) and -hs_check_gradient passes; a cross-compound record is refused;
  * generator trips (generator_trip) of generator 2 (GENSAL+SEXS, EFD2 held at EMAX) and of
    generator 1 (GENROU+EXDC1+IEEEG1, its gate rate held at its limit) after a fault:
    -hs_check_gradient passes (the tripped unit's states and limiters freeze);
  * must-fail: the same DYR with the GENROU's S(1.2) changed moves the trajectory (the saturation is
    in the model, not ignored);
  * refusals naming the record's file:line: half a subtransient GENROU (T''qo = 0), SEXS with
    TE = 0, an exciter for GENCLS, a saturation curve that is not increasing, and a start
    beyond a limiter's band (SEXS EMAX below the field voltage the start needs).
"""
import argparse, json, os, re, subprocess, tempfile

from wecc9_support import check, finish

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--source", required=True)
args = ap.parse_args()
tool = os.path.join(args.build, "src", "power", "hybridsens-grid")
RAW = os.path.join(args.source, "data", "grids", "wecc9.raw")

GENROU1 = "1 'GENROU' 1 8.96 0.03 0.31 0.05 23.64 4.728 0.146 0.0969 0.0608 0.0969 0.04 0.03 0.05 0.3 /"
EXDC1 = "1 'EXDC1' 1 0.02 20.0 0.2 0.05 0.1 7.0 -4.0 1.0 0.314 0.063 0.35 0 3.0 0.07 4.0 0.2 /"
TGOV1 = "1 'TGOV1' 1 0.05 0.5 2.475 0.0 3.0 10.0 0.0 /"
GENSAL2 = "2 'GENSAL' 1 6.0 0.04 0.06 6.4 1.28 0.8958 0.8645 0.1198 0.09 0.05 0.08 0.35 /"
SEXS2 = "2 'SEXS' 1 0.1 10.0 100.0 0.05 0.0 5.0 /"
GENROU3 = "3 'GENROU' 1 5.89 0.0 0.6 0.0 3.01 0.602 1.3125 1.2578 0.1813 0.25 0.1813 0.0 0 0 /"
IEEET1_3 = "3 'IEEET1' 1 0.0 20.0 0.2 7.0 -4.0 0.0 0.314 0.063 0.35 0 3.0 0.0039 4.0 0.0125 /"
MIX = [GENROU1, EXDC1, TGOV1, GENSAL2, SEXS2, GENROU3, IEEET1_3]


def tool_run(lines, opts, d, name="t.dyr", events=None):
    dyr = os.path.join(d, name)
    open(dyr, "w").write("\n".join(lines) + "\n")
    summary = os.path.join(d, "s.json")
    if os.path.exists(summary):
        os.remove(summary)
    r = subprocess.run([tool, RAW, dyr] + ([events] if events else []) + ["-hs_summary", summary] + opts, capture_output=True, text=True)
    s = json.load(open(summary)) if r.returncode == 0 else None
    return r, s


with tempfile.TemporaryDirectory() as d:
    # ---- at rest -----------------------------------------------------------------------------
    r, s = tool_run(MIX, ["-no_fault", "-ts_max_time", "0.02", "-snes_monitor"], d)
    res = [float(x) for x in re.findall(r"^\s*0 SNES Function norm (\S+)", r.stdout, re.M)]
    check(r.returncode == 0 and res and res[0] <= 1e-12, f"the start is an equilibrium: first Newton residual {res[0] if res else float('nan'):.1e} <= 1e-12")
    r, s = tool_run(MIX, ["-no_fault", "-ts_max_time", "10", "-hs_output_times", "0,10"], d)
    u0, uT = s["outputs"][0]["state"], s["outputs"][-1]["state"]
    drift = max(abs(a - b) / max(1.0, abs(a)) for a, b in zip(u0, uT))
    check(not s["events"] and drift <= 1e-8, f"no fault: at rest over 10 s, drift {drift:.1e} <= 1e-8 ({len(u0)} states)")
    # layout: gen 1 = 8 machine rows + 5 EXDC1 rows, gen 2 = 7 + 2 (SEXS), gen 3 = 6 + 5 (IEEET1 general: KE = 0)
    check(len(u0) == (8 + 5) + (7 + 2) + (6 + 5) + 18 + (3 + 2 + 3) + 3 + 3 + 2,
          f"the layout has the models' states: {len(u0)} = 33 generator rows + 18 bus rows + 8 exciter constants + 3 Pm + 3 loads + 2 governor")
    vr3 = u0[13 + 9 + 6 + 2]  # generator 3's VR (after its 6 machine rows, Efd, RF)
    check(abs(vr3) <= 1e-14, f"IEEET1 with KE = 0: VR starts at 0 ({vr3:.1e})")
    efd2, xll2 = u0[13 + 7], u0[13 + 7 + 1]
    vref2, k2 = u0[13 + 9 + 11 + 18 + 3], u0[13 + 9 + 11 + 18 + 3 + 1]  # after the buses and generator 1's (Vref, KA, KE)
    vr, vi = u0[13 + 9 + 11 + 2], u0[13 + 9 + 11 + 3]
    y = vref2 - (vr * vr + vi * vi) ** 0.5
    check(abs(efd2 - k2 * y) <= 1e-12 * abs(efd2) and abs(xll2 - (1 - 0.1) * y) <= 1e-12,
          f"SEXS at rest: Efd = K (Vref - |V|) = {efd2:.6f}, xLL = (1 - TA/TB)(Vref - |V|)")

    # ---- through a fault ----------------------------------------------------------------------
    FAULT = ["-t_on", "1.0025", "-t_off", "1.2025", "-freq_max", "60.2", "-freq_min", "59.8"]
    r, s = tool_run(MIX, FAULT + ["-hs_adjoint", "-hs_forward", "-hs_check_gradient"], d)
    m = re.search(r"adjoint vs forward ([0-9.e+-]+) .*adjoint vs FD ([0-9.e+-]+) .*Taylor order ([0-9.]+): PASSED", r.stdout)
    guards = [e["guard"] for e in s["events"]] if s else []
    check("EFD2_hits_max" in guards and "EFD2_leaves_max" in guards, f"the SEXS field voltage hits and leaves EMAX ({', '.join(guards)})")
    check(r.returncode == 0 and m is not None,
          "-hs_check_gradient passes" + (f" (adjoint vs forward {m.group(1)}, vs FD {m.group(2)}, Taylor order {m.group(3)})" if m else ""))
    base = s

    # ---- refusals ----------------------------------------------------------------------------------
    def refused(label, lines, pattern, opts=()):
        r, _ = tool_run(lines, list(opts) + ["-no_fault"], d, name="bad.dyr")
        out = r.stdout + r.stderr
        check(r.returncode != 0 and re.search(pattern, out) is not None, f"refused: {label}" + ("" if r.returncode != 0 else " (it ran)"))

    # ---- IEEEG1 (instead of generator 1's TGOV1): gate rate limit and gate position limit ----------
    IEEEG1 = "1 'IEEEG1' 1 0 0 20.0 0.1 0.5 0.1 0.05 -0.05 0.74 0.0 0.3 0.3 0.0 7.0 0.4 0.0 0.6 0.3 0.0 0.0 0.0 0.0 /"
    G1 = [l for l in MIX if l != TGOV1] + [IEEEG1]
    r, s = tool_run(G1, ["-no_fault", "-ts_max_time", "10", "-hs_output_times", "0,10"], d)
    u0, uT = s["outputs"][0]["state"], s["outputs"][-1]["state"]
    drift = max(abs(a - b) / max(1.0, abs(a)) for a, b in zip(u0, uT))
    check(not s["events"] and drift <= 1e-8 and len(u0) == 71, f"IEEEG1: at rest over 10 s, drift {drift:.1e} <= 1e-8 (6 governor states: {len(u0)} = 71)")
    r, s = tool_run(G1, FAULT + ["-hs_adjoint", "-hs_forward", "-hs_check_gradient"], d)
    m = re.search(r"adjoint vs forward ([0-9.e+-]+) .*adjoint vs FD ([0-9.e+-]+) .*Taylor order ([0-9.]+): PASSED", r.stdout)
    guards = [e["guard"] for e in s["events"]] if s else []
    check({"GateRate1_hits_min", "GateRate1_leaves_min", "GateRate1_hits_max", "Gate1_hits_max"} <= set(guards),
          f"IEEEG1: the gate rate limit switches ({sum(g.startswith('GateRate1') for g in guards)} events) and the gate hits PMAX")
    check(r.returncode == 0 and m is not None,
          "IEEEG1: -hs_check_gradient passes" + (f" (adjoint vs forward {m.group(1)}, vs FD {m.group(2)}, Taylor order {m.group(3)})" if m else ""))
    refused("a cross-compound IEEEG1 (JBUS != 0)", [l for l in MIX if l != TGOV1] + [IEEEG1.replace("'IEEEG1' 1 0 0", "'IEEEG1' 1 2 0")],
            r"bad\.dyr:\d+: IEEEG1 at bus 1 .*cross-compound")

    # ---- generator trips of every model kind, with a limiter held at the trip -----------------------
    for label, lines, bus, t_off, t_trip, held in (("GENSAL+SEXS", MIX, 2, 1.1025, 1.5035, "EFD2_hits_max"),
                                                   ("GENROU+EXDC1+IEEEG1", G1, 1, 1.2025, 1.8035, "GateRate1_hits_max")):
        events = os.path.join(d, "trip.json")
        json.dump({"events": [{"type": "bus_fault", "bus": 9, "t_on": 1.0025, "t_off": t_off},
                              {"type": "generator_trip", "bus": bus, "time": t_trip}]}, open(events, "w"))
        r, s = tool_run(lines, ["-freq_max", "60.2", "-freq_min", "59.8", "-hs_adjoint", "-hs_forward", "-hs_check_gradient"], d, events=events)
        m = re.search(r"adjoint vs forward ([0-9.e+-]+) .*adjoint vs FD ([0-9.e+-]+) .*Taylor order ([0-9.]+): PASSED", r.stdout)
        limiter = [e["guard"] for e in s["events"] if e["time"] < t_trip and e["guard"].startswith(held.split("_")[0] + "_")] if s else []
        check(r.returncode == 0 and m is not None and limiter[-1:] == [held] and f"generator_trip_{bus}_2" in r.stdout,
              f"trip of generator {bus} ({label}) held at its limit ({held}): -hs_check_gradient passes" + (f" (adjoint vs forward {m.group(1)}, vs FD {m.group(2)}, Taylor order {m.group(3)})" if m else ""))

    # ---- must-fail: the saturation is in the model -------------------------------------------------
    r, s = tool_run([GENROU1.replace("0.05 0.3 /", "0.05 0.4 /")] + MIX[1:], FAULT, d)
    dobj = max(abs(a - b) / abs(b) for a, b in zip(s["objective"], base["objective"]))
    check(dobj > 1e-4, f"must-fail: GENROU's S(1.2) 0.3 -> 0.4 changes H by {dobj:.1e} > 1e-4")

    refused("half a subtransient GENROU (T''qo = 0)", [GENROU1.replace("0.31 0.05", "0.31 0.0")] + MIX[1:],
            r"bad\.dyr:1: GENROU at bus 1 id '1': subtransient time constants T''do = 0.03, T''qo = 0")
    refused("SEXS with TE = 0", MIX[:4] + [SEXS2.replace("100.0 0.05", "100.0 0.0")] + MIX[5:], r"bad\.dyr:5: SEXS at bus 2 id '1': TE = 0\.?, must be positive")
    refused("an exciter for a GENCLS", MIX[:3] + ["2 'GENCLS' 1 6.4 0.0 /", SEXS2] + MIX[5:], r"bad\.dyr:5: SEXS at bus 2 .*an exciter for a GENCLS")
    refused("a machine saturation curve that is not increasing", [GENROU1.replace("0.05 0.3 /", "0.3 0.05 /")] + MIX[1:],
            r"bad\.dyr:1: GENROU at bus 1 .*does not define PSS/E's quadratic curve")
    refused("a start beyond a limiter's band (SEXS EMAX below the start's Efd)", MIX[:4] + [SEXS2.replace("0.0 5.0 /", "0.0 1.0 /")] + MIX[5:],
            r"generator 2 \(GENSAL\+SEXS\): the start needs EFD2 = [0-9.]+, outside its limiter's band \[0\.?, 1\.?\]")

finish()
