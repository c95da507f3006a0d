"""Kernel time and speedup over the CPU per variant and layer (the study's Tables 4-7)."""

import math

from ..io import fnum, fx, md_table, ok
from .common import status_cell


def section(c):
    d, w, fig = c.d, c.w, c.fig
    # --- kernel time (Tables 4 and 6)
    w("## Kernel time")
    w("")
    w("Kernel time per variant and layer, ms (the study's Tables 4 and 6). `total` sums the layers when "
      "every layer passed. The CPU row is the float32 reference the speedups divide.")
    w("")
    for n in d.main_Ns:
        w(f"### Kernel time (ms), N = {n}")
        w("")
        hdr = ["variant", "family", "precision"] + d.layers + ["total"]
        body = []
        cpu = [d.cpu_ms(l, n) for l in d.layers]
        body.append(["**CPU float32 reference**", "", "fp32"] + [fnum(c) for c in cpu]
                    + [fnum(sum(cpu)) if all(cpu) else "—"])
        used = []
        for v, m, lab in c.variant_rows():
            rs = [d.get(l, n, v, m) for l in d.layers]
            if not any(rs):
                continue
            used += [r for r in rs if r]
            cells = [status_cell(r) or fnum(r["kernel_ms"]) for r in rs]
            tot = sum(r["kernel_ms"] for r in rs) if all(r and ok(r) for r in rs) else None
            body.append([lab, d.families[v], d.precision.get(v, "")] + cells + [fnum(tot)])
        w(md_table(hdr, body, ["l", "l", "l"] + ["r"] * (len(d.layers) + 1)))
        w("")
        w(d.provenance(used, f"N = {n}"))
        w("")

    # --- speedup (Tables 5 and 7)
    w("## Speedup over the CPU")
    w("")
    w("cpu_ms / kernel_ms (kernel only) and cpu_ms / total_ms (with the copies of the row's memory mode), "
      "as in the study's Tables 5 and 7.")
    w("")
    for n in d.main_Ns:
        for kind, col in (("kernel only", "speedup_kernel"), ("with copies", "speedup_total")):
            w(f"### Speedup, {kind}, N = {n}")
            w("")
            body, used = [], []
            for v, m, lab in c.variant_rows():
                rs = [d.get(l, n, v, m) for l in d.layers]
                if not any(rs):
                    continue
                used += [r for r in rs if r]
                cells = [status_cell(r) or fx(r[col]) for r in rs]
                oks = [r for r in rs if r and ok(r)]
                allsp = None
                if len(oks) == len(d.layers) and all(r["cpu_ms"] for r in oks):
                    denom = sum(r["kernel_ms"] if col == "speedup_kernel" else (r["total_ms"] or math.nan)
                                for r in oks)
                    if denom and math.isfinite(denom):
                        allsp = sum(r["cpu_ms"] for r in oks) / denom
                body.append([lab] + cells + [fx(allsp)])
            w(md_table(["variant"] + d.layers + ["all layers"], body))
            w("")
            w(d.provenance(used, f"N = {n}"))
            w("")
    for l in d.layers:
        fig(f"speedup_{l}.png", f"speedup {l}")
