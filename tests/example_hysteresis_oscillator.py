#!/usr/bin/env python3
"""examples/hysteresis_oscillator ([SerbanRecuero2019] §5.2; docs/validation.md): the published value and
gradient rows, forward = adjoint, central finite differences, the adjoint jumps at every load
reversal, must-fail tests.

--method rk4 (default, RK4 dt = 1e-3):
  * G = 0.04994 ([SerbanRecuero2019]) to ≤ 1e-4 relative; 19 reversals, ξ alternating from +1, v⁻ ≈ 0;
  * the stress written by the example equals the literal eq. 46 of [SerbanRecuero2019] (with the errata:
    2 sinh βu* in u_i*, u₀ and f̄ from (k_a, k_b, α)) at every output point, and is continuous
    at every reversal (z = z* right after it);
  * forward = adjoint ≤ 1e-12 (max over entries relative to the largest); ∂G/∂β = 0 exactly;
  * central FD of the example ≤ 1e-5 relative for k_a, k_b, α (each entry on its own);
  * the published rows (FD, FSA, ASA of [SerbanRecuero2019]) within 1 % for k_a, k_b, α;
  * the adjoint at every reversal: λ_u jumps by λ_{u*}⁺ + σ_u λ_{z*}⁺ (≠ 0), λ_{u*}⁻ = σ_{u*} λ_{z*}⁺,
    λ_{z*}⁻ = σ_{z*} λ_{z*}⁺ (R_uᵀ of the capture, σ's partials in the mode before the reversal),
    and the velocity adjoint λ_v is continuous ([SerbanRecuero2019] Fig. 8): exactly (≤ 1e-12) with the
    continuous event derivative (-hs_event_derivative continuous, where c = 0 at v = 0); with
    the default discrete-exact one it jumps by the O(h⁴) event-time term of the RK4 step that
    locates the reversal (≤ 1e-7, and ≥ 8× smaller at half the step);
--method memory (RK4 dt = 1e-3):
  * must-fail: without the memory terms (-hs_test_drop_reset_terms) the gradient is wrong by
    orders of magnitude (≥ 100×); in contrast [SerbanRecuero2019]'s partial memory derivative and dropping
    the event-time terms change nothing here (≤ 1e-9), because v = 0 at a reversal makes the
    jump vector c vanish (up to the O(h⁴) of the discrete event derivative) —
    examples/sample_and_hold is the case where they matter;
  * slow memory decay (α = 5): FD ≤ 1e-6, forward = adjoint;
  * 2 MPI ranks reproduce the serial gradient (≤ 1e-12).
--method cn (Crank–Nicolson): G and the published rows as above at dt = 2e-4, forward = adjoint
  ≤ 1e-12; central FD ≤ 1e-5 for k_a, k_b, α at dt = 1e-3 (the discrete-exact event derivative;
  the continuous one, -hs_event_derivative continuous, is off by 2e-3 for α at this step).
  The index-1 DAE form (-dae: z algebraic, z* captured from it) with CN at dt = 1e-3 gives the
  ODE's G and gradient (≤ 1e-9 with Newton converged to 1e-12), forward = adjoint ≤ 1e-12, and
  without the memory terms it fails like the ODE (≥ 100×).
"""
import argparse, csv, json, math, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwd_common as fc  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--mpiexec", default="mpiexec")
ap.add_argument("--method", choices=["rk4", "memory", "cn"], default="rk4")
args = ap.parse_args()
exe = os.path.join(args.build, "examples", "hysteresis_oscillator")
check, rel = fc.check, fc.rel

P0 = [32 * math.pi ** 2, math.pi ** 2, 205.0, 0.0]
OPTS = ["-ka", "-kb", "-alpha", "-beta"]
G_PUBLISHED = 0.04994
ROWS_PUBLISHED = {"FD": [-1.338e-5, 3.267e-3, -1.534e-6], "FSA": [-1.337e-5, 3.266e-3, -1.518e-6],
                  "ASA": [-1.335e-5, 3.267e-3, -1.540e-6]}


