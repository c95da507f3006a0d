"""Common input and formatting: the CSV loader, the per-device Data view, number formats
and markdown tables. No matplotlib here except the colour and order constants."""

import csv
import gzip
import json
import math
import os
import re
import statistics

from . import classes

MEM_ORDER = ["pageable", "pinned", "streams", "managed-prefetch", "managed"]
# The precision classes in the order of the tables and figures, their colours, and each variant's
# ladder: the program's (`convstudy list --json`, "precisions" and the variants' "ladder"),
# through the copy beside this file that a CPU test keeps equal to it.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "registry.json"), encoding="utf-8") as _f:
    _REGISTRY = json.load(_f)
_PRECISIONS = _REGISTRY["precisions"]
# variant -> its ladder in the registry now: for CSVs older than the `ladder` column
REGISTRY_LADDER = _REGISTRY["ladders"]
PREC_ORDER = [p["name"] for p in _PRECISIONS]
PREC_COLOR = {p["name"]: p["colour"] for p in _PRECISIONS}
# algo values whose TFLOP/s are the direct convolution's FLOPs over the time ("effective")
EFFECTIVE_ALGOS = ("winograd", "fft")
DEFAULT_LAYOUT = "nchw"  # rows of CSVs without a `layout` column
COPY_COLOR = {"h2d": "#4c72b0", "kernel": "#dd8452", "d2h": "#55a868"}
UNCOALESCED = "-uncoalesced"
ANCHOR_FAMILY = "cudnn"
REQUIRED = ["device", "layer", "N", "variant", "memory", "status"]
NUMERIC = ["max_abs_err", "max_rel_err", "rel_l2_err", "threshold", "kernel_ms", "kernel_min_ms",
           "kernel_max_ms", "h2d_ms", "d2h_ms", "total_ms", "setup_ms", "overlap", "cpu_ms",
           "cpu_onednn_ms", "speedup_kernel", "speedup_total", "vs_cudnn", "gflop", "tflops",
           "pct_peak", "peak_tflops", "workspace_bytes", "device_bytes",
           # newer columns (absent from older CSVs: None)
           "total_min_ms", "total_max_ms", "convert_ms", "vs_cudnn_best", "gemm_ceiling_ms", "im2col_gemm_ms", "copy_gbs",
           "kernel_p10_ms", "kernel_p90_ms", "total_p10_ms", "total_p90_ms", "search_ms",
           "ours_over_cudnn", "ours_over_cudnn_any_layout", "cudnn_retime_ms", "sm_clock_mhz_start",
           "sm_clock_mhz_end", "power_w_start", "power_w_end", "cudnn_processes", "cudnn_process_ms",
           "cudnn_process_min_ms", "cudnn_process_max_ms", "recheck_ms", "checked_runs"]
# library rows: the anchors and ceilings, never "ours"
LIBRARY_FAMILIES = ("cudnn", "cudnn-legacy", "cublas")
DPI = 110


def open_text(path):
    """A text file for reading, gzip-compressed (.csv.gz: told by its first two bytes) or not."""
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    if gz:
        return gzip.open(path, "rt", newline="", encoding="utf-8")
    return open(path, newline="", encoding="utf-8")


PYTORCH_COLUMNS = {"layer", "N", "precision", "layout", "ms"}


def is_pytorch_csv(path):
    """True for a scripts/pytorch_anchors.py CSV (layer, N, precision, layout, ms; no variant)."""
    with open_text(path) as f:
        head = next(csv.reader(f), [])
    return PYTORCH_COLUMNS <= set(head) and "variant" not in head


def read_pytorch(paths):
    """Rows of PyTorch anchor CSVs: impl `eager` (cuDNN; the default of older CSVs) or
    `compile` (torch.compile); rows without a time (a configuration left out) are skipped."""
    rows = []
    for p in paths:
        with open_text(p) as f:
            for r in csv.DictReader(f):
                try:
                    ms, n = float(r["ms"]), int(r["N"])
                except (KeyError, ValueError):
                    continue
                rows.append({"layer": r["layer"], "N": n, "precision": r["precision"], "layout": r["layout"],
                             "impl": r.get("impl") or "eager", "ms": ms, "torch": r.get("torch", ""),
                             "cudnn": r.get("cudnn", ""), "git_rev": r.get("git_rev", ""),
                             "device": r.get("device", ""), "table": r.get("table", ""), "_src": p})
    return rows


