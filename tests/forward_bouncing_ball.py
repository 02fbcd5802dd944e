#!/usr/bin/env python3
"""Forward sensitivities of examples/bouncing_ball (docs/validation.md, bouncing ball): ψ = q(T) + ∫₀ᵀ v² dt
with respect to (q0, e) and the initial state (q(0), v(0)).

Closed form (two impacts before T = 5 for q0 = 10, e = 0.8): t1 = sqrt(2 q0/g), V1 = e g t1,
V2 = e V1, t2 = t1 (1 + 2e), s = T − t2, v_T = V2 − g s;
    q(T) = V2 s − g s²/2,
    ∫v² = g² t1³/3 + 2 V1³/(3g) + (V2³ − v_T³)/(3g)      (fall, first flight, since last impact).
dψ/dq0 and dψ/de by the chain rule through (t1, V2, s) (checked here against central differences
of the closed form itself); with v(0) = 0 a perturbation of v(0) leaves the impact speeds
unchanged to first order and delays everything after the first impact by 1/g, so
dψ/dv(0) = −(v_T + v_T²)/g; dψ/dq(0) = dψ/dq0.
RK4 is exact for this piecewise-quadratic motion and its quadrature of v² (quadratic in t) is
exact too, so forward = closed form to ≤ 1e-8 relative. Checks:
  * forward (RK4, dt = 0.01 and 1e-3) = closed form ≤ 1e-8 (ψ and its four derivatives);
  * must-fail: -hs_test_drop_reset_terms makes dψ/de wrong by far (it becomes 0);
  * forward vs central FD of ψ of the same method ≤ 1e-6 (-hs_event_tol 1e-13): CN dt = 1e-3,
    RK4 dt = 0.01; BEULER dt 1e-3 and 1e-4 ≤ 1e-6 (discrete event derivative; continuous must miss: fwd_common.beuler_check).
"""
import argparse, math, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwd_common as c

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
args = ap.parse_args()
exe = os.path.join(args.build, "examples", "bouncing_ball")
g, T, Q0, E = 9.81, 5.0, 10.0, 0.8


def closed_form(q0, e):
    """ψ, dψ/dq0, dψ/de, dψ/dv(0) (two impacts before T)."""
    t1 = math.sqrt(2 * q0 / g)
    V1, V2 = e * g * t1, e * e * g * t1
    t2 = t1 * (1 + 2 * e)
    assert t2 < T < t2 + 2 * V2 / g, "closed form assumes exactly two impacts before T"
    s = T - t2
    w = V2 - g * s  # v(T)
    psi = V2 * s - g * s * s / 2 + g * g * t1 ** 3 / 3 + 2 * V1 ** 3 / (3 * g) + (V2 ** 3 - w ** 3) / (3 * g)

    def d(dV2, ds, dt1, de):  # total differential of ψ in (V2, s, t1, e)
        return (s * dV2 + w * ds + g * g * t1 * t1 * (1 + 2 * e ** 3) * dt1 + 2 * e * e * g * g * t1 ** 3 * de
                + (V2 * V2 * dV2 - w * w * (dV2 - g * ds)) / g)

    dq0 = d(e * e * g, -(1 + 2 * e), 1, 0) * t1 / (2 * q0)  # dt1/dq0 = t1/(2 q0)
    de = d(2 * e * g * t1, -2 * t1, 0, 1)
    return psi, dq0, de, -(w + w * w) / g


psi_ex, dq0_ex, de_ex, dv0_ex = closed_form(Q0, E)
print(f"closed form: psi = {psi_ex!r}, dpsi/dq0 = {dq0_ex!r}, dpsi/de = {de_ex!r}, dpsi/dv(0) = {dv0_ex!r}")
for j, (dlt, ex) in enumerate(((1e-5, dq0_ex), (1e-6, de_ex))):
    hi = closed_form(Q0 + dlt, E) if j == 0 else closed_form(Q0, E + dlt)
    lo = closed_form(Q0 - dlt, E) if j == 0 else closed_form(Q0, E - dlt)
    fd = (hi[0] - lo[0]) / (2 * dlt)
    c.check(c.rel(fd, ex) <= 1e-7, f"closed form derivative {j}: {ex!r} vs its own FD {fd!r}")

rk4 = ["-ts_type", "rk", "-ts_rk_type", "4"]
for dt in ("0.01", "1e-3"):
    s = c.run(exe, rk4 + ["-ts_dt", dt, "-hs_forward"])
    fg = s["forward_gradient"]
    got = [s["objective"][0], fg["p"][0][0], fg["p"][0][1], fg["u0"][0][0], fg["u0"][0][1]]
    want = [psi_ex, dq0_ex, de_ex, dq0_ex, dv0_ex]
    c.check(fg["u0_indices"] == [0, 1], f"u0_indices {fg['u0_indices']}")
    for name, a, b in zip(("psi", "dpsi/dq0", "dpsi/de", "dpsi/dq(0)", "dpsi/dv(0)"), got, want):
        print(f"RK4 dt={dt}: {name} forward {a!r}  closed form {b!r}  rel diff {c.rel(a, b):.2e}")
        c.check(c.rel(a, b) <= 1e-8, f"RK4 dt={dt}: {name} {a!r} vs closed form {b!r}")

# Must-fail: without R_u = diag(1, −e) and ∂v⁺/∂e = −v⁻ the e-derivative is lost.
s = c.run(exe, rk4 + ["-hs_forward", "-hs_test_drop_reset_terms"])
de_drop = s["forward_gradient"]["p"][0][1]
print(f"without the reset terms: dpsi/de = {de_drop!r} (closed form {de_ex!r}), dpsi/dq0 = {s['forward_gradient']['p'][0][0]!r}")
c.check(c.rel(de_drop, de_ex) >= 0.5, f"dropping the reset terms left dpsi/de = {de_drop!r}")

base = ["-hs_event_tol", "1e-13"]
par = [("-q0", Q0, 1e-5, 0), ("-e", E, 1e-6, 1)]
c.fd_check("CN dt=1e-3", exe, base + ["-ts_type", "cn", "-ts_dt", "1e-3"], par)
c.fd_check("RK4 dt=0.01", exe, base + rk4 + ["-ts_dt", "0.01"], par)
c.beuler_check("ball", exe, base, par, "1e-3", "1e-4")
sys.exit(c.summary_line())
