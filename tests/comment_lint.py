#!/usr/bin/env python3
"""Fails when a comment in the C++/CUDA sources quotes a measured time or rate (a CPU test:
ctest comment_lint; issue 49 item 3).

    comment_lint.py [ROOT]       scan the code folders of ROOT (DIRS; default ROOT: the
                                 folder above this script's)
    comment_lint.py --self-test  check that a planted "// 0.845 ms at N=128" is found and a
                                 clean file passes

Measurements belong in the committed results and docs/findings.md (generated from data), not
in code comments, where they go stale. The scan reads the comments only (// to the end of the
line and every line of /* */, outside string and character literals) of every .cu .cuh .hpp
.cpp .h .inc file and flags a comment line with a number followed by a time or rate unit:

    ms, us, µs, ns           0.845 ms, 22.5 us, ~20 µs, 5ns
    s                        0.4 s, 2.3s (a time in seconds)
    [KMGTP]FLOP/s, TFLOPS    17.5 TFLOP/s, 790 TFLOPS
    [KMGTP]B/s               4254 GB/s, ~1.8 TB/s

A setting of the code that is a time (a timing budget, a refresh interval, a constant a cost
model divides by) is written with the unit in words ("0.3 seconds", "150 milliseconds") and
names the constant it describes: the abbreviated form is kept for measurements, so that the
pattern needs no list of exceptions.

What it does not flag, and why (decided on the tree as it was cleaned): sizes (MB, KiB, GB) and
plain percentages and ratios ("1.3x"). Sizes in the comments are byte counts that follow from a
layer's shape ("39.6 MB read"), and percentages and "x" are mostly shape arithmetic ("border
waste 14%", "4.59x fewer multiplies", "3x3"): flagging them would flag the design reasoning the
comments are for. A measured ratio without a time is left to review.

Not scanned: files generated from committed data and checked against it by their own test
(none today; the tuning tables are JSON under tuning/, not source).

Exits 0 when no comment line matches, 1 listing each as FILE:LINE: TEXT, 2 on a file that
cannot be read or has an unterminated /* comment.
"""

import os
import re
import sys
import tempfile

DIRS = ("bench", "kernels", "core", "reference", "io", "goldenio", "cli")
EXTS = (".cu", ".cuh", ".hpp", ".cpp", ".h", ".inc")
GENERATED: set = set()

# A number (optionally ~, a decimal part, a range "0.5-1.0") directly followed by a unit, the
# unit not continued by a letter or digit ("5 ms" and "5ms", not "5 mss" or "2 msb").
NUMBER = r"(?<![\w.])\d+(?:\.\d+)?(?:e-?\d+)?"
UNIT = r"(?:ms|us|µs|ns|s|[KMGTP]FLOP/s|[KMGTP]?FLOPS|[KMGTP]i?B/s)"
PATTERN = re.compile(NUMBER + r"\s?" + UNIT + r"(?![\w/])")


def comment_lines(text):
    """(line number, text) of every comment line: each // comment and each line of a /* */
    comment, outside string and character literals (the tree has no raw string literals)."""
    out = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            line += text.count("\n", i, j)
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append((line, text[i + 2:j]))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise ValueError(f"line {line}: unterminated /* comment")
            for k, part in enumerate(text[i + 2:j].split("\n")):
                out.append((line + k, part))
            line += text.count("\n", i, j)
            i = j + 2
        else:
            i += 1
    return out


def violations(path):
    """(line number, comment text) of each comment line of path that quotes a time or rate."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return [(ln, t.strip()) for ln, t in comment_lines(text) if PATTERN.search(t)]


def sources(root):
    for d in DIRS:
        for dirpath, dirnames, files in os.walk(os.path.join(root, d)):
            dirnames.sort()
            for f in sorted(files):
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                if f.endswith(EXTS) and rel not in GENERATED:
                    yield rel, path


def lint(root):
    """0 when clean, 1 with each violation printed, 2 on an unreadable source."""
    found = 0
    for rel, path in sources(root):
        try:
            hits = violations(path)
        except (OSError, UnicodeDecodeError, ValueError) as e:
            print(f"{rel}: {e}", file=sys.stderr)
            return 2
        for ln, t in hits:
            print(f"{rel}:{ln}: {t}")
            found += 1
    if found:
        print(f"{found} comment line(s) quote a measured time or rate: measurements belong in the "
              "committed results and docs/findings.md; say in words what was measured and where",
              file=sys.stderr)
        return 1
    return 0


def self_test():
    """A planted time is found (exit 1) and a clean tree passes (exit 0); a string literal
    holding a unit is not a comment."""
    clean = ('// 3x3 filters, 128 B rows, 39.6 MB read at N=128, 227 KB of shared memory, 14%\n'
             'const char* s = "0.845 ms // not a comment";  /* 16 bytes, 2^-11 */\n'
             'int t = 5;  // kTimeoutS seconds, the constant above\n')
    bad = clean + "// 0.845 ms at N=128\n"
    cases = [("clean", clean, 0), ("planted", bad, 1),
             ("block", clean + "/* the copy:\n   ~1.8 TB/s */\n", 1),
             ("rate", clean + "int x;  // 17.5 TFLOP/s of Winograd-domain work\n", 1)]
    ok = True
    for name, text, want in cases:
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "kernels"))
            with open(os.path.join(root, "kernels", "k.cu"), "w", encoding="utf-8") as f:
                f.write(text)
            got = lint(root)
        print(f"self-test {name}: exit {got}, expected {want}")
        ok &= got == want
    return 0 if ok else 1


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[1] if len(argv) == 2 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return lint(root)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
