"""Error against the golden output by variant."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .io import PREC_COLOR, PREC_ORDER, fexp
from .draw import family_bands, plain_log_ticks, save


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
