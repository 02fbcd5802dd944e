#!/usr/bin/env python3
"""Peer comparison: hybridsens' examples/wecc9 against PETSc's own power_grid/stability_9bus/ex9bus.c.

Both integrate the same DAE with Crank-Nicolson, dt = 0.01 (ex9bus' petscoptions: no adaptivity,
LU, SNES tolerances 1e-8). ex9bus saves the state after every step (post-event) in out.bin; wecc9
writes it with -wecc9_states. Asserted, per scenario:
  * the same sequence of limiter events (ex9bus prints them), event times within 2e-6 (PETSc
    locates events to its default tolerance 1e-6 in the event function; we to 1e-12);
  * on the time grid both share (both resume the interrupted interval after an event), every
    state entry within 1e-5 relative (to max(|x|, 1)).
Known differences, documented rather than hidden:
  * ex9bus holds VR at a limit with VR' = VR − VRmax (starting from VR ≈ VRmax to its event
    tolerance), wecc9 with VR' = 0 from VR = VRmax exactly;
  * at the fault clearing ex9bus' post-event check evaluates the free VR' with the voltages from
    BEFORE the clearing and with the reversed sign ("dVR_dt went negative" is printed when the
    free VR' is positive), so it releases a limiter at VRmax whenever the free VR' was still
    positive before the clearing (the usual case: the limiter was hit with VR rising); wecc9 releases a
    limiter only if the free VR' after the clearing points back into the band. In the scenarios
    below both release (the released VR falls, so no second hit follows in either);
    When the free VR' is still positive after the clearing the two differ: the third scenario
    (clearing at 1.3 s) asserts the difference (ex9bus' VR3 winds up above VRmax, see there);
  * the same branch reuses the outer event-loop index, so events that coincide with the clearing
    after it in ex9bus' event list are dropped; no scenario here has such a coincidence.
Scenarios: ex9bus' default (fault at bus 9, 1.0-1.2 s, T = 5), a fault at bus 7 cleared at 1.1 s
to T = 3 (another VR hits its limit), and the clearing at 1.3 s (the documented difference).
"""
import argparse, os, re, shutil, struct, subprocess, tempfile
from wecc9_support import check, finish

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--petsc-data", required=True)
args = ap.parse_args()
ours = os.path.abspath(os.path.join(args.build, "examples", "wecc9"))
peer = os.path.abspath(os.path.join(args.build, "tests", "petsc_ex9bus"))
NSTATE = 45


def read_petsc_aij(path):
    """A (small) matrix in PETSc's binary AIJ format as a dense list of rows."""
    d = open(path, "rb").read()
    _, m, n, nz = struct.unpack(">4i", d[:16])
    off = 16
    rowlen = struct.unpack(">%di" % m, d[off:off + 4 * m]); off += 4 * m
    cols = struct.unpack(">%di" % nz, d[off:off + 4 * nz]); off += 4 * nz
    vals = struct.unpack(">%dd" % nz, d[off:off + 8 * nz])
    rows, k = [[0.0] * n for _ in range(m)], 0
    for i in range(m):
        for _ in range(rowlen[i]):
            rows[i][cols[k]] = vals[k]
            k += 1
    return rows


def run_peer(opts):
    with tempfile.TemporaryDirectory() as d:
        for f in ("petscoptions", "X.bin", "Ybus.bin"):
            shutil.copy(os.path.join(args.petsc_data, f), d)
        out = subprocess.run([peer] + opts, cwd=d, capture_output=True, text=True, check=True).stdout
        rows = read_petsc_aij(os.path.join(d, "out.bin"))
    traj = [(rows[0][j], [rows[1 + i][j] for i in range(NSTATE)]) for j in range(len(rows[0]))]
    events = []
    for g, what, t in re.findall(r"VR\[(\d)\]: (hit upper|hit lower|freeing variable as dVR_dt is negative|freeing variable as dVR_dt is positive|dVR_dt went negative|dVR_dt went positive)\D+([0-9.eE+-]+)", out):
        kind = {"hit upper": "hits VRmax", "hit lower": "hits VRmin"}.get(what, "leaves VRmax" if "negative" in what else "leaves VRmin")
        events.append((int(g) + 1, kind, float(t)))
    return events, traj


