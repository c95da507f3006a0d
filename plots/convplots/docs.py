"""Numbers in prose come from data: the README's and NOTES.md's result tables and headline
figures are generated from the committed CSVs (plots/h200/*.csv) between markers

    <!-- BEGIN generated:NAME -->
    ...
    <!-- END generated:NAME -->

by `plots/plot.sh --update-docs` (or `python3 plots/docs.py --update`); `--check` (a CPU
test in the README's test command, ctest docs_generated) exits 1 naming every block whose
text differs from what the CSVs give. GENERATORS names each block and what it is made of; the
editorial choices (which rows the README's table shows) are written here, the numbers never.
"""

import os
import re
import sys

from . import summary
from .io import Data, _scale_text, date_range, load, ok

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
H200 = "results/h200"
SWEEP = f"{H200}/sweep_all_variants.csv.gz"
# The reference sweep at 6dc9381 (the skeleton's regression fixed), measured in the same calls
# as f83d02e's binary: the "after" of that same-machine comparison and of the rung it added.
SWEEP_6DC = f"{H200}/sweep_all_variants_6dc9381.csv"
DOCS = ["README.md"]  # NOTES.md is frozen until docs/findings.md replaces it
BLOCK = re.compile(r"(<!-- BEGIN generated:(?P<name>[\w.-]+) -->\n)(?P<body>.*?)(<!-- END generated:(?P=name) -->)",
                   re.S)


def g3(v):
    """Three significant figures, as the tables have always been written."""
    if v is None:
        return "-"
    return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"


_cache = {}


def data(path=SWEEP):
    if path not in _cache:
        rows, layers = load([os.path.join(ROOT, path)])
        for r in rows:
            r["_src"] = path
        _cache[path] = Data(rows, layers)
    return _cache[path]


# ---- README: the sweep, the kernel-time table, the summary -----------------------------------

def sweep_sentence():
    d = data()
    rows = d.rows
    one = rows[0]
    st = {s: sum(r["status"] == s for r in rows) for s in ("PASS", "SKIP", "FAIL", "ERROR")}
    reps = sorted({r["repeats"] for r in rows if r.get("repeats")})
    warm = sorted({r["warmup"] for r in rows if r.get("warmup")})
    return (f"Measured on an {d.device} (CUDA {one['cuda_runtime']}) on {date_range(rows)} at revision "
            f"{', '.join(sorted({r['git_rev'] for r in rows}))}: {len({r['_variant'] for r in rows})} variants in "
            f"every layout each declares x {len(d.layers)} layers x N = {', '.join(map(str, d.Ns))}, "
            f"{'/'.join(reps)} repeats after {'/'.join(warm)} warm-ups, L2 flushed before each: {st['PASS']} rows "
            f"PASS against the golden output, {st['SKIP']} SKIP, {st['FAIL']} FAIL, {st['ERROR']} ERROR "
            f"([{SWEEP}]({SWEEP})).\n")


# The README's kernel-time table: (label, variant, layout). The choice of rows is editorial;
# every number is read from the sweep.
README_ROWS = [
    ("baseline (Mcpy)", "baseline", "nchw"),
    ("register-acc (rla2m)", "register-acc", "nchw"),
    ("shared-weights-many-loaders (rswmtla2m)", "shared-weights-many-loaders", "nchw"),
    ("mk-sw-mt-si-c-vec (Mk-sw-mt-si-c-vec)", "mk-sw-mt-si-c-vec", "nchw"),
    ("tiled-input", "tiled-input", "nchw"),
    ("implicit-gemm-idx", "implicit-gemm-idx", "nchw"),
    ("simt-gemm", "simt-gemm", "nchw"),
    ("split-tf32 (3xTF32 on mma.sync: fp32 class)", "split-tf32", "nchw"),
    ("winograd-f2x2 (3x3 layers only)", "winograd-f2x2", "nchw"),
    ("winograd-f3x3-5x5 (conv2 only: FMA pipes)", "winograd-f3x3-5x5", "nchw"),
    ("winograd-3xfp16-wgmma-f3x3-5x5 (conv2 only: 3xFP16 on wgmma)", "winograd-3xfp16-wgmma-f3x3-5x5", "nchw"),
    ("winograd-3xfp16-wgmma-ws-f3x3-5x5 (+ fold warpgroups, staged epilogue)", "winograd-3xfp16-wgmma-ws-f3x3-5x5",
     "nchw"),
    ("hopper-ws-3xtf32 (3xTF32 on wgmma), NHWC", "hopper-ws-3xtf32", "nhwc"),
    ("hopper-ws-3xfp16 (the split on fp16 wgmma), NHWC", "hopper-ws-3xfp16", "nhwc"),
    ("cuDNN fp32 (TF32 off), NCHW", "cudnn-fp32", "nchw"),
    ("cuDNN fp32 (TF32 off), NHWC", "cudnn-fp32", "nhwc"),
    ("wmma-tf32 (warp MMA)", "wmma-tf32", "nchw"),
    ("hopper-ws-tf32, NHWC", "hopper-ws-tf32", "nhwc"),
    ("hopper-pp-tf32, NHWC", "hopper-pp-tf32", "nhwc"),
    ("cuDNN tf32, NHWC", "cudnn-tf32", "nhwc"),
    ("wmma-fp16 (warp MMA)", "wmma-fp16", "nchw"),
    ("hopper-ws-fp16 (wgmma + TMA + warp specialisation), NHWC", "hopper-ws-fp16", "nhwc"),
    ("hopper-pp-fp16 (+ ping-pong consumers), NHWC", "hopper-pp-fp16", "nhwc"),
    ("hopper-ws-fp16, NCHW (its transforms inside)", "hopper-ws-fp16", "nchw"),
    ("cuDNN fp16, NCHW", "cudnn-fp16", "nchw"),
    ("cuDNN fp16, NHWC", "cudnn-fp16", "nhwc"),
    ("hopper-ws-bf16, NHWC", "hopper-ws-bf16", "nhwc"),
    ("cuDNN bf16, NHWC", "cudnn-bf16", "nhwc"),
]
README_N = 128


def find(d, layer, n, variant, layout):
    for r in d.rows:
        if (r["layer"] == layer and r["N"] == n and r["_variant"] == variant and r["layout"] == layout
                and r["memory"] == "pageable"):
            return r
    return None


def kernel_table():
    d, n = data(), README_N
    out = ["| variant | precision | " + " | ".join(d.layers) + f" | all {len(d.layers)} | vs CPU |",
           "| --- | --- | " + " | ".join("---" for _ in d.layers) + " | --- | --- |"]
    cpu = [d.cpu_ms(l, n) for l in d.layers]
    threads = sorted({r["cpu_threads"] for r in d.rows if r.get("cpu_threads")})
    out.append(f"| CPU float32 reference ({'/'.join(threads)} cores) | fp32 | " + " | ".join(g3(c) for c in cpu)
               + f" | {g3(sum(cpu))} | 1x |")
    for label, v, layout in README_ROWS:
        rs = [find(d, l, n, v, layout) for l in d.layers]
        if not any(rs):
            raise SystemExit(f"docs.py: {SWEEP} has no row of {v} ({layout}) at N={n}: update README_ROWS")
        prec = next(r["precision"] for r in rs if r)
        cells = [g3(r["kernel_ms"]) if r and ok(r) else "-" for r in rs]
        tot = sum(r["kernel_ms"] for r in rs) if all(r and ok(r) for r in rs) else None
        x = sum(cpu) / tot if tot else None
        vs = "-" if x is None else f"{x:.0f}x" if x >= 10 else f"{x:.2g}x"
        out.append(f"| {label} | {prec} | " + " | ".join(cells) + f" | {g3(tot)} | {vs} |")
    return "\n".join(out) + "\n"


def summary_table():
    """Per class, ours / cuDNN at README_N per layer and for all layers (summary.py)."""
    d, n = data(), README_N
    out = [f"| N={n}: best of ours / fastest cuDNN (kernel time; s2d: against cuDNN on the space-to-depth "
           "rewrite of the layer, where it has one) | " + " | ".join(d.layers)
           + f" | all {len(d.layers)} (ms) | all {len(d.layers)}, cuDNN's conv1 by space-to-depth (ms) |",
           "| --- | " + " | ".join("---" for _ in d.layers) + " | --- | --- |"]
    for cls in summary.classes_of(d):
        cs = summary.cells(d, cls)
        cells = []
        for l in d.layers:
            c = cs.get((l, n))
            txt = f"{c.ratio:.3g}x" if c and c.ratio else "-"
            if c and c.ratio_s2d:
                txt += f" ({c.ratio_s2d:.3g}x s2d)"
            cells.append(txt)
        s = summary.all_layers(d, cls, n)
        s2 = summary.all_layers_s2d(d, cls, n)
        tot = f"{s[0] / s[1]:.3g}x ({g3(s[0])} vs {g3(s[1])})" if s else "-"
        tot2 = f"{s[0] / s2:.3g}x ({g3(s[0])} vs {g3(s2)})" if s and s2 else "-"
        out.append(f"| {cls} class | " + " | ".join(cells) + f" | {tot} | {tot2} |")
    return "\n".join(out) + "\n"


# ---- NOTES.md: what each committed CSV holds --------------------------------------------------

