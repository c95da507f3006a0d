#!/usr/bin/env python3
"""Figures and a markdown report from convstudy sweep CSVs.

    plot.py RESULTS.csv [MORE.csv ...] --out DIR [--title-suffix TEXT]

Reads one or more CSVs written by `convstudy sweep` (columns: csv_columns() in
src/cli/results.cpp; README "CSV columns"), concatenated in order: a later row for the same
(device, layer, N, variant, memory) replaces an earlier one. Writes PNG figures and
DIR/report.md with the reference study's tables, every table and figure stating the CSV
file(s), device and sweep date it came from.

Everything comes from the data: variant names, families, precisions, layers, batch sizes,
memory modes. The only names this script knows are the `-uncoalesced` suffix (to pair a
variant with its uncoalesced twin) and the family `cudnn` (the anchor rows).

Conventions:
- Timing figures use PASS rows only; the report lists SKIP, FAIL and ERROR rows with reasons.
- A variant's "default" memory mode is pageable when it ran there, else the first of
  pinned, streams, managed-prefetch, managed (then any other) that it ran in. Per-variant
  figures use that mode; the breakdown figure and the tables show every mode a variant ran.
- "Main" batch sizes are those that at least half of the variants ran (the N = 1, 32, 128
  sweep); larger N that only a scaling sweep ran appear in the scaling figure and tables.
- Variants are ordered by family (in the order the data first shows them: the registry's
  order for a sweep), then by name.

Needs python3 with numpy and matplotlib only (csv module, no pandas). A figure whose data is
missing is skipped with a line on stdout; if one figure fails the others are still written
and the exit code is 1.
"""

import argparse
import csv
import math
import os
import re
import statistics
import sys
import traceback

try:
    import numpy as np
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import colors as mcolors
    from matplotlib import ticker as mticker
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
except ImportError as exc:  # pragma: no cover - depends on the machine
    sys.stderr.write(f"plot.py: cannot import numpy/matplotlib ({exc}).\n"
                     "Install them: apt-get install python3-matplotlib python3-numpy\n")
    sys.exit(3)

MEM_ORDER = ["pageable", "pinned", "streams", "managed-prefetch", "managed"]
PREC_ORDER = ["fp32", "tf32", "fp16", "fp16acc"]
PREC_COLOR = {"fp32": "#1f77b4", "tf32": "#2ca02c", "fp16": "#ff7f0e", "fp16acc": "#d62728"}
COPY_COLOR = {"h2d": "#4c72b0", "kernel": "#dd8452", "d2h": "#55a868"}
UNCOALESCED = "-uncoalesced"
ANCHOR_FAMILY = "cudnn"
REQUIRED = ["device", "layer", "N", "variant", "memory", "status"]
NUMERIC = ["max_abs_err", "max_rel_err", "rel_l2_err", "threshold", "kernel_ms", "kernel_min_ms",
           "kernel_max_ms", "h2d_ms", "d2h_ms", "total_ms", "setup_ms", "overlap", "cpu_ms",
           "cpu_onednn_ms", "speedup_kernel", "speedup_total", "vs_cudnn", "gflop", "tflops",
           "pct_peak", "peak_tflops", "workspace_bytes", "device_bytes"]
DPI = 110


# ----------------------------------------------------------------------------------------
# loading


def grouped_barh(ax, vs, j, h, row_of, field, used, height_frac, **bar_kw):
    """One group of horizontal bars: bar j (of width h) in each variant's row i, from
    row_of(variant)[field] where the row exists and the field is set. Rows drawn are
    appended to `used`; returns the bars' positions and values."""
    ys, xs = [], []
    for i, v in enumerate(vs):
        r = row_of(v)
        if r and r[field]:
            ys.append(i - 0.4 + h * (j + 0.5))
            xs.append(r[field])
            used.append(r)
    ax.barh(ys, xs, height=h * height_frac, zorder=2, **bar_kw)
    return ys, xs

def _num(s):
    if s is None:
        return None
    s = s.strip()
    if not s:
        return None
    try:
        v = float(s)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def load(paths):
    """Rows of all CSVs, later (device, layer, N, variant, memory) replacing earlier ones."""
    rows = {}
    layer_order = []
    for path in paths:
        with open(path, newline="", encoding="utf-8") as f:
            rd = csv.DictReader(f)
            missing = [c for c in REQUIRED if c not in (rd.fieldnames or [])]
            if missing:
                raise SystemExit(f"plot.py: {path}: not a convstudy CSV (missing column(s): "
                                 f"{', '.join(missing)})")
            for lineno, raw in enumerate(rd, start=2):
                r = {k: (v or "").strip() for k, v in raw.items() if k is not None}
                try:
                    r["N"] = int(float(r["N"]))
                except ValueError:
                    print(f"plot.py: {path}:{lineno}: bad N {r['N']!r}, row ignored")
                    continue
                for c in NUMERIC:
                    r[c] = _num(r.get(c))
                r["status"] = r["status"].upper()
                r.setdefault("family", "")
                r["family"] = r["family"] or "(none)"
                r["_src"] = path
                if r["layer"] not in layer_order:
                    layer_order.append(r["layer"])
                key = (r["device"], r["layer"], r["N"], r["variant"], r["memory"])
                rows.pop(key, None)
                rows[key] = r
    return list(rows.values()), layer_order


def ok(r):
    return r["status"] == "PASS" and r["kernel_ms"] is not None and r["kernel_ms"] > 0


# ----------------------------------------------------------------------------------------
# formatting helpers

def fnum(v, dash="—"):
    """Three significant figures without exponents for the usual range."""
    if v is None:
        return dash
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    if a == 0:
        return "0"
    if a >= 0.001:
        return f"{v:.3g}"
    return f"{v:.2e}"


def fexp(v, dash="—"):
    return dash if v is None else ("0" if v == 0 else f"{v:.2e}")


def fx(v, dash="—"):
    return dash if v is None else fnum(v) + "×"


def md_table(header, rows, align=None):
    align = align or ["l"] + ["r"] * (len(header) - 1)
    sep = ["---:" if a == "r" else ":---" if a == "l" else ":---:" for a in align]
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    for r in rows:
        out.append("| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |")
    return "\n".join(out)


def slug(s):
    return re.sub(r"[^A-Za-z0-9._-]+", "_", s).strip("_") or "device"


def date_range(rows):
    ds = sorted({r.get("timestamp", "")[:10] for r in rows if r.get("timestamp")})
    if not ds:
        return "date unknown"
    return ds[0] if len(ds) == 1 else f"{ds[0]} – {ds[-1]}"


# ----------------------------------------------------------------------------------------
# the data of one device

