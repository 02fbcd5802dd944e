#!/usr/bin/env python3
"""Bad and unusual inputs, table-driven: every case ends in a clear error that names the option,
file or callback at fault, or in the correct result. Never a crash, never exit 0 with a wrong
number.

The cases live in tests/bad_inputs/cases_*.py, one file per area (options, engine numerics,
files, model callbacks, examples). Each module defines CASES, a list of Case. A case runs one
example (optionally under mpiexec) and asserts:
  - error=REGEX: the run fails (non-zero exit, no signal) and its output matches REGEX;
  - check=FUNCTION(Run): the run succeeds and FUNCTION returns None (or an explanation of what
    is wrong); Run carries stdout, stderr, the JSON summary if the case asked for one.
Usage: bad_inputs.py --build DIR [--mpiexec M] [-k SUBSTRING] [-j JOBS]
"""
import argparse, concurrent.futures, glob, importlib.util, json, os, re, signal, subprocess, sys, tempfile
from dataclasses import dataclass, field
from typing import Callable, List, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bad_inputs"))
from case import Case, Run  # noqa: E402


def load_cases():
    cases = []
    for path in sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "bad_inputs", "cases_*.py"))):
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for c in mod.CASES:
            c.area = os.path.basename(path)[6:-3]
            cases.append(c)
    names = [c.name for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, f"duplicate case names: {sorted(dup)}"
    return cases


def run_case(c, build, mpiexec):
    exe = os.path.abspath(os.path.join(build, "examples", c.example))
    if not os.path.exists(exe):
        return None, f"skip ({c.example} not built)"
    with tempfile.TemporaryDirectory() as tmp:
        args = [a.replace("{tmp}", tmp) for a in c.args]
        summary = None
        if c.summary:
            summary = os.path.join(tmp, "summary.json")
            args += ["-hs_summary", summary]
        cmd = ([mpiexec, "-n", str(c.np)] if c.np > 1 else []) + [exe] + args
        # A session of its own, so that a timeout kills mpiexec's ranks too (a rank left running
        # would keep writing into tmp while it is removed).
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp, start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=c.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return False, f"timed out after {c.timeout} s: {' '.join(cmd)}"
        p = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
        out = p.stdout + p.stderr
        r = Run(returncode=p.returncode, stdout=p.stdout, stderr=p.stderr, tmp=tmp)
        if summary and p.returncode == 0 and os.path.exists(summary):
            with open(summary) as f:
                r.summary = json.load(f)
        crashed = p.returncode < 0 or re.search(r"Segmentation Violation|SIGSEGV|signal \d+|Caught signal|core dumped", out)
        if crashed:
            return False, f"crashed (exit {p.returncode}): {tail(out)}"
        if c.error is not None:
            if p.returncode == 0:
                return False, f"exit 0, expected an error matching /{c.error}/: {tail(out)}"
            if not re.search(c.error, out, re.S):
                return False, f"error does not match /{c.error}/: {tail(out)}"
            return True, "error: " + first_error_line(out)
        if p.returncode != 0:
            return False, f"exit {p.returncode}, expected success: {tail(out)}"
        why = c.check(r) if c.check else None
        return (why is None), (why or "result correct")


def first_error_line(out):
    """PETSc's error class and the message below it, on one line."""
    lines = [l.split("PETSC ERROR: ", 1)[1].strip() for l in out.splitlines() if "PETSC ERROR: " in l]
    lines = [l for l in lines if l and not l.startswith("---")]
    if lines:
        return " / ".join(lines[:2])[:200]
    return out.strip().splitlines()[-1][:200] if out.strip() else ""


def tail(out, n=6):
    return "\n      ".join(out.strip().splitlines()[-n:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("-k", default="", help="only cases whose name contains this")
    ap.add_argument("-j", type=int, default=2)
    a = ap.parse_args()
    cases = [c for c in load_cases() if a.k in c.name]
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(a.j) as pool:
        results = list(pool.map(lambda c: run_case(c, a.build, a.mpiexec), cases))
    for c, (ok, msg) in zip(cases, results):
        tag = "skip" if ok is None else ("ok  " if ok else "FAIL")
        failures += ok is False
        print(f"{tag} [{c.area}] {c.name}: {msg}")
    print(f"{sum(1 for r in results if r[0])} passed, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
