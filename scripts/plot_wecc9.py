#!/usr/bin/env python3
"""Plots of a wecc9 run ([Zhang2017] Figs. 6-7): generator frequencies with the limits of the
violation metric H_i (violations shaded), and the voltage-regulator outputs V_R with their limits
and the limiter events marked; with --sensitivities (a CSV from -wecc9_sensitivities, needs
-hs_forward) also the bottom rows: the running metrics H_i(t) with their sensitivities
dH_i(t)/dP_g^j to the dispatch over time, and dV_R^i(t)/dVm_i (terminal-voltage magnitude of
generator i's bus) with its jumps at the limiter hits and releases; with --adjoint (a CSV from
-wecc9_adjoint with -wecc9_terminal_cost VR1,VR2,VR3) the adjoint lambda of V_R^i(T) at the
V_R^i row over time.

    build/examples/wecc9 -hs_forward -hs_adjoint -wecc9_states wecc9.csv -hs_summary wecc9.json \
        -wecc9_sensitivities wecc9_sens.csv -wecc9_terminal_cost VR1,VR2,VR3 -wecc9_adjoint wecc9_adj.csv
    python3 scripts/plot_wecc9.py wecc9.csv wecc9.json --out wecc9 [--fmin 59.5 --fmax 60.5] \
        [--sensitivities wecc9_sens.csv] [--adjoint wecc9_adj.csv]

writes wecc9_frequency.png and wecc9_vr.png, and wecc9_dH_dP.png, wecc9_dVR_dVm.png,
wecc9_adjoint_VR.png for the optional inputs. Needs matplotlib (Debian: python3-matplotlib).
"""
import argparse, csv, json, math, sys

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot_wecc9.py needs matplotlib (apt-get install python3-matplotlib, then run it with /usr/bin/python3)")

ap = argparse.ArgumentParser()
ap.add_argument("states", help="CSV written by wecc9 -wecc9_states")
ap.add_argument("summary", help="JSON written by wecc9 -hs_summary")
ap.add_argument("--out", default="wecc9")
ap.add_argument("--fmin", type=float, default=59.5)
ap.add_argument("--fmax", type=float, default=60.5)
ap.add_argument("--sensitivities", help="CSV written by wecc9 -wecc9_sensitivities")
ap.add_argument("--adjoint", help="CSV written by wecc9 -wecc9_adjoint")
a = ap.parse_args()

rows = [[float(x) for x in line.split(",")] for line in open(a.states) if line.strip()]
t = [r[0] for r in rows]
summary = json.load(open(a.summary))
VRMAX, VRMIN = 7.0, -4.0

fig, ax = plt.subplots(figsize=(8, 4.5))
for g in range(3):
    f = [r[1 + 9 * g + 3] / (2 * math.pi) for r in rows]
    line, = ax.plot(t, f, label=f"generator {g + 1}")
    ax.fill_between(t, f, a.fmax, where=[x > a.fmax for x in f], color=line.get_color(), alpha=0.3)
    ax.fill_between(t, f, a.fmin, where=[x < a.fmin for x in f], color=line.get_color(), alpha=0.3)
for lim in (a.fmin, a.fmax):
    ax.axhline(lim, color="k", ls="--", lw=0.8)
for e in summary["events"]:
    if e["guard"] in ("fault_on", "fault_off"):
        ax.axvline(e["time"], color="r", ls=":", lw=0.8)
ax.set_xlabel("t (s)")
ax.set_ylabel("frequency (Hz)")
H = ", ".join(f"H{i + 1} = {h:.3g}" for i, h in enumerate(summary["objective"]))
ax.set_title(f"Generator frequencies, limits {a.fmin}-{a.fmax} Hz ({H})")
ax.legend()
fig.tight_layout()
fig.savefig(a.out + "_frequency.png", dpi=120)

def limiter_events():
    """(time, generator, hit?, at max?) of every exciter-limiter change of generators 1-3 in the
    summary (discrete flags 1..3; governor valve flags, which follow the exciters', are not V_R)."""
    out = []
    for e in summary["events"]:
        for g in range(3):
            before, after = e["from"][1 + g], e["to"][1 + g]
            if before != after:
                out.append((e["time"], g, after != 0, 1 in (before, after)))
    return out


fig, ax = plt.subplots(figsize=(8, 4.5))
for g in range(3):
    ax.plot(t, [r[1 + 9 * g + 8] for r in rows], label=f"V_R{g + 1}")
for lim in (VRMIN, VRMAX):
    ax.axhline(lim, color="k", ls="--", lw=0.8)
for t_e, g, hit, atmax in limiter_events():
    y = VRMAX if atmax else VRMIN
    ax.plot([t_e], [y], "o" if hit else "s", color="k")
    ax.annotate(f"VR{g + 1} {'hits' if hit else 'leaves'} limit", (t_e, y), textcoords="offset points",
                xytext=(5, -12 if not hit else 5), fontsize=8)
