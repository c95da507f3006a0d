"""Why a row is fast: the Nsight Compute counters of profile CSVs (`convstudy profile`,
`sweep --profile`: the ncu_* columns), which metric moved at each rung of each ladder, and
PyTorch's torch.compile beside its eager cuDNN (scripts/pytorch_anchors.py CSVs).

report.py calls report_lines(d) once; cli.py hands PyTorch anchor CSVs to attach_pytorch()
(they are told apart from sweep CSVs by their columns)."""

import math

from .io import fnum, md_table, min_bytes, read_pytorch
from .ladders import ladder_N, ladders
from .roofline import measured_bytes


# (column, label, kind): kind "pct" moves in percentage points, "bytes" by a ratio
METRICS = [("ncu_tensor_pct", "tensor pipe %", "pct"), ("ncu_fma_pct", "FMA pipe %", "pct"),
           ("ncu_sm_pct", "SM throughput %", "pct"), ("ncu_dram_bytes", "DRAM bytes", "bytes"),
           ("ncu_l2_hit_pct", "L2 hit %", "pct"), ("ncu_occupancy_pct", "occupancy %", "pct")]


def _f(r, col):
    if col == "ncu_dram_bytes":
        return measured_bytes(r)
    try:
        v = float(r.get(col) or "nan")
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def profiled(r):
    return r is not None and bool(r.get("ncu_set")) and _f(r, "ncu_time_ms") is not None




def attach_pytorch(d, paths):
    """Reads PyTorch anchor CSVs into d.pytorch (io.read_pytorch)."""
    d.pytorch = read_pytorch(paths)


def moved(a, b):
    """[(label, text, relative change)] of the metrics both rows have, largest change first:
    relative change = |b - a| / max(|a|, |b|), the same scale for percentages and bytes."""
    out = []
    for col, label, kind in METRICS:
        x, y = _f(a, col), _f(b, col)
        if x is None or y is None or max(abs(x), abs(y)) == 0:
            continue
        rel = abs(y - x) / max(abs(x), abs(y))
        text = (f"{label} {fnum(x)} → {fnum(y)}" if kind == "pct" else f"{label} ×{fnum(y / x)}" if x else label)
        out.append((label, text, rel))
    return sorted(out, key=lambda t: -t[2])


def counters_table(d, n):
    body, used = [], []
    for v in d.variants:
        for l in d.layers:
            r = d.getok(l, n, v)
            if not profiled(r):
                continue
            used.append(r)
            mb, mod = measured_bytes(r), min_bytes(r)
            body.append([d.label(v), l, fnum(r["kernel_ms"]), fnum(_f(r, "ncu_tensor_pct")),
                         fnum(_f(r, "ncu_fma_pct")), fnum(_f(r, "ncu_sm_pct")),
                         fnum(mb / 1e6) if mb else "—", fnum(mod / 1e6) if mod else "—",
                         fnum(_f(r, "ncu_l2_hit_pct")), fnum(_f(r, "ncu_occupancy_pct")),
                         fnum(_f(r, "ncu_registers")), fnum((_f(r, "ncu_smem_bytes") or 0) / 1024)])
    return body, used


def ladder_table(d, n):
    body, used = [], []
    for name, rungs in ladders(d).items():
        for l in d.layers:
            prev = None
            for v in rungs:
                r = d.getok(l, n, v)
                if not profiled(r):
                    continue
                if prev is not None:
                    m = moved(prev, r)
                    used += [prev, r]
                    body.append([name, f"{d.label(prev['variant'])} → {d.label(v)}", l,
                                 f"{fnum(prev['kernel_ms'])} → {fnum(r['kernel_ms'])}",
                                 f"**{m[0][1]}**" if m else "—", "; ".join(t for _, t, _ in m[1:3]) or "—"])
                prev = r
    return body, used


