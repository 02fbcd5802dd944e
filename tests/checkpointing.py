#!/usr/bin/env python3
"""Checkpointed reverse sweeps (-hs_checkpoints K) give BIT-IDENTICAL results to full storage.

A step re-taken from a checkpoint repeats the step as it was taken: from the same state (the
event log's U⁺ after a transition), in the same mode, with the size the integrator took it with
(not one rebuilt from the stored times). So the records the reverse sweep reads, and everything
computed from them, are the same bits; the test asserts ==, no tolerance:
  * every example kind — ODE with resets (bouncing_ball), switched ODE (switched_linear,
    galan_scalar), memory (hysteresis_oscillator, ODE and DAE form), impacts
    (impact_oscillator), DAE (smib_optimization), grid (wecc9) — with K = 1, 2 and 7 (fewer
    than the events where the example has more; long runs K = 7 and 30, since K = 1 re-takes
    M²/2 steps), adjoint alone and with forward sensitivities (the gradients and the final
    sensitivity matrix), at 1 and 2 ranks; adaptive RK and BEULER with rejected attempts;
  * the Hessian sweeps (tangent sweep forward, second-order sweep backward) on lorenz_sysid
    and scalar_measurements;
  * checkpoints on disk (-hs_checkpoints_dir): same bits, nothing left in the directory;
  * the reverse sweep never looks for events: in -log_view's adjoint stage the re-taken steps
    (TSStep) appear, guard evaluation, event location and transitions do not; re-takes leave
    the sweep's evaluation cache alone (as many reused Jacobians as with full storage);
  * the JSON stats: at most K states held, re-taken steps counted (K = 1 re-takes M(M+1)/2 − M:
    quadratic, the binomial bound with no spare state).
Must-fail: re-taking steps with sizes rebuilt from the stored times (what PETSc's own
recomputation does; -hs_test_rebuilt_steps) changes the gradient bits — equality is
not a property every recomputation has.
Usage: checkpointing.py --build DIR [--mpiexec M] [--quick] [--only EXAMPLES] [--ranks 1,2]
"""
import argparse, json, os, re, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--mpiexec", default="mpiexec")
ap.add_argument("--quick", action="store_true", help="one-rank ODE cases only, with the -log_view and must-fail checks")
ap.add_argument("--only", default="", help="comma-separated examples to run (default all)")
ap.add_argument("--ranks", default="1,2", help="comma-separated rank counts to run (default 1,2)")
args = ap.parse_args()
args.build = os.path.abspath(args.build)
ranks = [int(r) for r in args.ranks.split(",")]
failed = passed = 0


def selected(example):
    return not args.only or example in args.only.split(",")


def finish():
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


def check(ok, what):
    global failed, passed
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    failed += not ok
    passed += ok


def run(example, opts, np=1, extra_out=False):
    exe = os.path.join(args.build, "examples", example)
    with tempfile.TemporaryDirectory() as d:
        summary = os.path.join(d, "s.json")
        cmd = ([args.mpiexec, "-n", str(np), "--oversubscribe"] if np > 1 else []) + [exe, "-hs_summary", summary] + opts
        res = subprocess.run(cmd, capture_output=True, text=True, cwd=d)
        if res.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited with {res.returncode}:\n{res.stdout[-2000:]}\n{res.stderr[-3000:]}")
        s = json.load(open(summary))
        s["_stdout"] = res.stdout
        s["_cwd_left"] = sorted(f for f in os.listdir(d) if f != "s.json")
    return s


def results(s):
    """Everything a sweep computes: gradients (adjoint, forward), final sensitivities, Hessian."""
    return {k: s[k] for k in ("gradient", "forward_gradient", "sensitivity_final", "hessian") if k in s}


# (example, options, distributed?) — each with its own cost and parameters.
CASES = [
    ("bouncing_ball", ["-ts_dt", "0.01"], True),
    ("switched_linear", [], True),
    ("galan_scalar", ["-ts_dt", "0.01"], True),
    # Adaptive steps with rejections inside TSStep: RK (whose rollback is arithmetic: the engine
    # re-takes the accepted attempt from the saved start) and BEULER (exact rollback).
    ("bouncing_ball", ["-ts_type", "rk", "-ts_rk_type", "2a", "-ts_adapt_type", "basic", "-ts_rtol", "1e-4", "-ts_atol", "1e-4", "-ts_dt", "0.5"], False),
    ("galan_scalar", ["-ts_type", "beuler", "-ts_adapt_type", "basic", "-ts_rtol", "1e-4", "-ts_atol", "1e-4", "-ts_dt", "0.1"], False),
    # The long runs cut to 8000 / 5000 steps: still more events (10 / 9) than K = 7 checkpoints.
    ("impact_oscillator", ["-ts_max_time", "40"], True),
    ("smib_optimization", ["-smib_optimize", "0", "-smib_fd", "0"], True),
    ("wecc9", ["-ts_max_time", "1.3"], True),
    ("hysteresis_oscillator", ["-ts_max_time", "5"], True),
    ("hysteresis_oscillator", ["-dae", "-ts_type", "cn", "-ts_dt", "1e-3", "-ts_max_time", "5"], True),
]
if args.quick:
    CASES = CASES[:5]
CASES = [c for c in CASES if selected(c[0])]

