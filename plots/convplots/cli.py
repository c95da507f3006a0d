"""The command line: read the CSVs, draw every figure, write the report."""

import argparse
import concurrent.futures
import math
import multiprocessing
import os
import struct
import sys
import tempfile

from .io import Data, is_pytorch_csv, load, slug
from .outcome import announce, attempt, write_report
from .breakdowns import breakdown_N, fig_breakdown
from .comparison import render_compare
from .errors import fig_errors
from .headline import fig_summary
from .report import report
from .ladders import fig_ladders
from .profile_section import attach_pytorch
from .roofline import ceilings_N, fig_ceilings, fig_roofline, fig_tflops
from .speedups import coalescing_layer, fig_all_layers, fig_coalescing, fig_scaling, fig_speedup, fig_vs_cudnn


MAX_HEIGHT_PX = 1600  # a figure taller than this is drawn again, one part per group of families
MAX_ROWS = 20  # a figure with a row per variant shows at most this many; more are drawn in parts


def png_height(path):
    with open(path, "rb") as f:
        head = f.read(24)
    return struct.unpack(">I", head[20:24])[0]


def family_groups(d, parts):
    """The families in data order, cut into `parts` consecutive groups of about equal rows
    (variants); a family is never cut."""
    sizes = [(f, sum(1 for v in d.variants if d.families[v] == f)) for f in d.family_order]
    total = sum(n for _, n in sizes)
    groups, cur, acc = [], [], 0
    for f, n in sizes:
        if cur and acc + n > total / parts * 1.15:
            groups.append(cur)
            cur, acc = [], 0
        cur.append(f)
        acc += n
    if cur:
        if groups and acc < total / parts * 0.3:  # a small tail joins the group before it
            groups[-1] += cur
        else:
            groups.append(cur)
    return groups


def split_by_family(d, out, name, fn, args, res):
    """Draws fn again per group of families when out/res is taller than MAX_HEIGHT_PX; returns
    the files that make up the figure (res itself when it fits, else <stem>_<families>.png)."""
    path = os.path.join(out, res)
    h = png_height(path)
    if h <= MAX_HEIGHT_PX or len(d.family_order) < 2:
        return [res]
    stem = res[:-len(".png")]
    parts = max(2, math.ceil(h / (MAX_HEIGHT_PX * 0.85)))
    files = []
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        while True:  # more parts until each fits (a family is never cut)
            drawn = []
            for g in family_groups(d, parts):
                r, _ = fn(d.subset(set(g)), tmp, *args)
                if r:
                    os.replace(os.path.join(tmp, r), os.path.join(tmp, f"{stem}_{slug('_'.join(g))}.png"))
                    drawn.append(f"{stem}_{slug('_'.join(g))}.png")
            too_tall = any(png_height(os.path.join(tmp, f)) > MAX_HEIGHT_PX for f in drawn)
            if not too_tall or parts >= len(d.family_order):
                break
            for f in drawn:
                os.remove(os.path.join(tmp, f))
            parts += 1
        for f in drawn:
            os.replace(os.path.join(tmp, f), os.path.join(out, f))
            files.append(f)
    if files:
        os.remove(path)
        return files
    return [res]


def split_rows(d, out, fn, args, res):
    """Draws fn again per run of MAX_ROWS variants (in the view's order) when d has more
    variants than that or out/res is taller than MAX_HEIGHT_PX; returns the files that make up
    the figure (res itself when it fits, else <stem>_<k>.png)."""
    if len(d.variants) <= MAX_ROWS and png_height(os.path.join(out, res)) <= MAX_HEIGHT_PX:
        return [res]
    stem = res[:-len(".png")]
    k = math.ceil(len(d.variants) / MAX_ROWS)
    size = math.ceil(len(d.variants) / k)
    files = []
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        for i in range(k):
            chunk = d.variants[i * size:(i + 1) * size]
            r, _ = fn(d.view(chunk, f"part {i + 1} of {k}"), tmp, *args)
            if not r:
                continue
            part = f"{stem}_{i + 1}.png"
            os.replace(os.path.join(tmp, r), os.path.join(out, part))
            files.append(part)
    if files:
        os.remove(os.path.join(out, res))
        return files
    return [res]


_FIGURES = {}  # what the figure processes draw from (inherited by fork): the data, the folder, the jobs


def _draw(i):
    """Draws the i-th job of _FIGURES; returns (res, parts, info, error): the figure's files, or
    why it was skipped, or the traceback of its failure."""
    d, out, jobs = _FIGURES["d"], _FIGURES["out"], _FIGURES["jobs"]
    name, fn, args, split, rows, rank = jobs[i]

    def draw():
        view = d.ranked(args[0] if args else None) if rank else d
        res, info = fn(view, out, *args)
        if res and rows:
            return res, (split_rows(view, out, fn, args, res), info)
        return res, (split_by_family(d, out, name, fn, args, res) if res and split else [res], info)

    res, parts_info, error = attempt(draw)
    parts, info = parts_info if parts_info else (None, None)
    return res, parts, info, error


