#!/usr/bin/env python3
"""examples/smib_optimization — SMIB P_m maximization (docs/validation.md; [Zhang2017] §V.B, Table III;
PETSc's power_grid/ex3opt.c as the peer).

J(P_m, t_cl) = −P_m + σ ∫₀ᵀ max(0, δ − δ_max)^η dt with a fault on at t_f = 0.1 and cleared at t_cl.
Checks (each can fail):
  A. start point P_m = 1.06 (defaults: time events, CN, dt = 1/32):
     * adjoint = forward ≤ 1e-12 relative (dJ/dP_m, dJ/dt_cl, dJ/du0), two events at 0.1 and 0.2;
     * dJ/dP_m and dJ/dt_cl (the event-time jump term of a parameter-dependent time event) vs
       central FD (the example's own columns, h = 1e-6 p, and -Pm ± h, -tcl ± h, h = 1e-5 p)
       ≤ 1e-6; the same
       with BEULER and RK4 at dt = 1/32 and CN at dt = 1/128;
     * must-fail: -hs_test_drop_event_time_term makes dJ/dt_cl 0, and -hs_event_derivative
       continuous (docs/theory.md §3's u̇⁻/u̇⁺ form, O(h²) for CN) misses FD by > 1e-4, while dJ/dP_m
       (no event-time term: t_f, t_cl do not depend on P_m) stays identical.
  B. [Zhang2017] Table III with the paper's step (-ts_dt 0.01): P_m and the adjoint and forward
     gradients of TAO iterations 0, 1, 2 equal the published values to their printed digits
     (140.0487958, 45.40765371, 14.84698503; 1.032130009, 1.018758331); optimum 1.0079.
  C. TAO (BLMVM, adjoint gradient) at the defaults converges; every table row has
     adjoint = forward and adjoint = FD (relative to the start gradient's size, since the
     gradient → 0); the final gradient ≤ TAO's gatol; J(P* ± 1e-4) > J(P*); -tao_monitor works.
  D. the faults as guards γ = t − T (-smib_fault_events guard) give the time events' results
     (≤ 1e-12, CN and BEULER); peer ex3opt (--peer): the gradient at 1.06 equals ex3opt's
     hand-coded adjoint (and its -sa_method tlm) ≤ 1e-12 with the same number of steps, and the
     whole -tao_monitor history and the optimum agree to the digits ex3opt prints.
  E. mpiexec -n 2, 3 reproduce the serial optimization (iterates, J, gradients, JSON) ≤ 1e-12
     (with the example's parallel default -pc_type redundant; MUMPS, the library's default, is
     exercised by the library's own MPI tests and costs ~5× more here on oversubscribed cores).
"""
import argparse, json, math, os, re, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--mpiexec", default="mpiexec")
ap.add_argument("--peer", help="PETSc's power_grid/ex3opt built as is")
args = ap.parse_args()
EXE = os.path.join(args.build, "examples", "smib_optimization")

passed = failed = 0


def check(ok, what):
    global passed, failed
    passed += bool(ok)
    failed += not ok
    print(("ok    " if ok else "FAIL  ") + what)
    return ok


def rel(a, b, scale=None):
    return abs(a - b) / (scale if scale is not None else max(abs(a), abs(b), 1e-300))


