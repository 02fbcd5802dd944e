#!/usr/bin/env python3
"""Every relative link in the repository's Markdown files points at a file that exists and, when
it names an anchor (#section), at a heading of that file (GitHub's anchor rules: lower case,
punctuation dropped, spaces to hyphens). Also: no Markdown file refers to a file outside the
repository (../ past the root). Run with --self-test to see it fail on a broken link."""
import argparse, os, re, shutil, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", default=None)  # unused; hs_add_pytest passes it
ap.add_argument("--source", required=True)
ap.add_argument("--self-test", action="store_true")
args = ap.parse_args()

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def anchors(path):
    out = set()
    in_code = False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            in_code = not in_code
        if in_code:
            continue
        m = re.match(r"#+\s+(.*)", line)
        if m:
            a = m.group(1).strip().lower()
            a = re.sub(r"[^\w\- ]", "", a)  # GitHub keeps letters, digits, _, -, spaces
            out.add(a.replace(" ", "-"))
    return out


def check(root):
    errors = []
    root = os.path.realpath(root)
    for dirpath, dirnames, files in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and not d.startswith("build")]
        for f in files:
            if not f.endswith(".md"):
                continue
            path = os.path.join(dirpath, f)
            text = open(path, encoding="utf-8").read()
            text = re.sub(r"```.*?```", "", text, flags=re.S)
            for target in LINK.findall(text):
                if re.match(r"[a-z]+:", target):
                    continue  # http:, https:, mailto:
                file_part, _, anchor = target.partition("#")
                dest = os.path.realpath(os.path.join(dirpath, file_part)) if file_part else path
                rel = os.path.relpath(path, root)
                if not dest.startswith(root + os.sep) and dest != root:
                    errors.append(f"{rel}: link {target} leaves the repository")
                elif not os.path.exists(dest):
                    errors.append(f"{rel}: link {target}: no such file")
                elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    errors.append(f"{rel}: link {target}: no heading with anchor #{anchor}")
    return errors


if args.self_test:
    with tempfile.TemporaryDirectory() as tmp:
        for sub in ("docs",):
            shutil.copytree(os.path.join(args.source, sub), os.path.join(tmp, sub))
        shutil.copy(os.path.join(args.source, "README.md"), tmp)
        with open(os.path.join(tmp, "docs", "theory.md"), "a") as f:
            f.write("\nSee [nowhere](no-such-file.md) and [a heading](theory.md#no-such-heading).\n")
        errs = check(tmp)
        ok = any("no-such-file.md" in e for e in errs) and any("no-such-heading" in e for e in errs)
        print("\n".join(errs))
        print("self-test PASSED: the injected broken links are reported" if ok else "self-test FAILED")
        sys.exit(0 if ok else 1)

errs = check(args.source)
for e in errs:
    print("FAIL  " + e)
print("FAILED" if errs else "PASSED: every relative Markdown link resolves")
sys.exit(1 if errs else 0)