def run(opts, np=1, files=False):
    with tempfile.TemporaryDirectory() as d:
        summary, traj, adj = (os.path.join(d, f) for f in ("s.json", "traj.csv", "adj.csv"))
        extra = ["-trajectory_csv", traj, "-adjoint_csv", adj] if files else []
        cmd = ([args.mpiexec, "-n", str(np), "--oversubscribe"] if np > 1 else []) + [exe, "-hs_summary", summary] + extra + opts
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited with {res.returncode}:\n{res.stdout}\n{res.stderr}")
        s = json.load(open(summary))
        if files:
            s["traj"] = list(csv.DictReader(open(traj)))
            s["adj"] = list(csv.DictReader(open(adj)))
    s["stdout"] = res.stdout
    return s


def scaled_diff(a, b):
    return max(abs(x - y) for x, y in zip(a, b)) / max(max(abs(y) for y in b), 1e-300)


def central_fd(opts, j, h, base=None):
    """(G(p_j + h) − G(p_j − h)) / 2h of the example with `opts`, around p_j = base (default P0[j])."""
    base = P0[j] if base is None else base
    g = [run(opts + [OPTS[j], repr(base + s * h)])["objective"][0] for s in (1, -1)]
    return (g[0] - g[1]) / (2 * h)


def check_published(label, s):
    G = s["objective"][0]
    print(f"{label}: G = {G:.12g} (Serban & Recuero 2019: {G_PUBLISHED}), rel {rel(G, G_PUBLISHED):.2e}")
    check(rel(G, G_PUBLISHED) <= 1e-4, f"{label}: G = {G!r} vs published {G_PUBLISHED} (rel {rel(G, G_PUBLISHED):.3g} > 1e-4)")
    fwd, adj = s["forward_gradient"]["p"][0], s["gradient"]["p"][0]
    err = scaled_diff(adj, fwd)
    print(f"{label}: forward {fwd}\n{label}: adjoint {adj}\n{label}: adjoint vs forward {err:.2e}")
    check(err <= 1e-12, f"{label}: adjoint vs forward {err:.3g} > 1e-12")
    check(fwd[3] == 0.0 and adj[3] == 0.0, f"{label}: dG/dbeta must be exactly 0 (forward {fwd[3]!r}, adjoint {adj[3]!r})")
    for row, vals in ROWS_PUBLISHED.items():
        for j in range(3):
            e = rel(adj[j], vals[j])
            check(e <= 1e-2, f"{label}: dG/d{OPTS[j][1:]} = {adj[j]:.6g} vs Serban & Recuero 2019 {row} {vals[j]:.4g} (rel {e:.3g} > 1 %)")
        print(f"{label}: vs Serban & Recuero 2019 {row} row: " + ", ".join(f"{rel(adj[j], vals[j]):.2%}" for j in range(3)))


# ---- the stress law of [SerbanRecuero2019], eq. 46, literally (with the errata in docs/references.md) ----
def sigma_paper(u, us, zs, xi, p, delta=1e-20):
    ka, kb, al, be = p
    u0 = -math.log(delta / (ka - kb)) / (2 * al)
    fbar = (ka - kb) * (1 - math.exp(-2 * al * u0)) / (2 * al)
    ui = us + 2 * xi * u0 + xi / al * math.log(
        xi * al / (ka - kb) * (-2 * be * us + 2 * math.sinh(be * us) + kb * us + xi * (ka - kb) / al * math.exp(-2 * al * u0)
                              + xi * fbar - zs))
    return (-2 * be * u + 2 * math.sinh(be * u) + kb * u
            - xi * (ka - kb) / al * (math.exp(-al * (u * xi - ui * xi + 2 * u0)) - math.exp(-2 * al * u0)) + xi * fbar)


