#!/usr/bin/env python3
"""examples/impact_oscillator: a forced oscillator with a stop, many impacts — against its
piecewise closed form, central finite differences, and the error paths (grazing, chattering).

Closed form: between impacts ẍ + c ẋ + k x = F cos ωt + F₀ is linear with constant
coefficients: x = R cos ωt + S sin ωt + F₀/k + e^{−c s/2}(A cos ω_d s + B sin ω_d s),
ω_d = sqrt(k − c²/4), s = t − t_i. An impact is the first root of x − δ (found on a fine scan,
then bisection); one Newton step in dual numbers (tests/dual.py) gives its exact derivative
τ_p = −(x_p − δ_p)/ẋ. The reset is x⁺ = δ, v⁺ = −e v⁻; ∫x² is integrated by 16-point
Gauss–Legendre on pieces ≤ 0.25 long, in dual numbers (moving end points included).
Variables: (δ, e, k, x₀) and the initial state (x(0), v(0)).

--method rk4 (RK4, dt = 5e-3, T = 100, 25 impacts):
  * impacts (count, times, v⁻, v⁺), both costs, and every gradient entry (parameters and
    initial state, forward and adjoint) against the closed form;
  * forward = adjoint ≤ 1e-12; central FD ≤ 1e-6 (each relative to the largest entry of its cost);
  * must-fail: without the reset terms d/de is lost, without the event-time terms d/dδ;
  * 2 MPI ranks reproduce the serial gradient (≤ 1e-12).
--method errors:
  * grazing: the free orbit from x₀ = −δ(1 + 1e-13) touches the stop at t ≈ π with
    |v⁻| ≈ 2e-7: the run must stop with the grazing error;
  * chattering (-F 0 -F0 1: pressed against the stop): an error, never a hang or a result
    (grazing as |v⁻| → 0 by default; -hs_max_events 30 and -hs_min_event_spacing 1e-3 give
    their Zeno errors);
  * sticking (-stick_velocity 1e-2, -F 0.6 -omega 1 -F0 1, T = 40): the user-chosen end of each
    chattering sequence: stick/release cycles, forward = adjoint, FD ≤ 1e-6.
--method cn (Crank–Nicolson, dt = 1.5e-3, T = 30): forward = adjoint ≤ 1e-12, central FD ≤ 1e-6,
  closed form ≤ 1e-4 (second order).
"""
import argparse, json, math, os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dual  # noqa: E402
from dual import Dual  # noqa: E402
import fwd_common as fc  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--mpiexec", default="mpiexec")
ap.add_argument("--method", choices=["rk4", "errors", "cn"], default="rk4")
args = ap.parse_args()
exe = os.path.join(args.build, "examples", "impact_oscillator")
check, rel = fc.check, fc.rel
P0 = [0.5, 0.8, 1.0, 0.0]  # δ, e, k, x₀
OPTS = ["-delta", "-e", "-k", "-x0"]
FD_STEP = [1e-6, 1e-6, 1e-6, 1e-5]
GL_NODES, GL_WEIGHTS = dual.gauss_legendre(16)


def closed_form(p, T, c=0.1, F=1.0, w=1.6, F0=0.0):
    """Impacts [(τ, v⁻, v⁺)], energy ½v² + ½kx² at T and ∫₀ᵀ x² dt, as Duals over (δ, e, k, x₀, x(0), v(0))."""
    n = 6
    delta, e, k, x0 = (Dual.variable(p[i], i, n) for i in range(4))
    x, v = x0 + Dual.variable(0.0, 4, n), Dual.variable(0.0, 5, n)
    det = (k - w * w) ** 2 + (c * w) ** 2
    R, S, xs = F * (k - w * w) / det, F * c * w / det, F0 / k
    wd = dual.sqrt(k - c * c / 4)
    t0, J2, impacts = Dual(0.0, n=n), Dual(0.0, n=n), []

    def xp(t):
        return R * dual.cos(w * t) + S * dual.sin(w * t) + xs

    def vp(t):
        return -R * w * dual.sin(w * t) + S * w * dual.cos(w * t)

    while True:
        A = x - xp(t0)
        B = (v - vp(t0) + c * A / 2) / wd

        def X(t, A=A, B=B, t0=t0):
            s = t - t0
            return xp(t) + dual.exp(-c * s / 2) * (A * dual.cos(wd * s) + B * dual.sin(wd * s))

        def V(t, A=A, B=B, t0=t0):
            s = t - t0
            return vp(t) + dual.exp(-c * s / 2) * ((-c / 2 * A + wd * B) * dual.cos(wd * s) + (-c / 2 * B - wd * A) * dual.sin(wd * s))

        # The next root of x − δ from below: scan the values, then bisection.
        g = lambda t: dual.value(X(t)) - delta.v  # noqa: E731
        tau0, ta = None, t0.v
        while ta < T:
            tb = min(ta + 1e-3, T)
            if g(ta) < 0 <= g(tb):
                lo, hi = ta, tb
                for _ in range(200):
                    mid = 0.5 * (lo + hi)
                    if mid in (lo, hi):
                        break
                    lo, hi = (mid, hi) if g(mid) < 0 else (lo, mid)
                tau0 = hi
                break
            ta = tb
        end = Dual(T, n=n) if tau0 is None else tau0 - (X(tau0) - delta) / V(tau0)
        # ∫ x² over [t0, end], Gauss–Legendre in dual numbers.
        pieces = max(1, math.ceil((end.v - t0.v) / 0.25))
        h = (end - t0) / pieces
        for i in range(pieces):
            a = t0 + h * i
            for xi, wi in zip(GL_NODES, GL_WEIGHTS):
                J2 = J2 + wi * h * X(a + h * xi) ** 2
        if tau0 is None:
            xT, vT = X(end), V(end)
            return impacts, 0.5 * vT * vT + 0.5 * k * xT * xT, J2
        vminus = V(end)
        x, v, t0 = delta, -e * vminus, end
        impacts.append((end, vminus, v))


