#!/usr/bin/env python3
"""examples/wecc9: user-chosen costs (-wecc9_terminal_cost, -wecc9_integral_cost) and the
sensitivity trajectories (-wecc9_sensitivities, -wecc9_adjoint).

Checks (fault times off the step grid, T = 2: VR3 hits its maximum during the fault and is
released at the clearing):
  * costs after H1..H3 in the order given, named [e](T) and int[e]^2; their values equal what the
    state trajectory gives: delta2-delta1 and VR3 at T (-wecc9_states), and the trapezoidal rule
    (= Crank-Nicolson's quadrature) of dw3^2 and (Vm9-1)^2 over the rows of -wecc9_sensitivities
    (both sides of every event) <= 1e-12;
  * adjoint = forward <= 1e-12 (relative to each cost's largest entry) for every user cost;
  * central finite differences <= 1e-6 for each kind (terminal, integral; a difference of two
    quantities, a single state, a speed deviation, a bus-voltage magnitude with a constant) and
    the parameters P2, KA3 (moves the VR3 hit), t_off, Vm3;
  * bad names and bad expressions are refused with an error naming the problem, and so are
    settings that would silently give a wrong number (fault at t <= 0, an empty frequency
    band, tie lines without impedance, no parameter area);
  * -wecc9_sensitivities: the last line equals the forward gradient (running integrals of the
    integral costs, the VR3 row for the terminal cost VR3); at t = 1.5 the running integral's
    gradient equals a solve ending there (<= 1e-12); the VR3 row is zero (<= 1e-12 of its scale)
    from the limiter hit (its right limit) to the release, and not before the hit; the adjoint CSV
    starts with lambda = dpsi/du at T (1 at VR3 for [VR3](T)) and lambda at VR3 jumps at the hit;
  * 2 ranks write the same CSV files (<= 1e-12 relative).
"""
import csv, math, os, subprocess, tempfile
import wecc9_support as support
from wecc9_support import check, finish

args, exe = support.arguments()
TMP = tempfile.mkdtemp()
BASE = ["-t_on", "1.0025", "-t_off", "1.2025", "-ts_max_time", "2.0", "-hs_forward_u0", "-1"]
TERMINAL = "delta2-delta1,VR3"
INTEGRAL = "dw3,Vm9-1"
USER = ["-wecc9_terminal_cost", TERMINAL, "-wecc9_integral_cost", INTEGRAL]
NAMES_EXPECTED = ["H1", "H2", "H3", "[delta2-delta1](T)", "[VR3](T)", "int[dw3]^2", "int[Vm9-1]^2"]


def run(opts, np=1, tag="s"):
    return support.run(exe, opts, np, args.mpiexec, summary=os.path.join(TMP, tag + ".json"))


def fails(opts):
    r = subprocess.run([exe] + opts, capture_output=True, text=True)
    return r.returncode != 0, r.stdout + r.stderr


def rows(name):
    with open(name) as f:
        return list(csv.DictReader(f))


# ---- values, adjoint = forward ----------------------------------------------------------------
states = os.path.join(TMP, "states.csv")
sens = os.path.join(TMP, "sens.csv")
adj = os.path.join(TMP, "adj.csv")
ROWS = ["-wecc9_sensitivity_rows", "VR3,VR1,dw3,Vm9-1"]
s = run(BASE + USER + ROWS + ["-hs_forward", "-hs_adjoint", "-wecc9_states", states, "-wecc9_sensitivities", sens, "-wecc9_adjoint", adj])
check(s["costs"] == NAMES_EXPECTED, f"cost names {s['costs']}")
NAMES = s["parameter_names"]
P = s["parameters"]
obj = dict(zip(s["costs"], s["objective"]))
U = [[float(x) for x in line.split(",")] for line in open(states) if line.strip()]
t = [r[0] for r in U]
gs = lambda g, k: 1 + 9 * (g - 1) + k
vr = lambda b: 1 + 27 + 2 * (b - 1)
final = U[-1]
check(abs(obj["[delta2-delta1](T)"] - (final[gs(2, 2)] - final[gs(1, 2)])) <= 1e-13 * abs(obj["[delta2-delta1](T)"]), "terminal delta2-delta1 = state at T")
check(abs(obj["[VR3](T)"] - final[gs(3, 8)]) <= 1e-13 * abs(obj["[VR3](T)"]), "terminal VR3 = state at T")
# CN's quadrature is the trapezoidal rule over each step, from the state after the last transition
# at its start to the state it produced (the left limit if an event follows): exactly the rows of
# the sensitivity CSV (a 'step' row, then one 'event' row per transition at that time).
S = rows(sens)
for q in ("dw3", "Vm9-1"):
    total, prev = 0.0, None
    for r in S:
        v = float(r[q])
        if r["kind"] == "step" and prev is not None and float(r["t"]) > prev[0]:
            total += 0.5 * (float(r["t"]) - prev[0]) * (prev[1] ** 2 + v ** 2)
        prev = (float(r["t"]), v)
    c = f"int[{q}]^2"
    check(abs(total - obj[c]) <= 1e-12 * obj[c] and obj[c] > 0, f"{c} = trapezoidal rule of the CSV rows ({total:.15e} vs {obj[c]:.15e})")
