#!/usr/bin/env bash
# compute-sanitizer's four tools (memcheck, racecheck, initcheck, synccheck) over every
# hand-written variant — every registered variant but the library anchors (cudnn-*,
# cudnn-legacy-*, cublas-*) — on the five AlexNet layers at N=1 and on the odd shapes of
# the GPU tests (tests/gpu/gpu_test_util.hpp: C=3, strides 2 and 4, padding, 1x1, planes
# of several outputs per thread) at N=1 and 3, in every layout a variant declares.
#
#   scripts/sanitize.sh BUILD_DIR SUMMARY_FILE [LOG_DIR]
#   scripts/sanitize.sh --merge SUMMARY_FILE SHARD_SUMMARY...
#
# --merge joins the summaries of a sharded run (SANITIZE_SHARD K/N, below) into one: every
# shard's text under a line naming it, its own totals line renamed "shard total:", then one
# TOTAL line over all of them. It refuses (exit 2) unless the shards are 1/N to N/N of one
# list, each once, whose job counts add up to the list's; exit 1 when a shard is not CLEAN.
#
# The work is cut into jobs of (tool, family or variant, target) — target = alexnet, vgg16,
# resnet50 or odd — run side by side (SANITIZE_JOBS at a time, default: the number of cores; several
# compute-sanitizer processes share one GPU fine). Each job is one compute-sanitizer
# process around one `convstudy sweep` (sampled check of every output element, no timed
# repeat: --repeats 0, so no ceilings either; no CPU timing) and has its own time limit,
# SANITIZE_SECONDS (default 540), after which it is killed and reported as not finished.
# SANITIZE_DEADLINE (seconds from the start, default none) bounds the whole script: no job
# starts after it, running ones are cut at it, and the summary is still written (jobs cut
# or never started are listed as not finished), so a caller with a hard time limit gets it.
#
# Only our kernels are instrumented: --kernel-name regex= matches the namespace every
# kernel of ours lives in (cs::gpu, mangled _ZN2cs3gpu), so library kernels — the cuBLAS
# GEMMs of the sweep's ceilings, anything cuDNN or CUTLASS — run unchecked, whatever their
# names (cuDNN's do not all say "cudnn"). A filter that matched nothing would report 0
# errors for nothing checked, so a control comes first: a small program with one planted
# error per tool, in a kernel in namespace cs::gpu, built with nvcc and run under each tool
# with the same filter; each tool must report it (or the summary says the control failed).
#
# SUMMARY_FILE gets one line per job (tool, target, errors, finished yes/no, seconds, the
# sweep's PASS/SKIP/FAIL/ERROR rows, exit code), the totals, and the first lines of every
# job that reported an error or did not finish. LOG_DIR (default $TMPDIR/convstudy-sanitize)
# keeps each job's full log and CSV. Exit status 0 only when the controls were caught,
# every job finished, no job reported an error and no sweep row failed.
#
# Environment:
#   SANITIZE_JOBS      parallel jobs (default: nproc)
#   SANITIZE_SECONDS   time limit of one job (default 540)
#   SANITIZE_DEADLINE  time limit of the whole script in seconds (default: none)
#   SANITIZE_TOOLS     tools to run (default: "memcheck racecheck initcheck synccheck")
#   SANITIZE_SPLIT     family (default) or variant: one job per family or per variant
#   SANITIZE_VARIANTS  comma-separated variant names: only these (default: all hand-written)
#   SANITIZE_TARGETS   targets (default: "alexnet odd"; also vgg16, resnet50: those tables at N=1;
#                      chain: `convstudy chain` on AlexNet at N=1, our side, every tensor-core class
#                      and both layouts, one job a tool whatever the split: each layer's auto-*
#                      choice, its fused epilogue, the pools, all inside the chain's CUDA graph,
#                      and the megakernel (f16, bf16 NHWC; its grid barriers and split parts),
#                      every layer's output checked against the chain golden files under
#                      golden/, which must exist: `convstudy golden --chain`)
#   SANITIZE_MEMORY    memory modes of the sweeps (default: pageable)
#   SANITIZE_SHARD     K/N: every N-th job of the list below from the K-th (default 1/1: all), so
#                      that N runs (N calls of a GPU machine) share a list too long for one
#   SANITIZE_WORKSPACE_GIB  each sweep's workspace limit (default 4: a fixed size, not "half
#                      the free memory", which 16 processes starting together would race for)
#   SANITIZE_AXES      sweep axis arguments added to every job (e.g. "--axis tile=m256n128k128B-s4":
#                      a value other than the variants' defaults; default none). Every job's
#                      variants must have each axis: `convstudy sweep` refuses an axis no swept
#                      variant has (exit 2), so with SANITIZE_SPLIT=variant give the axes in a
#                      run of their own variants only
set -uo pipefail

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; }

