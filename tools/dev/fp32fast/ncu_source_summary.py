#!/usr/bin/env python3
"""Where a kernel's warps wait, from ncu's source page (ncu_source.sh writes it: --page source
--print-source sass --csv). Per kernel: the stall samples grouped by how often an instruction
ran (one group per loop level: once per warp = prologue/epilogue, once per warp and position,
...), then the instructions with the most samples and their two largest stall reasons.

    tools/dev/fp32fast/ncu_source_summary.py ncu_source.csv[.gz] [--top 15]

Reading it: samples are per warp, so a phase that runs while other warps have left (an
epilogue after the producer exits) weighs less than its share of the kernel's time; confirm
a phase's cost by removing it (diag_epilogue_fold.sh) before acting on it."""
import argparse
import collections
import csv
import gzip
import sys


def read_kernels(path):
    """The CSV's kernels: name, column header and one row per SASS instruction."""
    out = []
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        cur = None
        for row in csv.reader(f):
            if row and row[0] == "Kernel Name":
                cur = {"name": row[1], "header": None, "rows": []}
                out.append(cur)
            elif cur is not None and row and row[0] == "Address":
                cur["header"] = row
            elif cur is not None and cur["header"] and len(row) == len(cur["header"]):
                cur["rows"].append(row)
    return out


def num(x):
    try:
        return float(x)
    except ValueError:
        return 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=15)
    a = ap.parse_args()
    try:
        ks = read_kernels(a.csv)
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        sys.exit(f"{a.csv}: cannot read it as ncu's source CSV ({e})")
    if not ks:
        sys.exit("no 'Kernel Name' rows: not an ncu --page source --csv output")
    for k in ks:
        h = k["header"]
        if h is None:
            continue
        i_s = h.index("Warp Stall Sampling (All Samples)")
        i_e = h.index("Instructions Executed")
        reasons = [i for i, c in enumerate(h) if c.startswith("stall_") and "Not Issued" not in c]
        total = sum(num(r[i_s]) for r in k["rows"]) or 1.0
        print(f"== {k['name'][:110]}")
        print(f"   {total:.0f} samples, {sum(num(r[i_e]) for r in k['rows']):.0f} warp instructions")
        groups = collections.defaultdict(lambda: [0.0, 0, 0.0])
        for r in k["rows"]:
            g = groups[int(num(r[i_e]))]
            g[0] += num(r[i_s])
            g[1] += 1
            g[2] += num(r[i_e])
        print("   by executions per instruction (a loop level):")
        for e, (s, n, ins) in sorted(groups.items(), key=lambda kv: -kv[1][0])[:8]:
            print(f"     {e:>10} x {n:5d} instructions: {100 * s / total:5.1f}% of samples, {ins:.0f} executed")
        print(f"   top {a.top} instructions:")
        for r in sorted(k["rows"], key=lambda r: -num(r[i_s]))[: a.top]:
            why = sorted(((num(r[i]), h[i][6:]) for i in reasons), reverse=True)[:2]
            why = ", ".join(f"{w} {v:.0f}" for v, w in why if v > 0) or "(reason not in the CSV)"
            print(f"     {100 * num(r[i_s]) / total:5.1f}%  x{int(num(r[i_e])):>9}  {r[1].strip()[:60]:60s} {why}")


if __name__ == "__main__":
    main()
