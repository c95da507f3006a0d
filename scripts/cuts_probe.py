#!/usr/bin/env python3
"""Which part of the persistent kernel's cut-tile instance (ws_kernel<..., kCuts = true>) keeps the
WARPSYNCs and vector-register ring state its data-parallel twin does not have: writes variants of
ws_kernel.cuh / tile_scheduler.cuh (the walk and the cut roles switched on and off, the division
and the dispatch rewritten) into probe/ (git-ignored), each instantiating one fp16 kernel (tile 1,
TMA-store epilogue) with kCuts true and false, and compiles them to cubins here (nvcc, no GPU).
The GPU machine has cuobjdump; this machine does not:

    python3 scripts/cuts_probe.py [REV]           # here: probe/k_v*.cubin, probe/dis.sh
    device call, carry ["probe"]: OUT=$OUT SASS_OF="k_v1 k_v10" bash probe/dis.sh

The variants rewrite the two headers as they were at REV (default 7c5397e, the tree the probes
ran on, before the kernel per cut scheduler; read with git show), so the other headers are the
working tree's. dis.sh prints, per cubin and kernel, the WARPSYNC, CALL, R2UR and BSSY counts and the number of
SASS instructions, and writes the listed cubins' SASS under $OUT. The results of fd7de4f's tree
are plots/h200/cuts_ab/probe_counts.txt, the variants' descriptions probe_variants.csv (NOTES.md,
"The cut tiles' walk in 32 bits").
"""
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOP = os.path.join(ROOT, "gpu", "variants", "hopper")
OUTD = os.path.join(ROOT, "probe")

CONS_WHILE = """        while (kClK ? a.sched.next_cluster_part(int(blockIdx.x), cur, w) : a.sched.template next<kCuts>(cur, w)) {
            const TileOrigin o = TileOrigin::of(w.tile, a.sched.tiles_n, BN, a.g, BM);"""
DISPATCH = """            if (mode == kSplitKCluster) return next_cluster_part(cta, cur, w);
            if (mode == kSplitTail) return next_tail(cta, cur, w);
            if (mode != kStreamK) return next_dp(cta, cur, w);
            return next_sk(cta, cur, w);"""
FASTDIV = """struct FastDiv {  // n / d = umulhi(n, m) >> s for 0 <= n < 2^31 (m = 0: d = 1)
    unsigned m = 0;
    int s = 0;
    CS_SCHED_HD int div(int n) const {
#if defined(__CUDA_ARCH__)
        return m == 0 ? n : int(__umulhi(unsigned(n), m) >> s);
#else
        return m == 0 ? n : int((static_cast<unsigned long long>(unsigned(n)) * m) >> 32 >> s);
#endif
    }
};

struct TileSched {"""
BRANCH_FREE_TAIL = """    CS_SCHED_HD bool next_tail(int cta, Cursor& cur, Work& w) const {
        const int t = cta + cur.i * grid;
        const int v = t - tiles_dp;
        const bool whole = v < 0;
        const int vv = whole ? 0 : v;
        const int q = vv / tail_q, part = vv - q * tail_q;
        const bool ok = whole || vv < (ntiles - tiles_dp) * tail_q;
        w.tile = whole ? t : tiles_dp + q;
        w.part = 0;
        w.slot = vv;
        w.k0 = whole ? 0 : part * KT / tail_q;
        w.k1 = whole ? KT : (part + 1) * KT / tail_q;
        w.role = (whole || tail_q == 1) ? Role::whole : (part == 0 ? Role::sk_finish : Role::sk_contrib);
        cur.i += ok ? 1 : 0;
        return ok;
    }
"""


def tail_walk(body):
    """The split-tail walk replaced by `body` (the probes that bisect it)."""
    def f(ts):
        i = ts.index("    CS_SCHED_HD bool next_tail(")
        j = ts.index("    // data-parallel, split-K; units fit in int")
        return ts[:i] + "    CS_SCHED_HD bool next_tail(int cta, Cursor& cur, Work& w) const {\n" + body + "    }\n" + ts[j:]
    return f


WHOLE_ONLY = """        const int t = cta + cur.i * grid;
        if (t >= tiles_dp) return false;
        ++cur.i;
        w.tile = t, w.part = 0, w.k0 = 0, w.k1 = KT, w.role = Role::whole;
        return true;
"""
# split-tail in the data-parallel walk's form: the whole tiles, then the parts, the part's slices
# from a host count (tail_kp) and the uneven last part by a select
TAIL_PART = """        const int v = t - tiles_dp;
        if (v >= (ntiles - tiles_dp) * tail_q) return false;
        ++cur.i;
        const int q = v / tail_q;
        w.tile = tiles_dp + q;
        w.part = 0;
        w.slot = v;
        const int part = v - q * tail_q;
        w.k0 = part * tail_kp;
        w.k1 = part == tail_q - 1 ? KT : w.k0 + tail_kp;
        w.role = tail_q == 1 ? Role::whole : (part == 0 ? Role::sk_finish : Role::sk_contrib);
        return true;
"""
DP_FORM_BODY = """        const int t = cta + cur.i * grid;
        if (t < tiles_dp) {
            ++cur.i;
            w.tile = t, w.part = 0, w.k0 = 0, w.k1 = KT, w.role = Role::whole;
            return true;
        }
""" + TAIL_PART
# the parts alone: the unit index from the CTA, each part tail_kp slices, one role
PARTS_ONLY = (TAIL_PART.replace("const int v = t - tiles_dp;", "const int v = cta + cur.i * grid;")
              .replace("w.k1 = part == tail_q - 1 ? KT : w.k0 + tail_kp;", "w.k1 = w.k0 + tail_kp;")
              .replace("w.role = tail_q == 1 ? Role::whole : (part == 0 ? Role::sk_finish : Role::sk_contrib);",
                       "w.role = Role::sk_contrib;"))


