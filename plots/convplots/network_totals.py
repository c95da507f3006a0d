"""A network's totals and per-layer bounds (issue 51's goals): for one sweep CSV of a layer table
(schema 4 on: its `table` and `count` columns), per precision class and N:

- ours = the `auto-<class>` rows (what a user runs; `path` picks the tuned or the heuristic ones
  where the sweep set the axis), never the best of our rungs; cuDNN = the fastest of
  `cudnn-<class>`, `cudnn-legacy-<class>` and `cudnn-<class>-s2d` per layer;
- totals are single-layout and weighted by count: each side's best single-layout total (a network
  cannot change layout per layer for free);
- each layer's bound from its FLOPs and its compulsory bytes (input, weights, output once, at the
  row's element size) against the run's measured ceilings (the class's `peak_tflops`, `copy_gbs`):
  compute or DRAM, and each side's share of it (bound time / kernel time);
- a DRAM-bound layer is judged at 1.0x, and the total's goal counts such layers at cuDNN's time.

goals_markdown writes them (the docs' `network` blocks, the report's section when a sweep has auto
rows). `python3 -m convplots.network_totals --self-test` checks the arithmetic on made-up rows (ctest).
"""

import sys

from .io import fnum, md_table, min_bytes, ok
from .summary import LAYOUTS, cudnn_ms


def count_of(r):
    """How many times the network runs the row's shape (CSVs before schema 4: 1)."""
    try:
        return max(1, int(float(r.get("count") or 1)))
    except ValueError:
        return 1


def path_of(r):
    """The auto row's path as the sweep set it ("" where it left the axis to the row)."""
    for kv in (r.get("axes") or "").split(";"):
        k, _, v = kv.partition("=")
        if k == "path":
            return v
    return ""


def is_cudnn(r, cls):
    return r["_variant"] in (f"cudnn-{cls}", f"cudnn-legacy-{cls}", f"cudnn-{cls}-s2d")


def bound(r, peak_tflops, copy_gbs):
    """(verdict, ms): the larger of the layer's FLOPs at the class's ceiling and its compulsory
    bytes (io.min_bytes) at the copy bandwidth; (None, None) where a ceiling is missing."""
    nbytes = min_bytes(r)
    if not peak_tflops or not copy_gbs or nbytes is None:
        return None, None
    n, c, m, rr, s, e, f = (int(r[k]) for k in ("N", "C", "M", "R", "S", "E", "F"))
    flops = 2.0 * n * m * e * f * c * rr * s
    compute_ms, dram_ms = flops / (peak_tflops * 1e9), nbytes / (copy_gbs * 1e6)
    return ("compute", compute_ms) if compute_ms >= dram_ms else ("DRAM", dram_ms)


def side_ms(side, r):
    """A row's time as its side counts it: ours its kernel_ms, cuDNN's summary.cudnn_ms."""
    return r["kernel_ms"] if side == "ours" else cudnn_ms(r)


def layer_rows(rows, cls, n, path=""):
    """{layer: {"count", "ours": {layout: row}, "cudnn": {layout: row}}} at N, in row order."""
    out = {}
    for r in rows:
        if r["N"] != n or not ok(r):
            continue
        side = "ours" if r["_variant"] == f"auto-{cls}" and path_of(r) == path else \
            "cudnn" if is_cudnn(r, cls) else None
        if side is None:
            continue
        e = out.setdefault(r["layer"], {"count": count_of(r), "ours": {}, "cudnn": {}})
        best = e[side].get(r["layout"])
        if best is None or side_ms(side, r) < side_ms(side, best):
            e[side][r["layout"]] = r
    return out


def best_total(per_layer, side):
    """(layout, ms): the side's fastest single-layout total weighted by count; None where no layout
    has every layer."""
    best = None
    for layout in LAYOUTS:
        rs = [(e["count"], e[side].get(layout)) for e in per_layer.values()]
        if not rs or any(r is None for _, r in rs):
            continue
        ms = sum(c * side_ms(side, r) for c, r in rs)
        if best is None or ms < best[1]:
            best = (layout, ms)
    return best


