#!/usr/bin/env python3
"""scalar_measurements (VALIDATION.md V11): J = Σ 1/x(t_i)², dJ/da, dJ/dx0 against the closed
form (published: 109.585, 118.17, -50.5), by forward sensitivities and by the adjoint, which
must agree to round-off; with RK4 at dt = 1e-3 the closed form is met to 1e-9; CN converges at
second order; the result is the same at 1, 2 and 3 ranks."""
import argparse, json, os, subprocess, sys, tempfile

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


def run(opts, np=1):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "s.json")
        cmd = [exe] + opts + ["-hs_forward", "-hs_adjoint", "-hs_summary", out]
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
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
