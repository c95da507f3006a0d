"""What every report section shares: the context it writes into, and the status cell."""


def status_cell(r):
    if r is None:
        return "—"
    return r["status"] if r["status"] != "PASS" else None


class Context:
    """A section's view: the data `d`, `w(line)` appends a line to report.md, `fig(name, alt)`
    embeds the figure `name` (every part it was split into), `figs` the figures drawn."""

    def __init__(self, d, figs, inputs):
        self.d, self.figs, self.inputs = d, figs, inputs
        self.lines = []
        self.peak = f"{d.peak:.1f} TFLOP/s" if d.peak else "not in the data"

    def w(self, line):
        self.lines.append(line)

    def fig(self, name, alt):
        for part in self.figs.get(name) or []:
            self.w(f"![{alt}]({part})")
            self.w("")

    def variant_rows(self):
        """(variant, memory, label) in table order: default mode first, then the others."""
        d = self.d
        out = []
        for v in d.variants:
            out.append((v, d.default_mode[v], d.label(v)))
            for m in d.modes_of(v):
                if m != d.default_mode[v]:
                    out.append((v, m, f"{v} · {m}"))
        return out
