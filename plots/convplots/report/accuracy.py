"""Error against the golden output, per variant."""

from ..io import fexp, md_table


def section(c):
    d, w, fig = c.d, c.w, c.fig
    # --- error
    w("## Error by variant")
    w("")
    w("Worst error of each variant over every layer, N and memory mode it ran (PASS and FAIL rows): "
      "`max_abs_err` (the study's max epsilon), `max_rel_err` = max_abs_err / max|golden|, and the pass "
      "threshold on max_rel_err for the variant's precision class.")
    w("")
    body, used = [], []
    for v in d.variants:
        rs = [r for r in d.rows if r["variant"] == v and r["status"] in ("PASS", "FAIL")]
        if not rs:
            continue
        used += rs
        er = [r for r in rs if r["max_rel_err"] is not None]
        worst = max(er, key=lambda r: r["max_rel_err"]) if er else None
        mabs = max((r["max_abs_err"] for r in rs if r["max_abs_err"] is not None), default=None)
        nfail = sum(r["status"] == "FAIL" for r in rs)
        thr = sorted({r["threshold"] for r in rs if r["threshold"] is not None})
        checks = sorted({r.get("check", "") for r in rs if r.get("check")})
        body.append([v, d.families[v], d.precision.get(v, ""), fexp(mabs),
                     fexp(worst["max_rel_err"] if worst else None),
                     f"{worst['layer']} N={worst['N']}" if worst else "—",
                     ", ".join(f"{t:g}" for t in thr) or "—",
                     f"**FAIL** ({nfail} of {len(rs)})" if nfail else f"PASS ({len(rs)})", ", ".join(checks)])
    w(md_table(["variant", "family", "precision", "max_abs_err", "max_rel_err", "worst at", "threshold", "status",
                "check"], body, ["l", "l", "l", "r", "r", "l", "r", "l", "l"]))
    w("")
    w(d.provenance(used))
    w("")
    fig("errors.png", "errors")
