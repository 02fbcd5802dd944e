#!/usr/bin/env python3
"""Acceptance test of examples/bouncing_ball (docs/validation.md, bouncing ball) against its closed form.

Free flight is q = q_k + v_k⁺ s − g s²/2: the first impact is at t1 = sqrt(2 q0/g) with
v1⁻ = −g t1; each impact maps v⁻ to v⁺ = −e v⁻ and the next one follows after a flight of
2 v⁺/g with v⁻ = −v⁺. RK4 (and CN) integrate this quadratic motion exactly up to round-off for
any step size, so the only error left is event location (γ = q to -hs_event_tol 1e-12 relative
to |q| ≲ 20 over a step, i.e. ≲ 2e-11 in q and ≲ 2e-12 in t): times, pre/post-impact velocities
and the final state must match to ≤ 1e-10. Checks:
  * e = 0.8 to T = 5 (two impacts) with RK4 at dt = 0.01 (default) … 2.0, and with CN;
  * e = 0.5 to T = 4 (four impacts: the reset depends on e) and q0 = 5 (q0 enters u0);
  * e = 0.5 to T = 5 is Zeno (impacts accumulate at t1 (1 + e)/(1 − e) = 4.2835): the example
    must stop with an error instead of a result;
  * 2 and 3 MPI ranks reproduce the serial run.
"""
import argparse, json, math, os, re, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--mpiexec", default="mpiexec")
args = ap.parse_args()
exe = os.path.join(args.build, "examples", "bouncing_ball")
g = 9.81
TOL = 1e-10


def exact(q0, e, T):
    """Impacts [(t, v⁻, v⁺)] before T and the state (q, v) at T."""
    t = math.sqrt(2 * q0 / g)
    vminus = -g * t
    impacts, q, v, tlast = [], q0, 0.0, 0.0
    while t <= T:
        impacts.append((t, vminus, -e * vminus))
        q, v, tlast = 0.0, -e * vminus, t
        t, vminus = t + 2 * v / g, -v
    s = T - tlast
    return impacts, (q + v * s - 0.5 * g * s * s, v - g * s)


def run(opts, np=1):
    with tempfile.TemporaryDirectory() as d:
        summary = os.path.join(d, "s.json")
        cmd = ([args.mpiexec, "-n", str(np), "--oversubscribe"] if np > 1 else []) + [exe, "-hs_summary", summary] + opts
        res = subprocess.run(cmd, capture_output=True, text=True)
        s = json.load(open(summary)) if res.returncode == 0 else None
    if s is not None:
        # The JSON has no states at events; the example prints them with 17 digits.
        s["impacts"] = [tuple(map(float, m)) for m in
                        re.findall(r"^\s+t = (\S+) .* q- = (\S+)  v- = (\S+)  v\+ = (\S+)$", res.stdout, re.M)]
    return res, s


passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"  FAIL: {what}")


def check_run(label, opts, q0, e, T):
    ex, (qT, vT) = exact(q0, e, T)
    res, s = run(opts)
    if s is None:
        check(False, f"{label}: exited with {res.returncode}:\n{res.stdout}\n{res.stderr}")
        return None
    ev = s["events"]
    check(len(ev) == len(ex) and len(s["impacts"]) == len(ex),
          f"{label}: {len(ev)} events ({len(s['impacts'])} printed), closed form has {len(ex)}")
    if len(ev) != len(ex) or len(s["impacts"]) != len(ex):
        return s
    worst = 0.0
    for k, (e_json, (t, qm, vm, vp), (te, vme, vpe)) in enumerate(zip(ev, s["impacts"], ex)):
        check(e_json["kind"] == "guard" and e_json["index"] == 0 and e_json["from"] == [k] and e_json["to"] == [k + 1],
              f"{label}: impact {k}: {e_json['kind']} {e_json['index']} {e_json['from']}->{e_json['to']}")
        check(e_json["time"] == t, f"{label}: impact {k}: JSON time {e_json['time']!r} vs printed {t!r}")
        for name, got, want in (("t", t, te), ("q-", qm, 0.0), ("v-", vm, vme), ("v+", vp, vpe)):
            err = abs(got - want)
            worst = max(worst, err)
            check(err <= TOL, f"{label}: impact {k}: {name} = {got!r} vs closed form {want!r} (error {err:.3g})")
    for name, got, want in (("q(T)", s["final_state"][0], qT), ("v(T)", s["final_state"][1], vT)):
        err = abs(got - want)
        worst = max(worst, err)
        check(err <= TOL, f"{label}: {name} = {got!r} vs closed form {want!r} (error {err:.3g})")
    check(s["final_time"] == T and s["final_discrete_state"] == [len(ex)],
          f"{label}: final time {s['final_time']!r}, discrete state {s['final_discrete_state']}")
    print(f"{label}: {len(ev)} impacts at " + ", ".join(f"{x['time']:.15f}" for x in ev) + f"; max error {worst:.3g}")
    return s


serial = check_run("e=0.8 default (RK4 dt=0.01)", [], 10.0, 0.8, 5.0)
for dt in ("0.1", "0.5", "1.0", "2.0"):
    check_run(f"e=0.8 RK4 dt={dt}", ["-ts_dt", dt], 10.0, 0.8, 5.0)
check_run("e=0.8 CN dt=0.1", ["-ts_type", "cn", "-ts_dt", "0.1"], 10.0, 0.8, 5.0)
for dt in ("0.01", "0.3"):
    check_run(f"e=0.5 T=4 RK4 dt={dt}", ["-e", "0.5", "-ts_max_time", "4", "-ts_dt", dt], 10.0, 0.5, 4.0)
check_run("q0=5 RK4 dt=0.1", ["-q0", "5", "-ts_dt", "0.1"], 5.0, 0.8, 5.0)

# The closed form itself: two impacts for e = 0.8, infinitely many before T = 5 for e = 0.5.
check(len(exact(10.0, 0.8, 5.0)[0]) == 2, "closed form: e = 0.8 should have two impacts before T = 5")
res, s = run(["-e", "0.5"])
out = res.stdout + res.stderr
check(res.returncode != 0 and ("Zeno" in out or "Grazing" in out),
      f"e=0.5 T=5 (Zeno) must fail with a Zeno/grazing error; exit code {res.returncode}, output:\n{out[-2000:]}")
print(f"e=0.5 T=5: exit code {res.returncode}, " + (re.search(r"(Zeno|Grazing)[^\n]*", out) or [""])[0][:160])

for np in (2, 3):
    res, s = run([], np)
    if s is None:
        check(False, f"np={np}: exited with {res.returncode}:\n{res.stdout}\n{res.stderr}")
        continue
    if serial is not None:
        check([x["time"] for x in s["events"]] == [x["time"] for x in serial["events"]] and s["impacts"] == serial["impacts"],
              f"np={np}: impacts {s['impacts']} differ from serial {serial['impacts']}")
        err = max(abs(a - b) for a, b in zip(s["final_state"], serial["final_state"]))
        check(err <= 1e-12 * max(map(abs, serial["final_state"])), f"np={np}: final state differs from serial by {err:.3g}")
    print(f"np={np}: {len(s['events'])} impacts, final state {s['final_state']}")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
