#!/usr/bin/env python3
"""The SASS table of two builds: for every kernel instantiation of BEFORE and AFTER (cubins in the
programs, `cuobjdump`), its registers, local memory (spill) bytes, stack, static shared memory and
counts of HGMMA, UTMALDG, UTMASTG, BAR, CALL, STL/LDL and all SASS instructions, side by side.

    scripts/sass_table.py BEFORE AFTER OUT.csv [--rename OLD=NEW ...]

Instantiations are matched by their mangled name; a name that a change renamed (a namespace, a
policy type) is matched by the --rename rules, applied in order to BEFORE's demangled names
(plain text replacement) until one equals an AFTER name. Each row of OUT.csv names both
sides (the table that maps old kernel names to new) and says `equal` or what differs.
Exit 0 when every instantiation is on both sides with equal counts, 1 otherwise, 2 for bad input.
Runs where the CUDA toolkit is (cuobjdump, cu++filt); standard library only.
"""
import argparse
import collections
import csv
import os
import re
import shutil
import subprocess
import sys

COUNTED = ["HGMMA", "UTMALDG", "UTMASTG", "BAR", "CALL", "STL", "LDL"]
FIELDS = ["regs", "local", "stack", "smem"] + [c.lower() for c in COUNTED] + ["instructions"]


def tool(name):
    path = shutil.which(name) or os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", name)
    if not os.access(path, os.X_OK):
        sys.exit(f"sass_table: no {name} (on PATH or in $CUDA_HOME/bin)")
    return path


def run(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False)
    if p.returncode != 0:
        sys.exit(f"sass_table: {' '.join(args)} failed ({p.returncode}): {p.stderr.strip()[:400]}")
    return p.stdout


RES = re.compile(r"^\s*Function (\S+):\s*(.*)$")
FUNC = re.compile(r"^\s*Function : (\S+)\s*$")
INSN = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[0-9T]+\s+)?([A-Z0-9_]+)(?:\.[A-Z0-9_.]+)?")


def kernels(binary):
    """{mangled name: [stats per cubin, in cuobjdump's order]}"""
    cuobjdump = tool("cuobjdump")
    usage = collections.defaultdict(list)
    for line in run([cuobjdump, "-res-usage", binary]).splitlines():
        m = RES.match(line)
        if m:
            kv = dict(re.findall(r"([A-Z\[\]0-9]+):(\d+)", m.group(2)))
            usage[m.group(1)].append({"regs": int(kv.get("REG", 0)), "local": int(kv.get("LOCAL", 0)),
                                      "stack": int(kv.get("STACK", 0)), "smem": int(kv.get("SHARED", 0))})
    counts = collections.defaultdict(list)
    cur = None
    for line in run([cuobjdump, "-sass", binary]).splitlines():
        m = FUNC.match(line)
        if m:
            cur = collections.Counter()
            counts[m.group(1)].append(cur)
            continue
        m = INSN.match(line) if cur is not None else None
        if m:
            op = m.group(1)
            cur["instructions"] += 1
            for c in COUNTED:
                if op.startswith(c):
                    cur[c.lower()] += 1
    out = {}
    for name in set(usage) | set(counts):
        u, c = usage.get(name, []), counts.get(name, [])
        rows = []
        for i in range(max(len(u), len(c))):
            row = dict(u[i] if i < len(u) else {})
            row.update({k: (c[i][k] if i < len(c) else None) for k in [x.lower() for x in COUNTED] + ["instructions"]})
            rows.append(row)
        out[name] = sorted(rows, key=lambda r: tuple(-1 if r.get(f) is None else r[f] for f in FIELDS))
    return out


def demangle(names):
    if not names:
        return {}
    text = subprocess.run([tool("cu++filt")], input="\n".join(names) + "\n", stdout=subprocess.PIPE,
                          text=True, check=True).stdout.splitlines()
    return dict(zip(names, text))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("out")
    ap.add_argument("--rename", action="append", default=[], metavar="OLD=NEW",
                    help="a text replacement in BEFORE's demangled names (repeatable, applied in order)")
    a = ap.parse_args()
    for p in (a.before, a.after):
        if not os.path.isfile(p):
            print(f"sass_table: no program '{p}'", file=sys.stderr)
            return 2
    rules = []
    for r in a.rename:
        if "=" not in r:
            print(f"sass_table: --rename '{r}' is not OLD=NEW", file=sys.stderr)
            return 2
        rules.append(tuple(r.split("=", 1)))
    kb, ka = kernels(a.before), kernels(a.after)
    db, da = demangle(sorted(kb)), demangle(sorted(ka))
    after_by_demangled = {v: k for k, v in da.items()}
    pairs, used = [], set()
    for nb in sorted(kb):
        na = nb if nb in ka else None
        if na is None:
            text = db[nb]
            for old, new in rules:
                text = text.replace(old, new)
                if text in after_by_demangled and after_by_demangled[text] not in kb:
                    na = after_by_demangled[text]
                    break
        if na is not None:
            used.add(na)
        pairs.append((nb, na))
    pairs += [(None, na) for na in sorted(ka) if na not in used]
    rows, differ = [], 0
    for nb, na in pairs:
        sb, sa = kb.get(nb, []) if nb else [], ka.get(na, []) if na else []
        match = "same name" if nb == na else "renamed" if nb and na else "before only" if nb else "after only"
        for i in range(max(len(sb), len(sa))):
            b = sb[i] if i < len(sb) else None
            x = sa[i] if i < len(sa) else None
            diff = [f for f in FIELDS if not b or not x or b.get(f) != x.get(f)]
            verdict = "equal" if not diff else "differs: " + " ".join(diff)
            differ += bool(diff)
            row = {"before": db.get(nb, "") if nb else "", "after": da.get(na, "") if na else "", "match": match,
                   "copy": i + 1, "verdict": verdict}
            for f in FIELDS:
                row[f + "_before"] = "" if not b or b.get(f) is None else b[f]
                row[f + "_after"] = "" if not x or x.get(f) is None else x[f]
            rows.append(row)
    rows.sort(key=lambda r: (r["verdict"] == "equal", r["match"] == "same name", r["after"] or r["before"]))
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["verdict", "match", "before", "after", "copy"] +
                           [f"{k}_{s}" for k in FIELDS for s in ("before", "after")])
        w.writeheader()
        w.writerows(rows)
    kinds = collections.Counter(r["match"] for r in rows)
    print(f"sass_table: {len(rows)} kernel instantiations ({', '.join(f'{v} {k}' for k, v in sorted(kinds.items()))}); "
          f"{len(rows) - differ} equal, {differ} differ or on one side only; table: {a.out}")
    for r in rows[:20]:
        if r["verdict"] != "equal":
            print(f"  {r['verdict']}: {r['before'] or '-'} -> {r['after'] or '-'}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