check(abs(float(S[-1]["dw3"]) - (final[gs(3, 3)] - 2 * math.pi * 60)) <= 1e-12 and
      abs(float(S[-1]["Vm9-1"]) - (math.hypot(final[vr(9)], final[vr(9) + 1]) - 1)) <= 1e-14, "CSV quantities = the states at T")
fwd, grad = s["forward_gradient"]["p"], s["gradient"]["p"]
for k in range(3, len(NAMES_EXPECTED)):
    scale = max(abs(x) for x in grad[k])
    err = max(abs(a - b) for a, b in zip(grad[k], fwd[k])) / scale
    check(err <= 1e-12, f"{NAMES_EXPECTED[k]}: adjoint = forward {err:.1e}")

# ---- central differences -------------------------------------------------------------------
def at(p):
    o = []
    for n, v in zip(NAMES, p):
        o += ["-" + n, repr(v)]
    return o

worst = {k: 0.0 for k in range(3, len(NAMES_EXPECTED))}
for name in ("P2", "KA3", "t_off", "Vm3"):
    j = NAMES.index(name)
    h = 1e-6 * max(abs(P[j]), 1e-2)
    pp, pm = list(P), list(P)
    pp[j] += h
    pm[j] -= h
    sp, sm = run(BASE + USER + at(pp), tag="p"), run(BASE + USER + at(pm), tag="m")
    for k in worst:
        fd = (sp["objective"][k] - sm["objective"][k]) / (2 * h)
        scale = max(abs(x) for x in grad[k])
        worst[k] = max(worst[k], abs(fd - grad[k][j]) / scale)
        print(f"    {NAMES_EXPECTED[k]:20s} d/d{name:5s} adjoint {grad[k][j]: .12e}  FD {fd: .12e}")
for k, w in worst.items():
    check(w <= 1e-6, f"{NAMES_EXPECTED[k]}: adjoint vs central FD {w:.1e} <= 1e-6")

# ---- refused names and settings ---------------------------------------------------------------
for opts, expect in ((["-wecc9_terminal_cost", "foo3"], "unknown quantity 'foo'"),
                     (["-wecc9_integral_cost", "VR4"], "no generator 4"),
                     (["-wecc9_terminal_cost", "Vm10"], "no bus 10"),
                     (["-wecc9_terminal_cost", "delta2-"], "expected a quantity"),
                     (["-wecc9_integral_cost", "2*"], "expected a quantity"),
                     (["-wecc9_terminal_cost", "1.5"], "names no quantity"),
                     (["-wecc9_terminal_cost", "VR1*2"], "expected + or -"),
                     (["-wecc9_sensitivity_rows", "omega0", "-hs_forward", "-wecc9_sensitivities", os.path.join(TMP, "x.csv")], "no generator 0"),
                     (["-wecc9_sensitivities", os.path.join(TMP, "x.csv")], "needs -hs_forward"),
                     # settings that would otherwise run and give a wrong number
                     (["-t_on", "0", "-t_off", "0.02"], "applied after the start"),
                     (["-freq_min", "61", "-freq_max", "59"], "need -freq_min < -freq_max"),
                     (["-areas", "2", "-tie_r", "0", "-tie_x", "0"], "nonzero impedance"),
                     (["-param_areas", "0"], "Option -param_areas 0: must be 1..1")):
    bad, out = fails(["-ts_max_time", "0.05"] + opts)
    check(bad and expect in out, f"{' '.join(opts[:2])} refused: {expect!r}")

# ---- the sensitivity trajectory ---------------------------------------------------------------
last = S[-1]
e1 = max(abs(float(last[f"d{c}/d{n}"]) - fwd[k][j]) for k, c in enumerate(NAMES_EXPECTED) if c.startswith(("H", "int"))
         for j, n in enumerate(NAMES))
