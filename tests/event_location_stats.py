#!/usr/bin/env python3
"""The JSON stats count located (state) events and re-taken steps per located event.

wecc9 (default: a fault and its clearing are time events, the exciter limit is a state event)
and sample_and_hold (state events only): `located_events` must equal the number of guard events
in `events`, and `location_steps_per_event` must be `location_steps / located_events`.
"""
import argparse, json, os, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
args = ap.parse_args()
failed = 0
for ex in ("wecc9", "sample_and_hold"):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.json")
        subprocess.run([os.path.join(args.build, "examples", ex), "-hs_summary", path], check=True, capture_output=True)
        s = json.load(open(path))
    st = s["stats"]
    guards = sum(1 for e in s["events"] if e["kind"] == "guard")
    ok = st["located_events"] == guards and guards > 0 and st["events"] == len(s["events"])
    ok = ok and st["location_steps_per_event"] == st["location_steps"] / guards
    print(f"{ex}: {len(s['events'])} events, {guards} located, {st['location_steps']} re-takes, "
          f"located_events {st['located_events']}, per event {st['location_steps_per_event']}")
    if not ok:
        print(f"  FAIL: stats {st} do not match the event list")
        failed += 1
sys.exit(1 if failed else 0)