def judge(per_layer, peak_tflops, copy_gbs, ours_layout, cudnn_layout):
    """Per layer in the two totals' layouts: (layer, count, ours ms, cuDNN ms, ratio, bound verdict,
    bound ms, ours share, cuDNN share); the goal's total: ours over cuDNN with DRAM-bound layers
    at cuDNN's time; and that total were every compute-bound layer at its bound (the class's
    ceiling), the least it reaches unless a layer runs past the ceiling (None without bounds)."""
    lines, ours_sum, cudnn_sum, ceiling_sum = [], 0.0, 0.0, 0.0
    for layer, e in per_layer.items():
        o, c = e["ours"].get(ours_layout), e["cudnn"].get(cudnn_layout)
        if o is None or c is None:
            return lines, None, None
        om, cm = o["kernel_ms"], cudnn_ms(c)
        verdict, bms = bound(o, peak_tflops, copy_gbs)
        lines.append((layer, e["count"], om, cm, om / cm, verdict, bms, bms / om if bms else None,
                      bms / cm if bms else None))
        ours_sum += e["count"] * (cm if verdict == "DRAM" else om)
        ceiling_sum = None if ceiling_sum is None or bms is None else ceiling_sum + e["count"] * (
            cm if verdict == "DRAM" else bms)
        cudnn_sum += e["count"] * cm
    if not cudnn_sum:
        return lines, None, None
    return lines, ours_sum / cudnn_sum, None if ceiling_sum is None else ceiling_sum / cudnn_sum


def pytorch_ms(pytorch, table, layer, n, cls, layout):
    """PyTorch's eager (cuDNN) time of a layer (scripts/pytorch_anchors.py rows, io.read_pytorch)
    in that class, N and layout, or None; rows without a table are AlexNet's (older CSVs)."""
    for r in pytorch or ():
        if (r["layer"] == layer and r["N"] == n and r["precision"] == cls and r["layout"] == layout
                and r["impl"] == "eager" and (r.get("table") or "alexnet") == table):
            return r["ms"]
    return None


def _totals(d, classes, batches, path="", pytorch=None):
    """(totals rows, per-layer rows) of one sweep: see goals_markdown."""
    body, layers = [], []
    table = ", ".join(table_names(d))
    for cls in classes:
        for n in batches:
            per = layer_rows(d.rows, cls, n, path)
            o, c = best_total(per, "ours"), best_total(per, "cudnn")
            cells = ["—" if not x else f"{fnum(x[1])} ({x[0]})" for x in (o, c)]
            if not o or not c:
                body.append([cls, n] + cells + ["—", "—", "—", "—", "—"])
                continue
            lines, goal, floor = judge(per, d.class_peaks.get(cls), d.copy_gbs, o[0], c[0])
            within = sum(1 for x in lines if x[4] <= 1.0 or x[5] == "DRAM")
            body.append([cls, n] + cells + [f"{o[1] / c[1]:.3g}", "—" if goal is None else f"{goal:.4f}",
                                            "—" if floor is None else f"{floor:.3g}", f"{within} of {len(lines)}",
                                            worst_layer(lines)])
            for x in lines:
                row = [cls, n, x[0], x[1], fnum(x[2]), fnum(x[3]), f"{x[4]:.3g}", x[5] or "—", fnum(x[6]),
                       "—" if x[7] is None else f"{100 * x[7]:.0f}%", "—" if x[8] is None else f"{100 * x[8]:.0f}%"]
                if pytorch:  # PyTorch's eager cuDNN in ours' layout
                    t = pytorch_ms(pytorch, table, x[0], n, cls, o[0])
                    row += ["—", "—"] if t is None else [fnum(t), f"{x[2] / t:.3g}"]
                layers.append(row)
    return body, layers


TOTALS_HEAD = ["class", "N", "ours (layout)", "cuDNN (layout)", "ours / cuDNN", "goal total", "at the ceiling",
               "layers <= 1.0x", "worst layer"]


def worst_layer(lines):
    """The compute-bound layer with the highest ours / cuDNN (the no-disaster goal's measure: a
    DRAM-bound layer is judged at 1.0x), as 'name ratio'; '—' where every layer is DRAM-bound."""
    judged = [x for x in lines if x[5] != "DRAM"]
    if not judged:
        return "—"
    w = max(judged, key=lambda x: x[4])
    return f"{w[0]} {w[4]:.3g}"

LIBRARIES = ("auto", "cudnn", "cudnn-legacy", "cublas")


def fastest_rungs(rows, cls, n, layout):
    """{layer: row}: the fastest PASS row of our hand-written rungs (any family but auto and the
    libraries) of the class at N in the layout: the oracle that auto-<class> is held to."""
    out = {}
    for r in rows:
        if (r["N"] != n or not ok(r) or r["layout"] != layout or r.get("precision") != cls
                or r.get("family") in LIBRARIES):
            continue
        best = out.get(r["layer"])
        if best is None or r["kernel_ms"] < best["kernel_ms"]:
            out[r["layer"]] = r
    return out


