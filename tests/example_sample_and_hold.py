#!/usr/bin/env python3
"""examples/sample_and_hold (memory that never fades, ẋ ≠ 0 at every capture) against its closed
form, differentiated exactly with dual numbers (tests/dual.py) — the proof that the memory
slots carry TOTAL derivatives of the captured values.

Closed form: with the held sample m and ρ = k/a, a segment starting at (τ_i, x_i) is
x(s) = (x_i − ρm) e^{as} + ρm; the next sample is the first s > 0 where x − m = ±δ,
e^{as} = (m ± δ − ρm)/(x_i − ρm); then m⁺ = x⁻ = m ± δ. ∫x² and ∫(km)² per segment are
elementary. Variables: (a, k, δ, x₀) and the initial-state perturbations (x(0), m(0)).

Checks (RK4 dt = 1e-3 unless noted):
  * samples: count, times (≤ 1e-10), guards, captured values (≤ 1e-12) as the closed form;
  * costs (≤ 1e-10 relative) and every gradient entry, parameters and initial state, forward
    and adjoint, vs the closed form (≤ 1e-8 of the largest entry of the cost);
  * forward = adjoint ≤ 1e-12 (max over entries relative to the largest entry);
  * central finite differences of the example itself ≤ 1e-6 (relative to the largest entry);
  * must-fail: [SerbanRecuero2019]'s partial memory derivative (-hs_test_memory_partial_derivative) and
    dropping the event-time terms (-hs_test_drop_event_time_term) are wrong by far more than 1 %,
    because ẋ⁻ τ_p ≠ 0 here (in hysteresis_oscillator the same switches change nothing);
  * Crank–Nicolson (dt = 1e-3): forward = adjoint ≤ 1e-12, closed form ≤ 1e-5 (O(h²));
  * 2 MPI ranks reproduce the serial run (≤ 1e-12).
"""
import argparse, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dual  # noqa: E402
from dual import Dual  # noqa: E402
import fwd_common as fc  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--mpiexec", default="mpiexec")
args = ap.parse_args()
exe = os.path.join(args.build, "examples", "sample_and_hold")
check, rel = fc.check, fc.rel
P0 = [0.5, 1.5, 0.15, 1.0]  # a, k, δ, x₀
W, T = 0.1, 10.0


def closed_form(p, T=T, w=W):
    """Samples [(t, guard, m⁺)], J₁ = ∫x² + w(km)², J₂ = x(T); all Duals over (a, k, δ, x₀, x(0), m(0))."""
    n = 6
    a, k, delta, x0 = (Dual.variable(p[i], i, n) for i in range(4))
    x = x0 + Dual.variable(0.0, 4, n)
    m = x0 + Dual.variable(0.0, 5, n)
    rho = k / a
    t, J1, samples = Dual(0.0, n=n), Dual(0.0, n=n), []
    while True:
        C, D = x - rho * m, rho * m
        best = None
        for guard, y in (("upper", m + delta), ("lower", m - delta)):
            arg = (y - D) / C
            if arg.v > 0:
                s = dual.log(arg) / a
                if s.v > 1e-12 and (best is None or s.v < best[0].v):
                    best = (s, guard, y)
        last = best is None or (t + best[0]).v > T
        s = (T - t) if last else best[0]
        e1 = dual.exp(a * s)
        J1 = J1 + C * C * (e1 * e1 - 1) / (2 * a) + 2 * C * D * (e1 - 1) / a + D * D * s + w * k * k * m * m * s
        if last:
            return samples, J1, C * e1 + D
        t = t + s
        x = m = best[2]  # the sample: x⁻ = m ± δ is captured
        samples.append((t, best[1], m))


def run(opts, np=1):
    import json, subprocess, tempfile
    with tempfile.TemporaryDirectory() as d:
        summary = os.path.join(d, "s.json")
        cmd = ([args.mpiexec, "-n", str(np), "--oversubscribe"] if np > 1 else []) + [exe, "-hs_summary", summary] + opts
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited with {res.returncode}:\n{res.stdout}\n{res.stderr}")
        s = json.load(open(summary))
    s["stdout"] = res.stdout
    return s


def scaled_diff(a, b):
    """max |a − b| relative to max |b| (b: reference rows of one cost)."""
    return max(abs(x - y) for x, y in zip(a, b)) / max(max(abs(y) for y in b), 1e-300)


ref_samples, J1, J2 = closed_form(P0)
ref_obj = [J1.v, J2.v]
ref_grad = [J1.d, J2.d]  # 4 parameters, then x(0), m(0)
print(f"closed form: {len(ref_samples)} samples, J1 = {J1.v:.15g}, J2 = {J2.v:.15g}")
print("  dJ1 =", [f"{g:.12g}" for g in J1.d])
print("  dJ2 =", [f"{g:.12g}" for g in J2.d])

