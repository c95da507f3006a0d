"""The report's closing list of figures, each with what it shows (or why it was not drawn)."""

from ..breakdowns import breakdown_N
from ..roofline import ceilings_N
from ..speedups import coalescing_layer


def section(c):
    d, w = c.d, c.w
    w("## Figures")
    w("")
    for name, desc in FIGURE_LIST(d):
        parts = c.figs.get(name)
        if parts:
            links = ", ".join(f"[{p}]({p})" for p in parts)
            w(f"- {links}: {desc}" + (" (split by family to a readable size)" if len(parts) > 1 else ""))
        else:
            w(f"- {name}: not drawn ({c.figs.get('_skipped', {}).get(name, 'no data')})")
    w("")


def FIGURE_LIST(d):
    nb = breakdown_N(d)
    out = [("summary.png", "best of ours / fastest cuDNN kernel time per precision class, layer and N")]
    out += [(f"speedup_{l}.png", f"{l}: kernel-only speedup over the CPU by variant, one bar per N")
           for l in d.layers]
    out += [(f"breakdown_{l}_N{nb}.png", f"{l}, N={nb}: h2d / kernel / d2h stacked per variant and memory mode")
            for l in d.layers]
    out += [("all_layers.png", "all layers: kernel time stacked by layer at the largest N, and the total per N"),
            (f"coalescing_{coalescing_layer(d) or 'conv1'}.png", "conv1: X vs X-uncoalesced kernel time per N"),
            ("scaling.png", "kernel time and speedup against N, log-log, per layer"),
            ("errors.png", "max_rel_err by variant, coloured by precision, with each precision's threshold"),
            ("vs_cudnn.png", "heatmap of vs_cudnn by layer and variant, per N"),
            ("tflops.png", "TFLOP/s per variant and layer against the fp32 FMA ceiling"),
            (f"ceilings_N{ceilings_N(d)}.png", "TFLOP/s per variant and layer against the row's own precision "
                                               "class's ceiling (effective for Winograd and FFT)"),
            ("roofline.png", "roofline: TFLOP/s against arithmetic intensity, each class's ceiling and the copy "
                             "bandwidth"),
            ("ladders.png", "each family's ladder: kernel time rung by rung per layer, and the step of each rung")]
    return out