def oracle_rows(d, cls, batches, within=0.03):
    """Per N (issue 51's AlexNet goal): auto-<class>'s best single-layout total, per layer in that
    layout the faster of auto and our fastest rung (summed by count), cuDNN's best single-layout total, auto over
    cuDNN, and the layers where auto is within `within` of the fastest rung (the rung named where
    it is not)."""
    body = []
    for n in batches:
        per = layer_rows(d.rows, cls, n)
        o, c = best_total(per, "ours"), best_total(per, "cudnn")
        if not o or not c:
            continue
        fast = fastest_rungs(d.rows, cls, n, o[0])
        misses, rung_ms = [], 0.0
        for layer, e in per.items():
            a, f = e["ours"][o[0]], fast.get(layer)
            best = min(a["kernel_ms"], f["kernel_ms"]) if f else a["kernel_ms"]
            rung_ms += e["count"] * best
            if f and a["kernel_ms"] > (1 + within) * f["kernel_ms"]:
                misses.append(f"{layer} {a['kernel_ms'] / f['kernel_ms']:.3g}x {f['_variant']}")
        body.append([cls, n, f"{fnum(o[1])} ({o[0]})", fnum(rung_ms), f"{fnum(c[1])} ({c[0]})", f"{o[1] / c[1]:.3g}",
                     f"{len(per) - len(misses)} of {len(per)}", "; ".join(misses) or "—"])
    return body


ORACLE_HEAD = ["class", "N", "auto (layout)", "fastest rungs", "cuDNN (layout)", "auto / cuDNN",
               "auto within 3% of the fastest rung", "where not"]


def table_names(d):
    return sorted({r.get("table", "") for r in d.rows if r.get("table")}) or ["(no table column)"]


def ours_caption(path):
    """What "ours" is in these tables, and the ceiling and worst-layer columns."""
    return (f"the auto-<class> rows{' of path=' + path if path else ''}; at the ceiling: the goal total were every "
            "compute-bound layer at the class's ceiling (its FLOPs at the sweep's peak_tflops); worst layer: the "
            "compute-bound layer of the highest ours / cuDNN (a DRAM-bound one is judged at 1.0x). ")


def goals_markdown(d, classes, batches, path="", pytorch=None):
    """Per class and N: each side's best single-layout total weighted by count, ours (the
    auto-<class> rows of `path`) over cuDNN, the goal's total (DRAM-bound layers at cuDNN's time)
    and the layers at most 1.0x (DRAM-bound ones count); then per layer the bound and both sides'
    share of it, and with `pytorch` (io.read_pytorch rows) PyTorch's eager time in ours' layout and
    ours over it. `d`: a convplots.io.Data."""
    body, per_layer = _totals(d, classes, batches, path, pytorch)
    torch_head = ["PyTorch ms", "ours / PyTorch"] if pytorch else []
    return (md_table(TOTALS_HEAD, body) + "\n\n"
            + md_table(["class", "N", "layer", "count", "ours ms", "cuDNN ms", "ours / cuDNN", "bound", "bound ms",
                        "ours' share", "cuDNN's share"] + torch_head, per_layer) + "\n\n"
            + f"Table {', '.join(table_names(d))}; ours: " + ours_caption(path)
            + ("PyTorch: F.conv2d on cuDNN in benchmark mode (scripts/pytorch_anchors.py), another process." if pytorch
               else ""))


def totals_markdown(ds, classes, path=""):
    """goals_markdown's totals of several sweeps (each at its own N), one table, a column naming
    each sweep's layer table. A later sweep's (table, class, N) replaces an earlier one's in its
    place (a re-measurement: each total stays one process's)."""
    body, at = [], {}
    for d in ds:
        # the classes this sweep ran (a sweep of some classes leaves no empty rows for the others)
        ran = [c for c in classes if any(r["_variant"] == f"auto-{c}" for r in d.rows)]
        rows, _ = _totals(d, ran, d.main_Ns, path)
        for r in rows:
            row = [", ".join(table_names(d))] + r
            key = (row[0], row[1], row[2])  # table, class, N
            if key in at:
                body[at[key]] = row
            else:
                at[key] = len(body)
                body.append(row)
    return md_table(["table"] + TOTALS_HEAD, body) + "\n\nOurs: " + ours_caption(path)


