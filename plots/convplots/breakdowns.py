"""Copy / kernel / copy breakdown per variant and memory mode."""

import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from .io import COPY_COLOR, fnum
from .draw import family_bands, save


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
