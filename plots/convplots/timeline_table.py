"""Where a timed interval's time goes on the device (issues 51 and 52, batch 1): `convstudy run
--timeline`'s CSVs (bench/timeline.*: per timed interval, the time from the start event to the
first kernel, `pre_us`, and the kernels' span, `body_us`) as one table, a layer a row and a side
(the row's variant) a column pair: the median span with the kernels it holds, and the median pre.
A sum row where every side has every layer: the budget a multi-layer goal sets, split into what
every side pays before its first kernel and what its kernels take.

The docs' `timeline` block (docs.py's GENERATORS). `python3 -m convplots.timeline_table
--self-test` checks the table on made-up rows (ctest).
"""

import collections
import csv
import os
import statistics
import sys

from .io import fnum, md_table, open_text

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def medians(rows):
    """{(side, layer): (pre, span, kernels)} over the intervals of each CSV row label
    "<variant> <layer> N=<n>", in the order the labels first appear; sides and layers too."""
    groups, sides, layers = {}, [], []
    for r in rows:
        side, layer = r["row"].split()[:2]
        groups.setdefault((side, layer), []).append(r)
        sides += [side] if side not in sides else []
        layers += [layer] if layer not in layers else []
    out = {k: (statistics.median(float(r["pre_us"]) for r in v), statistics.median(float(r["body_us"]) for r in v),
               int(statistics.median(int(r["kernels"]) for r in v))) for k, v in groups.items()}
    return out, sides, layers


def table(rows):
    """The markdown table: layer, then per side its span (kernels) and pre, in µs."""
    m, sides, layers = medians(rows)
    head = ["layer"] + [h for s in sides for h in (f"{s} span µs (kernels)", f"{s} pre µs")]

    def cells(layer):
        out = []
        for s in sides:
            v = m.get((s, layer))
            out += ["—", "—"] if v is None else [f"{fnum(v[1])} ({v[2]})", fnum(v[0])]
        return out
    body = [[layer] + cells(layer) for layer in layers]
    if all((s, layer) in m for s in sides for layer in layers) and len(layers) > 1:
        body.append(["sum"] + [c for s in sides for c in (fnum(sum(m[(s, layer)][1] for layer in layers)),
                                                           fnum(sum(m[(s, layer)][0] for layer in layers)))])
    return md_table(head, body)


def read(paths):
    rows = []
    for p in paths:
        with open_text(os.path.join(ROOT, p)) as f:
            rows += list(csv.DictReader(f))
    return rows


def generator(error=ValueError):
    def timeline(csv):
        """`timeline csv=A+B`: the table of those committed timeline CSVs."""
        paths = csv.split("+")
        missing = [p for p in paths if not os.path.isfile(os.path.join(ROOT, p))]
        if missing:
            raise error(f"{', '.join(missing)}: no such committed file")
        rows = read(paths)
        n = min(collections.Counter(r["row"] for r in rows).values())
        return (table(rows) + f"\n\nMedians over at least {n} timed intervals a row (`run --timeline`, CUPTI): span, the "
                f"first kernel's start to the last kernel's end; pre, the start event to the first kernel. Source: "
                + ", ".join(f"`{p}`" for p in paths) + ".\n")
    return timeline


def self_test():
    head = "row,interval,anchor,pre_us,body_us,post_us,kernels\n"
    rows = list(csv.DictReader((head + "auto-fp16 conv1 N=1,0,hold,2,10,,3\nauto-fp16 conv1 N=1,1,hold,3,12,,3\n"
                                "auto-fp16 conv1 N=1,2,hold,2.5,11,,3\ncudnn-fp16 conv1 N=1,0,hold,2.6,20,,1\n"
                                "auto-fp16 conv2 N=1,0,hold,2.4,8,,1\ncudnn-fp16 conv2 N=1,0,hold,2.7,9,,1\n").splitlines()))
    m, sides, layers = medians(rows)
    assert sides == ["auto-fp16", "cudnn-fp16"] and layers == ["conv1", "conv2"], (sides, layers)
    assert m[("auto-fp16", "conv1")] == (2.5, 11, 3), m
    t = table(rows)
    assert "| conv1 | 11.0 (3) | 2.50 | 20.0 (1) | 2.60 |" in t, t
    assert "| sum | 19.0 | 4.90 | 29.0 | 5.30 |" in t, t
    # a side without a layer: a dash, and no sum row
    t = table(rows[:4] + rows[5:])
    assert "| conv2 | — | — | 9.00 (1) | 2.70 |" in t and "sum" not in t, t
    print("timeline_table self-test: ok")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
    else:
        sys.exit("usage: python3 -m convplots.timeline_table --self-test")
