"""Two runs side by side: `plot.py --compare A.csv B.csv --out DIR`.

The rows, their changes, ratios and verdicts are `convstudy compare --json A B`'s (cli/compare.cpp,
the one place they are computed; $CONVSTUDY_EXE, which plots/plot.sh finds): matched on (layer,
N, variant, precision, layout, memory, axes, data scales), each entry naming its record in
each file. The rule: "same" when either side's median lies inside the other side's spread
[lo, hi] (p10/p90, or min/max in older CSVs), else faster or slower. In ratio space (r = B / A
of the medians) that is r inside [min(A lo / A med, B med / B hi), max(A hi / A med, B med /
B lo)]: the noise band the figures shade, per row (noise.band). Writes, per batch size of the main sweep, compare_kernel_N<N>.png and
compare_total_N<N>.png (per layer and variant: the ratio, the band, and the ratio's spread
B lo / A hi .. B hi / A lo, log scale) and
DIR/compare.md with the summary, a table per family and layer, and the changed rows. When
the two CSVs come from different devices, compare.md also gets the section "Which rows gain
from the second device's memory" and compare_devices.png (devices.py).
"""

import json
import math
import os
import subprocess

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from . import devices, noise, outcome
from .io import Data, date_range, fnum, md_table, ok
from .draw import family_bands, plain_log_ticks, save
from .noise import band
from .outcome import announce, attempt

VERDICT_COLOR = {"slower": "#c0392b", "faster": "#1e8449", "same": "0.45"}
BAND_COLOR = "#cfe0f1"
META = ["device", "cc", "cuda_runtime", "driver", "tool_version", "git_rev", "seed", "golden_seed", "repeats",
        "l2_flush"]
# the order changes are listed in (as convstudy compare lists them)
CHANGE_ORDER = ["status worse", "only in A", "only in B", "status better", "slower", "faster", "same", "not timed"]


def key(r):
    return (r["layer"], r["N"], r["variant"], r.get("precision", ""), r["memory"])


def timing(r, metric):
    return noise.timing(r, metric, ok)


def compare_json(path_a, path_b):
    """`convstudy compare --json A B` (the program: $CONVSTUDY_EXE), parsed."""
    exe = os.environ.get("CONVSTUDY_EXE")
    if not exe:
        raise SystemExit("plot.py --compare: CONVSTUDY_EXE names no convstudy program (plots/plot.sh sets it); "
                         "the verdicts are convstudy compare's")
    p = subprocess.run([exe, "compare", "--json", path_a, path_b], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"plot.py: {exe} compare --json failed (exit {p.returncode}): {p.stderr.strip()}")
    return json.loads(p.stdout)


class Entry:
    """One row of `convstudy compare --json` (j) with the plotted rows of A and B it names."""

    def __init__(self, a, b, j):
        self.a, self.b = a, b
        r = a if a is not None else b
        self.layer, self.N, self.variant, self.memory = r["layer"], r["N"], r["variant"], r["memory"]
        self.family, self.precision = r["family"], r.get("precision", "")
        # the timings for the figures' spreads and bands; the verdicts and ratios are compare's
        self.ta = {m: timing(a, m) for m in ("kernel", "total")}
        self.tb = {m: timing(b, m) for m in ("kernel", "total")}
        self.verdict = {m: j[m]["verdict"] for m in ("kernel", "total")}
        self.ratio = {m: j[m]["ratio"] for m in ("kernel", "total")}
        both_pass = j["status_a"] == "PASS" and j["status_b"] == "PASS"
        self.change = None if both_pass else j["change"]  # both PASS: per metric, the verdict

    def change_of(self, metric):
        return self.change or self.verdict[metric] or "not timed"

    def status(self):
        if self.a is None:
            return f"only in B ({self.b['status']})"
        if self.b is None:
            return f"only in A ({self.a['status']})"
        sa, sb = self.a["status"], self.b["status"]
        return sa if sa == sb else f"{sa} → {sb}"


