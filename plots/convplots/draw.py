"""Matplotlib helpers shared by the figure modules."""

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib import ticker as mticker

from .io import DPI


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
    if len(groups) > len(set(fams)):  # rows ranked by speed, not grouped by family: no bands
        return groups
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