class Data:
    def __init__(self, rows, layer_order, title_suffix=""):
        self.rows = rows
        self.device = rows[0]["device"] if rows else "unknown device"
        self.suffix = title_suffix
        self.layers = [l for l in layer_order if any(r["layer"] == l for r in rows)]
        self.families, self.precision = {}, {}
        for r in rows:
            self.families.setdefault(r["variant"], r["family"])
            if r.get("precision"):
                self.precision.setdefault(r["variant"], r["precision"])
        fam_order = []
        for r in rows:  # families in the order the data first shows them (the registry's order)
            if r["family"] not in fam_order:
                fam_order.append(r["family"])
        self.variants = sorted(self.families, key=lambda v: (fam_order.index(self.families[v]), v))
        self.Ns = sorted({r["N"] for r in rows})
        self.idx = {(r["layer"], r["N"], r["variant"], r["memory"]): r for r in rows}
        self.modes = {}
        for r in rows:
            self.modes.setdefault(r["variant"], set()).add(r["memory"])
        self.default_mode = {v: self._pick_mode(self.modes[v]) for v in self.variants}
        # main batch sizes: run by at least half of the variants that have any PASS row
        per_n = {n: {r["variant"] for r in rows if r["N"] == n and ok(r)} for n in self.Ns}
        most = max((len(s) for s in per_n.values()), default=0)
        self.main_Ns = [n for n in self.Ns if most and len(per_n[n]) * 2 >= most] or self.Ns
        peaks = [r["peak_tflops"] for r in rows if r["peak_tflops"]]
        self.peak = statistics.median(peaks) if peaks else None

    @staticmethod
    def _pick_mode(modes):
        for m in MEM_ORDER:
            if m in modes:
                return m
        return sorted(modes)[0]

    def get(self, layer, n, variant, memory=None):
        return self.idx.get((layer, n, variant, memory or self.default_mode[variant]))

    def getok(self, layer, n, variant, memory=None):
        r = self.get(layer, n, variant, memory)
        return r if r is not None and ok(r) else None

    def label(self, v, memory=None):
        m = memory or self.default_mode[v]
        return v if m == "pageable" else f"{v} [{m}]"

    def modes_of(self, v):
        return sorted(self.modes[v], key=lambda m: (MEM_ORDER.index(m) if m in MEM_ORDER else 99, m))

    def title(self, what, rows=None):
        rows = rows if rows else self.rows
        t = f"{what}\n{self.device} · sweep {date_range(rows)}"
        return t + (f" · {self.suffix}" if self.suffix else "")

    def provenance(self, rows, note=""):
        rows = [r for r in rows if r is not None]
        if not rows:
            rows = self.rows
        files = []
        for r in rows:
            if r["_src"] not in files:
                files.append(r["_src"])
        src = ", ".join(f"`{f}`" for f in files)
        s = f"*Source: {src} · {self.device} · sweep {date_range(rows)} · {len(rows)} rows"
        return s + (f" · {note}*" if note else "*")

    def cpu_ms(self, layer, n):
        vals = [r["cpu_ms"] for r in self.rows if r["layer"] == layer and r["N"] == n and r["cpu_ms"]]
        return statistics.median(vals) if vals else None


# ----------------------------------------------------------------------------------------
# figure helpers

def save(fig, out, name):
    path = os.path.join(out, name)
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return name


def n_colors(ns):
    cmap = matplotlib.colormaps["viridis"]
    k = len(ns)
    return {n: cmap(0.1 + 0.75 * (i / max(1, k - 1))) for i, n in enumerate(ns)}


def layer_colors(layers):
    cmap = matplotlib.colormaps["tab10"]
    return {l: cmap(i % 10) for i, l in enumerate(layers)}


def variant_colors(variants):
    cm = matplotlib.colormaps["tab10"]
    return {v: cm(i % 10) for i, v in enumerate(variants)}


def family_bands(ax, fams, horizontal=True, label=True):
    """Shade alternate family groups along the category axis and (label) name each family
    just right of the axes."""
    start = 0
    groups = []
    for i in range(1, len(fams) + 1):
        if i == len(fams) or fams[i] != fams[start]:
            groups.append((fams[start], start, i - 1))
            start = i
    for gi, (fam, a, b) in enumerate(groups):
        if gi % 2 == 1:
            if horizontal:
                ax.axhspan(a - 0.5, b + 0.5, color="0.93", zorder=0)
            else:
                ax.axvspan(a - 0.5, b + 0.5, color="0.93", zorder=0)
        if horizontal and label:
            ax.annotate(fam, xy=(1.0, (a + b) / 2), xycoords=("axes fraction", "data"), xytext=(4, 0),
                        textcoords="offset points", va="center", ha="left", fontsize=8, style="italic",
                        color="0.35")
    return groups


