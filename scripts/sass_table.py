#!/usr/bin/env python3
"""The SASS table of two builds: for every kernel instantiation of BEFORE and AFTER (cubins in the
programs, `cuobjdump`), its registers, local memory (spill) bytes, stack, static shared memory and
counts of HGMMA, UTMALDG, UTMASTG, BAR, CALL, STL/LDL, WARPSYNC (a persistent kernel's walk can
put one before every wgmma batch: tile_scheduler.cuh's for_each_unit) and all SASS instructions,
side by side.

    scripts/sass_table.py BEFORE AFTER OUT.csv [--rename OLD=NEW ...]

Instantiations are matched by their mangled name, else by their demangled one (an anonymous
namespace's mangled name depends on its file's path); a name that a change renamed (a namespace,
a policy type) is matched by the --rename rules, applied in order to BEFORE's demangled names
(plain text replacement) until one equals an AFTER name. Each row of OUT.csv names both
sides (the table that maps old kernel names to new) and says `equal` or what differs.
Exit 0 when every instantiation is on both sides with equal counts, 1 otherwise, 2 for bad input.
Runs where the CUDA toolkit is (cuobjdump, cu++filt); standard library only. `--self-test`
(ctest, no toolkit needed) runs it on two made-up programs through stand-ins for both tools.
"""
import argparse
import collections
import csv
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile

COUNTED = ["HGMMA", "UTMALDG", "UTMASTG", "BAR", "CALL", "STL", "LDL", "WARPSYNC"]
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


RES = re.compile(r"^\s*Function ([^\s:]+):\s*(.*)$")
FUNC = re.compile(r"^\s*Function : (\S+)\s*$")
INSN = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[0-9T]+\s+)?([A-Z0-9_]+)(?:\.[A-Z0-9_.]+)?")


def cubin_stats(path):
    """{mangled name: [stats]} of one cubin (res-usage and SASS counts)."""
    cuobjdump = tool("cuobjdump")
    usage = collections.defaultdict(list)
    pending = None  # a "Function NAME:" line whose values are on the next line
    for line in run([cuobjdump, "-res-usage", path]).splitlines():
        m = RES.match(line)
        name, values = (m.group(1), m.group(2)) if m else (pending, line)
        pending = name if m and "REG:" not in values else None
        if name and "REG:" in values:
            kv = dict(re.findall(r"([A-Z\[\]0-9]+):(\d+)", values))
            usage[name].append({"regs": int(kv["REG"]), "local": int(kv.get("LOCAL", 0)),
                                "stack": int(kv.get("STACK", 0)), "smem": int(kv.get("SHARED", 0))})
    counts = collections.defaultdict(list)
    cur = None
    for line in run([cuobjdump, "-sass", path]).splitlines():
        if "Function : " in line:
            m = FUNC.match(line)
            if m:
                cur = collections.Counter()
                counts[m.group(1)].append(cur)
            continue
        if cur is None or "/*" not in line:
            continue
        m = INSN.match(line)
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
        out[name] = rows
    return out


def kernels(binary, jobs):
    """{mangled name: [stats per cubin that holds it]}: the program's cubins extracted
    (cuobjdump -xelf) and read in parallel."""
    cuobjdump = tool("cuobjdump")
    with tempfile.TemporaryDirectory(prefix="sass_table_") as tmp:
        subprocess.run([cuobjdump, "-xelf", "all", os.path.abspath(binary)], cwd=tmp, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, check=True)
        cubins = sorted(os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".cubin"))
        if not cubins:
            sys.exit(f"sass_table: {binary} holds no cubin")
        with multiprocessing.Pool(jobs) as pool:
            parts = pool.map(cubin_stats, cubins)
    out = collections.defaultdict(list)
    for part in parts:
        for name, rows in part.items():
            out[name] += rows
    return {n: sorted(r, key=lambda x: tuple(-1 if x.get(f) is None else x[f] for f in FIELDS)) for n, r in out.items()}


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
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="cubins read at once (default: the cores)")
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
    kb, ka = kernels(a.before, a.jobs), kernels(a.after, a.jobs)
    db, da = demangle(sorted(kb)), demangle(sorted(ka))
    # demangled name -> AFTER's mangled names of it not paired yet (one per file where an
    # anonymous namespace holds it)
    after_by_demangled = collections.defaultdict(list)
    for k in sorted(ka):
        if k not in kb:
            after_by_demangled[da[k]].append(k)
    pairs, used = [], set()

    def take(text):
        free = [k for k in after_by_demangled.get(text, []) if k not in used]
        return free[0] if free else None

    for nb in sorted(kb):
        na = nb if nb in ka else None
        if na is None:
            text = db[nb]
            # the same demangled name: an anonymous namespace's mangling names the file it is in
            na = take(text)
            for old, new in rules if na is None else []:
                text = text.replace(old, new)
                na = take(text)
                if na is not None:
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


