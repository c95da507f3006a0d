"""The answer first: per precision class, layer and N, the fastest of our PASS rows against
cuDNN, as ours / cuDNN kernel time (below 1: ours is faster).

A row's class is its `anchor_class` column (classes.py: decided once in C++). "Ours" is every
family but the libraries (io.LIBRARY_FAMILIES). "cuDNN" is the faster of `cudnn-<class>` and
`cudnn-<class>-s2d` (conv1 rearranged by space-to-depth so that cuDNN sees a stride-1
problem); a cuDNN row's time is the median over the processes that timed it
(`cudnn_process_ms`: the sweep's `--cudnn-processes`), shown with its spread; in a CSV without
it, the faster of its `kernel_ms` and its re-time in a fresh process (`cudnn_retime_ms`). A cell whose cuDNN row strayed more than
STRAY from its own engine-search median (`search_ms`) is marked. Ratios are computed here
from kernel_ms, never read from the CSV's ratio columns (whose direction changed once).

Layouts: a cell takes each side's fastest row in the layouts it is given (both: the best of
layout per layer; or one layout for the single-layout totals).
"""

from .io import LIBRARY_FAMILIES, PREC_ORDER, fnum, ok

CLASSES = ("fp32", "tf32", "fp16", "bf16")
LAYOUTS = ("nchw", "nhwc")
STRAY = 0.10  # a cuDNN row further than this from its own search median is marked
MARK = "†"


def cudnn_ms(r):
    """A cuDNN row's time: its median over processes, else the faster of its timing and its
    re-time, where it was re-timed."""
    if r.get("cudnn_process_ms"):
        return r["cudnn_process_ms"]
    t, rt = r["kernel_ms"], r.get("cudnn_retime_ms")
    return min(t, rt) if rt else t


def spread(rows):
    """Half the min-max range over processes of the rows' summed cuDNN times, relative to the
    summed medians; None where a row was timed in one process only."""
    if not rows or any(not r.get("cudnn_process_ms") or (r.get("cudnn_processes") or 0) < 2 for r in rows):
        return None
    lo, hi = sum(r["cudnn_process_min_ms"] for r in rows), sum(r["cudnn_process_max_ms"] for r in rows)
    return (hi - lo) / 2 / sum(r["cudnn_process_ms"] for r in rows)


def spread_text(rows):
    s = spread(rows)
    return "" if s is None else f" ±{100 * s:.1f}%"


def strayed(r):
    """|kernel_ms / search_ms - 1| > STRAY: the row ran away from its own engine search."""
    s = r.get("search_ms")
    return bool(s) and abs(r["kernel_ms"] / s - 1) > STRAY


def is_cudnn_of(r, cls):
    return r["family"] == "cudnn" and r["_variant"] in (f"cudnn-{cls}", f"cudnn-{cls}-s2d")


class Cell:
    """One (class, layer, N, layouts): the fastest row of ours and the fastest cuDNN row."""

    def __init__(self, ours, cudnn):
        self.ours, self.cudnn = ours, cudnn
        self.ours_ms = ours["kernel_ms"] if ours else None
        self.cudnn_ms = cudnn_ms(cudnn) if cudnn else None
        self.s2d = bool(cudnn) and cudnn["_variant"].endswith("-s2d")
        self.strayed = bool(cudnn) and strayed(cudnn)

    @property
    def ratio(self):
        """ours / cuDNN kernel time (below 1: ours is faster)."""
        return self.ours_ms / self.cudnn_ms if self.ours and self.cudnn else None


def cell(d, cls, layer, n, layouts=LAYOUTS):
    rs = [r for r in d.rows if r["layer"] == layer and r["N"] == n and ok(r) and r["layout"] in layouts]
    ours = [r for r in rs if r["family"] not in LIBRARY_FAMILIES and r["anchor_class"] == cls]
    cud = [r for r in rs if is_cudnn_of(r, cls)]
    return Cell(min(ours, key=lambda r: r["kernel_ms"]) if ours else None,
                min(cud, key=cudnn_ms) if cud else None)


def cells(d, cls, layouts=LAYOUTS):
    """{(layer, N): Cell} over the main batch sizes."""
    return {(l, n): cell(d, cls, l, n, layouts) for l in d.layers for n in d.main_Ns}


