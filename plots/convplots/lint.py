"""The prose-number lint: no measured number is typed by hand.

It fails on a number with a unit (ms, µs, us, s, x, ×, %, TFLOP/s, GFLOP, GB/s, TB/s, MB,
GB, MHz) in README.md, CONTRIBUTING.md and docs/*.md outside the generated blocks (docs.py),
and in the fixed text of the generated report (the string literals of the modules that write
report.md: everything the report says that is not computed from the CSV). A number may stand
in prose only with an entry in WHITELIST (docs/prose-numbers.json) that names a committed CSV
(a path, or REV:path for one in git history) and the query that recomputes it:

    {"file": "README.md", "text": "0.0976 ms", "csv": "results/h200/sweep_all_variants.csv.gz",
     "where": {"variant": "cudnn-fp16", "layer": "conv2", "N": "128", "layout": "nhwc"},
     "column": "convert_ms", "agg": "value", "format": "{:.3g} ms"}

The lint recomputes every entry and fails when the formatted value differs from `text`, or
when the text no longer stands in the file (a stale entry). `--lint-self-test` plants a
stale number and an unlisted one and checks that both fail.
"""

import ast
import csv
import glob
import io
import json
import os
import re
import statistics
import subprocess
import sys

from .docs import BLOCK, ROOT
from .io import open_text

WHITELIST = "docs/prose-numbers.json"
REPORT_MODULES = ["plots/convplots/report/*.py", "plots/convplots/summary.py", "plots/convplots/ladders.py",
                  "plots/convplots/roofline.py", "plots/convplots/profile_section.py"]
NUM = r"(?<![\w.^])(?<![A-Za-z]-)\d+(?:,\d{3})*(?:\.\d+)?"
NUMBER_UNIT = re.compile(NUM + r"(?:\s?(?:TFLOP/s|GFLOP|GB/s|TB/s|MHz|MB|GB|ms|µs|us|s|%)|[x×])(?![\w/])")
# A block convstudy writes itself and a CPU test checks (docs/csv-columns.md's schema,
# docs/variants.md's registry): generated, like docs.py's blocks.
TOOL_BLOCK = re.compile(r"<!-- BEGIN (?P<name>\w+) \(convstudy [^)]*\) -->\n.*?<!-- END (?P=name) -->", re.S)
AGGS = {"value": None, "median": statistics.median, "min": min, "max": max, "sum": sum, "count": len}


def doc_files():
    fs = ["README.md", "CONTRIBUTING.md"] + sorted(os.path.relpath(p, ROOT) for p in
                                                   glob.glob(os.path.join(ROOT, "docs", "*.md")))
    return [f for f in fs if os.path.isfile(os.path.join(ROOT, f))]


def report_literals(path):
    """The string literals of a module (f-strings' fixed parts), one per line of text."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    doc_nodes = {id(n.body[0].value) for n in ast.walk(tree)
                 if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
                 and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in doc_nodes:
            yield n.lineno, n.value


def hits(text):
    """(line number, matched text) of every number with a unit outside the generated blocks."""
    out = []
    pos = 0
    blocks = sorted(list(BLOCK.finditer(text)) + list(TOOL_BLOCK.finditer(text)), key=lambda m: m.start())
    for m in blocks + [None]:
        end = m.start() if m else len(text)
        for h in NUMBER_UNIT.finditer(text, pos, end):
            out.append((text.count("\n", 0, h.start()) + 1, h.group(0)))
        if m:
            pos = m.end()
    return out


def read_csv(spec):
    if ":" in spec and not os.path.exists(os.path.join(ROOT, spec)):
        r = subprocess.run(["git", "-C", ROOT, "show", spec], capture_output=True)
        if r.returncode != 0:
            raise ValueError(f"git show {spec}: {r.stderr.decode().strip()}")
        data = r.stdout
        if data[:2] == b"\x1f\x8b":
            import gzip
            data = gzip.decompress(data)
        return list(csv.DictReader(io.StringIO(data.decode("utf-8"))))
    path = os.path.join(ROOT, spec)
    if not os.path.isfile(path):
        raise ValueError(f"{spec}: no such committed file")
    with open_text(path) as f:
        return list(csv.DictReader(f))


def recompute(e):
    """The entry's text as its query gives it now."""
    rows = [r for r in read_csv(e["csv"]) if all(r.get(k) == str(v) for k, v in e.get("where", {}).items())]
    agg = e.get("agg", "value")
    if agg not in AGGS:
        raise ValueError(f"agg {agg!r}: one of {', '.join(AGGS)}")
    if agg == "count":
        val = len(rows)
    else:
        vals = [float(r[e["column"]]) for r in rows if r.get(e["column"], "") != ""]
        if agg == "value" and len(vals) != 1:
            raise ValueError(f"the query matches {len(vals)} rows with {e['column']}, not one")
        if not vals:
            raise ValueError("the query matches no row")
        val = vals[0] if agg == "value" else AGGS[agg](vals)
    return e.get("format", "{}").format(val * float(e.get("scale", 1)))


