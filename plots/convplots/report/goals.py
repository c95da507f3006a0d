"""A network sweep's totals against cuDNN, per class and N (network_totals.py): only where the
data holds auto-<class> rows, each path (the row's own choice, tuned, heuristic) the sweep ran."""

from ..network_totals import goals_markdown, path_of
from ..summary import CLASSES


def section(c):
    d, w = c.d, c.w
    autos = [r for r in d.rows if r["_variant"].startswith("auto-")]
    if not autos:
        return
    w("## The network: auto-<class> against cuDNN")
    w("")
    w("Totals weighted by each layer's count, in each side's best single layout; a layer's bound from its "
      "FLOPs and compulsory bytes against the run's ceilings, and both sides' share of it (bound time over "
      "kernel time). The goal's total counts DRAM-bound layers at cuDNN's time. With PyTorch anchor CSVs "
      "of the table (scripts/pytorch_anchors.py --table NAME), each layer against PyTorch's eager cuDNN too.")
    w("")
    classes = [k for k in CLASSES if any(r["_variant"] == f"auto-{k}" for r in autos)]
    for path in sorted({path_of(r) for r in autos}):
        w(f"### auto path: {path or 'the row' + chr(39) + 's own (tuned where the file has a choice)'}")
        w("")
        for line in goals_markdown(d, classes, d.main_Ns, path, getattr(d, "pytorch", None)).splitlines():
            w(line)
        w("")
