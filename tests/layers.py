#!/usr/bin/env python3
"""The layers of hybridsens, checked on every #include.

The code is layered, lowest first (LAYERS below, one line of reason each). A file may include
files of its own layer or of a lower one, never of a higher one, so that each layer can be
read, tested and changed without the ones above it. Every scanned file must belong to a layer:
a new directory cannot escape the check. Two more rules:
  * the programs (examples/, bench/) use the public headers only, as a user of the installed
    library would;
  * only the PETSc adapter (PETSC_INTERNALS_ADAPTER) may include PETSc's private headers
    (petsc/private/...): every use of PETSc internals is in that one version-guarded file.

Usage:
  python3 tests/layers.py [--root DIR]        check the tree; exit 1 listing every violation as
                                              `file:line: includes X (layer L2) from layer L1`
  python3 tests/layers.py --table             print the layer table
  python3 tests/layers.py --self-test         copy the scanned files to a temporary directory,
                                              inject each kind of violation and require that the
                                              check fails on it and names the file
Python 3, standard library only.
"""

import argparse
import fnmatch
import os
import re
import shutil
import sys
import tempfile

# (name, why it sits there, files: fnmatch patterns relative to the root, where * also matches /).
LAYERS = [
    ("util",
     "PETSc helpers that know nothing of hybrid models (gathers, dense columns, direct solves, log "
     "events, atomic files, the option reader) and the one adapter for PETSc internals",
     ["src/util/*", "include/hybridsens/vec_entry.hpp", "include/hybridsens/atomic_file.hpp",
      "include/hybridsens/option_reader.hpp", "include/hybridsens/version.hpp.in",
      "include/hybridsens/detail/petsc_version.hpp"]),
    ("model",
     "the public description of a problem, independent of how it is solved: model, costs, "
     "second-order products, memory, the event log, options, monitor samples",
     ["src/model/*", "include/hybridsens/model.hpp", "include/hybridsens/objective.hpp",
      "include/hybridsens/second_order.hpp", "include/hybridsens/memory.hpp",
      "include/hybridsens/event_log.hpp", "include/hybridsens/options.hpp",
      "include/hybridsens/monitors.hpp", "include/hybridsens/small_model.hpp"]),
    ("engine",
     "integrates the hybrid model with a PETSc TS: the user's callbacks under the library's "
     "conventions, event detection and location, transitions, the stored trajectory",
     ["src/engine/*"]),
    ("jump",
     "differentiates one event: the jump conditions and the discrete derivatives of the steps "
     "next to it, shared by every sweep so that forward and reverse stay transposes",
     ["src/jump/*"]),
    ("sensitivity",
     "sweeps over a stored run: forward (tangent-linear), adjoint, second order (hessian/)",
     ["src/sensitivity/*"]),
    ("driver",
     "what a user calls: the Solver that wires the layers below together, the gradient and "
     "Hessian checks, the summary, the gradient tables, TAO glue",
     ["src/driver/*", "include/hybridsens/solver.hpp", "include/hybridsens/verify.hpp",
      "include/hybridsens/hessian.hpp", "include/hybridsens/tao.hpp", "include/hybridsens/result.hpp",
      "include/hybridsens/hybridsens.hpp"]),
    ("ad",
     "optional front end (Trilinos Sacado; templates in the headers, the model-independent part in src/ad) that writes a model's derivative "
     "callbacks; the library must build without it, so no layer below includes it",
     ["include/hybridsens/ad.hpp", "include/hybridsens/ad_local*.hpp", "include/hybridsens/detail/ad_*.hpp",
      "src/ad/*"]),
    ("power",
     "the power-grid component hybridsens::power (PSS/E and MATPOWER case readers, AC mismatch): "
     "its own library, which nothing below includes",
     ["src/power/*", "include/hybridsens/power/*"]),
    ("programs",
     "examples, benchmarks and installed tools, written against the public headers only",
     ["examples/*", "bench/*", "tools/*"]),
    ("tests",
     "tests may use anything, internal headers included",
     ["tests/*"]),
]
PUBLIC_ONLY = {"programs"}  # layers that may include nothing under src/
PETSC_INTERNALS_ADAPTER = {"src/util/petsc_internals.cpp"}
SCANNED_DIRS = ["src", "include", "examples", "bench", "tools", "tests"]
SOURCE_SUFFIXES = (".hpp", ".cpp", ".h", ".c", ".cc", ".hh")
# Where a quoted include is looked for after the including file's own directory (the include
# directories of the CMake targets).
INCLUDE_ROOTS = ["src", "include"]

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
RANK = {name: i for i, (name, _, _) in enumerate(LAYERS)}


