"""The headline figure: the README's headline table drawn (summary.py): ours / cuDNN kernel
time per precision class, layer and N, and the layers' total, each side in its fastest layout
per layer."""

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
    groups = d.layers + [f"{len(d.layers)} layers"]
    fig, axes = plt.subplots(1, len(cls), figsize=(3.8 * len(cls) + 1.5, 4.2), sharey=True, squeeze=False,
                             layout="constrained")
    used, vals = [], []
    w = 0.8 / len(Ns)
    for ax, c in zip(axes[0], cls):
        for j, n in enumerate(Ns):
            xs, ys = [], []
            for i, l in enumerate(d.layers):
                x = summary.cell(d, c, l, n)
                if x.ratio:
                    xs.append(i - 0.4 + w * (j + 0.5))
                    ys.append(x.ratio)
                    used += [x.ours, x.cudnn]
                    if x.strayed:  # the table's mark: cuDNN's row strayed from its own search median
                        ax.annotate(summary.MARK, (xs[-1], x.ratio), ha="center", va="bottom", fontsize=9)
            t = summary.total(d, c, n)
            if t:
                xs.append(len(d.layers) - 0.4 + w * (j + 0.5))
                ys.append(t[0] / t[1])
            ax.bar(xs, ys, width=w * 0.9, color=cols[n], label=f"N = {n}", zorder=2)
            vals += ys
        ax.axhline(1.0, color="0.2", lw=1, ls="--", zorder=3)
        ax.axvline(len(d.layers) - 0.5, color="0.6", lw=0.8, zorder=1)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups, fontsize=8, rotation=30)
        ax.set_title(f"{c} class", fontsize=9)
        ax.grid(axis="y", alpha=0.3, zorder=1)
    if not vals:
        plt.close(fig)
        return None, "no cell has both sides"
    ax0 = axes[0][0]
    ax0.set_yscale("log")
    ax0.set_ylim(min(vals + [1]) / 1.4, max(vals + [1]) * 1.4)
    plain_log_ticks(ax0, "y")
    ax0.set_ylabel("fastest of ours / cuDNN, kernel time\n(below 1: ours faster; log)")
    axes[0][-1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False)
    fig.suptitle(d.title("Ours against cuDNN (the faster of its plain and space-to-depth rows), per precision class; "
                         f"{summary.MARK}: cuDNN's row strayed from its search median", used), fontsize=10)
    return save(fig, out, "summary.png"), used