def log_if_wide(ax, vals, axis="x", ratio=30.0):
    vals = [v for v in vals if v is not None and v > 0]
    if vals and max(vals) / min(vals) > ratio:
        (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
        return True
    return False


def plain_log_ticks(ax, axis="x"):
    """Call after the limits are set: label a log axis with plain numbers (1, 2, 5, 10, ...)
    and keep its minor grid faint."""
    a = ax.xaxis if axis == "x" else ax.yaxis
    lo, hi = ax.get_xlim() if axis == "x" else ax.get_ylim()
    lo, hi = min(lo, hi), max(lo, hi)
    fmt = mticker.FuncFormatter(lambda v, _: f"{v:g}")
    if lo > 0 and hi / lo <= 1e6:
        a.set_major_formatter(fmt)
        if hi / lo <= 300:
            a.set_minor_locator(mticker.LogLocator(base=10, subs=(2.0, 5.0)))
            a.set_minor_formatter(fmt)
        else:
            a.set_minor_formatter(mticker.NullFormatter())
    ax.grid(axis=axis, which="major", alpha=0.35, zorder=1)
    ax.grid(axis=axis, which="minor", alpha=0.12, zorder=1)


# ----------------------------------------------------------------------------------------
# figures

def fig_speedup(d, out, layer):
    Ns = d.main_Ns
    vs = [v for v in d.variants if any(d.getok(layer, n, v) for n in Ns)]
    if not vs:
        return None, f"no PASS rows for {layer}"
    cols = n_colors(Ns)
    nb = len(Ns)
    h = 0.8 / nb
    fig, ax = plt.subplots(figsize=(10, 1.6 + len(vs) * (0.16 * nb + 0.12)))
    used, vals = [], []
    for j, n in enumerate(Ns):
        ys, xs = grouped_barh(ax, vs, j, h, lambda v: d.getok(layer, n, v), "speedup_kernel", used,
                              height_frac=0.92, color=cols[n], label=f"N = {n}")
        vals += xs
        for y, x in zip(ys, xs):
            ax.annotate(fnum(x), (x, y), xytext=(2, 0), textcoords="offset points", va="center",
                        fontsize=6.5, color="0.25")
    if not vals:
        plt.close(fig)
        return None, f"no speedup values for {layer}"
    is_log = log_if_wide(ax, vals)
    lo, hi = min(vals), max(vals)
    if is_log:
        ax.set_xlim(lo / 1.6, hi * 2.2)
        plain_log_ticks(ax, "x")
    else:
        ax.set_xlim(0, hi * 1.15)
    ax.axvline(1.0, color="0.3", lw=1, ls="--", zorder=3)
    ax.set_yticks(range(len(vs)))
    ax.set_yticklabels([d.label(v) for v in vs], fontsize=8)
    ax.set_ylim(len(vs) - 0.5, -0.5)
    family_bands(ax, [d.families[v] for v in vs])
    ax.set_xlabel("speedup over the CPU float32 reference, kernel only (cpu_ms / kernel_ms)"
                  + (", log scale" if is_log else ""))
    if not is_log:
        ax.grid(axis="x", alpha=0.3, zorder=1)
    handles = [Patch(color=cols[n], label=f"N = {n}") for n in Ns]
    handles.append(Line2D([], [], color="0.3", ls="--", label="CPU = 1×"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.13, 1.0), fontsize=8, frameon=False)
    ax.set_title(d.title(f"{layer}: speedup by variant (memory: pageable unless [marked])", used), fontsize=10)
    return save(fig, out, f"speedup_{layer}.png"), used


def breakdown_N(d):
    return max(d.main_Ns) if d.main_Ns else None


def fig_breakdown(d, out, layer):
    n = breakdown_N(d)
    entries = []
    for v in d.variants:
        for m in d.modes_of(v):
            r = d.getok(layer, n, v, m)
            if r and r["h2d_ms"] is not None and r["d2h_ms"] is not None:
                entries.append((v, m, r))
    if not entries:
        return None, f"no PASS rows with copy times for {layer} at N={n}"
    fig, ax = plt.subplots(figsize=(10, 1.6 + 0.27 * len(entries)))
    ys = np.arange(len(entries))
    h2d = np.array([e[2]["h2d_ms"] for e in entries])
    ker = np.array([e[2]["kernel_ms"] for e in entries])
    d2h = np.array([e[2]["d2h_ms"] for e in entries])
    ax.barh(ys, h2d, color=COPY_COLOR["h2d"], label="host → device copy", height=0.75, zorder=2)
    ax.barh(ys, ker, left=h2d, color=COPY_COLOR["kernel"], label="kernel(s)", height=0.75, zorder=2)
    ax.barh(ys, d2h, left=h2d + ker, color=COPY_COLOR["d2h"], label="device → host copy", height=0.75, zorder=2)
    tot = [e[2]["total_ms"] for e in entries]
    ty = [y for y, t in zip(ys, tot) if t is not None]
    tx = [t for t in tot if t is not None]
    ax.scatter(tx, ty, marker="|", s=160, color="k", zorder=4, label="total_ms (measured end to end)")
    stack = h2d + ker + d2h
    for y, s, t in zip(ys, stack, tot):  # label: the measured total (streams: less than the stack)
        ax.annotate(fnum(t if t is not None else s), (max(s, t or 0), y), xytext=(4, 0), textcoords="offset points",
                    va="center", fontsize=7, color="0.25")
    ax.set_xlim(0, max(float(stack.max()), max(tx) if tx else 0) * 1.12)
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{v} · {m}" for v, m, _ in entries], fontsize=8)
    ax.set_ylim(len(entries) - 0.5, -0.5)
    family_bands(ax, [d.families[v] for v, _, _ in entries])
    ax.set_xlabel("time (ms), median of the timed repeats; managed modes migrate pages inside the kernel, "
                  "streams overlaps copies with kernels")
    ax.grid(axis="x", alpha=0.3, zorder=1)
    hs, ls = ax.get_legend_handles_labels()
    order = sorted(range(len(ls)), key=lambda i: ls[i].startswith("total"))
    ax.legend([hs[i] for i in order], [ls[i] for i in order], loc="upper left", bbox_to_anchor=(1.13, 1.0),
              fontsize=8, frameon=False)
    used = [e[2] for e in entries]
    ax.set_title(d.title(f"{layer}, N = {n}: copies and kernel time by variant and memory mode", used), fontsize=10)
    return save(fig, out, f"breakdown_{layer}_N{n}.png"), used


def fig_all_layers(d, out):
    Ns = d.main_Ns
    n_big = max(Ns)
    totals = {}  # (variant, n) -> total kernel ms over all layers (only when every layer passed)
    used = []
    for v in d.variants:
        for n in Ns:
            rs = [d.getok(l, n, v) for l in d.layers]
            if all(rs):
                totals[(v, n)] = sum(r["kernel_ms"] for r in rs)
                used += rs
    vs = [v for v in d.variants if any((v, n) in totals for n in Ns)]
    if not vs:
        return None, "no variant passed every layer at any N"
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(15, 1.8 + len(vs) * (0.1 * len(Ns) + 0.2)), sharey=True,
                                 gridspec_kw={"width_ratios": [1, 1.1]}, layout="constrained")
    # left: stacked layers at the largest N
    lc = layer_colors(d.layers)
    left = np.zeros(len(vs))
    for l in d.layers:
        w = np.array([d.getok(l, n_big, v)["kernel_ms"] if (v, n_big) in totals else 0.0 for v in vs])
        a1.barh(range(len(vs)), w, left=left, color=lc[l], label=l, height=0.75, zorder=2)
        left += w
    for i, v in enumerate(vs):
        if (v, n_big) in totals:
            a1.annotate(fnum(left[i]), (left[i], i), xytext=(3, 0), textcoords="offset points", va="center",
                        fontsize=7, color="0.25")
        else:
            a1.annotate("not every layer passed", (0, i), xytext=(3, 0), textcoords="offset points",
                        va="center", fontsize=7, color="0.45", style="italic")
    a1.set_xlim(0, max(left.max(), 1e-9) * 1.15)
    a1.set_xlabel(f"kernel time (ms) at N = {n_big}, stacked by layer")
    a1.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=min(len(d.layers), 8), fontsize=8, frameon=False,
              handlelength=1.2, columnspacing=1.0)
    a1.grid(axis="x", alpha=0.3, zorder=1)
    a1.set_yticks(range(len(vs)))
    a1.set_yticklabels([d.label(v) for v in vs], fontsize=8)
    a1.set_ylim(len(vs) - 0.5, -0.5)
    # right: total per N
    cols = n_colors(Ns)
    h = 0.8 / len(Ns)
    vals = []
    for j, n in enumerate(Ns):
        ys = [i - 0.4 + h * (j + 0.5) for i, v in enumerate(vs) if (v, n) in totals]
        xs = [totals[(v, n)] for v in vs if (v, n) in totals]
        vals += xs
        a2.barh(ys, xs, height=h * 0.92, color=cols[n], label=f"N = {n}", zorder=2)
        for y, x in zip(ys, xs):
            a2.annotate(fnum(x), (x, y), xytext=(2, 0), textcoords="offset points", va="center", fontsize=6.5,
                        color="0.25")
    a2.set_xscale("log")
    a2.set_xlim(min(vals) / 1.5, max(vals) * 2.5)
    plain_log_ticks(a2, "x")
    a2.set_xlabel("total kernel time of all layers (ms), log scale")
    family_bands(a1, [d.families[v] for v in vs], label=False)
    family_bands(a2, [d.families[v] for v in vs])
    a2.legend(loc="upper left", bbox_to_anchor=(1.13, 1.0), fontsize=8, frameon=False)
    fig.suptitle(d.title(f"All {len(d.layers)} layers together: kernel time per variant "
                         f"(memory: pageable unless [marked])", used), fontsize=10)
    return save(fig, out, "all_layers.png"), used


def coalescing_pairs(d):
    return [(v, v + UNCOALESCED) for v in d.variants if v + UNCOALESCED in d.families]


def coalescing_layer(d):
    for l in d.layers:
        if l == "conv1":
            return l
    return None


def fig_coalescing(d, out):
    pairs = coalescing_pairs(d)
    if not pairs:
        return None, "no `X` / `X-uncoalesced` variant pairs in the data"
    layer = coalescing_layer(d)
    if layer is None:
        return None, "no conv1 rows"
    Ns = [n for n in d.Ns if any(d.getok(layer, n, a) or d.getok(layer, n, b) for a, b in pairs)]
    if not Ns:
        return None, "no PASS rows for the coalescing pairs on conv1"
    fig, axes = plt.subplots(1, len(Ns), figsize=(4.2 * len(Ns) + 2.5, 1.8 + 0.6 * len(pairs)), sharey=True,
                             squeeze=False, layout="constrained")
    used = []
    for ax, n in zip(axes[0], Ns):
        xmax = 0
        for i, (a, b) in enumerate(pairs):
            ra = d.getok(layer, n, a)
            rb = d.getok(layer, n, b, d.default_mode[a] if d.default_mode[a] in d.modes[b] else None)
            for r, off, col in ((ra, -0.2, "#4c72b0"), (rb, 0.2, "#c44e52")):
                if r:
                    ax.barh(i + off, r["kernel_ms"], height=0.38, color=col, zorder=2)
                    txt = fnum(r["kernel_ms"])
                    if r is rb and ra:
                        txt += f"  ({rb['kernel_ms'] / ra['kernel_ms']:.2f}×)"
                    ax.annotate(txt, (r["kernel_ms"], i + off), xytext=(2, 0),
                                textcoords="offset points", va="center", fontsize=7, color="0.25")
                    xmax = max(xmax, r["kernel_ms"])
                    used.append(r)
        ax.set_xlim(0, xmax * 1.6 if xmax else 1)
        ax.set_title(f"N = {n}", fontsize=9)
        ax.set_xlabel("kernel time (ms); (×): uncoalesced / coalesced", fontsize=9)
        ax.grid(axis="x", alpha=0.3, zorder=1)
    ax0 = axes[0][0]
    ax0.set_yticks(range(len(pairs)))
    ax0.set_yticklabels([a for a, _ in pairs], fontsize=8)
    ax0.set_ylim(len(pairs) - 0.45, -0.6)
    axes[0][-1].legend(handles=[Patch(color="#4c72b0", label="coalesced: X"),
                                Patch(color="#c44e52", label="uncoalesced: X-uncoalesced")],
                       loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False)
    fig.suptitle(d.title(f"{layer}: coalesced vs uncoalesced output mapping, kernel time", used), fontsize=10)
    return save(fig, out, f"coalescing_{layer}.png"), used


