#!/usr/bin/env python3
"""PyTorch's cuDNN on a layer table: the timings convstudy's cuDNN rows are held against.

On the GPU machine, per layer or, with --chain (issue 52), the table as one network (--help each):

    python3 scripts/pytorch_anchors.py OUT.csv [--table vgg16] [--layers conv2,conv3] [--batches 1,32]
    python3 scripts/pytorch_anchors.py --chain OUT.csv [--table alexnet] [--golden golden] [--impls graph]

--table: a built-in table's name (alexnet, the default; vgg16; resnet50: layers/<name>.json, the files
convstudy embeds) or a layer table's path. Timer: cuDNN's benchmark mode (engines timed on the first call), 5
warm-up calls, then per repeat L2 flushed (a buffer twice its size written) and a spin kernel (~20 us) keeping
the GPU busy while Python enqueues the repeat, so the CPU's dispatch never shows between the CUDA events
around the call. fp32: cuDNN's fp32 precision 'ieee' (allow_tf32 off), tf32: 'tf32'; fp16, bf16 compute in
float inside cuDNN; nhwc: channels_last input and (KRSC) weights. torch.compile compiles each configuration
afresh (fresh_compile_cache); --compile-budget S starts one only while the seconds since the start plus the
longest one so far stay within S. Rows are written as measured, each naming the device, the torch and cuDNN
versions, the convstudy revision (git_rev) and its UTC time (ISO 8601).

Per layer: N 1, 32, 128 (N=1 first), fp32, tf32, fp16, bf16, nchw, nhwc: F.conv2d (no bias), the median of 30;
input uniform in [-1, 1), weights that times sqrt(3/K). alexnet adds conv1 by space-to-depth (conv1-s2d: 48
channels, 57x57, 3x3 stride 1, the same 55x55 output; fp16, tf32, NHWC, N=128). Rows impl=eager, then
impl=compile (N=128): the convolution through torch.compile (mode "max-autotune-no-cudagraphs"; Inductor picks
cuDNN or a Triton template), timed after compiling; one the budget leaves out or that fails to compile: no ms,
a note. CSV: layer, N, precision, layout, ms, torch, cudnn, device, impl, note, git_rev, timestamp, table,
count (the shape's uses in the network); then ms per layer, the network's total (each layer times its count).

--chain (the peer of `convstudy chain`): a chain table (each layer's input the previous one's pooled output,
counts 1; else exit 2) as a network: per layer F.conv2d(x, weight, bias, stride, padding), F.relu and
F.max_pool2d(3, 2) where the layer has "relu" and "pool": "max3x3s2", each output returned (the next layer's
input: no extra work). --impls: eager (one dispatch per op, launch gaps included), graph (captured once in a
torch.cuda.CUDAGraph, a run is a replay), compile (torch.compile(mode="max-autotune"), its own CUDA graph
trees, the input's address marked static; after all eager and graph runs). Data (column data): --golden's
chain set of each N (files checked against the manifest, it against --table), else torch's generator: input
U[-1, 1), weights that times sqrt(3/K), bias U[-0.5, 0.5) / sqrt(3). Golden data checks the first run (graph:
the first replay, NaN-filled before, the graph keeping its input alive; compile: the compiling call) and one
after timing (NaN-filled before): per layer max|torch - golden| / max|golden| (inf for NaN or Inf), the worst
max_rel_err (worst_layer); over bench/chain_tolerance.cpp's chain_threshold FAIL, no ms (a failing first run
is not timed); generated data: UNCHECKED. Timer (--spin-cycles) around one forward, --repeats runs, at N=1
--tail-repeats: ms the median, p10, p90, min, p99 (from 100 runs) as convstudy's Stat; host_us a call's median
host time (above the spin's, the interval holds host time). Left out by the budget: SKIPPED; failing
(compilation, capture, out of memory): ERROR, the exception in note. CSV: table, N, precision, layout, impl,
status, ms, p10_ms, p90_ms, min_ms, p99_ms, repeats, max_rel_err, worst_layer, threshold, data, host_us,
setup_s (seconds before the warm-ups: data, capture or compilation, the checked run), note, device, torch,
cudnn, git_rev, timestamp, process (--process K: the runner alternates processes); then a summary. Exit 0:
every row PASS, UNCHECKED or SKIPPED (or a compile ERROR); 1: a FAIL, or an eager or graph ERROR; 2: bad input
(options, table, golden files, output path); 4: no PyTorch or CUDA device.
"""
import argparse
import csv
from datetime import datetime, timezone
import gc
import itertools
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

try:
    import torch
    import torch.nn.functional as F