def generator(data, revs):
    """The docs' `network` block kind (docs.py's GENERATORS): `network csv=FILE classes=fp16,bf16
    N=128 path=heuristic`, given docs.py's loader and revision text (this module cannot import it).
    csv=A+B+...: the totals of several sweeps in one table (no per-layer rows)."""
    def block(csv, classes="fp16,bf16,tf32", N=None, path="", oracle=""):
        cls = [c for c in classes.split(",") if c]
        if oracle:  # auto against the fastest of our rungs and cuDNN, per N (one sweep)
            d = data(csv)
            body = [r for c in cls for r in oracle_rows(d, c, [int(N)] if N else d.main_Ns)]
            return (md_table(ORACLE_HEAD, body) + "\n\nAuto: the auto-<class> rows (the committed tuning file); "
                    + "fastest rungs: per layer the faster of auto and our fastest other row in auto's layout. "
                    + f"Source: `{d.rows[0]['_src']}`, revision {revs(d)}.\n")
        if "+" in csv:
            ds = [data(f) for f in csv.split("+")]
            srcs = ", ".join(f"`{d.rows[0]['_src']}` ({revs(d)})" for d in ds)
            return totals_markdown(ds, cls, path) + f"Sources (revision): {srcs}.\n"
        d = data(csv)
        return (goals_markdown(d, cls, [int(N)] if N else d.main_Ns, path)
                + f"Source: `{d.rows[0]['_src']}`, revision {revs(d)}.\n")
    return block