class Comparison:
    def __init__(self, rows_a, rows_b, layers_a, layers_b, path_a, path_b, suffix=""):
        self.path_a, self.path_b, self.suffix = path_a, path_b, suffix
        self.rows_a, self.rows_b = rows_a, rows_b
        ia = {key(r) for r in rows_a}
        by_rec = ({r["_rec"]: r for r in rows_a}, {r["_rec"]: r for r in rows_b})
        self.entries = []
        for j in compare_json(path_a, path_b)["rows"]:
            sides = []
            for recs, rec, path in ((by_rec[0], j["record_a"], path_a), (by_rec[1], j["record_b"], path_b)):
                if rec is not None and rec not in recs:
                    raise SystemExit(f"plot.py: {path}: convstudy compare matched its row {rec}, which plot.py "
                                     "reads as a repeat of another row (it keys rows by device, layer, N, variant "
                                     "with its layout, axes and data scales, and memory)")
                sides.append(recs.get(rec) if rec is not None else None)
            self.entries.append(Entry(sides[0], sides[1], j))
        # A's rows in file order, then B's own (the order of the report's tables)
        self.entries.sort(key=lambda e: (0, e.a["_seq"]) if e.a is not None else (1, e.b["_seq"]))
        # one Data over both runs gives the order of layers, families and variants and each
        # variant's default memory mode
        self.d = Data(rows_a + [r for r in rows_b if key(r) not in ia],
                      layers_a + [l for l in layers_b if l not in layers_a], suffix)
        self.idx = {(e.layer, e.N, e.variant, e.memory): e for e in self.entries}

    def device(self, rows):
        devs = []
        for r in rows:
            if r["device"] not in devs:
                devs.append(r["device"])
        return ", ".join(devs) or "unknown device"

    def get(self, layer, n, v):
        return self.idx.get((layer, n, v, self.d.default_mode[v]))

    def count(self, metric, change):
        return sum(e.change_of(metric) == change for e in self.entries)

    def summary(self, metric):
        timed = sum(self.count(metric, c) for c in ("slower", "faster", "same"))
        return (f"{timed} rows timed on both sides ({metric}_ms): {self.count(metric, 'slower')} slower, "
                f"{self.count(metric, 'faster')} faster, {self.count(metric, 'same')} same within the spread; "
                f"{self.count(metric, 'status worse')} status worse, {self.count(metric, 'status better')} status "
                f"better, {self.count(metric, 'only in A')} only in A, {self.count(metric, 'only in B')} only in B, "
                f"{self.count(metric, 'not timed')} not timed on either side")

    def title(self, what):
        da, db = self.device(self.rows_a), self.device(self.rows_b)
        t = (f"{what}\nB: {db} · {date_range(self.rows_b)}  against  A: {da} · {date_range(self.rows_a)}")
        return t + (f" · {self.suffix}" if self.suffix else "")