def run(opts, np=1, summary=True):
    """stdout and the JSON summary of one run (raises if it fails)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.json")
        pre = [args.mpiexec, "-n", str(np), "--oversubscribe"] if np > 1 else []
        cmd = pre + [EXE] + [str(o) for o in opts] + (["-hs_summary", path] if summary else [])
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited with {res.returncode}:\n{res.stdout}\n{res.stderr}")
        return res.stdout, (json.load(open(path)) if summary else None)


def objective(opts):
    return run(opts + ["-smib_optimize", "0", "-smib_fd", "0", "-hs_forward"])[1]["objective"][0]


def central_fd(opts, opt, value, h):
    return (objective(opts + [opt, repr(value + h)]) - objective(opts + [opt, repr(value - h)])) / (2 * h)


def parse_point(out, title):
    """The 'start:'/'optimum:' block: {'Pm', 'tcl', 'J', 'Pm_row': (adj, fwd, fd), 'tcl_row': …}."""
    m = re.search(rf"^{title}: P_m = (\S+), t_cl = (\S+), J = (\S+)$", out, re.M)
    rows = dict((name, tuple(map(float, v))) for name, *v in
                re.findall(rf"^  dJ/d(\w+)\s+(\S+)\s+(\S+)\s+(\S+)\s+\S+\s+\S+$", out[m.end():], re.M)[:2])
    return {"Pm": float(m[1]), "tcl": float(m[2]), "J": float(m[3]), "Pm_row": rows["Pm"], "tcl_row": rows["tcl"]}


def parse_tao(out):
    """Iteration table rows (it, P_m, J, adjoint, forward, FD), iterations, reason, final P_m."""
    rows = [(int(r[0]),) + tuple(float(x) for x in r[1:]) for r in
            re.findall(r"^\s*(\d+)\s+(\d\.\d{15})\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)$", out, re.M)]
    m = re.search(r"^TAO (converged|did NOT converge) after (\d+) iterations \((\w+)\): P_m = (\S+)$", out, re.M)
    return rows, int(m[2]), m[3], float(m[4]), m[1] == "converged"


def max_rel(a, b):
    a, b = list(a), list(b)
    scale = max([abs(x) for x in a + b] + [1e-300])
    return max(abs(x - y) for x, y in zip(a, b)) / scale


# ---- A. start point ---------------------------------------------------------------------
out, s = run(["-smib_optimize", "0", "-hs_forward", "-hs_adjoint"])
adj, fwd = s["gradient"], s["forward_gradient"]
g_pm, g_tcl = adj["p"][0]
e = max_rel(adj["p"][0] + adj["u0"][0], fwd["p"][0] + fwd["u0"][0])
check(e <= 1e-12, f"start: adjoint vs forward (dJ/dPm, dJ/dtcl, dJ/du0) max rel {e:.2e} <= 1e-12 "
      f"(dJ/dPm = {g_pm:.12g}, dJ/dtcl = {g_tcl:.12g})")
ev = [(x["kind"], x["index"], x["time"], x["from"], x["to"]) for x in s["events"]]
check(ev == [("time", 0, 0.1, [0], [1]), ("time", 1, 0.2, [1], [2])], f"start: events {ev}")
pt = parse_point(out, "start")
check(rel(pt["Pm_row"][2], g_pm) <= 1e-6 and rel(pt["Pm_row"][0], g_pm) <= 1e-14 and rel(pt["tcl_row"][2], g_tcl) <= 1e-6,
      f"start: the example's own table (adjoint {pt['Pm_row'][0]:.15g}, FD {pt['Pm_row'][2]:.15g}; "
      f"t_cl: {pt['tcl_row'][0]:.15g}, FD {pt['tcl_row'][2]:.15g}) agrees")
# The FD reference computed here, outside the example, and with a 10× larger step (the example's
# own columns use h = 1e-6 · p): J is smooth around the point (no event crosses a grid point:
# t_cl = 0.2 lies inside the step 0.1875 … 0.21875), so both agree with the exact derivative.
for opt, value, g in (("-Pm", 1.06, g_pm), ("-tcl", 0.2, g_tcl)):
    h = 1e-5 * value
    fd = central_fd([], opt, value, h)
    check(rel(g, fd) <= 1e-6, f"start: dJ/d{opt[1:]} adjoint {g:.12g} vs central FD (h = {h:.2g}) {fd:.12g}: rel {rel(g, fd):.2e} <= 1e-6")


def fd_case(label, opts):
    """adjoint = forward ≤ 1e-12 (JSON) and adjoint vs the example's central FD ≤ 1e-6, both parameters."""
    out, s = run(opts + ["-smib_optimize", "0", "-hs_adjoint", "-hs_forward"])
    a, f = s["gradient"]["p"][0], s["forward_gradient"]["p"][0]
    pt = parse_point(out, "start")
    fds = [pt["Pm_row"][2], pt["tcl_row"][2]]
    check(max_rel(a, f) <= 1e-12 and all(rel(x, y) <= 1e-6 for x, y in zip(a, fds)),
          f"{label}: dJ/d(Pm, tcl) adjoint ({a[0]:.12g}, {a[1]:.12g}), forward rel {max_rel(a, f):.1e}, "
          f"central FD rel ({rel(a[0], fds[0]):.1e}, {rel(a[1], fds[1]):.1e}) <= 1e-6")
    return a


fd_case("BEULER dt=1/32", ["-ts_type", "beuler"])
fd_case("RK4 dt=1/32", ["-ts_type", "rk", "-ts_rk_type", "4"])
fd_case("CN dt=1/128", ["-ts_dt", str(1 / 128)])

# Must-fail: the clearing-time derivative is exactly the event-time jump term (dT/dt_cl = 1).
fd_tcl = pt["tcl_row"][2]
for flag, what in (("-hs_test_drop_event_time_term", "without the event-time term"),
                   ("-hs_event_derivative continuous", "with the continuous u̇⁻/u̇⁺ event-time term")):
    sd = run(["-smib_optimize", "0", "-smib_fd", "0", "-hs_forward", "-hs_adjoint"] + flag.split())[1]
    a, f = sd["gradient"]["p"][0], sd["forward_gradient"]["p"][0]
    check(rel(a[1], fd_tcl) > 1e-4 and rel(f[1], fd_tcl) > 1e-4,
          f"must-fail {what}: dJ/dtcl = {a[1]:.9g} (adjoint), {f[1]:.9g} (forward) vs FD {fd_tcl:.9g} (rel {rel(a[1], fd_tcl):.1e})")
    check(rel(a[0], g_pm) <= 1e-12, f"{what}: dJ/dPm (no event-time term: t_f, t_cl do not depend on P_m) unchanged ({a[0]:.15g})")