# ---- the self-test: stand-ins for cuobjdump and cu++filt, two made-up programs ---------------
FAKE_TOOL = r'''#!/usr/bin/env python3
import os, sys
KERNELS = {  # program -> cubin -> [(mangled, REG, SHARED, SASS opcodes)]
    "before": {"a": [("_Z1kv", 32, 1024, ["LDC", "@P0 HGMMA.64x128x16.F32", "BAR.SYNC", "EXIT"]),
                     ("_ZN12_GLOBAL__N_1a1gEv", 40, 0, ["CALL.REL.NOINC", "RET.REL.NODEC"])],
               "b": [("_ZN12_GLOBAL__N_1b1gEv", 40, 0, ["CALL.REL.NOINC", "RET.REL.NODEC"]),
                     ("_Z1hN3old1TE", 64, 0, ["UTMALDG.2D", "UTMASTG.2D", "EXIT"]),
                     ("_Z4slowv", 16, 0, ["STL", "LDL", "EXIT"])]},
    "after": {"a": [("_Z1kv", 32, 1024, ["LDC", "@P0 HGMMA.64x128x16.F32", "BAR.SYNC", "EXIT"]),
                    ("_ZN12_GLOBAL__N_2a1gEv", 40, 0, ["CALL.REL.NOINC", "RET.REL.NODEC"])],
              "b": [("_ZN12_GLOBAL__N_2b1gEv", 40, 0, ["CALL.REL.NOINC", "RET.REL.NODEC"]),
                    ("_Z1hN3new1TE", 64, 0, ["UTMALDG.2D", "UTMASTG.2D", "EXIT"]),
                    ("_Z4slowv", 16, 0, ["STL", "LDL", "WARPSYNC 0xffffffff", "EXIT"])]}}
NAMES = {"_Z1kv": "k()", "_Z1hN3old1TE": "h(old::T)", "_Z1hN3new1TE": "h(new::T)", "_Z4slowv": "slow()"}
if os.path.basename(sys.argv[0]) == "cu++filt":
    for line in sys.stdin:
        name = line.strip()
        print(NAMES.get(name, "(anonymous namespace)::g()" if "1gEv" in name else name))
    sys.exit(0)
flag, path = sys.argv[1], sys.argv[-1]
if flag == "-xelf":
    for cubin in KERNELS[os.path.basename(path)]:
        open(os.path.basename(path) + "." + cubin + ".sm_90.cubin", "w").write(os.path.basename(path))
    sys.exit(0)
program, cubin = open(path).read(), os.path.basename(path).split(".")[1]
for name, reg, smem, ops in KERNELS[program][cubin]:
    if flag == "-res-usage":
        print(" Function %s:" % name)
        print("  REG:%d STACK:0 SHARED:%d LOCAL:0 CONSTANT[0]:900 TEXTURE:0" % (reg, smem))
    else:
        print("\t\tFunction : %s" % name)
        for i, op in enumerate(ops):
            print("        /*%04x*/                   %s R1 ;" % (16 * i, op))
'''


def self_test():
    with tempfile.TemporaryDirectory(prefix="sass_table_test_") as tmp:
        for tool_name in ("cuobjdump", "cu++filt"):
            path = os.path.join(tmp, tool_name)
            with open(path, "w") as f:
                f.write(FAKE_TOOL)
            os.chmod(path, 0o755)
        for program in ("before", "after"):
            open(os.path.join(tmp, program), "w").close()
        os.environ["PATH"] = tmp + os.pathsep + os.environ["PATH"]
        out = os.path.join(tmp, "t.csv")
        base = [os.path.join(tmp, "before"), os.path.join(tmp, "after"), out, "--jobs", "2"]

        def table(args):
            sys.argv = ["sass_table.py"] + args
            code = main()
            with open(out) as f:
                listed = list(csv.DictReader(f))
            return code, listed, {(r["before"], r["after"]): r for r in listed}

        code, listed, rows = table(base)
        assert code == 1, code  # slow() gained an instruction; h() is on one side each without the rule
        assert rows[("k()", "k()")]["verdict"] == "equal" and rows[("k()", "k()")]["hgmma_after"] == "1"
        assert rows[("k()", "k()")]["smem_before"] == "1024" and rows[("k()", "k()")]["bar_before"] == "1"
        # the anonymous namespace's g() of each file pairs with its own copy, not twice with one
        g = [r for r in listed if r["before"] == "(anonymous namespace)::g()"]
        assert len(g) == 2 and all(r["match"] == "renamed" and r["verdict"] == "equal" for r in g), g
        assert rows[("h(old::T)", "")]["match"] == "before only"
        assert rows[("", "h(new::T)")]["match"] == "after only"
        slow = rows[("slow()", "slow()")]
        assert slow["verdict"] == "differs: warpsync instructions", slow["verdict"]
        assert (slow["stl_before"], slow["ldl_after"], slow["instructions_after"]) == ("1", "1", "4")
        assert (slow["warpsync_before"], slow["warpsync_after"]) == ("0", "1")
        code, listed, rows = table(base + ["--rename", "old::T=new::T"])
        assert rows[("h(old::T)", "h(new::T)")]["verdict"] == "equal"
        assert rows[("h(old::T)", "h(new::T)")]["utmaldg_after"] == "1"
        assert code == 1 and sum(r["verdict"] != "equal" for r in listed) == 1 and len(listed) == 5
        sys.argv = ["sass_table.py", os.path.join(tmp, "before"), os.path.join(tmp, "none"), out]
        assert main() == 2
    print("sass_table: self-test passed")
    return 0


if __name__ == "__main__":
    sys.exit(self_test() if sys.argv[1:] == ["--self-test"] else main())