def fig_compare(c, out, n, metric):
    d = c.d
    # variants with a row in both runs at this N (rows of one run only are listed in compare.md)
    vs = [v for v in d.variants if any(c.get(l, n, v) and c.get(l, n, v).a and c.get(l, n, v).b for l in d.layers)]
    if not vs:
        return None, f"no row at N = {n} is in both runs"
    L = len(d.layers)
    fig, axes = plt.subplots(1, L, figsize=(2.7 * L + 3.0, 1.8 + 0.27 * len(vs)), sharey=True, sharex=True,
                             squeeze=False, layout="constrained")
    vals = []
    for ax, l in zip(axes[0], d.layers):
        ax.axvline(1.0, color="0.25", lw=0.9, zorder=2)
        for i, v in enumerate(vs):
            e = c.get(l, n, v)
            if e is None or e.a is None or e.b is None:
                continue
            ver = e.verdict[metric]
            if ver is None:
                txt = e.status() if e.change != "not timed" else ""
                if txt:
                    ax.annotate(txt, (1.0, i), ha="center", va="center", fontsize=5.5,
                                color="#c0392b" if e.change == "status worse" else "0.3",
                                zorder=5, bbox=dict(boxstyle="round,pad=0.15", fc="w", ec="none", alpha=0.85))
                continue
            a, b = e.ta[metric], e.tb[metric]
            lo, hi = band(a, b)
            ax.fill_betweenx([i - 0.42, i + 0.42], lo, hi, color=BAND_COLOR, zorder=1, linewidth=0)
            r = e.ratio[metric]
            rlo, rhi = b[1] / a[2], b[2] / a[1]
            col = VERDICT_COLOR[ver]
            ax.errorbar([r], [i], xerr=[[r - rlo], [rhi - r]], fmt="o", ms=4, color=col, ecolor=col, elinewidth=1,
                        capsize=2, zorder=4)
            vals += [lo, hi, rlo, rhi, r]
        ax.set_title(l, fontsize=9)
        ax.set_xlabel(f"B / A {metric}_ms (log)", fontsize=8)
        family_bands(ax, [d.families[v] for v in vs], label=ax is axes[0][-1])
    ax0 = axes[0][0]
    ax0.set_xscale("log")
    if vals:
        lo, hi = min(vals + [1.0]), max(vals + [1.0])
        span = max(hi / lo, 1.2)
        ax0.set_xlim(lo / span ** 0.08, hi * span ** 0.08)
    for ax in axes[0]:
        plain_log_ticks(ax, "x")
    ax0.set_yticks(range(len(vs)))
    ax0.set_yticklabels([d.label(v) for v in vs], fontsize=8)
    ax0.set_ylim(len(vs) - 0.5, -0.5)
    handles = [Line2D([], [], color=VERDICT_COLOR[k], marker="o", ls="", label=k) for k in ("slower", "faster", "same")]
    handles.append(Patch(color=BAND_COLOR, label="noise band: \"same\" (median inside\neither run's [p10, p90])"))
    handles.append(Line2D([], [], color="0.3", marker="|", ms=8, ls="-", lw=1,
                          label="spread: B p10 / A p90 .. B p90 / A p10"))
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=len(handles), fontsize=8,
               frameon=False)
    fig.suptitle(c.title(f"Run B against run A: B / A of {metric}_ms per layer and variant, N = {n} "
                         "(below 1: B faster; memory: pageable unless [marked])"), fontsize=10)
    return save(fig, out, f"compare_{metric}_N{n}.png"), None


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def write_report(c, out, figs, metric="kernel", dev=None):
    md = []
    w = md.append
    w(f"# convstudy comparison: {c.device(c.rows_b)} (B) against {c.device(c.rows_a)} (A)")
    w("")
    w("Generated by `plots/plot.py --compare` from the two CSVs below; the verdicts follow `convstudy compare`: "
      f"a row is *same* when either run's median lies inside the other run's {noise.SPREAD_TEXT}. "
      "Ratios are B / A of the medians (below 1: B is faster).")
    w("")

    def vals(rows, col):
        s = sorted({r.get(col, "") for r in rows if r.get(col, "")})
        return ", ".join(s) if s else "—"
    body = [["file", f"`{c.path_a}`", f"`{c.path_b}`", ""],
            ["rows", str(len(c.rows_a)), str(len(c.rows_b)), ""],
            ["sweep date", date_range(c.rows_a), date_range(c.rows_b), ""]]
    for col in META:
        if not any(col in r for r in c.rows_a + c.rows_b):
            continue
        va, vb = vals(c.rows_a, col), vals(c.rows_b, col)
        note = "**differs**" if va != vb else ("unknown on both sides" if va == "unknown" else "")
        body.append([col, va, vb, note])
    w(md_table(["", "A", "B", ""], body, ["l", "l", "l", "l"]))
    w("")
    for m in ("kernel", "total"):
        w(f"- {c.summary(m)}.")
    w("")

    # per family and layer: geometric mean of the ratios, and the verdict counts
    d = c.d
    fams = []
    for v in d.variants:
        if d.families[v] not in fams:
            fams.append(d.families[v])
    w(f"## By family and layer ({metric}_ms)")
    w("")
    w("Geometric mean of B / A over the family's rows timed on both sides (every N and memory mode), and the "
      "count of slower / same / faster rows.")
    w("")
    body = []
    for f in fams:
        es = [e for e in c.entries if e.family == f and e.verdict[metric]]
        if not es:
            continue
        cells = []
        for l in d.layers + [None]:
            sel = [e for e in es if l is None or e.layer == l]
            g = geomean([e.ratio[metric] for e in sel])
            cnt = "/".join(str(sum(e.verdict[metric] == k for e in sel)) for k in ("slower", "same", "faster"))
            cells.append(f"{fnum(g)} ({cnt})" if sel else "—")
        body.append([f] + cells)
    w(md_table(["family"] + d.layers + ["all layers"], body))
    w("")
    w("Cells: `geometric mean (slower/same/faster)`.")
    w("")
    if dev is not None:  # two devices: which rows gain from B's memory (devices.py)
        dev.write(w, figs)

    w(f"## Changed rows ({metric}_ms)")
    w("")
    listed = [e for e in c.entries if e.change_of(metric) not in ("same", "not timed", "only in A", "only in B")]

    def order(e):
        ch = e.change_of(metric)
        r = e.ratio[metric]
        lr = math.log(r) if r else 0.0
        return (CHANGE_ORDER.index(ch), -lr if ch == "slower" else lr)
    listed.sort(key=order)
    if listed:
        body = []
        for e in listed:
            a, b = e.ta[metric], e.tb[metric]
            body.append([e.change_of(metric), e.layer, e.N, e.variant, e.precision, e.memory,
                         fnum(a[0]) if a else (e.a["status"] if e.a else "—"),
                         fnum(b[0]) if b else (e.b["status"] if e.b else "—"),
                         f"{e.ratio[metric]:.3f}" if e.ratio[metric] else "—", e.status()])
        w(md_table(["change", "layer", "N", "variant", "precision", "memory", f"A {metric} ms",
                    f"B {metric} ms", "B / A", "status"], body,
                   ["l", "l", "r", "l", "l", "l", "r", "r", "r", "l"]))
    else:
        w("None: every row timed on both sides is the same within the spread, and no status changed.")
    w("")
    one = {}
    for e in c.entries:
        if e.change in ("only in A", "only in B"):
            g = one.setdefault((e.change, e.variant, e.memory), [set(), set(), 0])
            g[0].add(e.layer)
            g[1].add(e.N)
            g[2] += 1
    w("## Rows in one run only")
    w("")
    if one:
        body = [[side, v, m, ", ".join(l for l in d.layers if l in g[0]), ", ".join(map(str, sorted(g[1]))), g[2]]
                for (side, v, m), g in sorted(one.items(), key=lambda kv: (kv[0][0], d.variants.index(kv[0][1])
                                                                           if kv[0][1] in d.variants else 0,
                                                                           kv[0][2]))]
        w(md_table(["", "variant", "memory", "layers", "N", "rows"], body, ["l", "l", "l", "l", "l", "r"]))
    else:
        w("None: both runs have the same rows.")
    w("")
    w("## Figures")
    w("")
    for name in figs:
        w(f"![{name}]({name})")
        w("")
    path = os.path.join(out, "compare.md")
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write("\n".join(md))
    os.replace(path + ".tmp", path)
    return path


