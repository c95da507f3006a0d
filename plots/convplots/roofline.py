"""Achieved TFLOP/s against the measured ceilings: the fp32 FMA ceiling (tflops.png, every
CSV format), and each row's own precision class's ceiling (ceilings.png, roofline.png:
CSVs with an `algo` column, whose peak_tflops is per precision class). Winograd and FFT
rows count the direct convolution's FLOPs over their time: effective TFLOP/s, drawn hatched
or hollow and marked "eff." in the tables."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .io import EFFECTIVE_ALGOS, PREC_COLOR, PREC_ORDER, fnum, md_table, min_bytes
from .draw import family_bands, grouped_barh, layer_colors, plain_log_ticks, save

NO_CLASS_PEAKS = ("the CSV(s) have no `algo` column: an older format whose peak_tflops is the fp32 FMA "
                  "ceiling on every row (tflops.png draws it)")
ALGO_MARKER = {"direct": "o", "gemm": "s", "winograd": "^", "fft": "D", "library": "*"}
MEASURED_MARKER = "x"  # a row's point at the DRAM bytes Nsight Compute measured (profile CSVs)


def variant_rows_log_x(axes, d, vs, lo, hi):
    """The axes of a row of panels sharing both axes: x on a log scale from lo to hi, with
    plain tick labels on every panel; one row per variant of vs, the first at the top."""
    ax0 = axes[0][0]
    ax0.set_xscale("log")
    ax0.set_xlim(lo, hi)
    for ax in axes[0]:
        plain_log_ticks(ax, "x")
    ax0.set_yticks(range(len(vs)))
    ax0.set_yticklabels([d.label(v) for v in vs], fontsize=8)
    ax0.set_ylim(len(vs) - 0.5, -0.5)


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
    top = max(vals + ([d.peak] if d.peak else []))
    variant_rows_log_x(axes, d, vs, min(vals) / 1.5, top * 1.6)
    handles = [Patch(color=lc[l], label=l) for l in d.layers]
    if d.peak:
        handles.append(Line2D([], [], color="k", ls="--", label=f"fp32 FMA ceiling {d.peak:.1f} TFLOP/s\n"
                                                                  "(peak_tflops, measured in the sweep)"))
    axes[0][-1].legend(handles=handles, loc="upper left", bbox_to_anchor=(1.16, 1.0), fontsize=8, frameon=False)
    fig.suptitle(d.title("Achieved TFLOP/s per variant and layer against the device's fp32 ceiling "
                         "(memory: pageable unless [marked])", used), fontsize=10)
    return save(fig, out, "tflops.png"), used


def effective(r):
    return r.get("algo", "") in EFFECTIVE_ALGOS


def ceilings_N(d):
    return max(d.main_Ns) if d.main_Ns else None


def prec_key(p):
    return (PREC_ORDER.index(p) if p in PREC_ORDER else 99, p)


def measured_bytes(r):
    """DRAM bytes read + written by the row's kernels as Nsight Compute counted them
    (`convstudy profile` / `sweep --profile` columns), or None."""
    try:
        b = float(r.get("ncu_dram_read_bytes") or "nan") + float(r.get("ncu_dram_write_bytes") or "nan")
    except ValueError:
        return None
    return b if b > 0 else None


def label_sides(values):
    """Which end of the panel each ceiling's label goes to: from the highest ceiling down,
    left and right in turn, so that labels of neighbouring (possibly close) ceilings never
    share a place; each label sits just above its line."""
    return {v: ("left" if i % 2 == 0 else "right") for i, v in enumerate(sorted(values, reverse=True))}


def fig_ceilings(d, out):
    if not d.has_algo:
        return None, NO_CLASS_PEAKS
    n = ceilings_N(d)
    vs = [v for v in d.variants if any(d.getok(l, n, v) and d.getok(l, n, v)["tflops"] for l in d.layers)]
    if not vs:
        return None, f"no PASS rows with tflops at N = {n}"
    L = len(d.layers)
    fig, axes = plt.subplots(1, L, figsize=(2.9 * L + 2.8, 1.8 + 0.26 * len(vs)), sharey=True, sharex=True,
                             squeeze=False, layout="constrained")
    used, vals = [], []
    for ax, l in zip(axes[0], d.layers):
        for i, v in enumerate(vs):
            r = d.getok(l, n, v)
            if not r or not r["tflops"]:
                continue
            used.append(r)
            col = PREC_COLOR.get(r.get("precision", ""), "0.5")
            ax.barh(i, r["tflops"], height=0.72, color=col, zorder=2, hatch="////" if effective(r) else None,
                    edgecolor="w" if effective(r) else None, linewidth=0)
            vals.append(r["tflops"])
            pk = r["peak_tflops"]
            if pk:
                ax.plot([pk, pk], [i - 0.42, i + 0.42], color="k", lw=1.4, zorder=4)
                vals.append(pk)
                pct = r["pct_peak"] if r["pct_peak"] is not None else 100.0 * r["tflops"] / pk
                ax.annotate(f"{pct:.0f}%" + (" eff." if effective(r) else ""), (r["tflops"], i), xytext=(2, 0),
                            textcoords="offset points", va="center", fontsize=6, color="0.25", zorder=5)
        ax.set_title(l, fontsize=9)
        ax.set_xlabel("TFLOP/s (log)", fontsize=8)
        family_bands(ax, [d.families[v] for v in vs], label=ax is axes[0][-1])
    if not vals:
        plt.close(fig)
        return None, "no tflops values"
    variant_rows_log_x(axes, d, vs, min(vals) / 1.5, max(vals) * 3)
    precs = sorted({d.precision.get(v, "") for v in vs}, key=prec_key)
    handles = [Patch(color=PREC_COLOR.get(p, "0.5"), label=f"{p}" + (f" (ceiling {d.class_peaks[p]:.0f} TFLOP/s)"
                                                                   if p in d.class_peaks else "")) for p in precs]
    handles.append(Line2D([], [], color="k", lw=1.4, label="the row's own class's ceiling\n(peak_tflops, measured)"))
    handles.append(Patch(facecolor="0.6", hatch="////", edgecolor="w", label="effective (winograd, fft):\n"
                                                                            "direct-conv FLOPs / time"))
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=min(len(handles), 4), fontsize=8,
               frameon=False)
    fig.suptitle(d.title(f"Achieved TFLOP/s per variant and layer against its precision class's ceiling, N = {n} "
                         "(% of that ceiling; memory: pageable unless [marked])", used), fontsize=10)
    return save(fig, out, f"ceilings_N{n}.png"), used


def fig_roofline(d, out):
    if not d.has_algo:
        return None, NO_CLASS_PEAKS
    Ns = d.main_Ns
    pts, meas = {}, {}
    for n in Ns:
        for v in d.variants:
            for l in d.layers:
                r = d.getok(l, n, v)
                b = min_bytes(r) if r else None
                if r and r["tflops"] and r["gflop"] and b:
                    pts.setdefault(n, []).append((r["gflop"] * 1e9 / b, r["tflops"], r))
                    mb = measured_bytes(r)
                    if mb:
                        meas.setdefault(n, []).append((r["gflop"] * 1e9 / b, r["gflop"] * 1e9 / mb, r["tflops"], r))
    Ns = [n for n in Ns if n in pts]
    if not Ns:
        return None, "no PASS rows with tflops and a layer shape"
    allp = [p for n in Ns for p in pts[n]]
    xs = [p[0] for p in allp] + [m[1] for n in Ns for m in meas.get(n, [])]
    ys = [p[1] for p in allp]
    lo_x, hi_x = min(xs) / 3, max(xs) * 3
    top = max(ys + list(d.class_peaks.values()))
    # classes that share a ceiling (fp16 and fp16acc) share one line and one label
    ceilings = {}
    for p, pk in sorted(d.class_peaks.items(), key=lambda kv: prec_key(kv[0])):
        ceilings.setdefault(round(pk, 6), []).append(p)
    fig, axes = plt.subplots(1, len(Ns), figsize=(5.2 * len(Ns) + 2.2, 6.0), sharey=True, squeeze=False,
                             layout="constrained")
    for ax, n in zip(axes[0], Ns):
        for x, y, r in pts[n]:
            col = PREC_COLOR.get(r.get("precision", ""), "0.5")
            m = ALGO_MARKER.get(r.get("algo", ""), "P")
            ax.scatter([x], [y], marker=m, s=30, zorder=3, alpha=0.85,
                       facecolors="none" if effective(r) else col, edgecolors=col, linewidths=1.2)
        # measured: the same TFLOP/s at the intensity of the DRAM bytes ncu counted, joined
        # to the modelled point by a thin line (left of it: the kernels moved more bytes)
        for x_model, x_meas, y, r in meas.get(n, []):
            col = PREC_COLOR.get(r.get("precision", ""), "0.5")
            ax.plot([x_model, x_meas], [y, y], color=col, lw=0.6, alpha=0.6, zorder=2)
            ax.scatter([x_meas], [y], marker=MEASURED_MARKER, s=34, zorder=4, color=col, linewidths=1.4)
        # ceiling labels inside the first panel (the smallest N: its points sit lowest), at the
        # left and right ends in turn from the top
        sides = label_sides(list(ceilings))
        for pk, ps in ceilings.items():
            col = PREC_COLOR.get(ps[0], "0.5")
            ax.axhline(pk, color=col, lw=1.2, ls="--", zorder=2)
            if ax is axes[0][0]:
                left = sides[pk] == "left"
                ax.annotate(f"{', '.join(ps)} ceiling {fnum(pk)}", (lo_x if left else hi_x, pk),
                            xytext=(4 if left else -4, 3), textcoords="offset points", ha="left" if left else "right",
                            fontsize=7, color=col, bbox=dict(boxstyle="square,pad=0.1", fc="w", ec="none", alpha=0.8),
                            zorder=5)
        if d.copy_gbs:
            bx = [lo_x, hi_x]
            ax.plot(bx, [x * d.copy_gbs / 1000.0 for x in bx], color="0.3", lw=1.2, zorder=2)
            if ax is axes[0][-1]:
                ax.annotate(f"copy bandwidth {fnum(d.copy_gbs)} GB/s", (lo_x * 1.3, lo_x * 1.3 * d.copy_gbs / 1000.0),
                            xytext=(4, 6), textcoords="offset points", fontsize=7, color="0.3")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo_x, hi_x)
        ax.set_ylim(min(ys) / 2, top * 1.8)
        plain_log_ticks(ax, "x")
        # the layers' modelled intensities (one per io_dtype) named above the panel, outside
        # the plotting area (so no tag crosses a ceiling label); equal ones share a tag
        at = {}
        for x, _, r in pts[n]:
            names = at.setdefault(round(x, 3), [])
            if r["layer"] not in names:
                names.append(r["layer"])
        for x in at:
            ax.axvline(x, color="0.85", lw=0.6, zorder=1)
        top_ax = ax.secondary_xaxis("top")
        top_ax.set_xticks(sorted(at), labels=[", ".join(at[x]) for x in sorted(at)], fontsize=6.5, rotation=90,
                          color="0.4")
        top_ax.minorticks_off()
        top_ax.tick_params(length=2)
        plain_log_ticks(ax, "y")
        ax.set_title(f"N = {n}", fontsize=9)
        ax.set_xlabel("FLOPs / bytes of input, weights and output once (io_dtype), log", fontsize=8)
    axes[0][0].set_ylabel("achieved TFLOP/s (direct-convolution FLOPs / kernel time), log")
    precs = sorted({r.get("precision", "") for _, _, r in allp}, key=prec_key)
    algos = sorted({r.get("algo", "") for _, _, r in allp})
    handles = [Patch(color=PREC_COLOR.get(p, "0.5"), label=p) for p in precs]
    handles += [Line2D([], [], color="0.3", marker=ALGO_MARKER.get(a, "P"), ls="", label=a or "(no algo)")
                for a in algos]
    handles.append(Line2D([], [], color="0.3", marker="o", mfc="none", ls="", label="hollow: effective"))
    if any(meas.get(n) for n in Ns):
        handles.append(Line2D([], [], color="0.3", marker=MEASURED_MARKER, ls="-", lw=0.6,
                              label="x: at the DRAM bytes ncu measured\n(profile CSV), joined to the\nmodelled point"))
    axes[0][-1].legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False,
                       title="precision; algo", title_fontsize=8)
    used = [p[2] for p in allp]
    fig.suptitle(d.title("Roofline: every PASS row (memory: pageable unless marked) against its precision class's "
                         "ceiling" + (" and the device's copy bandwidth" if d.copy_gbs else "")
                         + ("; x: measured DRAM bytes" if any(meas.get(n) for n in Ns) else ""), used), fontsize=10)
    return save(fig, out, "roofline.png"), used


def report_section(d, w, fig):
    """The report's per-class ceiling section (newer CSVs only)."""
    w("## Against each precision class's ceiling")
    w("")
    if not d.has_algo:
        w(f"Not drawn: {NO_CLASS_PEAKS}.")
        w("")
        return
    n = ceilings_N(d)
    peaks = ", ".join(f"{p} {fnum(v)} TFLOP/s" for p, v in sorted(d.class_peaks.items(), key=lambda kv: prec_key(kv[0])))
    w(f"Ceilings measured in the sweep (peak_tflops per precision class): {peaks or 'none'}"
      + (f"; device-to-device copy bandwidth {fnum(d.copy_gbs)} GB/s" if d.copy_gbs else "") + ". "
      f"Cells: TFLOP/s at N = {n} (% of the row's own class's ceiling); `eff.` marks Winograd and FFT rows, "
      "whose TFLOP/s are the direct convolution's FLOPs over their time (effective, so they can pass their ceiling).")
    w("")
    body, used = [], []
    for v in d.variants:
        rs = [d.getok(l, n, v) for l in d.layers]
        if not any(r and r["tflops"] for r in rs):
            continue
        cells = []
        for r in rs:
            if not r or not r["tflops"]:
                cells.append("—")
                continue
            used.append(r)
            pk = r["peak_tflops"]
            pct = r["pct_peak"] if r["pct_peak"] is not None else (100.0 * r["tflops"] / pk if pk else None)
            cells.append(f"{fnum(r['tflops'])} ({fnum(pct)} %)" + (" eff." if effective(r) else ""))
        algos = sorted({r.get("algo", "") for r in rs if r})
        body.append([d.label(v), d.precision.get(v, ""), ", ".join(a for a in algos if a) or "—"] + cells)
    w(md_table(["variant", "precision", "algo"] + d.layers, body, ["l", "l", "l"] + ["r"] * len(d.layers)))
    w("")
    w(d.provenance(used, f"N = {n}"))
    w("")
    # intensity and ridge points: which side of each ceiling's ridge a layer sits on
    if d.copy_gbs:
        rows = []
        for l in d.layers:
            for dt in sorted({r.get("io_dtype", "") for r in d.rows if r["layer"] == l and r["N"] == n}):
                r = next((r for r in d.rows if r["layer"] == l and r["N"] == n and r.get("io_dtype", "") == dt), None)
                b = min_bytes(r) if r else None
                if b and r["gflop"]:
                    rows.append([l, dt, fnum(b / 1e6), fnum(r["gflop"] * 1e9 / b)])
        ridge = ", ".join(f"{p} {fnum(v * 1000.0 / d.copy_gbs)}" for p, v in
                          sorted(d.class_peaks.items(), key=lambda kv: prec_key(kv[0])))
        w(f"Arithmetic intensity at N = {n} (direct-convolution FLOPs over the bytes of input, weights and output "
          f"once); ridge points (ceiling / copy bandwidth, FLOP/byte): {ridge}. A layer below a class's ridge "
          "point is bound by memory bandwidth in that class even at perfect reuse.")
        w("")
        w(md_table(["layer", "io_dtype", "MB moved at least", "FLOP / byte"], rows, ["l", "l", "r", "r"]))
        w("")
    fig(f"ceilings_N{n}.png", "TFLOP/s against each class's ceiling")
    fig("roofline.png", "roofline")
