"""The network as a user runs it (issue 52): `convstudy chain`'s rows (schema 5 on, `scope` chain)
side by side, per N, precision class and layout: ours (the `--choice` row, `auto-<class>` by
default, as a CUDA graph of the whole network, and the megakernel: the whole network as one
persistent kernel; ours is the faster of the two) and cuDNN's chain (`cudnn-<class>`, a CUDA
graph), all measured round-robin in one process; the median with its p10-p90 spread, the p99 where the run
had 100 repeats or more (N=1), ours over cuDNN's, and ours' share of the class's GEMM ceiling.

The docs' `chain` block (docs.py's GENERATORS). `python3 -m convplots.chain_totals --self-test`
checks the table on made-up rows (ctest).
"""

import csv
import os
import statistics
import sys

from .io import fnum, md_table

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def chain_rows(rows):
    """The PASS chain rows, keyed (N, precision, layout, side): side is cudnn for cuDNN's chain,
    megakernel for our chain as one kernel (algo megakernel), graph for ours as a graph of kernels.
    Where several processes measured a key (the plan's ours, PyTorch, ours, PyTorch order), one
    merged row: the median of the process medians, the lowest p10, the highest p90 and p99."""
    groups = {}
    for r in rows:
        if r.get("scope") != "chain" or r.get("status") != "PASS" or r.get("kernel_ms") is None:
            continue
        side = "cudnn" if r.get("family") == "cudnn" else "megakernel" if r.get("algo") == "megakernel" else "graph"
        groups.setdefault((int(r["N"]), r["precision"], r["layout"], side), []).append(r)
    return {k: merged(v) for k, v in groups.items()}


def merged(rs):
    """One row standing for the processes' rows rs of one key."""
    if len(rs) == 1:
        return rs[0]

    def values(col):
        out = []
        for r in rs:
            try:
                out.append(float(r.get(col)))
            except (TypeError, ValueError):
                pass
        return out
    m = dict(rs[0])
    m["kernel_ms"] = statistics.median(float(r["kernel_ms"]) for r in rs)
    for col, pick in (("kernel_p10_ms", min), ("kernel_p90_ms", max), ("kernel_p99_ms", max)):
        v = values(col)
        m[col] = pick(v) if v else ""
    pct = values("pct_peak")
    m["pct_peak"] = statistics.median(pct) if pct else None
    m["processes"] = len(rs)
    return m


def spread(r):
    p10, p90 = r.get("kernel_p10_ms"), r.get("kernel_p90_ms")
    try:
        return f"{fnum(float(p10))}-{fnum(float(p90))}"
    except (TypeError, ValueError):
        return "—"


def p99(r):
    try:
        return fnum(float(r.get("kernel_p99_ms")))
    except (TypeError, ValueError):
        return "—"


def pytorch_rows(paths):
    """PyTorch's chain rows (scripts/pytorch_anchors.py --chain) that PASSed, of one or more CSVs,
    keyed (N, precision, layout, impl): the median of the process medians where several processes
    ran."""
    out = {}
    for path in paths:
        with open(path, newline="", encoding="utf-8") as f:
            for r in csv.DictReader(f):
                if r.get("status") == "PASS" and r.get("ms"):
                    out.setdefault((int(r["N"]), r["precision"], r["layout"], r["impl"]), []).append(float(r["ms"]))
    return {k: statistics.median(v) for k, v in out.items()}


def ours_of(by, key):
    """Ours for (N, precision, layout): the faster PASS of the graph and the megakernel (the
    default the findings report), with which it was; (None, "") when neither ran."""
    cands = [(by[key + (side,)], side) for side in ("graph", "megakernel") if key + (side,) in by]
    if not cands:
        return None, ""
    return min(cands, key=lambda c: float(c[0]["kernel_ms"]))


def table(rows, torch_ms=None, classes=None):
    """The markdown table of the chain rows (an empty string when there are none); torch_ms:
    pytorch_rows' medians, for PyTorch's eager and compiled columns."""
    torch_ms = torch_ms or {}
    by = chain_rows(rows)
    keys = sorted({k[:3] for k in by if classes is None or k[1] in classes}, key=lambda k: (k[0], k[1], k[2]))
    body = []
    for n, prec, layout in keys:
        ours, which = ours_of(by, (n, prec, layout))
        graph, mega = by.get((n, prec, layout, "graph")), by.get((n, prec, layout, "megakernel"))
        cudnn = by.get((n, prec, layout, "cudnn"))
        cell = lambda r: fnum(r["kernel_ms"]) if r else "—"  # noqa: E731
        ratio = fnum(ours["kernel_ms"] / cudnn["kernel_ms"]) if ours and cudnn else "—"
        share = fnum(ours.get("pct_peak")) + "%" if ours and ours.get("pct_peak") is not None else "—"
        torch = [fnum(torch_ms.get((n, prec, layout, impl))) for impl in ("eager", "graph", "compile")]
        body.append([str(n), prec, layout, cell(ours), which or "—", spread(ours) if ours else "—",
                     p99(ours) if ours else "—", cell(graph), cell(mega), cell(cudnn),
                     spread(cudnn) if cudnn else "—", ratio, share] + torch)
    if not body:
        return ""
    head = ["N", "class", "layout", "ours ms", "ours is", "p10-p90", "p99", "graph ms", "megakernel ms",
            "cuDNN's chain ms", "p10-p90", "ours / cuDNN", "ours' share of the GEMM rate", "PyTorch eager ms", "graph",
            "compiled"]
    return md_table(head, body, ["r", "l", "l", "r", "l"] + ["r"] * 11)


