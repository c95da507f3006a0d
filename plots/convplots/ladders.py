"""Each family's ladder, rung by rung, per layer: what each idea is worth.

A family's rungs are its variants in the order the CSV's rows first show them (a sweep
writes them in the registry's order, where each rung adds one idea to the one before); a
family that holds several ladders names them (the `ladder` column, else the registry's), so
lines join only the rungs of one ladder.
A ladder compares like with like: a family whose rows span several precision classes or
layouts gets one ladder per (precision, layout) that has two or more rungs.
`X-uncoalesced` twins are controls, not rungs (the coalescing figure shows them). The
step of a rung is the previous rung's kernel time over its own on the same layer (above 1:
the idea helped). Needs no column newer than the first CSV format.
"""

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib import ticker as mticker
from matplotlib.lines import Line2D

from .io import LIBRARY_FAMILIES, REGISTRY_LADDER, UNCOALESCED, fnum, fx, md_table
from .draw import layer_colors, plain_log_ticks, save


# A rung's ladder is the CSV's `ladder` column (schema 3 on: the registry's, bench/family.hpp): a
# family is one ladder (its rungs in registry order, cut by precision class and layout) unless its
# spec names another; fp32-fast holds three unrelated ladders, and lines join only the rungs of
# one of them. CSVs before the column (the committed 160100a reference among them) take the
# registry's current ladders (`convstudy list --json`, through io.REGISTRY_LADDER).


def ladder_N(d):
    return max(d.main_Ns) if d.main_Ns else None


def ladders(d):
    """ladder name -> rungs (variants), one ladder per family and (precision, layout) with two
    or more rungs that have PASS rows; the name carries the precision and layout only where
    the family spans several."""
    n = ladder_N(d)
    out = {}
    for fam in d.family_order:
        rungs = [v for v in d.rungs.get(fam, []) if not v.endswith(UNCOALESCED)
                 and any(d.getok(l, n, v) for l in d.layers)]
        by_ladder = {}
        for v in rungs:
            by_ladder.setdefault(d.ladder.get(v) or REGISTRY_LADDER.get(v.split("/")[0], fam), []).append(v)
        for name, lrungs in by_ladder.items():
            groups = {}
            for v in lrungs:
                layout = "nhwc" if v.endswith("/nhwc") else "nchw"
                groups.setdefault((d.precision.get(v, ""), layout), []).append(v)
            for (prec, layout), g in groups.items():
                if len(g) >= 2:
                    out[name if len(groups) == 1 else f"{name} ({prec}, {layout})"] = g
    return out


def steps(d, rungs, layer, n):
    """[(variant, row or None, step or None)]: step = the previous rung with a PASS row on
    this layer over this rung's kernel time."""
    out, prev = [], None
    for v in rungs:
        r = d.getok(layer, n, v)
        step = prev["kernel_ms"] / r["kernel_ms"] if r and prev else None
        out.append((v, r, step))
        if r:
            prev = r
    return out


