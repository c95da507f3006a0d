"""The answer first: per precision class, layer and N, the best of ours against the fastest
cuDNN row of the same class, with its % of the class's ceiling.

A row's class is its `anchor_class` column (classes.py: decided once in C++). "Ours" is
every family but the libraries (io.LIBRARY_FAMILIES); "cuDNN" is family `cudnn` without the
space-to-depth rows, which are reported apart: `cudnn-<class>-s2d` (conv1 rearranged so that
cuDNN sees a stride-1 problem) when the CSV has them. Any memory mode and layout: kernel
time does not depend on the memory mode, and each side takes its own best layout.
"""

import re

from .io import ANCHOR_FAMILY, LIBRARY_FAMILIES, PREC_ORDER, ok

S2D = re.compile(r"^cudnn-(?P<cls>[a-z0-9]+)-s2d$")


class Cell:
    """One (class, layer, N): the best row of ours, the fastest cuDNN row, the s2d cuDNN row."""

    def __init__(self, ours, cudnn, s2d):
        self.ours, self.cudnn, self.s2d = ours, cudnn, s2d

    @property
    def ratio(self):
        """ours / cuDNN kernel time (below 1: ours is faster)."""
        return self.ours["kernel_ms"] / self.cudnn["kernel_ms"] if self.ours and self.cudnn else None

    @property
    def ratio_s2d(self):
        return self.ours["kernel_ms"] / self.s2d["kernel_ms"] if self.ours and self.s2d else None


def fastest(rows):
    return min(rows, key=lambda r: r["kernel_ms"]) if rows else None


def classes_of(d):
    """The anchor classes that have both rows of ours and cuDNN rows, in PREC_ORDER."""
    have = {r["anchor_class"] for r in d.rows if ok(r) and r["family"] == ANCHOR_FAMILY}
    mine = {r["anchor_class"] for r in d.rows if ok(r) and r["family"] not in LIBRARY_FAMILIES}
    both = have & mine
    return [c for c in PREC_ORDER if c in both] + sorted(both - set(PREC_ORDER))


def cells(d, cls):
    """{(layer, N): Cell} over the main batch sizes."""
    out = {}
    for l in d.layers:
        for n in d.main_Ns:
            rs = [r for r in d.rows if r["layer"] == l and r["N"] == n and ok(r) and r["anchor_class"] == cls]
            ours = fastest([r for r in rs if r["family"] not in LIBRARY_FAMILIES])
            cud = fastest([r for r in rs if r["family"] == ANCHOR_FAMILY and not S2D.match(r["_variant"])])
            s2d = fastest([r for r in rs if S2D.match(r["_variant"])])
            if ours or cud:
                out[(l, n)] = Cell(ours, cud, s2d)
    return out


def all_layers(d, cls, n):
    """(sum of the best of ours over the layers, sum of the fastest cuDNN) at N, when every
    layer has both; else None."""
    cs = cells(d, cls)
    got = [cs.get((l, n)) for l in d.layers]
    if not all(c and c.ours and c.cudnn for c in got):
        return None
    return sum(c.ours["kernel_ms"] for c in got), sum(c.cudnn["kernel_ms"] for c in got)


def all_layers_s2d(d, cls, n):
    """The fastest cuDNN over the layers at N with each layer's fastest cuDNN row, the
    space-to-depth row where it is faster (conv1): what a cuDNN user who rewrites conv1 gets;
    None unless every layer has a cuDNN row."""
    cs = cells(d, cls)
    got = [cs.get((l, n)) for l in d.layers]
    if not all(c and c.cudnn for c in got):
        return None
    return sum(min(c.cudnn["kernel_ms"], c.s2d["kernel_ms"]) if c.s2d else c.cudnn["kernel_ms"] for c in got)


def name(r):
    return f"{r['_variant']}/{r['layout']}" if r else "—"