def processes_text(merged_rows):
    """How many processes stand behind the table's rows: one count, or its range where keys differ."""
    counts = sorted({r.get("processes", 1) for r in merged_rows}) or [1]
    if counts == [1]:
        return "one process"
    if len(counts) == 1:
        return f"the median of {counts[0]} processes' medians"
    return f"the median of the processes' medians ({counts[0]} to {counts[-1]} processes a row)"


def generator(data, revs):
    """`chain csv=A+B pytorch=C+D classes=fp16`: the chain rows of one or more committed CSVs in one table
    (a key several processes measured: the median of their medians), PyTorch's chain beside them
    (committed scripts/pytorch_anchors.py --chain CSVs; only their PASS rows: — where it failed its
    check or did not run)."""
    def block(csv, pytorch=None, classes=None):
        ds = [data(f) for f in csv.split("+")]
        rows = [r for d in ds for r in d.rows]
        srcs = ", ".join(f"`{d.rows[0]['_src']}` ({revs(d)})" for d in ds)
        torch_ms = pytorch_rows([os.path.join(ROOT, p) for p in pytorch.split("+")]) if pytorch else None
        src_t = ", PyTorch: " + ", ".join(f"`{p}`" for p in pytorch.split("+")) if pytorch else ""
        how = processes_text(chain_rows(rows).values())
        return (table(rows, torch_ms, classes.split(",") if classes else None) + "\n\nOurs: the chain's `--choice` row a layer "
                "(bias and ReLU in its epilogue where the row fuses them, else a pass of their own or the pool's), then the "
                "pool, as a CUDA graph (graph), or the whole chain as one persistent kernel (megakernel, f16 and bf16 NHWC); "
                "ours is the faster of the two; cuDNN's chain: a fused convolution + bias + ReLU graph a layer and cuDNN's pooling; "
                f"{how}. Sources (revision): {srcs}{src_t}.\n")
    return block


def self_test():
    def row(n, fam, ms, layout="nhwc", prec="fp16", pct=None, p99v="", algo="chain"):
        return {"scope": "chain", "status": "PASS", "N": n, "family": fam, "precision": prec, "layout": layout, "algo": algo,
                "kernel_ms": ms, "kernel_p10_ms": str(ms * 0.9), "kernel_p90_ms": str(ms * 1.1),
                "kernel_p99_ms": p99v, "pct_peak": pct}
    rows = [row(1, "auto", 0.05, pct=10.0, p99v="0.07"), row(1, "cudnn", 0.1),
            row(128, "auto", 0.5, pct=60.0), {"scope": "layer", "status": "PASS", "N": 1, "kernel_ms": 9.0}]
    t = table(rows)
    lines = t.strip().split("\n")
    assert len(lines) == 4, t
    assert "| 1 | fp16 | nhwc | 0.05 | graph |" in lines[2] and "| 0.5 |" in lines[2] and "| 0.07 |" in lines[2], t
    assert lines[3].startswith("| 128 |") and "| — |" in lines[3], t
    assert table([]) == ""
    two = chain_rows([row(32, "auto", 0.2), row(32, "auto", 0.3), row(32, "auto", 0.1)])
    assert two[(32, "fp16", "nhwc", "graph")]["kernel_ms"] == 0.2 and two[(32, "fp16", "nhwc", "graph")]["processes"] == 3
    assert abs(float(two[(32, "fp16", "nhwc", "graph")]["kernel_p90_ms"]) - 0.33) < 1e-12
    # the megakernel beside the graph: ours is the faster, and says which
    mk = table([row(1, "auto", 0.05), row(1, "auto", 0.03, algo="megakernel"), row(1, "cudnn", 0.1)]).strip().split("\n")
    assert "| 1 | fp16 | nhwc | 0.03 | megakernel |" in mk[2] and "| 0.05 | 0.03 | 0.1 |" in mk[2], mk
    slow = table([row(128, "auto", 0.5), row(128, "auto", 0.9, algo="megakernel")]).strip().split("\n")
    assert "| 128 | fp16 | nhwc | 0.5 | graph |" in slow[2] and "| 0.5 | 0.9 | — |" in slow[2], slow
    # Through the CSV loader: the graph's and the megakernel's chain rows of one variant are two
    # rows (a chain row's algo is part of its identity), and an NCHW SKIP does not replace a PASS.
    import tempfile
    from .io import load
    head = "device,layer,N,variant,memory,status,scope,algo,family,precision,layout,kernel_ms\n"
    body = ("H200,chain,1,auto-fp16,device,PASS,chain,chain,auto,fp16,nhwc,0.05\n"
            "H200,chain,1,auto-fp16,device,PASS,chain,megakernel,auto,fp16,nhwc,0.09\n"
            "H200,chain,1,auto-fp16,device,PASS,chain,chain,auto,fp16,nchw,0.1\n"
            "H200,chain,1,auto-fp16,device,SKIP,chain,megakernel,auto,fp16,nchw,\n")
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write(head + body)
    try:
        loaded, _ = load([f.name])
    finally:
        os.unlink(f.name)
    by = chain_rows(loaded)
    assert by[(1, "fp16", "nhwc", "graph")]["kernel_ms"] == 0.05, by
    assert by[(1, "fp16", "nhwc", "megakernel")]["kernel_ms"] == 0.09, by
    assert by[(1, "fp16", "nchw", "graph")]["kernel_ms"] == 0.1, by
    # the caption's process count: one count, or its range where keys differ
    assert processes_text([{"processes": 2}, {"processes": 2}]) == "the median of 2 processes' medians"
    assert processes_text([{}]) == "one process"
    assert processes_text([{"processes": 2}, {"processes": 4}]).endswith("(2 to 4 processes a row)")
    print("chain_totals self-test: ok")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
    else:
        sys.exit("usage: python3 -m convplots.chain_totals --self-test")