except ImportError as missing:
    if __name__ != "__main__" or "--chain" not in sys.argv[1:]:
        raise  # the per-layer mode: the ImportError itself
    print(f"pytorch_anchors --chain: needs PyTorch ({missing})", file=sys.stderr)
    sys.exit(4)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CSV_COLUMNS = ("layer", "N", "precision", "layout", "ms", "torch", "cudnn", "device", "impl", "note", "git_rev",
               "timestamp", "table", "count")
PRECISIONS, LAYOUTS = ("fp32", "tf32", "fp16", "bf16"), ("nchw", "nhwc")
CONV_KEYS = ("C", "H", "W", "M", "R", "S", "stride", "pad")
WARMUP, REPEATS = 5, 30
SPIN_CYCLES = 40_000  # ~20 us: the GPU stays ahead of Python's dispatch
DTYPES = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def git_revision() -> str:
    """$CONVSTUDY_GIT_REV (the device's copy has no .git), else `git describe` (CMakeLists.txt's rule)."""
    rev = os.environ.get("CONVSTUDY_GIT_REV", "").strip()
    if rev:
        return rev
    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=12"], cwd=ROOT,
                             capture_output=True, text=True, timeout=30)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return "unknown"


def versions() -> dict:
    """What every row names: the torch and cuDNN (9.x.y) versions, the device, the revision."""
    v = torch.backends.cudnn.version()
    cudnn = f"{v // 10000}.{v // 100 % 100}.{v % 100}" if v and v >= 90000 else str(v)
    return {"torch": torch.__version__, "cudnn": cudnn, "device": torch.cuda.get_device_name(0),
            "git_rev": git_revision()}


class Csv:
    """Rows flushed as written, with `fixed`, UTC time and fmt's formats (None: an empty cell)."""

    def __init__(self, path: str, columns, fmt: dict) -> None:
        self.file = open(path, "w", newline="")
        self.writer = csv.writer(self.file)
        self.writer.writerow(columns)
        self.columns, self.fmt, self.fixed, self.rows = columns, fmt, {}, []

    def write(self, **fields) -> None:
        row = dict(self.fixed, timestamp=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), **fields)
        self.rows.append(row)
        self.writer.writerow(["" if row.get(c) is None else self.fmt.get(c, "{}").format(row[c])
                              for c in self.columns])
        self.file.flush()


def set_fp32_precision(tf32: bool) -> None:
    """TF32 on or off for cuDNN convolutions (the PyTorch >= 2.9 API where it exists)."""
    conv = getattr(torch.backends.cudnn, "conv", None)
    if conv is not None and hasattr(conv, "fp32_precision"):
        conv.fp32_precision = "tf32" if tf32 else "ieee"
    else:
        torch.backends.cudnn.allow_tf32 = tf32


class Timer:
    def __init__(self) -> None:
        torch.backends.cudnn.benchmark = True  # cuDNN's engines timed on the first call
        torch.backends.cudnn.deterministic = False
        props = torch.cuda.get_device_properties(0)
        l2 = int(getattr(props, "L2_cache_size", 0) or 0) or (64 << 20)
        self.flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
        self.count = 0

    def time(self, fn, warmup: int = WARMUP, repeats: int = REPEATS, spin: int = SPIN_CYCLES) -> list:
        """The ms of each timed call of fn, after the warm-ups."""
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
        for i in range(repeats):
            self.count += 1
            self.flush.fill_(self.count & 0xFF)  # evict L2
            torch.cuda._sleep(spin)
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        return [s.elapsed_time(e) for s, e in zip(starts, ends)]