def total(d, cls, n, layouts=LAYOUTS):
    """(ours, cuDNN) summed over the layers at N when every layer has both; else None."""
    cs = [cell(d, cls, l, n, layouts) for l in d.layers]
    if not all(c.ratio for c in cs):
        return None
    return sum(c.ours_ms for c in cs), sum(c.cudnn_ms for c in cs), [c.cudnn for c in cs]


def classes_of(d):
    """The classes that have rows of ours and cuDNN rows, in PREC_ORDER."""
    have = {r["anchor_class"] for r in d.rows if ok(r) and r["family"] == "cudnn"}
    mine = {r["anchor_class"] for r in d.rows if ok(r) and r["family"] not in LIBRARY_FAMILIES}
    both = have & mine
    return [c for c in PREC_ORDER if c in both] + sorted(both - set(PREC_ORDER))


def name(r):
    return f"{r['_variant']}/{r['layout']}" if r else "—"


def pytorch_total(rows, cls, n, layers):
    """PyTorch's (eager cuDNN) five layers at N in its fastest layout per layer; None if a
    layer is missing."""
    ts = []
    for l in layers:
        ms = [p["ms"] for p in rows if p["layer"] == l and p["N"] == n and p["precision"] == cls
              and p.get("impl", "eager") == "eager"]
        if not ms:
            return None
        ts.append(min(ms))
    return sum(ts)


def ratio_text(ours, cudnn):
    return f"{ours / cudnn:.3g} ({fnum(ours)} / {fnum(cudnn)} ms)"


def table(d, pytorch=None):
    """The headline table's markdown lines: per class and main N, each layer's ours / cuDNN
    (best layout per layer), the five-layer total in the best layout per layer and in each
    single layout, and ours / PyTorch where a PyTorch anchor CSV is given; then the notes."""
    nl = len(d.layers)
    head = ["class", "N"] + d.layers + [f"{nl} layers, best layout per layer (ours / cuDNN ms)",
                                        f"{nl} layers, NHWC only", f"{nl} layers, NCHW only"]
    if pytorch:
        head.append(f"{nl} layers, ours / PyTorch")
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    marked = []
    for cls in [c for c in CLASSES if c in classes_of(d)]:
        for n in d.main_Ns:
            row = [cls, str(n)]
            for l in d.layers:
                c = cell(d, cls, l, n)
                txt = "—" if c.ratio is None else f"{c.ratio:.3g}" + (" s2d" if c.s2d else "") + spread_text([c.cudnn])
                if c.ratio is not None and c.strayed:
                    txt += f" {MARK}"
                    marked.append((cls, l, n, c.cudnn))
                row.append(txt)
            for lays in (LAYOUTS, ("nhwc",), ("nchw",)):
                t = total(d, cls, n, lays)
                row.append(ratio_text(t[0], t[1]) + spread_text(t[2]) if t else "—")
            if pytorch:
                t, p = total(d, cls, n), pytorch_total(pytorch, cls, n, d.layers)
                row.append(ratio_text(t[0], p) if t and p else "—")
            out.append("| " + " | ".join(row) + " |")
    out += ["", "Cells: ours / cuDNN kernel time, below 1 = ours faster; ours = the fastest of our PASS rows of "
            "the class, cuDNN = the faster of `cudnn-<class>` and `cudnn-<class>-s2d` (`s2d`: the space-to-depth "
            "row was the faster), each side in its own fastest layout per layer unless the column says otherwise."]
    k = sorted({int(r["cudnn_processes"]) for r in d.rows if ok(r) and r.get("cudnn_processes")})
    if k:
        out.append(f"cuDNN's times are medians over {'/'.join(map(str, k))} processes; ± is half their min-max range "
                   "over those processes, relative (cuDNN's side of the cell).")
    for cls, l, n, r in marked:
        rt = r.get("cudnn_retime_ms")
        out += ["", f"{MARK} {cls} {l} N={n}: {name(r)} ran at {fnum(r['kernel_ms'])} ms against its search median "
                f"{fnum(r['search_ms'])} ms" + (f", re-timed {fnum(rt)} ms (this process's time is the faster of the "
                                                "two)" if rt else ", not re-timed: the cell may flatter ours") + "."]
    return out
