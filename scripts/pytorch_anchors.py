#!/usr/bin/env python3
"""PyTorch's cuDNN on a layer table: the timings convstudy's cuDNN rows are held against.

Times PyTorch's cuDNN convolutions on a layer table's layers, on the GPU machine:

    python3 scripts/pytorch_anchors.py OUT.csv [--table vgg16] [--layers conv2,conv3] [--batches 1,32]

--table takes a built-in table's name (alexnet, the default; vgg16; resnet50: layers/<name>.json,
the files convstudy embeds) or a layer table's path, as convstudy's --table does. For each layer
of the table, N in 1, 32, 128, precision fp32 (TF32 off), tf32,
fp16, bf16 and layout NCHW and channels_last (NHWC input, KRSC weights), it times
torch.nn.functional.conv2d (no bias) the way convstudy's harness times a row:
  - torch.backends.cudnn.benchmark = True (cuDNN's engines timed on the first call),
  - 5 warm-up calls after that,
  - before each of 30 repeats L2 is flushed (a buffer twice the L2 size is written) and a
    ~20 us spin kernel keeps the GPU busy while Python enqueues the repeat, so the CPU's
    dispatch time never shows between the two events,
  - CUDA events around the one convolution, median of the 30.
Inputs are uniform in [-1, 1), weights scaled by sqrt(3/K) (the study's data). fp32 sets
cuDNN's fp32 precision to 'ieee' (allow_tf32 off), tf32 to 'tf32'; fp16 and bf16 tensors
compute in float inside cuDNN (PyTorch's default for convolutions).
Extra rows (alexnet only): conv1 rewritten by space-to-depth (48 channels, 57x57, 3x3 stride 1;
the same 55x55 output), fp16 and tf32, NHWC, N=128 (layer "conv1-s2d").

torch.compile as a second peer (--compile-batches, default 128; --no-compile skips it): the
same convolution through torch.compile(mode="max-autotune-no-cudagraphs") per layer,
precision class and layout, timed the same way after its compilation (Inductor chooses among
cuDNN and its Triton convolution templates). Each configuration compiles with a fresh cache:
a new TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR, torch._dynamo.reset() and Inductor's
in-memory caches cleared, so no choice leaks into the next. Those rows have impl=compile, the
cuDNN ones impl=eager.

--compile-budget S bounds the compile phase: a configuration starts only while the seconds
since the script's start plus the longest configuration so far stay within S; each one left
out gets a row with an empty ms and a note saying so (readers skip rows without ms), as does
a configuration that fails to compile.

Writes a CSV (layer,N,precision,layout,ms,torch,cudnn,device,impl,note,git_rev,timestamp,table,
count: the table's name and the layer's count, how many times the network runs that shape) and
prints a table (ms, per layer, and the network's total: each layer times its count). Runs in well under 3 minutes on
an H200; rows are written as they are measured, N=1 first. Every row names where and what
measured it: the device, the torch and cuDNN versions, the convstudy revision (git_rev:
$CONVSTUDY_GIT_REV as the device runner sets it, else `git describe` of this checkout, as
CMakeLists.txt does) and the UTC time of its measurement (timestamp, ISO 8601).
"""
import argparse
import csv
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
LAYERS_DIR = os.path.join(HERE, "..", "layers")

CSV_COLUMNS = ("layer", "N", "precision", "layout", "ms", "torch", "cudnn", "device", "impl", "note", "git_rev",
               "timestamp", "table", "count")
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
LAYOUTS = ("nchw", "nhwc")
WARMUP = 5
REPEATS = 30


def git_revision() -> str:
    """The convstudy revision the rows belong to: $CONVSTUDY_GIT_REV (the device machine's copy
    of the tree has no .git), else `git describe` here (CMakeLists.txt's rule), else unknown."""
    rev = os.environ.get("CONVSTUDY_GIT_REV", "").strip()
    if rev:
        return rev
    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=12"], cwd=os.path.join(HERE, ".."),
                             capture_output=True, text=True, timeout=30)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return "unknown"


