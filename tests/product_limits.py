#!/usr/bin/env python3
"""The product's size limits (issue 49's "Done when"), checked on the source tree: README.md at
most 200 lines, docs/findings.md at most 800, the Python that generates the documents' blocks
at most 600, scripts/ at most 8 files, the files under results/ and plots/ at most 15 MB, no
NOTES.md, and LICENSE, CONTRIBUTING.md and CHANGELOG.md present. Exit 1 naming each limit
passed; `--self-test` checks that a tree over a limit fails.

    product_limits.py [ROOT]     (default ROOT: the folder above this script's)
"""

import os
import sys
import tempfile

GENERATOR = ("plots/docs.py", "plots/convplots/docs.py", "plots/convplots/summary.py")
LIMITS = {"README.md": 200, "docs/findings.md": 800}


def lines(path):
    with open(path, encoding="utf-8") as f:
        return sum(1 for _ in f)


def tree_bytes(root, folder):
    total = 0
    for d, dirs, files in os.walk(os.path.join(root, folder)):
        dirs[:] = [x for x in dirs if x != "__pycache__"]
        total += sum(os.path.getsize(os.path.join(d, f)) for f in files if not f.endswith(".pyc"))
    return total


def check(root):
    errors = []
    for f, most in LIMITS.items():
        n = lines(os.path.join(root, f))
        if n > most:
            errors.append(f"{f}: {n} lines, at most {most}")
    n = sum(lines(os.path.join(root, f)) for f in GENERATOR)
    if n > 600:
        errors.append(f"the documents' generator ({', '.join(GENERATOR)}): {n} lines, at most 600")
    scripts = [f for f in os.listdir(os.path.join(root, "scripts")) if not f.startswith(".")]
    if len(scripts) > 8:
        errors.append(f"scripts/: {len(scripts)} files, at most 8")
    size = tree_bytes(root, "results") + tree_bytes(root, "plots")
    if size > 15_000_000:
        errors.append(f"results/ and plots/: {size} bytes, at most 15000000")
    if os.path.exists(os.path.join(root, "NOTES.md")):
        errors.append("NOTES.md is back (docs/findings.md replaced it)")
    for f in ("LICENSE", "CONTRIBUTING.md", "CHANGELOG.md"):
        if not os.path.isfile(os.path.join(root, f)):
            errors.append(f"{f} is missing")
    return errors


def self_test():
    with tempfile.TemporaryDirectory() as t:
        for d in ("docs", "plots/convplots", "scripts", "results"):
            os.makedirs(os.path.join(t, d))
        for f in ("LICENSE", "CONTRIBUTING.md", "CHANGELOG.md", "docs/findings.md") + GENERATOR:
            open(os.path.join(t, f), "w").close()
        with open(os.path.join(t, "README.md"), "w") as f:
            f.write("line\n" * 200)
        if check(t):
            print(f"product_limits: self-test: a tree within the limits fails: {check(t)}", file=sys.stderr)
            return 1
        with open(os.path.join(t, "README.md"), "a") as f:
            f.write("one line too many\n")
        open(os.path.join(t, "NOTES.md"), "w").close()
        errs = check(t)
        if len(errs) != 2:
            print(f"product_limits: self-test: expected 2 errors, got {errs}", file=sys.stderr)
            return 1
    print("product_limits: self-test passed")
    return 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    root = argv[0] if argv else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    errors = check(root)
    for e in errors:
        print(f"product_limits: {e}", file=sys.stderr)
    if not errors:
        print("product_limits: every limit holds")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
