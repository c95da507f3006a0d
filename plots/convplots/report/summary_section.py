"""The report's opening: the same answer as the README's headline table (summary.py), the
headline figure, then which variant and cuDNN row each cell is."""

from .. import summary
from ..io import fnum, md_table


def section(c):
    d, w = c.d, c.w
    if not summary.classes_of(d):
        w("No precision class has both rows of ours and cuDNN rows in this data.")
        w("")
        return
    for line in summary.table(d, getattr(d, "pytorch", None)):
        w(line)
    w("")
    c.fig("summary.png", "ours / cuDNN per class, layer and N")
    w("### Which rows the answer compares")
    w("")
    body, used = [], []
    for cls in summary.classes_of(d):
        for (l, n), x in summary.cells(d, cls).items():
            used += [r for r in (x.ours, x.cudnn) if r]
            body.append([cls, l, n, summary.name(x.ours), fnum(x.ours_ms), summary.name(x.cudnn), fnum(x.cudnn_ms),
                         "—" if x.ratio is None else f"{x.ratio:.3g}"])
    w(md_table(["class", "layer", "N", "fastest of ours", "ms", "cuDNN", "ms", "ours / cuDNN"], body,
               ["l", "l", "r", "l", "r", "l", "r", "r"]))
    w("")
    w(d.provenance(used))
    w("")