def csv_inventory(folder_rel=H200):
    out = ["| CSV | rows | variants | layouts | memory modes | N | warm-up / repeats | status | date | rev | "
           "format |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    folder = os.path.join(ROOT, folder_rel)
    for f in sorted(os.listdir(folder)):
        if not f.endswith(".csv"):
            continue
        path = f"{folder_rel}/{f}"
        with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
            header = fh.readline().strip().split(",")
        if "variant" not in header or "status" not in header or "ncu_set" in header:
            continue  # not a convstudy sweep CSV (PyTorch's timings, ncu profiles: listed by their own blocks)
        rows = data(path).rows
        st = ", ".join(f"{sum(r['status'] == s for r in rows)} {s}" for s in ("PASS", "SKIP", "FAIL", "ERROR")
                       if any(r["status"] == s for r in rows))
        wr = sorted({f"{r.get('warmup', '')} / {r.get('repeats', '')}" for r in rows if r.get("repeats")})
        missing = [c for c in ("layout", "algo", "convert_ms", "anchor_class") if c not in header]
        fmt = "current" if not missing else "older: no " + ", ".join(missing) + " (read by header name)"
        out.append(f"| [{f}]({path}) | {len(rows)} | "
                   f"{len({r['_variant'] for r in rows})} | {', '.join(sorted({r['layout'] for r in rows}))} | "
                   f"{', '.join(sorted({r['memory'] for r in rows}))} | {', '.join(map(str, sorted({r['N'] for r in rows})))} | "
                   f"{', '.join(wr) or '-'} | {st} | {date_range(rows)} | "
                   f"{', '.join(sorted({r.get('git_rev', '') for r in rows}))} | {fmt} |")
    return "\n".join(out) + "\n"


# ---- NOTES.md: the Hopper core v2 on the H100 ---------------------------------------------------

H100 = "plots/h100"
HOPPER_LADDER = ["hopper-tma-fp16", "hopper-ws-fp16", "hopper-pp-fp16", "hopper-tmastore-fp16", "hopper-sk-fp16",
                 "hopper-tail-fp16", "hopper-mc-fp16", "hopper-mca-fp16"]


def _csv_rows(path):
    import csv
    with open(os.path.join(ROOT, path), newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _layers(rows):
    """The layers the rows name, conv1 .. convN in number order."""
    return sorted({r["layer"] for r in rows}, key=lambda x: int(x[4:]) if x[4:].isdigit() else x)


def _f(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def hopper_ladder(folder=H100, rungs=None):
    """fp16 NHWC at N=128 in a reference sweep (<folder>/sweep_all_variants.csv): each Hopper
    rung's kernel time, its ratio to the fastest cuDNN fp16 row (either layout) and its share
    of the cuBLAS GEMM of the layer's im2col shape (gemm_ceiling_ms / kernel_ms), best rung per
    layer in bold."""
    d = data(f"{folder}/sweep_all_variants.csv")
    n = 128
    rungs = rungs or HOPPER_LADDER
    head = ["| layer | " + " | ".join(v.replace("-fp16", "") for v in rungs) +
            " | cudnn-fp16 (best layout) | cudnn-fp16-s2d |",
            "| --- | " + " | ".join("---" for _ in rungs) + " | --- | --- |"]
    for l in d.layers:
        cud = [r for r in d.rows if r["layer"] == l and r["N"] == n and r["_variant"] == "cudnn-fp16" and ok(r)]
        best_cud = min((r["kernel_ms"] for r in cud), default=None)
        s2d = [r for r in d.rows if r["layer"] == l and r["N"] == n and r["_variant"] == "cudnn-fp16-s2d" and ok(r)]
        best_s2d = min((r["kernel_ms"] for r in s2d), default=None)
        rs = [find(d, l, n, v, "nhwc") for v in rungs]
        times = [r["kernel_ms"] if r and ok(r) else None for r in rs]
        fastest = min((t for t in times if t), default=None)
        cells = []
        for r, t in zip(rs, times):
            if t is None:
                cells.append("-")
                continue
            ceil = r.get("gemm_ceiling_ms")
            pct = f", {100 * ceil / t:.0f}%" if ceil else ""
            txt = f"{g3(t)} ({t / best_cud:.2f}x{pct})" if best_cud else g3(t)
            cells.append(f"**{txt}**" if t == fastest else txt)
        head.append(f"| {l} | " + " | ".join(cells) + f" | {g3(best_cud)} | {g3(best_s2d)} |")
    return "\n".join(head) + "\n"


def hopper_profile(name="profile_hopper_ladder_n128.csv", folder=H100):
    """The ncu counters of a ladder's rows at N=128, all five layers (one timed repeat per row,
    `sweep --profile`, scripts/device_profile.sh): the Hopper ladder (fp16 NHWC,
    plots/h100/profile_hopper_ladder_n128.csv) or the fp32 class's (NHWC and NCHW,
    profile_fp32_ladder_n128.csv); PASS rows only."""
    rows = [r for r in _csv_rows(f"{folder}/{name}") if r["status"] == "PASS"]
    out = ["| layer | row | kernel ms (unprofiled) | tensor pipe % (wgmma %) | SM throughput % | DRAM read MB "
           "| DRAM written MB | L2 hit % |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        f = lambda k, s=1.0: "-" if _f(r.get(k)) is None else f"{_f(r[k]) * s:.3g}"
        row = r["variant"] if name.startswith("profile_hopper") else f"{r['variant']} ({r['layout']})"
        out.append(f"| {r['layer']} | {row} | {f('kernel_ms')} | {f('ncu_tensor_pct')} ({f('ncu_gmma_pct')}) "
                   f"| {f('ncu_sm_pct')} | {f('ncu_dram_read_bytes', 1e-6)} | {f('ncu_dram_write_bytes', 1e-6)} "
                   f"| {f('ncu_l2_hit_pct')} |")
    return "\n".join(out) + "\n"


def fp32_conv2_kernels():
    """conv2 N=128 kernel by kernel for the fastest fp32-class rows of ours and cudnn-fp32
    (plots/h100/kernels_fp32_ladder_n128.csv: ncu's gpu__time_duration, DRAM bytes, pipes)."""
    rows = _csv_rows(f"{H100}/kernels_fp32_ladder_n128.csv")
    want = ("winograd-3xfp16-wgmma-ws-f3x3-5x5", "hopper-ws-3xfp16", "cudnn-fp32")
    out = ["| row | kernel | us | DRAM MB | tensor pipe % | SM throughput % |", "| --- | --- | --- | --- | --- | --- |"]
    for v in want:
        for r in rows:
            parts = r["row"].split()
            if parts[0] != "conv2" or parts[2] != v:
                continue
            k = r["kernel"].split("(")[0].replace("void ", "")
            k = (k[:60] + "...") if len(k) > 63 else k
            mb = (_f(r["dram__bytes_read.sum"]) or 0) + (_f(r["dram__bytes_write.sum"]) or 0)
            out.append(f"| {v} | `{k}` | {g3(_f(r['gpu__time_duration.sum']) / 1e3)} | {g3(mb / 1e6)} "
                       f"| {g3(_f(r['sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active']))} "
                       f"| {g3(_f(r['sm__throughput.avg.pct_of_peak_sustained_elapsed']))} |")
    return "\n".join(out) + "\n"


def _pass_ms(rows, *cols):
    """kernel_ms of the PASS rows by the tuple of the named columns."""
    return {tuple(r[c] for c in cols): _f(r["kernel_ms"]) for r in rows if r["status"] == "PASS"}


# Every Hopper rung and cuDNN's tensor-core rows on the GPU code after the reference sweep's
# (852eed6: the weights' transform folded into the input gather kernel, beb80c6), two H200 calls
# merged: scripts/device_goals.sh, then the rungs it leaves out (wgmma, tma, the fp32-class splits).
HOPPER_852 = f"{H200}/hopper_852eed6.csv"


def rung_status(path):
    """Per rung of a sweep (the class taken off its name), the rows PASSed, SKIPped and FAILed in
    each class over every layer, batch and layout it ran, with the distinct SKIP reasons."""
    rows = _csv_rows(path)
    classes = ("fp16", "bf16", "tf32", "3xtf32", "3xfp16")
    count, reasons = {}, {}
    for r in rows:
        base, _, cls = r["variant"].rpartition("-")
        if cls == "s2d":
            base, _, cls = base.rpartition("-")
            base += "-*-s2d"
        count.setdefault(base, {}).setdefault(cls, {}).setdefault(r["status"], 0)
        count[base][cls][r["status"]] += 1
        if r["status"] == "SKIP":
            reasons.setdefault(base, set()).add(r["reason"].split("; this layer")[0])
    rev = ", ".join(sorted({r["git_rev"] for r in rows}))
    devices = ", ".join(sorted({r["device"] for r in rows}))
    batches = ", ".join(sorted({r["N"] for r in rows}, key=int))
    layouts = ", ".join(sorted({r["layout"] for r in rows}))
    out = [f"{devices}, {rev}: rows by status per rung and class (conv1-5, N = {batches}, {layouts}); "
           f"{len(rows)} rows, {sum(r['status'] == 'FAIL' for r in rows)} FAIL", "",
           "| rung | " + " | ".join(classes) + " | SKIP reason |", "| --- | " + " | ".join("---" for _ in classes) + " | --- |"]
    for base in sorted(count, key=lambda b: (b.startswith("cudnn"), b)):
        cells = []
        for c in classes:
            st = count[base].get(c)
            cells.append(", ".join(f"{st[k]} {k}" for k in ("PASS", "SKIP", "FAIL") if st.get(k)) if st else "-")
        out.append(f"| {base} | " + " | ".join(cells) + " | " + "; ".join(sorted(reasons.get(base, ()))) + " |")
    return "\n".join(out) + "\n"


def rung_against(name, rung, others):
    """A new rung against hopper-tmastore, other rungs and cuDNN, NHWC, conv2-5, N=1/32/128, one
    H100 call (plots/h100/<name>: sampled check, 20 repeats), three classes."""
    rows = _csv_rows(f"{H100}/{name}")
    t = _pass_ms(rows, "layer", "N", "variant")
    rev = ", ".join(sorted({r["git_rev"] for r in rows}))
    out = [f"kernel ms ({rev}); {rung} / tmastore below 1: {rung} is faster", "",
           f"| class | layer | N | tmastore | {rung} | {rung} / tmastore | " + " | ".join(others) +
           f" | cuDNN | {rung} / cuDNN |", "| --- | --- | --- | --- | --- | --- | " + " | ".join("---" for _ in others) +
           " | --- | --- |"]
    for p in ("fp16", "bf16", "tf32"):
        for l in ("conv2", "conv3", "conv4", "conv5"):
            for n in ("1", "32", "128"):
                ts, ta, c = t.get((l, n, f"hopper-tmastore-{p}")), t.get((l, n, f"hopper-{rung}-{p}")), t.get((l, n, f"cudnn-{p}"))
                if None in (ts, ta, c):
                    continue
                oc = [t.get((l, n, f"hopper-{o}-{p}")) for o in others]
                out.append(f"| {p} | {l} | {n} | {g3(ts)} | {g3(ta)} | {ta / ts:.2f} | " +
                           " | ".join(g3(x) if x else "-" for x in oc) + f" | {g3(c)} | {ta / c:.2f} |")
    return "\n".join(out) + "\n"


def kernels_l2(name, folder=H100, tiles=False):
    """Per kernel under Nsight Compute (<folder>/<name>): time, L2 traffic (lts__t_sectors x
    32 B) and its rate, DRAM writes, tensor pipe; tiles: a column with the persistent kernel's
    tile (its second template argument, an index into kTiles of gpu/variants/hopper/tiles.hpp),
    other kernels' names in parentheses."""
    rows = _csv_rows(f"{folder}/{name}")
    out = ["| row |" + (" tile |" if tiles else "") + " kernel us | L2 MB | L2 TB/s | DRAM written MB | tensor pipe % |",
           "| --- |" + (" --- |" if tiles else "") + " --- | --- | --- | --- | --- |"]
    for r in rows:
        us = _f(r["gpu__time_duration.sum"]) / 1e3
        mb = _f(r["lts__t_sectors.sum"]) * 32 / 1e6
        name_ = " ".join(r["row"].split()[:3])
        tile = ""
        if tiles:
            m = re.search(r"ws_kernel<[^,]+, (\d+),", r["kernel"])
            other = r["kernel"].replace("void ", "").replace("<unnamed>", "anon").split("(")[0]
            other = re.sub(r"<.*>", "", other).split("::")[-1]
            other = other if len(other) <= 40 else other[:37] + "..."
            tile = f" {TILE_NAMES.get(int(m.group(1)), m.group(1)) if m else f'({other})'} |"
        out.append(f"| {name_} |{tile} {g3(us)} | {g3(mb)} | {mb / us:.2f} | {g3(_f(r['dram__bytes_write.sum']) / 1e6)} "
                   f"| {g3(_f(r['sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active']))} |")
    return "\n".join(out) + "\n"


def m256_sched(name="hopper_m256_sched.csv", tile="m256n128k128B-s4"):
    """hopper-tmastore, -sk and -tail at their tuned tiles and at the 256-pixel tile, and cuDNN,
    NHWC, conv2-5, N=32/128, three classes (<H200>/<name>: one call, 20 repeats)."""
    rows = _csv_rows(f"{H200}/{name}")
    t = _pass_ms(rows, "layer", "N", "variant", "axes")
    rungs = ("tmastore", "sk", "tail")
    out = ["| class | layer | N | " + " | ".join(f"{r} tuned / 256" for r in rungs) + " | cuDNN | best / cuDNN |",
           "| --- | --- | --- | " + " | ".join("---" for _ in rungs) + " | --- | --- |"]
    for p in ("fp16", "bf16", "tf32"):
        for l in ("conv2", "conv3", "conv4", "conv5"):
            for n in ("32", "128"):
                c = t.get((l, n, f"cudnn-{p}", ""))
                cells, best = [], None
                for r in rungs:
                    a, b = t.get((l, n, f"hopper-{r}-{p}", "")), t.get((l, n, f"hopper-{r}-{p}", f"tile={tile}"))
                    cells.append(f"{g3(a)} / {g3(b)}")
                    for x in (a, b):
                        if x is not None and (best is None or x < best):
                            best = x
                if c is None or best is None:
                    continue
                out.append(f"| {p} | {l} | {n} | " + " | ".join(cells) + f" | {g3(c)} | {best / c:.2f} |")
    return "\n".join(out) + "\n"


def conv1_tiles(name="hopper_tiles_conv1.csv", rows_name="hopper_conv1_mma.csv"):
    """conv1 (space-to-depth GEMM, transforms included) per tile of hopper-tmastore, fp16, both
    layouts, N=32/128 (<H200>/<name>: tile sweep, 10 repeats), and the cuDNN s2d row of the same
    call (<rows_name>: 20 repeats); kernel ms, the fastest tile in bold."""
    rows = [r for r in _csv_rows(f"{H200}/{name}") if r["status"] == "PASS" and r["precision"] == "fp16"]
    anchor = {(r["layout"], r["N"]): _f(r["kernel_ms"]) for r in _csv_rows(f"{H200}/{rows_name}")
              if r["status"] == "PASS" and r["variant"] == "cudnn-fp16-s2d"}
    cols = [(lay, n) for lay in ("nhwc", "nchw") for n in ("32", "128")]
    t = {(r["axes"].replace("tile=", ""), r["layout"], r["N"]): _f(r["kernel_ms"]) for r in rows}
    tiles = sorted({k[0] for k in t}, key=lambda x: t.get((x, "nhwc", "128")) or 1e9)
    best = {c: min(v for (tt, lay, n), v in t.items() if (lay, n) == c) for c in cols}
    out = ["| tile | " + " | ".join(f"{lay.upper()} N={n}" for lay, n in cols) + " |",
           "| --- | " + " | ".join("---" for _ in cols) + " |"]
    for tile in tiles:
        cells = []
        for c in cols:
            v = t.get((tile,) + c)
            cells.append("-" if v is None else (f"**{g3(v)}**" if v == best[c] else g3(v)))
        out.append(f"| {tile} | " + " | ".join(cells) + " |")
    out.append("| cudnn-fp16-s2d (same call) | " + " | ".join(g3(anchor.get(c)) for c in cols) + " |")
    return "\n".join(out) + "\n"


def conv1_vs_s2d(name="conv1_s2d_vec.csv", rungs=("hopper-tmastore",), classes=("fp16", "bf16", "tf32"), plain=True):
    """conv1: our rungs against cuDNN on the space-to-depth rewrite (the same transform kernel)
    and, with `plain`, plain cuDNN, per class, layout and N (<H200>/<name>: one call, 20
    repeats). One rung: its ratio is "ours / s2d"; several: "<rung's last word> / s2d" each."""
    rows = _csv_rows(f"{H200}/{name}")
    t = _pass_ms(rows, "variant", "layout", "N")
    rev = ", ".join(sorted({r["git_rev"] for r in rows}))
    ratios = ["ours / s2d"] if len(rungs) == 1 else [f"{r.split('-')[-1]} / s2d" for r in rungs]
    head = list(rungs) + ["cudnn-s2d"] + ratios + (["cudnn (plain)"] if plain else [])
    out = [f"kernel ms ({rev}); ours / s2d at most 1.00 is the goal at N=32 and 128", "",
           "| class | layout | N | " + " | ".join(head) + " |", "| --- | --- | --- | " + " | ".join("---" for _ in head) + " |"]
    for p in classes:
        for lay in ("nhwc", "nchw"):
            for n in ("1", "32", "128"):
                ours = [t.get((f"{r}-{p}", lay, n)) for r in rungs]
                a, c = t.get((f"cudnn-{p}-s2d", lay, n)), t.get((f"cudnn-{p}", lay, n))
                if None in ours or a is None:
                    continue
                cells = [g3(o) for o in ours] + [g3(a)] + [f"{o / a:.2f}" for o in ours] + ([g3(c)] if plain else [])
                out.append(f"| {p} | {lay} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def _default_halo_rows(rows):
    """The rows of a halo sweep that the rung's defaults give: its own rows where the sweep ran
    an axis at its default (schedule=auto, launch=pdl); where it ran only cooperative and
    ping-pong, the one auto's rule takes (ping-pong but NCHW past one wave of 256-row tiles:
    N >= 32 for conv1 on 132 SMs); rows without an axis as they are."""
    defaults = ("schedule=auto", "launch=pdl")
    if any(r["axes"] in defaults for r in rows):
        return [r for r in rows if r["axes"] in ("",) + defaults]
    def rule(r):
        return "schedule=cooperative" if r["layout"] == "nchw" and int(r["N"]) >= 32 else "schedule=pingpong"
    return [r for r in rows if r["axes"] == "" or r["axes"] == rule(r)]


def halo_forms():
    """hopper-halo-fp16 on conv1 in each form the halo kernel went through (plots/h200/halo_dev/
    halo_v*.csv: one call each, the form's working tree named in its git_rev) and as committed
    (conv1_halo.csv), against cudnn-fp16-s2d of the same call; from v4 on, the schedule auto
    takes (the sweeps before v5 had no auto value: its rule applied to their rows)."""
    forms = [("halo_dev/halo_v1_cpasync.csv", "cp.async by 2 loader warps; 1 storer warp per consumer warpgroup, "
              "an integer division per 16-byte piece; consumers wait for the drained staging before their MMAs"),
             ("halo_dev/halo_v2_storer_shfl.csv", "v1 with the storers' row offsets computed once per row and "
              "shuffled; 1 loader warp"),
             ("halo_dev/halo_v3_tma.csv", "TMA loads by one thread; consumers compute their rows' offsets and wait "
              "for the staging only after their MMAs; 3 storer warps"),
             ("conv1_halo.csv", "v3 as committed"),
             ("conv1_halo_schedule.csv", "v4: the ping-pong schedule (128-row tiles, the warpgroups on alternate "
              "ones); auto's pick"),
             ("halo_dev/halo_v5_order.csv", "v5: v4 with ping-pong's turns (an order barrier: one warpgroup's MMAs "
              "issued before the other's) and the accumulators' zeros fenced before the first wgmma"),
             ("halo_dev/halo_v6a_storers_nchw.csv", "v6a: v5 with each storer thread loading 4 rows' (NHWC) or 4 "
              "filters' (NCHW) values before storing any"),
             ("halo_dev/halo_v6_storers.csv", "v6: v6a with the NCHW storers' loop as before (v5); as committed"),
             ("halo_dev/halo_v7_nchw_direct.csv", "v7: v6 with NCHW output stored by the consumers straight from "
              "their fragments, the storers idle (branch wip/halo-nchw-direct, not on main)"),
             ("conv1_pdl/halo_launch_f696adb.csv", "v8: v6 launched as the input transform's programmatic dependent "
              "(launch=pdl), the transform's loads by cp.async"),
             ("conv1_pdl/halo_launch_8d32ef6.csv", "v8 with the transform's inner blocks gathered through one flat "
              "offset per channel"),
             ("conv1_pdl/halo_launch_949a823.csv", "v9: v8 with the transform's loads by bulk copies and every storer "
              "lane storing (8 rows of 12 pieces a pass, 6 of 16 before); as committed")]
    out = ["kernel ms of hopper-halo-fp16 (cudnn-fp16-s2d of the same call)", "",
           "| form | git_rev | NHWC N=1 | NHWC N=32 | NHWC N=128 | NCHW N=128 |", "| --- | --- | --- | --- | --- | --- |"]
    for name, what in forms:
        rows = _default_halo_rows(_csv_rows(f"{H200}/{name}"))
        t = _pass_ms(rows, "variant", "layout", "N")
        rev = ", ".join(sorted({r["git_rev"] for r in rows}))
        cells = []
        for lay, n in (("nhwc", "1"), ("nhwc", "32"), ("nhwc", "128"), ("nchw", "128")):
            h, a = t.get(("hopper-halo-fp16", lay, n)), t.get(("cudnn-fp16-s2d", lay, n))
            cells.append("-" if h is None else f"{g3(h)} ({g3(a)})")
        out.append(f"| {what} | {rev} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def halo_nchw_direct():
    """hopper-halo on conv1 with NCHW output: the committed storers (v6, halo_v6_storers.csv)
    against the consumers storing from their fragments (v7, halo_v7_nchw_direct.csv), per class,
    schedule and N; kernel ms, one call each."""
    v6 = _pass_ms(_csv_rows(f"{H200}/halo_dev/halo_v6_storers.csv"), "variant", "layout", "axes", "N")
    v7rows = _csv_rows(f"{H200}/halo_dev/halo_v7_nchw_direct.csv")
    v7 = _pass_ms(v7rows, "variant", "layout", "axes", "N")
    out = ["NCHW output, kernel ms: v6 (storer warps) / v7 (consumers store from their fragments), "
           "v7 / v6 in brackets", "",
           "| row | schedule | N=1 | N=32 | N=128 |", "| --- | --- | --- | --- | --- |"]
    for v in ("hopper-halo-fp16", "hopper-halo-bf16"):
        for sch in ("cooperative", "pingpong"):
            cells = []
            for n in ("1", "32", "128"):
                a, b = v6.get((v, "nchw", "schedule=" + sch, n)), v7.get((v, "nchw", "schedule=" + sch, n))
                cells.append("-" if a is None or b is None else f"{g3(a)} / {g3(b)} ({b / a:.2f})")
            out.append(f"| {v} | {sch} | " + " | ".join(cells) + " |")
    for n in ("1", "32", "128"):
        best6 = min((t for k, t in v6.items() if k[0] == "hopper-halo-fp16" and k[1] == "nchw" and k[3] == n and
                     k[2] != "schedule=auto"), default=None)
        best7 = min((t for k, t in v7.items() if k[0] == "hopper-halo-fp16" and k[1] == "nchw" and k[3] == n and
                     k[2] != "schedule=auto"), default=None)
        if best6 and best7:
            out.append(f"{'' if n != '1' else chr(10)}fp16 N={n}, the faster schedule of each: v6 {g3(best6)}, "
                       f"v7 {g3(best7)} ({best7 / best6:.2f})" + ("" if n == "128" else ";"))
    return "\n".join(out) + "\n"


def cuts_ab(old_rev="7a0c42c", new_rev="898e230", sass=(("7a0c42c", "cuts_ab/sass_7a0c42c.csv"),
                                                          ("898e230 (= fd7de4f's device code)", "sass_sm90.csv")),
            common=False):
    """A change to the cut-tile kernels against the revision before it, one H200 call, new then
    old per layer (scripts/device_cuts.sh, plots/h200/cuts_ab/old_<rev>.csv, new_<rev>.csv):
    kernel ms of the split-tail and stream-K rows, beside the data-parallel tmastore row and
    cuDNN (the controls), NHWC, per class; then the SASS counts of the binaries named.
    common: the SASS sums over the kernels every named CSV holds (one of them partial: a call
    that stopped while writing it), so that both sides count the same kernels."""
    new = _pass_ms(_csv_rows(f"{H200}/cuts_ab/new_{new_rev}.csv"), "layer", "N", "variant")
    old = _pass_ms(_csv_rows(f"{H200}/cuts_ab/old_{old_rev}.csv"), "layer", "N", "variant")
    out = [f"NVIDIA H200, NHWC, kernel ms: {old_rev} -> {new_rev} (new / old)", "",
           "| layer | N | class | hopper-tail | hopper-sk | hopper-tmastore | cuDNN |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for layer in ("conv2", "conv3", "conv4", "conv5"):
        for n in ("32", "128"):
            for c in ("fp16", "bf16", "tf32"):
                cells = []
                for v in (f"hopper-tail-{c}", f"hopper-sk-{c}", f"hopper-tmastore-{c}", f"cudnn-{c}"):
                    a, b = old.get((layer, n, v)), new.get((layer, n, v))
                    cells.append("-" if a is None or b is None else f"{g3(a)} -> {g3(b)} ({b / a:.3f})")
                if any(x != "-" for x in cells):  # a call that stopped at its deadline: the layers it ran
                    out.append(f"| {layer} | {n} | {c} | " + " | ".join(cells) + " |")
    out += ["", "SASS of the persistent kernels both binaries' CSVs hold (scripts/device_sass.sh), summed:" if common
            else "SASS of the persistent kernels (scripts/device_sass.sh), summed over the instances:", "",
            "| binary | kernels | CALL | WARPSYNC |", "| --- | --- | --- | --- |"]
    # the 9th template argument of ws_kernel: kCuts (true) or the cut kind (1-3)
    kinds = {"true": "cut tiles", "1": "split-tail", "2": "stream-K", "3": "fused split-K"}
    tables = [(rev, [r for r in _csv_rows(f"{H200}/{name}") if "ws_kernel<" in r["kernel"]]) for rev, name in sass]
    if common:
        keep = set.intersection(*({r["kernel"] for r in rows} for _, rows in tables))
        tables = [(rev, [r for r in rows if r["kernel"] in keep]) for rev, rows in tables]
    for rev, rows in tables:
        agg = {}
        for r in rows:
            k = r["kernel"]
            args = k.split("; ")
            cuts = kinds.get(args[8], "the others") if len(args) > 8 else "the others"
            a = agg.setdefault(cuts, [0, 0, 0])
            a[0] += 1
            a[1] += int(r["CALL"])
            a[2] += int(r["WARPSYNC"])
        for kind in sorted(agg):
            a = agg[kind]
            out.append(f"| {rev}, {kind} | {a[0]} | {a[1]} | {a[2]} |")
    return "\n".join(out) + "\n"


def _hopper_tiles():
    """kTiles of gpu/variants/hopper/tiles.hpp as (bn, rowb, stages, minb, bm, kb) tuples, read
    from the header (its defaults: bm 128, kb 0)."""
    import re
    text = open(os.path.join(ROOT, "gpu/variants/hopper/tiles.hpp"), encoding="utf-8").read()
    body = text[text.index("kTiles[] = {") + len("kTiles[] = {"):]
    body = body[:body.index("};")]
    tiles = []
    for m in re.finditer(r"\{([^{}]*)\}", body):
        v = [int(x) for x in m.group(1).split(",")]
        tiles.append(tuple(v + [128, 0][len(v) - 4:]))
    return tiles


def _ncu_revs(folder):
    """The revisions the rows' ncu CSVs were made at: the log.txt beside them ("git: <rev>")."""
    try:
        text = open(os.path.join(ROOT, H200, folder, "log.txt"), encoding="utf-8").read()
    except OSError:
        return []
    return sorted(set(re.findall(r"git: (\w+)", text)))


# ncu --page details metrics by the column label the tables give them: (section, metric, scale).
_NCU_METRICS = {
    "us": ("GPU Speed Of Light Throughput", "Duration", 1e-3),
    "SM %": ("GPU Speed Of Light Throughput", "Compute (SM) Throughput", 1),
    "IPC": ("Compute Workload Analysis", "Executed Ipc Active", 1),
    "issue slots %": ("Compute Workload Analysis", "Issue Slots Busy", 1),
    "L1 %": ("GPU Speed Of Light Throughput", "L1/TEX Cache Throughput", 1),
    "L2 %": ("GPU Speed Of Light Throughput", "L2 Cache Throughput", 1),
    "DRAM %": ("GPU Speed Of Light Throughput", "DRAM Throughput", 1),
    "issue-ready %": ("Scheduler Statistics", "One or More Eligible", 1),
    "cycles / issue": ("Warp State Statistics", "Warp Cycles Per Issued Instruction", 1),
    "threads": ("Launch Statistics", "Block Size", 1),
    "registers": ("Launch Statistics", "Registers Per Thread", 1),
}


def _ncu_cols(*labels):
    """[(section, metric, label, scale)] for these column labels (_NCU_METRICS)."""
    return [(_NCU_METRICS[x][0], _NCU_METRICS[x][1], x, _NCU_METRICS[x][2]) for x in labels]


def ncu_cell(folder="ncu_conv2_n128", rows=("cudnn-tf32", "hopper-sk-tf32", "cudnn-fp16", "hopper-mc-fp16"),
             cell="conv2 N=128"):
    """One cell's rows under Nsight Compute with the scheduler and warp-state sections
    (scripts/device_ncu_stalls.sh: <H200>/<folder>/ncu_<row>.csv, ncu --csv --page details):
    per row its conv kernel (cuDNN's workspace-init kernel left out), the kernel's tile as its
    name says (cuDNN) or its template arguments (ours), launch shape and the issue counters."""
    cols = _ncu_cols("us", "SM %", "IPC", "L1 %", "L2 %", "issue-ready %", "cycles / issue")
    out = [f"NVIDIA H200, {cell}, NHWC, one timed repeat under ncu per row "
           f"(`plots/h200/{folder}/`" + "".join(", " + r for r in _ncu_revs(folder)) + ")", "",
           "| row | kernel | grid | cluster | " + " | ".join(c[2] for c in cols) + " |",
           "| --- | --- | --- | --- | " + " | ".join("---" for _ in cols) + " |"]
    tiles = _hopper_tiles()
    for row in rows:
        kernels = [k for k in _ncu_kernels(f"{H200}/{folder}/ncu_{row}.csv") if "init_device_workspace" not in k[0]]
        m = {key: v for _, mk in kernels for key, v in mk.items()}
        name = kernels[0][0]
        t = re.search(r"tilesize(\d+x\d+x\d+)_warpgroupsize(\dx\dx\d)", name)
        if t:
            kern = f"cuDNN: tile {t.group(1)}, warpgroups {t.group(2)}"
        else:  # ws_kernel<T, TILE, kPP, ...>: TILE indexes kTiles (gpu/variants/hopper/tiles.hpp)
            args = name.split("<", 1)[1].split(", ")
            es = 4 if args[0] == "float" else 2
            bn, rowb, stages, _, bm = tiles[int(args[1])][:5]
            kern = f"ours: tile {bm}x{bn}x{rowb // es}, {stages} stages, {'ping-pong' if args[2] == '1' else 'cooperative'}"
            if args[6] == "2":  # kCL, kMcA
                kern += ", pairs of " + ("filter tiles (A multicast)" if args[7] == "1" else "pixel rows (B multicast)")
        vals = [f"{float(m[(sec, met)]) * scale:.3g}" for sec, met, _, scale in cols]
        out.append(f"| {row} | {kern} | {m[('Launch Statistics', 'Grid Size')]} | "
                   f"{m[('Launch Statistics', 'Cluster Size')]} | " + " | ".join(vals) + " |")
    return "\n".join(out) + "\n"


def ncu_source_opcodes(folder, cells, top=8):
    """Where the warps of each row's GEMM kernel wait, by SASS opcode: the warp-stall samples of
    the source page (scripts/device_ncu_stalls.sh SOURCE=1: <H200>/<folder>/<cell>/source_<row>.txt,
    scripts/ncu_source_top.py's "samples by opcode"), as a share of the kernel's samples; the
    opcodes among any row's `top` largest. cells: ((cell folder, cell label, rows), ...)."""
    cols, shares = [], []
    for sub, label, rows in cells:
        for row in rows:
            text = open(os.path.join(ROOT, H200, folder, sub, f"source_{row}.txt"), encoding="utf-8").read()
            body = text.split("samples by opcode:", 1)[1].split("\n\n", 1)[0]
            share = {m.group(1): float(m.group(2)) for m in re.finditer(r"^\s+(\S+)\s+\d+\s+([\d.]+)%", body, re.M)}
            total = re.search(r"([\d]+) warp-stall samples", text).group(1)
            cols.append(f"{label} {row} ({total})")
            shares.append(share)
    ops = []
    for sh in shares:
        for op, _ in sorted(sh.items(), key=lambda kv: -kv[1])[:top]:
            if op not in ops:
                ops.append(op)
    ops.sort(key=lambda op: -max(sh.get(op, 0.0) for sh in shares))
    out = ["share of the kernel's warp-stall samples (%) by the opcode sampled, NVIDIA H200, NHWC, one timed "
           f"repeat's GEMM kernel per row (`plots/h200/{folder}/`); in brackets the samples; -: not among the row's "
           "15 most sampled opcodes (the source page's list)", "",
           "| opcode | " + " | ".join(cols) + " |", "| --- | " + " | ".join("---" for _ in cols) + " |"]
    out += [f"| {op} | " + " | ".join(f"{sh[op]:.1f}" if op in sh else "-" for sh in shares) + " |" for op in ops]
    return "\n".join(out) + "\n"


def _best_by_rung(rows):
    """The fastest PASS row per (layer, N, class, rung: the variant less its class)."""
    b = {}
    for r in rows:
        if r["status"] != "PASS":
            continue
        k = (r["layer"], r["N"], r["precision"], r["variant"].rsplit("-", 1)[0])
        ms = _f(r["kernel_ms"])
        if k not in b or ms < b[k][0]:
            b[k] = (ms, r)
    return b


def _vs_cudnn_today(ref, cell):
    """The best of our rows of a cell in a pp_ref CSV against its cuDNN row, and which rung."""
    c = ref[cell + ("cudnn",)][0]
    o = min((v for k, v in ref.items() if k[:3] == cell and k[3] != "cudnn"), key=lambda v: v[0])
    return f"{o[0] / c:.3f} ({o[1]['variant'].rsplit('-', 1)[0]})"


def _vs_cudnn_axes(tiles, ref, cell, rung, show=("tile", "scheduler")):
    """A rung's best row of a cell in a tile sweep against the call's cuDNN row, with its axes."""
    v = tiles.get(cell + (rung,))
    if v is None:
        return "-"
    axes = dict(x.split("=", 1) for x in v[1]["config"].split(";") if "=" in x)
    return f"{v[0] / ref[cell + ('cudnn',)][0]:.3f} (" + ", ".join(axes.get(a, "?") for a in show) + ")"


def _cells(ref):
    return sorted({k[:3] for k in ref}, key=lambda k: (int(k[0][4:]), int(k[1]), k[2]))


def pp_pairs(folder=f"{H200}/pp_cluster", pixels="00703e8", filters="45cfc36"):
    """Ping-pong in clusters of two against the rows it must beat (scripts/device_pp_cluster.sh;
    each call's ratios to its own cuDNN row, NHWC, sampled check, 10 repeats): per cell the best
    of the ping-pong tile sweep (every tile, data-parallel and split-K) in pairs of pixel rows
    (hopper-mc, cluster=2; call `pixels`), in pairs of filter tiles (hopper-mca, cluster=1x2) and
    alone (hopper-pp; both call `filters`), and the best of the rungs that hold the cell today
    (stream-K, split-tail, the cluster rung at their defaults) in each call."""
    ref_p, pp_p = (_best_by_rung(_csv_rows(f"{folder}/pp_{k}_{pixels}.csv")) for k in ("ref", "tiles"))
    ref_f, pp_f = (_best_by_rung(_csv_rows(f"{folder}/pp_{k}_{filters}.csv")) for k in ("ref", "tiles"))
    out = [f"NVIDIA H200, NHWC, kernel time / the call's fastest cuDNN row of the class (`{folder}/`: calls {pixels} and "
           f"{filters}); ping-pong columns: the best tile and scheduler of the sweep", "",
           f"| layer | N | class | cuDNN ms ({filters}) | ours today ({filters}) | ping-pong alone | ping-pong, pairs of "
           f"filter tiles | ping-pong, pairs of pixel rows ({pixels}) | ours today ({pixels}) |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for cell in _cells(ref_f):
        out.append(f"| {cell[0]} | {cell[1]} | {cell[2]} | {ref_f[cell + ('cudnn',)][0]:.4f} | "
                   f"{_vs_cudnn_today(ref_f, cell)} | {_vs_cudnn_axes(pp_f, ref_f, cell, 'hopper-pp')} | "
                   f"{_vs_cudnn_axes(pp_f, ref_f, cell, 'hopper-mca')} | {_vs_cudnn_axes(pp_p, ref_p, cell, 'hopper-mc')} | "
                   f"{_vs_cudnn_today(ref_p, cell)} |")
    return "\n".join(out) + "\n"


def pp_cuts(folder=f"{H200}/pp_cluster", rev="b5e4c3f"):
    """Ping-pong on the cut-tile walk (one call, scripts/device_pp_cluster.sh with the stream-K and
    split-tail rungs in ping-pong, every tile; NHWC, sampled check, 10 repeats): per cell the best
    ping-pong row of each cut scheduler against the call's cuDNN row, beside our best row of
    the rungs at their defaults (cooperative) in the same call."""
    ref, pp = (_best_by_rung(_csv_rows(f"{folder}/pp_{k}_{rev}.csv")) for k in ("ref", "tiles"))
    out = [f"NVIDIA H200, NHWC, kernel time / the call's fastest cuDNN row of the class (`{folder}/pp_*_{rev}.csv`); "
           "ping-pong columns: the best tile of the sweep", "",
           "| layer | N | class | cuDNN ms | ours today (cooperative) | ping-pong, stream-K | ping-pong, split-tail |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for cell in _cells(ref):
        out.append(f"| {cell[0]} | {cell[1]} | {cell[2]} | {ref[cell + ('cudnn',)][0]:.4f} | {_vs_cudnn_today(ref, cell)} | "
                   f"{_vs_cudnn_axes(pp, ref, cell, 'hopper-sk', ('tile',))} | "
                   f"{_vs_cudnn_axes(pp, ref, cell, 'hopper-tail', ('tile',))} |")
    return "\n".join(out) + "\n"


def cuts_probe():
    """Which part of the cut-tile kernel keeps its WARPSYNCs: the variants scripts/cuts_probe.py
    builds (plots/h200/cuts_ab/probe_variants.csv: one fp16 kernel, tile 1, TMA-store epilogue,
    kCuts true, and its data-parallel twin) and the counts of their SASS on the GPU machine
    (probe/dis.sh's output, plots/h200/cuts_ab/probe_counts.txt)."""
    counts = {}
    for line in open(os.path.join(ROOT, H200, "cuts_ab", "probe_counts.txt"), encoding="utf-8"):
        f = line.split()  # k_v1.cubin cuts WARPSYNC 5 CALL 0 R2UR 30 BSSY 39 insts 1968
        if len(f) == 12:
            counts[(f[0].split(".")[0][2:], f[1])] = dict(zip(f[2::2], f[3::2]))
    out = ["| probe | walk | cut roles | what | WARPSYNC | BSSY | SASS instructions | WARPSYNC of the data-parallel twin |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in _csv_rows(f"{H200}/cuts_ab/probe_variants.csv"):
        c, d = counts.get((r["probe"], "cuts")), counts.get((r["probe"], "dp"))
        if c is None or d is None:
            continue
        out.append(f"| {r['probe']} | {r['walk']} | {r['roles']} | {r['what']} | {c['WARPSYNC']} | {c['BSSY']} | "
                   f"{c['insts']} | {d['WARPSYNC']} |")
    return "\n".join(out) + "\n"


def fp32_conv2_miss(layer="conv2"):
    """The fp32 class on one layer in the H200 reference sweep (SWEEP): our fastest fp32-class row
    (not cuDNN's, not cuBLAS's) against the fastest cuDNN fp32 row, either layout, N=32 and 128."""
    rows = [r for r in _csv_rows(SWEEP) if r["layer"] == layer and r.get("anchor_class") == "fp32" and
            r["status"] == "PASS" and r["N"] in ("32", "128")]
    rev = ", ".join(sorted({r["git_rev"] for r in rows}))
    out = [f"`{SWEEP}` ({rev}), {layer}, kernel ms:", "",
           "| N | ours (fastest fp32-class) | cuDNN (fastest fp32) | ours / cuDNN |", "| --- | --- | --- | --- |"]
    for n in ("32", "128"):
        mine = [r for r in rows if r["N"] == n and not r["variant"].startswith(("cudnn", "cublas"))]
        lib = [r for r in rows if r["N"] == n and r["variant"].startswith("cudnn")]
        if not mine or not lib:
            continue
        o = min(mine, key=lambda r: _f(r["kernel_ms"]))
        a = min(lib, key=lambda r: _f(r["kernel_ms"]))
        out.append(f"| {n} | {o['variant']} ({o['layout']}) {g3(_f(o['kernel_ms']))} | {a['variant']} ({a['layout']}) "
                   f"{g3(_f(a['kernel_ms']))} | {_f(o['kernel_ms']) / _f(a['kernel_ms']):.2f} |")
    return "\n".join(out) + "\n"


def _tile_names():
    """kTiles' names by index, read from gpu/variants/hopper/tiles.hpp (tile_name's m<BM>n<BN>k<ROWB>B-s<S>...)."""
    text = open(os.path.join(ROOT, "gpu/variants/hopper/tiles.hpp"), encoding="utf-8").read()
    body = text[text.index("kTiles[] = {"):]
    body = body[:body.index("};")]
    names = {}
    for i, m in enumerate(re.finditer(r"\{(\d+), (\d+), (\d+), (\d+)(?:, (\d+))?(?:, (\d+))?\}", body)):
        bn, rowb, st, minb, bm, kb = m.group(1), m.group(2), m.group(3), m.group(4), m.group(5) or "128", m.group(6)
        names[i] = f"m{bm}n{bn}k{rowb}B-s{st}" + (f"-x{minb}" if minb != "1" else "") + (f"-mma{kb}" if kb else "")
    return names


TILE_NAMES = _tile_names()


def tile_against(name, folder=H200, rung="tmastore", tile="m256n128k128B-s4", base="m128n128k128B-s6"):
    """One tile of a rung against the rung at its tuned tile, at a base tile, and cuDNN, NHWC,
    conv2-5, per class and N (<folder>/<name>: one call, sampled check, 20 repeats)."""
    rows = _csv_rows(f"{folder}/{name}")
    t = _pass_ms(rows, "layer", "N", "variant", "axes")
    rev = ", ".join(sorted({r["git_rev"] for r in rows}))
    dev = ", ".join(sorted({r["device"] for r in rows}))
    out = [f"{dev}, kernel ms ({rev}); below 1: the {tile} tile is faster", "",
           f"| class | layer | N | tuned tile | {base} | {tile} | {tile} / tuned | cuDNN | {tile} / cuDNN |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for p in ("fp16", "bf16", "tf32"):
        v = f"hopper-{rung}-{p}"
        for l in ("conv2", "conv3", "conv4", "conv5"):
            for n in sorted({r["N"] for r in rows}, key=int):
                d, b, x = t.get((l, n, v, "")), t.get((l, n, v, f"tile={base}")), t.get((l, n, v, f"tile={tile}"))
                c = t.get((l, n, f"cudnn-{p}", ""))
                if None in (d, x, c):
                    continue
                out.append(f"| {p} | {l} | {n} | {g3(d)} | {g3(b) if b else '-'} | {g3(x)} | {x / d:.2f} | {g3(c)} "
                           f"| {x / c:.2f} |")
    return "\n".join(out) + "\n"


def torch_compile():
    """PyTorch at N=128, fp16 (scripts/pytorch_anchors.py through scripts/device_profile.sh):
    eager cuDNN and torch.compile (mode max-autotune-no-cudagraphs) per layer and layout, ms;
    a configuration the compile budget left out shows its note."""
    rows = _csv_rows(f"{H100}/pytorch_compile_n128.csv")
    layers = _layers(rows)
    keys = [(lay, impl) for lay in ("nhwc", "nchw") for impl in ("eager", "compile")]
    dev = ", ".join(sorted({r["device"] for r in rows}))
    torch_v = ", ".join(sorted({r["torch"] for r in rows}))
    out = [f"{dev}, torch {torch_v}, fp16, N=128, ms:", "",
           "| layer | " + " | ".join(f"{impl} {lay.upper()}" for lay, impl in keys) + " | compile / eager (NHWC) |",
           "| --- | " + " | ".join("---" for _ in keys) + " | --- |"]
    for l in layers:
        cells, v = [], {}
        for lay, impl in keys:
            r = [x for x in rows if x["layer"] == l and x["layout"] == lay and (x.get("impl") or "eager") == impl]
            t = _f(r[0]["ms"]) if r else None
            v[(lay, impl)] = t
            cells.append(g3(t) if t is not None else ("not compiled" if r else "-"))
        e, c = v[("nhwc", "eager")], v[("nhwc", "compile")]
        ratio = f"{c / e:.2f}x" if e and c else "-"
        out.append(f"| {l} | " + " | ".join(cells) + f" | {ratio} |")
    return "\n".join(out) + "\n"


def hopper_ab():
    """The persistent rungs built from this tree and from the revision before the skeleton, one
    H100 machine, A/B/A/B (median of the two rounds' medians)."""
    new, old = _csv_rows(f"{H100}/hopper_ab_new.csv"), _csv_rows(f"{H100}/hopper_ab_old.csv")

    def med(rows, layer, v):
        ts = sorted(_f(r["kernel_ms"]) for r in rows if r["layer"] == layer and r["variant"] == v and _f(r["kernel_ms"]))
        return sum(ts) / len(ts) if ts else None
    layers = _layers(new)
    vs = ["hopper-tma-fp16", "hopper-ws-fp16", "hopper-pp-fp16", "hopper-tmastore-fp16", "hopper-sk-fp16", "cudnn-fp16"]
    revs = f"new {', '.join(sorted({r['git_rev'] for r in new}))}, old {', '.join(sorted({r['git_rev'] for r in old}))}"
    out = [f"| layer ({revs}) | " + " | ".join(v.replace("-fp16", "") for v in vs) + " |",
           "| --- | " + " | ".join("---" for _ in vs) + " |"]
    for l in layers:
        cells = []
        for v in vs:
            a, b = med(new, l, v), med(old, l, v)
            if a is None:
                cells.append("-")
            elif b is None:
                cells.append(f"{g3(a)} (new)")
            else:
                cells.append(f"{g3(a)} / {g3(b)} ({100 * (a / b - 1):+.0f}%)")
        out.append(f"| {l} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def hopper_mc():
    """The cluster rung against hopper-tmastore and cuDNN, fp16 NHWC N=128, one H100 call each:
    the first version (remote release .release.cluster) and the current one."""
    cur, first = _csv_rows(f"{H100}/hopper_mc.csv"), _csv_rows(f"{H100}/hopper_mc_first.csv")

    def ms(rows, layer, v):
        ts = [_f(r["kernel_ms"]) for r in rows if r["layer"] == layer and r["variant"] == v and r["status"] == "PASS"]
        return ts[0] if ts else None
    rev = lambda rows: ", ".join(sorted({r["git_rev"] for r in rows}))
    out = [f"| layer | hopper-tmastore | hopper-mc, first ({rev(first)}) | hopper-mc ({rev(cur)}) | cudnn-fp16 | mc / tmastore "
           "| mc / cuDNN |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for l in ["conv2", "conv3", "conv4", "conv5"]:
        t, f1, m, c = (ms(cur, l, "hopper-tmastore-fp16"), ms(first, l, "hopper-mc-fp16"), ms(cur, l, "hopper-mc-fp16"),
                       ms(cur, l, "cudnn-fp16"))
        if None in (t, f1, m, c):
            continue
        out.append(f"| {l} | {g3(t)} | {g3(f1)} | {g3(m)} | {g3(c)} | {m / t:.2f}x | {m / c:.2f}x |")
    return "\n".join(out) + "\n"


def range_safety(folder=H100):
    """Every fp32-class variant on golden data at other scales (<folder>/range_safety.csv):
    per variant, its rows by status, the largest share of the per-element allowance used at
    any scale pair (max_bound_ratio x the row's tau over the current tau is not needed: the
    CSV's own tau is shown) and its conv2 N=32 kernel time at scales (1, 1) and (2^20, 2^20)."""
    rows = _csv_rows(f"{folder}/range_safety.csv")
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    pairs = sorted({(r["input_scale"], r["weight_scale"]) for r in rows}, key=lambda p: (float(p[0]), float(p[1])))
    rev = ", ".join(sorted({r["git_rev"] for r in rows}))
    out = [f"{len(pairs)} (input, weight) scale pairs, N=1 and 32, both layouts where a variant has them ({rev}, "
           f"tau {', '.join(sorted({r['bound_tau'] for r in rows if r['bound_tau'] and _f(r['bound_tau'])}))}):", "",
           "| variant | PASS | SKIP (shape) | FAIL | ERROR | largest max_bound_ratio | conv2 N=32 ms at (1, 1) | at (2^20, 2^20) |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for v in variants:
        rs = [r for r in rows if r["variant"] == v]
        n = {k: sum(r["status"] == k for r in rs) for k in ("PASS", "SKIP", "FAIL", "ERROR")}
        worst = max((_f(r["max_bound_ratio"]) or 0 for r in rs if r["status"] == "PASS"), default=0)

        def t(si, sw):
            ts = [_f(r["kernel_ms"]) for r in rs if r["layer"] == "conv2" and r["N"] == "32" and r["status"] == "PASS"
                  and float(r["input_scale"]) == si and float(r["weight_scale"]) == sw]
            return g3(min(ts)) if ts else "-"
        out.append(f"| {v} | {n['PASS']} | {n['SKIP']} | {n['FAIL']} | {n['ERROR']} | {worst:.3g} | {t(1, 1)} | "
                   f"{t(2.0 ** 20, 2.0 ** 20)} |")
    return "\n".join(out) + "\n"


def hopper_sass():
    """SASS evidence per Hopper rung (plots/h100/sass_sm90.csv, scripts/device_sass.sh): the
    instructions each idea needs, as min-max over the rung's kernel instantiations (tiles,
    operand types)."""
    import re
    rows = _csv_rows(f"{H100}/sass_sm90.csv")
    groups = [
        ("hopper-wgmma (cp.async)", lambda k: "wgmma_cpasync_kernel<" in k),
        ("hopper-tma", lambda k: "wgmma_tma_kernel<" in k),
    ]
    ws = re.compile(r"ws_kernel<[^;]+; \d+; (true|false); [^;]*?(EpiDirect|EpiTmaStore); [^;]+; \d+(?:; (\d))?"
                    r"(?:; (true|false))?>")

    def ws_is(pp, epi, cl, mca="false"):
        def f(k):
            m = ws.search(k)
            return (bool(m) and m.group(1) == pp and m.group(2) == epi and (m.group(3) or "1") == cl
                    and (m.group(4) or "false") == mca)
        return f
    groups += [("hopper-ws (cooperative, direct store)", ws_is("false", "EpiDirect", "1")),
               ("hopper-pp (ping-pong)", ws_is("true", "EpiDirect", "1")),
               ("hopper-tmastore / hopper-sk / hopper-tail (TMA store)", ws_is("false", "EpiTmaStore", "1")),
               ("hopper-mc (clusters of 2 along the pixels, B multicast)", ws_is("false", "EpiTmaStore", "2")),
               ("hopper-mca (clusters of 2 along the filters, A multicast)", ws_is("false", "EpiTmaStore", "2", "true"))]
    cols = ["HGMMA", "UTMALDG", "UTMASTG", "MULTICAST", "UCGABAR", "USETMAXREG", "SYNCS", "LDGSTS"]
    out = ["| rung (kernels) | " + " | ".join(cols) + " |", "| --- | " + " | ".join("---" for _ in cols) + " |"]
    for name, pred in groups:
        ks = [r for r in rows if pred(r["kernel"])]
        if not ks:
            continue
        cells = []
        for c in cols:
            v = sorted(int(r[c]) for r in ks)
            cells.append(str(v[0]) if v[0] == v[-1] else f"{v[0]}-{v[-1]}")
        out.append(f"| {name} ({len(ks)}) | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def m256k64():
    """hopper-m256k64 (the m256n128k64B-s8 tile as its own rung) against hopper-tmastore at its
    measured tile and the fastest cuDNN row of the class, NHWC, conv2-5, in the H200
    reference sweep at 6dc9381 (the sweep that measured it first)."""
    d = data(SWEEP_6DC)
    t = {(r["layer"], r["N"], r["_variant"]): r["kernel_ms"] for r in d.rows if ok(r) and r["layout"] == "nhwc"}
    cud = {(l, n, cls): c.cudnn["kernel_ms"] for cls in ("fp16", "bf16", "tf32")
           for (l, n), c in summary.cells(d, cls).items() if c.cudnn}
    out = ["kernel ms; below 1: hopper-m256k64 is faster", "",
           "| class | layer | N | hopper-tmastore (measured tile) | hopper-m256k64 | m256k64 / tmastore | cuDNN "
           "(fastest) | m256k64 / cuDNN |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for p in ("fp16", "bf16", "tf32"):
        for l in ("conv2", "conv3", "conv4", "conv5"):
            for n in (1, 32, 128):
                a, b, c = t.get((l, n, f"hopper-tmastore-{p}")), t.get((l, n, f"hopper-m256k64-{p}")), cud.get((l, n, p))
                if None in (a, b, c):
                    continue
                out.append(f"| {p} | {l} | {n} | {g3(a)} | {g3(b)} | {b / a:.2f} | {g3(c)} | {b / c:.2f} |")
    return "\n".join(out) + "\n"


STUDY_FAMILIES = ("baseline", "single-kernel", "multi-kernel")


def findings_study():
    """The README's first findings from the reference sweep: the study's variants against the
    CPU reference (the sum of the five layers' kernel times at N=128 against the CPU's), and
    three of its ideas as kernel-time ratios per layer at N=32 and 128 (N=1 apart where the
    idea behaves otherwise)."""
    d = data()
    n = README_N

    def k(l, n, v):
        r = find(d, l, n, v, "nchw")
        return r["kernel_ms"] if r and ok(r) else None

    cpu = sum(r["cpu_ms"] for l in d.layers for r in [find(d, l, n, "baseline", "nchw")])
    sums = {}
    for v in sorted({r["_variant"] for r in d.rows if r["family"] in STUDY_FAMILIES}):
        ts = [k(l, n, v) for l in d.layers]
        if all(ts):
            sums[v] = sum(ts)
    best = min(sums, key=sums.get)

    def span(xs):
        return f"{min(xs):.2f}-{max(xs):.2f}x"

    regacc = [k(l, m, "baseline") / k(l, m, "register-acc") for m in (32, 128) for l in d.layers]
    pairs = sorted({r["_variant"][:-len("-uncoalesced")] for r in d.rows if r["_variant"].endswith("-uncoalesced")})
    coal = [k("conv1", m, v + "-uncoalesced") / k("conv1", m, v) for m in (32, 128) for v in pairs
            if k("conv1", m, v) and k("conv1", m, v + "-uncoalesced")]
    one = [k(l, m, "shared-weights-one-loader") / k(l, m, "shared-weights-many-loaders") for m in (32, 128)
           for l in d.layers]
    one1 = [k(l, 1, "shared-weights-one-loader") / k(l, 1, "shared-weights-many-loaders") for l in d.layers]
    return (f"- The study's ~1,000x speedups came from a single-threaded CPU; against a 16-core AVX-512 reference "
            f"(all five layers at N={n}) its baseline runs at {cpu / sums['baseline']:.2f}x the CPU's speed and its "
            f"best variant, {best}, at {cpu / sums[best]:.2f}x.\n"
            f"- Register accumulation ({span(regacc)} over the baseline per layer at N=32 and 128) and coalesced "
            f"conv1 mappings ({span(coal)}, each uncoalesced variant against its pair) matter as the study found; a "
            f"single thread loading the shared filter costs nothing at N>=32 on the H200 (one loader against many: "
            f"{span(one)}; other resident blocks hide it) but up to {100 * (max(one1) - 1):.0f}% at N=1.\n")


def findings_layout():
    """Layout and conversion findings at N=128 from the reference sweep: cuDNN's five layers in
    NHWC against NCHW per class, and conv2's float<->half conversion (convert_ms of the
    cudnn-fp16 NHWC row) against that row's kernel."""
    d = data()
    n = README_N

    def total(v, lay):
        ts = [find(d, l, n, v, lay) for l in d.layers]
        return sum(r["kernel_ms"] for r in ts) if all(r and ok(r) for r in ts) else None

    f16 = total("cudnn-fp16", "nchw") / total("cudnn-fp16", "nhwc")
    f32 = total("cudnn-fp32", "nhwc") / total("cudnn-fp32", "nchw")
    r = find(d, "conv2", n, "cudnn-fp16", "nhwc")
    return (f"- Layout matters as much as the kernel: over the five layers at N={n} cuDNN fp16 is {f16:.2f}x faster "
            f"in NHWC than in NCHW, while fp32 is {f32:.2f}x faster in NCHW (its FFT engines want planes).\n"
            f"- Half precision is not free end to end: converting float to half and back costs "
            f"{g3(r['convert_ms'])} ms on conv2 at N={n}, {100 * r['convert_ms'] / r['kernel_ms']:.0f}% of cuDNN "
            f"fp16's kernel.\n")


def goals_512(name="n512_tensor_core.csv"):
    """Issue 24's N=512 check (<H200>/<name>: the tensor-core rungs and cuDNN, NHWC, sampled
    check): per class, the best of ours / the fastest cuDNN row on conv2-5 (goal <= 0.95) and
    conv1 / the s2d row, with the rung that gave ours."""
    d = data(f"{H200}/{name}")
    out = [f"{d.device}, N=512 ({', '.join(sorted({str(r['git_rev']) for r in d.rows}))}, `plots/h200/{name}`); "
           "best of ours / fastest cuDNN, (over): above 0.95", "",
           "| class | conv1 / s2d | conv2 | conv3 | conv4 | conv5 |", "| --- | --- | --- | --- | --- | --- |"]
    for cls in ("fp16", "bf16", "tf32"):
        cs = summary.cells(d, cls)
        cells = []
        c1 = cs.get(("conv1", 512))
        cells.append(f"{c1.ratio_s2d:.3f}" if c1 and c1.ratio_s2d else "-")
        for l in ("conv2", "conv3", "conv4", "conv5"):
            c = cs.get((l, 512))
            r = c.ratio if c else None
            cells.append("-" if r is None else f"{r:.3f}{' (over)' if r > 0.95 else ''} ({c.ours['_variant']})")
        out.append(f"| {cls} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def split_scale_cost(before=f"{H200}/sweep_all_variants_f83d02e.csv", after=SWEEP_6DC,
                     kernels=f"{H200}/kernels_ladders_n128.csv"):
    """The split variants' slowdown between the two same-machine sweeps at N=128 (NHWC) beside
    the range scale pass's own kernel time under Nsight Compute (issue 25's range_scale_kernel,
    <kernels>)."""
    a = {(r["layer"], r["_variant"]): r for r in data(before).rows if ok(r) and r["N"] == 128 and r["layout"] == "nhwc"}
    b = {(r["layer"], r["_variant"]): r for r in data(after).rows if ok(r) and r["N"] == 128 and r["layout"] == "nhwc"}
    scale = {}
    for r in _csv_rows(kernels):
        parts = r["row"].split()
        if "range_scale_kernel" in r["kernel"] and parts[1] == "N=128":
            scale[(parts[0], parts[2])] = _f(r["gpu__time_duration.sum"]) / 1e3
    out = ["| layer | variant | before ms | after ms | after - before (us) | range_scale_kernel (us, ncu) |",
           "| --- | --- | --- | --- | --- | --- |"]
    for (l, v) in sorted(set(a) & set(b)):
        if not ("3xtf32" in v or "3xfp16" in v) or (l, v) not in scale:
            continue
        ka, kb = a[(l, v)]["kernel_ms"], b[(l, v)]["kernel_ms"]
        out.append(f"| {l} | {v} | {g3(ka)} | {g3(kb)} | {1e3 * (kb - ka):.1f} | {scale[(l, v)]:.1f} |")
    return "\n".join(out) + "\n"


_SEARCH_BAND = 1.05


def _cudnn_searched_ms(d, layer, n, cls):
    """The fastest time cuDNN's engine search measured for its chosen configuration (the CSV's
    `search_ms`: L2 flushed, on scratch tensors of the same shape) over the plain cuDNN rows of
    (layer, N, class), either layout; None without one. The goals table judges a cell against
    it where the timed row ran more than _SEARCH_BAND over it, so that a cuDNN row slower than
    its own search cannot flatter ours."""
    ms = [r["search_ms"] for r in d.rows
          if r["layer"] == layer and r["N"] == n and summary.ok(r) and r["anchor_class"] == cls
          and r["family"] == summary.ANCHOR_FAMILY and not summary.S2D.match(r["_variant"]) and r.get("search_ms")]
    return min(ms) if ms else None


_GOAL_LAYERS = ("conv2", "conv3", "conv4", "conv5")


def _goal_cells(d):
    """Every cell of issue 24's goals table on the sweep view d, in the table's order:
    (class, layer, N, text, judged ratio, goal); text and judged are None without a ratio.
    conv2-5: the best of ours / the fastest cuDNN row of the class, either layout (goal 1.0 at
    N=1, 0.95 at 32 and 128); where cuDNN's timed row ran more than _SEARCH_BAND over its own
    engine search's time, the cell is judged against the search's time. conv1 at N=32 and 128:
    ours / the cudnn-<class>-s2d row (goal 1.0)."""
    for cls in ("fp16", "bf16", "tf32"):
        cs = summary.cells(d, cls)
        for l in _GOAL_LAYERS:
            for n in (1, 32, 128):
                c = cs.get((l, n))
                r = c.ratio if c else None
                goal = 1.0 if n == 1 else 0.95
                searched = _cudnn_searched_ms(d, l, n, cls)
                if r is not None and searched and searched < c.cudnn["kernel_ms"] / _SEARCH_BAND:
                    # cuDNN's timed row ran past its own engine search's time: judge against the search
                    rs = c.ours["kernel_ms"] / searched
                    yield cls, l, n, f"{r:.3f}, {rs:.3f} against cuDNN's search", rs, goal
                else:
                    yield cls, l, n, None if r is None else f"{r:.3f}", r, goal
        for n in (32, 128):
            c = cs.get(("conv1", n))
            r = c.ratio_s2d if c else None
            yield cls, "conv1", n, None if r is None else f"{r:.3f}", r, 1.0


def goals_24(path=SWEEP):
    """Issue 24's goals on the H200 reference sweep (or another sweep of the same rows, e.g.
    the H100 confirmation, scripts/device_goals.sh): per tensor-core class, the cells of
    _goal_cells; then, fp16 at N=128, the best row's share of the cuBLAS GEMM ceiling of the
    layer (>= 85%) and the five-layer sum (<= 0.40 ms). A cell over its goal is marked (over)."""
    d = data(path)
    out = [f"{d.device}, {', '.join(sorted({str(r['git_rev']) for r in d.rows}))}; best of ours / fastest cuDNN "
           "(kernel time), (over): above the goal", "",
           "| class | " + " | ".join(f"{l} N={n}" for l in _GOAL_LAYERS for n in (1, 32, 128))
           + " | conv1 / s2d N=32 | conv1 / s2d N=128 |",
           "| --- | " + " | ".join("---" for _ in range(12)) + " | --- | --- |"]
    row = {}
    for cls, _l, _n, text, judged, goal in _goal_cells(d):
        row.setdefault(cls, []).append("-" if text is None else text + (" (over)" if judged > goal else ""))
    out += [f"| {cls} | " + " | ".join(cells) + " |" for cls, cells in row.items()]
    cs = summary.cells(d, "fp16")
    pct = []
    for l in _GOAL_LAYERS:
        c = cs.get((l, 128))
        ceil = c.ours.get("gemm_ceiling_ms") if c and c.ours else None
        pct.append(f"{l} {100 * ceil / c.ours['kernel_ms']:.0f}% ({c.ours['_variant']})" if ceil else f"{l} -")
    s = summary.all_layers(d, "fp16", 128)
    s2 = summary.all_layers_s2d(d, "fp16", 128)
    out += ["", "fp16, N=128: the best row's share of the cuBLAS GEMM of the layer's shape (goal >= 85%): " +
            ", ".join(pct) + "; all five layers " +
            (f"{g3(s[0])} ms against cuDNN's {g3(s[1])}, {g3(s2)} with conv1 by space-to-depth (goal <= 0.40)"
             if s and s2 else "-") + "."]
    return "\n".join(out) + "\n"


# Where each kind of miss of issue 24 is explained (a NOTES.md section with its profile) and
# what would come next, by (layer, batches, classes); the first entry that matches a cell wins.
_MISS_WHY = [
    ("conv1", (32, 128), ("tf32",),
     '"The H100-only misses under Nsight Compute": the transform pass in our GPU time, the same wgmma count '
     "as the s2d cuDNN kernel at a lower pipe share",
     "the halo rung (the s2d read in the loader, no transform pass) in tf32"),
    ("conv2", (1,), ("fp16",),
     "the reference sweep's rows themselves: ours and cuDNN's overlap in their p10-p90 spreads, and cuDNN's row "
     "ran under its own engine search's time for the configuration it runs (its search_ms); the goal is 1.0x at N=1 "
     '("conv2 at N=1\'s shift": between calls our split-K rows move by more than this)',
     "the N=1 split-K's cluster reduction under Nsight Compute (its share of the row's few microseconds)"),
    ("conv2", (32,), ("fp16", "bf16"),
     '"The H100-only misses under Nsight Compute": stream-K\'s fp16 row issues twice cuDNN\'s wgmma count '
     "and more than twice its L2 traffic at a pipe share well under cuDNN's; the pair rung (bf16's best) moves "
     "far fewer bytes at cuDNN's pipe share and would need a tenth more",
     "the pair rung under a cut-tile scheduler (split-tail or stream-K in clusters of two, which the kernel "
     "does not compose yet): the pair's L2 bytes with a full last wave"),
    ("conv2", (128,), ("bf16",),
     '"The misses under Nsight Compute": at the goal\'s edge, the pair rung\'s GPU time under 0.95x of '
     "cuDNN's in the profile's call, over in the sweeps by the spread between processes",
     "the tf32 conv2 step below (the mainloop's last percents) applies to it too"),
    ("conv2", (32, 128), ("tf32",),
     '"The misses under Nsight Compute", "cuDNN\'s tf32 kernel on conv2 at N=128 against ours" and "tf32 conv2 '
     'under the source view": level with cuDNN\'s kernel in instructions and pipe share; 0.95x needs a pipe share above '
     "any kernel of ours; our ping-pong consumers build each slice's descriptors in vector registers (R2UR before the "
     "HGMMAs) where cuDNN's advance them in uniform ones",
     "the ping-pong consumers' descriptors in uniform registers (the warpgroup index through a shuffle; predicted "
     "a percent or two), then the pair along the filters (cuDNN's cluster of two) under stream-K"),
    ("conv5", (128,), ("fp16", "bf16", "tf32"),
     '"The misses under Nsight Compute" and "Split-tail": level with cuDNN in GPU time; 338 tiles of '
     "128 x 128 at the L2-to-SM bandwidth, 2.56 waves",
     "the 128 x 256 tile under split-tail with the TMA-store epilogue drained under the fix-up; both "
     "operands multicast in larger clusters (cuDNN's kernel runs clusters of 8)"),
]


def _miss_why(layer, n, cls):
    for l, ns, classes, why, nxt in _MISS_WHY:
        if l == layer and n in ns and cls in classes:
            return why, nxt
    return "-", "-"


def misses_24(sweeps=((SWEEP, "H200"), (f"{H100}/goals_24.csv", "H100")), n512="n512_tensor_core.csv"):
    """Issue 24's misses in one list: every cell over its goal in the H200 reference sweep and
    the H100 confirmation (_goal_cells), the N=512 check's cells over 0.95, the five-layer sum;
    each with its size, where its profile is and the next step (_MISS_WHY)."""
    out = ["| card | class | cell | ours / cuDNN (goal) | profile (NOTES.md) | next step |",
           "| --- | --- | --- | --- | --- | --- |"]
    for path, card in sweeps:
        d = data(path)
        for cls, l, n, text, judged, goal in _goal_cells(d):
            if text is not None and judged > goal:
                why, nxt = _miss_why(l, n, cls)
                cell = f"{l} / s2d N={n}" if l == "conv1" else f"{l} N={n}"
                out.append(f"| {card} {', '.join(sorted({str(r['git_rev']) for r in d.rows}))} | {cls} | {cell} "
                           f"| {text} ({goal:.2f}) | {why} | {nxt} |")
    d = data(f"{H200}/{n512}")
    for cls in ("fp16", "bf16", "tf32"):
        cs = summary.cells(d, cls)
        over = [f"{l} {cs[(l, 512)].ratio:.3f}" for l in _GOAL_LAYERS
                if cs.get((l, 512)) and cs[(l, 512)].ratio and cs[(l, 512)].ratio > 0.95]
        if over:
            out.append(f"| H200 {', '.join(sorted({str(r['git_rev']) for r in d.rows}))} | {cls} | N=512 | "
                       f"{', '.join(over)} (0.95) | \"The misses under Nsight Compute\" (its N=512 rows) and \"The N=512 "
                       "tile sweep\": cuDNN's kernels at the pipe's highest shares, ours level with them | the "
                       "mainloop's last percents (barrier rounds, the epilogue's overlap) |")
    d = data(sweeps[0][0])
    s = summary.all_layers(d, "fp16", 128)
    if s and s[0] > 0.40:
        out.append(f"| H200 | fp16 | all five layers N=128 | {g3(s[0])} ms (0.40 ms) | \"The misses under Nsight "
                   "Compute\": the sum of the layers above, each level with or under cuDNN; Winograd F(2x2, 3x3) "
                   "counted on this card: unfused past the direct kernel's time, fused held to ~40% of the pipe | "
                   "none by the policies here: conv1's copy (a funnel-shift gather, worth at most its time less "
                   "its DRAM time) is the one part left that is not at the pipe's practical peak |")
    return "\n".join(out) + "\n"


def nchw_cost(path=SWEEP, n=128):
    """What NCHW costs the Hopper rows on conv2-5 (the reference sweep, N=128): per class and
    layer, our fastest row in each layout (NCHW: the input and weight transform kernels and the
    NCHW epilogue inside kernel_ms), their ratio, and cuDNN's plain rows in each layout."""
    d = data(path)
    best = {}
    for r in d.rows:
        if not ok(r) or r["N"] != n or r["layer"] not in _GOAL_LAYERS:
            continue
        fam = "ours" if r["family"] == "hopper" else "cudnn" if r["_variant"] == f"cudnn-{r['precision']}" else None
        if fam:
            k = (r["precision"], r["layer"], r["layout"], fam)
            if k not in best or r["kernel_ms"] < best[k]["kernel_ms"]:
                best[k] = r
    out = [f"{d.device}, N={n} ({', '.join(sorted({str(r['git_rev']) for r in d.rows}))}), kernel ms; ours: the "
           "fastest Hopper row of the layout", "",
           "| class | layer | ours NHWC | ours NCHW | NCHW / NHWC | cuDNN NHWC | cuDNN NCHW | ours / cuDNN, NCHW |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for cls in ("fp16", "bf16", "tf32"):
        for l in _GOAL_LAYERS:
            g = [best.get((cls, l, lay, f)) for lay, f in (("nhwc", "ours"), ("nchw", "ours"), ("nhwc", "cudnn"),
                                                         ("nchw", "cudnn"))]
            if not all(g):
                continue
            ms = [r["kernel_ms"] for r in g]
            out.append(f"| {cls} | {l} | {g3(ms[0])} ({g[0]['_variant']}) | {g3(ms[1])} ({g[1]['_variant']}) | "
                       f"{ms[1] / ms[0]:.2f} | {g3(ms[2])} | {g3(ms[3])} | {ms[1] / ms[3]:.2f} |")
    return "\n".join(out) + "\n"


def _nchw_part(kernel, seen_n2h):
    """Which part of an NCHW row a kernel is: input / weights transform, GEMM, output
    transform, other (cuDNN's two nchwToNhwc kernels: the input's first, then the weights')."""
    # prep_transpose_kernel's and prep_gather_kernel's last template argument: kIn (Nsight
    # Compute writes a bool as 0 / 1); prep_weights_kernel: the gather's weights before beb80c6
    kin = ("prep_transpose" in kernel or "prep_gather" in kernel)
    if "prep_weights" in kernel or (kin and kernel.split(">(")[0].endswith(("false", " 0"))):
        return "weights"
    if "prep_input" in kernel or kin:
        return "input"
    if "nchwToNhwc" in kernel:
        return "weights" if seen_n2h else "input"
    if "nhwcToNchw" in kernel:
        return "output"
    if "init_device" in kernel:
        return "other"
    if "ws_kernel" in kernel or "xmma" in kernel or "gemm" in kernel.lower() or "wgmma" in kernel:
        return "GEMM"
    return "other"


def nchw_split(folder=f"{H200}/nchw_profile_2d48e1c"):
    """How an NCHW row's time splits between its kernels (scripts/device_nchw_profile.sh: one
    profiled launch per row, N=128, Nsight Compute's GPU time per kernel), beside the row's
    kernel_ms (the sweep's median, the same call) and the same row in NHWC."""
    parts = {}  # row -> part -> us, in the kernels CSV's row order
    for r in _csv_rows(f"{folder}/kernels_nchw.csv"):
        d = parts.setdefault(r["row"], {})
        part = _nchw_part(r["kernel"], "input" in d and "nchwToNhwc" in r["kernel"])
        d[part] = d.get(part, 0.0) + _f(r["gpu__time_duration.sum"]) / 1000.0
    sweep = {(r["layer"], r["N"], r["variant"], r["layout"]): r for r in _csv_rows(f"{folder}/nchw.csv")}
    revs = ", ".join(sorted({r["git_rev"] for r in sweep.values()}))
    out = [f"NVIDIA H200, N=128 ({revs}), us: each kernel's GPU time under Nsight Compute; row: the sweep's "
           "median kernel time of the whole row", "",
           "| layer | row | row NHWC | row NCHW | input transform | weight transform | GEMM | output transform | "
           "other | NCHW GEMM / NHWC GEMM |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for key in parts:
        layer, n, variant, layout, *rest = key.split()
        if layout != "nchw":
            continue
        twin = " ".join([layer, n, variant, "nhwc", *rest])
        n = n.split("=")[1]
        a, b = sweep.get((layer, n, variant, "nchw")), sweep.get((layer, n, variant, "nhwc"))
        d, e = parts[key], parts.get(twin, {})
        cell = lambda k: g3(d[k]) if k in d else "-"
        ratio = f"{d['GEMM'] / e['GEMM']:.2f}" if "GEMM" in d and "GEMM" in e else "-"
        out.append(f"| {layer} | {variant} | {g3(1000 * _f(b['kernel_ms'])) if b else '-'} | "
                   f"{g3(1000 * _f(a['kernel_ms'])) if a else '-'} | {cell('input')} | {cell('weights')} | "
                   f"{cell('GEMM')} | {cell('output')} | {cell('other')} | {ratio} |")
    return "\n".join(out) + "\n"


def nchw_ab(folder=f"{H200}/nchw_ab_639bf40"):
    """NCHW rows before and after the transforms' change (scripts/device_nchw_ab.sh: both
    binaries built on one H200, new then old per layer, full golden check; old.csv, new.csv):
    new / old kernel time per row, and the fastest fp16 Hopper row against cuDNN's fp16 NCHW
    row on each side."""
    csv = {x: _csv_rows(f"{folder}/{x}.csv") for x in ("old", "new")}
    new, old = (_pass_ms(csv[x], "layer", "N", "variant") for x in ("new", "old"))
    revs = [sorted({r["git_rev"] for r in csv[x]})[0] for x in ("old", "new")]
    variants = sorted({k[2] for k in new}, key=lambda v: (v.startswith("cudnn"), v.startswith("hopper-tma-"), v))
    short = lambda v: v.replace("hopper-", "")
    out = [f"NVIDIA H200, NCHW, new / old kernel time ({revs[0]} -> {revs[1]}); tma-fp16: the transforms alone "
           "(a plain launch); cudnn-fp16: the control", "",
           "| layer | N | " + " | ".join(short(v) for v in variants) +
           " | best fp16 / cuDNN, old | best fp16 / cuDNN, new |",
           "| --- | --- | " + " | ".join("---" for _ in variants) + " | --- | --- |"]
    for layer in ("conv2", "conv3", "conv4", "conv5"):
        for n in ("1", "32", "128"):
            cells = [f"{new[(layer, n, v)] / old[(layer, n, v)]:.3f}" if (layer, n, v) in new and (layer, n, v) in old
                     else "-" for v in variants]
            best = []
            for side in (old, new):
                ours = [side[(layer, n, v)] for v in variants
                        if v.endswith("-fp16") and v.startswith("hopper-") and (layer, n, v) in side]
                c = side.get((layer, n, "cudnn-fp16"))
                best.append(f"{min(ours) / c:.2f}" if ours and c else "-")
            if any(x != "-" for x in cells):
                out.append(f"| {layer} | {n} | " + " | ".join(cells) + f" | {best[0]} | {best[1]} |")
    return "\n".join(out) + "\n"


def launch_axis(path=f"{H200}/launch_axis_4334f52.csv"):
    """The persistent rungs' launch axis on the NCHW rows (scripts/device_launch_axis.sh: both
    values side by side in one process, sampled check): pdl / plain kernel time per row."""
    rows = _csv_rows(path)
    t = _pass_ms(rows, "layer", "N", "variant", "axes")
    variants = sorted({k[2] for k in t}, key=lambda v: ("3x" in v, "tf32" in v, "bf16" in v, v))
    revs = ", ".join(sorted({r["git_rev"] for r in rows}))
    out = [f"NVIDIA H200, NCHW ({revs}), kernel time with launch=pdl / with launch=plain (below 1: the "
           "programmatic launch is faster)", "",
           "| layer | N | " + " | ".join(v.replace("hopper-", "") for v in variants) + " |",
           "| --- | --- | " + " | ".join("---" for _ in variants) + " |"]
    for layer in ("conv2", "conv3", "conv4", "conv5"):
        for n in ("1", "32", "128"):
            cells = []
            for v in variants:
                a, b = t.get((layer, n, v, "launch=pdl")), t.get((layer, n, v, "launch=plain"))
                cells.append(f"{a / b:.3f}" if a and b else "-")
            if any(c != "-" for c in cells):
                out.append(f"| {layer} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def anchor_ab(folder=f"{H200}/cudnn_graph_check/anchor_ab_04c4951"):
    """cuDNN's bf16 and fp16 rows of conv5 at N=128 NHWC beside our bf16 row, in six processes on
    other data (scripts/device_anchor_ab.sh: anchor_<k>.csv, k = 1..6): each cuDNN row's kernel
    time against its engine search's time for the configuration it runs (`search_ms`)."""
    out = ["| process | seed | input scale | weight scale | row | configuration | kernel ms | search ms | row / search |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    k = 1
    while os.path.exists(os.path.join(ROOT, folder, f"anchor_{k}.csv")):
        for r in _csv_rows(f"{folder}/anchor_{k}.csv"):
            km, sm = _f(r["kernel_ms"]), _f(r["search_ms"])
            cfg = r["detail"].split(" [")[0] if sm else r["config"].split(";")[0]
            out.append(f"| {k} | {r['seed']} | {_scale_text(r['input_scale'])} | {_scale_text(r['weight_scale'])} "
                       f"| {r['variant']} | {cfg} | {g3(km)} | {g3(sm) if sm else '-'} "
                       f"| {f'{km / sm:.3f}' if km and sm else '-'} |")
        k += 1
    return "\n".join(out) + "\n"


def n1_shift(folder=f"{H200}/n1_shift_04c4951", sweeps=(f"{H200}/sweep_all_variants_04c4951.csv",
                                                        f"{H200}/sweep_all_variants_7009817.csv")):
    """conv2 at N=1, NHWC: our rows on their own tile scheduler (split-K over clusters of 8, the
    table's choice) and on split-K with its reduction kernel, and cuDNN's, in three processes of
    one call (scripts/device_n1_shift.sh: n1_<k>.csv) beside the same rows of the reference
    sweeps (the default scheduler only), kernel ms."""
    procs = []
    k = 1
    while os.path.exists(os.path.join(ROOT, folder, f"n1_{k}.csv")):
        procs.append(_csv_rows(f"{folder}/n1_{k}.csv"))
        k += 1

    def key(r):
        sch = dict(kv.split("=", 1) for kv in r["config"].split(";") if "=" in kv).get("scheduler", "")
        return r["variant"], sch if r["axes"] or not sch else f"{sch} (default)"

    names = []
    for rows in procs:
        for r in rows:
            if key(r) not in names:
                names.append(key(r))
    refs = []
    for path in sweeps:
        d = {(r["variant"], r["config"]): r for r in _csv_rows(path)
             if r["layer"] == "conv2" and r["N"] == "1" and r["layout"] == "nhwc" and r["status"] == "PASS"}
        refs.append((str(next(iter(d.values()))["git_rev"]) if d else "-", d))
    out = ["| row | scheduler | " + " | ".join(f"process {i + 1}" for i in range(len(procs))) + " | "
           + " | ".join(f"reference sweep {rev}" for rev, _ in refs) + " |",
           "| --- | --- | " + " | ".join("---" for _ in range(len(procs) + len(refs))) + " |"]
    for v, sch in names:
        cells = []
        for rows in procs:
            m = [r for r in rows if key(r) == (v, sch) and r["status"] == "PASS"]
            cells.append(g3(_f(m[0]["kernel_ms"])) if m else "-")
        for _, d in refs:
            m = [r for (rv, _c), r in d.items() if rv == v] if (not sch or sch.endswith("(default)")) else []
            cells.append(g3(_f(m[0]["kernel_ms"])) if m else "-")
        out.append(f"| {v} | {sch or '-'} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def ab_probe(folder=f"{H200}/ab_probe"):
    """Nsight Compute on one launch of hopper-ws-fp16 conv2 N=32 NHWC from three binaries on
    the H200 (scripts/device_ab_probe.sh; the text reports ncu_<rev>_ws_conv2_n32.txt): before
    the skeleton (f83d02e), the skeleton (4eca246), the fix (6dc9381)."""
    def metric(text, pattern):
        m = re.search(pattern + r"\s+\S+\s+([\d.,]+)\s*$", text, re.M)
        return m.group(1).replace(",", "") if m else "-"

    out = ["| revision | kernel us | branch-resolving stall samples | uniform-pipe instructions % | tensor pipe % |",
           "| --- | --- | --- | --- | --- |"]
    for rev, what in (("f83d02e", "before the skeleton"), ("4eca246", "the skeleton"), ("6dc9381", "the fix")):
        path = os.path.join(ROOT, folder, f"ncu_{rev}_ws_conv2_n32.txt")
        text = open(path, encoding="utf-8").read()
        out.append(f"| {rev} ({what}) | {metric(text, r'^ +Duration')} "
                   f"| {metric(text, r'Warp Stall Sampling [(]All Samples[)] [(]smsp__pcsamp_warps_issue_stalled_branch_resolving[)]')} "
                   f"| {metric(text, r'SM: Inst Executed Pipe Uniform')} | {metric(text, r'SM: Pipe Tensor Cycles Active')} |")
    return "\n".join(out) + "\n"


def before_after(before=f"{H200}/sweep_all_variants_f83d02e.csv", after=SWEEP_6DC):
    """The reference sweep against the revision before issue 26's refactor, both measured in the
    same calls on one machine (scripts/device_compare.sh): per group, the rows timed on both
    sides and noise.judge's verdicts (convstudy compare's rule), with the largest slower
    ratio. The anchors (cuDNN, cuBLAS: library code neither revision changed) give the
    machine's own drift between two processes; the split variants carry issue 25's range
    scale pass."""
    from .noise import judge, timing

    def rows(path):
        return {(r["layer"], r["N"], r["variant"], r.get("precision", ""), r.get("layout") or "nchw", r["memory"]): r
                for r in data(path).rows}

    a, b = rows(before), rows(after)
    groups = {}
    for k in sorted(set(a) & set(b)):
        ta, tb = timing(a[k], "kernel", ok), timing(b[k], "kernel", ok)
        v = judge(ta, tb)
        if v is None:
            continue
        fam = b[k]["family"]
        g = ("anchors: cuDNN graph API, cuBLAS" if fam in ("cudnn", "cublas") else
             "anchors: cuDNN legacy (its algorithm found per process)" if fam == "cudnn-legacy" else
             "split variants (3xTF32, 3xFP16)" if ("3xtf32" in k[2] or "3xfp16" in k[2]) else "ours, the rest")
        e = groups.setdefault(g, {"same": 0, "slower": 0, "faster": 0, "worst": 1.0})
        e[v] += 1
        if v == "slower":
            e["worst"] = max(e["worst"], tb[0] / ta[0])
    revs = lambda path: ", ".join(sorted({str(r["git_rev"])[:7] for r in data(path).rows}))
    only_b = len(set(b) - set(a))
    out = [f"{data(after).device}, kernel ms: {revs(before)} (before) against {revs(after)} (after), one machine, "
           f"every row of both sweeps; {only_b} rows only after (new variants and layouts)", "",
           "| rows | timed on both | same | slower | faster | largest slower (after / before) |",
           "| --- | --- | --- | --- | --- | --- |"]
    for g in ("ours, the rest", "split variants (3xTF32, 3xFP16)", "anchors: cuDNN graph API, cuBLAS",
              "anchors: cuDNN legacy (its algorithm found per process)"):
        e = groups.get(g)
        if not e:
            continue
        n = e["same"] + e["slower"] + e["faster"]
        out.append(f"| {g} | {n} | {e['same']} | {e['slower']} | {e['faster']} | "
                   f"{e['worst']:.3f} |" if e["slower"] else
                   f"| {g} | {n} | {e['same']} | 0 | {e['faster']} | - |")
    st = lambda path: sum(r["status"] in ("FAIL", "ERROR") for r in data(path).rows)
    out.append("")
    out.append(f"FAIL or ERROR rows: {st(before)} before, {st(after)} after.")
    return "\n".join(out) + "\n"



def splitk_forms(name="splitk_n1.csv", kernels="kernels_splitk_n1.csv", other="split-k-fused"):
    """Two split-K forms at N=1 in one H200 sweep of one binary (--axis
    scheduler=split-k,<other>: the reduction kernel against the fused fix-up or the cluster sum,
    same tile), NHWC, conv2-5, beside the fastest cuDNN row of the class in the reference sweep;
    then, where `kernels` names a file, Nsight Compute's kernel times of both forms (one launch
    each, caches flushed)."""
    rows = _csv_rows(f"{H200}/{name}")
    t = _pass_ms(rows, "layer", "variant", "axes")
    rev = ", ".join(sorted({r["git_rev"] for r in rows}))
    d = data()
    cud = {}
    for cls in ("fp16", "bf16", "tf32"):
        for (layer, n), c in summary.cells(d, cls).items():
            if str(n) == "1" and c.cudnn:
                cud[(layer, cls)] = c.cudnn["kernel_ms"]
    out = [f"kernel ms, N=1, NHWC ({rev}); {other} / split-k above 1: {other} is slower", "",
           f"| class | layer | rung | split-k | {other} | {other} / split-k | cuDNN (fastest, reference sweep) |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for cls in ("fp16", "bf16", "tf32"):
        for layer in _layers(rows):
            for rung in ("ws", "tmastore", "m256k64"):
                v = f"hopper-{rung}-{cls}"
                a, b = t.get((layer, v, "scheduler=split-k")), t.get((layer, v, f"scheduler={other}"))
                if a is None or b is None:
                    continue
                c = cud.get((layer, cls))
                out.append(f"| {cls} | {layer} | {rung} | {a:.4f} | {b:.4f} | {b / a:.2f} | "
                           f"{'-' if c is None else f'{c:.4f}'} |")
    if not kernels:
        return "\n".join(out) + "\n"
    krows = _csv_rows(f"{H200}/{kernels}")
    out += ["", "Nsight Compute, hopper-ws-fp16 N=1 (us; `plots/h200/" + kernels + "`):", "",
            "| layer | form | kernel | us | L2 sectors |", "| --- | --- | --- | --- | --- |"]
    for r in krows:
        layer = r["row"].split()[0]
        kname = r["kernel"].split("(")[0].replace("void ", "")
        # the fused form runs the kernel with the cut tiles' roles (its last template argument 1)
        form = "split-k-fused" if "ws_kernel" in kname and kname.endswith("1>") else "split-k"
        out.append(f"| {layer} | {form} | `{kname}` | {_f(r['gpu__time_duration.sum']) / 1000:.2f} | "
                   f"{r['lts__t_sectors.sum']} |")
    return "\n".join(out) + "\n"


def splitk_three(name="splitk_forms_n1.csv"):
    """The three split-K forms at N=1 in one H200 sweep of one binary (--axis
    scheduler=split-k,split-k-fused,split-k-cluster, each rung's tile), conv2-5, both layouts,
    beside cuDNN's fastest engine of the class in the same call. "slices a part": the
    reduction kernel's parts (split-K d, k-slices / d) against the cluster's (min(8, k-slices)
    parts, rounded up), read from the rows' detail; auto takes the cluster form on 128-pixel
    tiles at most 6 slices more a part, or NCHW output (TileSched::prefer_cluster_split)."""
    import re
    rows = _csv_rows(f"{H200}/{name}")
    t = _pass_ms(rows, "layer", "variant", "layout", "axes")
    det = {(r["layer"], r["variant"], r["layout"], r["axes"]): r["detail"] for r in rows}
    rev = ", ".join(sorted({r["git_rev"] for r in rows}))
    out = [f"kernel ms, N=1 ({rev}); cluster / split-k above 1: the cluster sum is slower", "",
           "| class | layer | layout | rung | k-slices | slices a part: split-k / cluster | split-k | fused | cluster "
           "| cluster / split-k | auto takes | cuDNN | auto / cuDNN |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    rungs = [(c, r) for c in ("fp16", "bf16", "tf32") for r in ("ws", "m256k64")] + [("3xtf32", "ws"), ("3xfp16", "ws")]
    for cls, rung in rungs:
        v = f"hopper-{rung}-{cls}" if not cls.startswith("3x") else f"hopper-ws-{cls}"
        cud_cls = cls if not cls.startswith("3x") else "fp32"
        for layer in _layers(rows):
            for lay in ("nhwc", "nchw"):
                ms = [t.get((layer, v, lay, f"scheduler={s}")) for s in ("split-k", "split-k-fused", "split-k-cluster")]
                if ms[0] is None or ms[2] is None:
                    continue
                d = det[(layer, v, lay, "scheduler=split-k")]
                taps = re.search(r"(\d+) taps x (\d+) slice", d)
                parts = re.search(r"split-K (\d+)", d)
                ks = int(taps.group(1)) * int(taps.group(2))
                q = int(parts.group(1))
                cp = min(8, ks)
                auto_cluster = rung != "m256k64" and (lay == "nchw" or (ks + cp - 1) // cp - ks / q <= 6)
                a = ms[2] if auto_cluster else ms[0]
                c = t.get((layer, f"cudnn-{cud_cls}", lay, ""))
                out.append(f"| {cls} | {layer} | {lay} | {rung} | {ks} | {ks / q:.1f} / {(ks + cp - 1) // cp} | "
                           f"{ms[0]:.4f} | {'-' if ms[1] is None else f'{ms[1]:.4f}'} | {ms[2]:.4f} | "
                           f"{ms[2] / ms[0]:.2f} | {'cluster' if auto_cluster else 'split-k'} | "
                           f"{'-' if c is None else f'{c:.4f}'} | {'-' if c is None else f'{a / c:.2f}'} |")
    return "\n".join(out) + "\n"


def cluster16(name="splitk_cluster16_n1.csv", repeat="splitk_cluster16_n1_repeat.csv"):
    """Cluster split-K in 8 parts against 16 (a non-portable cluster), and auto, at N=1 on the
    H200, NHWC: two sweeps of the same binary in one call (<name> with cuDNN between them,
    <repeat> after), golden check, 20 repeats; "a / b": the first sweep's ms / the second's."""
    rows, rep = _csv_rows(f"{H200}/{name}"), _csv_rows(f"{H200}/{repeat}")
    t, t2 = _pass_ms(rows, "layer", "variant", "layout", "axes"), _pass_ms(rep, "layer", "variant", "layout", "axes")
    rev = ", ".join(sorted({r["git_rev"] for r in rows + rep}))
    out = [f"kernel us, N=1, NHWC ({rev}); first sweep / repeat sweep", "",
           "| layer | rung | auto | cluster of 8 | cluster of 16 | cuDNN (same class) | auto / cuDNN (first sweep) |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for layer in _layers(rows):
        for v in ("hopper-ws-fp16", "hopper-tmastore-fp16", "hopper-ws-bf16", "hopper-ws-tf32"):
            cells = []
            for s_ in ("auto", "split-k-cluster", "split-k-cluster16"):
                a, b = t.get((layer, v, "nhwc", f"scheduler={s_}")), t2.get((layer, v, "nhwc", f"scheduler={s_}"))
                cells.append("-" if a is None or b is None else f"{a * 1e3:.1f} / {b * 1e3:.1f}")
            c = t.get((layer, "cudnn-" + v.split("-")[-1], "nhwc", ""))
            a = t.get((layer, v, "nhwc", "scheduler=auto"))
            out.append(f"| {layer} | {v} | " + " | ".join(cells) + f" | {'-' if c is None else f'{c * 1e3:.1f}'} | "
                       f"{'-' if c is None or a is None else f'{a / c:.2f}'} |")
    return "\n".join(out) + "\n"


def _kernels_by_row(path):
    """The rows of a --kernels-csv by the sweep row they profiled ("conv3 N=1 <variant> nhwc"),
    in file order."""
    ks = {}
    for k in _csv_rows(path):
        ks.setdefault(_kernel_row_key(k), []).append(k)
    return ks


def _kernel_row_key(k):
    return k["row"].split(" pageable")[0]


def _kernel_sums(kk):
    """A row's kernels (rows of a --kernels-csv) summed: GPU time in us, wgmma instructions,
    DRAM MB read, L2 sectors in thousands."""
    def tot(col):
        return sum(_f(k[col]) or 0 for k in kk)
    return (tot("gpu__time_duration.sum") / 1e3, tot("sm__inst_executed_pipe_tensor_op_gmma.sum"),
            tot("dram__bytes_read.sum") / 1e6, tot("lts__t_sectors.sum") / 1e3)


def n1_cluster_kernels(name="profile_n1_cluster.csv", kernels="kernels_n1_cluster.csv"):
    """conv3-4 at N=1 under Nsight Compute (H200, `sweep --profile --kernels-csv`, one call):
    each row's event-timed kernel ms (20 repeats, unprofiled), its kernel's GPU time, wgmma
    instructions, DRAM bytes read and tensor-pipe share (one profiled launch, caches flushed)."""
    rows = [r for r in _csv_rows(f"{H200}/{name}") if r["status"] == "PASS"]
    ks = _kernels_by_row(f"{H200}/{kernels}")
    rev = ", ".join(sorted({r["git_rev"] for r in rows}))
    out = [f"conv3-4, N=1, NHWC ({rev})", "",
           "| layer | row | event ms | kernel us (ncu) | wgmma instructions | DRAM read MB | tensor pipe % |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        key = f"{r['layer']} N={r['N']} {r['variant']} {r['layout']}"
        us, gm, dr, _ = _kernel_sums(ks.get(key, []))
        out.append(f"| {r['layer']} | {r['variant']} | {_f(r['kernel_ms']):.4f} | {us:.2f} | {gm:.0f} | {dr:.2f} | "
                   f"{_f(r['ncu_tensor_pct']):.1f} |")
    return "\n".join(out) + "\n"


def n1_m64_kernels(name="profile_n1_m64.csv", kernels="kernels_n1_m64.csv"):
    """conv3-5 at N=1 under Nsight Compute with three tiles (H200, `sweep --profile --kernels-csv
    --axis tile=...`, one call): each row's event-timed kernel ms (20 repeats, unprofiled) and
    its kernels' GPU time, wgmma instructions, L2 sectors and tensor-pipe share (one profiled
    launch). A row's kernels are its ws_kernel and, for split-K with the reduction kernel, the
    reduction after it (the kernels CSV names the row without its axes: the rows of one name
    run in the sweep's order)."""
    rows = [r for r in _csv_rows(f"{H200}/{name}") if r["status"] == "PASS"]
    groups = {}
    for k in _csv_rows(f"{H200}/{kernels}"):
        key = _kernel_row_key(k)
        g = groups.setdefault(key, [])
        if not g or k["kernel"].startswith("void ws_kernel") and not key.split()[2].startswith("cudnn"):
            g.append([])
        g[-1].append(k)
    seen = {}
    rev = ", ".join(sorted({r["git_rev"] for r in rows}))
    out = [f"conv3-5, N=1, NHWC ({rev})", "",
           "| layer | row | tile | event ms | kernel us (ncu) | wgmma instructions | L2 sectors (k) | tensor pipe % |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        key = f"{r['layer']} N={r['N']} {r['variant']} {r['layout']}"
        i = seen.get(key, 0)
        seen[key] = i + 1
        kk = groups.get(key, [[]])[i] if i < len(groups.get(key, [])) else []
        us, gm, _, l2 = _kernel_sums(kk)
        tp = _f(kk[0]["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"]) if kk else None
        tile = r["axes"][5:] if r["axes"].startswith("tile=") else "-"
        extra = " + reduction" if len(kk) > 1 else ""
        out.append(f"| {r['layer']} | {r['variant']} | {tile}{extra} | {_f(r['kernel_ms']):.4f} | {us:.2f} | {gm:.0f} | "
                   f"{l2:.0f} | {tp:.1f} |")
    return "\n".join(out) + "\n"


def goal_misses(name="profile_goal_misses.csv", kernels="kernels_goal_misses.csv", folder=H200):
    """The cells of issue 24's goals that a sweep reads over, under Nsight Compute in one call
    of the card whose folder it is (`sweep --profile`, NHWC, sampled check; H200: the reference
    sweep's misses; H100: the cells only the H100 confirmation reads over): for each, our row(s) of the
    sweep's best and cuDNN's rows of the class. GPU time of the row's kernels, wgmma
    instructions and tensor-pipe share of its main kernel (the one with the most), L2 traffic;
    for ours, the tensor-pipe share that 0.95x cuDNN's GPU time would take with the same
    instructions (our pipe-busy time / (0.95 cuDNN's time): past 100% no schedule of this
    instruction stream reaches the goal)."""
    rows = [r for r in _csv_rows(f"{folder}/{name}") if r["status"] == "PASS"]
    ks = _kernels_by_row(f"{folder}/{kernels}")
    rev = ", ".join(sorted({r["git_rev"] for r in rows}))

    def prof(r):
        kk = ks.get(f"{r['layer']} N={r['N']} {r['variant']} {r['layout']}", [])
        if not kk:
            return None
        us, _, _, l2 = _kernel_sums(kk)
        main = max(kk, key=lambda k: _f(k["sm__inst_executed_pipe_tensor_op_gmma.sum"]) or 0)
        return (us, _f(main["sm__inst_executed_pipe_tensor_op_gmma.sum"]),
                _f(main["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"]), l2 * 32 / 1e3)

    card = os.path.basename(folder).upper()
    out = [f"{card}, NHWC ({rev}); GPU time and counters of one profiled launch each, event ms unprofiled", "",
           "| layer | N | row | event ms | kernel us (ncu) | wgmma instructions | tensor pipe % | L2 MB | "
           "pipe % for 0.95x cuDNN |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        pr = prof(r)
        if pr is None:
            continue
        us, gm, pipe, l2 = pr
        need = "-"
        if not r["variant"].startswith("cudnn"):
            cls = r["variant"].rsplit("-", 1)[1]
            want = f"cudnn-{cls}-s2d" if r["layer"] == "conv1" else f"cudnn-{cls}"  # conv1's goal is against s2d
            lib = [x for x in rows if x["layer"] == r["layer"] and x["N"] == r["N"] and x["variant"] == want]
            lp = prof(lib[0]) if lib else None
            if lp:
                need = f"{us * pipe / (0.95 * lp[0]):.0f}"
        out.append(f"| {r['layer']} | {r['N']} | {r['variant']} | {_f(r['kernel_ms']):.4f} | {us:.1f} | {gm:.0f} | "
                   f"{pipe:.1f} | {l2:.2f} | {need} |")
    return "\n".join(out) + "\n"


def m64_sass(name="sass_sm90.csv"):
    """SASS of the persistent kernel's fp16 instances (plots/h200/sass_sm90.csv,
    scripts/device_sass.sh) on the 64-pixel tiles beside the 128-pixel m128n128k128B-s6: the
    warpgroup-MMA shape (a warpgroup's n is half the tile's on 64 pixels), TMA loads and
    stores, cluster barriers, per instance (epilogue; tile scheduler kind)."""
    import re
    rows = _csv_rows(f"{H200}/{name}")
    out = ["fp16 operands and output, cooperative schedule, no cluster of two; static instruction counts", "",
           "| tile | epilogue | scheduler kind | HGMMA shapes (count) | UTMALDG | UTMASTG | UCGABAR |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    pat = re.compile(r"ws_kernel<__half; (\d+); false; [\w:]+::(Epi\w+); __half; 0; 1; false; (\w+); (\w+)>")
    want = [i for i, n in TILE_NAMES.items() if n.startswith("m64")] + \
        [i for i, n in TILE_NAMES.items() if n == "m128n128k128B-s6"]
    for i in want:
        for r in rows:
            m = pat.search(r["kernel"])
            if not m or int(m.group(1)) != i:
                continue
            kind = "cluster split-K" if m.group(4) == "true" else ("cut tiles" if m.group(3) == "true" else
                                                                   "data-parallel / split-K")
            out.append(f"| {TILE_NAMES[i]} | {m.group(2)} | {kind} | {r.get('hgmma_shapes', '')} | {r['UTMALDG']} | "
                       f"{r['UTMASTG']} | {r['UCGABAR']} |")
    return "\n".join(out) + "\n"


def halo_schedules(name="conv1_halo_schedule.csv"):
    """hopper-halo's two schedules on conv1 in one H200 call (--axis schedule=all), beside
    cuDNN on the space-to-depth rewrite of the same call; auto: ping-pong but for NCHW output
    past one wave of 256-row tiles (halo_conv.cu)."""
    rows = _csv_rows(f"{H200}/{name}")
    t = _pass_ms(rows, "variant", "layout", "N", "axes")
    rev = ", ".join(sorted({r["git_rev"] for r in rows}))
    out = [f"kernel ms ({rev}); conv1 with its space-to-depth transform", "",
           "| class | layout | N | cooperative | ping-pong | auto takes | cudnn-s2d | auto / s2d |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    sms = int(rows[0]["sms"])
    for p, lay, n, co, pp, s2d in _halo_cells(t, "schedule=cooperative", "schedule=pingpong"):
        tiles = (int(n) * 57 * 57 + 255) // 256
        use_pp = not (lay == "nchw" and tiles > sms)
        a = pp if use_pp else co
        out.append(f"| {p} | {lay} | {n} | {co:.4f} | {pp:.4f} | {'ping-pong' if use_pp else 'cooperative'} | "
                   f"{s2d:.4f} | {a / s2d:.2f} |")
    return "\n".join(out) + "\n"


def _halo_cells(t, axes_a, axes_b):
    """(class, layout, N, ms a, ms b, ms s2d) of each conv1 cell where hopper-halo-<class> ran
    with both axis values and cudnn-<class>-s2d ran too (t: _pass_ms by variant, layout, N, axes)."""
    for p in ("fp16", "bf16"):
        for lay in ("nhwc", "nchw"):
            for n in ("1", "32", "128"):
                a = t.get((f"hopper-halo-{p}", lay, n, axes_a))
                b = t.get((f"hopper-halo-{p}", lay, n, axes_b))
                c = t.get((f"cudnn-{p}-s2d", lay, n, ""))
                if None not in (a, b, c):
                    yield p, lay, n, a, b, c


def _halo_axis_table(path, rev, a, b):
    """hopper-halo with two values a, b of one axis against cuDNN on the space-to-depth rewrite,
    one sweep of one H200 call (20 repeats, every row checked against the golden files)."""
    t = _pass_ms(_csv_rows(path), "variant", "layout", "N", "axes")
    sa, sb = a.split("=")[1], b.split("=")[1]
    out = [f"kernel ms ({rev}); conv1 with its space-to-depth transform", "",
           f"| class | layout | N | {a} | {b} | {sa} / {sb} | cudnn-s2d | {sa} / s2d |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for p, lay, n, ma, mb, c in _halo_cells(t, a, b):
        out.append(f"| {p} | {lay} | {n} | {ma:.4f} | {mb:.4f} | {ma / mb:.3f} | {c:.4f} | {ma / c:.3f} |")
    return "\n".join(out) + "\n"


def conv1_pdl(rev):
    """hopper-halo with each value of its `launch` axis (the GEMM as the input transform's
    programmatic dependent, or after it completes; plots/h200/conv1_pdl/halo_launch_<rev>.csv);
    the schedule is auto's."""
    return _halo_axis_table(f"{H200}/conv1_pdl/halo_launch_{rev}.csv", rev, "launch=pdl", "launch=plain")


def conv1_s2d_loader(rev="a002051"):
    """hopper-halo with each value of its `s2d` axis: the space-to-depth rewrite in the GEMM's
    loader (no transform pass) or the copy before the GEMM (launched as its programmatic
    dependent); plots/h200/conv1_loader/halo_s2d_<rev>.csv. The loader reads NHWC only."""
    return _halo_axis_table(f"{H200}/conv1_loader/halo_s2d_{rev}.csv", rev, "s2d=loader", "s2d=copy")


def _ncu_kernels(path):
    """An `ncu --csv --page details` file (scripts/device_ncu_stalls.sh): [(kernel name,
    {(section, metric): value})] in the order of the profiled launches."""
    import csv
    import io
    text = open(os.path.join(ROOT, path), encoding="utf-8").read()
    kernels = {}
    for r in csv.DictReader(io.StringIO(text[text.index('"ID"'):])):
        if r.get("Kernel Name"):
            k = kernels.setdefault(r["ID"], (r["Kernel Name"], {}))
            k[1][(r["Section Name"], r["Metric Name"])] = r["Metric Value"].replace(",", "")
    return list(kernels.values())


def conv1_loader_ncu(rev="7009817"):
    """conv1 N=128 NHWC fp16 under Nsight Compute, one timed repeat per row
    (plots/h200/conv1_loader/ncu_<form>_<rev>.csv): the halo rung with s2d=loader (one kernel),
    with s2d=copy (the copy, then the GEMM) and cudnn-fp16-s2d (the same copy, the weights'
    transform, cuDNN's GEMM)."""
    cols = _ncu_cols("us", "SM %", "issue slots %", "issue-ready %", "cycles / issue", "L2 %", "DRAM %", "threads",
                     "registers")
    out = [f"NVIDIA H200, conv1 N=128 NHWC fp16, one timed repeat under ncu per row ({rev}; "
           "kernels under 5 us left out)", "",
           "| row | kernel | " + " | ".join(c[2] for c in cols) + " |",
           "| --- | --- | " + " | ".join("---" for _ in cols) + " |"]
    for row, form in (("hopper-halo-fp16, s2d=loader", "loader"), ("hopper-halo-fp16, s2d=copy", "copy"),
                      ("cudnn-fp16-s2d", "cudnn_s2d")):
        for name, m in _ncu_kernels(f"{H200}/conv1_loader/ncu_{form}_{rev}.csv"):
            if _f(m[cols[0][:2]]) * 1e-3 < 5:
                continue
            t = re.search(r"tilesize(\d+x\d+x\d+)", name)
            kern = (f"cuDNN's GEMM, tile {t.group(1)}" if t else
                    name.split("(")[0].replace("<unnamed>::", "").split("<")[0].split("::")[-1])
            vals = [f"{_f(m[(sec, met)]) * scale:.3g}" for sec, met, _, scale in cols]
            out.append(f"| {row} | {kern} | " + " | ".join(vals) + " |")
    return "\n".join(out) + "\n"


def conv1_transform_forms():
    """The space-to-depth copy (s2d_vec.cuh) under Nsight Compute in each of its forms, conv1
    N=128 NHWC, one profiled launch each (`convstudy sweep --profile`, H200): the kernel for
    ours and the cudnn-*-s2d rows alike, and the halo GEMM after it (kernel us)."""
    # (form, kernels CSV, the tree its call ran: the kernels CSVs carry no revision column)
    forms = [("one load per thread in flight, then the stores", "kernels_s2d_vec.csv", "1defc0b"),
             ("+ the interior by cp.async (all of a thread's pieces in flight)", "conv1_pdl/kernels_f696adb.csv",
              "f696adb"),
             ("+ inner blocks gathered through one flat offset per channel", "conv1_pdl/kernels_8d32ef6.csv",
              "8d32ef6"),
             ("+ the aligned interior by bulk copies on an mbarrier", "conv1_pdl/kernels_949a823.csv", "949a823"),
             ("instead: a persistent double-buffered grid (the next group's run loading while this one's is "
              "stored; branch wip/s2d-pipelined, not landed)", "conv1_loader/kernels_a002051.csv", "a002051"),
             ("949a823's form + each thread a fixed vector position of a pixel (flat offsets in registers, no "
              "division or table read a vector)", "conv1_pdl/kernels_9662503.csv", "9662503"),
             ("9662503's form on the persistent double-buffered grid (branch wip/s2d-pipelined-fixed, not landed)",
              "conv1_pdl/kernels_ebedbc2.csv", "ebedbc2"),
             ("9662503's form with its gather as one function shared with the halo rung's s2d=loader (main)",
              "conv1_pdl/kernels_6f97f15.csv", "6f97f15")]
    out = ["conv1 N=128 NHWC under ncu; fp16 and tf32: the copy of the hopper-tmastore rows; the last column: the "
           "halo GEMM of the same call's tree (949a823's with every storer lane storing)", "",
           "| form | kernels of | fp16 us | tf32 us | DRAM read MB | DRAM written MB | SM % | FMA pipe % | "
           "warps active % | halo GEMM us (tensor pipe %) |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for what, f, rev in forms:
        rows = _csv_rows(f"{H200}/{f}")

        def kern(row_part, kpart):
            for r in rows:
                if row_part in r["row"] and kpart in r["kernel"]:
                    return r
            return None
        f16 = kern("hopper-tmastore-fp16", "vec_kernel")
        t32 = kern("hopper-tmastore-tf32", "vec_kernel")
        halo = kern("hopper-halo-fp16", "halo_kernel")
        us = lambda r: f"{_f(r['gpu__time_duration.sum']) / 1e3:.1f}" if r else "-"
        out.append(f"| {what} | {rev} | {us(f16)} | {us(t32)} | {_f(f16['dram__bytes_read.sum']) / 1e6:.1f} | "
                   f"{_f(f16['dram__bytes_write.sum']) / 1e6:.1f} | {_f(f16['sm__throughput.avg.pct_of_peak_sustained_elapsed']):.0f} | "
                   f"{_f(f16['sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active']):.0f} | "
                   f"{_f(f16['sm__warps_active.avg.pct_of_peak_sustained_active']):.0f} | {us(halo)}"
                   + (f" ({_f(halo['sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active']):.0f})" if halo
                      else "") + " |")
    return "\n".join(out) + "\n"


def goals_fp16_n128_cut(name="conv1_pdl/goals_fp16_n128_53694b1_cut.csv"):
    """The fp16 goals at N=128 NHWC in one H200 call (scripts/device_goals.sh CLASSES=fp16
    BATCH=128 LAYOUT=nhwc, sampled check, 20 repeats) whose sweep the session's device time cut
    during conv5: per layer the best of ours and cuDNN's best (the s2d row for conv1), and the
    sum of the layers it reached."""
    rows = [r for r in _csv_rows(f"{H200}/{name}") if r["status"] == "PASS"]
    rev = ", ".join(sorted({r["git_rev"] for r in rows}))
    out = [f"kernel ms ({rev}); fp16, N=128, NHWC", "", "| layer | ours (best row) | cuDNN (best row) | ours / cuDNN |",
           "| --- | --- | --- | --- |"]
    total = 0.0
    layers = sorted({r["layer"] for r in rows})
    for layer in layers:
        ours = min((r for r in rows if r["layer"] == layer and r["variant"].startswith("hopper-")),
                   key=lambda r: _f(r["kernel_ms"]))
        cud = min((r for r in rows if r["layer"] == layer and r["variant"].startswith("cudnn-")),
                  key=lambda r: _f(r["kernel_ms"]))
        a, b = _f(ours["kernel_ms"]), _f(cud["kernel_ms"])
        total += a
        out.append(f"| {layer} | {a:.4f} ({ours['variant']}) | {b:.4f} ({cud['variant']}) | {a / b:.3f} |")
    missing = [l for l in ("conv1", "conv2", "conv3", "conv4", "conv5") if l not in layers]
    out += ["", f"ours, {', '.join(layers)}: {total:.3f} ms" + (f"; not reached: {', '.join(missing)}" if missing else "")]
    return "\n".join(out) + "\n"


def n512_tiles(name="hopper_tiles_n512.csv"):
    """The N=512 tile sweep on the H200 (every tile of hopper-tmastore, -tail, -sk and -mc, fp16
    and tf32, NHWC, conv2-5; scripts/device_tiles.sh): the fastest tile against the same rungs'
    best row in the N=512 sampled sweep (their tile before the table had N=512 entries: the
    rule's or N=128's) and the fastest cuDNN row there."""
    rows = _csv_rows(f"{H200}/{name}")
    rev = ", ".join(sorted({r["git_rev"] for r in rows}))
    ref = _csv_rows(f"{H200}/n512_tensor_core.csv")
    best, ours, cud = {}, {}, {}
    for r in rows:
        if r["status"] != "PASS":
            continue
        k, ms = (r["layer"], r["precision"]), _f(r["kernel_ms"])
        if k not in best or ms < best[k][0]:
            best[k] = (ms, r["variant"], r["axes"].split("=", 1)[1])
    rungs = {r["variant"] for r in rows}
    for r in ref:
        if r["status"] != "PASS":
            continue
        k, ms = (r["layer"], r["precision"]), _f(r["kernel_ms"])
        if r["variant"].startswith("cudnn-") and not r["variant"].endswith("-s2d"):
            cud[k] = min(cud.get(k, ms), ms)
        if r["variant"] in rungs:
            ours[k] = min(ours.get(k, ms), ms)
    out = [f"N=512, NHWC, kernel ms (tile sweep {rev}; the sampled sweep "
           f"{', '.join(sorted({r['git_rev'] for r in ref}))})", "",
           "| class | layer | fastest tile (rung) | ms | the rungs' best in the N=512 sweep | cuDNN | fastest tile / cuDNN |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for (layer, cls), (ms, v, tile) in sorted(best.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        c = cud.get((layer, cls))
        o = ours.get((layer, cls))
        out.append(f"| {cls} | {layer} | {tile} ({v.rsplit('-', 1)[0]}) | {ms:.4f} | "
                   f"{'-' if o is None else f'{o:.4f}'} | {'-' if c is None else f'{c:.4f}'} | "
                   f"{'-' if c is None else f'{ms / c:.3f}'} |")
    return "\n".join(out) + "\n"



def n1_tiles(name="hopper_tiles_n1.csv"):
    """The N=1 tile sweep (hopper-ws and hopper-tmastore, every cooperative tile, NHWC; cuDNN of
    the same call): per layer and class the fastest 128-pixel tile, the fastest 64-pixel tile
    (CoopShape's split of the filters) and cuDNN's fastest row, kernel ms."""
    rows = _csv_rows(f"{H200}/{name}")
    rev = ", ".join(sorted({r["git_rev"] for r in rows}))
    out = [f"`plots/h200/{name}` ({rev}), N=1, NHWC, kernel ms (50 repeats); ours: the faster of hopper-ws and "
           "hopper-tmastore (the same kernel at N=1: split-K, direct epilogue)", "",
           "| layer | class | fastest 128-pixel tile | ms | fastest 64-pixel tile | ms | 64 / 128 | cuDNN | 64-pixel / cuDNN |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    ok = [r for r in rows if r["status"] == "PASS" and r["layout"] == "nhwc" and r["N"] == "1"]
    for layer in _layers(ok):
        for cls in ("fp16", "bf16", "tf32"):
            mine = [r for r in ok if r["layer"] == layer and r["variant"] in (f"hopper-ws-{cls}", f"hopper-tmastore-{cls}")]
            lib = [_f(r["kernel_ms"]) for r in ok if r["layer"] == layer and r["variant"] == f"cudnn-{cls}"]
            def best(bm):
                c = [r for r in mine if r["axes"].startswith(f"tile=m{bm}n")]
                return min(c, key=lambda r: _f(r["kernel_ms"])) if c else None
            a, b = best(128), best(64)
            if not a or not b or not lib:
                continue
            ta, tb, tl = _f(a["kernel_ms"]), _f(b["kernel_ms"]), min(lib)
            out.append(f"| {layer} | {cls} | {a['axes'][5:]} | {g3(ta)} | {b['axes'][5:]} | {g3(tb)} | {tb / ta:.2f} | "
                       f"{g3(tl)} | {tb / tl:.2f} |")
    return "\n".join(out) + "\n"


def conv2_n1(name="sweep_conv2_ac7227c.csv"):
    """conv2 at N=1 in a reference sweep of conv2 alone (every variant, both layouts, golden
    check, 20 repeats) at the revision whose auto takes cluster split-K from 3 MiB of partials:
    our fastest row of each class against the fastest cuDNN row of the class, same sweep."""
    rows = [r for r in _csv_rows(f"{H200}/{name}") if r["N"] == "1" and r["status"] == "PASS"]
    rev = ", ".join(sorted({r["git_rev"] for r in rows}))
    out = [f"`plots/h200/{name}` ({rev}), conv2 N=1, kernel ms", "",
           "| class | our fastest row | its scheduler | ms | cuDNN (fastest) | ours / cuDNN |", "| --- | --- | --- | --- | --- | --- |"]
    for cls in ("fp16", "bf16", "tf32"):
        ours = [r for r in rows if r["variant"].startswith("hopper-") and r["precision"] == cls]
        cud = [r for r in rows if r["variant"].startswith("cudnn-") and r["precision"] == cls and
               not r["variant"].endswith("-s2d")]
        if not ours or not cud:
            continue
        o = min(ours, key=lambda r: _f(r["kernel_ms"]))
        c = min(cud, key=lambda r: _f(r["kernel_ms"]))
        sch = o["config"].split("scheduler=")[1].split(";")[0] if "scheduler=" in o["config"] else "-"
        out.append(f"| {cls} | {o['variant']} ({o['layout']}) | {sch} | {_f(o['kernel_ms']):.4f} | "
                   f"{_f(c['kernel_ms']):.4f} ({c['variant']}, {c['layout']}) | {_f(o['kernel_ms']) / _f(c['kernel_ms']):.3f} |")
    return "\n".join(out) + "\n"


GENERATORS = {
    "h100-hopper-sass": hopper_sass,
    "h100-range-safety": range_safety,
    "h100-hopper-mc": hopper_mc,
    "h100-csvs": lambda: csv_inventory(H100),
    "h100-hopper-ladder": hopper_ladder,
    "h100-hopper-profile": hopper_profile,
    "h100-fp32-profile": lambda: hopper_profile("profile_fp32_ladder_n128.csv"),
    "h100-torch-compile": torch_compile,
    "h100-hopper-tail": lambda: rung_against("hopper_tail.csv", "tail", ["sk", "mc"]),
    "h100-hopper-tail-l2": lambda: kernels_l2("kernels_hopper_tail.csv"),
    "h100-hopper-mca": lambda: rung_against("hopper_mca.csv", "mca", ["mc"]),
    "h100-hopper-mca-l2": lambda: kernels_l2("kernels_hopper_mca.csv"),
    "h100-fp32-conv2-kernels": fp32_conv2_kernels,
    "h100-hopper-ab": hopper_ab,
    "h200-sweep": sweep_sentence,
    "h200-before-after": before_after,
    "h200-goals-24": goals_24,
    "h200-findings-study": findings_study,
    "h200-findings-layout": findings_layout,
    "h200-goals-24-n512": goals_512,
    "h200-split-scale-cost": split_scale_cost,
    "h200-ab-probe": ab_probe,
    "h200-anchor-ab": anchor_ab,
    "misses-24": misses_24,
    "h200-nchw-cost": nchw_cost,
    "h200-nchw-split": nchw_split,
    "h200-nchw-split-639bf40": lambda: nchw_split(f"{H200}/nchw_profile_639bf40"),
    "h200-nchw-ab": nchw_ab,
    "h200-launch-axis": launch_axis,
    "h200-n1-shift": n1_shift,
    "h200-hopper-ladder": lambda: hopper_ladder(H200, HOPPER_LADDER + ["hopper-m256k64-fp16", "hopper-halo-fp16"]),
    "h200-hopper-profile": lambda: hopper_profile("profile_hopper_ladder_n128.csv", H200),
    "h200-fp32-profile": lambda: hopper_profile("profile_fp32_ladder_n128.csv", H200),
    "h200-hopper-m256k64": m256k64,
    "h200-splitk-fused": splitk_forms,
    "h200-splitk-cluster": lambda: splitk_forms("splitk_cluster_n1.csv", "", "split-k-cluster"),
    "h200-conv2-n1": conv2_n1,
    "h200-n512-tiles": n512_tiles,
    "h200-kernel-n128": kernel_table,
    "h200-summary-n128": summary_table,
    "h200-csvs": csv_inventory,
    "h200-hopper-m256": lambda: tile_against("hopper_m256.csv"),
    "h200-hopper-m256-l2": lambda: kernels_l2("kernels_hopper_m256.csv", H200, tiles=True),
    "h200-hopper-m256-sched": m256_sched,
    "h200-hopper-conv1-tiles": conv1_tiles,
    "h200-range-safety": lambda: range_safety(H200),
    "h200-fp32-conv2-miss": fp32_conv2_miss,
    "h200-conv1-s2d-vec": conv1_vs_s2d,
    "h200-conv1-halo": lambda: conv1_vs_s2d("conv1_halo.csv", ("hopper-halo", "hopper-tmastore"), ("fp16", "bf16"), plain=False),
    "h200-halo-forms": halo_forms,
    "h200-halo-nchw-direct": halo_nchw_direct,
    "h200-n1-tiles": n1_tiles,
    "h200-goal-misses": goal_misses,
    "h100-goal-misses": lambda: goal_misses(folder=H100),
    "h200-cuts-ab": cuts_ab,
    "h200-cuts-ab2": lambda: cuts_ab("fd7de4f", "3145065", (("fd7de4f", "sass_sm90.csv"),
                                                          ("3145065", "cuts_ab/sass_3145065.csv"))),
    "h200-cuts-ab3": lambda: cuts_ab("92652c9", "6e22914", (("3145065 (= 92652c9's device code)", "cuts_ab/sass_3145065.csv"),
                                                          ("b367494 (= 6e22914's device code)", "cuts_ab/sass_b367494.csv")),
                                     common=True),
    "h200-cuts-probe": cuts_probe,
    "h200-ncu-conv2-n128": ncu_cell,
    "h200-pp-pairs": pp_pairs,
    "h200-pp-cuts": pp_cuts,
    "h200-ncu-conv2-n128-ppsk": lambda: ncu_cell("ncu_conv2_n128_ppsk", (
        "cudnn-tf32", "hopper-sk-tf32", "hopper-sk-tf32_schedule-pingpong_tile-m128n128k128B-s6",
        "hopper-pp-tf32_scheduler-data-parallel_tile-m128n128k128B-s6")),
    "h200-ncu-conv2-n128-pp": lambda: ncu_cell("ncu_conv2_n128_pp", (
        "cudnn-tf32", "hopper-sk-tf32", "hopper-pp-tf32_scheduler-data-parallel_tile-m128n128k128B-s6",
        "hopper-mc-tf32_schedule-cooperative_cluster-2_scheduler-data-parallel_tile-m128n128k128B-s6",
        "hopper-mc-tf32_schedule-pingpong_cluster-2_scheduler-data-parallel_tile-m128n128k128B-s6")),
    "h200-m64-sass": m64_sass,
    "h200-ncu-conv2-tf32-source-n128": lambda: ncu_cell("ncu_conv2_tf32_source/n128", (
        "cudnn-tf32", "hopper-sk-tf32_schedule-pingpong_tile-m128n128k128B-s6", "hopper-sk-tf32")),
    "h200-ncu-conv2-tf32-source-n32": lambda: ncu_cell("ncu_conv2_tf32_source/n32", ("cudnn-tf32", "hopper-pp-tf32"),
                                                       cell="conv2 N=32"),
    "h200-ncu-conv2-tf32-opcodes": lambda: ncu_source_opcodes("ncu_conv2_tf32_source", (
        ("n128", "N=128", ("cudnn-tf32", "hopper-sk-tf32_schedule-pingpong_tile-m128n128k128B-s6", "hopper-sk-tf32")),
        ("n32", "N=32", ("cudnn-tf32", "hopper-pp-tf32")))),
    "h100-goals-24": lambda: goals_24(f"{H100}/goals_24.csv"),
    "h200-goals-24-22e4765": lambda: goals_24(f"{H200}/sweep_22e4765_conv1-3.csv"),
    "h200-goals-24-45cfc36": lambda: goals_24(f"{H200}/sweep_all_variants_45cfc36.csv"),
    "h200-goals-24-7009817": lambda: goals_24(f"{H200}/sweep_all_variants_7009817.csv"),
    "h200-goals-24-852eed6": lambda: goals_24(HOPPER_852),
    "h200-hopper-852eed6-status": lambda: rung_status(HOPPER_852),
    "h200-goals-24-6f97f15-a": lambda: goals_24(f"{H200}/goals/goals_6f97f15_a.csv"),
    "h200-goals-24-6f97f15-b": lambda: goals_24(f"{H200}/goals/goals_6f97f15_b.csv"),
    "h200-n1-m64-kernels": n1_m64_kernels,
    "h200-halo-schedules": halo_schedules,
    "h200-splitk-forms": splitk_three,
    "h200-splitk-cluster16": cluster16,
    "h200-n1-cluster-kernels": n1_cluster_kernels,
    "h200-conv1-halo-profile": lambda: hopper_profile("profile_conv1_halo.csv", H200),
    "h200-conv1-s2d-vec-kernels": lambda: kernels_l2("kernels_s2d_vec.csv", H200, tiles=True),
    "h200-conv1-pdl": lambda: conv1_pdl("949a823"),
    "h200-conv1-s2d-loader": conv1_s2d_loader,
    "h200-conv1-loader-ncu": conv1_loader_ncu,
    "h200-goals-fp16-n128-cut": goals_fp16_n128_cut,
    "h200-conv1-transform-forms": conv1_transform_forms,
    "h200-hopper-conv1-l2": lambda: kernels_l2("kernels_hopper_conv1.csv", H200, tiles=True),
}


def process(update):
    stale, unknown = [], []
    for doc in DOCS:
        path = os.path.join(ROOT, doc)
        with open(path, encoding="utf-8") as f:
            text = f.read()

        def repl(m):
            name = m.group("name")
            if name not in GENERATORS:
                unknown.append(f"{doc}: generated:{name}")
                return m.group(0)
            body = GENERATORS[name]()
            if body != m.group("body"):
                stale.append(f"{doc}: generated:{name}")
            return m.group(1) + body + m.group(4)

        new = BLOCK.sub(repl, text)
        if update and new != text:
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                f.write(new)
            os.replace(path + ".tmp", path)
    return stale, unknown


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv not in (["--check"], ["--update"]):
        print("usage: docs.py --check | --update", file=sys.stderr)
        return 2
    stale, unknown = process(update=argv == ["--update"])
    for u in unknown:
        print(f"docs.py: unknown block {u} (GENERATORS in plots/convplots/docs.py)", file=sys.stderr)
    if unknown:
        return 2
    if argv == ["--check"]:
        for s in stale:
            print(f"docs.py: stale: {s} differs from what the committed CSVs give; "
                  "run plots/plot.sh --update-docs", file=sys.stderr)
        if stale:
            return 1
        print(f"docs.py: every generated block of {', '.join(DOCS)} matches the committed CSVs")
        return 0
    for s in stale:
        print(f"docs.py: updated {s}")
    return 0