def _num(s):
    if s is None:
        return None
    s = s.strip()
    if not s:
        return None
    try:
        v = float(s)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def _scale_text(v):
    """A data scale as the CSV has it, powers of two as 2^k."""
    x = _num(v)
    if x is None or x <= 0:
        return str(v)
    k = math.log2(x)
    return f"2^{int(k)}" if k == int(k) and k != 0 else ("1" if k == 0 else str(v))


def load(paths):
    """Rows of all CSVs, later (device, layer, N, variant, memory, layout, axes, data scales; a
    chain row's algo) replacing earlier ones.

    Columns are read by header name; older CSVs lack `layout` (nchw), `algo` and the other
    newer columns (see classes.py for the anchor and ceiling classes of CSVs older than
    those columns). A row in another layout than nchw is its own variant for the figures:
    its `variant` becomes "name/layout" (the registry name stays in `_variant`); so is a row
    that set axes ("name[tile=...]", a tile sweep's) or ran on scaled data
    ("name@x2^20,w2^-24", a range sweep's), instead of replacing the plain row."""
    rows = {}
    layer_order = []
    seq = 0
    for path in paths:
        with open_text(path) as f:
            rd = csv.DictReader(f)
            missing = [c for c in REQUIRED if c not in (rd.fieldnames or [])]
            if missing:
                raise SystemExit(f"plot.py: {path}: not a convstudy CSV (missing column(s): "
                                 f"{', '.join(missing)})")
            for lineno, raw in enumerate(rd, start=2):
                r = {k: (v or "").strip() for k, v in raw.items() if k is not None}
                try:
                    r["N"] = int(float(r["N"]))
                except ValueError:
                    print(f"plot.py: {path}:{lineno}: bad N {r['N']!r}, row ignored")
                    continue
                for c in NUMERIC:
                    r[c] = _num(r.get(c))
                r["status"] = r["status"].upper()
                r.setdefault("family", "")
                r["family"] = r["family"] or "(none)"
                r["_src"] = path
                r["_rec"] = lineno - 1  # the record number `convstudy compare --json` names
                r["_seq"] = seq
                seq += 1
                r["_has_algo"] = "algo" in rd.fieldnames
                classes.fill(r)
                r["_variant"] = r["variant"]
                r["layout"] = r.get("layout") or DEFAULT_LAYOUT
                if r["layout"] != DEFAULT_LAYOUT:
                    r["variant"] = f"{r['variant']}/{r['layout']}"
                if r.get("axes"):
                    r["variant"] = f"{r['variant']}[{r['axes']}]"
                scales = [(k, r.get(c)) for k, c in (("x", "input_scale"), ("w", "weight_scale"))]
                if any(v not in (None, "", "1") and _num(v) != 1.0 for _, v in scales):
                    r["variant"] += "@" + ",".join(f"{k}{_scale_text(v)}" for k, v in scales)
                if r["layer"] not in layer_order:
                    layer_order.append(r["layer"])
                # A chain's rows (scope chain) of one variant: the graph of kernels and the megakernel
                # (algo chain, megakernel) are two rows, not a row and its replacement.
                chain_algo = r.get("algo", "") if r.get("scope") == "chain" else ""
                key = (r["device"], r["layer"], r["N"], r["variant"], r["memory"], chain_algo)
                rows.pop(key, None)
                rows[key] = r
    return list(rows.values()), layer_order


ELEM_BYTES = {"f32": 4, "f16": 2, "bf16": 2}


def min_bytes(r):
    """Bytes a row must move at least: input, weights and output once, in its io_dtype."""
    try:
        n, c, h, w_, m, rr, ss, e, f = (int(r["N"]), int(r["C"]), int(r["H"]), int(r["W"]), int(r["M"]),
                                        int(r["R"]), int(r["S"]), int(r["E"]), int(r["F"]))
    except (KeyError, ValueError, TypeError):
        return None
    b = ELEM_BYTES.get(r.get("io_dtype", ""), 4)
    return (n * c * h * w_ + m * c * rr * ss + n * m * e * f) * b


