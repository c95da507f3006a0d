#!/usr/bin/env python3
"""The hottest SASS instructions of one kernel in an Nsight Compute report's source page
(`ncu -i REPORT --page source --print-source sass --csv`, read on stdin): the TOP instructions
by warp-stall samples, each with its samples by stall reason and the instructions before it
(what a wait or a retry branch belongs to), and the samples summed by opcode. Used by
scripts/device_halo_ncu.sh (SOURCE=1) to say which instructions a kernel's warps wait at.

    ncu -i r.ncu-rep --page source --print-source sass --csv | ncu_source_top.py [TOP]
"""
import csv
import sys


def main():
    top = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    lines = sys.stdin.read().splitlines()
    # the CSV starts at the header line that names the address column
    start = next((i for i, l in enumerate(lines) if l.startswith('"Address"') or l.startswith('Address')), None)
    if start is None:
        print("no source table in the input:", *lines[:5], sep="\n")
        return 1
    rows = list(csv.DictReader(lines[start:]))
    if not rows:
        print("empty source table")
        return 1
    cols = list(rows[0].keys())
    total_col = next((c for c in cols if c.startswith("Warp Stall Sampling (All Samples)")), None)
    stall_cols = [c for c in cols if c.startswith("stall_") and "Not Issued" not in c] or \
                 [c for c in cols if "stall" in c.lower() and "Not Issued" not in c and c != total_col]
    if total_col is None:
        print("no sampling column; columns:", ", ".join(cols))
        return 1

    def num(x):
        try:
            return float(str(x).replace(",", ""))
        except ValueError:
            return 0.0

    total = sum(num(r[total_col]) for r in rows)
    print(f"{len(rows)} instructions, {total:.0f} warp-stall samples")
    by_op = {}
    for r in rows:
        op = r.get("Source", "").split()[0] if r.get("Source", "").split() else "?"
        if op.startswith("@"):
            op = r["Source"].split()[1] if len(r["Source"].split()) > 1 else op
        by_op[op.split(".")[0]] = by_op.get(op.split(".")[0], 0.0) + num(r[total_col])
    print("\nsamples by opcode:")
    for op, s in sorted(by_op.items(), key=lambda kv: -kv[1])[:15]:
        print(f"  {op:<12} {s:8.0f}  {100 * s / max(total, 1):5.1f}%")
    print(f"\ntop {top} instructions (each with the {CONTEXT} instructions before it, in address order):")
    index = {id(r): i for i, r in enumerate(rows)}
    for r in sorted(rows, key=lambda r: -num(r[total_col]))[:top]:
        reasons = sorted(((c.replace("stall_", ""), num(r[c])) for c in stall_cols), key=lambda kv: -kv[1])
        why = ", ".join(f"{c} {v:.0f}" for c, v in reasons if v > 0)[:110]
        i = index[id(r)]
        for p in rows[max(0, i - CONTEXT):i]:
            print(f"  {p.get('Address', '?'):>8}         {p.get('Source', '')[:60]}")
        print(f"  {r.get('Address', '?'):>8} {num(r[total_col]):6.0f}  {r.get('Source', '')[:60]:<60}  {why}")
    return 0


CONTEXT = 2  # instructions printed before each hot one: what a wait or a branch belongs to


if __name__ == "__main__":
    sys.exit(main())