def pytorch_lines(d):
    rows = getattr(d, "pytorch", [])
    if not any(r["impl"] == "compile" for r in rows):
        return []
    md = ["### torch.compile beside eager cuDNN", ""]
    by = {(r["layer"], r["N"], r["precision"], r["layout"], r["impl"]): r for r in rows}
    layers = [l for l in d.layers if any(r["layer"] == l for r in rows)] or sorted({r["layer"] for r in rows})
    keys = sorted({(r["precision"], r["layout"], r["N"]) for r in rows if r["impl"] == "compile"})
    md.append(f"PyTorch {', '.join(sorted({r['torch'] for r in rows if r['torch']}))}: ms per layer (median, L2 "
              "flushed, as scripts/pytorch_anchors.py times them); `compile` is torch.compile(mode="
              "\"max-autotune-no-cudagraphs\") with a fresh compile cache per configuration, `eager` is "
              "F.conv2d on cuDNN (benchmark mode). compile / eager above 1: the compiler's choice is slower.")
    md.append("")
    body = []
    for prec, layout, n in keys:
        for impl in ("eager", "compile"):
            vals = [by.get((l, n, prec, layout, impl)) for l in layers]
            tot = sum(v["ms"] for v in vals) if all(vals) else None
            body.append([f"{prec} {layout} N={n}", impl] + [fnum(v["ms"]) if v else "—" for v in vals] + [fnum(tot)])
        e = [by.get((l, n, prec, layout, "eager")) for l in layers]
        c = [by.get((l, n, prec, layout, "compile")) for l in layers]
        ratios = [fnum(cc["ms"] / ee["ms"]) if cc and ee else "—" for ee, cc in zip(e, c)]
        tot = sum(x["ms"] for x in c) / sum(x["ms"] for x in e) if all(e) and all(c) else None
        body.append(["", "compile / eager"] + ratios + [fnum(tot)])
    md.append(md_table(["precision, layout, N", "impl"] + layers + ["total"], body,
                       ["l", "l"] + ["r"] * (len(layers) + 1)))
    md.append("")
    md.append("Source: " + ", ".join(sorted({f"`{r['_src']}`" for r in rows})) + ".")
    md.append("")
    return md


def report_lines(d):
    """The report's profile section as markdown lines (empty data: one line saying how to get it)."""
    md = ["## Why: Nsight Compute counters", ""]
    prof = [r for r in d.rows if profiled(r)]
    if not prof:
        md += ["No Nsight Compute columns in this data: `convstudy profile --variant V --layer L --batch N --csv "
               "P.csv` (or `sweep --profile`) writes them; pass the CSV to plots/plot.sh beside the sweep's.", ""]
        return md + pytorch_lines(d)
    ns = sorted({r["N"] for r in prof})
    n = ladder_N(d) if ladder_N(d) in ns else ns[-1]
    md.append(f"Counters of one timed repeat under ncu (`--clock-control none`), aggregated over each row's kernels: "
              f"bytes summed, percentages weighted by kernel time (L2 hit rate by L2 sectors), registers and shared "
              f"memory of the longest kernel. `DRAM MB` is what the kernels read and wrote; `model MB` the input, "
              f"weights and output once (the roofline's modelled bytes). N = {n}.")
    md.append("")
    body, used = counters_table(d, n)
    md.append(md_table(["variant", "layer", "kernel ms", "tensor %", "FMA %", "SM %", "DRAM MB", "model MB",
                        "L2 hit %", "occupancy %", "regs", "smem KiB"], body,
                       ["l", "l"] + ["r"] * 10))
    md.append("")
    md.append(d.provenance(used, f"N = {n}"))
    md.append("")
    md.append("### Which counter moved at each rung")
    md.append("")
    body, used = ladder_table(d, n)
    if body:
        md.append("For each ladder and layer, rung to rung (both profiled): the counter whose value changed most "
                  "(relative change |b − a| / max(|a|, |b|), in bold) and the next two.")
        md.append("")
        md.append(md_table(["ladder", "rung", "layer", "kernel ms", "moved most", "next"], body,
                           ["l", "l", "l", "r", "l", "l"]))
        md.append("")
        md.append(d.provenance(used, f"N = {n}"))
    else:
        md.append("No ladder has two profiled rungs on one layer at this N.")
    md.append("")
    return md + pytorch_lines(d)
