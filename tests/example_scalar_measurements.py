#!/usr/bin/env python3
"""scalar_measurements (docs/validation.md; [Nandi2018] §3): J = Σ 1/x(t_i)², dJ/da, dJ/dx0 against the closed
form (published: 109.585, 118.17, -50.5), by forward sensitivities and by the adjoint, which
must agree to round-off; with RK4 at dt = 1e-3 the closed form is met to 1e-9; CN converges at
second order; the result is the same at 1, 2 and 3 ranks.
Hessian (-hs_hessian; published d²J/da² = 67.67, d²J/dx0² = 63.125, d²J/dx0da = -25.25): the
closed form to 1e-9 with RK4 at dt = 1e-3, symmetric, forward-over-adjoint = hybrid (≤ 1e-12),
the same at 1-3 ranks, second-order convergence with CN and first order with backward Euler."""
import argparse, json, math, os, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--mpiexec", default="mpiexec")
args = ap.parse_args()
exe = os.path.join(args.build, "examples", "scalar_measurements")

ts = [0.01 * i for i in range(101)]
J = sum((0.5 + t) ** 2 for t in ts)
dJda = sum(2 * (0.5 + t) * t for t in ts)
dJdx0 = -sum(2 * (0.5 + t) / 4 for t in ts)
passed = failed = 0


def run(opts, np=1, flags=("-hs_forward", "-hs_adjoint")):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "s.json")
        cmd = [exe] + opts + list(flags) + ["-hs_summary", out]
        if np > 1:
            cmd = [args.mpiexec, "-n", str(np), "--oversubscribe"] + cmd
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        return json.load(open(out))


def check(name, ok, detail):
    global passed, failed
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")
    passed += ok
    failed += not ok


rel = lambda a, b: abs(a - b) / abs(b)
print(f"closed form: J = {J:.12f}, dJ/da = {dJda:.12f}, dJ/dx0 = {dJdx0:.12f}")
for np in (1, 2, 3):
    s = run(["-ts_dt", "1e-3"], np)
    g, f = s["gradient"]["p"][0], s["forward_gradient"]["p"][0]
    check(f"np={np} RK4 J", rel(s["objective"][0], J) < 1e-9, f"{s['objective'][0]:.12f}")
    check(f"np={np} RK4 adjoint dJ/da", rel(g[0], dJda) < 1e-9, f"{g[0]:.12f}")
    check(f"np={np} RK4 adjoint dJ/dx0", rel(g[1], dJdx0) < 1e-9, f"{g[1]:.12f}")
    d = max(abs(a - b) for a, b in zip(g, f)) / max(abs(x) for x in g)
    check(f"np={np} adjoint vs forward", d < 1e-12, f"{d:.2e}")
errs = []
for dt in (1e-2, 5e-3):
    s = run(["-ts_type", "cn", "-ts_dt", str(dt)])
    errs.append(abs(s["gradient"]["p"][0][0] - dJda))
    d = max(abs(a - b) for a, b in zip(s["gradient"]["p"][0], s["forward_gradient"]["p"][0])) / abs(dJda)
    check(f"CN dt={dt} adjoint vs forward", d < 1e-12, f"{d:.2e}")
ratio = errs[0] / errs[1]
check("CN second-order convergence of dJ/da", 3.5 < ratio < 4.5, f"error ratio {ratio:.2f} ({errs[0]:.2e} -> {errs[1]:.2e})")

# ---- Hessian ---------------------------------------------------------------------------
Haa = sum(2 * t * t for t in ts)
Hxx = sum(2 / 16 + 4 * (0.5 + t) / 8 for t in ts)
Hax = -sum(2 * t / 4 for t in ts)
H = [[Haa, Hax], [Hax, Hxx]]
print(f"closed form Hessian: d2J/da2 = {Haa:.12f}, d2J/dx02 = {Hxx:.12f}, d2J/dadx0 = {Hax:.12f}")
check("published Hessian values", abs(Haa - 67.67) < 5e-3 and abs(Hxx - 63.125) < 1e-12 and abs(Hax + 25.25) < 1e-12,
      f"{Haa}, {Hxx}, {Hax}")
hess = {}
for np in (1, 2, 3):
    for method in (("foa", "hybrid") if np == 1 else ("foa",)):  # (test time: 2-3 ranks one method)
        s = run(["-ts_dt", "1e-3", "-hs_hessian_method", method], np, ("-hs_hessian",))
        Hc = s["hessian"][0]
        hess[(np, method)] = Hc
        check(f"np={np} {method}: JSON names the method", s["hessian_method"] == method, s["hessian_method"])
        err = max(rel(Hc[i][j], H[i][j]) for i in range(2) for j in range(2))
        check(f"np={np} {method} RK4 Hessian vs closed form", err < 1e-9, f"max rel {err:.2e}")
        asym = abs(Hc[0][1] - Hc[1][0]) / abs(Haa)
        check(f"np={np} {method} symmetric", asym < 1e-10, f"{asym:.2e}")
ref = hess[(1, "foa")]
d = max(abs(a - b) for (k, Hc) in hess.items() for ra, rb in zip(Hc, ref) for a, b in zip(ra, rb)) / abs(Haa)
check("forward-over-adjoint = hybrid, 1 = 2 = 3 ranks", d < 1e-12, f"{d:.2e}")
for ts_type, order in (("cn", 2), ("beuler", 1)):
    errs = []
    for dt in (1e-2, 5e-3):
        s = run(["-ts_type", ts_type, "-ts_dt", str(dt)], 1, ("-hs_hessian",))
        errs.append(max(abs(s["hessian"][0][i][j] - H[i][j]) for i in range(2) for j in range(2)))
    ratio = errs[0] / errs[1]
    check(f"{ts_type} Hessian converges at order {order}", abs(math.log2(ratio) - order) < 0.25,
          f"error ratio {ratio:.2f} ({errs[0]:.2e} -> {errs[1]:.2e})")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
