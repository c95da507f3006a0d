#!/usr/bin/env python3
"""Adds the `search_ms` column (docs/csv-columns.md) to result CSVs written before the harness
wrote it, from what those rows recorded instead: a cuDNN graph row's detail names its engine
search's median for the chosen configuration ("ws <x> MB, <ms> ms (median of ..."). The rule is
the harness's (Plan::search_ms, gpu/variants/cudnn_graph.cu): plain cudnn-<class> rows only
(not the s2d rows, whose time includes the transform), the whole batch in one call (not the
streams mode), no chunk on another engine; every other row gets an empty field. The column goes
after kernel_p90_ms (else after kernel_ms), as the harness places it; every other field and the
row order stay as they are. A CSV that has the column already is left alone.

    scripts/csv_search_ms.py FILE.csv...
"""
import csv
import re
import sys

SEARCH = re.compile(r"ws [\d.]+ MB, ([\d.]+) ms \(median of")


def search_ms(row):
    if row.get("family") != "cudnn" or row.get("variant", "").endswith("-s2d") or row.get("memory") == "streams":
        return ""
    d = row.get("detail", "")
    m = SEARCH.search(d)
    return m.group(1) if m and "chunks on other engines" not in d else ""


def migrate(path):
    with open(path, newline="", encoding="utf-8") as f:
        rd = csv.DictReader(f)
        cols = list(rd.fieldnames or [])
        rows = list(rd)
    if "search_ms" in cols:
        return f"{path}: has search_ms already"
    if "detail" not in cols or "family" not in cols:
        raise SystemExit(f"{path}: not a convstudy result CSV (no detail / family column)")
    after = "kernel_p90_ms" if "kernel_p90_ms" in cols else "kernel_ms"
    cols.insert(cols.index(after) + 1, "search_ms")
    n = 0
    for r in rows:
        r["search_ms"] = search_ms(r)
        n += bool(r["search_ms"])
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return f"{path}: search_ms on {n} of {len(rows)} rows"


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    for p in sys.argv[1:]:
        print(migrate(p))
