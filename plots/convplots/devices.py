"""Two devices side by side: which rows gain from the second device's memory, and why.

Used by comparison.py when the two CSVs of `plot.py --compare A.csv B.csv` come from
different devices (their `device` columns differ); a same-device comparison never reaches
this module. Writes the compare.md section "Which rows gain from the second device's
memory" and the figure compare_devices.png (per batch size, each row's measured B / A
against its kernel time over B's floor, a stick to the predicted ratio where they differ).

The model, per row (each variant's default memory mode, every N, PASS and timed on both
sides):
- FLOPs: the gflop column (direct-convolution FLOPs; Winograd and FFT rows, and library
  rows whose engine is one, do fewer, so their compute floor is an over-estimate and their
  time / floor can fall below 1);
- bytes: input, weights and output once, in the row's io_dtype (io.min_bytes: f32 4,
  f16 and bf16 2 bytes an element, from the layer shape and N);
- each device's ceilings from its own CSV: the median peak_tflops of the row's precision
  class and the median copy_gbs (device-to-device copy, read + write: the same bytes the
  floor counts);
- floor = max(FLOPs / peak, bytes / bandwidth) on each device; the row is memory-bound on
  a device when the bytes term is the larger;
- predicted ratio = B floor / A floor; measured ratio = B / A of the kernel_ms medians, with
  the comparison's verdict and noise band [lo, hi] (noise.band: the ratios `convstudy
  compare` calls "same");
- the row departs from the prediction when measured / predicted lies outside [lo, hi]
  (the measured gain differs from the predicted one by more than the noise);
- its regime (the one-line reason): "far from both floors" when the kernel time is over
  FAR x the floor on both devices, else "compute-bound on both" (no gain expected when the
  class peaks agree), else "memory-bound" (gains up to the bandwidth ratio).

CSVs without copy_gbs or without per-class peak_tflops (older formats, no `algo` column)
get the measured ratios only, with a sentence saying which side lacks what.
"""

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.lines import Line2D

from .io import EFFECTIVE_ALGOS, Data, fnum, md_table, min_bytes
from .noise import band
from .draw import plain_log_ticks, save
from .roofline import prec_key

SECTION = "Which rows gain from the second device's memory"
FIGURE = "compare_devices.png"
FAR = 5.0          # time / floor above which (on both devices) a row is "far from both floors"
SAME_PEAK = 0.02   # class peaks within 2 % of each other count as equal
REASON = {
    "far": "far from both floors: latency/occupancy-bound, gains only via L2/memory latency",
    "compute": "compute-bound on both: no gain expected",
    "compute-peak": "compute-bound on both: gains up to the peak ratio",
    "memory": "memory-bound: gains up to the bandwidth ratio",
}
REGIME_SHORT = {"far": f"far (>{FAR:g}× floor)", "compute": "compute-bound", "compute-peak": "compute-bound",
                "memory": "memory-bound"}
REGIME_COLOR = {"far": "#d62728", "compute": "0.45", "compute-peak": "0.45", "memory": "#1f77b4"}
BOUND_COLOR = {"memory": "#1f77b4", "compute": "0.5"}


def devices_of(rows):
    out = []
    for r in rows:
        if r["device"] not in out:
            out.append(r["device"])
    return out


def differ(rows_a, rows_b):
    """True when the two runs come from different devices (the section is written)."""
    return set(devices_of(rows_a)) != set(devices_of(rows_b))


def short_name(dev):
    s = dev.replace("NVIDIA ", "").replace("GeForce ", "").strip()
    return s.split()[0] if s else dev


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def plural(n, word):
    return word if n == 1 else word + "s"


def gain_text(ratio):
    """A B / A ratio as B's gain: '1.31× faster', '1.05× slower', 'as fast (1.00×)'."""
    if ratio is None:
        return "—"
    g = 1.0 / ratio
    if round(g, 2) == 1.0:
        return "as fast (1.00×)"
    return f"{g:.2f}× faster" if g > 1 else f"{1 / g:.2f}× slower"