# ---- B. [Zhang2017] Table III (dt = 0.01) -------------------------------------------------
out, _ = run(["-ts_dt", "0.01", "-smib_fd", "0"], summary=False)
rows, its, reason, pm_opt, conv = parse_tao(out)
published = [(1.06, 140.0487958, "1.06", "140.0487958"), (1.032130009, 45.40765371, "1.032130009", "45.40765371"),
             (1.018758331, 14.84698503, "1.018758331", "14.84698503")]
for (it, pm, J, a, f, _), (ppm, pg, spm, sg) in zip(rows, published):
    ulp_pm = 0.5 * 10 ** -(len(spm.split(".")[1]))
    ulp_g = 0.5 * 10 ** -(len(sg.split(".")[1]))
    check(abs(pm - ppm) <= ulp_pm and abs(a - pg) <= ulp_g and abs(f - pg) <= ulp_g,
          f"Table III iteration {it}: P_m {pm:.12f} (published {spm}), gradient adjoint {a:.10f} forward {f:.10f} (published {sg})")
check(len(rows) >= 3, f"Table III: {len(rows)} iterations printed")
check(conv and abs(pm_opt - 1.0079) <= 5e-5, f"Table III: optimum P_m = {pm_opt:.10f} (published 1.0079), {its} iterations ({reason}; paper: 13)")

# ---- C. TAO at the defaults -----------------------------------------------------------------
out, s_serial = run(["-tao_monitor", "-hs_forward", "-hs_adjoint"])
rows, its, reason, pm_opt, conv = parse_tao(out)
check(conv and 0 < pm_opt < 1.1, f"TAO converged ({reason}) after {its} iterations at P_m = {pm_opt:.15g}")
check("0 TAO,  Function value:" in out, "-tao_monitor output present")
gscale = abs(rows[0][3])
worst_af = max(abs(r[3] - r[4]) for r in rows) / gscale
worst_fd = max(abs(r[3] - r[5]) for r in rows) / gscale
check(len(rows) == its + 1 and worst_af <= 1e-12 and worst_fd <= 1e-6,
      f"iteration table: {len(rows)} rows, max |adjoint - forward| / |g0| = {worst_af:.1e}, max |adjoint - FD| / |g0| = {worst_fd:.1e}")
opt = parse_point(out, "optimum")
check(abs(opt["Pm_row"][0]) <= 1e-8 and abs(opt["Pm"] - pm_opt) == 0, f"optimum: dJ/dPm = {opt['Pm_row'][0]:.3g} <= gatol 1e-8")
check(s_serial["parameters"][0] == pm_opt or rel(s_serial["parameters"][0], pm_opt) <= 1e-14, "summary describes the optimum")
Jopt = objective(["-Pm", repr(pm_opt)])
Jl, Jr = objective(["-Pm", repr(pm_opt - 1e-4)]), objective(["-Pm", repr(pm_opt + 1e-4)])
check(Jl > Jopt and Jr > Jopt, f"optimum is a minimum of J: J(P*-1e-4) - J* = {Jl - Jopt:.3e}, J(P*+1e-4) - J* = {Jr - Jopt:.3e}")
tcl_opt = opt["tcl_row"]
check(rel(tcl_opt[0], tcl_opt[1]) <= 1e-12, f"optimum: dJ/dtcl adjoint {tcl_opt[0]:.12g} = forward {tcl_opt[1]:.12g}")

# A P_max that TAO's upper bound 1.1 could reach (no pre-fault equilibrium there) is refused
# before the optimization starts, not discovered as a NaN in the middle of it.
res = subprocess.run([EXE, "-Pm", "0.5", "-Pmax", "1.05"], capture_output=True, text=True)
check(res.returncode != 0 and "need -Pmax > 1.1" in res.stdout + res.stderr, "-Pmax 1.05 with TAO bounds [0, 1.1] refused")

