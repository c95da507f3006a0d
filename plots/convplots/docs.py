"""Numbers in prose come from data: every table and number of README.md and docs/*.md that a
measurement gives is generated from the committed results (results/h200/) between markers

    <!-- BEGIN generated:KIND key=value ... -->
    ...
    <!-- END generated:KIND -->

KIND names a generator (GENERATORS) and the key=value pairs are its query, written once in
the document: `ladder family=hopper precision=fp16 layout=nhwc` is the table of that ladder.
`--update` rewrites the blocks, `--check` (ctest docs_generated, label cpu) exits 1 naming
every block whose text differs from what the committed files give. The prose-number lint
(lint.py) checks what lies outside the blocks.
"""

import itertools
import os
import re
import statistics
import subprocess
import sys

from . import chain_totals, network_totals, summary, timeline_table
from .io import Data, date_range, fnum, is_pytorch_csv, load, log_line, ok, open_text, read_pytorch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = "results/h200"
SWEEP = f"{RESULTS}/sweep_all_variants.csv.gz"
DOCS = ["README.md"] + [f"docs/{f}" for f in ("findings.md", "check.md", "cli.md", "csv-columns.md", "device-comparison.md")]
BLOCK = re.compile(r"(?P<open><!-- BEGIN generated:(?P<kind>[\w-]+)(?P<args>[^>]*?) -->\n)(?P<body>.*?)"
                   r"(?P<close><!-- END generated:(?P=kind) -->)", re.S)
CODE_PATHS = ("bench", "kernels", "core", "reference", "io", "goldenio", "cli") + ("gpu", "src", "cpu_ref", "layers")


class DocError(Exception):
    """A block whose query the committed files cannot answer (exit 2, naming the block)."""


_cache = {}


def data(csv=None):
    """The Data of a committed sweep CSV (a path under RESULTS, or relative to the root)."""
    path = SWEEP if csv is None else csv if "/" in csv else f"{RESULTS}/{csv}"
    if path not in _cache:
        full = os.path.join(ROOT, path)
        if not os.path.isfile(full):
            raise DocError(f"{path}: no such committed file")
        rows, layers = load([full])
        _cache[path] = Data([dict(r, _src=path) for r in rows], layers)
    return _cache[path]


def g3(v):
    return "—" if v is None else fnum(v)


def revs(d):
    return ", ".join(sorted({r.get("git_rev", "") for r in d.rows if r.get("git_rev")})) or "unknown"


