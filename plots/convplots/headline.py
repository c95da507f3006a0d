"""The headline figure: ours / cuDNN kernel time per precision class, layer and N (the
report's summary tables drawn; summary.py)."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from . import summary
from .draw import n_colors, plain_log_ticks, save


def fig_summary(d, out):
    cls = summary.classes_of(d)
    if not cls:
        return None, "no precision class has both rows of ours and cuDNN rows"
    Ns = d.main_Ns
    cols = n_colors(Ns)
    fig, axes = plt.subplots(1, len(cls), figsize=(3.6 * len(cls) + 1.5, 4.2), sharey=True, squeeze=False,
                             layout="constrained")
    used, vals = [], []
    w = 0.8 / len(Ns)
    for ax, c in zip(axes[0], cls):
        cs = summary.cells(d, c)
        for j, n in enumerate(Ns):
            xs, ys = [], []
            for i, l in enumerate(d.layers):
                x = cs.get((l, n))
                if x and x.ratio:
                    xs.append(i - 0.4 + w * (j + 0.5))
                    ys.append(x.ratio)
                    used += [x.ours, x.cudnn]
            ax.bar(xs, ys, width=w * 0.9, color=cols[n], label=f"N = {n}", zorder=2)
            vals += ys
        ax.axhline(1.0, color="0.2", lw=1, ls="--", zorder=3)
        ax.set_xticks(range(len(d.layers)))
        ax.set_xticklabels(d.layers, fontsize=8)
        ax.set_title(f"{c} class", fontsize=9)
        ax.grid(axis="y", alpha=0.3, zorder=1)
    if not vals:
        plt.close(fig)
        return None, "no cell has both sides"
    ax0 = axes[0][0]
    ax0.set_yscale("log")
    ax0.set_ylim(min(vals + [1]) / 1.4, max(vals + [1]) * 1.4)
    plain_log_ticks(ax0, "y")
    ax0.set_ylabel("best of ours / fastest cuDNN, kernel time\n(below 1: ours faster; log)")
    axes[0][-1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False)
    fig.suptitle(d.title("The answer: best of ours against the fastest cuDNN of the same precision class", used),
                 fontsize=10)
    return save(fig, out, "summary.png"), used
