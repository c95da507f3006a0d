"""The whole network, batch scaling and coalescing (the study's Figure 8, Tables 8, 10, 11)."""

from ..io import fnum, fx, md_table, ok
from ..speedups import coalescing_layer, coalescing_pairs, scaling_variants
from .common import status_cell


def section(c):
    d, w, fig = c.d, c.w, c.fig
    # --- all layers (Fig 8)
    w("## All layers together")
    w("")
    w("Kernel time summed over the layers per variant (only where every layer passed), and the speedup of "
      "the whole network over the CPU (sum of cpu_ms / sum of kernel_ms), as in the study's Figure 8.")
    w("")
    body, used = [], []
    for v in d.variants:
        cells = []
        for n in d.main_Ns:
            rs = [d.getok(l, n, v) for l in d.layers]
            if all(rs):
                used += rs
                k = sum(r["kernel_ms"] for r in rs)
                c = sum(r["cpu_ms"] or 0 for r in rs)
                cells += [fnum(k), fx(c / k if c else None)]
            else:
                cells += ["—", "—"]
        if any(c != "—" for c in cells):
            body.append([d.label(v)] + cells)
    hdr = ["variant"]
    for n in d.main_Ns:
        hdr += [f"N={n} ms", f"N={n} speedup"]
    w(md_table(hdr, body))
    w("")
    w(d.provenance(used))
    w("")
    fig("all_layers.png", "all layers")

    # --- scaling (Tables 10, 11)
    w("## Scaling with batch size")
    w("")
    svs = scaling_variants(d)
    many = [v for v in svs if len({r["N"] for r in d.rows if r["variant"] == v and ok(r)}) > 3]
    if len(d.Ns) > 3 and many:
        w("Kernel time (ms) and kernel-only speedup against N for the variants with PASS rows at more than three "
          "batch sizes (the study's Tables 10 and 11). Cells: `kernel ms (speedup×)`; `check` says how the rows "
          "were checked (a sampled check when golden files for a large N were not written).")
        w("")
        w("### CPU float32 reference time (ms)")
        w("")
        w(md_table(["layer"] + [f"N={n}" for n in d.Ns],
                   [[l] + [fnum(d.cpu_ms(l, n)) for n in d.Ns] for l in d.layers]))
        w("")
        w(d.provenance([r for r in d.rows if r["cpu_ms"]], "cpu_ms column"))
        w("")
        for v in many:
            m = d.default_mode[v]
            rs_all = [r for r in d.rows if r["variant"] == v and r["memory"] == m]
            ns = sorted({r["N"] for r in rs_all})
            w(f"### Scaling: {d.label(v)}")
            w("")
            body = []
            for l in d.layers:
                cells = []
                for n in ns:
                    r = d.get(l, n, v, m)
                    cells.append(status_cell(r) or f"{fnum(r['kernel_ms'])} ({fx(r['speedup_kernel'])})")
                body.append([l] + cells)
            checks = sorted({r.get("check", "") for r in rs_all if r.get("check")})
            w(md_table(["layer"] + [f"N={n}" for n in ns], body))
            w("")
            w(d.provenance(rs_all, f"memory {m} · check: {', '.join(checks) or '—'}"))
            w("")
    else:
        w(f"Not enough batch sizes for a scaling table (N = {', '.join(map(str, d.Ns))}; a table needs a variant "
          f"with more than three). The scaling figure shows every variant with three or more.")
        w("")
    fig("scaling.png", "scaling")

    # --- coalescing (Table 8)
    w("## Coalesced vs uncoalesced conv1")
    w("")
    pairs = coalescing_pairs(d)
    cl = coalescing_layer(d)
    if pairs and cl:
        w("Each variant `X` against `X-uncoalesced` (the same kernel with each thread on an adjacent patch of "
          f"outputs) on {cl}, as in the study's Table 8: kernel time (ms), speedup over the CPU, and the "
          "ratio uncoalesced / coalesced kernel time.")
        w("")
        body, used = [], []
        for a, b in pairs:
            for n in d.Ns:
                ra, rb = d.get(cl, n, a), d.get(cl, n, b)
                if not ra and not rb:
                    continue
                used += [r for r in (ra, rb) if r]
                ratio = rb["kernel_ms"] / ra["kernel_ms"] if ra and rb and ok(ra) and ok(rb) else None
                body.append([a, n, status_cell(ra) or fnum(ra["kernel_ms"]), status_cell(rb) or fnum(rb["kernel_ms"]),
                             status_cell(ra) or fx(ra["speedup_kernel"]), status_cell(rb) or fx(rb["speedup_kernel"]),
                             fx(ratio)])
        w(md_table(["variant X", "N", "coalesced ms", "uncoalesced ms", "coalesced speedup", "uncoalesced speedup",
                    "uncoalesced / coalesced"], body))
        w("")
        w(d.provenance(used, cl))
        w("")
    else:
        w("No `X` / `X-uncoalesced` pairs with conv1 rows in this data.")
        w("")
    fig("coalescing_conv1.png", "coalescing conv1")
