"""SKIP, FAIL and ERROR rows with their reasons."""

from ..io import fexp, md_table


def section(c):
    d, w, fig = c.d, c.w, c.fig
    # --- SKIP / FAIL / ERROR
    w("## SKIP, FAIL and ERROR rows")
    w("")
    bad = [r for r in d.rows if r["status"] != "PASS"]
    if bad:
        groups = {}
        for r in bad:
            groups.setdefault((r["status"], r["variant"], r.get("reason", "")), []).append(r)
        body = []
        order = {"FAIL": 0, "ERROR": 1, "UNCHECKED": 2, "SKIP": 3}  # UNCHECKED: timed, output not compared
        for (st, v, reason), rs in sorted(groups.items(), key=lambda kv: (order.get(kv[0][0], 3),
                                                                           d.variants.index(kv[0][1]), kv[0][2])):
            where = {}
            for r in rs:
                where.setdefault((r["layer"], r["memory"]), []).append(r["N"])
            wh = "; ".join(f"{l} N={','.join(map(str, sorted(ns)))} {m}"
                           for (l, m), ns in sorted(where.items(),
                                                    key=lambda kv: (d.layers.index(kv[0][0]), kv[0][1])))
            err = ""
            if st == "FAIL":
                e = max((r["max_rel_err"] for r in rs if r["max_rel_err"] is not None), default=None)
                t = next((r["threshold"] for r in rs if r["threshold"] is not None), None)
                err = f"{fexp(e)} (threshold {t:g})" if t is not None else fexp(e)
            body.append([f"**{st}**" if st != "SKIP" else st, v, wh, reason or "—", err])
        w(md_table(["status", "variant", "where (layer, N, memory)", "reason", "max_rel_err"], body,
                   ["l", "l", "l", "l", "r"]))
        w("")
        w(d.provenance(bad))
    else:
        w("None: every row passed.")
    w("")
