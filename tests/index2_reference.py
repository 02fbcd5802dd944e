#!/usr/bin/env python3
"""An independent reference for the index-2 discrete derivatives: examples/pendulum_impact in
Cartesian (GGL) form without impacts (-wall -0.95), backward Euler, against the same discrete
map and its exact tangent computed here in 40-digit arithmetic (mpmath).

The discrete map (docs/index2-daes.md): u = (x, y, vx, vy, λ, μ), one backward Euler step
    (x⁺ − x)/h = vx⁺ + x⁺μ⁺,  (y⁺ − y)/h = vy⁺ + y⁺μ⁺,  (vx⁺ − vx)/h = −x⁺λ⁺,
    (vy⁺ − vy)/h = −g − y⁺λ⁺,  0 = ½(x⁺² + y⁺² − L²),  0 = x⁺vx⁺ + y⁺vy⁺,
from x0 = L sin θ0, y0 = −L cos θ0 at rest; costs ψ = ½|v(T)|² + g y(T) and Σ h x_n² (the
integral under backward Euler's quadrature). Its tangent S⁺ = A⁻¹(M S/h + ∂/∂p) with
A = M/h − f_u is solved here to 40 digits, the Newton iterations to 1e-35.

The step 2⁻¹⁰ makes every time t_n = n/1024 exact in binary, so the library's steps are exactly h
and the reference needs no knowledge of how the library rounds its times. Asserted: the
library's forward AND adjoint gradients (d/dL, d/dθ0 of both costs) within 1e-13 of the
reference, relative to each cost's largest entry; the costs within 1e-13. Before the adjoint
stepped back with the step sizes taken (it rebuilt them from the stored times), the adjoint was
off by 3e-12 at T = 3 with dt = 1e-3 while the forward stayed within 2e-14 (measured when the
defect was found; tests/example_index2.py keeps the must-fail for it).

Runs the reference in a Python that has mpmath (Debian: python3-mpmath, installed by
scripts/install-deps); fails, not skips, without one.
"""
import argparse, json, os, subprocess, sys, tempfile

G = 9.81


def reference(T, h, dps):
    import mpmath as mp
    mp.mp.dps = dps
    h = mp.mpf(h)
    L, th0 = mp.mpf(1), mp.mpf(1)
    N = int(mp.nint(mp.mpf(T) / h))
    tol = mp.mpf(10) ** (-(dps - 5))

    def f(U):
        x, y, vx, vy, lam, mu = U
        return [vx + x * mu, vy + y * mu, -x * lam, -G - y * lam, (x * x + y * y - L * L) / 2, x * vx + y * vy]

    def step_matrix(U):  # A = M/h − f_u
        x, y, vx, vy, lam, mu = U
        fu = [[mu, 0, 1, 0, 0, x], [0, mu, 0, 1, 0, y], [-lam, 0, 0, 0, -x, 0], [0, -lam, 0, 0, -y, 0], [x, y, 0, 0, 0, 0], [vx, vy, x, y, 0, 0]]
        return [[(1 / h if (i == j and i < 4) else 0) - fu[i][j] for j in range(6)] for i in range(6)]

    def lu(A):  # partial pivoting, in place on a copy
        A = [row[:] for row in A]
        perm = list(range(6))
        for k in range(6):
            p = max(range(k, 6), key=lambda i: abs(A[i][k]))
            A[k], A[p], perm[k], perm[p] = A[p], A[k], perm[p], perm[k]
            for i in range(k + 1, 6):
                A[i][k] /= A[k][k]
                for j in range(k + 1, 6):
                    A[i][j] -= A[i][k] * A[k][j]
        return A, perm

    def solve(F, b):
        A, perm = F
        z = [b[perm[i]] for i in range(6)]
        for i in range(6):
            for j in range(i):
                z[i] -= A[i][j] * z[j]
        for i in reversed(range(6)):
            for j in range(i + 1, 6):
                z[i] -= A[i][j] * z[j]
            z[i] /= A[i][i]
        return z

    u = [L * mp.sin(th0), -L * mp.cos(th0), mp.mpf(0), mp.mpf(0), mp.mpf(0), mp.mpf(0)]
    S = [[mp.sin(th0), L * mp.cos(th0)], [-mp.cos(th0), L * mp.sin(th0)]] + [[mp.mpf(0), mp.mpf(0)] for _ in range(4)]  # d/dL, d/dθ0
    ms, dms = mp.mpf(0), [mp.mpf(0), mp.mpf(0)]
    for _ in range(N):
        X = list(u)
        for _ in range(100):
            F = f(X)
            R = [(X[i] - u[i]) / h - F[i] for i in range(4)] + [-F[4], -F[5]]
            d = solve(lu(step_matrix(X)), R)
            X = [X[i] - d[i] for i in range(6)]
            if max(abs(v) for v in d) < tol:
                break
        else:
            raise RuntimeError("reference Newton did not converge")
        Fac = lu(step_matrix(X))
        # A S⁺ = M S/h − ∂R/∂p; the position constraint's row −½(x² + y² − L²) has ∂/∂L = L.
        cols = [solve(Fac, [S[i][k] / h for i in range(4)] + [-L if k == 0 else mp.mpf(0), mp.mpf(0)]) for k in range(2)]
        S = [[cols[k][i] for k in range(2)] for i in range(6)]
        u = X
        ms += h * X[0] ** 2
        for k in range(2):
            dms[k] += h * 2 * X[0] * S[0][k]
    x, y, vx, vy, lam, mu = u
    return {"objective": [float((vx * vx + vy * vy) / 2 + G * y), float(ms)],
            "gradient": [[float(vx * S[2][k] + vy * S[3][k] + G * S[1][k]) for k in range(2)], [float(v) for v in dms]]}


