#!/usr/bin/env python3
"""Instruction mix per kernel from `cuobjdump -sass` output (stdin): total, FFMA, HMMA, LDS,
LDGSTS, LDG, STS, BAR, LDL/STL (spills), and the same inside the largest loop (the block of
instructions between the last backward branch target and its BRA)."""
import re
import sys

kernels = {}
cur = None
for line in sys.stdin:
    m = re.search(r"Function : (\S+)", line)
    if m:
        cur = m.group(1)
        kernels[cur] = []
        continue
    m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
    if m and cur:
        kernels[cur].append((int(m.group(1), 16), m.group(2)))

KEYS = ["FFMA", "HMMA", "LDS", "LDGSTS", "LDG", "STS", "STG", "BAR", "LDL", "STL", "IMAD", "F2FP", "FADD"]


def mix(instrs):
    c = {k: 0 for k in KEYS}
    for _, txt in instrs:
        op = re.sub(r"^@!?U?P\w+\s+", "", txt).split()[0] if txt else ""
        base = op.split(".")[0]
        if base in c:
            c[base] += 1
    return c


for name, ins in kernels.items():
    # largest loop: a BRA to an earlier address
    best = None
    for addr, txt in ins:
        m = re.search(r"BRA\s+(?:`\(\.L_x_\d+\)\s*)?0x([0-9a-f]+)", txt) or re.search(r"BRA\s+`?\(?\.?L?_?x?_?\d*\)?\s*0x([0-9a-f]+)", txt)
        if not m:
            continue
        tgt = int(m.group(1), 16)
        if tgt < addr and (best is None or addr - tgt > best[1] - best[0]):
            best = (tgt, addr)
    c = mix(ins)
    line = f"{name[:90]}\n  all  {len(ins):5d}: " + " ".join(f"{k}={v}" for k, v in c.items() if v)
    if best:
        loop = [x for x in ins if best[0] <= x[0] <= best[1]]
        cl = mix(loop)
        line += f"\n  loop {len(loop):5d}: " + " ".join(f"{k}={v}" for k, v in cl.items() if v)
    print(line)
