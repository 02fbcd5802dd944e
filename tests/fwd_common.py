"""Shared helpers of the forward-sensitivity tests (tests/forward_*.py): run an example binary
with -hs_summary, read the JSON, count checks, compare with relative tolerances."""
import json, os, subprocess, tempfile

passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"  FAIL: {what}")
    return ok


def rel(a, b):
    """|a − b| relative to |b| (b: the reference)."""
    return abs(a - b) / max(abs(b), 1e-300)


def run(exe, opts, cwd=None):
    with tempfile.TemporaryDirectory() as d:
        summary = os.path.join(d, "s.json")
        cmd = [exe, "-hs_summary", summary] + [str(o) for o in opts]
        res = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
        if res.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited with {res.returncode}:\n{res.stdout}\n{res.stderr}")
        return json.load(open(summary))


def central_fd(exe, opts, opt, value, delta, cost=0, key="objective", index=None):
    """(J(value + δ) − J(value − δ)) / 2δ of cost `cost` (or final_state[index])."""
    vals = []
    for v in (value + delta, value - delta):
        # The summary carries "objective" only with -hs_forward (the sensitivities are unused).
        s = run(exe, opts + [opt, repr(v)] + (["-hs_forward"] if index is None else []))
        vals.append(s[key][cost] if index is None else s["final_state"][index])
    return (vals[0] - vals[1]) / (2 * delta)


def summary_line():
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def fd_check(label, exe, opts, params, tol=1e-6, cost=0, state_costs=False):
    """Forward gradient vs central FD of the same run configuration, every (option, value, δ, column)."""
    s = run(exe, opts + ["-hs_forward"])
    gp = s["forward_gradient"]["p"]
    costs = range(len(gp)) if state_costs else [cost]
    for opt, value, delta, j in params:
        for k in costs:
            fd = central_fd(exe, opts, opt, value, delta, cost=k, index=k if state_costs else None)
            err = rel(gp[k][j], fd)
            print(f"{label}: d J{k}/d{opt[1:]} forward {gp[k][j]:.12g}  FD {fd:.12g}  rel diff {err:.2e}")
            check(err <= tol, f"{label}: forward {gp[k][j]!r} vs FD {fd!r} for {opt}, cost {k} (rel {err:.3g} > {tol:g})")


def beuler_check(label, exe, opts, params, coarse, fine, state_costs=False, cost=0):
    """Backward Euler, where the event-time derivative matters most: the discrete-exact event
    derivative (default) matches central FD of the computed objective to ≤ 1e-6 at both steps.
    Must-fail: with -hs_event_derivative continuous (u̇⁻/u̇⁺ in place of the steps' own
    derivatives, the continuous form of docs/theory.md §3) the gap at the coarse step is O(h) ≫ 1e-6."""
    for dt in (coarse, fine):
        o = opts + ["-ts_type", "beuler", "-ts_dt", dt]
        s = run(exe, o + ["-hs_forward"])
        sc = run(exe, o + ["-hs_forward", "-hs_event_derivative", "continuous"]) if dt == coarse else None
        gp = s["forward_gradient"]["p"]
        worst_continuous = 0.0
        for opt, value, delta, j in params:
            for k in (range(len(gp)) if state_costs else [cost]):
                fd = central_fd(exe, o, opt, value, delta, cost=k, index=k if state_costs else None)
                err = rel(gp[k][j], fd)
                print(f"{label} BEULER dt={dt}: d J{k}/d{opt[1:]} forward {gp[k][j]:.12g}  FD {fd:.12g}  rel diff {err:.2e}")
                check(err <= 1e-6, f"{label} BEULER dt={dt}: forward vs FD rel {err:.3g} > 1e-6 for {opt}, cost {k}")
                if sc:
                    worst_continuous = max(worst_continuous, rel(sc["forward_gradient"]["p"][k][j], fd))
        if sc:
            print(f"{label} BEULER dt={dt}: with -hs_event_derivative continuous the worst FD gap is {worst_continuous:.2e}")
            check(worst_continuous > 1e-5, f"{label} BEULER dt={dt}: the continuous event derivative should miss FD by O(h), "
                  f"worst gap only {worst_continuous:.3g}")