def ok(r):
    return r["status"] == "PASS" and r["kernel_ms"] is not None and r["kernel_ms"] > 0


# ----------------------------------------------------------------------------------------
# formatting helpers

def fnum(v, dash="—"):
    """Three significant figures without exponents for the usual range."""
    if v is None:
        return dash
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    if a == 0:
        return "0"
    if a >= 0.001:
        return f"{v:.3g}"
    return f"{v:.2e}"


def fexp(v, dash="—"):
    return dash if v is None else ("0" if v == 0 else f"{v:.2e}")


def fx(v, dash="—"):
    return dash if v is None else fnum(v) + "×"


def md_table(header, rows, align=None):
    align = align or ["l"] + ["r"] * (len(header) - 1)
    sep = ["---:" if a == "r" else ":---" if a == "l" else ":---:" for a in align]
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    for r in rows:
        out.append("| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |")
    return "\n".join(out)


def slug(s):
    return re.sub(r"[^A-Za-z0-9._-]+", "_", s).strip("_") or "device"


def date_range(rows):
    ds = sorted({r.get("timestamp", "")[:10] for r in rows if r.get("timestamp")})
    if not ds:
        return "date unknown"
    return ds[0] if len(ds) == 1 else f"{ds[0]} – {ds[-1]}"


# ----------------------------------------------------------------------------------------
# the data of one device

