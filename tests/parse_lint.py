#!/usr/bin/env python3
"""Strings only at the edges (issue 50): no code outside cli/ and the readers parses a variant
name, a precision, a split kind or a tile from a string. And supports() runs once per row: the
harness asks it before making the plans, and no plan asks it again.

Inside the tool a variant is a `const Variant*`, a precision a `Precision`, a split kind a
`SplitKind`, a tile a `TileId` (or a family's tile index), an axis value an `AxisValues` id. Text
turns into those values in cli/ (the command line, plans, the CSV readers) and in the named
readers below (the axes' text edge, the tuning and layer-table JSON readers), each through a name
table or a lookup defined once. This scans the library folders (bench, kernels, core, io, reference,
goldenio) for the patterns of a parse and fails on one outside the places allowed for it.

    python3 tests/parse_lint.py ROOT        exit 0: clean; 1: each finding as FILE:LINE: TEXT
    python3 tests/parse_lint.py --self-test plants one finding of each kind and checks each is caught
"""

import os
import re
import sys
import tempfile

DIRS = ("bench", "kernels", "core", "io", "reference", "goldenio")
EXTS = (".cu", ".cuh", ".hpp", ".cpp", ".h")

# name: (regex, files allowed to hold it: a definition or a reader)
PATTERNS = {
    # a tile spelling back to its index
    "tile lookup by name": (r"\btile_index\s*\(", {"kernels/hopper/tiles.hpp", "bench/tuning.cpp"}),
    "tile name compared": (r"tile_name\s*\([^()]*\)\s*[!=]=|[!=]=\s*\w*tile_name\s*\(", {"kernels/hopper/tiles.hpp"}),
    "tile spelling compared": (r'[!=]=\s*"m\d+n\d+', set()),
    # a row's axis values as text, read by a plan
    "axis text read": (r"\bconfig\s*\.\s*get\s*\(", {"bench/axis_text.cpp"}),
    "axis text to values": (r"\baxis_values\s*\(", {"bench/axis_text.cpp", "bench/variant.hpp", "bench/tuning.cpp"}),
    # a variant's name taken apart or looked up
    "variant lookup by name": (r"\bfind_variant\s*\(", {"bench/registry.cpp", "bench/variant.hpp", "bench/tuning.cpp"}),
    "name suffix compared": (r"\bsuffix\s*[!=]=", set()),
    "name prefix or suffix test": (r'\b(?:starts_with|ends_with|rfind|find)\s*\(\s*"(?:hopper|cudnn|cublas|winograd|'
                                   r'simt|split|mk|half|wmma|-)', set()),
    # a precision or split kind from its spelling
    "precision parsed": (r"\bparse_precision\s*\(", {"bench/tolerance.cpp", "bench/precision.hpp", "bench/tuning.cpp"}),
    "precision or split spelling compared": (r'[!=]=\s*"(?:fp32|tf32|fp16|bf16|fp16acc|3xtf32|3xfp16)"', set()),
    # a name table read backwards (a spelling to its value)
    "name table read": (r"\bvalue_named\s*\(", {"core/names.hpp", "bench/tuning.cpp", "core/layer.cpp"}),
    # a plan asking its rung's supports() again (the harness asked it: bench/harness_run.cpp); the
    # canvas plan asks winograd-f4x4's of the canvas problem it builds, a problem of its own
    "supports asked again in a plan": (r"\bauto\s+\w+\s*=\s*[\w:]*supports\w*\s*\(.*\bthrow\s+Skip\b",
                                       {"kernels/fp32fast/winograd_canvas.cu"}),
}


def strip_comments(text):
    """The text with // and /* */ comments blanked (line numbers kept); string literals kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def scan(root):
    found = []
    for d in DIRS:
        for base, _, files in os.walk(os.path.join(root, d)):
            for f in sorted(files):
                if not f.endswith(EXTS):
                    continue
                path = os.path.join(base, f)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                with open(path, encoding="utf-8", errors="replace") as fh:
                    lines = strip_comments(fh.read()).splitlines()
                for no, line in enumerate(lines, 1):
                    for name, (rx, allowed) in PATTERNS.items():
                        if rel not in allowed and re.search(rx, line):
                            found.append(f"{rel}:{no}: {name}: {line.strip()}")
    return found


def self_test():
    planted = {
        "tile lookup by name": 'int t = tile_index(p.config.get("tile"));',
        "tile name compared": "if (simt_tile_name(i) == t) cfg = i;",
        "tile spelling compared": 'if (t == "m128n256k64B-s8") x = 1;',
        "axis text read": 'auto s = p.config.get("schedule");',
        "axis text to values": "auto a = axis_values(v, c);",
        "variant lookup by name": 'auto r = find_variant("baseline");',
        "name suffix compared": 'if (row.suffix == "3xtf32") x = 1;',
        "name prefix or suffix test": 'if (name.starts_with("hopper-")) x = 1;',
        "precision parsed": 'auto p = parse_precision("fp16");',
        "precision or split spelling compared": 'if (prec == "bf16") x = 1;',
        "name table read": 'auto e = value_named(kScheduleNames, s);',
        "supports asked again in a plan": "if (auto why = tma_supports(p, ctx.prop)) throw Skip(*why);",
    }
    assert set(planted) == set(PATTERNS), "a pattern without a planted case"
    ok = True
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "kernels"))
        with open(os.path.join(root, "kernels", "plan.cu"), "w") as f:
            f.write("// config.get(\"tile\") in a comment is not code\n")
            f.write("\n".join(planted.values()) + "\n")
        found = scan(root)
        for name in planted:
            if not any(f": {name}: " in x for x in found):
                print(f"self-test: '{name}' not caught")
                ok = False
        if any(":1: " in x for x in found):
            print("self-test: a comment was flagged")
            ok = False
    print("parse_lint self-test: " + ("every planted parse caught" if ok else "FAILED"))
    return 0 if ok else 1


def lint_main(argv, doc, scan, self_test, found_line, clean_line):
    """The command line of a tree lint (this one, code_limits.py): ROOT, or --self-test. Prints each
    finding of scan(ROOT), then found_line (given their count) or clean_line; exit 0 clean, 1
    findings, 2 usage."""
    if argv == ["--self-test"]:
        return self_test()
    if len(argv) != 1:
        print(doc)
        return 2
    found = scan(argv[0])
    for x in found:
        print(x)
    print(found_line(len(found)) if found else clean_line)
    return 1 if found else 0


def main():
    return lint_main(sys.argv[1:], __doc__, scan, self_test,
                     lambda n: f"parse_lint: {n} finding(s): a parse of a name, precision, split kind or tile outside"
                               " cli/ and the readers, or a plan asking supports() again",
                     "parse_lint: no code outside cli/ and the readers parses a variant name, precision, split kind or"
                     " tile; no plan asks supports() again")


if __name__ == "__main__":
    sys.exit(main())