if [[ ${1:-} == --merge ]]; then
    (($# >= 3)) || { usage; exit 2; }
    exec python3 - "${@:2}" <<'EOF'
import re, sys
out, shards = sys.argv[1], sys.argv[2:]
TOTAL = re.compile(r"^TOTAL: (\d+) jobs; all finished: (yes|no \(\d+ not\)); errors: (\d+); "
                   r"sweep rows FAIL or ERROR: (\d+); controls caught: (yes|NO); wall (\d+)s; result: (CLEAN|NOT CLEAN)$")
SHARD = re.compile(r"; shard (\d+)/(\d+) of (\d+) jobs$")
def fail(msg):
    print(f"sanitize --merge: {msg}", file=sys.stderr)
    sys.exit(2)
parts = []
for path in shards:
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    shard = [m for m in map(SHARD.search, lines) if m]
    totals = [m for m in map(TOTAL.match, lines) if m]
    if len(shard) != 1 or len(totals) != 1:
        fail(f"{path}: not one shard's summary (needs one 'shard K/N of M jobs' line and one TOTAL line)")
    k, n, m = map(int, shard[0].groups())
    parts.append((k, n, m, totals[0], lines, path))
parts.sort(key=lambda p: p[0])
n, m = parts[0][1], parts[0][2]
if any(p[1] != n or p[2] != m for p in parts):
    fail("the shards come from different lists: " + ", ".join(f"{p[5]}: {p[0]}/{p[1]} of {p[2]}" for p in parts))
if [p[0] for p in parts] != list(range(1, n + 1)):
    fail(f"shards {', '.join(f'{p[0]}/{n}' for p in parts)} given: every one of 1/{n} to {n}/{n} is needed, once")
jobs = sum(int(p[3].group(1)) for p in parts)
if jobs != m:
    fail(f"the shards ran {jobs} jobs, the list has {m}")
unfinished = sum(int(re.sub(r"\D", "", p[3].group(2)) or 0) for p in parts)
errors = sum(int(p[3].group(3)) for p in parts)
rows = sum(int(p[3].group(4)) for p in parts)
controls = all(p[3].group(5) == "yes" for p in parts)
wall = [int(p[3].group(6)) for p in parts]
clean = all(p[3].group(7) == "CLEAN" for p in parts)
with open(out, "w") as f:
    f.write(f"compute-sanitizer over the hand-written variants: {n} shards of one list of {m} jobs, "
            f"joined by scripts/sanitize.sh --merge\n")
    for k, _, _, _, lines, path in parts:
        f.write(f"\n==== shard {k}/{n} ({path})\n")
        f.writelines(re.sub(r"^TOTAL:", "shard total:", ln) + "\n" for ln in lines)
    f.write(f"\nTOTAL: {jobs} jobs; all finished: {'yes' if unfinished == 0 else f'no ({unfinished} not)'}; "
            f"errors: {errors}; sweep rows FAIL or ERROR: {rows}; controls caught: {'yes' if controls else 'NO'}; "
            f"wall {sum(wall)}s ({' + '.join(map(str, wall))} in {n} shards); result: {'CLEAN' if clean else 'NOT CLEAN'}\n")
print(f"TOTAL: {jobs} jobs in {n} shards; result: {'CLEAN' if clean else 'NOT CLEAN'}")
sys.exit(0 if clean else 1)
EOF
fi
if (($# < 2)); then
    usage
    exit 2
fi
B=$1
SUMMARY=$2
LOGDIR=${3:-${TMPDIR:-/tmp}/convstudy-sanitize}
EXE="$B/convstudy"
JOBS=${SANITIZE_JOBS:-$(nproc)}
JOB_SECONDS=${SANITIZE_SECONDS:-540}
DEADLINE=${SANITIZE_DEADLINE:-0}
TOOLS=${SANITIZE_TOOLS:-"memcheck racecheck initcheck synccheck"}
SPLIT=${SANITIZE_SPLIT:-family}
TARGETS=${SANITIZE_TARGETS:-"alexnet odd"}
MEMORY=${SANITIZE_MEMORY:-pageable}
WORKSPACE_GIB=${SANITIZE_WORKSPACE_GIB:-4}
read -r -a AXES <<<"${SANITIZE_AXES:-}"
SHARD=${SANITIZE_SHARD:-1/1}
FILTER='regex=_ZN2cs3gpu|cs::gpu::'

die() {
    echo "sanitize: $*" >&2
    exit 2
}
[[ -x $EXE ]] || die "$EXE not built"
command -v compute-sanitizer >/dev/null || die "compute-sanitizer not on PATH"
command -v python3 >/dev/null || die "python3 is needed to read the variant list and the CSVs"
[[ $JOBS =~ ^[1-9][0-9]*$ ]] || die "SANITIZE_JOBS must be a positive integer, not '$JOBS'"
[[ $JOB_SECONDS =~ ^[1-9][0-9]*$ ]] || die "SANITIZE_SECONDS must be a positive integer, not '$JOB_SECONDS'"
[[ $DEADLINE =~ ^[0-9]+$ ]] || die "SANITIZE_DEADLINE must be a whole number of seconds, not '$DEADLINE'"
[[ $SPLIT == family || $SPLIT == variant ]] || die "SANITIZE_SPLIT must be family or variant"
if [[ ! $SHARD =~ ^([1-9][0-9]*)/([1-9][0-9]*)$ ]] || ((BASH_REMATCH[1] > BASH_REMATCH[2])); then
    die "SANITIZE_SHARD must be K/N with 1 <= K <= N, not '$SHARD'"
fi
SHARD_K=${BASH_REMATCH[1]} SHARD_N=${BASH_REMATCH[2]}
mkdir -p "$LOGDIR" "$(dirname "$SUMMARY")" || die "cannot create $LOGDIR"
rm -f "$LOGDIR"/*.result "$LOGDIR"/*.log "$LOGDIR"/*.csv
t_start=$(date +%s)

# ---- the odd shapes (the same as odd_layers() in tests/gpu/gpu_test_util.hpp) -----------
ODD_TABLE="$LOGDIR/odd_layers.json"
cat >"$ODD_TABLE" <<'EOF'
{"name": "odd", "description": "the GPU tests' odd shapes (tests/gpu/gpu_test_util.hpp)", "layers": [
  {"name": "odd_c3_s2",   "C": 3,  "H": 19, "W": 23, "M": 5, "R": 5,  "S": 3,  "stride": 2, "pad": 1},
  {"name": "odd_c7_p1",   "C": 7,  "H": 9,  "W": 9,  "M": 4, "R": 3,  "S": 3,  "stride": 1, "pad": 1},
  {"name": "odd_tile2",   "C": 2,  "H": 40, "W": 37, "M": 3, "R": 4,  "S": 4,  "stride": 1, "pad": 0},
  {"name": "odd_1x1",     "C": 5,  "H": 6,  "W": 7,  "M": 6, "R": 1,  "S": 1,  "stride": 1, "pad": 0},
  {"name": "odd_tile3",   "C": 1,  "H": 70, "W": 70, "M": 2, "R": 3,  "S": 3,  "stride": 1, "pad": 1},
  {"name": "odd_s4_c3",   "C": 3,  "H": 35, "W": 31, "M": 7, "R": 11, "S": 11, "stride": 4, "pad": 0},
  {"name": "odd_c33_5x5", "C": 33, "H": 11, "W": 13, "M": 9, "R": 5,  "S": 5,  "stride": 1, "pad": 2},
  {"name": "odd_c64_rows", "C": 64, "H": 11, "W": 61, "M": 64, "R": 3, "S": 3,  "stride": 1, "pad": 1},
  {"name": "odd_1x1_c24", "C": 24, "H": 9,  "W": 11, "M": 20, "R": 1, "S": 1,  "stride": 2, "pad": 0}
]}
EOF

# ---- the variants: every registered one but the library anchors, grouped ----------------
# Lines "group<TAB>comma-separated variants".
GROUPS_FILE="$LOGDIR/groups.txt"
"$EXE" list --json >"$LOGDIR/list.json" 2>"$LOGDIR/list.err" || die "$EXE list --json failed: $(cat "$LOGDIR/list.err")"
SPLIT=$SPLIT ONLY=${SANITIZE_VARIANTS:-} python3 - "$LOGDIR/list.json" >"$GROUPS_FILE" <<'EOF' || die "cannot read the variant list"
import json, os, sys
library = {"cudnn", "cudnn-legacy", "cublas"}
only = [v for v in os.environ.get("ONLY", "").split(",") if v]
groups = {}
for v in json.load(open(sys.argv[1]))["variants"]:
    name, family = v["name"], v["family"]
    if family in library or name.startswith(("cudnn-", "cublas-")):
        continue
    if only and name not in only:
        continue
    key = family if os.environ["SPLIT"] == "family" else name
    groups.setdefault(key, []).append(name)
missing = [v for v in only if not any(v in g for g in groups.values())]
if missing:
    sys.exit("not hand-written variants (or unknown): " + ", ".join(missing))
for key, names in groups.items():
    print(f"{key}\t{','.join(names)}")
EOF
[[ -s $GROUPS_FILE ]] || die "no variants to check"

# ---- the control: one planted error per tool, in namespace cs::gpu ----------------------
CONTROL_SRC="$LOGDIR/control.cu"
CONTROL_EXE="$LOGDIR/control"
cat >"$CONTROL_SRC" <<'EOF'
// One planted error per compute-sanitizer tool, in namespace cs::gpu like every kernel of
// convstudy, so the kernel-name filter of scripts/sanitize.sh must select it.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>
namespace cs::gpu::sanitize_control {
__global__ void out_of_bounds(float* p, int n) { p[n + threadIdx.x] = 1.0f; }            // memcheck
__global__ void uninitialised(const float* p, float* o) { o[threadIdx.x] = p[threadIdx.x] * 2.0f; }  // initcheck
__global__ void shared_race(float* o) {                                                   // racecheck
    // Each thread writes its slot and, with no barrier, reads the slot of a thread of the
    // other warp: a read-after-write hazard between warps. (A single shared scalar written
    // and read back by the same thread is forwarded by the compiler and its store dropped —
    // the first control was such a race, and racecheck rightly saw nothing.)
    __shared__ volatile float s[64];
    s[threadIdx.x] = float(threadIdx.x);
    o[threadIdx.x] = s[(threadIdx.x + 32) % 64];
}
__global__ void divergent_barrier(float* o) {                                             // synccheck
    if (threadIdx.x < 16) __syncthreads();
    o[threadIdx.x] = 1.0f;
}
}  // namespace cs::gpu::sanitize_control
int main(int argc, char** argv) {
    namespace c = cs::gpu::sanitize_control;
    const char* mode = argc > 1 ? argv[1] : "";
    float *a = nullptr, *b = nullptr;
    if (cudaMalloc(&a, 64 * sizeof(float)) != cudaSuccess || cudaMalloc(&b, 64 * sizeof(float)) != cudaSuccess) return 3;
    cudaMemset(b, 0, 64 * sizeof(float));
    if (!std::strcmp(mode, "memcheck")) c::out_of_bounds<<<1, 32>>>(a, 64);
    else if (!std::strcmp(mode, "initcheck")) c::uninitialised<<<1, 32>>>(a, b);
    else if (!std::strcmp(mode, "racecheck")) c::shared_race<<<1, 64>>>(b);
    else if (!std::strcmp(mode, "synccheck")) c::divergent_barrier<<<1, 32>>>(b);
    else return 4;
    cudaDeviceSynchronize();
    std::printf("control %s ran\n", mode);
    return 0;
}
EOF

# Errors a tool reported, from its log: "ERROR SUMMARY: N errors" (memcheck, initcheck,
# synccheck) or "RACECHECK SUMMARY: H hazards displayed (E errors, W warnings)" (racecheck:
# E). Empty when there is no summary line (the run did not finish).
errors_of() {
    local log=$1 tool=$2 line
    if [[ $tool == racecheck ]]; then
        line=$(grep -E "RACECHECK SUMMARY" "$log" | tail -1)
        [[ -z $line ]] && line=$(grep -E "ERROR SUMMARY" "$log" | tail -1)
        if [[ $line =~ \(([0-9]+)\ error ]]; then echo "${BASH_REMATCH[1]}"; return; fi
    else
        line=$(grep -E "ERROR SUMMARY" "$log" | tail -1)
    fi
    if [[ $line =~ SUMMARY:\ ([0-9]+)\ (error|hazard) ]]; then echo "${BASH_REMATCH[1]}"; fi
}

tool_args() {  # tool-specific options
    case $1 in
        memcheck) echo "--leak-check full" ;;
        racecheck) echo "--racecheck-report hazard" ;;
        *) echo "" ;;
    esac
}

control_line=""
control_ok=1
if command -v nvcc >/dev/null && nvcc -std=c++17 -arch=sm_90 -lineinfo -o "$CONTROL_EXE" "$CONTROL_SRC" \
    >"$LOGDIR/control_build.log" 2>&1; then
    for tool in $TOOLS; do
        log="$LOGDIR/control_$tool.log"
        # shellcheck disable=SC2046
        timeout --kill-after=10 120 compute-sanitizer --tool "$tool" $(tool_args "$tool") \
            --kernel-name "$FILTER" --print-limit 5 "$CONTROL_EXE" "$tool" >"$log" 2>&1
        n=$(errors_of "$log" "$tool")
        if [[ -n $n && $n -gt 0 ]]; then
            control_line+=" $tool caught($n)"
        else
            control_line+=" $tool MISSED(${n:-no summary})"
            control_ok=0
        fi
    done
else
    control_line=" not run: nvcc missing or the control did not build (see $LOGDIR/control_build.log)"
    control_ok=0
fi

# ---- the jobs ----------------------------------------------------------------------------
# One job: compute-sanitizer --tool TOOL around one sweep of GROUP's variants on TARGET, or for
# the chain target around `convstudy chain` (AlexNet at N=1, our side and the megakernel (which
# SKIPs tf32 and NCHW), the graph replayed as timed: 5 repeats (each replays the same
# launches; racecheck's time grows with them: 177 s for our side alone at 20), no layer
# replay, no cuBLAS ceilings: racecheck hit a hardware exception
# inside the ceilings' cuBLAS GEMMs, before any kernel of ours); the rows are the sweep's, or
# the chain rows' statuses. Writes $LOGDIR/<job>.result: "tool target errors finished seconds
# rows exit".
run_job() {
    local tool=$1 group=$2 variants=$3 target=$4
    local job="${tool}__${group}__${target}"
    local log="$LOGDIR/$job.log" csv="$LOGDIR/$job.csv"
    local cmd=() scope=""
    case $target in
    chain)
        cmd=(chain --batch 1 --classes "fp16,bf16,tf32" --layout "nhwc,nchw" --sides "ours,megakernel" --golden golden --warmup 0
            --repeats 5 --tail-repeats 5 --layer-repeats 0 --no-ceilings)
        scope=chain
        ;;
    *)
        local table_args=() batch=1
        case $target in
        odd) table_args=(--table "$ODD_TABLE") batch=1,3 ;;
        vgg16 | resnet50) table_args=(--table "$target") ;;
        esac
        cmd=(sweep --variants "$variants" "${table_args[@]}" --batch "$batch" --layout all --memory "$MEMORY"
            --check sampled --samples 16777216 --no-cpu-timing --warmup 0 --repeats 0 --no-flush
            --workspace-limit "$WORKSPACE_GIB" "${AXES[@]}" --quiet)
        ;;
    esac
    local t0 t1 rc errors finished rows
    t0=$(date +%s)
    local limit=$JOB_SECONDS
    if ((DEADLINE > 0)); then
        local left=$((t_start + DEADLINE - t0))
        ((left < limit)) && limit=$left
        ((limit < 1)) && limit=1
    fi
    # shellcheck disable=SC2046
    timeout --kill-after=10 "$limit" compute-sanitizer --tool "$tool" $(tool_args "$tool") \
        --kernel-name "$FILTER" --error-exitcode 99 --print-limit 50 \
        "$EXE" "${cmd[@]}" --csv "$csv" >"$log" 2>&1
    rc=$?
    t1=$(date +%s)
    errors=$(errors_of "$log" "$tool")
    finished=yes
    if ((rc == 124 || rc == 137)) || [[ -z $errors ]]; then finished=no; fi
    rows=$(SCOPE=$scope python3 - "$csv" <<'EOF' 2>/dev/null || echo "no-csv"
import csv, os, sys
n = {"PASS": 0, "SKIP": 0, "FAIL": 0, "ERROR": 0}
scope = os.environ.get("SCOPE", "")
for r in csv.DictReader(open(sys.argv[1], newline="")):
    if scope and r.get("scope") != scope:
        continue
    s = r.get("status", "")
    n[s] = n.get(s, 0) + 1
print("/".join(str(n[k]) for k in ("PASS", "SKIP", "FAIL", "ERROR")))
EOF
    )
    printf '%-10s %-34s %-7s %-8s %-7s %-15s %s\n' "$tool" "$group/$target" "${errors:--}" "$finished" \
        $((t1 - t0)) "$rows" "$rc" | tee "$LOGDIR/$job.result"
}

# Longest first: racecheck and initcheck, AlexNet before the odd shapes.
job_list=()
for tool in racecheck initcheck memcheck synccheck; do
    [[ " $TOOLS " == *" $tool "* ]] || continue
    for target in alexnet odd vgg16 resnet50; do
        [[ " $TARGETS " == *" $target "* ]] || continue
        while IFS=$'\t' read -r group variants; do
            job_list+=("$tool $group $variants $target")
        done <"$GROUPS_FILE"
    done
    if [[ " $TARGETS " == *" chain "* ]]; then job_list+=("$tool auto auto-* chain"); fi
done
for tool in $TOOLS; do
    case $tool in memcheck | racecheck | initcheck | synccheck) ;; *) die "unknown tool '$tool'" ;; esac
done
all_jobs=${#job_list[@]}
if ((SHARD_N > 1)); then  # this shard's jobs: every SHARD_N-th from the SHARD_K-th
    mine=()
    for ((i = SHARD_K - 1; i < all_jobs; i += SHARD_N)); do mine+=("${job_list[$i]}"); done
    job_list=("${mine[@]}")
fi

echo "sanitize: ${#job_list[@]} jobs (shard $SHARD of $all_jobs), $JOBS at a time, ${JOB_SECONDS}s each at most; logs in $LOGDIR"
running=0
not_started=0
for spec in "${job_list[@]}"; do
    read -r tool group variants target <<<"$spec"
    while ((running >= JOBS)); do
        wait -n
        running=$((running - 1))
    done
    if ((DEADLINE > 0 && $(date +%s) >= t_start + DEADLINE - 5)); then
        printf '%-10s %-34s %-7s %-8s %-7s %-15s %s\n' "$tool" "$group/$target" - no 0 not-started - \
            >"$LOGDIR/${tool}__${group}__${target}.result"
        not_started=$((not_started + 1))
        continue
    fi
    run_job "$tool" "$group" "$variants" "$target" &
    running=$((running + 1))
done
wait
((not_started > 0)) && echo "sanitize: $not_started jobs not started (SANITIZE_DEADLINE ${DEADLINE}s)"

# ---- the summary -------------------------------------------------------------------------
{
    echo "compute-sanitizer over the hand-written variants ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
    echo "sanitizer: $(compute-sanitizer --version 2>/dev/null | grep -iE 'version' | tail -1)"
    echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
    echo "build: $B; filter: --kernel-name $FILTER (only convstudy's kernels instrumented); targets: $TARGETS;"
    echo "memory: $MEMORY; $JOBS jobs at a time, ${JOB_SECONDS}s limit per job$( ((DEADLINE > 0)) && echo ", ${DEADLINE}s in all"); split by $SPLIT; shard $SHARD of $all_jobs jobs"
    echo "control (one planted error per tool, same filter):$control_line"
    echo
    printf '%-10s %-34s %-7s %-8s %-7s %-15s %s\n' tool target errors finished seconds "pass/skip/fail/error" exit
    sort "$LOGDIR"/*.result
} >"$SUMMARY"

total_jobs=0 unfinished=0 total_errors=0 failed_rows=0
detail=""
for f in "$LOGDIR"/*.result; do
    read -r tool target errors finished _ rows rc <"$f"
    total_jobs=$((total_jobs + 1))
    [[ $finished == yes ]] || unfinished=$((unfinished + 1))
    [[ $errors =~ ^[0-9]+$ ]] && total_errors=$((total_errors + errors))
    if [[ $rows =~ ^[0-9]+/[0-9]+/([0-9]+)/([0-9]+)$ ]]; then
        failed_rows=$((failed_rows + BASH_REMATCH[1] + BASH_REMATCH[2]))
    fi
    if [[ $finished != yes || $errors != 0 || ! $rows =~ ^[0-9]+/[0-9]+/0/0$ ]]; then
        job=$(basename "$f" .result)
        detail+=$'\n'"---- $tool $target (finished $finished, errors ${errors:-?}, rows $rows, exit $rc): $LOGDIR/$job.log"$'\n'
        [[ -f $LOGDIR/$job.log ]] && detail+=$(grep -E "^=========|FAIL|ERROR" "$LOGDIR/$job.log" | grep -vE "^========= *$" | head -30)
        detail+=$'\n'
    fi
done
ok=1
((control_ok && unfinished == 0 && total_errors == 0 && failed_rows == 0 && total_jobs == ${#job_list[@]})) || ok=0
{
    echo
    echo "TOTAL: $total_jobs jobs; all finished: $([[ $unfinished == 0 ]] && echo yes || echo "no ($unfinished not)");" \
        "errors: $total_errors; sweep rows FAIL or ERROR: $failed_rows; controls caught: $([[ $control_ok == 1 ]] && echo yes || echo NO);" \
        "wall $(($(date +%s) - t_start))s; result: $([[ $ok == 1 ]] && echo CLEAN || echo NOT CLEAN)"
    [[ -n $detail ]] && printf '%s\n' "$detail"
} >>"$SUMMARY"
grep "^TOTAL" "$SUMMARY"
((ok)) && exit 0
exit 1