def fig_ladders(d, out):
    n = ladder_N(d)
    lad = ladders(d)
    if not lad:
        return None, "no family has two or more rungs with PASS rows"
    fams = list(lad)
    ncol = min(3, len(fams))
    nrow = math.ceil(len(fams) / ncol)
    width = max(len(r) for r in lad.values())
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.6 * ncol + 1.5, 3.4 * nrow + 1.0 + 0.08 * width * nrow),
                             squeeze=False)
    lc = layer_colors(d.layers)
    used = []
    for k, fam in enumerate(fams):
        ax = axes[k // ncol][k % ncol]
        rungs = lad[fam]
        vals = []
        for l in d.layers:
            st = steps(d, rungs, l, n)
            xs = [i for i, (_, r, _) in enumerate(st) if r]
            ys = [r["kernel_ms"] for _, r, _ in st if r]
            used += [r for _, r, _ in st if r]
            vals += ys
            if ys:
                ax.plot(xs, ys, marker="o", ms=3.5, lw=1.3, color=lc[l], label=l)
        # the whole network: sum over the layers where every layer passed
        tot = []
        for i, v in enumerate(rungs):
            rs = [d.getok(l, n, v) for l in d.layers]
            if all(rs):
                tot.append((i, sum(r["kernel_ms"] for r in rs)))
        if len(tot) >= 2:
            ax.plot([t[0] for t in tot], [t[1] for t in tot], color="k", lw=1.6, ls="--", marker="s", ms=3.5)
            for (i0, t0), (i1, t1) in zip(tot, tot[1:]):
                ax.annotate(f"{t0 / t1:.2g}×", ((i0 + i1) / 2, math.sqrt(t0 * t1)), xytext=(0, 6),
                            textcoords="offset points", ha="center", fontsize=7, color="k")
            vals += [t[1] for t in tot]
        ax.set_yscale("log")
        if vals:
            ax.set_ylim(min(vals) / 1.6, max(vals) * 1.8)
        plain_log_ticks(ax, "y")
        ax.set_xticks(range(len(rungs)))
        ax.set_xticklabels([d.label(v) for v in rungs], rotation=35, ha="right", fontsize=7)
        ax.xaxis.set_minor_locator(mticker.NullLocator())
        ax.set_xlim(-0.4, len(rungs) - 0.6)
        ax.set_title(fam, fontsize=9)
        if k % ncol == 0:
            ax.set_ylabel(f"kernel time (ms), N = {n}")
    for k in range(len(fams), nrow * ncol):
        axes[k // ncol][k % ncol].axis("off")
    handles = [Line2D([], [], color=lc[l], marker="o", ms=3.5, label=l) for l in d.layers]
    handles.append(Line2D([], [], color="k", ls="--", marker="s", ms=3.5,
                          label="all layers (sum); ×: step over the rung before"))
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 0.95), fontsize=8, frameon=False)
    fig.suptitle(d.title(f"Family ladders, rung by rung (registry order), kernel time per layer at N = {n} "
                         "(memory: pageable unless [marked])", used), fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.96), h_pad=1.5)
    return save(fig, out, "ladders.png"), used


def report_section(d, w, fig):
    """The report's ladder section: one table per family at the largest main N."""
    n = ladder_N(d)
    w("## Family ladders")
    w("")
    lad = ladders(d) if n is not None else {}
    if not lad:
        w("No family has two or more rungs with PASS rows in this data.")
        w("")
        return
    w(f"Each family's variants in the order the CSV first shows them (the registry's: each rung adds one idea "
      f"to the one before), kernel time (ms) at N = {n} with the step `(×)` over the previous rung that passed "
      "on the same layer (above 1: the idea helped). `X-uncoalesced` controls are in the coalescing section. "
      "`all layers` sums the layers where every layer passed.")
    w("")
    for fam, rungs in lad.items():
        w(f"### Ladder: {fam}")
        w("")
        body, used = [], []
        per_layer = {l: steps(d, rungs, l, n) for l in d.layers}
        prev_tot = None
        for i, v in enumerate(rungs):
            cells = []
            for l in d.layers:
                _, r, st = per_layer[l][i]
                if r is None:
                    rr = d.get(l, n, v)
                    cells.append(rr["status"] if rr else "—")
                    continue
                used.append(r)
                cells.append(fnum(r["kernel_ms"]) + (f" ({fx(st)})" if st else ""))
            rs = [d.getok(l, n, v) for l in d.layers]
            tot = sum(r["kernel_ms"] for r in rs) if all(rs) else None
            tcell = fnum(tot) + (f" ({fx(prev_tot / tot)})" if tot and prev_tot else "")
            if tot:
                prev_tot = tot
            body.append([str(i + 1), d.label(v), d.precision.get(v, "")] + cells + [tcell])
        w(md_table(["rung", "variant", "precision"] + d.layers + ["all layers"], body,
                   ["r", "l", "l"] + ["r"] * (len(d.layers) + 1)))
        w("")
        w(d.provenance(used, f"N = {n}"))
        w("")
    fig("ladders.png", "family ladders")