def render(rows, layer_order, out, inputs, suffix, pytorch=()):
    os.makedirs(out, exist_ok=True)
    d = Data(rows, layer_order, suffix)
    attach_pytorch(d, pytorch)
    figs = {"_skipped": {}}
    failed = []
    jobs = []

    def run(name, fn, *args, split=True, rows=False, rank=False):
        """rows: a row per variant (at most MAX_ROWS a part); rank: the rows sorted by speed on
        one cell (Data.ranked: the figure's layer, else conv2), the same order in every panel."""
        jobs.append((name, fn, args, split, rows, rank))

    run("summary.png", fig_summary, split=False)
    for l in d.layers:
        run(f"speedup_{l}.png", fig_speedup, l, rows=True, rank=True)
    for l in d.layers:
        run(f"breakdown_{l}_N{breakdown_N(d)}.png", fig_breakdown, l, rows=True)
    run("all_layers.png", fig_all_layers, rows=True, rank=True)
    run(f"coalescing_{coalescing_layer(d) or 'conv1'}.png", fig_coalescing)
    run("scaling.png", fig_scaling)
    run("errors.png", fig_errors, rows=True)
    run("vs_cudnn.png", fig_vs_cudnn, rows=True, rank=True)
    run("tflops.png", fig_tflops, rows=True, rank=True)
    run(f"ceilings_N{ceilings_N(d)}.png", fig_ceilings, rows=True, rank=True)
    run("roofline.png", fig_roofline, split=False)
    run("ladders.png", fig_ladders)
    # The figures are independent: drawn in parallel processes (fork: each inherits the data),
    # reported in the order above. CS_PLOT_JOBS=1 draws them in this process.
    _FIGURES.update(d=d, out=out, jobs=jobs)
    workers = min(len(jobs), int(os.environ.get("CS_PLOT_JOBS", "0")) or os.cpu_count() or 1)
    if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("fork")
        with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as ex:
            results = list(ex.map(_draw, range(len(jobs))))
    else:
        results = [_draw(i) for i in range(len(jobs))]
    for (name, *_), (res, parts, info, error) in zip(jobs, results):
        if error:
            figs["_skipped"][name] = "failed: see the error printed by plot.py"
        elif res:
            figs[res] = parts
        else:
            figs["_skipped"][name] = info
        announce(name, out, parts if res else None, info, error, failed)
    write_report("report.md", lambda: report(d, out, figs, inputs), failed)
    return failed


def main(argv=None):
    ap = argparse.ArgumentParser(description="Figures and a markdown report from convstudy sweep CSVs.")
    ap.add_argument("csv", nargs="*", help="sweep CSV(s); a later row for the same (device, layer, N, variant, "
                                           "memory, layout) replaces an earlier one")
    ap.add_argument("--compare", nargs=2, metavar=("A.csv", "B.csv"),
                    help="instead: draw run B against run A (B / A ratios, noise band) and write compare.md")
    ap.add_argument("--out", required=True, help="output folder for the PNGs and report.md (compare.md)")
    ap.add_argument("--title-suffix", default="", help="text appended to every figure title")
    a = ap.parse_args(argv)
    if a.compare and a.csv:
        ap.error("give either sweep CSVs or --compare A.csv B.csv, not both")
    if not a.compare and not a.csv:
        ap.error("give one or more sweep CSVs, or --compare A.csv B.csv")
    for p in a.csv + (a.compare or []):
        if not os.path.isfile(p):
            ap.error(f"{p}: no such file")
    if a.compare:
        runs = []
        for p in a.compare:
            rows, layer_order = load([p])
            if not rows:
                print(f"plot.py: {p}: the CSV holds no rows: nothing to compare", file=sys.stderr)
                return 1
            runs.append((rows, layer_order))
        failed = render_compare(runs[0][0], runs[0][1], runs[1][0], runs[1][1], a.compare[0], a.compare[1], a.out,
                                a.title_suffix)
        if failed:
            print(f"plot.py: {len(failed)} output(s) failed: {', '.join(failed)}", file=sys.stderr)
            return 1
        return 0
    # PyTorch anchor CSVs (scripts/pytorch_anchors.py) go beside the sweep's, into the report
    pytorch = [p for p in a.csv if is_pytorch_csv(p)]
    a.csv = [p for p in a.csv if p not in pytorch]
    if not a.csv:
        ap.error("give at least one sweep CSV (the PyTorch anchor CSVs go beside one)")
    rows, layer_order = load(a.csv)
    if not rows:
        print("plot.py: the CSV(s) hold no rows: nothing to plot", file=sys.stderr)
        return 1
    devices = []
    for r in rows:
        if r["device"] not in devices:
            devices.append(r["device"])
    failed = []
    if len(devices) == 1:
        failed += render(rows, layer_order, a.out, a.csv, a.title_suffix, pytorch)
    else:
        os.makedirs(a.out, exist_ok=True)
        index = ["# convstudy results", "", "The CSV(s) hold rows from several devices; each has its own folder:", ""]
        for dev in devices:
            sub = slug(dev)
            failed += render([r for r in rows if r["device"] == dev], layer_order, os.path.join(a.out, sub), a.csv,
                             a.title_suffix)
            index.append(f"- [{dev}]({sub}/report.md)")
        with open(os.path.join(a.out, "report.md"), "w", encoding="utf-8") as f:
            f.write("\n".join(index) + "\n")
        print(f"wrote {os.path.join(a.out, 'report.md')} (one folder per device)")
    if failed:
        print(f"plot.py: {len(failed)} output(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