ax.set_xlabel("t (s)")
ax.set_ylabel("V_R (pu)")
ax.set_title("Voltage-regulator outputs and limiter events (o hit, s release)")
ax.legend()
fig.tight_layout()
fig.savefig(a.out + "_vr.png", dpi=120)
written = [a.out + "_frequency.png", a.out + "_vr.png"]


def read_csv(name):
    with open(name) as f:
        rows = list(csv.DictReader(f))
    return rows


def mark_events(ax):
    for e in summary["events"]:
        if e["guard"] in ("fault_on", "fault_off"):
            ax.axvline(e["time"], color="r", ls=":", lw=0.8)
    for t_e, _, hit, _ in limiter_events():
        ax.axvline(t_e, color="k", ls="--" if hit else "-.", lw=0.6)


if a.sensitivities:
    # Rows in time order: a 'step' row is the state a step produced (the left limit if an event
    # follows), an 'event' row the right limit after a transition; drawn in order, a jump is a
    # vertical segment at the event time.
    sens = read_csv(a.sensitivities)
    ts = [float(r["t"]) for r in sens]
    H = [c for c in sens[0].keys() if c.startswith("H") and "/" not in c]
    P = [n for n in ("P1", "P2", "P3") if f"d{H[0]}/d{n}" in sens[0]] if H else []
    if H and P:
        fig, axes = plt.subplots(2, len(H), figsize=(4 * len(H), 6.5), sharex=True, squeeze=False)
        for i, h in enumerate(H):
            ax = axes[0][i]
            ax.plot(ts, [float(r[h]) for r in sens], color="k")
            ax.set_title(f"{h}(t) = running violation integral")
            mark_events(ax)
            ax = axes[1][i]
            for n in P:
                ax.plot(ts, [float(r[f"d{h}/d{n}"]) for r in sens], label=f"d{h}/dP_g^{n[1:]}")
            mark_events(ax)
            ax.set_xlabel("t (s)")
            ax.set_title(f"sensitivities of {h}(t) to dispatch")
            ax.legend(fontsize=8)
        fig.suptitle("Frequency violations and their sensitivities to dispatch over time (cf. Zhang et al. 2017, Fig. 6)\n"
                     "red dotted: fault on/off; black dashed: limiter hit; dash-dot: release", fontsize=10)
        fig.tight_layout()
        fig.savefig(a.out + "_dH_dP.png", dpi=120)
        written.append(a.out + "_dH_dP.png")
    gens = [g for g in range(1, 4) if f"dVR{g}/dVm{g}" in sens[0]]
    if gens:
        fig, axes = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
        for g in gens:
            axes[0].plot(ts, [float(r[f"VR{g}"]) for r in sens], label=f"V_R{g}")
            axes[1].plot(ts, [float(r[f"dVR{g}/dVm{g}"]) for r in sens], label=f"dV_R{g}/dVm{g}")
        for lim in (VRMIN, VRMAX):
            axes[0].axhline(lim, color="k", ls=":", lw=0.8)
        for ax in axes:
            mark_events(ax)
            ax.legend(fontsize=8)
        for t, g, hit, atmax in limiter_events():
            axes[0].annotate(f"VR{g + 1} {'hits' if hit else 'leaves'} limit", (t, VRMAX if atmax else VRMIN), textcoords="offset points",
                             xytext=(5, -12 if not hit else 5), fontsize=8)
        axes[0].set_ylabel("V_R (pu)")
        axes[1].set_ylabel("dV_R^i(t) / dVm_i")
        axes[1].set_xlabel("t (s)")
        axes[0].set_title("Voltage-regulator outputs and their sensitivities to the generator terminal voltage (cf. Zhang et al. 2017, Fig. 7)\n"
                          "red dotted: fault on/off; black dashed: limiter hit; dash-dot: release", fontsize=10)
        fig.tight_layout()
        fig.savefig(a.out + "_dVR_dVm.png", dpi=120)
        written.append(a.out + "_dVR_dVm.png")

if a.adjoint:
    adj = read_csv(a.adjoint)
    ta = [float(r["t"]) for r in adj]
    cols = [(g, f"lambda[[VR{g}](T)]:VR{g}") for g in range(1, 4) if f"lambda[[VR{g}](T)]:VR{g}" in adj[0]]
    if cols:
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for g, c in cols:
            ax.plot(ta, [float(r[c]) for r in adj], label=f"dV_R{g}(T)/dV_R{g}(t)")
        mark_events(ax)
        ax.set_xlabel("t (s)")
        ax.set_ylabel("adjoint lambda at V_R^i")
        ax.set_title(f"Adjoint of the terminal cost V_R^i(T = {ta[0]:g}) at the V_R^i row (jumps at limiter events)", fontsize=10)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(a.out + "_adjoint_VR.png", dpi=120)
        written.append(a.out + "_adjoint_VR.png")
print("wrote " + ", ".join(written))