STUDY_FAMILIES = ("baseline", "single-kernel", "multi-kernel")


def exact_fp32_ladder(d, layer, n):
    """The fp32-class ladder of one layer: from the study's fastest kernel (families baseline,
    single-kernel, multi-kernel) through every variant of ours that is faster than all the
    rungs before it, in order of decreasing time; library rows are not rungs. Each entry:
    (row, step over the previous rung). Empty when the study's families did not pass."""
    rows = [r for r in d.rows if r["layer"] == layer and r["N"] == n and r["precision"] == "fp32"
            and r["status"] == "PASS" and r["kernel_ms"] is not None and r["memory"] == "pageable"]
    study = [r for r in rows if r["family"] in STUDY_FAMILIES]
    if not study:
        return []
    start = min(study, key=lambda r: r["kernel_ms"])
    ours = sorted((r for r in rows if r["family"] not in LIBRARY_FAMILIES and r["kernel_ms"] < start["kernel_ms"]),
                  key=lambda r: -r["kernel_ms"])
    ladder, best = [(start, None)], start["kernel_ms"]
    for r in ours:
        if r["kernel_ms"] < best:
            ladder.append((r, best / r["kernel_ms"]))
            best = r["kernel_ms"]
    return ladder


def report_exact_fp32(d, w):
    """The report's exact-fp32 section: per layer, the ladder from the study's best kernel to
    the fastest fp32-class variant, each step's gain and error, and cuDNN fp32 beside it."""
    n = ladder_N(d)
    w("## Exact fp32: from the study's best kernel to the fastest of ours")
    w("")
    if n is None or not any(exact_fp32_ladder(d, l, n) for l in d.layers):
        w("No fp32 rows of the study's families passed in this data.")
        w("")
        return
    w(f"Per layer at N = {n} (memory: pageable): the study's fastest kernel, then each variant of ours in the "
      "fp32 class (max_rel_err <= 1e-4, the same check as every fp32 row) that is faster than every rung "
      "before it; `step` is the previous rung's time over this one's. Winograd rows compute fewer "
      "multiplications: their TFLOP/s are effective. The fastest cuDNN fp32 row closes each table.")
    w("")
    used = []
    for l in d.layers:
        lad = exact_fp32_ladder(d, l, n)
        if not lad:
            continue
        w(f"### {l}")
        w("")
        body = []
        for r, step in lad:
            used.append(r)
            body.append([r["variant"], r["family"], r.get("algo") or "—", fnum(r["kernel_ms"]),
                         fx(step) if step else "—", fexp_err(r), fnum(r.get("tflops"))])
        cud = [r for r in d.rows if r["layer"] == l and r["N"] == n and r["family"] == "cudnn"
               and r["precision"] == "fp32" and r["status"] == "PASS" and r["kernel_ms"] is not None]
        if cud:
            c = min(cud, key=lambda r: r["kernel_ms"])
            used.append(c)
            last = lad[-1][0]["kernel_ms"]
            body.append([f"*{c['variant']}* (reference)", c["family"], c.get("algo") or "—", fnum(c["kernel_ms"]),
                         f"ours / cuDNN: {fx(last / c['kernel_ms'])}", fexp_err(c), fnum(c.get("tflops"))])
        w(md_table(["rung", "family", "algo", "kernel ms", "step", "max_rel_err", "TFLOP/s"], body,
                   ["l", "l", "l", "r", "r", "r", "r"]))
        w("")
    w(d.provenance(used, f"N = {n}"))
    w("")


def fexp_err(r):
    v = r.get("max_rel_err")
    return f"{v:.1e}" if isinstance(v, float) else "—"
