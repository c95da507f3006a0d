#!/usr/bin/env bash
# One device call for the Hopper core: build (sm_90, ptxas -v), the GPU tests named by
# GPU_TEST_ARGS (default: the axes tests), golden files for BATCHES, the Hopper ladder beside
# cuDNN at N=32/128 (NHWC), a tile sweep of one rung, and ncu on conv2 for the ladder's rungs.
# Logs and CSVs under $OUT. Usage on the GPU machine: OUT=... scripts/device_hopper.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-out/device}
export OUT
LADDER=${LADDER:-hopper-ws-fp16,hopper-pp-fp16,hopper-tmastore-fp16,hopper-sk-fp16,cudnn-fp16,hopper-ws-tf32,hopper-pp-tf32,hopper-tmastore-tf32,hopper-sk-tf32,cudnn-tf32}
TILES_RUNG=${TILES_RUNG:-hopper-tmastore-fp16}
export BATCHES=${BATCHES:-32,128}
STAGES="build tests golden sweep" GPU_TEST_ARGS=${GPU_TEST_ARGS:-[axes]} \
    SWEEPS="ladder:240:--variants $LADDER --layout nhwc --batch $BATCHES --repeats 10;tiles:200:--variants $TILES_RUNG --axis tile=all --layout nhwc --batch 128 --repeats 10" \
    scripts/device_run.sh
grep -E "ptxas info *: Used|spill" "$OUT/build.log" | grep -B1 -A0 "ws_kernel\|spill stores [1-9]" | grep -c "spill stores [1-9]" |
    sed 's/^/ptxas: kernels with spill stores: /' | tee -a "$OUT/log.txt"
if [[ -n ${NCU_RUNGS:-hopper-ws-fp16 hopper-tmastore-fp16 hopper-sk-fp16 hopper-pp-fp16} ]] && command -v ncu >/dev/null; then
    for v in ${NCU_RUNGS:-hopper-ws-fp16 hopper-tmastore-fp16 hopper-sk-fp16 hopper-pp-fp16}; do
        timeout 120 ncu --clock-control none -k regex:ws_kernel --launch-skip 1 --launch-count 1 \
            --metrics gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_gmma.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct \
            build-device/convstudy run --variant "$v" --layer "${NCU_LAYER:-conv2}" --batch 128 --layout nhwc --repeats 1 \
            --warmup 1 2>&1 | grep -E "gpu__time|hmma|gmma|sm__throughput|dram__bytes|lts__t_sector|stalled|PASS|FAIL|ERROR" |
            sed "s/^/[ncu $v] /" | tee -a "$OUT/log.txt"
    done
fi
