#!/usr/bin/env python3
"""lorenz_sysid (docs/validation.md; [Nandi2018] §8.1): Lorenz-63 system identification with exact Hessians.

Asserted:
  * at the truth the Hessian equals 2 Σ S_iᵀ S_i (forward sensitivities, an independent code
    path: PETSc's TSForward TLM) to ≤ 1e-10, by forward-over-adjoint and by the hybrid formula;
  * at the guess q0 the Hessian is symmetric (≤ 1e-10), forward-over-adjoint = hybrid (≤ 1e-10)
    and equals central differences of the adjoint gradient (≤ 1e-7, -hs_check_hessian);
  * from q0 = (20, 75, 10, 10, 15) TAO BNTR with the exact Hessian recovers the truth to ≤ 1e-8
    relative, assembled and matrix-free; BLMVM with the adjoint gradient too; BLMVM with TAO's
    finite-difference gradient needs several times more simulations per iteration (run for 10
    iterations only: the whole FD fit takes ~10 s);
  * 2 ranks give the serial Hessian at q0 (a whole fit at 2 ranks takes minutes on a loaded
    2-core machine: every step of this 3-state model is a handful of collectives).
"""
import argparse, json, os, re, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--mpiexec", default="mpiexec")
args = ap.parse_args()
exe = os.path.join(args.build, "examples", "lorenz_sysid")
passed = failed = 0


def check(name, ok, detail):
    global passed, failed
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")
    passed += ok
    failed += not ok


def run(opts, np=1):
    with tempfile.TemporaryDirectory() as d:
        fits, summary = os.path.join(d, "fits.json"), os.path.join(d, "s.json")
        cmd = [exe] + opts + ["-fit_summary", fits, "-hs_summary", summary]
        if np > 1:
            cmd = [args.mpiexec, "-n", str(np), "--oversubscribe"] + cmd
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            print(res.stdout, res.stderr)
            raise SystemExit(f"{' '.join(cmd)} failed")
        out = {"stdout": res.stdout, "summary": json.load(open(summary))}
        out["fits"] = {f["name"]: f for f in json.load(open(fits))["fits"]} if os.path.exists(fits) else {}
        return out


# Truth check, all three fits, derivatives at q0.
r = run(["-check_truth", "-fit", "newton,blmvm,fd", "-fd_tao_max_it", "10", "-hs_hessian", "-hs_adjoint"])
m = re.search(r"check_truth: .*forward-over-adjoint ([0-9.e+-]+), hybrid ([0-9.e+-]+)", r["stdout"])
check("truth check printed", m is not None, "")
if m:
    check("H(q*) = 2 sum S^T S (forward-over-adjoint)", float(m.group(1)) <= 1e-10, m.group(1))
    check("H(q*) = 2 sum S^T S (hybrid)", float(m.group(2)) <= 1e-10, m.group(2))
H = r["summary"]["hessian"][0]
scale = max(abs(x) for row in H for x in row)
asym = max(abs(H[i][j] - H[j][i]) for i in range(5) for j in range(5)) / scale
check("H(q0) symmetric", asym <= 1e-10, f"{asym:.2e}")
fits = r["fits"]
for name in ("newton", "blmvm"):
    f = fits[name]
    check(f"{name} recovers the truth", f["max_rel_error"] <= 1e-8 and f["reason"].startswith("CONVERGED"),
          f"max rel {f['max_rel_error']:.2e} after {f['iterations']} iterations ({f['reason']})")
check("newton used the Hessian", fits["newton"]["hessians"] > 0, f"{fits['newton']['hessians']} Hessians")
per_it = lambda f: f["solves"] / max(f["iterations"], 1)
check("FD gradients need more simulations per iteration than adjoint gradients", per_it(fits["fd"]) > 3 * per_it(fits["blmvm"]),
      f"{per_it(fits['fd']):.1f} vs {per_it(fits['blmvm']):.1f} solves per iteration")

# Forward-over-adjoint vs hybrid at q0, and the FD check of the Hessian.
r2 = run(["-fit", "none", "-hs_hessian", "-hs_hessian_method", "foa", "-hs_check_hessian"])
H2 = r2["summary"]["hessian"][0]
d = max(abs(H[i][j] - H2[i][j]) for i in range(5) for j in range(5)) / scale
check(f"forward-over-adjoint = {r['summary']['hessian_method']} at q0", r2["summary"]["hessian_method"] == "foa" and d <= 1e-10, f"{d:.2e}")
m = re.search(r"vs FD of gradients ([0-9.e+-]+) .*: PASSED", r2["stdout"])
check("Hessian = FD of adjoint gradients at q0 (<= 1e-7)", m is not None and float(m.group(1)) <= 1e-7, m.group(1) if m else r2["stdout"][-300:])

# Matrix-free Newton, and 2 ranks.
r3 = run(["-fit", "newton", "-hs_tao_hessian", "matrix_free"])
f = r3["fits"]["newton"]
check("matrix-free Newton recovers the truth", f["max_rel_error"] <= 1e-8, f"max rel {f['max_rel_error']:.2e}, {f['hessians']} products")
r4 = run(["-fit", "none", "-hs_hessian"], np=2)
H4 = r4["summary"]["hessian"][0]
d = max(abs(H[i][j] - H4[i][j]) for i in range(5) for j in range(5)) / scale
check("2 ranks: the serial Hessian at q0", d <= 1e-12, f"{d:.2e}")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