def run(opts, np=1, expect_ok=True, timeout=120):
    with tempfile.TemporaryDirectory() as d:
        summary = os.path.join(d, "s.json")
        cmd = ([args.mpiexec, "-n", str(np), "--oversubscribe"] if np > 1 else []) + [exe, "-hs_summary", summary] + opts
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if res.returncode != 0:
            if expect_ok:
                raise RuntimeError(f"{' '.join(cmd)} exited with {res.returncode}:\n{res.stdout}\n{res.stderr}")
            return None, res.stdout + res.stderr
        s = json.load(open(summary))
    s["stdout"] = res.stdout
    return s, res.stdout + res.stderr


def scaled_diff(a, b):
    return max(abs(x - y) for x, y in zip(a, b)) / max(max(abs(y) for y in b), 1e-300)


def gradient_rows(s, key):
    return [s[key]["p"][k] + s[key]["u0"][k] for k in range(2)]


def fd_rows(opts, base=P0):
    """Central differences of both costs, one parameter at a time."""
    rows = [[], []]
    for j, opt in enumerate(OPTS):
        h = FD_STEP[j]
        sp = run(opts + [opt, repr(base[j] + h)])[0]["objective"]
        sm = run(opts + [opt, repr(base[j] - h)])[0]["objective"]
        for k in range(2):
            rows[k].append((sp[k] - sm[k]) / (2 * h))
    return rows


def check_gradients(label, s, opts, closed=None, tol_closed=None):
    fwd, adj = gradient_rows(s, "forward_gradient"), gradient_rows(s, "gradient")
    fd = fd_rows(opts)
    for k, name in enumerate(("energy", "mean_square")):
        e1, e2 = scaled_diff(adj[k], fwd[k]), scaled_diff(adj[k][:4], fd[k])
        msg = f"{label} {name}: adjoint vs forward {e1:.2e}, vs central FD {e2:.2e}"
        check(e1 <= 1e-12, f"{label} {name}: adjoint {adj[k]} vs forward {fwd[k]} ({e1:.3g})")
        check(e2 <= 1e-6, f"{label} {name}: adjoint {adj[k][:4]} vs FD {fd[k]} ({e2:.3g})")
        if closed is not None:
            e3 = scaled_diff(adj[k], closed[k])
            msg += f", vs closed form {e3:.2e}"
            check(e3 <= tol_closed, f"{label} {name}: adjoint {adj[k]} vs closed form {closed[k]} ({e3:.3g})")
        print(msg)