def utc_now() -> str:
    """The UTC time as the sweep CSVs write it: 2026-11-28T09:15:02Z."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def cudnn_version_string() -> str:
    v = torch.backends.cudnn.version()
    return f"{v // 10000}.{v // 100 % 100}.{v % 100}" if v and v >= 90000 else str(v)


class AnchorCsv:
    """The output CSV: one row per measurement, flushed as written, each row carrying the
    versions, device, revision and its own timestamp."""

    def __init__(self, path: str, table: str, counts: dict) -> None:
        self.file = open(path, "w", newline="")
        self.writer = csv.writer(self.file)
        self.writer.writerow(CSV_COLUMNS)
        self.counts = counts
        self.fixed = {"torch": torch.__version__, "cudnn": cudnn_version_string(),
                      "device": torch.cuda.get_device_name(0), "git_rev": git_revision(), "table": table}

    def write(self, layer, n, precision, layout, ms, impl, note) -> None:
        row = dict(self.fixed, layer=layer, N=n, precision=precision, layout=layout,
                   ms="" if ms is None else f"{ms:.5f}", impl=impl, note=note, timestamp=utc_now(),
                   count=self.counts.get(layer, 1))
        self.writer.writerow([row[c] for c in CSV_COLUMNS])
        self.file.flush()

    def close(self) -> None:
        self.file.close()


def set_fp32_precision(tf32: bool) -> None:
    """TF32 on or off for cuDNN convolutions (the PyTorch >= 2.9 API where it exists)."""
    conv = getattr(torch.backends.cudnn, "conv", None)
    if conv is not None and hasattr(conv, "fp32_precision"):
        conv.fp32_precision = "tf32" if tf32 else "ieee"
    else:
        torch.backends.cudnn.allow_tf32 = tf32


def dtype_of(precision: str) -> torch.dtype:
    return {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[precision]


class Timer:
    def __init__(self) -> None:
        props = torch.cuda.get_device_properties(0)
        l2 = int(getattr(props, "L2_cache_size", 0) or 0) or (64 << 20)
        self.flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
        self.count = 0

    def time(self, fn, warmup: int = WARMUP, repeats: int = REPEATS) -> float:
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
        for i in range(repeats):
            self.count += 1
            self.flush.fill_(self.count & 0xFF)  # evict L2
            torch.cuda._sleep(40_000)  # ~20 us: the GPU stays ahead of Python's dispatch
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def make_conv(C, H, W, M, R, S, stride, pad, N, precision, layout):
    dt = dtype_of(precision)
    g = torch.Generator(device="cuda")
    g.manual_seed(1234 + N)
    x = (torch.rand((N, C, H, W), generator=g, device="cuda") * 2 - 1).to(dt)
    K = C * R * S
    w = ((torch.rand((M, C, R, S), generator=g, device="cuda") * 2 - 1) * (3.0 / K) ** 0.5).to(dt)
    if layout == "nhwc":
        x = x.contiguous(memory_format=torch.channels_last)
        w = w.contiguous(memory_format=torch.channels_last)
    set_fp32_precision(precision == "tf32")
    fn = lambda: F.conv2d(x, w, None, stride, pad)  # noqa: E731
    fn.x, fn.w = x, w
    return fn


def make_compiled(C, H, W, M, R, S, stride, pad, N, precision, layout):
    """The convolution through torch.compile(max-autotune-no-cudagraphs), compiled afresh: a
    new, empty compile cache (removed by the caller: the returned path) and no state of an
    earlier configuration. Compilation happens in the first call (inside the warm-up)."""
    eager = make_conv(C, H, W, M, R, S, stride, pad, N, precision, layout)
    x, w = eager.x, eager.w
    cache = tempfile.mkdtemp(prefix="convstudy-inductor-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    os.environ["TRITON_CACHE_DIR"] = os.path.join(cache, "triton")
    torch._dynamo.reset()
    clear = getattr(getattr(torch._inductor, "utils", None), "clear_inductor_caches", None)
    if clear is not None:
        clear()

    def conv(a, b):
        return F.conv2d(a, b, None, stride, pad)

    compiled = torch.compile(conv, mode="max-autotune-no-cudagraphs", dynamic=False)
    return (lambda: compiled(x, w)), cache


def load_table(arg: str):
    """(name, layers) of --table: a built-in table's name (layers/<name>.json, the files the program
    embeds) or a layer table's path, whose "name" field names it."""
    builtin = os.path.join(LAYERS_DIR, arg + ".json")
    path = builtin if os.sep not in arg and os.path.isfile(builtin) else arg
    with open(path) as f:
        doc = json.load(f)
    layers = doc["layers"]
    if not isinstance(layers, list) or not layers:
        raise ValueError("no layers")
    for l in layers:
        for k in ("name", "C", "H", "W", "M", "R", "S", "stride", "pad"):
            if k not in l:
                raise ValueError(f"layer {l.get('name', '?')} has no {k}")
    return doc.get("name", arg), layers


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="output CSV path")
    ap.add_argument("--table", default="alexnet",
                    help="a built-in table's name (alexnet, vgg16, resnet50) or a layer table's path (default alexnet)")
    ap.add_argument("--layers", default="", help="comma-separated layer names (default: all)")
    ap.add_argument("--batches", default="1,32,128", help="comma-separated N (default 1,32,128)")
    ap.add_argument("--no-s2d", action="store_true", help="skip the space-to-depth conv1 rows")
    ap.add_argument("--no-compile", action="store_true", help="skip the torch.compile rows")
    ap.add_argument("--compile-batches", default="128", help="N for the torch.compile rows (default 128)")
    ap.add_argument("--compile-precisions", default=",".join(PRECISIONS),
                    help="precision classes for the torch.compile rows (default all)")
    ap.add_argument("--compile-layouts", default=",".join(LAYOUTS), help="layouts for the torch.compile rows")
    ap.add_argument("--precisions", default=",".join(PRECISIONS), help="precision classes of the eager rows")
    ap.add_argument("--compile-budget", type=float, default=0,
                    help="seconds from the start after which no torch.compile configuration starts (0: no limit)")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("pytorch_anchors: no CUDA device", file=sys.stderr)
        return 4
    try:
        table_name, layers = load_table(args.table)
    except (OSError, ValueError, KeyError) as e:
        print(f"pytorch_anchors: --table {args.table}: {e}", file=sys.stderr)
        return 2
    if args.layers:
        want = set(args.layers.split(","))
        layers = [l for l in layers if l["name"] in want]
    batches = [int(b) for b in args.batches.split(",") if b]

    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.deterministic = False
    out = AnchorCsv(args.csv, table_name, {l["name"]: int(l.get("count", 1)) for l in layers})
    cudnn_s, device = out.fixed["cudnn"], out.fixed["device"]
    print(f"torch {torch.__version__}, cuDNN {cudnn_s}, {device}, convstudy {out.fixed['git_rev']}", flush=True)
    timer = Timer()
    t0 = time.time()
    rows = []

    def record(layer, n, precision, layout, ms, impl="eager", note=""):
        if ms is not None:
            rows.append((layer, n, precision, layout, ms, impl))
        out.write(layer, n, precision, layout, ms, impl, note)

    precisions = [p for p in args.precisions.split(",") if p]
    with torch.inference_mode():
        for n in batches:
            for precision in precisions:
                for layout in LAYOUTS:
                    for l in layers:
                        fn = make_conv(l["C"], l["H"], l["W"], l["M"], l["R"], l["S"], l["stride"], l["pad"], n,
                                       precision, layout)
                        record(l["name"], n, precision, layout, timer.time(fn))
                    print(f"  N={n} {precision} {layout} done ({time.time() - t0:.0f} s)", flush=True)
        if not args.no_s2d and 128 in batches and table_name == "alexnet":
            for precision in ("fp16", "tf32"):
                fn = make_conv(48, 57, 57, 96, 3, 3, 1, 0, 128, precision, "nhwc")
                record("conv1-s2d", 128, precision, "nhwc", timer.time(fn))
    if not args.no_compile:
        # outside inference_mode: torch.compile traces ordinary tensors (no grad is taken)
        longest = 0.0  # the longest configuration so far, seconds
        with torch.no_grad():
            for n in [int(b) for b in args.compile_batches.split(",") if b]:
                for precision in [p for p in args.compile_precisions.split(",") if p]:
                    for layout in [x for x in args.compile_layouts.split(",") if x]:
                        for l in layers:
                            if args.compile_budget and time.time() - t0 + longest > args.compile_budget:
                                note = (f"not compiled: --compile-budget {args.compile_budget:.0f} s (the longest "
                                        f"configuration took {longest:.0f} s)")
                                record(l["name"], n, precision, layout, None, "compile", note)
                                print(f"  torch.compile {l['name']} N={n} {precision} {layout}: {note}", flush=True)
                                continue
                            t1 = time.time()
                            fn, cache = make_compiled(l["C"], l["H"], l["W"], l["M"], l["R"], l["S"], l["stride"],
                                                      l["pad"], n, precision, layout)
                            try:
                                record(l["name"], n, precision, layout, timer.time(fn), "compile")
                            except Exception as e:  # one configuration that fails to compile: say so, go on
                                first = str(e).splitlines()[0][:200] if str(e) else ""
                                note = f"compile failed: {type(e).__name__}: {first}"
                                record(l["name"], n, precision, layout, None, "compile", note)
                                print(f"  torch.compile {l['name']} N={n} {precision} {layout} failed: {e}",
                                      flush=True)
                            finally:
                                shutil.rmtree(cache, ignore_errors=True)
                            longest = max(longest, time.time() - t1)
                            print(f"  compile {l['name']} N={n} {precision} {layout}: "
                                  f"{time.time() - t1:.0f} s with compilation", flush=True)
    out.close()

    # The table: one line per (precision, layout, N), ms per layer and the network's total (each
    # layer times its count).
    names = [l["name"] for l in layers]
    count = {l["name"]: int(l.get("count", 1)) for l in layers}
    printed = set()
    by = {(r[0], r[1], r[2], r[3]): r[4] for r in rows if r[5] == "eager"}
    comp = {(r[0], r[1], r[2], r[3]): r[4] for r in rows if r[5] == "compile"}
    print()
    print(f"PyTorch {torch.__version__}, cuDNN {cudnn_s}, {device}: ms, median of {REPEATS}, L2 flushed")
    head = f"| {'precision, layout, N':<22} | " + " | ".join(f"{n:>6}" for n in names) + " |  total |"
    print(head)
    print("|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|")
    for precision in precisions:
        for layout in LAYOUTS:
            for n in batches:
                vals = [by.get((name, n, precision, layout)) for name in names]
                if all(v is None for v in vals):
                    continue
                total = sum(v * count[name] for name, v in zip(names, vals) if v is not None)
                cells = " | ".join(f"{v:6.3f}" if v is not None else "     -" for v in vals)
                print(f"| {precision + ' ' + layout.upper() + ' ' + str(n):<22} | {cells} | {total:6.3f} |")
    for precision in ("fp16", "tf32"):
        v = by.get(("conv1-s2d", 128, precision, "nhwc"))
        if v is not None:
            print(f"conv1 by space-to-depth (48 ch 57x57, 3x3 s1), {precision} NHWC N=128: {v:.3f} ms")
    for precision in PRECISIONS:
        for layout in LAYOUTS:
            for n in batches + [int(b) for b in args.compile_batches.split(",") if b]:
                vals = [comp.get((name, n, precision, layout)) for name in names]
                if all(v is None for v in vals) or (n, precision, layout) in printed:
                    continue
                printed.add((n, precision, layout))
                cells = " | ".join(f"{v:6.3f}" if v is not None else "     -" for v in vals)
                total = sum(v * count[name] for name, v in zip(names, vals) if v is not None)
                print(f"| {'compile ' + precision + ' ' + layout.upper() + ' ' + str(n):<22} | {cells} | {total:6.3f} |")
    print(f"({len(rows)} rows in {time.time() - t0:.0f} s -> {args.csv})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
