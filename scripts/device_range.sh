#!/usr/bin/env bash
# One call of the GPU machine (H100, at most 8 minutes) for issue #25: the fp32 class on any
# data. Builds, runs the GPU tests of this work and the existing split / fp32-fast ones,
# generates the scaled golden sets, sweeps every fp32-class variant on them, and runs
# compute-sanitizer on the changed variants.
#
#   OUT=$OUT CONVSTUDY_GIT_REV=<rev> scripts/device_range.sh
#
# Outputs in $OUT (5 files; the device tool brings back at most 6 here):
#   log.txt           everything printed, stage times, every sweep line
#   build.log         the build
#   gpu_tests.log     every GPU test: [split-mutation], [split-range] (this work), the
#                     existing split / fp32-fast ones and every variant's: the mutated splits
#                     FAIL and the whole splits PASS; scaled data PASSes or ERRORs naming
#                     the range; inf / NaN / too-large data is the range ERROR
#   range_safety.csv  the sweep below, every scale pair merged into one CSV (input_scale and
#                     weight_scale columns)
#   sanitizer.log     compute-sanitizer (scripts/sanitize.sh) on the changed variants: the
#                     split ones and the cluster rungs (hopper-mc-*; SANITIZE_VARIANTS)
#
# The sweep (a documented subset of the 5 x 5 product of {2^-24, 2^-12, 1, 2^12, 2^20}: every
# extreme on each side, alone and against the other side's extremes): (input, weight) scales
#   (2^-24, 2^-24) (2^20, 2^20) (2^-24, 2^20) (2^20, 2^-24) (2^-12, 2^12) (2^12, 2^-12) (1, 1)
# at N=1 and 32, both layouts where a variant runs them, for the fp32 anchor class:
#   ours with a split     hopper-ws-3xfp16, hopper-ws-3xtf32, split-tf32 and the Winograd 3xFP16
#                         rungs (winograd-3xfp16-f3x3-5x5, -wgmma-, -wgmma-ws-)
#   ours, plain fp32      winograd-f3x3-5x5 (the fp32 Winograd the 3xFP16 rungs build on),
#                         simt-gemm (the fp32 GEMM)
#   the anchor            cudnn-fp32
# 3 timed repeats after 1 warm-up: the point is the check; the timings show the scale pass's
# cost (kernel_ms includes it).
#
# Time (H100, estimated from plots/h100/sweep_all_variants.csv): build ~4 min on 16 cores;
# GPU tests ~1.5 min (all of them: 52 s before, plus ~30 s of this work's); golden sets ~3 s per scale pair at N=1,32 (7 s for N=1,32,128); the
# sweep's 88 rows per pair ~4.2 s of set-up and runs (cuDNN's engine choice 3.4 of it) plus
# the checks, ~10 s per pair, 7 pairs ~70 s; the sanitizer gets what is left before 7.5 min
# (SANITIZE_DEADLINE) so that the call ends inside its 8.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out/device-range}
mkdir -p "$OUT"
B=build-device
LOG="$OUT/log.txt"
LIMIT=${RANGE_LIMIT_SECONDS:-450}  # the whole script, leaving the tool's 480 s some slack
exec > >(tee -a "$LOG") 2>&1
t0=$(date +%s)
elapsed() { echo $(($(date +%s) - t0)); }
stamp() { echo "[$(elapsed)s] $*"; }
status=0
SPLIT_VARIANTS="hopper-ws-3xfp16,hopper-ws-3xtf32,split-tf32,winograd-3xfp16-f3x3-5x5,winograd-3xfp16-wgmma-f3x3-5x5,winograd-3xfp16-wgmma-ws-f3x3-5x5"
VARIANTS="$SPLIT_VARIANTS,winograd-f3x3-5x5,simt-gemm,cudnn-fp32"
PAIRS=${PAIRS:-"2^-24:2^-24 2^20:2^20 2^-24:2^20 2^20:2^-24 2^-12:2^12 2^12:2^-12 1:1"}

stamp "device: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader)"
stamp "git: ${CONVSTUDY_GIT_REV:-$(git describe --always --dirty 2>/dev/null || echo unknown)}"

stamp "build"
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh
if ! BUILD_LOG="$OUT/build.log" device_build $B convstudy convstudy_gpu_tests; then
    stamp "BUILD FAILED"
    exit 1
fi

# Every GPU test (52 s on the H100 before this work, plots/h100/gpu_tests.log), so that the
# lower fp32 tau is also checked on every fp32 row's odd shapes ([variants]), not only here.
stamp "GPU tests: all, with [split-mutation] and [split-range]"
CONVSTUDY_REQUIRE_GPU=1 timeout 240 $B/tests/convstudy_gpu_tests >>"$(device_log_head "$OUT/gpu_tests.log")" 2>&1 || status=1
grep -E "^\[split-(mutation|range)\]" "$OUT/gpu_tests.log" | head -150
grep -E "test cases|assertions|FAILED|REQUIRE\(" "$OUT/gpu_tests.log" | grep -v "PASSED" | tail -15
grep -E "test cases|assertions" "$OUT/gpu_tests.log" | tail -2

parts=()
for pair in $PAIRS; do
    si=${pair%%:*}
    sw=${pair#*:}
    stamp "golden and sweep: input scale $si, weight scale $sw"
    $B/convstudy generate --batch 1,32 --out golden --input-scale "$si" --weight-scale "$sw" --quiet \
        --no-cpu-timing --no-onednn || status=1
    csv="/tmp/range_${si//^/p}_${sw//^/p}.csv"
    timeout 120 $B/convstudy sweep --variants "$VARIANTS" --memory pageable --batch 1,32 --golden golden \
        --input-scale "$si" --weight-scale "$sw" --warmup 1 --repeats 3 --csv "$csv" --quiet >/tmp/range_sweep.txt 2>&1
    rc=$?
    ((rc == 124)) && echo "sweep stopped at its time limit; its CSV keeps the finished (layer, N) groups"
    ((rc)) && status=1
    sed "s/^/  [x$si w$sw] /" /tmp/range_sweep.txt >>"$LOG.sweeps"
    grep -cE " PASS " /tmp/range_sweep.txt | sed 's/^/  PASS rows: /'
    grep -E " (FAIL|ERROR) " /tmp/range_sweep.txt | head -12
    [[ -f $csv ]] && parts+=("$csv")
done
if ((${#parts[@]})); then
    $B/convstudy merge -o "$OUT/range_safety.csv" "${parts[@]}" || status=1
fi

left=$((LIMIT - $(elapsed)))
if ((left > 60)); then
    stamp "compute-sanitizer on the changed variants (deadline ${left}s)"
    SANITIZE_VARIANTS=${SANITIZE_VARIANTS:-"$SPLIT_VARIANTS,hopper-mc-fp16,hopper-mc-bf16,hopper-mc-tf32"} SANITIZE_SPLIT=variant SANITIZE_DEADLINE=$left \
        SANITIZE_SECONDS=$((left - 10)) scripts/sanitize.sh $B "$OUT/sanitizer.log" /tmp/sanitize-logs || status=1
    tail -15 "$OUT/sanitizer.log"
else
    stamp "compute-sanitizer skipped: ${left}s left of ${LIMIT}"
    status=1
fi

if [[ -f "$LOG.sweeps" ]]; then
    echo "---- every sweep line ----" >>"$LOG"
    cat "$LOG.sweeps" >>"$LOG"
    rm -f "$LOG.sweeps"
fi
stamp "done, status $status"
exit $status