if args.method == "rk4":
    ref_imp, ref_E, ref_J = closed_form(P0, 100.0)
    ref_grad = [ref_E.d, ref_J.d]
    print(f"closed form: {len(ref_imp)} impacts, energy = {ref_E.v:.15g}, mean_square = {ref_J.v:.15g}")
    s, _ = run(["-hs_forward", "-hs_adjoint"])
    lines = [l.split() for l in s["stdout"].splitlines() if l.strip().startswith("impact  t =") or l.strip().startswith("impact t =")]
    ev = s["events"]
    check(len(ev) == len(ref_imp) == len(lines) and len(ev) >= 20, f"{len(ev)} impacts ({len(lines)} printed), closed form {len(ref_imp)}")
    worst_t = worst_v = 0.0
    for e, l, (tau, vm, vp) in zip(ev, lines, ref_imp):
        check(e["guard"] == "impact", f"event {e}")
        worst_t = max(worst_t, abs(e["time"] - tau.v))
        worst_v = max(worst_v, abs(float(l[9]) - vm.v), abs(float(l[12]) - vp.v))
        check(abs(float(l[9])) >= 1.0, f"impact at {e['time']}: |v-| = {l[9]} (the default orbit must be transversal)")
    print(f"impacts: max |t - closed form| {worst_t:.2e}, max |v -/+ - closed form| {worst_v:.2e}")
    check(worst_t <= 1e-8 and worst_v <= 1e-8, f"impact times/velocities differ from the closed form by {worst_t:.3g}/{worst_v:.3g}")
    for k, ref in enumerate((ref_E, ref_J)):
        check(rel(s["objective"][k], ref.v) <= 1e-8, f"cost {k}: {s['objective'][k]!r} vs closed form {ref.v!r}")
    check_gradients("RK4 dt=5e-3", s, [], ref_grad, 1e-6)

    # Must-fail: the impact law's own terms, and the event-time terms.
    adj = gradient_rows(s, "gradient")
    for switch, j in (("-hs_test_drop_reset_terms", 1), ("-hs_test_drop_event_time_term", 0)):
        b, _ = run(["-hs_adjoint", switch])
        bad = gradient_rows(b, "gradient")
        err = max(scaled_diff(bad[k], adj[k]) for k in range(2))
        print(f"{switch}: gradient wrong by {err:.2e} (d/d{OPTS[j][1:]}: {bad[1][j]:.6g} vs {adj[1][j]:.6g})")
        check(err > 1e-2, f"{switch}: the gradient did not change ({err:.3g})")

    p2, _ = run(["-hs_adjoint"], np=2)
    err = max(scaled_diff(gradient_rows(p2, "gradient")[k], adj[k]) for k in range(2))
    print(f"np=2: adjoint vs serial {err:.2e}")
    check(err <= 1e-12, f"np=2: adjoint differs from serial by {err:.3g}")
elif args.method == "errors":
    # Grazing.
    g, out = run(["-F", "0", "-c", "0", "-x0", "-0.50000000000005", "-ts_max_time", "5", "-ts_dt", "1e-3"], expect_ok=False)
    check(g is None and "Grazing event: guard 'impact' at t = 3.14159" in out, f"grazing orbit must fail with the grazing error:\n{out[-1500:]}")
    print("grazing: " + next((l.strip() for l in out.splitlines() if "Grazing event" in l), "no error")[:150])

    # Chattering: an error, whichever check fires first; the Zeno checks on request.
    chatter = ["-F", "0", "-F0", "1", "-ts_max_time", "20"]
    for extra, expect in (([], ("Grazing event", "Zeno/chattering")),
                          (["-hs_max_events", "30"], ("Zeno/chattering: more than -hs_max_events 30",)),
                          (["-hs_min_event_spacing", "1e-3"], ("Zeno/chattering: event 'impact' fired again after",))):
        c, out = run(chatter + extra, expect_ok=False, timeout=60)
        hit = next((l.strip() for l in out.splitlines() if any(x in l for x in expect)), None)
        check(c is None and hit is not None, f"chattering {extra}: expected {expect}:\n{out[-1500:]}")
        print(f"chattering {' '.join(extra) or '(defaults)'}: {hit[:140] if hit else 'NO ERROR'}")

    # Sticking ends each chattering sequence (the same configuration chatters into an error without it).
    stick = ["-F", "0.6", "-omega", "1", "-F0", "1", "-ts_max_time", "40"]
    c, out = run(stick, expect_ok=False)
    check(c is None and "Grazing event" in out, "without -stick_velocity this configuration must end in the grazing error")
    st, _ = run(stick + ["-stick_velocity", "1e-2", "-hs_forward", "-hs_adjoint"])
    releases = sum(e["guard"] == "release" for e in st["events"])
    stuck = sum(e["guard"] == "impact" and e["to"][0] == 1 for e in st["events"])
    print(f"sticking: {len(st['events'])} events, {stuck} sticks, {releases} releases")
    check(releases >= 4 and stuck == releases + 1, f"sticking: {stuck} sticks, {releases} releases")
    check_gradients("sticking", st, stick + ["-stick_velocity", "1e-2"])
else:
    cn = ["-ts_type", "cn", "-ts_dt", "1.5e-3", "-ts_max_time", "30"]
    ref_imp, ref_E, ref_J = closed_form(P0, 30.0)
    s, _ = run(cn + ["-hs_forward", "-hs_adjoint"])
    check(len(s["events"]) == len(ref_imp), f"CN: {len(s['events'])} impacts, closed form {len(ref_imp)}")
    check_gradients("CN dt=1.5e-3", s, cn, [ref_E.d, ref_J.d], 1e-4)

sys.exit(fc.summary_line())