def render_compare(rows_a, layers_a, rows_b, layers_b, path_a, path_b, out, suffix=""):
    """Draws the comparison figures and compare.md; returns the names of the outputs that failed.
    Runs from two devices (the `device` column differs) also get compare_devices.png and the
    section on which rows gain from B's memory (devices.py)."""
    os.makedirs(out, exist_ok=True)
    c = Comparison(rows_a, rows_b, layers_a, layers_b, path_a, path_b, suffix)
    failed, figs = [], []
    for metric in ("kernel", "total"):
        for n in c.d.main_Ns:
            name = f"compare_{metric}_N{n}.png"
            res, info, error = attempt(fig_compare, c, out, n, metric)
            if res:
                figs.append(res)
            announce(name, out, [res] if res else None, info, error, failed)
    dev = None
    if devices.differ(rows_a, rows_b):
        def device_figure():
            nonlocal dev
            dev = devices.DeviceComparison(c)
            return dev.figure(out)

        res, info, error = attempt(device_figure)
        if res:
            figs.append(res)
        announce(devices.FIGURE, out, [res] if res else None, info, error, failed)
    outcome.write_report("compare.md", lambda: write_report(c, out, figs, dev=dev), failed)
    for m in ("kernel", "total"):
        print(c.summary(m))
    if dev is not None:
        for f in dev.families:
            print(dev.sentence(f))
    return failed