def fresh_compile_cache() -> str:
    """New cache folders (returned; the caller removes them), no Dynamo state, Inductor's caches cleared."""
    cache = tempfile.mkdtemp(prefix="convstudy-inductor-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    os.environ["TRITON_CACHE_DIR"] = os.path.join(cache, "triton")
    torch._dynamo.reset()
    clear = getattr(getattr(torch._inductor, "utils", None), "clear_inductor_caches", None)
    if clear is not None:
        clear()
    return cache


def over_budget(budget, t0, longest):
    """The note of a compile configuration --compile-budget leaves out, else None."""
    if budget and time.time() - t0 + longest > budget:
        return f"not compiled: --compile-budget {budget:.0f} s (the longest configuration took {longest:.0f} s)"
    return None


def error_text(e) -> str:
    return f"{type(e).__name__}: " + (str(e).splitlines()[0][:200] if str(e) else "")


def make_conv(C, H, W, M, R, S, stride, pad, N, precision, layout):
    dt = DTYPES[precision]
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
    """(the convolution compiled in its first call, its fresh cache to remove)."""
    eager = make_conv(C, H, W, M, R, S, stride, pad, N, precision, layout)
    x, w = eager.x, eager.w
    cache = fresh_compile_cache()

    def conv(a, b):
        return F.conv2d(a, b, None, stride, pad)
    compiled = torch.compile(conv, mode="max-autotune-no-cudagraphs", dynamic=False)
    return (lambda: compiled(x, w)), cache


def load_table(arg: str):
    """(name, layers) of --table: a built-in table's name (layers/<name>.json) or a table's path."""
    builtin = os.path.join(ROOT, "layers", arg + ".json")
    path = builtin if os.sep not in arg and os.path.isfile(builtin) else arg
    with open(path) as f:
        doc = json.load(f)
    layers = doc["layers"]
    if not isinstance(layers, list) or not layers:
        raise ValueError("no layers")
    for l in layers:
        for k in ("name",) + CONV_KEYS:
            if k not in l:
                raise ValueError(f"layer {l.get('name', '?')} has no {k}")
    return doc.get("name", arg), layers


def anchor_main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    opt = ap.add_argument
    opt("csv", help="output CSV path")
    opt("--table", default="alexnet",
        help="a built-in table's name (alexnet, vgg16, resnet50) or a layer table's path (default alexnet)")
    opt("--layers", default="", help="comma-separated layer names (default: all)")
    opt("--batches", default="1,32,128", help="comma-separated N (default 1,32,128)")
    opt("--no-s2d", action="store_true", help="skip the space-to-depth conv1 rows")
    opt("--no-compile", action="store_true", help="skip the torch.compile rows")
    opt("--compile-batches", default="128", help="N for the torch.compile rows (default 128)")
    opt("--compile-precisions", default=",".join(PRECISIONS),
        help="precision classes for the torch.compile rows (default all)")
    opt("--compile-layouts", default=",".join(LAYOUTS), help="layouts for the torch.compile rows")
    opt("--precisions", default=",".join(PRECISIONS), help="precision classes of the eager rows")
    opt("--compile-budget", type=float, default=0,
        help="seconds from the start after which no torch.compile configuration starts (0: no limit)")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("pytorch_anchors: no CUDA device", file=sys.stderr)
        return 4
    try:
        table_name, layers = load_table(args.table)
    except (OSError, ValueError, KeyError) as e:
        print(f"pytorch_anchors: --table {args.table}: {e}", file=sys.stderr)
        return 2
    layers = [l for l in layers if not args.layers or l["name"] in args.layers.split(",")]
    batches = [int(b) for b in args.batches.split(",") if b]
    counts = {l["name"]: int(l.get("count", 1)) for l in layers}
    out = Csv(args.csv, CSV_COLUMNS, {"ms": "{:.5f}"})
    out.fixed = dict(versions(), table=table_name)
    print(f"torch {torch.__version__}, cuDNN {out.fixed['cudnn']}, {out.fixed['device']}, convstudy "
          f"{out.fixed['git_rev']}", flush=True)
    timer, t0 = Timer(), time.time()

    def record(layer, n, precision, layout, fn, impl="eager", note=""):  # fn None: no time
        out.write(layer=layer, N=n, precision=precision, layout=layout, impl=impl, note=note,
                  ms=None if fn is None else statistics.median(timer.time(fn)), count=counts.get(layer, 1))

    precisions = [p for p in args.precisions.split(",") if p]
    with torch.inference_mode():
        for n, precision, layout in itertools.product(batches, precisions, LAYOUTS):
            for l in layers:
                record(l["name"], n, precision, layout, make_conv(*(l[k] for k in CONV_KEYS), n, precision, layout))
            print(f"  N={n} {precision} {layout} done ({time.time() - t0:.0f} s)", flush=True)
        if not args.no_s2d and 128 in batches and table_name == "alexnet":
            for precision in ("fp16", "tf32"):
                fn = make_conv(48, 57, 57, 96, 3, 3, 1, 0, 128, precision, "nhwc")
                record("conv1-s2d", 128, precision, "nhwc", fn)
    if not args.no_compile:
        # outside inference_mode: torch.compile traces ordinary tensors (no grad is taken)
        longest = 0.0  # the longest configuration so far, seconds
        with torch.no_grad():
            for n, precision, layout, l in itertools.product(
                    [int(b) for b in args.compile_batches.split(",") if b],
                    [p for p in args.compile_precisions.split(",") if p],
                    [x for x in args.compile_layouts.split(",") if x], layers):
                what = f"{l['name']} N={n} {precision} {layout}"
                note = over_budget(args.compile_budget, t0, longest)
                if note:
                    record(l["name"], n, precision, layout, None, "compile", note)
                    print(f"  torch.compile {what}: {note}", flush=True)
                    continue
                t1 = time.time()
                fn, cache = make_compiled(*(l[k] for k in CONV_KEYS), n, precision, layout)
                try:
                    record(l["name"], n, precision, layout, fn, "compile")
                except Exception as e:  # one configuration that fails to compile: say so, go on
                    record(l["name"], n, precision, layout, None, "compile", f"compile failed: {error_text(e)}")
                    print(f"  torch.compile {what} failed: {e}", flush=True)
                finally:
                    shutil.rmtree(cache, ignore_errors=True)
                longest = max(longest, time.time() - t1)
                print(f"  compile {what}: {time.time() - t1:.0f} s with compilation", flush=True)
    out.file.close()
    rows = [r for r in out.rows if r["ms"] is not None]
    anchor_table(rows, layers, precisions, batches, [int(b) for b in args.compile_batches.split(",") if b], out.fixed)
    print(f"({len(rows)} rows in {time.time() - t0:.0f} s -> {args.csv})")
    return 0


def anchor_table(rows, layers, precisions, batches, compile_batches, fixed) -> None:
    """A line per (precision, layout, N): ms per layer, the total (each layer times its count)."""
    names = [l["name"] for l in layers]
    count = {l["name"]: int(l.get("count", 1)) for l in layers}
    ms = {(r["impl"], r["layer"], r["N"], r["precision"], r["layout"]): r["ms"] for r in rows}

    def line(impl, precision, layout, n):  # printed when a layer has a time
        vals = [ms.get((impl, name, n, precision, layout)) for name in names]
        if all(v is None for v in vals):
            return False
        cells = " | ".join(f"{v:6.3f}" if v is not None else "     -" for v in vals)
        total = sum(v * count[name] for name, v in zip(names, vals) if v is not None)
        label = ("compile " if impl == "compile" else "") + precision + " " + layout.upper() + " " + str(n)
        print(f"| {label:<22} | {cells} | {total:6.3f} |")
        return True
    print(f"\nPyTorch {torch.__version__}, cuDNN {fixed['cudnn']}, {fixed['device']}: ms, median of {REPEATS}, "
          f"L2 flushed")
    head = f"| {'precision, layout, N':<22} | " + " | ".join(f"{n:>6}" for n in names) + " |  total |"
    print(head)
    print("|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|")
    for precision, layout, n in itertools.product(precisions, LAYOUTS, batches):
        line("eager", precision, layout, n)
    for precision in ("fp16", "tf32"):
        v = ms.get(("eager", "conv1-s2d", 128, precision, "nhwc"))
        if v is not None:
            print(f"conv1 by space-to-depth (48 ch 57x57, 3x3 s1), {precision} NHWC N=128: {v:.3f} ms")
    printed = set()
    for precision, layout, n in itertools.product(PRECISIONS, LAYOUTS, batches + compile_batches):
        if (n, precision, layout) not in printed and line("compile", precision, layout, n):
            printed.add((n, precision, layout))


# ---- the chain mode (issue 52): the table run as one network ----

CHAIN_COLUMNS = ("table", "N", "precision", "layout", "impl", "status", "ms", "p10_ms", "p90_ms", "min_ms", "p99_ms",
                 "repeats", "max_rel_err", "worst_layer", "threshold", "data", "host_us", "setup_s", "note",
                 "device", "torch", "cudnn", "git_rev", "timestamp", "process")
CHAIN_FORMAT = dict({c: "{:.5f}" for c in ("ms", "p10_ms", "p90_ms", "min_ms", "p99_ms")}, max_rel_err="{:.3e}",
                    threshold="{:g}", host_us="{:.1f}", setup_s="{:.1f}")
CHAIN_THRESHOLD = {"fp16": 5e-3, "bf16": 2e-2, "tf32": 1e-2, "fp32": 1e-4}  # bench/chain_tolerance.cpp's
IMPLS, POOLS = ("eager", "graph", "compile"), ("none", "max3x3s2")
MIN_REPEATS, MIN_TAIL, P99_FROM = 20, 200, 100


class BadInput(Exception):
    pass


def warn(message) -> None:
    print(f"pytorch_anchors --chain: {message}", file=sys.stderr)


def parse_list(text, what, allowed=None, cast=str):
    out = []
    for item in (t.strip().lower() for t in text.split(",") if t.strip()):
        try:
            v = cast(item)
        except ValueError:
            raise BadInput(f"--{what}: '{item}' is not a number") from None
        if allowed is not None and v not in allowed or cast is int and v < 1:
            raise BadInput(f"--{what}: unknown '{item}' (one of {', '.join(allowed)})" if allowed is not None
                           else f"--{what}: {v} must be at least 1")
        out += [] if v in out else [v]
    if not out:
        raise BadInput(f"--{what}: empty list")
    return out


def chain_layers(layers):
    """The layers with ops and pooled sizes PE, PF, or BadInput in core/layer.cpp's chain_error's words."""
    out = []
    for l in layers:
        name = str(l.get("name"))
        for k in CONV_KEYS:
            v, least = l[k], 0 if k == "pad" else 1
            if not isinstance(v, int) or isinstance(v, bool) or v < least:
                raise BadInput(f"layer '{name}': field '{k}' must be an integer >= {least}, got {v!r}")
        if l.get("count", 1) != 1:
            raise BadInput(f"not a chain: layer '{name}' has count {l.get('count', 1)} (a table of distinct shapes, "
                           f"not the network's sequence of layers)")
        ops = {"bias": l.get("bias", False), "relu": l.get("relu", False), "pool": l.get("pool", "none")}
        if not isinstance(ops["bias"], bool) or not isinstance(ops["relu"], bool) or ops["pool"] not in POOLS:
            raise BadInput(f"layer '{name}': bias and relu must be true or false, pool \"none\" or \"max3x3s2\"")
        E = (l["H"] + 2 * l["pad"] - l["R"]) // l["stride"] + 1
        Fo = (l["W"] + 2 * l["pad"] - l["S"]) // l["stride"] + 1
        pooled = ops["pool"] == "max3x3s2"
        if E < (3 if pooled else 1) or Fo < (3 if pooled else 1):
            raise BadInput(f"layer '{name}': output {E}x{Fo} is too small{' for its pool' if pooled else ''}")
        p = out[-1] if out else None
        if p and (l["C"], l["H"], l["W"]) != (p["M"], p["PE"], p["PF"]):
            raise BadInput(f"not a chain: layer '{name}' takes C,H,W = {l['C']},{l['H']},{l['W']} but layer "
                           f"'{p['name']}' gives M,E,F = {p['M']},{p['PE']},{p['PF']}"
                           + ("" if p["pool"] == "none" else f" after its pool {p['pool']}"))
        PE, PF = ((E - 3) // 2 + 1, (Fo - 3) // 2 + 1) if pooled else (E, Fo)
        out.append(dict({k: l[k] for k in CONV_KEYS}, name=name, PE=PE, PF=PF, **ops))
    return out


def load_golden(root, table_name, layers, batches):
    """{N: data} of each N of batches root's chain manifest lists, every file checked (by
    tests/gpu/pytorch_chain_agreement.py's reader), the manifest against the table; {} without one."""
    if not os.path.isdir(root):
        raise BadInput(f"--golden {root}: no such directory")
    stem = table_name  # goldenio/golden.cpp's golden_table_name: a path's stem, odd characters as _
    if os.sep in stem or stem.endswith(".json"):
        stem = os.path.splitext(os.path.basename(stem))[0]
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", stem)
    chain_dir = os.path.join(root, "table" if stem in ("", ".", "..") else stem, "chain")
    path = os.path.join(chain_dir, "manifest.json")
    if not os.path.exists(path):
        warn(f"no {path}: generated data for every N (make the files with: convstudy generate --chain --table "
             f"{table_name} --batch {','.join(map(str, batches))} --out {root})")
        return {}
    sys.path.insert(0, os.path.join(ROOT, "tests", "gpu"))
    sys.dont_write_bytecode = True  # no __pycache__ in tests/gpu/
    try:
        import pytorch_chain_agreement as agreement  # the chain golden reader (imports numpy)
    except ImportError as e:
        raise BadInput(f"reading {path} needs numpy ({e})") from None
    keys, sets = CONV_KEYS + ("bias", "relu", "pool"), {}
    try:
        with open(path) as f:
            m = json.load(f)
        if m.get("kind") != "chain":
            raise BadInput(f"{path}: not a chain golden manifest")
        recorded = m["layer_table"]["layers"]
        if [r["name"] for r in recorded] != [l["name"] for l in layers]:
            raise BadInput(f"{path}: records layers {[r['name'] for r in recorded]}, the table has "
                           f"{[l['name'] for l in layers]}")
        for r, l in zip(recorded, layers):
            if any(r[k] != l[k] for k in keys):
                raise BadInput(f"{path}: records layer '{l['name']}' as {dict((k, r[k]) for k in keys)}, the table "
                               f"has {dict((k, l[k]) for k in keys)}")
        entries, listed = {e["path"]: e for e in m["files"]}, {int(e["N"]) for e in m["files"]}
        for n in (n for n in batches if n in listed):
            file = lambda rel: agreement.load(chain_dir, entries, f"n{n}/{rel}.npy")  # noqa: E731
            d = {"source": "golden", "input": file("input"), "weights": [], "bias": [], "output": []}
            for l, t in itertools.product(layers, ("weights", "bias", "output")):
                d[t].append(file(f"{l['name']}.{t}") if t != "bias" or l["bias"] else None)
            want = [(n,) + tuple(layers[0][k] for k in "CHW")] + [(n, l["M"], l["PE"], l["PF"]) for l in layers]
            if [tuple(a.shape) for a in [d["input"]] + d["output"]] != want:
                raise BadInput(f"{chain_dir}: the N={n} set's shapes do not follow the table")
            d["gmax"] = [float(abs(o).max()) if o.size else 0.0 for o in d["output"]]
            sets[n] = d
    except agreement.BadGolden as e:
        raise BadInput(str(e)) from None
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise BadInput(f"{path}: malformed ({type(e).__name__}: {e})") from None
    missing = [n for n in batches if n not in sets]
    if missing:
        warn(f"{path} lists no set for N={','.join(map(str, missing))}: generated data there")
    return sets


def generated_data(layers, n):
    """The study's distributions from torch's generator (float32, on the host)."""
    g = torch.Generator()
    g.manual_seed(1234 + n)
    uni = lambda *shape: torch.rand(shape, generator=g) * 2 - 1  # noqa: E731  U[-1, 1)
    d = {"source": "generated", "input": uni(n, *(layers[0][k] for k in "CHW")), "weights": [], "bias": [],
         "output": None, "gmax": None}
    for l in layers:
        d["weights"].append(uni(l["M"], l["C"], l["R"], l["S"]) * math.sqrt(3.0 / (l["C"] * l["R"] * l["S"])))
        d["bias"].append(uni(l["M"]) * (0.5 / math.sqrt(3.0)) if l["bias"] else None)
    return d


class Chain(torch.nn.Module):
    """The table as a network; forward returns every layer's post-op output."""

    def __init__(self, layers, weights, biases):
        super().__init__()
        self.ops = [(f"w{i}", f"b{i}", l["stride"], l["pad"], l["relu"], l["pool"] == "max3x3s2")
                    for i, l in enumerate(layers)]
        for (wname, bname, *_), w, b in zip(self.ops, weights, biases):
            self.register_parameter(wname, torch.nn.Parameter(w, requires_grad=False))
            self.register_parameter(bname, None if b is None else torch.nn.Parameter(b, requires_grad=False))

    def forward(self, x):
        outs = []
        for wname, bname, stride, pad, relu, pool in self.ops:
            x = F.conv2d(x, getattr(self, wname), getattr(self, bname), stride, pad)
            x = F.relu(x) if relu else x
            x = F.max_pool2d(x, 3, 2) if pool else x
            outs.append(x)
        return tuple(outs)


def make_runner(impl, model, x):
    """(run, note): run() is one forward of impl, returning the layers' outputs."""
    if impl == "eager":
        return (lambda: model(x)), ""
    if impl == "graph":
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # cuDNN's benchmark search happens here, outside the capture
            for _ in range(3):
                model(x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outs = model(x)
        for o in outs:
            o.fill_(float("nan"))  # the checked replay must write every output
        # keep=x holds the input alive: the graph reads its memory, which the allocator would hand on
        return (lambda keep=x: graph.replay() or outs), ""
    mark = getattr(torch._dynamo, "mark_static_address", None)
    if mark is not None:
        mark(x)
    compiled = torch.compile(model, mode="max-autotune", dynamic=False)
    step = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None) or (lambda: None)
    note = "" if mark is not None else "no mark_static_address: the input may be copied into the graph"
    return (lambda: step() or compiled(x)), note


def measure(layers, data, precision, layout, impl, timer, repeats, spin):
    """One configuration's row fields (status, times, check), the row's other fields aside."""
    t0, limit = time.time(), CHAIN_THRESHOLD[precision]
    set_fp32_precision(precision == "tf32")

    def dev(a):  # on the GPU in the configuration's dtype and layout
        t = (a if isinstance(a, torch.Tensor) else torch.from_numpy(a)).to("cuda", DTYPES[precision])
        return t.contiguous(memory_format=torch.channels_last) if layout == "nhwc" and t.dim() == 4 else t
    model = Chain(layers, [dev(a) for a in data["weights"]], [None if a is None else dev(a) for a in data["bias"]])
    run, note = make_runner(impl, model, dev(data["input"]))
    row = {"status": "UNCHECKED", "note": note}

    def checked(when, then=""):  # one run, within the limit against the golden outputs (if any)?
        outs = run()
        torch.cuda.synchronize()
        if data["output"] is None:
            return True
        worst, where = -1.0, ""
        for l, o, g, gmax in zip(layers, outs, data["output"], data["gmax"]):
            if tuple(o.shape) != tuple(g.shape):
                raise RuntimeError(f"layer {l['name']}: output shape {tuple(o.shape)}, golden {tuple(g.shape)}")
            o = o.float()
            d = float((o - torch.from_numpy(g).to(o.device)).abs().max()) if o.numel() else 0.0
            rel = math.inf if not bool(torch.isfinite(o).all()) else d / gmax if gmax > 0 else d
            worst, where = (rel, l["name"]) if rel > worst else (worst, where)
        if "max_rel_err" not in row or worst > row["max_rel_err"]:  # the worst of the checked runs
            row.update(max_rel_err=worst, worst_layer=where, threshold=limit)
        if not worst <= limit:
            row.update(status="FAIL", ms=None, note=f"{when}: layer {where}: max_rel_err {worst:.3g} over the "
                                                    f"chain limit {limit:g}{then}")
        return worst <= limit
    if not checked("checked run", "; not timed"):
        return row
    row["setup_s"] = time.time() - t0
    host, last = [], [None]

    def timed():  # one forward; its host seconds and its outputs kept
        t = time.perf_counter()
        last[0] = run()
        host.append(time.perf_counter() - t)
    v = sorted(timer.time(timed, repeats=repeats, spin=spin))

    def q(p):  # convstudy's Stat: linear interpolation between sorted runs
        at = p * (len(v) - 1)
        lo, hi = int(at), min(int(at) + 1, len(v) - 1)
        return v[lo] + (at - lo) * (v[hi] - v[lo])
    host = sorted(host[WARMUP:])  # the timed calls'
    row.update(ms=q(0.5), p10_ms=q(0.1), p90_ms=q(0.9), min_ms=v[0], p99_ms=q(0.99) if len(v) >= P99_FROM else None,
               repeats=repeats, host_us=1e6 * host[len(host) // 2])
    if data["output"] is not None:
        for o in last.pop():
            o.fill_(float("nan"))  # the run after timing must write every output again
        if checked("run after timing"):
            row["status"] = "PASS"
    return row


def chain_args(argv):
    ap = argparse.ArgumentParser(prog=os.path.basename(sys.argv[0]) + " --chain", description="PyTorch on a chain "
                                 "table run as a network: the peer of `convstudy chain` (issue 52).")
    opt = ap.add_argument
    opt("csv", help="output CSV path")
    opt("--table", default="alexnet", help="a built-in table's name or a chain table's path (default alexnet)")
    opt("--golden", default="", help="root of the golden files (convstudy's golden/; default: none, generated data)")
    opt("--batches", default="1,32,128", help="comma-separated N (default 1,32,128)")
    opt("--precisions", default="fp16,bf16", help="of fp16, bf16, tf32, fp32 (default fp16,bf16)")
    opt("--layouts", default="nchw,nhwc", help="of nchw, nhwc (default both)")
    opt("--impls", default=",".join(IMPLS), help="of eager, graph, compile (default all)")
    opt("--repeats", type=int, default=MIN_REPEATS, help=f"timed runs (at least {MIN_REPEATS})")
    opt("--tail-repeats", type=int, default=MIN_TAIL,
        help=f"timed runs at N=1, for the p99 (at least {MIN_TAIL}; 0: --repeats)")
    opt("--compile-budget", type=float, default=0,
        help="seconds from the start after which no compile configuration starts (0: no limit)")
    opt("--process", type=int, default=1, help="the process's number in its rows (default 1)")
    opt("--spin-cycles", type=int, default=SPIN_CYCLES,
        help=f"the spin kernel's length before each timed run, in GPU cycles (default {SPIN_CYCLES})")
    args = ap.parse_args(argv)
    if args.repeats < MIN_REPEATS:
        raise BadInput(f"--repeats {args.repeats}: at least {MIN_REPEATS}")
    if args.tail_repeats != 0 and args.tail_repeats < MIN_TAIL:
        raise BadInput(f"--tail-repeats {args.tail_repeats}: 0 or at least {MIN_TAIL}")
    if args.process < 1 or args.spin_cycles < 0 or not args.compile_budget >= 0:
        raise BadInput("--process must be >= 1, --spin-cycles and --compile-budget >= 0")
    args.batches = parse_list(args.batches, "batches", cast=int)
    args.precisions = parse_list(args.precisions, "precisions", tuple(CHAIN_THRESHOLD))
    args.layouts = parse_list(args.layouts, "layouts", LAYOUTS)
    args.impls = parse_list(args.impls, "impls", IMPLS)
    try:
        args.table_name, raw = load_table(args.table)
        args.layers = chain_layers(raw)
    except (BadInput, OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise BadInput(f"--table {args.table}: {e}") from None
    return args


def chain_main(argv) -> int:
    try:
        args = chain_args(argv)
        golden = load_golden(args.golden, args.table_name, args.layers, args.batches) if args.golden else {}
        try:
            out = Csv(args.csv, CHAIN_COLUMNS, CHAIN_FORMAT)
            out.file.flush()  # the header, before the first configuration
        except OSError as e:
            raise BadInput(f"{args.csv}: {e}") from None
    except BadInput as e:
        warn(e)
        return 2
    if not torch.cuda.is_available():
        out.file.close()
        os.remove(args.csv)
        warn("no CUDA device")
        return 4
    out.fixed = dict(versions(), table=args.table_name, process=args.process)
    print(f"torch {torch.__version__}, cuDNN {out.fixed['cudnn']}, {out.fixed['device']}, convstudy "
          f"{out.fixed['git_rev']}, process {args.process}", flush=True)
    timer, t0, longest, failed, datasets = Timer(), time.time(), 0.0, False, {}
    # every eager and graph configuration first, N=1 first, then the compile ones in the same order
    order = [c for phase in ([i for i in args.impls if i != "compile"], [i for i in args.impls if i == "compile"])
             for c in itertools.product(args.batches, args.precisions, args.layouts, phase)]
    with torch.no_grad():  # not inference_mode: torch.compile traces ordinary tensors
        for n, precision, layout, impl in order:
            if n not in datasets:
                datasets[n] = golden.get(n) or generated_data(args.layers, n)
            repeats = max(args.repeats, args.tail_repeats) if n == 1 else args.repeats
            t1, cache = time.time(), None
            note = over_budget(args.compile_budget, t0, longest) if impl == "compile" else None
            if note:
                row = {"status": "SKIPPED", "note": note}
            else:
                try:  # a compile configuration in fresh caches, removed after it
                    cache = fresh_compile_cache() if impl == "compile" else None
                    row = measure(args.layers, datasets[n], precision, layout, impl, timer, repeats, args.spin_cycles)
                except Exception as e:  # one configuration that fails: say so, go on
                    row = {"status": "ERROR", "note": error_text(e)}
                finally:
                    if cache is not None:
                        torch._dynamo.reset()
                        shutil.rmtree(cache, ignore_errors=True)
                    gc.collect()
                    torch.cuda.empty_cache()
                failed |= row["status"] == "FAIL" or (row["status"] == "ERROR" and impl != "compile")
                longest = max(longest, time.time() - t1) if impl == "compile" else longest
            out.write(N=n, precision=precision, layout=layout, impl=impl, data=datasets[n]["source"], **row)
            ms = f"{row['ms']:.3f} ms" if row.get("ms") is not None else "-"
            print(f"  N={n} {precision} {layout} {impl}: {row['status']} {ms} ({time.time() - t1:.0f} s) "
                  f"{row.get('note', '')}", flush=True)
    out.file.close()
    by = {(r["N"], r["precision"], r["layout"], r["impl"]): r for r in out.rows}

    def cell(r):  # the summary's: the median (and p99), else the status
        if r is None or r.get("ms") is None:
            return f"{'-' if r is None else r['status']:>20}"
        return f"{r['ms']:9.3f}" + (f" p99 {r['p99_ms']:6.3f}" if r.get("p99_ms") is not None else " " * 11)
    print("\nPyTorch chain: ms per forward, median (and p99 where measured), L2 flushed")
    print(f"| {'N, precision, layout':<22} | " + " | ".join(f"{i:>20}" for i in args.impls)
          + " | data      | max_rel_err |")
    for n, p, lay in itertools.product(args.batches, args.precisions, args.layouts):
        rs = [by.get((n, p, lay, i)) for i in args.impls]
        if any(r is not None for r in rs):
            errs = [r["max_rel_err"] for r in rs if r and r.get("max_rel_err") is not None]
            data = next((r["data"] for r in rs if r), "")
            print(f"| {f'{n} {p} {lay.upper()}':<22} | " + " | ".join(cell(r) for r in rs) +
                  f" | {data:<9} | " + (f"{max(errs):11.3e}" if errs else f"{'-':>11}") + " |")
    print(f"({len(out.rows)} rows in {time.time() - t0:.0f} s -> {args.csv})")
    return 1 if failed else 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--chain" in argv:  # the chain mode, its own options
        return chain_main([a for a in argv if a != "--chain"])
    return anchor_main(argv)


if __name__ == "__main__":
    sys.exit(main())
