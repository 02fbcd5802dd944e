#!/usr/bin/env python3
"""docs/options.md: its option table matches what -help lists: the same -hs_ options, and the same
defaults where the table gives a number or on/off. Also: every listed option is accepted by the
library (no "Unknown hybridsens option")."""
import argparse, os, re, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--readme", required=True)
args = ap.parse_args()

readme = open(args.readme).read()
section = readme[readme.index("## Options"):]
section = section[:section.index("\n## ", 5)]
table = {}
for line in section.splitlines():
    m = re.match(r"\| `(-hs_\w+)[^`]*` \|.*\| ([^|]*) \|$", line)
    if m:
        table[m.group(1)] = m.group(2).strip()

exe = os.path.join(args.build, "examples", "galan_scalar")
out = subprocess.run([exe, "-help"], capture_output=True, text=True).stdout
helped = {}
for m in re.finditer(r"^  (-hs_\w+):? <(?:now )?([^:>]*?)\s*:", out, re.M):
    helped[m.group(1)] = m.group(2).strip()

failures = 0


checks = 0


def check(ok, msg):
    global failures, checks
    checks += 1
    print(("ok   " if ok else "FAIL ") + msg)
    failures += not ok


check(len(table) >= 20, f"docs/options.md table lists {len(table)} -hs_ options")
check(len(helped) >= 20, f"-help lists {len(helped)} -hs_ options")
for name in sorted(set(table) - set(helped)):
    check(False, f"{name} is in docs/options.md but not in -help")
for name in sorted(set(helped) - set(table)):
    check(False, f"{name} is in -help but not in docs/options.md")

words = {"on": "TRUE", "off": "FALSE", "true": "TRUE", "false": "FALSE"}
for name in sorted(set(table) & set(helped)):
    readme_default, help_default = table[name], helped[name]
    if readme_default in ("none", "memory", "—"):  # no value by default
        check(help_default == "", f"{name}: docs/options.md default {readme_default}, -help '{help_default}'")
    elif readme_default in words:
        check(words[readme_default] == help_default.upper(), f"{name}: docs/options.md default {readme_default}, -help {help_default}")
    elif re.fullmatch(r"[-+0-9.e]+", readme_default):
        check(float(readme_default) == float(help_default), f"{name}: docs/options.md default {readme_default}, -help {help_default}")
    elif re.fullmatch(r"[a-z_]+", readme_default):
        check(readme_default == help_default, f"{name}: docs/options.md default {readme_default}, -help {help_default}")

print(f"{checks - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)
