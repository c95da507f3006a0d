#!/usr/bin/env python3
"""Joins check.cu's CSV with scripts/pytorch_anchors.py's: our graph-API row / PyTorch's, per
(layer, N, precision, layout). Usage: compare.py graph.csv pt.csv"""
import csv
import sys

ours = list(csv.DictReader(open(sys.argv[1])))
pt = {(r["layer"], r["N"], r["precision"], r["layout"]): float(r["ms"]) for r in csv.DictReader(open(sys.argv[2]))}
print(f"{'case':<28} {'status':<6} {'ours ms':>9} {'torch ms':>9} {'ratio':>6}  engine")
worst = []
for r in ours:
    key = (r["layer"], r["N"], r["precision"], r["layout"])
    t = pt.get(key)
    ms = float(r["ms"]) if r["ms"] not in ("", "nan") else float("nan")
    ratio = ms / t if t else float("nan")
    eng = r["detail"].split(" [")[0] if r["status"] == "PASS" else r["detail"][:80]
    print(f"{r['variant'] + ' ' + r['layer'] + ' N=' + r['N'] + ' ' + r['layout']:<28} {r['status']:<6} {ms:9.4f} "
          f"{(t if t else float('nan')):9.4f} {ratio:6.2f}  {eng} [{r['algo']}]")
    if r["variant"].startswith("cudnn-") and "chunk" not in r["variant"] and t:
        worst.append((ratio, key))
if worst:
    worst.sort()
    n_ok = sum(1 for w in worst if w[0] <= 1.15)
    print(f"within 1.15x of PyTorch: {n_ok}/{len(worst)}; slowest ratios: " +
          ", ".join(f"{k[0]} N={k[1]} {k[2]} {k[3]} {r:.2f}" for r, k in worst[-5:]))