# ---- D. time events vs guards; the peer: PETSc's ex3opt -------------------------------------
# The faults as state events γ = t − T (located by the engine; γ_t = 1, τ_p = −γ_p) must give the
# same trajectory and gradients as the time events (both keep the step grid fixed).
for opts in ([], ["-ts_type", "beuler"]):
    a, b = (run(opts + ["-smib_optimize", "0", "-smib_fd", "0", "-hs_adjoint", "-hs_forward", "-smib_fault_events", m])[1]
            for m in ("time", "guard"))
    d = max(max_rel(a[k]["p"][0] + a[k]["u0"][0], b[k]["p"][0] + b[k]["u0"][0]) for k in ("gradient", "forward_gradient"))
    d = max(d, rel(a["objective"][0], b["objective"][0]), max_rel(a["final_state"], b["final_state"]))
    check(d <= 1e-12 and a["stats"]["steps"] == b["stats"]["steps"],
          f"time events = guards {' '.join(opts) or '(CN)'}: objective, gradients, final state {d:.1e} apart, "
          f"{a['stats']['steps']} / {b['stats']['steps']} steps")

if args.peer:
    def peer(opts):
        res = subprocess.run([args.peer, "-pc_type", "lu"] + opts, capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"ex3opt {opts} failed:\n{res.stdout}\n{res.stderr}")
        return res.stdout

    def peer_gradient(opts):
        o = peer(opts + ["-tao_max_it", "0", "-tao_test_gradient", "-tao_test_gradient_view", "::ascii_matlab", "-ts_monitor"])
        g = float(re.search(r"Hand-coded gradient -+\n(?:%.*\n)*Vec_\w+ = \[\n(\S+)\n", o)[1])
        steps = max(int(x) for x in re.findall(r"^(\d+) TS dt", o, re.M))
        return g, steps

    _, s_mine = run(["-smib_optimize", "0", "-smib_fd", "0", "-hs_forward", "-hs_adjoint"])
    mine = s_mine["gradient"]["p"][0][0]
    for sa in ("adj", "tlm"):
        g, steps = peer_gradient(["-sa_method", sa])
        check(rel(mine, g) <= 1e-12, f"peer ex3opt -sa_method {sa}: gradient at 1.06 {g!r}, hybridsens {mine!r}, rel {rel(mine, g):.1e}")
        check(steps == s_mine["stats"]["steps"], f"peer: {steps} steps, hybridsens {s_mine['stats']['steps']}")
    po = peer(["-tao_monitor"])
    mo, _ = run(["-tao_monitor", "-smib_fd", "0"], summary=False)
    mon = lambda o: re.findall(r"^\s*(\d+) TAO,\s+Function value: (\S+),\s+Residual: (\S+)", o, re.M)
    pm_, mm_ = mon(po), mon(mo)
    # Residuals below 1e-10 are round-off (the gradient of a converged optimum): compare those by size.
    same = len(pm_) == len(mm_) and all(a[:2] == b[:2] and (a[2] == b[2] or max(float(a[2]), float(b[2])) < 1e-10)
                                        for a, b in zip(pm_, mm_))
    check(same, f"peer: -tao_monitor histories agree ({len(pm_)} lines; ex3opt last residual {pm_[-1][2]}, hybridsens {mm_[-1][2]})")
    popt = re.search(r"type: seq\n(\S+)\n", po)[1]
    mopt = parse_tao(mo)[3]
    check(popt == f"{mopt:g}", f"peer: optimum ex3opt {popt}, hybridsens {mopt:.12g}")
else:
    print("      SKIPPED: peer ex3opt not built (libpetsc3.18-dev-examples missing)")

# ---- E. MPI ------------------------------------------------------------------------------------
# Without the FD columns (checked serially above): 3 ranks on 2 cores are slow per collective.
MPI_OPTS = ["-tao_monitor", "-hs_forward", "-hs_adjoint", "-smib_fd", "0"]
out, s_serial = run(MPI_OPTS)
serial_rows, its = parse_tao(out)[:2]
for np in (2, 3):
    out, s = run(MPI_OPTS, np=np)
    rows, its_np = parse_tao(out)[:2]
    gs = abs(serial_rows[0][3])
    d_pm = max(rel(a[1], b[1]) for a, b in zip(rows, serial_rows))
    d_J = max(rel(a[2], b[2]) for a, b in zip(rows, serial_rows))
    d_g = max(max(abs(a[k] - b[k]) for k in (3, 4)) for a, b in zip(rows, serial_rows)) / gs
    check(its_np == its and len(rows) == len(serial_rows) and d_pm <= 1e-12 and d_J <= 1e-12 and d_g <= 1e-12,
          f"np={np}: {its_np} iterations, P_m {d_pm:.1e}, J {d_J:.1e}, gradients {d_g:.1e} (/|g0|) from serial")
    dj = max(max_rel(s[k]["p"][0], s_serial[k]["p"][0]) for k in ("gradient", "forward_gradient"))
    dj = max(dj, rel(s["objective"][0], s_serial["objective"][0]), max_rel(s["final_state"], s_serial["final_state"]))
    check(dj <= 1e-12 and [x["time"] for x in s["events"]] == [x["time"] for x in s_serial["events"]],
          f"np={np}: JSON summary (objective, gradients, final state, events) {dj:.1e} from serial")


print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
