#!/usr/bin/env python3
"""Plots of a wecc9 run (seed 002 Figs. 6-7, top rows): generator frequencies with the limits of
the violation metric H_i (violations shaded), and the voltage-regulator outputs V_R with their
limits and the limiter events marked.

    build/examples/wecc9 -wecc9_states wecc9.csv -hs_summary wecc9.json
    python3 scripts/plot_wecc9.py wecc9.csv wecc9.json --out wecc9 [--fmin 59.5 --fmax 60.5]

writes wecc9_frequency.png and wecc9_vr.png. Needs matplotlib (Debian: python3-matplotlib).
"""
import argparse, json, math, sys

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

fig, ax = plt.subplots(figsize=(8, 4.5))
for g in range(3):
    ax.plot(t, [r[1 + 9 * g + 8] for r in rows], label=f"V_R{g + 1}")
for lim in (VRMIN, VRMAX):
    ax.axhline(lim, color="k", ls="--", lw=0.8)
for e in summary["events"]:
    for g in range(3):
        before, after = e["from"][1 + g], e["to"][1 + g]
        if before != after:
            y = VRMAX if 1 in (before, after) else VRMIN
            ax.plot([e["time"]], [y], "o" if after != 0 else "s", color="k")
            ax.annotate(f"VR{g + 1} {'hits' if after else 'leaves'} limit", (e["time"], y), textcoords="offset points",
                        xytext=(5, -12 if after == 0 else 5), fontsize=8)
ax.set_xlabel("t (s)")
ax.set_ylabel("V_R (pu)")
ax.set_title("Voltage-regulator outputs and limiter events (o hit, s release)")
ax.legend()
fig.tight_layout()
fig.savefig(a.out + "_vr.png", dpi=120)
print(f"wrote {a.out}_frequency.png and {a.out}_vr.png")
