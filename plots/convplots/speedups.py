"""Speedup figures: per layer by variant, all layers together, batch scaling, coalesced
vs uncoalesced pairs, and the ratio to cuDNN."""

import math

import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib import colors as mcolors
from matplotlib import ticker as mticker
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from . import summary
from .io import ANCHOR_FAMILY, UNCOALESCED, fnum, ok
from .draw import (family_bands, grouped_barh, layer_colors, log_if_wide, n_colors, plain_log_ticks, save,
                   variant_colors)


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
    return "conv1" if "conv1" in d.layers else None


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
    fig, axes = plt.subplots(L, 2, figsize=(13, min(3.0, 12.5 / L) * L + 0.8), squeeze=False)  # <= 1,600 px tall
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


def anchor_rows(d):
    """The cuDNN rows of the whole run (also for a figure split to some families)."""
    return [r for r in d.all_rows if r["family"] == ANCHOR_FAMILY]


def ours_over_cudnn(d, r):
    """The row's kernel_ms over the fastest cuDNN row of the same layer, N, memory mode, layout
    and anchor class (`cudnn-<class>` or its space-to-depth row, summary.py's rule), computed
    from kernel_ms: below 1, the row is faster than cuDNN. The CSV's own ratio columns are not
    read (their direction changed once: `vs_cudnn` was cuDNN / ours)."""
    if not ok(r):
        return None
    same = [summary.cudnn_ms(a) for a in anchor_rows(d)
            if ok(a) and a["layer"] == r["layer"] and a["N"] == r["N"] and a["memory"] == r["memory"]
            and a["layout"] == r["layout"] and summary.is_cudnn_of(a, r["anchor_class"])]
    return r["kernel_ms"] / min(same) if same else None


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
                    val = ours_over_cudnn(d, r)
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
    cmap = matplotlib.colormaps["RdBu_r"]  # blue: below 1, ours faster
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
    cb.set_label("ours / cuDNN = variant kernel_ms / fastest cuDNN kernel_ms\n(below 1: faster than cuDNN; same "
                 "precision class, layout and memory mode)", fontsize=8)
    fig.suptitle(d.title("Ratio to cuDNN by layer and variant (memory: pageable unless [marked])", used),
                 fontsize=10)
    return save(fig, out, "vs_cudnn.png"), used