def run_ours(opts):
    with tempfile.TemporaryDirectory() as d:
        csv = os.path.join(d, "states.csv")
        out = subprocess.run([ours, "-wecc9_states", csv] + opts, capture_output=True, text=True, check=True).stdout
        traj = []
        for line in open(csv):
            v = [float(x) for x in line.split(",")]
            traj.append((v[0], v[1:1 + NSTATE]))
    events = [(int(g), kind, float(t)) for t, g, kind in re.findall(r"t = ([0-9.]+)\s+VR(\d) (\w+ VR\w+)", out)]
    return events, traj


for name, peer_opts, our_opts in (
    ("default (bus 9, 1.0-1.2 s, T = 5)", [], []),
    ("bus 7, 1.0-1.1 s, T = 3", ["-faultbus", "6", "-tfaultoff", "1.1", "-tmax", "3"], ["-fault_bus", "7", "-t_off", "1.1", "-ts_max_time", "3"]),
):
    print(name)
    pe, pt = run_peer(peer_opts)
    oe, ot = run_ours(our_opts)
    print("  ex9bus events:", pe)
    print("  wecc9  events:", [(g, k, round(t, 9)) for g, k, t in oe])
    check(len(pe) > 0, "PETSc reports limiter events")
    check([(g, k) for g, k, _ in pe] == [(g, k) for g, k, _ in oe], "same sequence of limiter events")
    if len(pe) == len(oe):
        # ex9bus prints times with %g; its exact event time is the saved step time next to it.
        exact = [min((t for t, _ in pt), key=lambda t: abs(t - tp)) for _, _, tp in pe]
        check(all(abs(a - b[2]) <= 5e-6 for a, b in zip(exact, pe)), "each printed PETSc event time has its step in out.bin")
        dt = max(abs(a - b[2]) for a, b in zip(exact, oe))
        check(dt <= 1e-6, f"event times agree to {dt:.1e} <= 1e-6 (PETSc locates to 1e-6 in VR)")
    # Compare on the shared grid (PETSc's location steps add points we do not have, and vice versa).
    peer_by_t = {round(t, 9): x for t, x in pt}
    worst, worst_at, common = 0.0, None, 0
    for t, x in ot:
        y = peer_by_t.get(round(t, 9))
        if y is None:
            continue
        common += 1
        for i in range(NSTATE):
            e = abs(x[i] - y[i]) / max(abs(y[i]), 1.0)
            if e > worst:
                worst, worst_at = e, (t, i)
    check(common >= 0.95 * len(ot), f"{common} of {len(ot)} of our step times are on PETSc's grid")
    check(worst <= 1e-5, f"states within {worst:.2e} relative (worst at t = {worst_at[0]:.4f}, entry {worst_at[1]}) <= 1e-5")

# ---- where the two differ on purpose: a longer fault (cleared at 1.3 s) ------------------------
# After this clearing the free VR3' is still positive. ex9bus' clearing check (stale voltages,
# reversed sign) releases VR3 anyway; right after the release its hit event function VRmax − VR
# starts within its tolerance of 0, so PETSc skips the immediate re-crossing and VR3 winds up
# above VRmax. wecc9 keeps VR3 at the limit until its free rate turns negative (a state event).
print("fault cleared at 1.3 s (documented difference)")
pe, pt = run_peer(["-tfaultoff", "1.3", "-tmax", "1.6"])
oe, ot = run_ours(["-t_off", "1.3", "-ts_max_time", "1.6"])
print("  ex9bus events:", pe)
print("  wecc9  events:", [(g, k, round(t, 9)) for g, k, t in oe])
check((3, "leaves VRmax", 1.3) in pe, "ex9bus releases VR3 at the clearing")
check(not any(g == 3 and k == "leaves VRmax" for g, k, _ in oe), "wecc9 keeps VR3 at VRmax after the clearing")
vr3 = 2 * 9 + 8
check(max(x[vr3] for t, x in pt if t > 1.3) > 7.01, f"ex9bus' VR3 winds up above VRmax (max {max(x[vr3] for t, x in pt if t > 1.3):.4f})")
check(max(x[vr3] for t, x in ot) <= 7.0 + 1e-12, f"wecc9's VR3 stays within VRmax (max {max(x[vr3] for t, x in ot):.15f})")
peer_by_t = {round(t, 9): x for t, x in pt}
worst = max(abs(x[i] - peer_by_t[round(t, 9)][i]) / max(abs(peer_by_t[round(t, 9)][i]), 1.0)
            for t, x in ot if t <= 1.3 + 1e-9 and round(t, 9) in peer_by_t for i in range(NSTATE))
check(worst <= 1e-5, f"up to the clearing the states agree to {worst:.2e} <= 1e-5")

finish()