e2 = max(abs(float(last[f"dVR3/d{n}"]) - fwd[4][j]) for j, n in enumerate(NAMES))
check(max(e1, e2) == 0.0 and float(last["t"]) == 2.0, f"last line = forward gradient (integrals {e1:.1e}, VR3 row {e2:.1e})")
check(not any(c.startswith("[") for c in S[0].keys()), "terminal-only costs have no running columns")
mid = [r for r in S if r["kind"] == "step" and abs(float(r["t"]) - 1.5) < 1e-9]
check(len(mid) == 1, "one step end at t = 1.5")
part = run(["-t_on", "1.0025", "-t_off", "1.2025", "-ts_max_time", mid[0]["t"], "-hs_forward_u0", "-1", "-hs_forward"] + USER, tag="part")
for k in (2, 5, 6):
    c = NAMES_EXPECTED[k]
    scale = max(abs(x) for x in part["forward_gradient"]["p"][k])
    err = max(abs(float(mid[0][f"d{c}/d{n}"]) - part["forward_gradient"]["p"][k][j]) for j, n in enumerate(NAMES)) / scale
    check(err <= 1e-12, f"{c}: running gradient at t = 1.5 = a solve ending there ({err:.1e})")
hit = [i for i, r in enumerate(S) if r["event"] == "VR3_hits_max"]
release = [i for i, r in enumerate(S) if r["event"] == "limiter_check_off"]
check(len(hit) == 1 and len(release) == 1, "one VR3 hit and one release in the CSV")
row = lambda r: [float(r[f"dVR3/d{n}"]) for n in NAMES]
scale = max(max(abs(x) for x in row(r)) for r in S)
held = max(max(abs(x) for x in row(r)) for r in S[hit[0]:release[0]])
before = max(abs(x) for x in row(S[hit[0] - 1]))
check(held <= 1e-12 * scale and before > 1e-2 * scale,
      f"dVR3/dp = 0 while VR3 is held at its limit ({held:.1e}), {before:.2e} just before the hit (scale {scale:.2e})")
A = rows(adj)
check(float(A[0]["t"]) == 2.0 and float(A[0]["lambda[[VR3](T)]:VR3"]) == 1.0 and float(A[0]["lambda[[VR3](T)]:VR1"]) == 0.0,
      "adjoint CSV starts at T with lambda = dpsi/du for [VR3](T)")
check(any(r["kind"] == "event" and r["event"] == "VR3_hits_max" for r in A), "adjoint CSV has the VR3 hit")
# The adjoint jumps at the limiter hit ([Zhang2017] Fig. 7): λ at V_R3 as the later steps left it
# (arrived, t_hit⁺) against its left limit after the transposed jump (the sweep runs backwards).
ai = next(i for i, r in enumerate(A) if r["event"] == "VR3_hits_max")
lam = lambda r: float(r["lambda[[VR3](T)]:VR3"])
jump = abs(lam(A[ai - 1]) - lam(A[ai]))
check(A[ai - 1]["kind"] == "arrived" and A[ai - 1]["t"] == A[ai]["t"] and jump > 0.5 * abs(lam(A[ai - 1])) > 0,
      f"λ of [VR3](T) at V_R3 jumps at the hit: {lam(A[ai - 1]):.3e} -> {lam(A[ai]):.3e}")

# ---- 2 ranks write the same files ----------------------------------------------------------------
SHORT = ["-t_on", "1.0025", "-t_off", "1.2025", "-ts_max_time", "1.3", "-hs_forward_u0", "-1", "-hs_forward", "-hs_adjoint"] + USER
files = {}
for np in (1, 2):
    f, g = os.path.join(TMP, f"s{np}.csv"), os.path.join(TMP, f"a{np}.csv")
    run(SHORT + ["-wecc9_sensitivities", f, "-wecc9_adjoint", g], np=np, tag=f"np{np}")
    files[np] = (rows(f), rows(g))
for which in (0, 1):
    a, b = files[1][which], files[2][which]
    same = len(a) == len(b) and all(ra["kind"] == rb["kind"] and ra["event"] == rb["event"] for ra, rb in zip(a, b))
    num = [c for c in a[0].keys() if c not in ("kind", "event")]
    scale = max(abs(float(r[c])) for r in a for c in num if c != "t")
    diff = max(abs(float(ra[c]) - float(rb[c])) for ra, rb in zip(a, b) for c in num) / scale if same else float("inf")
    check(same and diff <= 1e-12, f"{'forward' if which == 0 else 'adjoint'} CSV at 2 ranks = 1 rank ({len(a)} lines, {diff:.1e})")

finish()