def lint(texts, whitelist):
    """texts: {name: text}; returns the errors."""
    errors, allowed = [], {}
    for e in whitelist:
        try:
            now = recompute(e)
        except (KeyError, ValueError) as x:
            errors.append(f"{WHITELIST}: {e.get('file')}: {e.get('text')!r}: {x}")
            continue
        if now != e["text"]:
            errors.append(f"{e['file']}: {e['text']!r} is stale: {e['csv']} gives {now!r} ({e.get('column')})")
            continue
        if e["file"] in texts and e["text"] not in texts[e["file"]]:
            errors.append(f"{WHITELIST}: {e['file']} no longer says {e['text']!r}: remove the entry")
        allowed.setdefault(e["file"], set()).add(e["text"])
    for name, text in texts.items():
        for line, h in hits(text):
            if not any(h in a for a in allowed.get(name, ())):
                errors.append(f"{name}:{line}: {h!r}: a number with a unit outside a generated block "
                              f"(generate it, or add a {WHITELIST} entry that recomputes it)")
    return errors


def load_whitelist():
    path = os.path.join(ROOT, WHITELIST)
    if not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def gather():
    texts = {}
    for f in doc_files():
        with open(os.path.join(ROOT, f), encoding="utf-8") as fh:
            texts[f] = fh.read()
    for pat in REPORT_MODULES:
        for p in sorted(glob.glob(os.path.join(ROOT, pat))):
            lines = {}
            for line, lit in report_literals(p):  # each literal at its own source line
                lines[line] = (lines.get(line, "") + " " + lit.replace("\n", " ")).strip()
            if lines:
                texts[os.path.relpath(p, ROOT)] = "\n".join(lines.get(i, "") for i in range(1, max(lines) + 1))
    return texts


def self_test():
    """A planted stale number and an unlisted one fail; the recomputed one and one inside a
    generated block pass."""
    sweep = "results/h200/sweep_all_variants.csv.gz"
    where = {"variant": "cudnn-fp16", "layer": "conv2", "N": "128", "layout": "nhwc"}
    entry = {"file": "t.md", "csv": sweep, "where": where, "column": "kernel_ms", "agg": "value", "format": "{:.3g} ms"}
    good = recompute(entry)
    num = float(good.split()[0])
    stale = f"{num * 1.5:.3g} ms"
    block = "<!-- BEGIN generated:sweep -->\nfrom 1.5 ms to 2 ms\n<!-- END generated:sweep -->\n"
    cases = [("the recomputed number", f"cuDNN takes {good} here.\n" + block, dict(entry, text=good), True),
             ("a stale number", f"cuDNN takes {stale} here.\n", dict(entry, text=stale), False),
             ("an unlisted number", f"cuDNN takes {good} and ours 17 ms.\n", dict(entry, text=good), False),
             ("a ratio and a percentage", "about 2x, or 15 %.\n", dict(entry, text=good), False)]
    bad = 0
    for what, text, e, ok in cases:
        errs = lint({"t.md": text}, [e])
        if (not errs) != ok:
            print(f"lint self-test: {what}: expected {'pass' if ok else 'failure'}, got {errs or 'pass'}",
                  file=sys.stderr)
            bad += 1
    if hits("5x5 filters, 3xTF32, 128 x 128 tiles, sm_90, conv2, 0x1f, N=128, 2^-24, 3 stages"):
        print(f"lint self-test: flagged a number without a unit: "
              f"{hits('5x5 filters, 3xTF32, 128 x 128 tiles, sm_90, conv2, 0x1f, N=128, 2^-24, 3 stages')}",
              file=sys.stderr)
        bad += 1
    bad += blocks_self_test()
    if bad:
        return 1
    print(f"lint self-test: passed (a stale {stale!r} and an unlisted number fail; {good!r} recomputed passes)")
    return 0


def blocks_self_test():
    """docs.py --check's rule on a planted document: a generated block whose text differs from
    what the committed results give is stale; the same block as generated is not."""
    import tempfile
    from . import docs
    fresh = docs.GENERATORS["sweep"]()
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for body, want in ((fresh, []), (fresh.replace("PASS", "PASS (edited)"), ["stale"])):
            path = os.path.join(tmp, "planted.md")
            with open(path, "w", encoding="utf-8") as f:
                f.write(f"text\n<!-- BEGIN generated:sweep -->\n{body}<!-- END generated:sweep -->\n")
            stale, errors = docs.process(update=False, docs=[path])
            if errors or bool(stale) != bool(want):
                print(f"lint self-test: docs.py --check on a planted block: stale {stale}, errors {errors}",
                      file=sys.stderr)
                bad += 1
    return bad


def main(argv):
    if argv == ["--lint-self-test"]:
        return self_test()
    texts = gather()
    errors = lint(texts, load_whitelist())
    for e in errors:
        print(f"lint: {e}", file=sys.stderr)
    if errors:
        print(f"lint: {len(errors)} problem(s) in {', '.join(sorted(texts))}", file=sys.stderr)
        return 1
    print(f"lint: no number with a unit outside a generated block in {', '.join(doc_files())} "
          f"and the report's fixed text; {len(load_whitelist())} whitelisted number(s) recomputed")
    return 0
