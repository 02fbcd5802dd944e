#!/usr/bin/env python3
"""Discrete consistency: the adjoint gradient equals the forward (tangent-linear) gradient to
round-off (≤ 1e-12 relative to the largest component) on every example, with CN, BEULER and
RK4, and at 1, 2 and 3 ranks (where the example runs distributed). Must-fail: switching a
jump term off in both sweeps keeps them equal to each other but moves them away from the
correct value — covered by tests/forward_*.py; here we check that the adjoint really uses the
jumps by comparing against the forward run WITH them while the adjoint drops them."""
import argparse, json, os, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--mpiexec", default="mpiexec")
args = ap.parse_args()
args.build = os.path.abspath(args.build)

methods = {"cn": ["-ts_type", "cn"], "beuler": ["-ts_type", "beuler"], "rk4": ["-ts_type", "rk", "-ts_rk_type", "4"]}
examples = {"switched_linear": [], "galan_scalar": ["-ts_dt", "0.01"], "bouncing_ball": ["-ts_dt", "0.01"]}
passed = failed = 0


def run(exe, opts, np=1):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "s.json")
        cmd = [os.path.join(args.build, "examples", exe)] + opts + ["-hs_summary", out]
        if np > 1:
            cmd = [args.mpiexec, "-n", str(np), "--oversubscribe"] + cmd
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        return json.load(open(out))


def flat(g):
    return [x for row in g["p"] for x in row] + [x for row in g["u0"] for x in row]


def reldiff(a, b):
    scale = max(max(abs(x) for x in a), 1e-300)
    return max(abs(x - y) for x, y in zip(a, b)) / scale


def check(name, ok, detail):
    global passed, failed
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")
    passed += ok
    failed += not ok


for ex, exopts in examples.items():
    for m, mopts in methods.items():
        serial = None
        for np in (1, 2, 3) if m == "cn" else (1,):
            s = run(ex, exopts + mopts + ["-hs_forward", "-hs_adjoint"], np)
            a, f = flat(s["gradient"]), flat(s["forward_gradient"])
            d = reldiff(a, f)
            check(f"{ex} {m} np={np} adjoint vs forward", d <= 1e-12, f"max rel diff {d:.2e} ({len(a)} entries)")
            if np == 1:
                serial = a
            else:
                d = reldiff(a, serial)
                check(f"{ex} {m} np={np} adjoint vs serial adjoint", d <= 1e-12, f"max rel diff {d:.2e}")
    # Must-fail: the adjoint without its event-time jump term disagrees with the forward gradient.
    s_ok = run(ex, exopts + ["-hs_forward"])
    s_bad = run(ex, exopts + ["-hs_adjoint", "-hs_test_drop_event_time_term"])
    d = reldiff(flat(s_bad["gradient"]), flat(s_ok["forward_gradient"]))
    check(f"{ex} adjoint without event-time term is wrong", d > 1e-3, f"rel diff {d:.2e}")

# Independent references for the adjoint itself.
s = run("galan_scalar", ["-ts_dt", "1e-3", "-hs_adjoint"])
g = s["gradient"]["p"][0][0]
check("galan_scalar adjoint dG/dp vs closed form -2.311953107443892 (RK4 dt 1e-3)", abs(g + 2.311953107443892) / 2.311953107443892 < 1e-8, f"{g:.15f}")
s = run("bouncing_ball", ["-ts_dt", "1e-3", "-hs_adjoint"])
g = s["gradient"]["p"][0]
ref = [30.16995023498324, 512.3907383625391]
check("bouncing_ball adjoint dpsi/d(q0, e) vs closed form", all(abs(a - b) / abs(b) < 1e-8 for a, b in zip(g, ref)), f"{g}")
# PETSc's hand-coded adjoint hybrid/ex1adj.c (writes adj_mu.out: T, dx0(T)/dp0, dx1(T)/dp0).
peer = os.path.join(args.build, "tests", "petsc_hybrid_ex1adj")
with tempfile.TemporaryDirectory() as d:
    subprocess.run([peer, "-ts_event_tol", "1e-12"], cwd=d, check=True, capture_output=True)
    ref = [float(x) for x in open(os.path.join(d, "adj_mu.out")).read().split()[1:3]]
for dt, tol in (("0.00390625", 1e-6), ("1e-4", 1e-11)):
    # ex1adj hand-codes the continuous jump: compare the same formula.
    s = run("switched_linear", ["-hs_adjoint", "-ts_dt", dt, "-hs_event_derivative", "continuous"])
    ours = [s["gradient"]["p"][0][0], s["gradient"]["p"][1][0]]
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([peer, "-ts_event_tol", "1e-12", "-ts_dt", dt], cwd=d, check=True, capture_output=True)
        ref = [float(x) for x in open(os.path.join(d, "adj_mu.out")).read().split()[1:3]]
    dd = max(abs(a - b) / abs(b) for a, b in zip(ours, ref))
    check(f"switched_linear dx(T)/dp0 vs PETSc ex1adj at dt {dt}", dd < tol, f"ours {ours} PETSc {ref} rel {dd:.1e}")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
