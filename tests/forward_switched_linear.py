#!/usr/bin/env python3
"""Forward sensitivities of examples/switched_linear (docs/validation.md, switched linear system) against PETSc's
hand-coded hybrid/ex1fwd (tangent linear) and ex1fd (one-sided FD, δ = 1e-8), and against
central FD of our own example. Costs J_k = x_k(T), T = 0.125.
  * ex1fwd (CN, dt = 1/256 and 1e-4, -ts_event_tol 1e-12, run in a temp dir; last line of
    fwd_sp.out is "t dx0/dλ1 dx1/dλ1"): ex1fwd hand-codes the continuous jump (u̇⁻, u̇⁺), so
    our -hs_event_derivative continuous must agree ≤ 1e-6 relative (same formula, same
    trajectory); the default discrete derivative differs from it by O(h²) (9e-4 at 1/256);
  * ex1fd dx(T)/dx(0) vs forward_gradient u0 (discrete, the derivative of the same computed
    map ex1fd differences): ex1fd prints 6 decimals; asserted ≤ 2e-4 absolute at dt = 1/256
    and ≤ 1e-5 at dt = 1e-4 (ex1fd's one-sided δ = 1e-8 FD noise is ~4e-6);
  * our forward vs central FD of our own x(T) (-p0, -p1 ± 1e-5, -hs_event_tol 1e-13) ≤ 1e-6:
    CN at dt = 1/256 and 5e-5, RK4 at dt = 1e-3;
    BEULER dt 1e-3 and 1e-4 ≤ 1e-6 (discrete event derivative; continuous must miss: fwd_common.beuler_check).
"""
import argparse, os, re, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwd_common as c

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
args = ap.parse_args()
ours = os.path.join(os.path.abspath(args.build), "examples", "switched_linear")
ex1fwd = os.path.join(os.path.abspath(args.build), "tests", "petsc_hybrid_ex1fwd")
ex1fd = os.path.join(os.path.abspath(args.build), "tests", "petsc_hybrid_ex1fd")

for dt in (None, "1e-4"):
    extra = ["-ts_dt", dt] if dt else []
    label = f"dt={dt or '1/256'}"
    s = c.run(ours, ["-hs_forward"] + extra)
    gu = s["forward_gradient"]["u0"]
    gp = c.run(ours, ["-hs_forward", "-hs_event_derivative", "continuous"] + extra)["forward_gradient"]["p"]
    c.check(s["forward_gradient"]["u0_indices"] == [0, 1], f"u0_indices {s['forward_gradient']['u0_indices']}")
    if os.path.exists(ex1fwd):
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([ex1fwd, "-ts_event_tol", "1e-12"] + extra, cwd=d, capture_output=True, text=True, check=True)
            last = open(os.path.join(d, "fwd_sp.out")).read().split("\n")
            last = [l for l in last if l.strip()][-1].split()
        c.check(abs(float(last[0]) - 0.125) < 1e-12, f"ex1fwd last line at t = {last[0]}")
        for k in (0, 1):
            peer = float(last[1 + k])
            print(f"{label}: dx{k}(T)/dp0 ours {gp[k][0]!r}  ex1fwd {peer!r}  rel diff {c.rel(gp[k][0], peer):.2e}")
            c.check(c.rel(gp[k][0], peer) <= 1e-6, f"{label}: dx{k}(T)/dp0 {gp[k][0]!r} vs ex1fwd {peer!r}")
    else:
        c.check(False, "PETSc's hybrid/ex1fwd is not built (libpetsc3.18-dev-examples)")
    if os.path.exists(ex1fd):
        out = subprocess.run([ex1fd, "-ts_event_tol", "1e-12"] + extra, capture_output=True, text=True, check=True).stdout
        m = re.findall(r"d x1\(tf\) /d x(\d)\(t0\) = (\S+) d x2\(tf\) / d x\d\(t0\) = (\S+)", out)
        c.check(len(m) == 2, f"ex1fd output not understood:\n{out}")
        tol = 2e-4 if dt is None else 1e-5
        for col, a, b in m:
            j = int(col) - 1  # ex1fd's x1, x2 are our x0, x1
            for k, v in ((0, float(a)), (1, float(b))):
                diff = abs(gu[k][j] - v)
                print(f"{label}: dx{k}(T)/dx{j}(0) ours {gu[k][j]:.9f}  ex1fd {v:.6f}  abs diff {diff:.2e}")
                c.check(diff <= tol, f"{label}: dx{k}(T)/dx{j}(0) {gu[k][j]!r} vs ex1fd {v} (> {tol:g})")
        mp = re.search(r"d x1\(tf\) /d p = (\S+) d x2\(tf\) / d p = (\S+)", out)
        if mp:
            gd = s["forward_gradient"]["p"]
            # The discrete event derivative is the derivative of the map ex1fd differences. At
            # dt = 1e-4 ex1fd's one-sided δ = 1e-8 in p against TSEvent's located time is noise
            # (1.4e-4 off our own central FD, which agrees with ours to 1e-10): printed only.
            for k in (0, 1):
                diff = abs(gd[k][0] - float(mp.group(1 + k)))
                print(f"{label}: dx{k}(T)/dp0 ours {gd[k][0]:.9f}  ex1fd {mp.group(1 + k)}  abs diff {diff:.2e}")
                if dt is None:
                    c.check(diff <= 1e-5, f"{label}: dx{k}(T)/dp0 {gd[k][0]!r} vs ex1fd {mp.group(1 + k)} (> 1e-5)")
    else:
        c.check(False, "PETSc's hybrid/ex1fd is not built (libpetsc3.18-dev-examples)")

base = ["-hs_event_tol", "1e-13"]
par = [("-p0", 2.75, 1e-5, 0), ("-p1", 0.36, 1e-5, 1)]
c.fd_check("CN dt=1/256", ours, base + ["-ts_type", "cn"], par, state_costs=True)
c.fd_check("CN dt=5e-5", ours, base + ["-ts_type", "cn", "-ts_dt", "5e-5"], par, state_costs=True)
c.fd_check("RK4 dt=1e-3", ours, base + ["-ts_type", "rk", "-ts_rk_type", "4", "-ts_dt", "1e-3"], par, state_costs=True)
c.beuler_check("switched", ours, base, par, "1e-3", "1e-4", state_costs=True)
sys.exit(c.summary_line())