class Card:
    """One side's device and its measured ceilings (from its own CSV)."""

    def __init__(self, side, rows, layers, path):
        self.side, self.path = side, path
        self.devices = devices_of(rows)
        self.device = ", ".join(self.devices) or "unknown device"
        d = Data(rows, layers)
        self.peaks = dict(d.class_peaks)
        self.gbs = d.copy_gbs
        self.missing = []  # why no prediction can be made from this side
        if len(self.devices) > 1:
            self.missing.append(f"{side} (`{path}`) holds rows of several devices ({self.device}): "
                                "no single set of ceilings")
        if not d.has_algo or not self.peaks:
            self.missing.append(f"{side} (`{path}`) has no per-class peak_tflops (no `algo` column: an older "
                                "CSV format whose peak_tflops is the fp32 FMA ceiling on every row)")
        if not self.gbs:
            self.missing.append(f"{side} (`{path}`) has no copy_gbs (an older CSV format without the measured "
                                "copy bandwidth)")

    def floor(self, r):
        """(floor s, bound, compute s, memory s) of row r on this device, or None."""
        if self.missing or r is None:
            return None
        pk = self.peaks.get(r.get("precision", ""))
        b = min_bytes(r)
        if not pk or not b or not r.get("gflop"):
            return None
        tc = r["gflop"] * 1e9 / (pk * 1e12)
        tm = b / (self.gbs * 1e9)
        return max(tc, tm), ("memory" if tm > tc else "compute"), tc, tm


class DevRow:
    """One row timed on both devices, with the floors' prediction beside the measurement."""

    def __init__(self, e, A, B):
        self.e = e
        self.layer, self.N, self.variant, self.family = e.layer, e.N, e.variant, e.family
        self.precision = e.precision
        ta, tb = e.ta["kernel"], e.tb["kernel"]
        self.ms_a, self.ms_b = ta[0], tb[0]
        self.meas = e.ratio["kernel"]
        self.verdict = e.verdict["kernel"]
        self.lo, self.hi = band(ta, tb)
        self.spread = (tb[1] / ta[2], tb[2] / ta[1])
        self.gflop = e.a.get("gflop") or e.b.get("gflop")
        self.bytes = min_bytes(e.a) or min_bytes(e.b)
        self.effective = any(r.get("algo", "") in EFFECTIVE_ALGOS for r in (e.a, e.b))
        self.fa, self.fb = A.floor(e.a), B.floor(e.b)
        self.pred = self.fb[0] / self.fa[0] if self.fa and self.fb else None
        if self.pred is None:
            self.bound_a = self.bound_b = self.regime = None
            self.over_a = self.over_b = None
            self.departs = False
            return
        self.bound_a, self.bound_b = self.fa[1], self.fb[1]
        self.over_a = self.ms_a * 1e-3 / self.fa[0]
        self.over_b = self.ms_b * 1e-3 / self.fb[0]
        if min(self.over_a, self.over_b) > FAR:
            self.regime = "far"
        elif self.bound_a == "compute" and self.bound_b == "compute":
            pa, pb = A.peaks.get(self.precision), B.peaks.get(self.precision)
            self.regime = "compute" if abs(pb / pa - 1.0) <= SAME_PEAK else "compute-peak"
        else:
            self.regime = "memory"
        q = self.meas / self.pred
        self.departs = not (self.lo <= q <= self.hi)

    def reason(self):
        return REASON[self.regime] if self.regime else ""