def layer_of(rel):
    for name, _, patterns in LAYERS:
        if any(fnmatch.fnmatchcase(rel, p) for p in patterns):
            return name
    return None


def scanned_files(root):
    out = []
    for d in SCANNED_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, d)):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(SOURCE_SUFFIXES):
                    out.append(os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/"))
    return out


def resolve(root, rel, quote, target):
    """The included file, relative to root, if it is in the tree; else None."""
    candidates = []
    if quote == '"':
        candidates.append(os.path.join(os.path.dirname(rel), target))
        candidates += [os.path.join(r, target) for r in INCLUDE_ROOTS]
    elif target.startswith("hybridsens/"):
        candidates.append(os.path.join("include", target))
    for c in candidates:
        c = os.path.normpath(c).replace(os.sep, "/")
        if c.startswith("../"):
            continue
        if os.path.isfile(os.path.join(root, c)):
            return c
        if os.path.isfile(os.path.join(root, c + ".in")):  # generated at configure time (version.hpp)
            return c + ".in"
    return None


def check(root):
    """Every violation in the tree under root, as a list of messages."""
    problems = []
    for rel in scanned_files(root):
        mine = layer_of(rel)
        if mine is None:
            problems.append(f"{rel}: in no layer (add its directory to LAYERS in tests/layers.py)")
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            lines = fh.readlines()
        for lineno, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            quote, target = m.groups()
            where = f"{rel}:{lineno}"
            if target.startswith("petsc/private/"):
                if rel not in PETSC_INTERNALS_ADAPTER:
                    adapter = ", ".join(sorted(PETSC_INTERNALS_ADAPTER))
                    problems.append(f"{where}: includes PETSc's private {target}; only {adapter} may (add a function there)")
                continue
            if quote == "<" and not target.startswith("hybridsens/"):
                continue  # a system or third-party header
            found = resolve(root, rel, quote, target)
            if found is None:
                problems.append(f"{where}: includes {target}, which is not in the tree")
                continue
            theirs = layer_of(found)
            if theirs is None:
                problems.append(f"{where}: includes {found}, which is in no layer")
            elif RANK[theirs] > RANK[mine]:
                problems.append(f"{where}: includes {found} (layer {theirs}) from layer {mine}")
            elif mine in PUBLIC_ONLY and found.startswith("src/"):
                problems.append(f"{where}: includes the internal header {found} from layer {mine} (public headers only)")
    return problems


def table():
    rows = []
    for i, (name, why, patterns) in enumerate(LAYERS):
        rows.append(f"{i} {name:12s} {why}")
        rows += [f"{'':15s}{p}" for p in patterns]
    return "\n".join(rows)


def self_test(root):
    """The check must pass on a copy of the tree and fail, naming the file, on each injection."""
    def inject(tree, rel, text):
        path = os.path.join(tree, rel)
        with open(path, encoding="utf-8") as fh:
            lines = fh.readlines()
        lines.insert(1, text + "\n")  # after the first line (#pragma once or the own header)
        with open(path, "w", encoding="utf-8") as fh:
            fh.writelines(lines)

    def add_file(tree, rel, text):
        os.makedirs(os.path.dirname(os.path.join(tree, rel)), exist_ok=True)
        with open(os.path.join(tree, rel), "w", encoding="utf-8") as fh:
            fh.write(text + "\n")

    adapter = sorted(PETSC_INTERNALS_ADAPTER)[0]
    # (what, how to break the copy, a regular expression the report must match)
    cases = [
        ("engine file includes a sensitivity header",
         lambda t: inject(t, "src/engine/engine.cpp", '#include "sensitivity/adjoint_sensitivity.hpp"'),
         r"^src/engine/engine\.cpp:2: includes src/sensitivity/adjoint_sensitivity\.hpp \(layer sensitivity\) from layer engine$"),
        ("model file includes a sensitivity header",
         lambda t: inject(t, "src/model/model.cpp", '#include "sensitivity/adjoint_sensitivity.hpp"'),
         r"^src/model/model\.cpp:2: includes src/sensitivity/adjoint_sensitivity\.hpp \(layer sensitivity\) from layer model$"),
        ("public model header includes solver.hpp",
         lambda t: inject(t, "include/hybridsens/model.hpp", "#include <hybridsens/solver.hpp>"),
         r"^include/hybridsens/model\.hpp:2: includes include/hybridsens/solver\.hpp \(layer driver\) from layer model$"),
        ("jump header includes a sensitivity header",
         lambda t: inject(t, "src/jump/jump_algebra.hpp", '#include "sensitivity/forward_sensitivity.hpp"'),
         r"^src/jump/jump_algebra\.hpp:2: includes src/sensitivity/forward_sensitivity\.hpp \(layer sensitivity\) from layer jump$"),
        ("sensitivity file includes a driver header",
         lambda t: inject(t, "src/sensitivity/forward_sensitivity.cpp", '#include "hybridsens/verify.hpp"'),
         r"^src/sensitivity/forward_sensitivity\.cpp:2: includes include/hybridsens/verify\.hpp \(layer driver\) from layer sensitivity$"),
        ("library header includes the optional AD front end",
         lambda t: inject(t, "include/hybridsens/solver.hpp", '#include "hybridsens/ad.hpp"'),
         r"^include/hybridsens/solver\.hpp:2: includes include/hybridsens/ad\.hpp \(layer ad\) from layer driver$"),
        ("PETSc private header outside the adapter",
         lambda t: inject(t, "src/engine/dynamics.cpp", "#include <petsc/private/tsimpl.h>"),
         r"^src/engine/dynamics\.cpp:2: includes PETSc's private petsc/private/tsimpl\.h; only " + re.escape(adapter)),
        ("PETSc private header in a test",
         lambda t: inject(t, "tests/test_engine.cpp", "#include <petsc/private/petscimpl.h>"),
         r"^tests/test_engine\.cpp:2: includes PETSc's private petsc/private/petscimpl\.h"),
        ("file in a directory of no layer",
         lambda t: add_file(t, "src/newlayer/thing.cpp", '#include "util/gather.hpp"'),
         r"^src/newlayer/thing\.cpp: in no layer"),
        ("example includes an internal header",
         lambda t: inject(t, "examples/bouncing_ball.cpp", '#include "engine/engine.hpp"'),
         r"^examples/bouncing_ball\.cpp:2: includes the internal header src/engine/engine\.hpp from layer programs"),
        ("include of a file that is not in the tree",
         lambda t: inject(t, "src/engine/engine.cpp", '#include "engine/no_such_file.hpp"'),
         r"^src/engine/engine\.cpp:2: includes engine/no_such_file\.hpp, which is not in the tree$"),
    ]
    failures = []
    with tempfile.TemporaryDirectory(prefix="hs_layers_") as tmp:
        files = scanned_files(root)
        # Generated headers' templates are includable though not scanned (version.hpp.in).
        files += [os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")
                  for d, _, fs in os.walk(os.path.join(root, "include")) for f in fs if f.endswith(".hpp.in")]

        def fresh_copy(name):
            tree = os.path.join(tmp, name)
            for rel in files:
                os.makedirs(os.path.dirname(os.path.join(tree, rel)), exist_ok=True)
                shutil.copyfile(os.path.join(root, rel), os.path.join(tree, rel))
            return tree

        clean = check(fresh_copy("clean"))
        if clean:
            failures.append("the unmodified copy already fails:\n  " + "\n  ".join(clean))
        for i, (what, breakit, expected) in enumerate(cases):
            tree = fresh_copy(f"case{i}")
            breakit(tree)
            new = [p for p in check(tree) if p not in clean]
            ok = len(new) == 1 and re.search(expected, new[0])
            print(f"{'ok  ' if ok else 'FAIL'} {what}: {'; '.join(new) if new else 'the check passed'}")
            if not ok:
                failures.append(f"{what}: expected one new problem matching {expected!r}, got {new}")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--table", action="store_true")
    args = ap.parse_args()
    if args.table:
        print(table())
        return 0
    if args.self_test:
        failures = self_test(args.root)
        for f in failures:
            print("self-test:", f, file=sys.stderr)
        print("self-test:", "FAILED" if failures else "every injected violation was caught")
        return 1 if failures else 0
    problems = check(args.root)
    for p in problems:
        print(p)
    n = len(scanned_files(args.root))
    print(f"layers: {n} files, {len(problems)} problem(s)" + ("" if problems else "; every include points to its own or a lower layer"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