s = run(["-hs_forward", "-hs_adjoint"])
ev = s["events"]
# "  sample t = <t>  <guard>  m = x- = <m>  xdot- = <xdot>"
rows = [l.split() for l in s["stdout"].splitlines() if l.strip().startswith("sample t =")]
check(len(ev) == len(ref_samples) == len(rows), f"{len(ev)} samples ({len(rows)} printed), closed form {len(ref_samples)}")
for (t, guard, m), e, r in zip(ref_samples, ev, rows):
    check(float(r[3]) == e["time"], f"printed time {r[3]} vs JSON {e['time']!r}")
    check(abs(e["time"] - t.v) <= 1e-10, f"sample time {e['time']!r} vs closed form {t.v!r}")
    check(e["guard"] == guard, f"sample at {t.v:.6f}: guard {e['guard']} vs closed form {guard}")
    mm, xdot = float(r[9]), float(r[12])
    check(abs(mm - m.v) <= 1e-12, f"captured m = {mm!r} vs closed form {m.v!r}")
    check(abs(xdot) > 0.1, f"sample at {t.v:.6f}: xdot- = {xdot} (this example needs ẋ ≠ 0 at every capture)")
for k in range(2):
    check(rel(s["objective"][k], ref_obj[k]) <= 1e-10, f"cost {k}: {s['objective'][k]!r} vs closed form {ref_obj[k]!r}")
    for key in ("forward_gradient", "gradient"):
        got = s[key]["p"][k] + s[key]["u0"][k]
        err = scaled_diff(got, ref_grad[k])
        print(f"cost {k} {key}: vs closed form {err:.2e}")
        check(err <= 1e-8, f"cost {k} {key} {got} vs closed form {ref_grad[k]} ({err:.3g})")
    fa = s["forward_gradient"]["p"][k] + s["forward_gradient"]["u0"][k]
    ad = s["gradient"]["p"][k] + s["gradient"]["u0"][k]
    err = scaled_diff(ad, fa)
    print(f"cost {k}: adjoint vs forward {err:.2e}")
    check(err <= 1e-12, f"cost {k}: adjoint {ad} vs forward {fa} ({err:.3g})")

# Central differences of the example itself (step per parameter).
steps = {"-a": 1e-6, "-k": 1e-6, "-delta": 1e-7, "-x0": 1e-6}
for k in range(2):
    fd = [fc.central_fd(exe, [], opt, P0[j], steps[opt], cost=k) for j, opt in enumerate(steps)]
    err = scaled_diff(s["gradient"]["p"][k], fd)
    print(f"cost {k}: adjoint vs central FD {err:.2e}  (FD {fd})")
    check(err <= 1e-6, f"cost {k}: adjoint {s['gradient']['p'][k]} vs FD {fd} ({err:.3g})")

# Must-fail: the partial derivative of [SerbanRecuero2019], and no event-time terms at all.
for switch in ("-hs_test_memory_partial_derivative", "-hs_test_drop_event_time_term"):
    b = run(["-hs_forward", "-hs_adjoint", switch])
    for k in range(2):
        err = scaled_diff(b["gradient"]["p"][k] + b["gradient"]["u0"][k], ref_grad[k])
        print(f"{switch}: cost {k} wrong by {err:.2e} (must be > 1e-2)")
        check(err > 1e-2, f"{switch}: cost {k} gradient still matches the closed form ({err:.3g})")

# Crank–Nicolson: second order, exact discrete consistency.
c = run(["-hs_forward", "-hs_adjoint", "-ts_type", "cn"])
for k in range(2):
    fa = c["forward_gradient"]["p"][k] + c["forward_gradient"]["u0"][k]
    ad = c["gradient"]["p"][k] + c["gradient"]["u0"][k]
    e1, e2 = scaled_diff(ad, fa), scaled_diff(ad, ref_grad[k])
    print(f"CN cost {k}: adjoint vs forward {e1:.2e}, vs closed form {e2:.2e}")
    check(e1 <= 1e-12, f"CN cost {k}: adjoint vs forward {e1:.3g}")
    check(e2 <= 1e-5, f"CN cost {k}: adjoint vs closed form {e2:.3g}")

p2 = run(["-hs_adjoint"], np=2)
for k in range(2):
    err = scaled_diff(p2["gradient"]["p"][k] + p2["gradient"]["u0"][k], s["gradient"]["p"][k] + s["gradient"]["u0"][k])
    check(err <= 1e-12, f"np=2 cost {k}: adjoint differs from serial by {err:.3g}")
    print(f"np=2 cost {k}: vs serial {err:.2e}")

sys.exit(fc.summary_line())