for example, opts, distributed in CASES:
    if not os.path.exists(os.path.join(args.build, "examples", example)):
        print(f"skip  {example} (not built)")
        continue
    for np in [n for n in ((1, 2) if distributed and not args.quick else (1,)) if n in ranks]:
        for flags in (["-hs_adjoint"], ["-hs_adjoint", "-hs_forward"]):
            # At 2 ranks the long runs stop earlier (every re-taken step costs collectives): 4000
            # and 2000 steps, still 5 and 3 events (the later -ts_max_time wins).
            if np > 1 and example in ("impact_oscillator", "hysteresis_oscillator"):
                flags = flags + ["-ts_max_time", "20" if example == "impact_oscillator" else "2"]
            name = f"{example} {' '.join(opts)} {' '.join(flags)} np={np}"
            full = run(example, opts + flags, np)
            steps, events = full["stats"]["steps"], full["stats"]["events"]
            if "-ts_adapt_type" in opts:
                check(full["stats"]["rejected_steps"] > 0, f"{name}: the controller rejected {full['stats']['rejected_steps']} attempts")
            # K = 1 re-takes M²/2 steps and K = 2 about M^1.5: only on runs of at most 1000 steps
            # (200 at 2 ranks, where every re-taken step costs collectives); longer runs K = 7, 30.
            short = steps <= (1000 if np == 1 and not args.quick else 200)
            ks = [1, 2, 7] if short and np == 1 else [2, 7] if short else [7, 30] if np == 1 else [30]
            for k in ks:
                s = run(example, opts + flags + ["-hs_checkpoints", str(k)], np)
                c = s["stats"].get("checkpointing", {})
                same = results(s) == results(full) and s["final_state"] == full["final_state"]
                check(same, f"{name} K={k} ({events} events, {steps} steps): results bit-identical to full storage"
                      + ("" if same else f"\n  full {results(full)}\n  K={k} {results(s)}"))
                # Re-takes run outside the reverse sweep's evaluation cache (Dynamics::setRetaking): the
                # sweep copies as many repeated Jacobians as with full storage (fewer if a re-take
                # between two reversed steps evicted the entry the second one reads).
                check(s["stats"]["reused_jacobians"] == full["stats"]["reused_jacobians"],
                      f"{name} K={k}: {s['stats']['reused_jacobians']} Jacobians reused in the reverse sweep, "
                      f"as with full storage ({full['stats']['reused_jacobians']})")
                check(0 < c.get("most_held", 0) <= k and c.get("recomputed_steps", 0) > 0,
                      f"{name} K={k}: {c.get('most_held')} states held at most, {c.get('recomputed_steps')} steps re-taken "
                      f"(ratio {c.get('recompute_ratio', 0):.2f})")
                if k == 1 and flags == ["-hs_adjoint"]:
                    # One state (at t0): record n is re-taken with n steps, n = M−1 … 1 (record M is at hand).
                    want = steps * (steps + 1) // 2 - steps
                    check(c.get("recomputed_steps") == want, f"{name} K=1: {c.get('recomputed_steps')} re-taken steps = M(M+1)/2 − M = {want}")
            if np == 1 and flags == ["-hs_adjoint"]:
                with tempfile.TemporaryDirectory() as d:
                    s = run(example, opts + flags + ["-hs_checkpoints", "3", "-hs_checkpoints_dir", d], np)
                    check(results(s) == results(full), f"{name} K=3 on disk: bit-identical to full storage")
                    check(not os.listdir(d), f"{name} K=3 on disk: nothing left in the directory {os.listdir(d)[:3]}")
                    check(not s["_cwd_left"], f"{name}: no files created in the working directory {s['_cwd_left'][:3]}")

# Hessian sweeps (tangent sweep forward over the trajectory, second-order sweep backward).
for example, opts, np_list in (("scalar_measurements", ["-ts_dt", "1e-2", "-hs_hessian"], (1, 2)),
                               ("lorenz_sysid", ["-fit", "none", "-hs_hessian"], (1, 2))):
    if args.quick or not selected(example) or not os.path.exists(os.path.join(args.build, "examples", example)):
        continue
    for np in [n for n in np_list if n in ranks]:
        for method in ("foa", "hybrid"):
            o = opts + ["-hs_hessian_method", method]
            full = run(example, o, np)
            for k in (1, 4):
                s = run(example, o + ["-hs_checkpoints", str(k)], np)
                same = results(s) == results(full) and "hessian" in full
                check(same, f"{example} Hessian ({method}) np={np} K={k}: bit-identical to full storage")

# The last two checks run bouncing_ball on one rank (also in --quick): with --only or --ranks,
# when that is selected.
if not selected("bouncing_ball") or 1 not in ranks:
    finish()

# The reverse sweep re-takes steps but never evaluates guards, locates or applies events.
s = run("bouncing_ball", ["-ts_dt", "0.01", "-hs_adjoint", "-hs_checkpoints", "4", "-log_view"])
stage = re.split(r"--- Event Stage \d+: ", s["_stdout"])
adj = next((t for t in stage if t.startswith("hybridsens adjoint")), "")


def count(event, text):
    m = re.search(rf"^{event}\s+(\d+)", text, re.M)
    return int(m.group(1)) if m else 0


check(count("TSStep", adj) > 0, f"bouncing_ball K=4: the adjoint stage re-takes steps (TSStep {count('TSStep', adj)})")
for ev in ("HSGuardValues", "HSGuardRates", "HSEventLocation", "HSTransition"):
    check(count(ev, adj) == 0, f"bouncing_ball K=4: no {ev} in the adjoint stage ({count(ev, adj)})")

# Must-fail: step sizes rebuilt from the stored times change the gradient bits.
for example, opts in (("bouncing_ball", ["-ts_dt", "0.01"]),):
    full = run(example, opts + ["-hs_adjoint"])
    bad = run(example, opts + ["-hs_adjoint", "-hs_checkpoints", "3", "-hs_test_rebuilt_steps"])
    check(results(bad) != results(full), f"{example}: re-taking steps with rebuilt sizes changes the gradient "
          f"({results(bad)['gradient']['p']} vs {results(full)['gradient']['p']})")

finish()
