#!/usr/bin/env bash
# One device call for the cluster policy (hopper-mc) and the stream-K question: build, the
# GPU axis tests (every axis value of every variant, the cluster and stream-K cases), an A/B
# sweep of the persistent rungs against cuDNN on conv2-5 at N=128 (NHWC), ncu's warp-state
# and throughput sections of the stream-K, TMA-store and cluster rungs on conv5 N=128, and
# the SASS instruction counts (multicast, cluster barriers). Under 6 minutes on an H100.
#
#   OUT=/tmp/out CONVSTUDY_GIT_REV=$(git describe --always --dirty) scripts/device_mc.sh
#
# Writes log.txt (everything, the GPU test lines included), gpu_tests.log, mc_sweep.csv,
# ncu_conv5.txt, sass.csv under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out/mc}
mkdir -p "$OUT"
STAGES="build tests golden sweep" GPU_TEST_ARGS=${GPU_TEST_ARGS:-"[axes]"} BATCHES=128 \
    SWEEPS="mc_sweep:${SWEEP_SECONDS:-150}:--variants ${MC_VARIANTS:-hopper-tmastore-fp16,hopper-mc-fp16,hopper-sk-fp16,cudnn-fp16,hopper-tmastore-tf32,hopper-mc-tf32,cudnn-tf32} --layers conv2,conv3,conv4,conv5 --batch 128 --layout nhwc --repeats 10" \
    OUT=$OUT scripts/device_run.sh
status=$?
B=build-device
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for v in ${NCU_VARIANTS:-hopper-tmastore-fp16 hopper-sk-fp16 hopper-mc-fp16}; do
    echo "==== $v conv5 N=128 nhwc" >>"$OUT/ncu_conv5.txt"
    timeout 90 "$NCU" --clock-control none --nvtx --nvtx-include "convstudy@timed kernels/" -k regex:ws_kernel \
        --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
        $B/convstudy run --variant "$v" --layer conv5 --batch 128 --layout nhwc --warmup 1 --repeats 1 --profile-target \
        >>"$OUT/ncu_conv5.txt" 2>&1 || echo "ncu $v: rc=$?"
done
grep -E "====|Duration|Compute \(SM\) Throughput|Stall|Warp Cycles Per Issued|L2 Cache Throughput|No Eligible" "$OUT/ncu_conv5.txt" | head -60
scripts/device_sass.sh $B/convstudy "$OUT/sass.csv" && grep -E "ws_kernel" "$OUT/sass.csv" | grep -E "; 2>" | head -4 | cut -c1-300
exit $status