def scaling_variants(d):
    out = []
    for v in d.variants:
        ns = {r["N"] for r in d.rows if r["variant"] == v and r["memory"] == d.default_mode[v] and ok(r)}
        if len(ns) >= 3:
            out.append(v)
    return out


def fig_scaling(d, out):
    vs = scaling_variants(d)
    if not vs:
        return None, "no variant has PASS rows at 3 or more batch sizes"
    colors = variant_colors(vs)
    fams = sorted({d.families[v] for v in vs})
    styles = ["-", "--", "-.", ":"]
    markers = ["o", "s", "^", "D", "v", "P", "X", "*"]
    fstyle = {f: styles[i % len(styles)] for i, f in enumerate(fams)}
    L = len(d.layers)
    fig, axes = plt.subplots(L, 2, figsize=(13, 3.0 * L + 0.8), squeeze=False)
    used = []
    for li, layer in enumerate(d.layers):
        at, asp = axes[li]
        for vi, v in enumerate(vs):
            rs = sorted((r for r in d.rows if r["variant"] == v and r["layer"] == layer
                         and r["memory"] == d.default_mode[v] and ok(r)), key=lambda r: r["N"])
            if len(rs) < 2:
                continue
            used += rs
            kw = dict(color=colors[v], ls=fstyle[d.families[v]], marker=markers[(vi // 10) % len(markers)], ms=4,
                      lw=1.3)
            at.plot([r["N"] for r in rs], [r["kernel_ms"] for r in rs], **kw)
            sp = [(r["N"], r["speedup_kernel"]) for r in rs if r["speedup_kernel"]]
            if sp:
                asp.plot([p[0] for p in sp], [p[1] for p in sp], **kw)
        all_ns = sorted({r["N"] for r in d.rows if r["variant"] in vs and ok(r)})
        for a in (at, asp):
            a.set_xscale("log", base=2)
            a.set_yscale("log")
            a.set_xticks(all_ns)
            a.xaxis.set_major_formatter(mticker.FuncFormatter(lambda x, _: f"{x:g}"))
            a.xaxis.set_minor_locator(mticker.NullLocator())
            a.grid(axis="x", alpha=0.3)
            a.autoscale_view()
            plain_log_ticks(a, "y")
        at.set_ylabel(f"{layer}\nkernel time (ms)")
        asp.set_ylabel("speedup, kernel only")
        if li == L - 1:
            at.set_xlabel("batch size N")
            asp.set_xlabel("batch size N")
        if li == 0:
            at.set_title("kernel time against N (log-log)", fontsize=9)
            asp.set_title("speedup over the CPU against N (log-log)", fontsize=9)
        # a guide: time proportional to N through the first point of the slowest line
        lines = at.get_lines()
        if lines:
            xs = np.array(sorted({n for ln in lines for n in ln.get_xdata()}), dtype=float)
            y0 = max(ln.get_ydata()[0] for ln in lines)
            x0 = min(ln.get_xdata()[0] for ln in lines)
            at.plot(xs, y0 * xs / x0 * 1.4, color="0.6", lw=0.8, ls=(0, (1, 2)))
    handles = [Line2D([], [], color=colors[v], ls=fstyle[d.families[v]], marker=markers[(i // 10) % len(markers)],
                      ms=4, label=d.label(v)) for i, v in enumerate(vs)]
    handles.append(Line2D([], [], color="0.6", lw=0.8, ls=(0, (1, 2)), label="∝ N (guide)"))
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 0.97), fontsize=8, frameon=False,
               title="variant (line style: family)", title_fontsize=8)
    fig.suptitle(d.title("Batch scaling: variants with PASS rows at 3 or more batch sizes", used), fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    return save(fig, out, "scaling.png"), used


def error_rows(d):
    return [r for r in d.rows if r["status"] in ("PASS", "FAIL") and r["max_rel_err"] is not None]


def fig_errors(d, out):
    rows = error_rows(d)
    vs = [v for v in d.variants if any(r["variant"] == v for r in rows)]
    if not vs:
        return None, "no rows with max_rel_err"
    prec = {v: d.precision.get(v, "?") for v in vs}
    pos = [r["max_rel_err"] for r in rows if r["max_rel_err"] > 0]
    floor = (min(pos) / 10) if pos else 1e-12
    fig, ax = plt.subplots(figsize=(10, 1.8 + 0.3 * len(vs)))
    allx = []
    for i, v in enumerate(vs):
        rs = [r for r in rows if r["variant"] == v]
        worst = max(r["max_rel_err"] for r in rs)
        c = PREC_COLOR.get(prec[v], "0.5")
        x = worst if worst > 0 else floor
        ax.barh(i, x, color=c, height=0.7, zorder=2, alpha=0.85)
        pts = [max(r["max_rel_err"], floor) for r in rs]
        ax.scatter(pts, [i] * len(pts), s=9, color="k", zorder=3, alpha=0.5, linewidths=0)
        nfail = sum(r["status"] == "FAIL" for r in rs)
        txt = fexp(worst) + (f"  FAIL ×{nfail}" if nfail else "")
        ax.annotate(txt, (x, i), xytext=(4, 0), textcoords="offset points", va="center", fontsize=7,
                    color="#b00000" if nfail else "0.25", weight="bold" if nfail else "normal")
        allx.append(x)
    ax.set_xscale("log")
    thr = {}
    for r in rows:
        p = r.get("precision", "")
        if r["threshold"]:
            thr.setdefault(p, r["threshold"])
    by_value = {}
    for p, t in thr.items():
        by_value.setdefault(t, []).append(p)
    for t, ps in by_value.items():
        k = len(ps)
        for i, p in enumerate(ps):  # precisions sharing a threshold alternate along one line
            ax.axvline(t, color=PREC_COLOR.get(p, "0.5"), lw=1.4, zorder=4, ls=(4 * i, (4, 4 * (k - 1) + 2)))
        allx.append(t)
    allx += [max(r["max_rel_err"], floor) for r in rows]
    ax.set_xlim(min(allx) / 3, max(allx) * 20)
    plain_log_ticks(ax, "x")
    ax.set_yticks(range(len(vs)))
    ax.set_yticklabels(vs, fontsize=8)
    ax.set_ylim(len(vs) - 0.5, -0.5)
    family_bands(ax, [d.families[v] for v in vs])
    ax.set_xlabel("max_rel_err = max|out − golden| / max|golden| (bar: worst row; dots: every layer, N, "
                  "memory mode), log scale")
    precs = sorted({prec[v] for v in vs} | set(thr), key=lambda p: (PREC_ORDER.index(p) if p in PREC_ORDER else 9, p))
    handles = [Patch(color=PREC_COLOR.get(p, "0.5"), label=p) for p in precs]
    handles += [Line2D([], [], color=PREC_COLOR.get(p, "0.5"), ls="--", label=f"{p} threshold {t:g}")
                for p, t in sorted(thr.items(), key=lambda kv: kv[1])]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.13, 1.0), fontsize=8, frameon=False,
              title="precision", title_fontsize=8)
    ax.set_title(d.title("Error against the golden output by variant, coloured by precision", rows), fontsize=10)
    return save(fig, out, "errors.png"), rows


def anchor_rows(d):
    return [r for r in d.rows if r["family"] == ANCHOR_FAMILY]


def vs_cudnn_value(d, r):
    """The CSV's vs_cudnn, or (older CSVs) the same rule as results.cpp: cuDNN row of the same
    layer, N, memory mode and precision class (fp16 for fp16/fp16acc, fp32 otherwise)."""
    if r["vs_cudnn"] is not None:
        return r["vs_cudnn"]
    cls = "fp16" if r.get("precision") in ("fp16", "fp16acc") else "fp32"
    for a in anchor_rows(d):
        if (ok(a) and a["layer"] == r["layer"] and a["N"] == r["N"] and a["memory"] == r["memory"]
                and a.get("precision") == cls):
            return a["kernel_ms"] / r["kernel_ms"]
    return None


def fig_vs_cudnn(d, out):
    if not anchor_rows(d):
        return None, f"no rows of family `{ANCHOR_FAMILY}` in the data"
    Ns = d.main_Ns
    grid = {}
    used = []
    for v in d.variants:
        for n in Ns:
            for l in d.layers:
                r = d.getok(l, n, v)
                if r:
                    val = vs_cudnn_value(d, r)
                    if val:
                        grid[(v, n, l)] = val
                        used.append(r)
    vs = [v for v in d.variants if any(k[0] == v for k in grid)]
    if not vs:
        return None, "cuDNN rows exist but no row has a ratio to cuDNN"
    Ns = [n for n in Ns if any(k[1] == n for k in grid)]
    logs = [math.log10(x) for x in grid.values()]
    lim = max(0.3, max(abs(x) for x in logs))
    norm = mcolors.TwoSlopeNorm(vmin=-lim, vcenter=0.0, vmax=lim)
    cmap = matplotlib.colormaps["RdBu"]
    L = len(d.layers)
    fig, axes = plt.subplots(1, len(Ns), figsize=(1.6 + (0.75 * L + 0.6) * len(Ns) + 2.5, 1.8 + 0.3 * len(vs)),
                             sharey=True, squeeze=False, layout="constrained")
    im = None
    for ax, n in zip(axes[0], Ns):
        a = np.full((len(vs), L), np.nan)
        for i, v in enumerate(vs):
            for j, l in enumerate(d.layers):
                if (v, n, l) in grid:
                    a[i, j] = math.log10(grid[(v, n, l)])
        im = ax.imshow(np.ma.masked_invalid(a), cmap=cmap, norm=norm, aspect="auto")
        for i, v in enumerate(vs):
            for j, l in enumerate(d.layers):
                if (v, n, l) in grid:
                    val = grid[(v, n, l)]
                    dark = abs(math.log10(val)) > lim * 0.55
                    ax.text(j, i, f"{val:.0f}" if val >= 10 else f"{val:.2f}" if val >= 1 else f"{val:.2g}",
                            ha="center", va="center",
                            fontsize=7, color="w" if dark else "k")
                else:
                    ax.text(j, i, "–", ha="center", va="center", fontsize=7, color="0.6")
        ax.set_xticks(range(L))
        ax.set_xticklabels(d.layers, fontsize=8)
        ax.set_title(f"N = {n}", fontsize=9)
        ax.set_facecolor("0.95")
    axes[0][0].set_yticks(range(len(vs)))
    axes[0][0].set_yticklabels([d.label(v) for v in vs], fontsize=8)
    cb = fig.colorbar(im, ax=axes[0].tolist(), shrink=min(1.0, 6 / max(6, len(vs)) + 0.4))
    ticks = [t for t in (-3, -2, -1, -math.log10(3), 0, math.log10(3), 1, 2, 3) if -lim <= t <= lim]
    cb.set_ticks(ticks)
    cb.set_ticklabels([f"{10 ** t:g}" if abs(t) >= 1 else f"{10 ** t:.2g}" for t in ticks])
    cb.set_label("vs_cudnn = cuDNN kernel_ms / variant kernel_ms\n(> 1: faster than cuDNN; fp16 rows "
                 "against cuDNN fp16)", fontsize=8)
    fig.suptitle(d.title("Ratio to cuDNN by layer and variant (memory: pageable unless [marked])", used),
                 fontsize=10)
    return save(fig, out, "vs_cudnn.png"), used


def fig_tflops(d, out):
    Ns = d.main_Ns
    vs = [v for v in d.variants if any(d.getok(l, n, v) and d.getok(l, n, v)["tflops"] for l in d.layers for n in Ns)]
    if not vs:
        return None, "no PASS rows with tflops"
    lc = layer_colors(d.layers)
    L = len(d.layers)
    h = 0.8 / L
    fig, axes = plt.subplots(1, len(Ns), figsize=(4.6 * len(Ns) + 2.5, 1.8 + len(vs) * (0.07 * L + 0.16)),
                             sharey=True, sharex=True, squeeze=False, layout="constrained")
    used = []
    vals = []
    for ax, n in zip(axes[0], Ns):
        for j, l in enumerate(d.layers):
            vals += grouped_barh(ax, vs, j, h, lambda v: d.getok(l, n, v), "tflops", used,
                                 height_frac=0.9, color=lc[l], label=l)[1]
        if d.peak:
            ax.axvline(d.peak, color="k", ls="--", lw=1.2, zorder=4)
        ax.set_title(f"N = {n}", fontsize=9)
        ax.set_xlabel("TFLOP/s achieved (log scale)")
        family_bands(ax, [d.families[v] for v in vs], label=ax is axes[0][-1])
    if not vals:
        plt.close(fig)
        return None, "no tflops values"
    ax0 = axes[0][0]
    ax0.set_xscale("log")
    top = max(vals + ([d.peak] if d.peak else []))
    ax0.set_xlim(min(vals) / 1.5, top * 1.6)
    for ax in axes[0]:
        plain_log_ticks(ax, "x")
    ax0.set_yticks(range(len(vs)))
    ax0.set_yticklabels([d.label(v) for v in vs], fontsize=8)
    ax0.set_ylim(len(vs) - 0.5, -0.5)
    handles = [Patch(color=lc[l], label=l) for l in d.layers]
    if d.peak:
        handles.append(Line2D([], [], color="k", ls="--", label=f"fp32 FMA ceiling {d.peak:.1f} TFLOP/s\n"
                                                                  "(peak_tflops, measured in the sweep)"))
    axes[0][-1].legend(handles=handles, loc="upper left", bbox_to_anchor=(1.16, 1.0), fontsize=8, frameon=False)
    fig.suptitle(d.title("Achieved TFLOP/s per variant and layer against the device's fp32 ceiling "
                         "(memory: pageable unless [marked])", used), fontsize=10)
    return save(fig, out, "tflops.png"), used


# ----------------------------------------------------------------------------------------
# report

def status_cell(r):
    if r is None:
        return "—"
    return r["status"] if r["status"] != "PASS" else None


def report(d, out, figs, inputs):
    md = []
    w = md.append
    peak = f"{d.peak:.1f} TFLOP/s" if d.peak else "not in the data"
    first = d.rows[0]
    w(f"# convstudy results: {d.device}")
    w("")
    w("Generated by `plots/plot.py` from the sweep CSV(s) below; every number here is read from them. "
      "Do not edit by hand: rerun `plots/plot.sh CSV OUTDIR`.")
    w("")
    w(md_table(["CSV", "rows used", "device", "sweep date", "git rev", "tool", "CUDA / driver"],
               [[f"`{p}`", sum(r["_src"] == p for r in d.rows), d.device,
                 date_range([r for r in d.rows if r["_src"] == p]),
                 ", ".join(sorted({r.get("git_rev", "") for r in d.rows if r["_src"] == p})),
                 ", ".join(sorted({r.get("tool_version", "") for r in d.rows if r["_src"] == p})),
                 ", ".join(sorted({f"{r.get('cuda_runtime', '')} / {r.get('driver', '')}" for r in d.rows
                                   if r["_src"] == p}))] for p in inputs if any(r["_src"] == p for r in d.rows)],
               ["l", "r", "l", "l", "l", "l", "l"]))
    w("")
    cpu_models = sorted({f"{r.get('cpu_model', '')} ({r.get('cpu_threads', '')} threads)" for r in d.rows
                         if r.get("cpu_model")})
    w(f"- Device: {d.device} (compute capability {first.get('cc', '?')}, {first.get('sms', '?')} SMs); "
      f"fp32 FMA ceiling measured in the sweep: {peak}.")
    w(f"- CPU reference (the denominator of every speedup): {', '.join(cpu_models) or 'unknown'}.")
    w(f"- Layers: {', '.join(d.layers)}. Batch sizes: {', '.join(map(str, d.Ns))} "
      f"(main sweep: {', '.join(map(str, d.main_Ns))}).")
    w(f"- {len(d.variants)} variants in {len(set(d.families.values()))} families; rows: "
      + ", ".join(f"{s} {sum(r['status'] == s for r in d.rows)}" for s in ("PASS", "FAIL", "SKIP", "ERROR")
                  if any(r['status'] == s for r in d.rows)) + ".")
    w("- Memory mode: each variant is shown in pageable memory (the study's Mcpy) when it ran there, "
      "otherwise in the mode it ran in, marked `[mode]`; tables list the other modes a variant ran in as "
      "extra rows `variant · mode`.")
    w("- Variants are ordered by family (in the order the CSV first shows them), then by name. Times are "
      "medians of the timed repeats (ms).")
    w("")
    w("Contents: [kernel time](#kernel-time) · [speedup](#speedup-over-the-cpu) · "
      "[copy overhead](#copy-overhead) · [all layers](#all-layers-together) · [scaling](#scaling-with-batch-size) · "
      "[coalescing](#coalesced-vs-uncoalesced-conv1) · [error](#error-by-variant) · "
      "[cuDNN](#ratio-to-cudnn) · [best](#best-variant-per-layer-and-batch-size) · "
      "[TFLOP/s](#tflops-against-the-fp32-ceiling) · [SKIP/FAIL](#skip-fail-and-error-rows) · "
      "[figures](#figures)")
    w("")

    def fig(name, alt):
        if figs.get(name):
            w(f"![{alt}]({figs[name]})")
            w("")

    def variant_rows():
        """(variant, memory, label) in table order: default mode first, then the others."""
        out = []
        for v in d.variants:
            out.append((v, d.default_mode[v], d.label(v)))
            for m in d.modes_of(v):
                if m != d.default_mode[v]:
                    out.append((v, m, f"{v} · {m}"))
        return out

    # --- kernel time (Tables 4 and 6)
    w("## Kernel time")
    w("")
    w("Kernel time per variant and layer, ms (the study's Tables 4 and 6). `total` sums the layers when "
      "every layer passed. The CPU row is the float32 reference the speedups divide.")
    w("")
    for n in d.main_Ns:
        w(f"### Kernel time (ms), N = {n}")
        w("")
        hdr = ["variant", "family", "precision"] + d.layers + ["total"]
        body = []
        cpu = [d.cpu_ms(l, n) for l in d.layers]
        body.append(["**CPU float32 reference**", "", "fp32"] + [fnum(c) for c in cpu]
                    + [fnum(sum(cpu)) if all(cpu) else "—"])
        used = []
        for v, m, lab in variant_rows():
            rs = [d.get(l, n, v, m) for l in d.layers]
            if not any(rs):
                continue
            used += [r for r in rs if r]
            cells = [status_cell(r) or fnum(r["kernel_ms"]) for r in rs]
            tot = sum(r["kernel_ms"] for r in rs) if all(r and ok(r) for r in rs) else None
            body.append([lab, d.families[v], d.precision.get(v, "")] + cells + [fnum(tot)])
        w(md_table(hdr, body, ["l", "l", "l"] + ["r"] * (len(d.layers) + 1)))
        w("")
        w(d.provenance(used, f"N = {n}"))
        w("")

    # --- speedup (Tables 5 and 7)
    w("## Speedup over the CPU")
    w("")
    w("cpu_ms / kernel_ms (kernel only) and cpu_ms / total_ms (with the copies of the row's memory mode), "
      "as in the study's Tables 5 and 7.")
    w("")
    for n in d.main_Ns:
        for kind, col in (("kernel only", "speedup_kernel"), ("with copies", "speedup_total")):
            w(f"### Speedup, {kind}, N = {n}")
            w("")
            body, used = [], []
            for v, m, lab in variant_rows():
                rs = [d.get(l, n, v, m) for l in d.layers]
                if not any(rs):
                    continue
                used += [r for r in rs if r]
                cells = [status_cell(r) or fx(r[col]) for r in rs]
                oks = [r for r in rs if r and ok(r)]
                allsp = None
                if len(oks) == len(d.layers) and all(r["cpu_ms"] for r in oks):
                    denom = sum(r["kernel_ms"] if col == "speedup_kernel" else (r["total_ms"] or math.nan)
                                for r in oks)
                    if denom and math.isfinite(denom):
                        allsp = sum(r["cpu_ms"] for r in oks) / denom
                body.append([lab] + cells + [fx(allsp)])
            w(md_table(["variant"] + d.layers + ["all layers"], body))
            w("")
            w(d.provenance(used, f"N = {n}"))
            w("")
    for l in d.layers:
        fig(f"speedup_{l}.png", f"speedup {l}")

    # --- copy overhead (Table 3)
    w("## Copy overhead")
    w("")
    w("Host-to-device and device-to-host copy time per layer and N for each memory mode and element type on "
      "the bus (the study's Table 3): `h2d / d2h` in ms, the median over the PASS rows of all variants run "
      "in that mode (the copy does not depend on the kernel). Managed modes move pages during the kernel "
      "(h2d 0: the migration is inside kernel_ms); streams overlaps copies with kernels.")
    w("")
    dtypes = sorted({r.get("io_dtype", "") for r in d.rows if ok(r)})
    for dt in dtypes:
        mems = [m for m in MEM_ORDER + sorted({r["memory"] for r in d.rows} - set(MEM_ORDER))
                if any(r["memory"] == m and r.get("io_dtype", "") == dt and ok(r) for r in d.rows)]
        w(f"### Copy overhead (ms, h2d / d2h), io_dtype {dt or '?'}")
        w("")
        body, used = [], []
        for l in d.layers:
            for n in d.Ns:
                cells = []
                for m in mems:
                    rs = [r for r in d.rows if r["layer"] == l and r["N"] == n and r["memory"] == m
                          and r.get("io_dtype", "") == dt and ok(r) and r["h2d_ms"] is not None]
                    used += rs
                    if rs:
                        h = statistics.median(r["h2d_ms"] for r in rs)
                        k = statistics.median(r["d2h_ms"] for r in rs if r["d2h_ms"] is not None) \
                            if any(r["d2h_ms"] is not None for r in rs) else None
                        cells.append(f"{fnum(h)} / {fnum(k)} ({len(rs)})")
                    else:
                        cells.append("—")
                if any(c != "—" for c in cells):
                    body.append([l, n] + cells)
        w(md_table(["layer", "N"] + [f"{m} (rows)" for m in mems], body, ["l", "r"] + ["r"] * len(mems)))
        w("")
        w(d.provenance(used, f"io_dtype {dt}"))
        w("")
    nb = breakdown_N(d)
    for l in d.layers:
        fig(f"breakdown_{l}_N{nb}.png", f"breakdown {l} N={nb}")

    # --- all layers (Fig 8)
    w("## All layers together")
    w("")
    w("Kernel time summed over the layers per variant (only where every layer passed), and the speedup of "
      "the whole network over the CPU (sum of cpu_ms / sum of kernel_ms), as in the study's Figure 8.")
    w("")
    body, used = [], []
    for v in d.variants:
        cells = []
        for n in d.main_Ns:
            rs = [d.getok(l, n, v) for l in d.layers]
            if all(rs):
                used += rs
                k = sum(r["kernel_ms"] for r in rs)
                c = sum(r["cpu_ms"] or 0 for r in rs)
                cells += [fnum(k), fx(c / k if c else None)]
            else:
                cells += ["—", "—"]
        if any(c != "—" for c in cells):
            body.append([d.label(v)] + cells)
    hdr = ["variant"]
    for n in d.main_Ns:
        hdr += [f"N={n} ms", f"N={n} speedup"]
    w(md_table(hdr, body))
    w("")
    w(d.provenance(used))
    w("")
    fig("all_layers.png", "all layers")

    # --- scaling (Tables 10, 11)
    w("## Scaling with batch size")
    w("")
    svs = scaling_variants(d)
    many = [v for v in svs if len({r["N"] for r in d.rows if r["variant"] == v and ok(r)}) > 3]
    if len(d.Ns) > 3 and many:
        w("Kernel time (ms) and kernel-only speedup against N for the variants with PASS rows at more than three "
          "batch sizes (the study's Tables 10 and 11). Cells: `kernel ms (speedup×)`; `check` says how the rows "
          "were checked (a sampled check when golden files for a large N were not written).")
        w("")
        w("### CPU float32 reference time (ms)")
        w("")
        w(md_table(["layer"] + [f"N={n}" for n in d.Ns],
                   [[l] + [fnum(d.cpu_ms(l, n)) for n in d.Ns] for l in d.layers]))
        w("")
        w(d.provenance([r for r in d.rows if r["cpu_ms"]], "cpu_ms column"))
        w("")
        for v in many:
            m = d.default_mode[v]
            rs_all = [r for r in d.rows if r["variant"] == v and r["memory"] == m]
            ns = sorted({r["N"] for r in rs_all})
            w(f"### Scaling: {d.label(v)}")
            w("")
            body = []
            for l in d.layers:
                cells = []
                for n in ns:
                    r = d.get(l, n, v, m)
                    cells.append(status_cell(r) or f"{fnum(r['kernel_ms'])} ({fx(r['speedup_kernel'])})")
                body.append([l] + cells)
            checks = sorted({r.get("check", "") for r in rs_all if r.get("check")})
            w(md_table(["layer"] + [f"N={n}" for n in ns], body))
            w("")
            w(d.provenance(rs_all, f"memory {m} · check: {', '.join(checks) or '—'}"))
            w("")
    else:
        w(f"Not enough batch sizes for a scaling table (N = {', '.join(map(str, d.Ns))}; a table needs a variant "
          f"with more than three). The scaling figure shows every variant with three or more.")
        w("")
    fig("scaling.png", "scaling")

    # --- coalescing (Table 8)
    w("## Coalesced vs uncoalesced conv1")
    w("")
    pairs = coalescing_pairs(d)
    cl = coalescing_layer(d)
    if pairs and cl:
        w("Each variant `X` against `X-uncoalesced` (the same kernel with each thread on an adjacent patch of "
          f"outputs) on {cl}, as in the study's Table 8: kernel time (ms), speedup over the CPU, and the "
          "ratio uncoalesced / coalesced kernel time.")
        w("")
        body, used = [], []
        for a, b in pairs:
            for n in d.Ns:
                ra, rb = d.get(cl, n, a), d.get(cl, n, b)
                if not ra and not rb:
                    continue
                used += [r for r in (ra, rb) if r]
                ratio = rb["kernel_ms"] / ra["kernel_ms"] if ra and rb and ok(ra) and ok(rb) else None
                body.append([a, n, status_cell(ra) or fnum(ra["kernel_ms"]), status_cell(rb) or fnum(rb["kernel_ms"]),
                             status_cell(ra) or fx(ra["speedup_kernel"]), status_cell(rb) or fx(rb["speedup_kernel"]),
                             fx(ratio)])
        w(md_table(["variant X", "N", "coalesced ms", "uncoalesced ms", "coalesced speedup", "uncoalesced speedup",
                    "uncoalesced / coalesced"], body))
        w("")
        w(d.provenance(used, cl))
        w("")
    else:
        w("No `X` / `X-uncoalesced` pairs with conv1 rows in this data.")
        w("")
    fig("coalescing_conv1.png", "coalescing conv1")

    # --- error
    w("## Error by variant")
    w("")
    w("Worst error of each variant over every layer, N and memory mode it ran (PASS and FAIL rows): "
      "`max_abs_err` (the study's max epsilon), `max_rel_err` = max_abs_err / max|golden|, and the pass "
      "threshold on max_rel_err for the variant's precision class.")
    w("")
    body, used = [], []
    for v in d.variants:
        rs = [r for r in d.rows if r["variant"] == v and r["status"] in ("PASS", "FAIL")]
        if not rs:
            continue
        used += rs
        er = [r for r in rs if r["max_rel_err"] is not None]
        worst = max(er, key=lambda r: r["max_rel_err"]) if er else None
        mabs = max((r["max_abs_err"] for r in rs if r["max_abs_err"] is not None), default=None)
        nfail = sum(r["status"] == "FAIL" for r in rs)
        thr = sorted({r["threshold"] for r in rs if r["threshold"] is not None})
        checks = sorted({r.get("check", "") for r in rs if r.get("check")})
        body.append([v, d.families[v], d.precision.get(v, ""), fexp(mabs),
                     fexp(worst["max_rel_err"] if worst else None),
                     f"{worst['layer']} N={worst['N']}" if worst else "—",
                     ", ".join(f"{t:g}" for t in thr) or "—",
                     f"**FAIL** ({nfail} of {len(rs)})" if nfail else f"PASS ({len(rs)})", ", ".join(checks)])
    w(md_table(["variant", "family", "precision", "max_abs_err", "max_rel_err", "worst at", "threshold", "status",
                "check"], body, ["l", "l", "l", "r", "r", "l", "r", "l", "l"]))
    w("")
    w(d.provenance(used))
    w("")
    fig("errors.png", "errors")

    # --- ratio to cuDNN
    w("## Ratio to cuDNN")
    w("")
    if anchor_rows(d):
        w("`vs_cudnn` = cuDNN's kernel_ms / the variant's, for the same layer, N and memory mode (fp16 and fp16acc "
          "rows against cuDNN fp16, the rest against cuDNN fp32); above 1 is faster than cuDNN.")
        w("")
        for n in d.main_Ns:
            body, used = [], []
            for v in d.variants:
                rs = [d.getok(l, n, v) for l in d.layers]
                vals = [vs_cudnn_value(d, r) if r else None for r in rs]
                if any(x is not None for x in vals):
                    used += [r for r in rs if r]
                    body.append([d.label(v), d.precision.get(v, "")] + [fnum(x) for x in vals])
            if not body:
                continue
            w(f"### Ratio to cuDNN, N = {n}")
            w("")
            w(md_table(["variant", "precision"] + d.layers, body, ["l", "l"] + ["r"] * len(d.layers)))
            w("")
            w(d.provenance(used, f"N = {n}"))
            w("")
    else:
        w(f"No cuDNN rows (family `{ANCHOR_FAMILY}`) in this data, so no ratio to cuDNN.")
        w("")
    fig("vs_cudnn.png", "ratio to cuDNN")

    # --- best
    w("## Best variant per layer and batch size")
    w("")
    w("Fastest PASS row (kernel time, any memory mode and precision) per layer and N, and the fastest fp32 "
      f"row; TFLOP/s = GFLOP / kernel_ms and % of the fp32 FMA ceiling ({peak}) measured in the sweep. "
      "`copies` is h2d + d2h of that row. Above 100 % of the fp32 ceiling means a faster precision (tf32, "
      "fp16 tensor cores) or an algorithm that does fewer multiplications than a direct convolution "
      "(cuDNN's FFT and Winograd); TFLOP/s always counts the direct convolution's 2·N·M·E·F·C·R·S. "
      "Batch sizes outside the main sweep are listed where two or more variants ran them.")
    w("")
    body, used = [], []
    for l in d.layers:
        for n in d.Ns:
            rs = [r for r in d.rows if r["layer"] == l and r["N"] == n and ok(r)]
            if not rs or (n not in d.main_Ns and len({r["variant"] for r in rs}) < 2):
                continue
            b = min(rs, key=lambda r: r["kernel_ms"])
            f32 = [r for r in rs if r.get("precision") == "fp32"]
            bf = min(f32, key=lambda r: r["kernel_ms"]) if f32 else None
            used += [b] + ([bf] if bf else [])
            cp = (b["h2d_ms"] or 0) + (b["d2h_ms"] or 0) if b["h2d_ms"] is not None else None
            row = [l, n, f"{b['variant']} · {b['memory']}", b.get("precision", ""), fnum(b["kernel_ms"]),
                   fnum(cp), fnum(b["tflops"]), fnum(b["pct_peak"]), fx(b["speedup_kernel"])]
            if bf is None:
                row += ["—", "—", "—"]
            elif bf is b:
                row += ["(same)", "", ""]
            else:
                row += [f"{bf['variant']} · {bf['memory']}", fnum(bf["kernel_ms"]), fnum(bf["pct_peak"])]
            body.append(row)
    w(md_table(["layer", "N", "best variant", "precision", "kernel ms", "copies ms", "TFLOP/s", "% of peak",
                "speedup", "best fp32", "fp32 ms", "fp32 % of peak"], body,
               ["l", "r", "l", "l", "r", "r", "r", "r", "r", "l", "r", "r"]))
    w("")
    w(d.provenance(used))
    w("")

    w("## TFLOP/s against the fp32 ceiling")
    w("")
    w("Achieved TFLOP/s of every PASS row in its default memory mode; the dashed line is the fp32 FMA ceiling "
      "measured in the same sweep (fp16 and tf32 rows can pass it: their own ceilings are higher).")
    w("")
    fig("tflops.png", "TFLOP/s")

    # --- SKIP / FAIL / ERROR
    w("## SKIP, FAIL and ERROR rows")
    w("")
    bad = [r for r in d.rows if r["status"] != "PASS"]
    if bad:
        groups = {}
        for r in bad:
            groups.setdefault((r["status"], r["variant"], r.get("reason", "")), []).append(r)
        body = []
        order = {"FAIL": 0, "ERROR": 1, "SKIP": 2}
        for (st, v, reason), rs in sorted(groups.items(), key=lambda kv: (order.get(kv[0][0], 3),
                                                                           d.variants.index(kv[0][1]), kv[0][2])):
            where = {}
            for r in rs:
                where.setdefault((r["layer"], r["memory"]), []).append(r["N"])
            wh = "; ".join(f"{l} N={','.join(map(str, sorted(ns)))} {m}"
                           for (l, m), ns in sorted(where.items(),
                                                    key=lambda kv: (d.layers.index(kv[0][0]), kv[0][1])))
            err = ""
            if st == "FAIL":
                e = max((r["max_rel_err"] for r in rs if r["max_rel_err"] is not None), default=None)
                t = next((r["threshold"] for r in rs if r["threshold"] is not None), None)
                err = f"{fexp(e)} (threshold {t:g})" if t is not None else fexp(e)
            body.append([f"**{st}**" if st != "SKIP" else st, v, wh, reason or "—", err])
        w(md_table(["status", "variant", "where (layer, N, memory)", "reason", "max_rel_err"], body,
                   ["l", "l", "l", "l", "r"]))
        w("")
        w(d.provenance(bad))
    else:
        w("None: every row passed.")
    w("")

    # --- figures
    w("## Figures")
    w("")
    for name, desc in FIGURE_LIST(d):
        if figs.get(name):
            w(f"- [{name}]({name}): {desc}")
        else:
            w(f"- {name}: not drawn ({figs.get('_skipped', {}).get(name, 'no data')})")
    w("")
    path = os.path.join(out, "report.md")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write("\n".join(md))
    os.replace(path + ".tmp", path)
    return path


def FIGURE_LIST(d):
    nb = breakdown_N(d)
    out = [(f"speedup_{l}.png", f"{l}: kernel-only speedup over the CPU by variant, one bar per N")
           for l in d.layers]
    out += [(f"breakdown_{l}_N{nb}.png", f"{l}, N={nb}: h2d / kernel / d2h stacked per variant and memory mode")
            for l in d.layers]
    out += [("all_layers.png", "all layers: kernel time stacked by layer at the largest N, and the total per N"),
            (f"coalescing_{coalescing_layer(d) or 'conv1'}.png", "conv1: X vs X-uncoalesced kernel time per N"),
            ("scaling.png", "kernel time and speedup against N, log-log, per layer"),
            ("errors.png", "max_rel_err by variant, coloured by precision, with each precision's threshold"),
            ("vs_cudnn.png", "heatmap of vs_cudnn by layer and variant, per N"),
            ("tflops.png", "TFLOP/s per variant and layer against the fp32 FMA ceiling")]
    return out


# ----------------------------------------------------------------------------------------

def render(rows, layer_order, out, inputs, suffix):
    os.makedirs(out, exist_ok=True)
    d = Data(rows, layer_order, suffix)
    figs = {"_skipped": {}}
    failed = []

    def run(name, fn, *args):
        try:
            res, info = fn(d, out, *args)
        except Exception:  # keep going: the other figures and the report still get written
            traceback.print_exc()
            failed.append(name)
            figs["_skipped"][name] = "failed: see the error printed by plot.py"
            print(f"plot.py: {name}: FAILED (traceback above)")
            return
        if res:
            figs[res] = res
            print(f"wrote {os.path.join(out, res)}")
        else:
            figs["_skipped"][name] = info
            print(f"skipped {name}: {info}")

    for l in d.layers:
        run(f"speedup_{l}.png", fig_speedup, l)
    for l in d.layers:
        run(f"breakdown_{l}_N{breakdown_N(d)}.png", fig_breakdown, l)
    run("all_layers.png", fig_all_layers)
    run(f"coalescing_{coalescing_layer(d) or 'conv1'}.png", fig_coalescing)
    run("scaling.png", fig_scaling)
    run("errors.png", fig_errors)
    run("vs_cudnn.png", fig_vs_cudnn)
    run("tflops.png", fig_tflops)
    try:
        print(f"wrote {report(d, out, figs, inputs)}")
    except Exception:
        traceback.print_exc()
        failed.append("report.md")
    return failed


def main(argv=None):
    ap = argparse.ArgumentParser(description="Figures and a markdown report from convstudy sweep CSVs.")
    ap.add_argument("csv", nargs="+", help="sweep CSV(s); a later row for the same (device, layer, N, variant, "
                                           "memory) replaces an earlier one")
    ap.add_argument("--out", required=True, help="output folder for the PNGs and report.md")
    ap.add_argument("--title-suffix", default="", help="text appended to every figure title")
    a = ap.parse_args(argv)
    for p in a.csv:
        if not os.path.isfile(p):
            ap.error(f"{p}: no such file")
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
        failed += render(rows, layer_order, a.out, a.csv, a.title_suffix)
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


if __name__ == "__main__":
    sys.exit(main())
