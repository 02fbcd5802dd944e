#!/usr/bin/env python3
"""Forward sensitivities of examples/galan_scalar (docs/validation.md, scalar hybrid ODE): dG/dp, G = ∫₀⁵ x dt.

Closed form. x is monotone, the events are the roots x_a < x_b < x_c of h(x) = x³ − 5x² + 7x = p
(rising, falling, rising), dx_i/dp = 1/h'(x_i). Mode 1 (ẋ = 4 − x) gives ∫x = 4Δt − Δx, mode 2
(ẋ = 10 − 2x) gives ∫x = 5Δt − Δx/2, hence
    G = 5T − t_a − Δ_bc − (x_a − x_b + x_c + x_T)/2,
    t_a = ln(4/(4 − x_a)),  Δ_ab = ½ ln((5 − x_a)/(5 − x_b)),  Δ_bc = ln((4 − x_b)/(4 − x_c)),
    t_c = t_a + Δ_ab + Δ_bc,  x_T = 5 − (5 − x_c) e^{−2(T − t_c)},
and dG/dp follows by the chain rule (the event-time sensitivities τ_p are t_a', t_b', t_c'; the
integrand r = x is continuous, so its jump r⁻ − r⁺ contributes 0). Published: −2.31195.
Checks:
  * the closed form against central differences of itself;
  * forward (RK4, dt = 1e-3) = closed form ≤ 1e-8 relative (gradient and G); CN at the default
    dt = 0.01 ≤ 1e-4;
  * must-fail: -hs_test_drop_event_time_term makes the gradient 0;
  * forward vs central FD of G of the same method ≤ 1e-6 (-hs_event_tol 1e-13): CN dt = 1e-3,
    RK4 dt = 0.01; BEULER dt 1e-3 and 1e-4 ≤ 1e-6 (discrete event derivative; continuous must miss: fwd_common.beuler_check).
"""
import argparse, math, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwd_common as c

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
args = ap.parse_args()
exe = os.path.join(args.build, "examples", "galan_scalar")
T, P = 5.0, 2.9


def h(x):
    return ((x - 5) * x + 7) * x


def hp(x):
    return (3 * x - 10) * x + 7


def root(a, b, p):
    fa = h(a) - p
    for _ in range(200):
        m = 0.5 * (a + b)
        if m in (a, b):
            break
        fm = h(m) - p
        if (fm > 0) == (fa > 0):
            a, fa = m, fm
        else:
            b = m
    return 0.5 * (a + b)


def closed_form(p):
    """(G, dG/dp) for the three-event topology of p ∈ (h(7/3), 3)."""
    xa, xb, xc = root(0, 1, p), root(1, 7 / 3, p), root(7 / 3, 5, p)
    ta = math.log(4 / (4 - xa))
    dab = 0.5 * math.log((5 - xa) / (5 - xb))
    dbc = math.log((4 - xb) / (4 - xc))
    tc = ta + dab + dbc
    E = math.exp(-2 * (T - tc))
    xT = 5 - (5 - xc) * E
    G = 5 * T - ta - dbc - (xa - xb + xc + xT) / 2
    a, b, cc = 1 / hp(xa), 1 / hp(xb), 1 / hp(xc)
    ta_p = a / (4 - xa)
    dab_p = 0.5 * (-a / (5 - xa) + b / (5 - xb))
    dbc_p = -b / (4 - xb) + cc / (4 - xc)
    tc_p = ta_p + dab_p + dbc_p
    xT_p = E * (cc - 2 * (5 - xc) * tc_p)
    return G, -ta_p - dbc_p - (a - b + cc + xT_p) / 2


G_ex, dG_ex = closed_form(P)
print(f"closed form: G = {G_ex!r}, dG/dp = {dG_ex!r} (published -2.31195)")
self_fd = (closed_form(P + 1e-6)[0] - closed_form(P - 1e-6)[0]) / 2e-6
c.check(c.rel(self_fd, dG_ex) <= 1e-8, f"closed form dG/dp {dG_ex!r} vs its own FD {self_fd!r}")
c.check(abs(dG_ex - (-2.31195)) <= 5e-6, f"closed form {dG_ex!r} vs published -2.31195")

rk4 = ["-ts_type", "rk", "-ts_rk_type", "4"]
for label, opts, tol in (("RK4 dt=1e-3", rk4 + ["-ts_dt", "1e-3"], 1e-8), ("CN dt=0.01", ["-ts_type", "cn", "-ts_dt", "0.01"], 1e-4)):
    s = c.run(exe, opts + ["-hs_forward"])
    g, G = s["forward_gradient"]["p"][0][0], s["objective"][0]
    print(f"{label}: forward dG/dp = {g!r} (rel {c.rel(g, dG_ex):.2e}), G = {G!r} (rel {c.rel(G, G_ex):.2e})")
    c.check(c.rel(g, dG_ex) <= tol, f"{label}: dG/dp {g!r} vs closed form {dG_ex!r}")
    c.check(c.rel(G, G_ex) <= tol, f"{label}: G {G!r} vs closed form {G_ex!r}")

# Must-fail: p enters only the guards, so without the event-time term the gradient vanishes.
s = c.run(exe, rk4 + ["-ts_dt", "1e-3", "-hs_forward", "-hs_test_drop_event_time_term"])
g = s["forward_gradient"]["p"][0][0]
print(f"without the event-time term: dG/dp = {g!r}")
c.check(abs(g) <= 1e-14 and c.rel(g, dG_ex) >= 0.5, f"dropping the event-time term left dG/dp = {g!r}")

base = ["-hs_event_tol", "1e-13"]
par = [("-p", P, 1e-5, 0)]
c.fd_check("CN dt=1e-3", exe, base + ["-ts_type", "cn", "-ts_dt", "1e-3"], par)
c.fd_check("RK4 dt=0.01", exe, base + rk4 + ["-ts_dt", "0.01"], par)
c.beuler_check("galan", exe, base, par, "1e-3", "1e-4")
sys.exit(c.summary_line())