def dp_form_tail(ts):
    return sub(tail_walk(DP_FORM_BODY)(ts), "    int tail_q = 1;      // split-tail: k-parts per tile of the last wave",
               "    int tail_q = 1;\n    int tail_kp = 1;")


PARTS_BOTH_ROLES = PARTS_ONLY.replace("w.role = Role::sk_contrib;", "w.role = part == 0 ? Role::sk_finish : Role::sk_contrib;")
PARTS_WHOLE_RANGE = PARTS_ONLY.replace("w.k0 = part * tail_kp;", "w.k0 = 0;").replace("w.k1 = w.k0 + tail_kp;", "w.k1 = KT;")


def sub(text, old, new):
    if old not in text:
        sys.exit(f"cuts_probe: the tree changed, not found: {old[:60]!r}")
    return text.replace(old, new)


def fastdiv(ts):
    ts = sub(ts, "struct TileSched {", FASTDIV)
    ts = sub(ts, "    int tail_q = 1;      // split-tail: k-parts per tile of the last wave",
             "    int tail_q = 1;\n    FastDiv fd_kt, fd_q, fd_grid, fd_skit;")
    for a, b in (("return c * sk_iters / grid;", "return fd_grid.div(c * sk_iters);"),
                 ("const int c = ((it + 1) * grid - 1) / sk_iters;", "const int c = fd_skit.div((it + 1) * grid - 1);"),
                 ("const int q = v / tail_q, part = v - q * tail_q;", "const int q = fd_q.div(v), part = v - q * tail_q;"),
                 ("w.k0 = part * KT / tail_q;", "w.k0 = fd_q.div(part * KT);"),
                 ("w.k1 = (part + 1) * KT / tail_q;", "w.k1 = fd_q.div((part + 1) * KT);"),
                 ("const int t = cur.it / KT;", "const int t = fd_kt.div(cur.it);")):
        ts = sub(ts, a, b)
    return ts


def branch_free_tail(ts):
    i = ts.index("    CS_SCHED_HD bool next_tail(")
    j = ts.index("    // data-parallel, split-K; units fit in int")
    return ts[:i] + BRANCH_FREE_TAIL + ts[j:]


def variants(ws, ts):
    roles_off = lambda k: sub(k, "finish_unit<TO, CS, kDown, Epi, kCuts>", "finish_unit<TO, CS, kDown, Epi, false>")
    walk_dp = lambda k: sub(k, "a.sched.template next<kCuts>(cur, w)", "a.sched.template next<false>(cur, w)")
    shfl = "".join(f"            w.{f} = __shfl_sync(0xffffffffu, w.{f}, 0);\n" for f in ("k0", "k1", "tile", "part", "slot"))
    shfl += "            w.role = Role(__shfl_sync(0xffffffffu, int(w.role), 0));\n"
    only = lambda body: lambda t: sub(t, DISPATCH, body)
    return {  # name: (ws_kernel text, tile_scheduler text)
        0: (ws, ts),
        1: (roles_off(ws), ts),
        2: (walk_dp(ws), ts),
        3: (sub(ws, CONS_WHILE, CONS_WHILE.split("\n")[0] + "\n" + shfl + CONS_WHILE.split("\n")[1]), ts),
        4: (walk_dp(roles_off(ws)), ts),
        5: (roles_off(ws), fastdiv(ts)),
        6: (roles_off(ws), only("            if (mode == kSplitTail) return next_tail(cta, cur, w);\n"
                                "            return next_dp(cta, cur, w);")(ts)),
        7: (roles_off(ws), only("            if (mode == kStreamK) return next_sk(cta, cur, w);\n"
                                "            return next_dp(cta, cur, w);")(ts)),
        10: (roles_off(ws), only("            return next_tail(cta, cur, w);")(ts)),
        11: (roles_off(ws), only("            return next_sk(cta, cur, w);")(ts)),
        12: (ws, only("            return next_tail(cta, cur, w);")(ts)),
        13: (roles_off(ws), only("            return next_tail(cta, cur, w);")(branch_free_tail(ts))),
        14: (ws, only("            return next_tail(cta, cur, w);")(branch_free_tail(ts))),
        15: (ws, branch_free_tail(ts)),
        16: (roles_off(ws), only("            return next_tail(cta, cur, w);")(dp_form_tail(ts))),
        17: (ws, dp_form_tail(ts)),
        18: (roles_off(ws), only("            return next_tail(cta, cur, w);")(tail_walk(WHOLE_ONLY)(dp_form_tail(ts)))),
        19: (roles_off(ws), only("            return next_tail(cta, cur, w);")(tail_walk(PARTS_ONLY)(dp_form_tail(ts)))),
        20: (roles_off(ws), only("            return next_tail(cta, cur, w);")(tail_walk(PARTS_WHOLE_RANGE)(dp_form_tail(ts)))),
        21: (ws, only("            return next_tail(cta, cur, w);")(tail_walk(WHOLE_ONLY)(dp_form_tail(ts)))),
        22: (ws, only("            return next_tail(cta, cur, w);")(tail_walk(PARTS_ONLY)(dp_form_tail(ts)))),
        23: (ws, only("            return next_tail(cta, cur, w);")(tail_walk(PARTS_BOTH_ROLES)(dp_form_tail(ts)))),
    }