def table(head, body):
    return "\n".join(["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
                     + ["| " + " | ".join(str(c) for c in row) + " |" for row in body]) + "\n"


def is_row(r, v):  # row of variant v; "name[axes]" (hopper-halo-fp16[s2d=loader]): the row that set those axes
    name, _, axes = v.partition("[")
    return r["_variant"] == name and (not axes or r.get("axes", "") == axes[:-1])


def find(d, layer, n, variant, layout):
    return next((r for r in d.rows if r["layer"] == layer and r["N"] == n and is_row(r, variant)
                 and r["layout"] == layout and ok(r)), None)


def as_list(s):
    return [x for x in s.split(",") if x] if s else []


# ---- the reference sweep: what it is, the headline, what changed since ----------------------

def sweep(csv=None):
    d = data(csv)
    rows, one = d.rows, d.rows[0]
    st = {s: sum(r["status"] == s for r in rows) for s in ("PASS", "UNCHECKED", "SKIP", "FAIL", "ERROR")}
    reps, warm = ("/".join(sorted({r[k] for r in rows if r.get(k)})) for k in ("repeats", "warmup"))
    dnn = sorted({r["cudnn_version"] for r in rows if r.get("cudnn_version")})
    flush = "L2 flushed " + ("before each" if {r.get("l2_flush", "") for r in rows} == {"1"} else "on rows with l2_flush=1")
    return (f"`{rows[0]['_src']}`: {d.device}, CUDA {one['cuda_runtime']}" + (f", cuDNN {', '.join(dnn)}" if dnn else "")
            + f", {date_range(rows)}, revision {revs(d)}: {len({r['_variant'] for r in rows})} variants in every "
            f"layout each declares, {len(d.layers)} layers, N = {', '.join(map(str, d.Ns))}; {reps} timed repeats "
            f"after {warm} warm-ups, {flush}; {st['PASS']} rows PASS, "
            + ", ".join(f"{v} {k}" for k, v in st.items() if k != "PASS") + ".\n")


def pytorch_rows():
    """The PyTorch anchor CSV committed beside the reference sweep, if any: (rows, path)."""
    for f in sorted(os.listdir(os.path.join(ROOT, RESULTS))):
        if f.endswith((".csv", ".csv.gz")) and is_pytorch_csv(p := os.path.join(ROOT, RESULTS, f)):
            return read_pytorch([p]), f"{RESULTS}/{f}"
    return [], None


def headline(csv=None):
    d = data(csv)
    py, path = pytorch_rows() if csv is None else ([], None)
    out = summary.table(d, py) + [""]
    if csv is None:
        if py:
            tv = sorted({p["torch"] for p in py})
            pr = sorted({p["git_rev"] for p in py if p["git_rev"]}) or ["no revision recorded"]
            out.append(f"PyTorch: `{path}` (torch {', '.join(tv)}, eager cuDNN, revision {', '.join(pr)}).")
        else:
            out.append(f"PyTorch: not measured at this revision (no PyTorch anchor CSV in `{RESULTS}/`).")
        out.append("")
    out.append(f"Source: `{d.rows[0]['_src']}`, {d.device}, revision {revs(d)}.")
    return "\n".join(out) + "\n"


def git(*args):
    r = subprocess.run(["git", "-C", ROOT] + list(args), capture_output=True, text=True)
    if r.returncode != 0:
        raise DocError(f"git {' '.join(args)}: {r.stderr.strip() or 'failed'} (a clone with history is needed: "
                       "git clone --filter=blob:none)")
    return r.stdout.split()


def since(csv=None):
    """The commits since the sweep's revision that changed kernels or the harness; full hashes cut
    to 12, as %h grows with a clone's object count and a block must read alike in every clone."""
    rev, paths = revs(data(csv)), "`bench/`, `kernels/` or the host code"
    if "," in rev:
        raise DocError(f"the sweep holds several revisions ({rev})")
    hs = [h[:12] for h in git("log", "--format=%H", f"{rev}..HEAD", "--", *CODE_PATHS)]
    return (f"Measured at revision {rev}; no commit since has changed {paths}.\n" if not hs else
            f"Measured at revision {rev}; {len(hs)} commit{'s' * (len(hs) != 1)} since changed {paths} (kernels, the "
            f"harness, the command line), the newest {hs[0]}: `git log --oneline {rev}..{hs[0]} -- "
            f"{' '.join(CODE_PATHS)}` lists them.\n")


# ---- the findings: ladders, profiles, winners, misses --------------------------------------

def rungs_of(d, family, precision, layout, variants):
    if variants:
        return variants
    out = []
    for r in sorted(d.rows, key=lambda r: r["_seq"]):
        v = r["_variant"]
        if (r["family"] == family and r["layout"] == layout and (not precision or r["precision"] == precision)
                and not v.endswith("-uncoalesced") and v not in out):
            out.append(v)
    if not out:
        raise DocError(f"no rows of family {family} ({precision or 'any precision'}, {layout})")
    return out


def ladder(family=None, precision=None, layout="nchw", N="128", csv=None, variants=None, base=None, cpu=None):
    """A ladder's rungs (or the variants given, in that order) per layer at N: kernel ms and the
    ratio to the rung above (or to `base`) on the same layer, below 1 = faster; the last
    column the layers' total."""
    d, n = data(csv), int(N)
    vs = rungs_of(d, family, precision, layout, as_list(variants))
    lays = as_list(layout) if "," in layout else [layout] * len(vs)
    if len(lays) != len(vs):
        raise DocError("give one layout, or one per variant")
    body, prev = [], None
    if cpu:
        cms = [d.cpu_ms(l, n) for l in d.layers]
        body.append(["CPU reference (" + "/".join(sorted({r["cpu_threads"] for r in d.rows if r.get("cpu_threads")}))
                     + " threads)"] + [g3(c) for c in cms] + [g3(sum(cms)), "1"])
    ref = {l: find(d, l, n, base, layout.split(",")[0]) for l in d.layers} if base else None
    for v, lay in zip(vs, lays):
        rs = [find(d, l, n, v, lay) for l in d.layers]
        if not any(rs):
            raise DocError(f"no PASS row of {v} ({lay}) at N={n}")
        against = ref if base else prev
        cells = []
        for l, r in zip(d.layers, rs):
            a = against.get(l) if against else None
            cells.append("—" if r is None else g3(r["kernel_ms"]) + (f" ({r['kernel_ms'] / a['kernel_ms']:.3g})"
                                                                     if a and r is not a else ""))
        tot = sum(r["kernel_ms"] for r in rs) if all(rs) else None
        row = [f"{v}" + (f" ({lay})" if "," in layout else "")] + cells + [g3(tot)]
        if cpu:
            row.append("—" if tot is None else f"{sum(cms) / tot:.3g}")
        body.append(row)
        prev = {l: r for l, r in zip(d.layers, rs)}
    head = ["rung"] + d.layers + [f"{len(d.layers)} layers"] + (["CPU / rung, layers' total"] if cpu else [])
    against = f"`{base}`" if base else "the rung above"
    return (table(head, body) + f"\nKernel ms at N={n}, median; in brackets the ratio to {against} on the same layer "
            f"(below 1 = faster). Source: `{d.rows[0]['_src']}`, revision {revs(d)}.\n")


PROFILE_COLS = {"tensor": ("ncu_tensor_pct", "tensor pipe %", 1), "fma": ("ncu_fma_pct", "FMA pipe %", 1),
                "l2": ("ncu_l2_hit_pct", "L2 hit %", 1), "occupancy": ("ncu_occupancy_pct", "occupancy %", 1),
                "dram": (lambda r: float(r["ncu_dram_read_bytes"] or 0) + float(r["ncu_dram_write_bytes"] or 0), "DRAM read+write MB", 1e-6),
                "gap": (lambda r: r["kernel_ms"] - float(r["ncu_time_ms"]) if r.get("ncu_time_ms") else None, "µs from the event-timed median less the kernel's time", 1e3)}


def profile(csv, metric="tensor", layout=None, variants=None, N=None):
    """One Nsight Compute counter (PROFILE_COLS: a column, or a function of the row giving the value; its label and
    scale) per rung and layer from a `convstudy profile` CSV (at one N if given), rungs in the file's order."""
    d = data(csv)
    col, label, scale = PROFILE_COLS[metric]
    value = col if callable(col) else lambda r: float(r[col]) if r.get(col) else None
    sel = [r for r in sorted(d.rows, key=lambda r: r["_seq"])
           if (not layout or r["layout"] == layout) and (N is None or r["N"] == int(N))]
    vs = as_list(variants) or list(dict.fromkeys(r["_variant"] for r in sel))
    lays = sorted({r["layer"] for r in sel})

    def cell(v, l):
        r = next((r for r in sel if is_row(r, v) and r["layer"] == l), None)
        val = value(r) if r and r.get("ncu_set") else None
        return "—" if val is None else g3(val * scale)
    return (table(["rung"] + lays, [[v] + [cell(v, l) for l in lays] for v in vs]) + f"\n{label} under Nsight "
            f"Compute (one timed repeat per row), N={', '.join(map(str, sorted({r['N'] for r in sel})))}. Source: "
            f"`{d.rows[0]['_src']}`, revision {revs(d)}.\n")


def winners(csv=None, classes=",".join(summary.CLASSES)):
    """Which of our rows is the fastest per class, N and layer (each in its fastest layout)."""
    d = data(csv)
    body = [[cls, n] + [summary.name(summary.cell(d, cls, l, n).ours) for l in d.layers]
            for cls in as_list(classes) for n in d.main_Ns]
    return table(["class", "N"] + d.layers, body) + f"\nSource: `{d.rows[0]['_src']}`, revision {revs(d)}.\n"


def gemmref(csv=None, N="128"):
    """The fastest of ours and cuDNN per class and layer over cuBLAS on the explicit im2col GEMM
    of the layer (the `im2col_gemm_ms` column (`gemm_ceiling_ms` before 0.2.0) of the row's class: a reference, not a ceiling)."""
    d, n = data(csv), int(N)
    body = []
    for cls in summary.CLASSES:
        cs = [summary.cell(d, cls, l, n) for l in d.layers]
        for side in ("ours", "cudnn"):
            row = [f"{cls}, {'fastest of ours' if side == 'ours' else 'cuDNN'}"]
            for c in cs:
                r, ms = getattr(c, side), getattr(c, side + "_ms")
                row.append(f"{ms / (r.get('im2col_gemm_ms') or r['gemm_ceiling_ms']):.3g}" if r and (r.get("im2col_gemm_ms") or r.get("gemm_ceiling_ms")) else "—")
            body.append(row)
    return (table(["row / cuBLAS on the im2col GEMM"] + d.layers, body) + f"\nKernel time at N={n} over the "
            f"cuBLAS GEMM of the layer's im2col shape in the same class, timed in the same run (below 1 = faster than "
            f"that GEMM alone). Source: `{d.rows[0]['_src']}`, revision {revs(d)}.\n")


def misses(csv=None, over="1"):
    """The cells where the fastest of ours is slower than cuDNN (ours / cuDNN above `over`),
    with the gap in microseconds, largest ratio first."""
    d, lim = data(csv), float(over)
    body = []
    for cls in summary.CLASSES:
        for (l, n), c in summary.cells(d, cls).items():
            if c.ratio and c.ratio > lim:
                body.append((c.ratio, [cls, l, n, summary.name(c.ours), summary.name(c.cudnn), f"{c.ratio:.3g}",
                                       f"{1000 * (c.ours_ms - c.cudnn_ms):.3g}"]))
    body.sort(key=lambda x: -x[0])
    return (table(["class", "layer", "N", "fastest of ours", "cuDNN", "ours / cuDNN", "gap (µs)"],
                  [b for _, b in body]) + f"\n{len(body)} cells above {over}. Source: `{d.rows[0]['_src']}`, "
            f"revision {revs(d)}.\n")


def range_safety(csv="range_safety.csv.gz"):
    """Range safety: per variant, the scale pairs run and the status counts."""
    d, per = data(csv), {}
    for r in d.rows:
        sc, st = per.setdefault(r["_variant"], (set(), {}))
        sc.add((r.get("input_scale") or "1", r.get("weight_scale") or "1"))
        st[r["status"]] = st.get(r["status"], 0) + 1
    body = [[v, len(sc), ", ".join(f"{k} {c}" for k, c in sorted(st.items()))] for v, (sc, st) in per.items()]
    sc = sorted({x for s, _ in per.values() for p in s for x in p}, key=float)
    return (table(["variant", "scale pairs", "rows by status"], body) + f"\nInput and weight scales from {sc[0]} to "
            f"{sc[-1]}. Source: `{d.rows[0]['_src']}`, revision {revs(d)}.\n")


def checks():
    """The committed GPU-test log's and sanitizer summary's result lines."""
    out = []
    for f in sorted(os.listdir(os.path.join(ROOT, RESULTS))):
        if f.startswith("gpu_tests") and f.endswith(".log"):
            head, line = log_line(f"{RESULTS}/{f}", r"test cases")
            out.append(f"- GPU tests (`{RESULTS}/{f}`, {head}): {line.split(': ', 1)[-1]}")
        elif f.startswith("sanitizer") and f.endswith(".log"):
            out.append(f"- compute-sanitizer (`{RESULTS}/{f}`): {log_line(f'{RESULTS}/{f}', r'^TOTAL:')[1][7:]}")
    return "\n".join(out) + "\n"


def spread(csv=None, family="cudnn"):
    """How far the family's rows ran from their own engine-search median: the median and the
    largest |kernel_ms / search_ms - 1|, and the rows past summary.STRAY."""
    d = data(csv)
    rs = [r for r in d.rows if r["family"] == family and ok(r) and r.get("search_ms")]
    if not rs:
        raise DocError(f"no {family} row with search_ms")
    dev = sorted(((abs(r["kernel_ms"] / r["search_ms"] - 1), r) for r in rs), key=lambda t: t[0])
    far = [r for x, r in dev if x > summary.STRAY]
    return (f"{len(rs)} {family} rows: kernel_ms within {100 * statistics.median(x for x, _ in dev):.2g}% of the "
            f"search median at the median row, {100 * dev[-1][0]:.2g}% at most ({summary.name(dev[-1][1])} "
            f"{dev[-1][1]['layer']} N={dev[-1][1]['N']}); {len(far)} past {100 * summary.STRAY:.0f}%.\n")


def tf32(csv="tf32_rounding.csv.gz"):
    """Issue 49 item 8: per layer, the fastest of our tf32 rows at their default (truncate where read in
    place), with tf32=round, and cuDNN's (summary.cudnn_ms: its re-time where faster); errors; sums."""
    d, t = data(csv), lambda r: summary.cudnn_ms(r) if r["family"] == "cudnn" else r["kernel_ms"]
    side = {"default": lambda r: r["family"] not in ("cudnn",) and "tf32=round" not in r.get("axes", ""),
            "tf32=round": lambda r: "tf32=round" in r.get("axes", ""), "cuDNN": lambda r: r["family"] == "cudnn"}
    best = {(k, l): min((r for r in d.rows if ok(r) and r["layer"] == l and f(r)), key=t) for k, f in side.items() for l in d.layers}
    ops = lambda r: next((c.split("=")[1] for c in r.get("config", "").split(";") if c.startswith("tf32=")), "rounded")
    body = [[l] + [f"{fnum(t(best[k, l]))} ms, {best[k, l]['_variant']} ({ops(best[k, l])}"
                   f"{', re-timed' if t(best[k, l]) == best[k, l].get('cudnn_retime_ms') else ''}), rel_l2 {best[k, l]['rel_l2_err']:.2g}"
                   for k in side] for l in d.layers]
    tot = {k: sum(t(best[k, l]) for l in d.layers) for k in side}
    body.append(["sum"] + [f"{fnum(tot[k])} ms" for k in side])
    cost = tot["tf32=round"] / tot["default"] - 1
    return (table(["layer", "ours, default", "ours, tf32=round", "cuDNN"], body)
            + f"\nRounding costs {100 * cost:.1f}% on the five-layer sum ({'under' if cost < 0.02 else 'over'} the 2% "
            f"line: {'rounding' if cost < 0.02 else 'truncation'} stays the default, the other is the axis value). "
            f"Source: `{d.rows[0]['_src']}`, {d.device}, N = {'/'.join(map(str, d.Ns))}, NHWC, revision {revs(d)}.\n")


def recheck(csv=None):
    """What checking every run after the first costs: the host time of those checks
    (recheck_ms) over the reference sweep's rows, per N, beside the timed kernels' own time."""
    d = data(csv)
    rs = [r for r in d.rows if ok(r) and r.get("recheck_ms") is not None]
    if not rs:
        raise DocError(f"{d.rows[0]['_src']}: no recheck_ms column")
    runs = {int(r["checked_runs"]) for r in rs if r.get("checked_runs")}
    body = [[n, sum(1 for r in rs if r["N"] == n), f"{sum(r['recheck_ms'] for r in rs if r['N'] == n) / 1e3:.2f} s",
             f"{sum(r['kernel_ms'] * int(r['repeats'] or 0) for r in rs if r['N'] == n) / 1e3:.2f} s"] for n in d.Ns]
    return (table(["N", "rows", "checks after the first run (recheck_ms)", "the timed repeats' kernel time"], body)
            + f"\nRuns checked per row: {'/'.join(map(str, sorted(runs)))}. Source: `{d.rows[0]['_src']}`, revision "
            f"{revs(d)}.\n")


def steps(log="main_job.log.gz", csv=None):
    """The main job's parts from its committed log (scripts/main.sh's output, each line led by its
    seconds; a "# machine: " line says so when not fresh); card and revision from the sweep's CSV."""
    with open_text(os.path.join(ROOT, RESULTS, log)) as f:
        text = f.read().splitlines()
    lines, d = [ln.split(" ", 1) for ln in text if ln[:1].isdigit()], data(csv)
    machine = next((ln[11:] for ln in text if ln.startswith("# machine: ")), f"a fresh {d.device} machine")
    hit = [[(int(t), r) for t, r in lines if re.search(p, r)][-1:] for p in
           ("^deps:", "Linking CXX executable convstudy$", r"^sweep time (\d+m)?\d+s:", "^main: results")]
    if not all(hit):
        raise DocError(f"{RESULTS}/{log}: no line of packages, build, sweep time or results for one of them")
    (deps, _), (built, _), (swept, line), (done, _) = (h[0] for h in hit)
    m = re.match(r"sweep time (?:(\d+)m)?(\d+)s:", line)
    sweep = 60 * int(m.group(1) or 0) + int(m.group(2))
    parts = {"packages": deps, "configure and build": built - deps, "golden files": swept - sweep - built, "sweep": sweep,
             "figures": done - swept}
    return (f"{', '.join(f'{k} {t} s' for k, t in parts.items())}: {done} s in all, build and cuDNN's engine "
            f"compilation included; {machine}, revision {revs(d)}; `{RESULTS}/{log}`.\n")


GENERATORS = {"sweep": sweep, "headline": headline, "since": since, "ladder": ladder, "profile": profile, "winners": winners,
              "misses": misses, "gemmref": gemmref, "range": range_safety, "checks": checks, "spread": spread, "tf32": tf32, "recheck": recheck,
              "steps": steps, "network": network_totals.generator(data, revs), "chain": chain_totals.generator(data, revs), "timeline": timeline_table.generator(DocError)}


def parse_args(text):
    bad = [tok for tok in text.split() if "=" not in tok]
    if bad:
        raise DocError(f"argument {bad[0]!r} is not key=value")
    return dict(tok.split("=", 1) for tok in text.split())


def first_difference(old, new):
    """The first line where a block differs, so that a CI log shows why, not only which."""
    pairs = itertools.zip_longest(old.splitlines(), new.splitlines(), fillvalue="")
    return next((f" (line {i + 1}: committed {a[:160]!r}, the results give {b[:160]!r})"
                 for i, (a, b) in enumerate(pairs) if a != b), "")


def process(update, docs=DOCS):
    stale, errors = [], []
    for doc in docs:
        path = os.path.join(ROOT, doc)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()

        def repl(m):
            where = f"{doc}: generated:{m.group('kind')}{m.group('args')}"
            try:
                if m.group("kind") not in GENERATORS:
                    raise DocError("unknown generator (GENERATORS in plots/convplots/docs.py)")
                body = GENERATORS[m.group("kind")](**parse_args(m.group("args")))
            except (DocError, TypeError, KeyError, ValueError) as e:
                errors.append(f"{where}: {e}")
                return m.group(0)
            if body != m.group("body"):
                stale.append((where, first_difference(m.group("body"), body)))
            return m.group("open") + body + m.group("close")

        new = BLOCK.sub(repl, text)
        if update and new != text and not errors:
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                f.write(new)
            os.replace(path + ".tmp", path)
    return stale, errors


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv not in (["--check"], ["--update"]):
        print("usage: docs.py --check | --update | --lint | --lint-self-test", file=sys.stderr)
        return 2
    check = argv == ["--check"]
    stale, errors = process(update=not check)
    for e in errors:
        print(f"docs.py: {e}", file=sys.stderr)
    for where, why in [] if errors else stale:
        print(f"docs.py: stale: {where} differs from what the committed results give{why}; run plots/plot.sh "
              "--update-docs" if check else f"docs.py: updated {where}", file=sys.stderr if check else sys.stdout)
    if check and not stale and not errors:
        print(f"docs.py: every generated block of {', '.join(DOCS)} matches the committed results")
    return 2 if errors else 1 if check and stale else 0