def self_test():
    def row(layer, variant, layout, ms, count, axes="", family="auto"):
        return {"layer": layer, "N": 8, "_variant": variant, "family": family, "layout": layout,
                "kernel_ms": ms, "status": "PASS", "count": str(count), "axes": axes, "io_dtype": "f16",
                "C": "64", "H": "56", "W": "56", "M": "64", "R": "3", "S": "3", "E": "56", "F": "56"}
    rows = [row("a", "auto-fp16", "nhwc", 1.0, 2), row("a", "auto-fp16", "nchw", 0.5, 2),
            row("b", "auto-fp16", "nhwc", 1.0, 1), row("b", "auto-fp16", "nchw", 3.0, 1),
            row("a", "auto-fp16", "nhwc", 0.1, 2, "path=heuristic"),
            row("a", "cudnn-fp16", "nhwc", 2.0, 2, family="cudnn"), row("a", "cudnn-legacy-fp16", "nhwc", 1.5, 2,
                                                                          family="cudnn-legacy"),
            row("b", "cudnn-fp16", "nhwc", 1.0, 1, family="cudnn"), row("b", "hopper-ws-fp16", "nhwc", 0.01, 1,
                                                                        family="hopper")]
    per = layer_rows(rows, "fp16", 8)
    assert set(per) == {"a", "b"} and per["a"]["count"] == 2
    assert per["a"]["cudnn"]["nhwc"]["_variant"] == "cudnn-legacy-fp16"  # the fastest of the three
    # ours: nhwc 2x1.0 + 1.0 = 3.0, nchw 2x0.5 + 3.0 = 4.0: nhwc; the heuristic row apart
    assert best_total(per, "ours") == ("nhwc", 3.0), best_total(per, "ours")
    assert best_total(per, "cudnn") == ("nhwc", 4.0)  # nchw lacks layers
    assert best_total(layer_rows(rows, "fp16", 8, "heuristic"), "ours") is None  # layer b has none
    # bound: 2*8*64*56*56*64*9 FLOPs = 0.185 GFLOP against 1e3 TFLOP/s: 0.185 us; bytes
    # (8*64*56*56*2 + 64*64*9 + 8*64*56*56) x 2 B = 6.5 MB against 1 TB/s: 6.5 us: DRAM-bound
    verdict, ms = bound(rows[0], 1000.0, 1000.0)
    assert verdict == "DRAM" and abs(ms - 0.006496) < 1e-6, (verdict, ms)
    assert bound(rows[0], 1.0, 1e9)[0] == "compute"
    lines, goal, floor = judge(per, 1000.0, 1000.0, "nhwc", "nhwc")
    assert len(lines) == 2 and abs(lines[0][4] - 1.0 / 1.5) < 1e-12
    assert goal == 1.0 and floor == 1.0  # both layers DRAM-bound: counted at cuDNN's time
    # compute-bound: (2x1.0 + 1.0) / (2x1.5 + 1.0); at the ceiling each layer at its bound, 1.85
    # GFLOP at 1 TFLOP/s = 1.85 ms: (2 + 1) x 1.85 / 4.0, past 1 (a ceiling under both sides' times)
    lines, goal, floor = judge(per, 1.0, 1e9, "nhwc", "nhwc")
    assert abs(goal - 3.0 / 4.0) < 1e-12 and abs(floor - 3 * 1.849688 / 4.0) < 1e-5, (goal, floor)
    # several sweeps in one totals table: a row per (sweep, class), the sweep's table named; a
    # later sweep of the same (table, class, N) replaces the earlier's row in its place
    import types
    for r in rows:
        r["table"] = "t1"
    d = types.SimpleNamespace(rows=rows, class_peaks={"fp16": 1.0}, copy_gbs=1e9, main_Ns=[8])
    rows2 = [dict(r, table="t2") for r in rows]
    d2 = types.SimpleNamespace(rows=rows2, class_peaks={"fp16": 1.0}, copy_gbs=1e9, main_Ns=[8])
    md = totals_markdown([d, d2], ["fp16"])
    body = [ln for ln in md.splitlines() if ln.startswith("| t1 |") or ln.startswith("| t2 |")]
    assert len(body) == 2 and "| 0.75 |" in body[0] and "| 3.00 (nhwc) | 4.00 (nhwc) |" in body[0], md
    faster = [dict(r, kernel_ms=r["kernel_ms"] / 2) if r["_variant"] == "auto-fp16" else r for r in rows]
    d3 = types.SimpleNamespace(rows=faster, class_peaks={"fp16": 1.0}, copy_gbs=1e9, main_Ns=[8])
    md3 = totals_markdown([d, d2, d3], ["fp16"])
    body3 = [ln for ln in md3.splitlines() if ln.startswith(("| t1 |", "| t2 |"))]
    assert len(body3) == 2 and body3[0].startswith("| t1 |") and "| 1.50 (nhwc) | 4.00 (nhwc) |" in body3[0], md3
    # the worst compute-bound layer: a at 1.0 / 1.5, b at 1.0 / 1.0
    assert body[0].endswith("| b 1 |"), body[0]
    assert worst_layer([("x", 1, 0, 0, 2.0, "DRAM"), ("y", 1, 0, 0, 1.2, "compute")]) == "y 1.2"
    assert worst_layer([("x", 1, 0, 0, 2.0, "DRAM")]) == "—"
    # PyTorch's eager time per layer in ours' layout (nhwc here), of this table only
    torch_rows = [{"layer": "a", "N": 8, "precision": "fp16", "layout": "nhwc", "impl": "eager", "ms": 0.5, "table": "t1"},
                  {"layer": "a", "N": 8, "precision": "fp16", "layout": "nchw", "impl": "eager", "ms": 0.1, "table": "t1"},
                  {"layer": "b", "N": 8, "precision": "fp16", "layout": "nhwc", "impl": "eager", "ms": 0.2, "table": "t2"}]
    gm = goals_markdown(d, ["fp16"], [8], "", torch_rows)
    per_a = [ln for ln in gm.splitlines() if ln.startswith("| fp16 | 8 | a |")]
    per_b = [ln for ln in gm.splitlines() if ln.startswith("| fp16 | 8 | b |")]
    assert "| PyTorch ms | ours / PyTorch |" in gm and per_a[0].endswith("| 0.5 | 2 |") and per_b[0].endswith("| — | — |"), gm
    assert "PyTorch" not in goals_markdown(d, ["fp16"], [8])
    # the oracle: per layer the fastest of our rungs in auto's layout; auto within 3% or named
    rows.append(row("a", "hopper-ws-fp16", "nhwc", 0.9, 2, family="hopper"))
    rows.append(row("a", "hopper-mc-fp16", "nchw", 0.1, 2, family="hopper"))  # another layout: not the oracle
    for r in rows:
        r["precision"] = "fp16"
    fast = fastest_rungs(rows, "fp16", 8, "nhwc")
    assert fast["a"]["_variant"] == "hopper-ws-fp16" and fast["b"]["_variant"] == "hopper-ws-fp16"
    body = oracle_rows(d, "fp16", [8])
    # auto nhwc 3.0; rungs: a min(1.0, 0.9) x2 + b min(1.0, 0.01) = 1.81; cuDNN 4.0; a 1.11x, b 100x
    assert body == [["fp16", 8, "3.00 (nhwc)", "1.81", "4.00 (nhwc)", "0.75", "0 of 2",
                     "a 1.11x hopper-ws-fp16; b 100x hopper-ws-fp16"]], body
    print("network self-test: totals by count and layout, the cuDNN side, bounds, the goal's total and "
          "auto against the fastest rung hold")
    return 0


if __name__ == "__main__":
    sys.exit(self_test() if sys.argv[1:] == ["--self-test"] else 2)