class DeviceComparison:
    def __init__(self, c):
        self.c = c
        self.A = Card("A", c.rows_a, c.d.layers, c.path_a)
        self.B = Card("B", c.rows_b, c.d.layers, c.path_b)
        self.missing = self.A.missing + self.B.missing
        self.predict = not self.missing
        na, nb = short_name(self.A.device), short_name(self.B.device)
        if na == nb or len(self.A.devices) != 1 or len(self.B.devices) != 1:
            na, nb = self.A.device, self.B.device
        self.name_a, self.name_b = na, nb
        d = c.d
        self.rows = [DevRow(e, self.A, self.B) for e in c.entries
                     if e.a is not None and e.b is not None and e.verdict["kernel"]
                     and e.memory == d.default_mode.get(e.variant)]
        # every batch size timed on both sides (the main sweep's N = 1, 32, 128, and any larger N
        # that both runs have); the per-layer tables are at N = 128 (else the largest main N)
        self.Ns = sorted({x.N for x in self.rows})
        main = [n for n in d.main_Ns if n in self.Ns] or self.Ns
        self.table_N = 128 if 128 in main else (max(main) if main else None)
        fam_order = []
        for v in d.variants:
            if d.families[v] not in fam_order:
                fam_order.append(d.families[v])
        vorder = {v: i for i, v in enumerate(d.variants)}
        lorder = {l: i for i, l in enumerate(d.layers)}
        self.rows.sort(key=lambda x: (fam_order.index(x.family), self.Ns.index(x.N), vorder.get(x.variant, 0),
                                      lorder.get(x.layer, 0)))
        self.families = [f for f in fam_order if any(x.family == f for x in self.rows)]

    # ------------------------------------------------------------------ numbers
    def stats(self, rows):
        s = {"n": len(rows), "meas": geomean([x.meas for x in rows])}
        pr = [x for x in rows if x.pred is not None]
        s["npred"] = len(pr)
        s["pred"] = geomean([x.pred for x in pr])
        s["mem_a"] = sum(x.bound_a == "memory" for x in pr)
        s["mem_b"] = sum(x.bound_b == "memory" for x in pr)
        s["far"] = sum(x.regime == "far" for x in pr)
        s["departs"] = sum(x.departs for x in pr)
        for v in ("faster", "same", "slower"):
            s[v] = sum(x.verdict == v for x in rows)
        return s

    def sentence(self, fam):
        rows = [x for x in self.rows if x.family == fam]
        s = self.stats(rows)
        a, b = self.name_a, self.name_b
        meas = gain_text(s["meas"])
        if not self.predict:
            return (f"{fam}: {s['n']} {plural(s['n'], 'row')}, measured {meas} on the {b}; by the noise verdict "
                    f"{s['faster']} faster, {s['same']} same, {s['slower']} slower.")
        pred = gain_text(s["pred"])
        if "as fast" in pred:
            pred = "the same"
        elif pred.split("× ")[-1] == meas.split("× ")[-1]:
            pred = pred.split(" ")[0]  # same direction as the measurement: the factor alone
        t = f"{fam}: {s['mem_a']} of {s['n']} {plural(s['n'], 'row')} memory-bound on the {a}"
        if s["mem_b"] != s["mem_a"]:
            t += f" ({s['mem_b']} on the {b})"
        t += f", measured {meas} on the {b} (predicted {pred})."
        if s["npred"] < s["n"]:
            t += f" Predicted over the {s['npred']} rows with a layer shape and a class peak."
        t += (f" By the noise verdict {s['faster']} faster, {s['same']} same, {s['slower']} slower; "
              f"{s['far']} far from both floors (over {FAR:g}× the floor on both cards); "
              f"{s['departs']} {'departs' if s['departs'] == 1 else 'depart'} from the prediction by more than "
              "the noise.")
        return t

    # ------------------------------------------------------------------ markdown
    def write(self, w, figs):
        c, a, b = self.c, self.name_a, self.name_b
        w(f"## {SECTION}")
        w("")
        w(f"A ran on the {self.A.device} (`{c.path_a}`), B on the {self.B.device} (`{c.path_b}`). For each row "
          "(each variant's default memory mode, N = " + ", ".join(map(str, self.Ns)) + ", PASS and timed on both "
          "sides) the section sets the time floor each card's measured ceilings allow beside the measured kernel "
          "time: FLOPs (the gflop column, direct convolution) over the row's precision-class peak_tflops, and the "
          "fewest bytes (input, weights and output once, in the row's io_dtype) over copy_gbs, each from the "
          "device's own CSV; the floor is the larger, and names the row memory- or compute-bound on that card. "
          "The predicted ratio is B floor / A floor; the measured one is B / A of the kernel_ms medians with the "
          "comparison's noise verdict. A row *departs* when measured / predicted lies outside the row's noise band "
          f"(the ratios the verdict calls same). Regimes: *far* when the kernel time is over {FAR:g}× the floor "
          "on both cards, else compute-bound on both, else memory-bound. A time / floor below 1 means the kernel "
          "did fewer FLOPs than the direct convolution (a Winograd or FFT engine).")
        w("")
        if not self.predict:
            w("**No prediction**: " + "; ".join(self.missing) + ". The prediction columns are left out; the "
              "measured ratios follow.")
            w("")
        else:
            body = [["copy bandwidth (copy_gbs, GB/s)", fnum(self.A.gbs), fnum(self.B.gbs),
                     f"{self.B.gbs / self.A.gbs:.3f}"]]
            for p in sorted(set(self.A.peaks) | set(self.B.peaks), key=prec_key):
                pa, pb = self.A.peaks.get(p), self.B.peaks.get(p)
                cell = lambda pk, card: (f"{fnum(pk)} (ridge {fnum(pk * 1000.0 / card.gbs)})" if pk else "—")
                body.append([f"{p} peak, TFLOP/s (ridge, FLOP/byte)", cell(pa, self.A), cell(pb, self.B),
                             f"{pb / pa:.3f}" if pa and pb else "—"])
            w(md_table(["ceiling (median of the CSV)", f"A: {a}", f"B: {b}", "B / A"], body,
                       ["l", "r", "r", "r"]))
            w("")
            w(f"With equal peaks a row can gain at most the bandwidth ratio, {self.B.gbs / self.A.gbs:.2f}× "
              f"(B / A floor {self.A.gbs / self.B.gbs:.3f}), and only when it is memory-bound on the {a}; a row "
              f"memory-bound on the {a} but compute-bound on the {b} gains less.")
            w("")
        if not self.rows:
            w("No row is PASS and timed on both sides at the main batch sizes: nothing to compare.")
            w("")
            return
        w(f"### Family summary (N = {', '.join(map(str, self.Ns))})")
        w("")
        for f in self.families:
            w(f"- {self.sentence(f)}")
        w("")
        head = ["family", "N", "rows"]
        if self.predict:
            head += [f"memory-bound on the {a}", f"memory-bound on the {b}", "far from both floors",
                     "predicted B / A"]
        head += ["measured B / A", "faster / same / slower"] + (["departs"] if self.predict else [])
        body = []
        for f in self.families:
            first = True
            for n in self.Ns + [None]:
                rows = [x for x in self.rows if x.family == f and (n is None or x.N == n)]
                if not rows:
                    continue
                s = self.stats(rows)
                cells = [f if first else "", "all" if n is None else n, s["n"]]
                first = False
                if self.predict:
                    cells += [s["mem_a"], s["mem_b"], s["far"], fnum(s["pred"])]
                cells += [fnum(s["meas"]), f"{s['faster']} / {s['same']} / {s['slower']}"]
                if self.predict:
                    cells.append(s["departs"])
                if n is None:
                    cells = [f"**{x}**" if x != "" else x for x in cells]
                body.append(cells)
        w(md_table(head, body, ["l", "r"] + ["r"] * (len(head) - 2)))
        w("")
        w("Ratios are geometric means of B / A (below 1: B is faster).")
        w("")
        n = self.table_N
        w(f"### Per layer, N = {n}")
        w("")
        if self.predict:
            w("Floors in µs, with the bound on that card; time / floor is the measured kernel time over the card's "
              "own floor. `eff.` marks Winograd and FFT rows (fewer FLOPs than the direct convolution).")
            w("")
        for f in self.families:
            rows = [x for x in self.rows if x.family == f and x.N == n]
            if not rows:
                continue
            w(f"#### {f}")
            w("")
            head = ["variant", "layer", "precision"]
            if self.predict:
                head += ["GFLOP", "MB", f"{a} floor µs", f"{a} time / floor", f"{b} floor µs", f"{b} time / floor",
                         "predicted B / A"]
            head += ["measured B / A", "verdict"] + (["regime", "departs: why"] if self.predict else [])
            body = []
            for x in rows:
                cells = [x.variant + (" eff." if x.effective else ""), x.layer, x.precision]
                if self.predict:
                    cells += [fnum(x.gflop), fnum(x.bytes / 1e6) if x.bytes else "—",
                              f"{fnum(x.fa[0] * 1e6)} ({x.bound_a})" if x.fa else "—", fnum(x.over_a),
                              f"{fnum(x.fb[0] * 1e6)} ({x.bound_b})" if x.fb else "—", fnum(x.over_b),
                              f"{x.pred:.3f}" if x.pred else "—"]
                cells += [f"{x.meas:.3f}", x.verdict]
                if self.predict:
                    cells += [REGIME_SHORT.get(x.regime, "—"), f"**yes**: {x.reason()}" if x.departs else ""]
                body.append(cells)
            align = ["l", "l", "l"] + ["r"] * (len(head) - 3)
            align[head.index("verdict"):] = ["l"] * (len(head) - head.index("verdict"))
            w(md_table(head, body, align))
            w("")
        if self.predict:
            w(f"### Rows whose measured gain departs from the prediction (N = {', '.join(map(str, self.Ns))})")
            w("")
            dep = [x for x in self.rows if x.departs]
            if dep:
                body = [[x.family, x.layer, x.N, x.variant, x.precision, f"{x.pred:.3f}", f"{x.meas:.3f}",
                         f"{x.lo:.3f} – {x.hi:.3f}", x.reason()] for x in dep]
                w(md_table(["family", "layer", "N", "variant", "precision", "predicted B / A", "measured B / A",
                            "noise band", "reason"], body, ["l", "l", "r", "l", "l", "r", "r", "r", "l"]))
            else:
                w("None: every row's measured ratio is the predicted one within the noise.")
            w("")
        if FIGURE in figs:
            w(f"![measured against predicted B / A]({FIGURE})")
            w("")

    # ------------------------------------------------------------------ figure
    def figure(self, out):
        """Per batch size: each row's measured B / A against its distance from B's floor
        (kernel time / floor), with a stick to the ratio the floors predict."""
        if not self.predict:
            return None, "no prediction: " + "; ".join(self.missing)
        pts = [x for x in self.rows if x.pred is not None]
        Ns = [n for n in self.Ns if any(x.N == n for x in pts)]
        if not Ns:
            return None, "no row with a prediction"
        fig, axes = plt.subplots(1, len(Ns), figsize=(4.6 * len(Ns) + 1.5, 5.0), sharex=True, sharey=True,
                                 squeeze=False, layout="constrained")
        bw = self.A.gbs / self.B.gbs
        ys = [bw, 1.0] + [x.meas for x in pts] + [x.pred for x in pts]
        xs = [FAR] + [x.over_b for x in pts]
        for ax, n in zip(axes[0], Ns):
            # compute-bound rows first, memory-bound ones (the subject) on top
            for x in sorted((p for p in pts if p.N == n), key=lambda p: p.bound_a == "memory"):
                col = BOUND_COLOR[x.bound_a]
                if x.departs:
                    ax.plot([x.over_b, x.over_b], [x.pred, x.meas], color=col, lw=0.8, alpha=0.6, zorder=2)
                    ax.plot([x.over_b], [x.pred], marker="_", ms=7, color=col, alpha=0.8, zorder=2)
                ax.plot([x.over_b], [x.meas], marker="^" if x.bound_a == "memory" else "o", ms=5, ls="",
                        color=col, mfc="none" if x.departs else col, alpha=0.85, zorder=3)
            ax.set_title(f"N = {n}", fontsize=9)
            ax.set_xlabel(f"{self.name_b} kernel time / {self.name_b} floor, log", fontsize=8)
        ylo, yhi = min(ys), max(ys)
        yspan = max(yhi / ylo, 1.3)
        xlo, xhi = min(xs), max(xs)
        xspan = max(xhi / xlo, 10.0)
        for ax in axes[0]:
            ax.axhline(1.0, color="0.5", lw=0.8, zorder=1)
            ax.axhline(bw, color=BOUND_COLOR["memory"], lw=0.8, ls=":", zorder=1)
            ax.axvline(FAR, color=REGIME_COLOR["far"], lw=0.8, ls="--", zorder=1)
            ax.axvline(1.0, color="0.75", lw=0.6, zorder=1)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlim(xlo / xspan ** 0.05, xhi * xspan ** 0.05)
            ax.set_ylim(ylo / yspan ** 0.08, yhi * yspan ** 0.08)
            plain_log_ticks(ax, "x")
            plain_log_ticks(ax, "y")
        axes[0][0].set_ylabel("measured B / A of kernel_ms (median), log")
        handles = [Line2D([], [], color=BOUND_COLOR["memory"], marker="^", ls="",
                          label=f"memory-bound on the {self.name_a}"),
                   Line2D([], [], color=BOUND_COLOR["compute"], marker="o", ls="",
                          label=f"compute-bound on the {self.name_a}"),
                   Line2D([], [], color="0.3", marker="o", mfc="none", ls="-", lw=0.8,
                          label="hollow: departs from the prediction by more than\nthe noise; the stick ends (—) at "
                                "the predicted ratio"),
                   Line2D([], [], color="0.5", lw=0.8, label="no gain (B / A = 1)"),
                   Line2D([], [], color=BOUND_COLOR["memory"], ls=":",
                          label=f"the bandwidth ratio: copy_gbs A / B = {bw:.3f}"),
                   Line2D([], [], color=REGIME_COLOR["far"], ls="--",
                          label=f"{FAR:g}× the floor: right of it (on both cards), far from both floors")]
        fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3, fontsize=8, frameon=False)
        fig.suptitle(self.c.title("Which rows gain from B's memory: measured B / A of kernel time against the distance "
                                  "from B's floor (below 1: B faster)"), fontsize=10)
        return save(fig, out, FIGURE), None
