#!/usr/bin/env python3
"""scripts/plot_grid.py draws a hybridsens-grid run headless (Agg): from the trajectory CSV of a
wecc9 run with a fault, a Vref step and forward sensitivities it writes the four PNG files, each
a real PNG image (signature, nonzero size); a CSV that is not a trajectory is refused. Skipped
(exit 77) with a message when no Python with matplotlib is found (Debian: python3-matplotlib)."""
import argparse, json, os, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--source", required=True)
args = ap.parse_args()
tool = os.path.join(args.build, "src", "power", "hybridsens-grid")
script = os.path.join(args.source, "scripts", "plot_grid.py")
grids = os.path.join(args.source, "data", "grids")

python = None
for candidate in (sys.executable, "/usr/bin/python3"):
    if os.path.exists(candidate) and subprocess.run([candidate, "-c", "import matplotlib"], capture_output=True).returncode == 0:
        python = candidate
        break
if python is None:
    print("SKIP: no Python with matplotlib (apt-get install python3-matplotlib); scripts/plot_grid.py not tested")
    sys.exit(77)

failures = 0


def check(ok, msg):
    global failures
    print(("ok   " if ok else "FAIL ") + msg)
    failures += not ok


with tempfile.TemporaryDirectory() as d:
    events = os.path.join(d, "events.json")
    json.dump({"events": [{"type": "bus_fault", "bus": 9, "t_on": 1.0025, "t_off": 1.1025},
                          {"type": "setpoint_step", "bus": 2, "setpoint": "Vref", "time": 2.5, "size": 0.02}]}, open(events, "w"))
    traj = os.path.join(d, "run.csv")
    subprocess.run([tool, os.path.join(grids, "wecc9.raw"), os.path.join(grids, "wecc9.dyr"), events, "-hs_forward", "-grid_trajectory", traj,
                    "-grid_progress", "0"], check=True, capture_output=True)
    r = subprocess.run([python, script, traj, "--out", os.path.join(d, "run")], capture_output=True, text=True, env=dict(os.environ, MPLBACKEND="Agg"))
    check(r.returncode == 0, f"plot_grid.py ran ({python}): {r.stdout.strip() or r.stderr.strip()[-300:]}")
    for name in ("frequency", "voltage", "limiters", "sensitivities"):
        path = os.path.join(d, f"run_{name}.png")
        ok = os.path.exists(path) and os.path.getsize(path) > 1000 and open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
        check(ok, f"run_{name}.png written, a PNG image of {os.path.getsize(path) if os.path.exists(path) else 0} bytes")
    bad = os.path.join(d, "bad.csv")
    open(bad, "w").write("a,b\n1,2\n")
    r = subprocess.run([python, script, bad, "--out", os.path.join(d, "bad")], capture_output=True, text=True)
    check(r.returncode != 0 and "not a hybridsens-grid trajectory" in r.stderr, "a CSV that is not a trajectory is refused naming the file")

print("FAILED" if failures else "PASSED")
sys.exit(1 if failures else 0)