class Data:
    def __init__(self, rows, layer_order, title_suffix=""):
        self.rows = rows
        self.all_rows = rows  # a subset's whole run (the anchors of its ratios)
        self.device = rows[0]["device"] if rows else "unknown device"
        self.suffix = title_suffix
        self.layers = [l for l in layer_order if any(r["layer"] == l for r in rows)]
        self.families, self.precision, self.ladder = {}, {}, {}
        for r in rows:
            self.families.setdefault(r["variant"], r["family"])
            if r.get("ladder"):  # schema 3 on: the registry's ladder of the row's rung
                self.ladder.setdefault(r["variant"], r["ladder"])
            if r.get("precision"):
                self.precision.setdefault(r["variant"], r["precision"])
        fam_order = []
        for r in rows:  # families in the order the data first shows them (the registry's order)
            if r["family"] not in fam_order:
                fam_order.append(r["family"])
        self.variants = sorted(self.families, key=lambda v: (fam_order.index(self.families[v]), v))
        self.Ns = sorted({r["N"] for r in rows})
        self.idx = {(r["layer"], r["N"], r["variant"], r["memory"]): r for r in rows}
        self.modes = {}
        for r in rows:
            self.modes.setdefault(r["variant"], set()).add(r["memory"])
        self.default_mode = {v: self._pick_mode(self.modes[v]) for v in self.variants}
        # main batch sizes: run by at least half of the variants that have any PASS row
        per_n = {n: {r["variant"] for r in rows if r["N"] == n and ok(r)} for n in self.Ns}
        most = max((len(s) for s in per_n.values()), default=0)
        self.main_Ns = [n for n in self.Ns if most and len(per_n[n]) * 2 >= most] or self.Ns
        # the fp32 ceiling (older CSVs: every row's peak_tflops is the fp32 FMA ceiling; newer
        # ones carry each row's own precision class's ceiling, so take the fp32 rows')
        peaks = [r["peak_tflops"] for r in rows if r["peak_tflops"] and r.get("precision") == "fp32"] \
            or [r["peak_tflops"] for r in rows if r["peak_tflops"]]
        self.peak = statistics.median(peaks) if peaks else None
        # newer CSVs (an `algo` column): peak_tflops per precision class, copy bandwidth
        self.has_algo = any(r.get("_has_algo") for r in rows)
        self.class_peaks = {}
        if self.has_algo:
            for p in sorted({r.get("precision", "") for r in rows}):
                ps = [r["peak_tflops"] for r in rows if r.get("precision") == p and r["peak_tflops"]]
                if ps:
                    self.class_peaks[p] = statistics.median(ps)
        gbs = [r["copy_gbs"] for r in rows if r.get("copy_gbs")]
        self.copy_gbs = statistics.median(gbs) if gbs else None
        # each family's variants in the order the rows first show them (the registry's order:
        # a family's ladder, rung by rung)
        first = {}
        for r in rows:
            first[r["variant"]] = min(first.get(r["variant"], r["_seq"]), r["_seq"])
        self.rungs = {}
        for v in sorted(first, key=lambda v: first[v]):
            self.rungs.setdefault(self.families[v], []).append(v)
        self.family_order = fam_order

    def subset(self, families):
        """The same run restricted to some families (a figure split to a readable size): the
        run-wide values (ceilings, main batch sizes, copy bandwidth) stay the whole run's."""
        sub = Data([r for r in self.rows if r["family"] in families], self.layers, self.suffix)
        for k in ("main_Ns", "peak", "class_peaks", "copy_gbs", "has_algo", "device", "all_rows"):
            setattr(sub, k, getattr(self, k))
        return sub

    def view(self, variants, note=""):
        """The same run with only `variants`, in that order (a figure's rows), `note` added to
        every title; the run-wide values stay the whole run's (as subset)."""
        keep = set(variants)
        sub = Data([r for r in self.rows if r["variant"] in keep], self.layers,
                   " · ".join(x for x in (self.suffix, note) if x))
        for k in ("main_Ns", "peak", "class_peaks", "copy_gbs", "has_algo", "device", "all_rows"):
            setattr(sub, k, getattr(self, k))
        sub.variants = [v for v in variants if v in sub.families]
        return sub

    def ranking_cell(self, layer=None):
        """The cell a ranking figure sorts its rows by: the layer given (else conv2 if the run
        has it, else its first layer) at the largest main N."""
        return layer or ("conv2" if "conv2" in self.layers else self.layers[0]), max(self.main_Ns)

    def ranked(self, layer=None):
        """A view whose rows are sorted by kernel time on one cell (ranking_cell), fastest first;
        variants without a PASS row there follow in registry order. Every panel of a figure
        drawn from it keeps that one order."""
        layer, n = self.ranking_cell(layer)

        def key(v):
            r = self.getok(layer, n, v)
            return (0, r["kernel_ms"]) if r else (1, self.variants.index(v))
        return self.view(sorted(self.variants, key=key), f"rows sorted by kernel time on {layer} at N={n}")

    @staticmethod
    def _pick_mode(modes):
        for m in MEM_ORDER:
            if m in modes:
                return m
        return sorted(modes)[0]

    def get(self, layer, n, variant, memory=None):
        return self.idx.get((layer, n, variant, memory or self.default_mode[variant]))

    def getok(self, layer, n, variant, memory=None):
        r = self.get(layer, n, variant, memory)
        return r if r is not None and ok(r) else None

    def label(self, v, memory=None):
        m = memory or self.default_mode[v]
        return v if m == "pageable" else f"{v} [{m}]"

    def modes_of(self, v):
        return sorted(self.modes[v], key=lambda m: (MEM_ORDER.index(m) if m in MEM_ORDER else 99, m))

    def title(self, what, rows=None):
        rows = rows if rows else self.rows
        t = f"{what}\n{self.device} · sweep {date_range(rows)}"
        return t + (f" · {self.suffix}" if self.suffix else "")

    def provenance(self, rows, note=""):
        rows = [r for r in rows if r is not None]
        if not rows:
            rows = self.rows
        files = []
        for r in rows:
            if r["_src"] not in files:
                files.append(r["_src"])
        src = ", ".join(f"`{f}`" for f in files)
        s = f"*Source: {src} · {self.device} · sweep {date_range(rows)} · {len(rows)} rows"
        return s + (f" · {note}*" if note else "*")

    def cpu_ms(self, layer, n):
        vals = [r["cpu_ms"] for r in self.rows if r["layer"] == layer and r["N"] == n and r["cpu_ms"]]
        return statistics.median(vals) if vals else None


def log_line(path, pattern, root=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))):
    """(first line without '# ', last line matching `pattern`) of a committed text file (path
    relative to the repository root); ValueError naming the file when missing or unmatched."""
    full = os.path.join(root, path)
    if not os.path.isfile(full):
        raise ValueError(f"{path}: no such committed file")
    with open_text(full) as f:
        lines = f.read().splitlines()
    hit = [ln for ln in lines if re.search(pattern, ln)]
    if not hit:
        raise ValueError(f"{path}: no line matches {pattern!r}")
    return lines[0].lstrip("# "), hit[-1].strip()
