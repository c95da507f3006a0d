"""Copy overhead per memory mode and element type (the study's Table 3)."""

import statistics

from ..breakdowns import breakdown_N
from ..io import MEM_ORDER, fnum, md_table, ok


def section(c):
    d, w, fig = c.d, c.w, c.fig
    # --- copy overhead (Table 3)
    w("## Copy overhead")
    w("")
    w("Host-to-device and device-to-host copy time per layer and N for each memory mode and element type on "
      "the bus (the study's Table 3): `h2d / d2h` in ms, the median over the PASS rows of all variants run "
      "in that mode (the copy does not depend on the kernel). Managed modes move pages during the kernel "
      "(h2d 0: the migration is inside kernel_ms); streams overlaps copies with kernels.")
    w("")
    dtypes = sorted({r.get("io_dtype", "") for r in d.rows if ok(r)})
    for dt in dtypes:
        mems = [m for m in MEM_ORDER + sorted({r["memory"] for r in d.rows} - set(MEM_ORDER))
                if any(r["memory"] == m and r.get("io_dtype", "") == dt and ok(r) for r in d.rows)]
        w(f"### Copy overhead (ms, h2d / d2h), io_dtype {dt or '?'}")
        w("")
        body, used = [], []
        for l in d.layers:
            for n in d.Ns:
                cells = []
                for m in mems:
                    rs = [r for r in d.rows if r["layer"] == l and r["N"] == n and r["memory"] == m
                          and r.get("io_dtype", "") == dt and ok(r) and r["h2d_ms"] is not None]
                    used += rs
                    if rs:
                        h = statistics.median(r["h2d_ms"] for r in rs)
                        k = statistics.median(r["d2h_ms"] for r in rs if r["d2h_ms"] is not None) \
                            if any(r["d2h_ms"] is not None for r in rs) else None
                        cells.append(f"{fnum(h)} / {fnum(k)} ({len(rs)})")
                    else:
                        cells.append("—")
                if any(c != "—" for c in cells):
                    body.append([l, n] + cells)
        w(md_table(["layer", "N"] + [f"{m} (rows)" for m in mems], body, ["l", "r"] + ["r"] * len(mems)))
        w("")
        w(d.provenance(used, f"io_dtype {dt}"))
        w("")
    nb = breakdown_N(d)
    for l in d.layers:
        fig(f"breakdown_{l}_N{nb}.png", f"breakdown {l} N={nb}")