INST = """template __global__ void ws_kernel<__half, 1, false, EpiTmaStore, __half, 0, 1, false, {cuts}, false>(
    const __grid_constant__ CUtensorMap, const __grid_constant__ CUtensorMap, const __grid_constant__ CUtensorMap,
    const WsArgs<__half>);
"""

DIS = r"""#!/usr/bin/env bash
# (written by scripts/cuts_probe.py) SASS counts of the probe cubins; SASS_OF="k_v1 ...": their SASS under $OUT
cd "$(dirname "$0")" || exit 2
for f in k_v*.cubin; do
  cuobjdump -sass "$f" | awk -v v="$f" '
    function out() { if (name != "") printf "%s %s WARPSYNC %d CALL %d R2UR %d BSSY %d insts %d\n", v, kind, ws, call, r2ur, bssy, n }
    /Function : / { out(); name = $3; kind = (index(name, "Lb1ELb0EEEv") ? "cuts" : "dp"); ws = call = r2ur = bssy = n = 0; next }
    /\/\*[0-9a-f]+\*\// { n++; if (index($0, "WARPSYNC")) ws++; if (index($0, "CALL")) call++; if (index($0, "R2UR")) r2ur++; if (index($0, "BSSY")) bssy++ }
    END { out() }'
  [[ " ${SASS_OF:-} " == *" ${f%.cubin} "* ]] && cuobjdump -sass "$f" | grep -E "Function|^\s+/\*[0-9a-f]+\*/" |
    sed 's|/\* 0x[0-9a-f]* \*/||; s/ *;.*$//' >"${OUT:-.}/${f%.cubin}.sass"
done
"""


def main():
    rev = sys.argv[1] if len(sys.argv) > 1 else "7c5397e"
    show = lambda f: subprocess.run(["git", "-C", ROOT, "show", f"{rev}:gpu/variants/hopper/{f}"], check=True,
                                    capture_output=True, text=True).stdout
    ws, ts = show("ws_kernel.cuh"), show("tile_scheduler.cuh")
    os.makedirs(OUTD, exist_ok=True)
    jobs = []
    for i, (w, t) in variants(ws, ts).items():
        open(os.path.join(OUTD, f"tile_scheduler_v{i}.cuh"), "w").write(t)
        open(os.path.join(OUTD, f"ws_kernel_v{i}.cuh"), "w").write(
            sub(w, '#include "tile_scheduler.cuh"', f'#include "tile_scheduler_v{i}.cuh"'))
        src = (f'#include "ws_kernel_v{i}.cuh"\nnamespace cs::gpu::variants::hopper {{\n' + INST.format(cuts="true") +
               INST.format(cuts="false") + "}\n")
        open(os.path.join(OUTD, f"k_v{i}.cu"), "w").write(src)
        jobs.append(i)
    open(os.path.join(OUTD, "dis.sh"), "w").write(DIS)
    inc = [f"-I{os.path.join(ROOT, d)}" for d in ("probe", "gpu", "gpu/variants", "gpu/variants/hopper", "layers", ".")]

    def build(i):
        cmd = ["nvcc", *inc, "-O3", "-DNDEBUG", "-gencode=arch=compute_90a,code=sm_90a", "--expt-relaxed-constexpr",
               "-std=c++17", "-cubin", "-o", os.path.join(OUTD, f"k_v{i}.cubin"), os.path.join(OUTD, f"k_v{i}.cu")]
        r = subprocess.run(cmd, capture_output=True, text=True)
        return i, r.returncode, r.stderr[-400:]

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        bad = [(i, err) for i, rc, err in ex.map(build, jobs) if rc]
    for i, err in bad:
        print(f"cuts_probe: v{i} failed:\n{err}", file=sys.stderr)
    print(f"cuts_probe: {len(jobs) - len(bad)} of {len(jobs)} variants in {OUTD}; on the GPU machine: bash probe/dis.sh")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