def python_with_mpmath():
    for candidate in (sys.executable, "/usr/bin/python3"):
        if os.path.exists(candidate) and subprocess.run([candidate, "-c", "import mpmath"], capture_output=True).returncode == 0:
            return candidate
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build")
    ap.add_argument("--reference", nargs=3, metavar=("T", "H", "DPS"), help="print the reference as JSON (internal)")
    args = ap.parse_args()
    if args.reference:
        T, h, dps = args.reference
        print(json.dumps(reference(float(T), float(h), int(dps))))
        return 0
    T, h = 3.0, 2.0 ** -10
    exe = os.path.join(args.build, "examples", "pendulum_impact")
    failures = []
    with tempfile.TemporaryDirectory() as d:
        summary = os.path.join(d, "s.json")
        cmd = [exe, "-wall", "-0.95", "-ts_dt", repr(h), "-ts_max_time", repr(T), "-hs_forward", "-hs_adjoint", "-hs_summary", summary]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if res.returncode != 0:
            print(f"FAIL: {' '.join(cmd)} exited with {res.returncode}\n{res.stdout}{res.stderr[-3000:]}")
            return 1
        s = json.load(open(summary))
    python = python_with_mpmath()
    if python is None:
        print("FAIL: no Python with mpmath (Debian: apt-get install python3-mpmath; scripts/install-deps installs it)")
        return 1
    ref = json.loads(subprocess.run([python, os.path.abspath(__file__), "--reference", repr(T), repr(h), "40"], capture_output=True, text=True,
                                    check=True, timeout=1200).stdout)
    names = s["parameter_names"]
    cols = [names.index("L"), names.index("theta0")]
    print(f"T = {T}, dt = 2^-10 ({len(s['events'])} impacts), 40-digit reference of the same discrete map")
    for k, cost in enumerate(s["costs"] if isinstance(s["costs"][0], str) else [c["name"] for c in s["costs"]]):
        scale = max(abs(v) for v in ref["gradient"][k])
        e_obj = abs(s["objective"][k] - ref["objective"][k]) / abs(ref["objective"][k])
        print(f"  {cost}: value {s['objective'][k]:.16g} (reference {ref['objective'][k]:.16g}, relative error {e_obj:.1e})")
        if not e_obj <= 1e-13:
            failures.append(f"{cost}: value off by {e_obj:.3g}")
        for key in ("forward_gradient", "gradient"):
            got = [s[key]["p"][k][c] for c in cols]
            err = max(abs(a - b) for a, b in zip(got, ref["gradient"][k])) / scale
            print(f"    {key:16s} d/dL, d/dtheta0 = {got[0]:.16g}, {got[1]:.16g}: off by {err:.1e} (reference {ref['gradient'][k][0]:.16g}, {ref['gradient'][k][1]:.16g})")
            if not err <= 1e-13:
                failures.append(f"{cost} {key}: off the reference by {err:.3g}")
    if len(s["events"]) != 0:
        failures.append(f"expected no impact with -wall -0.95, got {len(s['events'])}")
    for f in failures:
        print("FAIL:", f)
    print("PASSED" if not failures else "FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