def sigma_derivatives(u, us, zs, xi, p, delta=1e-20):
    """∂σ/∂u, ∂σ/∂u*, ∂σ/∂z* of the log-free form (beta = 0 here: B(x) = k_b x)."""
    ka, kb, al, be = p
    C = xi * (ka - kb + delta) / (2 * al)
    M = kb * us + C - zs
    E = math.exp(-al * xi * (u - us))
    return kb + al * xi * M * E, -E * kb - al * xi * M * E, E


if args.method == "rk4":
    s = run(["-hs_forward", "-hs_adjoint"], files=True)
    check_published("RK4 dt=1e-3", s)

    # Reversals.
    ev = s["events"]
    check(len(ev) == 19, f"{len(ev)} reversals, expected 19 (Serban & Recuero 2019, Figs. 5-6)")
    for i, e in enumerate(ev):
        xi = 1 if i % 2 == 0 else -1
        check(e["guard"] == "reversal" and e["from"] == [xi] and e["to"] == [-xi], f"reversal {i}: {e}")
    vminus = [float(l.split("v- = ")[1]) for l in s["stdout"].splitlines() if "reversal t =" in l]
    check(len(vminus) == len(ev) and max(map(abs, vminus)) <= 1e-10, f"|v-| at reversals: {max(map(abs, vminus)):.3g}")
    print(f"{len(ev)} reversals at " + ", ".join(f"{e['time']:.5f}" for e in ev) + f"; max |v-| {max(map(abs, vminus)):.2e}")

    # The stress against eq. 46, and its continuity at reversals.
    traj = s["traj"]
    zmax = max(abs(float(r["z"])) for r in traj)
    worst = max(abs(float(r["z"]) - sigma_paper(float(r["u"]), float(r["ustar"]), float(r["zstar"]), int(r["xi"]), P0)) for r in traj)
    print(f"stress vs Serban & Recuero 2019, eq. 46: max |z - sigma| = {worst:.2e} over {len(traj)} points (max |z| {zmax:.3g})")
    check(worst <= 1e-10 * zmax, f"stress differs from eq. 46 by {worst:.3g}")
    times = [float(r["t"]) for r in traj]
    for e in ev:
        i = times.index(e["time"])
        r = traj[i]
        check(float(r["ustar"]) == float(r["u"]) and abs(float(r["z"]) - float(r["zstar"])) <= 1e-13 * zmax,
              f"reversal at {e['time']}: memory (u*, z*) = ({r['ustar']}, {r['zstar']}) vs (u, z) = ({r['u']}, {r['z']})")

    # Adjoint jumps at reversals (samples come in reverse time: "step" at τ is λ⁺, then "after_reversal" is λ⁻).
    def adjoint_jumps(s):
        """(number of jumps, smallest |Δλ_u| / max|λ_u|, largest |Δλ_v| / max|λ_v|, worst R_uᵀ mismatch)."""
        adj, traj = s["adj"], s["traj"]
        times = [float(r["t"]) for r in traj]
        lam = lambda r, k: float(r["lambda_" + k])  # noqa: E731
        lu_max = max(abs(lam(r, "u")) for r in adj)
        lv_max = max(abs(lam(r, "v")) for r in adj)
        njumps, worst_v, worst_formula, smallest = 0, 0.0, 0.0, float("inf")
        for i, r in enumerate(adj):
            if r["kind"] != "after_reversal":
                continue
            njumps += 1
            plus, t = adj[i - 1], float(r["t"])
            check(plus["t"] == r["t"] and plus["kind"] == "step", f"adjoint samples out of order at {r['t']}")
            k = times.index(t)
            pre = traj[k - 1]  # the mode before the reversal: its memory and ξ
            sig_u, sig_us, sig_zs = sigma_derivatives(float(traj[k]["u"]), float(pre["ustar"]), float(pre["zstar"]), int(pre["xi"]), P0)
            jump_u = lam(r, "u") - lam(plus, "u")
            expect = lam(plus, "ustar") + sig_u * lam(plus, "zstar")
            worst_formula = max(worst_formula, abs(jump_u - expect) / lu_max,
                                abs(lam(r, "ustar") - sig_us * lam(plus, "zstar")) / lu_max,
                                abs(lam(r, "zstar") - sig_zs * lam(plus, "zstar")) / lu_max)
            worst_v = max(worst_v, abs(lam(r, "v") - lam(plus, "v")) / lv_max)
            smallest = min(smallest, abs(jump_u) / lu_max)
        return njumps, smallest, worst_v, worst_formula

    continuous = run(["-hs_adjoint", "-hs_event_derivative", "continuous"], files=True)
    half = run(["-hs_adjoint", "-ts_dt", "5e-4"], files=True)
    jv = {}
    for label, run_ in (("discrete dt=1e-3", s), ("continuous dt=1e-3", continuous), ("discrete dt=5e-4", half)):
        njumps, smallest, jv[label], worst_formula = adjoint_jumps(run_)
        print(f"adjoint ({label}): {njumps} jumps; smallest |jump of lambda_u| = {smallest:.2e} of max|lambda_u|; "
              f"lambda_v jumps by <= {jv[label]:.2e}; jump formula to {worst_formula:.2e}")
        check(njumps == len(ev), f"{label}: {njumps} adjoint jumps for {len(ev)} reversals")
        check(smallest >= 1e-4, f"{label}: lambda_u must jump at every reversal (smallest jump {smallest:.3g} of its max)")
        check(worst_formula <= 1e-10, f"{label}: adjoint jumps differ from R_u^T lambda+ by {worst_formula:.3g}")
    check(jv["continuous dt=1e-3"] <= 1e-12, f"continuous event derivative: lambda_v must be continuous ({jv['continuous dt=1e-3']:.3g})")
    check(jv["discrete dt=1e-3"] <= 1e-7, f"discrete event derivative: lambda_v jump {jv['discrete dt=1e-3']:.3g} > 1e-7")
    check(jv["discrete dt=5e-4"] <= jv["discrete dt=1e-3"] / 8,
          f"discrete event derivative: lambda_v jump {jv['discrete dt=1e-3']:.3g} -> {jv['discrete dt=5e-4']:.3g} at half the step (not O(h^4))")

    # Central finite differences, each entry on its own (relative step 1e-5).
    adjg = s["gradient"]["p"][0]
    for j in range(3):
        fd = central_fd([], j, 1e-5 * P0[j])
        e = rel(adjg[j], fd)
        print(f"dG/d{OPTS[j][1:]}: adjoint {adjg[j]:.12g}  central FD {fd:.12g}  rel {e:.2e}")
        check(e <= 1e-5, f"dG/d{OPTS[j][1:]}: adjoint {adjg[j]!r} vs FD {fd!r} (rel {e:.3g} > 1e-5)")

