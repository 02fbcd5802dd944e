#!/usr/bin/env python3
"""Plots of a hybridsens-grid run from its trajectory CSV (-grid_trajectory): generator
frequencies with the band of the violation metric H_i, bus voltages with the voltage-dip
threshold, the limited states (exciter V_R / SEXS E_fd, governor valves) with their limiter events
marked, and, when the run had -hs_forward, the running sensitivities d(cost)/d(parameter) over
time. Disturbances (faults, steps) are shaded or marked in every panel.

    build/src/power/hybridsens-grid data/grids/wecc9.raw data/grids/wecc9.dyr -hs_forward \
        -grid_trajectory run.csv
    python3 scripts/plot_grid.py run.csv --out run [--fmin 59.5 --fmax 60.5 --vmin 0.9] [--max-curves 12]

writes run_frequency.png, run_voltage.png, run_limiters.png and, with sensitivities in the CSV,
run_sensitivities.png. Large cases: each panel draws the --max-curves curves that move most.
Needs matplotlib (Debian: python3-matplotlib, run with /usr/bin/python3).
"""
import argparse, csv, sys

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot_grid.py needs matplotlib (apt-get install python3-matplotlib, then run it with /usr/bin/python3)")

ap = argparse.ArgumentParser()
ap.add_argument("trajectory", help="CSV written by hybridsens-grid -grid_trajectory")
ap.add_argument("--out", default="grid", help="prefix of the PNG files")
ap.add_argument("--fmin", type=float, default=59.5, help="lower frequency limit (as -freq_min)")
ap.add_argument("--fmax", type=float, default=60.5, help="upper frequency limit (as -freq_max)")
ap.add_argument("--vmin", type=float, default=0.9, help="voltage-dip threshold (as -vdip_min)")
ap.add_argument("--max-curves", type=int, default=12, help="curves per panel at most (those that move most)")
a = ap.parse_args()

with open(a.trajectory) as f:
    reader = csv.reader(f)
    header = next(reader)
    rows = [r for r in reader if r]
if not rows or header[:2] != ["time", "event"]:
    sys.exit(f"{a.trajectory}: not a hybridsens-grid trajectory (its header must start with time,event)")
t = [float(r[0]) for r in rows]
# the event column: the event's name, then ";<limiter>_hits_max" etc. for each limiter flag it changed
events = [(float(r[0]), r[1]) for r in rows if r[1]]


def series(name):
    j = header.index(name)
    return [float(r[j]) for r in rows]


def columns(prefix, exclude=()):
    return [h for h in header[2:] if h.startswith(prefix) and h[len(prefix):len(prefix) + 1].isdigit() and not h.startswith(exclude)]


def most_moving(names):
    """The --max-curves columns with the largest range."""
    spans = sorted(((max(v) - min(v), n) for n in names for v in [series(n)]), reverse=True)
    return [n for _, n in spans[:a.max_curves]]


def disturbances(ax):
    """Faults shaded (on to off), steps as dashed lines, line and generator trips as dotted ones."""
    on = {}
    for time, text in events:
        name = text.split(";")[0]
        if name.startswith("fault_on"):
            on[name[len("fault_on"):]] = time
        elif name.startswith("fault_off") and name[len("fault_off"):] in on:
            ax.axvspan(on.pop(name[len("fault_off"):]), time, color="red", alpha=0.15, lw=0)
        elif name.startswith("step_"):
            ax.axvline(time, color="gray", ls="--", lw=0.8)
        elif name.startswith(("line_trip_", "generator_trip_")):
            ax.axvline(time, color="black", ls=":", lw=0.8)


written = []


def save(fig, name):
    fig.tight_layout()
    path = f"{a.out}_{name}.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(path)


freqs = most_moving(columns("f"))
fig, ax = plt.subplots(figsize=(8, 4.5))
for n in freqs:
    ax.plot(t, series(n), label=f"generator {n[1:]}")
ax.axhline(a.fmax, color="k", ls=":", lw=0.8)
ax.axhline(a.fmin, color="k", ls=":", lw=0.8)
disturbances(ax)
ax.set(xlabel="t (s)", ylabel="frequency (Hz)", title="generator frequencies (band of H_i dotted; faults shaded)")
ax.legend(fontsize=7, ncol=2)
save(fig, "frequency")

volts = most_moving(columns("V", exclude=("VR",)))
fig, ax = plt.subplots(figsize=(8, 4.5))
for n in volts:
    ax.plot(t, series(n), label=f"bus {n[1:]}")
ax.axhline(a.vmin, color="k", ls=":", lw=0.8)
disturbances(ax)
ax.set(xlabel="t (s)", ylabel="|V| (pu)", title="bus voltages (voltage-dip threshold dotted)")
ax.legend(fontsize=7, ncol=2)
save(fig, "voltage")

limited = [h for h in header[2:] if h.startswith(("VR", "EFD", "Pv")) and "/" not in h]
limited = most_moving(limited) if limited else []
fig, ax = plt.subplots(figsize=(8, 4.5))
for n in limited:
    line, = ax.plot(t, series(n), label=n)
    for time, name in events:  # the limiter's own events: hits (triangles) and releases (circles)
        if any(e.startswith((n + "_hits_", n + "_leaves_")) for e in name.split(";")):
            j = min(range(len(t)), key=lambda i: abs(t[i] - time))
            ax.plot(time, series(n)[j], "^" if "_hits_" in name else "o", color=line.get_color(), ms=7)
disturbances(ax)
ax.set(xlabel="t (s)", ylabel="limited state (pu)", title="regulator and valve states (limiter hits: triangles, releases: circles)")
if limited:
    ax.legend(fontsize=7, ncol=2)
save(fig, "limiters")

sens = [h for h in header if h.startswith("d") and "/d" in h]
if sens:
    sens = most_moving(sens)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for n in sens:
        ax.plot(t, series(n), label=n)
    disturbances(ax)
    ax.set(xlabel="t (s)", ylabel="running sensitivity", title="sensitivities of the running costs over time (forward)")
    ax.legend(fontsize=7, ncol=2)
    save(fig, "sensitivities")

print("wrote " + ", ".join(written))
