"""The report's opening: one table per precision class (summary.py), the headline figure,
then which variant and cuDNN engine each cell is."""

from .. import summary
from ..io import fnum, md_table


def cell_text(c):
    if c is None or c.ours is None:
        return "—"
    pct = f" · {fnum(c.ours['pct_peak'])} %" if c.ours.get("pct_peak") is not None else ""
    if c.cudnn is None:
        return f"{fnum(c.ours['kernel_ms'])} ms (no cuDNN){pct}"
    return f"**{c.ratio:.2f}×** {fnum(c.ours['kernel_ms'])} / {fnum(c.cudnn['kernel_ms'])}{pct}"


def tables(d):
    """The summary tables' lines (the README embeds the same)."""
    out = []
    for cls in summary.classes_of(d):
        cs = summary.cells(d, cls)
        body = []
        for l in d.layers:
            body.append([l] + [cell_text(cs.get((l, n))) for n in d.main_Ns])
            if any(cs.get((l, n)) and cs[(l, n)].s2d for n in d.main_Ns):
                body.append([f"{l} vs cuDNN s2d"] + [
                    f"**{cs[(l, n)].ratio_s2d:.2f}×** {fnum(cs[(l, n)].ours['kernel_ms'])} / "
                    f"{fnum(cs[(l, n)].s2d['kernel_ms'])}" if cs.get((l, n)) and cs[(l, n)].ratio_s2d else "—"
                    for n in d.main_Ns])
        tot = []
        for n in d.main_Ns:
            s = summary.all_layers(d, cls, n)
            tot.append(f"**{s[0] / s[1]:.2f}×** {fnum(s[0])} / {fnum(s[1])}" if s else "—")
        body.append([f"all {len(d.layers)} layers"] + tot)
        out.append(md_table([f"{cls}: ours / cuDNN"] + [f"N={n}" for n in d.main_Ns], body))
        out.append("")
    return out


def section(c):
    d, w = c.d, c.w
    w("Best of ours against the fastest cuDNN row of the same precision class, kernel time: "
      "**ours / cuDNN** (below 1: ours is faster), then `ours ms / cuDNN ms · % of the class's ceiling`. "
      "Classes as the CSV's `anchor_class` says (fp16acc counts as fp16); details below the tables.")
    w("")
    if not summary.classes_of(d):
        w("No precision class has both rows of ours and cuDNN rows in this data.")
        w("")
        return
    for line in tables(d):
        w(line)
    c.fig("summary.png", "ours / cuDNN per class, layer and N")
    w("### Which rows the summary compares")
    w("")
    body, used = [], []
    for cls in summary.classes_of(d):
        for (l, n), x in summary.cells(d, cls).items():
            used += [r for r in (x.ours, x.cudnn, x.s2d) if r]
            body.append([cls, l, n, summary.name(x.ours), fnum(x.ours["kernel_ms"]) if x.ours else "—",
                         summary.name(x.cudnn), fnum(x.cudnn["kernel_ms"]) if x.cudnn else "—",
                         f"{summary.name(x.s2d)} {fnum(x.s2d['kernel_ms'])}" if x.s2d else "—"])
    w(md_table(["class", "layer", "N", "best of ours", "ms", "fastest cuDNN", "ms", "cuDNN s2d"], body,
               ["l", "l", "r", "l", "r", "l", "r", "l"]))
    w("")
    w(d.provenance(used))
    w("")