elif args.method == "memory":
    s = run(["-hs_adjoint"])
    adjg = s["gradient"]["p"][0]
    # Must-fail and the terms that vanish here.
    b = run(["-hs_forward", "-hs_adjoint", "-hs_test_drop_reset_terms"])
    err = scaled_diff(b["gradient"]["p"][0], adjg)
    print(f"without the memory terms: gradient {b['gradient']['p'][0]}, wrong by {err:.2e} (must be >= 100)")
    check(err >= 100, f"dropping the memory terms changed the gradient by only {err:.3g}")
    for switch in ("-hs_test_memory_partial_derivative", "-hs_test_drop_event_time_term"):
        b = run(["-hs_forward", "-hs_adjoint", switch])
        err = scaled_diff(b["gradient"]["p"][0], adjg)
        print(f"{switch}: changes the gradient by {err:.2e} (c ~ 0 at reversals: must be <= 1e-9)")
        check(err <= 1e-9, f"{switch} changed the gradient by {err:.3g}: the jump vector should vanish at v = 0")

    # Slow memory decay: the captured state matters for long.
    slow = ["-alpha", "5"]
    s5 = run(slow + ["-hs_forward", "-hs_adjoint"])
    g5 = s5["gradient"]["p"][0]
    check(scaled_diff(g5, s5["forward_gradient"]["p"][0]) <= 1e-12, "alpha=5: adjoint vs forward")
    p5 = [P0[0], P0[1], 5.0]
    fd5 = [central_fd(slow, j, 1e-5 * p5[j], p5[j]) for j in range(3)]
    err = scaled_diff(g5[:3], fd5)
    print(f"alpha=5: G = {s5['objective'][0]:.12g}, adjoint {g5[:3]}, FD {fd5}, rel {err:.2e}")
    check(err <= 1e-6, f"alpha=5: adjoint {g5[:3]} vs FD {fd5} ({err:.3g})")

    p2 = run(["-hs_adjoint"], np=2)
    err = scaled_diff(p2["gradient"]["p"][0], adjg)
    print(f"np=2: adjoint vs serial {err:.2e}")
    check(err <= 1e-12, f"np=2: adjoint differs from serial by {err:.3g}")
