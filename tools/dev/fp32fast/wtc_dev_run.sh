#!/usr/bin/env bash
# Dev measurements of the tensor-core Winograd rungs on conv2 (one device call, after
# scripts/device_run.sh has built build-device and written the golden files): the three rungs
# beside hopper-ws-3xfp16 and cuDNN at N = 1, 32, 128 (20 repeats) -> $OUT/wtc.csv, and,
# unless NCU is set empty, ncu of the one-warpgroup rung's kernels at N=128 (durations, DRAM,
# occupancy, warp states, pipes) -> $OUT/wtc_ncu.txt.
set -uo pipefail
B=${B:-build-device}
OUT=${OUT:-out/device}
BATCH=${BATCH:-1,32,128}
$B/convstudy sweep --variants winograd-3xfp16-wgmma-f3x3-5x5,winograd-3xfp16-wgmma-ws-f3x3-5x5,winograd-3xfp16-f3x3-5x5,hopper-ws-3xfp16,cudnn-fp32 \
    --layers conv2 --batch "$BATCH" --memory pageable --repeats 20 --csv "$OUT/wtc.csv" --quiet | grep -E "PASS|FAIL|ERROR|SKIP"
if [[ -n ${NCU-1} ]]; then
    ncu --clock-control none --target-processes all -k regex:wtc_ --section SpeedOfLight --section Occupancy \
        --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis \
        $B/convstudy run --variant winograd-3xfp16-wgmma-f3x3-5x5 --layer conv2 --batch 128 --repeats 0 \
        >"$OUT/wtc_ncu.txt" 2>&1
    grep -E "wtc_|Duration|DRAM Throughput|Compute \(SM\)|Achieved Occupancy" "$OUT/wtc_ncu.txt"
fi