else:
    s = run(["-hs_forward", "-hs_adjoint", "-ts_type", "cn", "-ts_dt", "2e-4"])
    check_published("CN dt=2e-4", s)
    # The DAE form against the ODE, both CN at dt = 1e-3 with Newton converged tightly.
    tight = ["-ts_type", "cn", "-ts_dt", "1e-3", "-snes_rtol", "1e-12", "-snes_atol", "1e-13"]
    ode = run(tight + ["-hs_adjoint"])
    dae = run(tight + ["-dae", "-hs_forward", "-hs_adjoint"])
    gd, go = dae["gradient"]["p"][0], ode["gradient"]["p"][0]
    e_obj, e_grad = rel(dae["objective"][0], ode["objective"][0]), scaled_diff(gd, go)
    e_fa = scaled_diff(gd, dae["forward_gradient"]["p"][0])
    print(f"DAE vs ODE (CN dt=1e-3): G rel {e_obj:.2e}, gradient {e_grad:.2e} ({gd} vs {go}); DAE adjoint vs forward {e_fa:.2e}")
    check(len(dae["events"]) == len(ode["events"]) == 19, f"DAE: {len(dae['events'])} reversals, ODE {len(ode['events'])}")
    check(e_obj <= 1e-9 and e_grad <= 1e-9, f"DAE vs ODE: G {e_obj:.3g}, gradient {e_grad:.3g}")
    check(e_fa <= 1e-12, f"DAE: adjoint vs forward {e_fa:.3g}")
    check(gd[3] == 0.0, f"DAE: dG/dbeta = {gd[3]!r}, must be exactly 0")
    bad = run(tight + ["-dae", "-hs_adjoint", "-hs_test_drop_reset_terms"])["gradient"]["p"][0]
    err = scaled_diff(bad, gd)
    print(f"DAE without the memory terms: wrong by {err:.2e}")
    check(err >= 100, f"DAE: dropping the memory terms changed the gradient by only {err:.3g}")

    # Central FD at a coarser step: the discrete-exact event derivative matches the CN objective.
    coarse = ["-ts_type", "cn", "-ts_dt", "1e-3"]
    g = run(coarse + ["-hs_adjoint"])["gradient"]["p"][0]
    for j in range(3):
        fd = central_fd(coarse, j, 1e-5 * P0[j])
        e = rel(g[j], fd)
        print(f"CN dt=1e-3: dG/d{OPTS[j][1:]} adjoint {g[j]:.12g}  central FD {fd:.12g}  rel {e:.2e}")
        check(e <= 1e-5, f"CN dt=1e-3: dG/d{OPTS[j][1:]} adjoint {g[j]!r} vs FD {fd!r} (rel {e:.3g} > 1e-5)")

sys.exit(fc.summary_line())
