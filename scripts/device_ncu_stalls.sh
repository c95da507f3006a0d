#!/usr/bin/env bash
# Where a kernel's warps wait, ours against cuDNN's on one cell: builds convstudy, then runs
# each row once under Nsight Compute with the sections that say why a tensor-core mainloop
# falls short of the pipe (SpeedOfLight, ComputeWorkloadAnalysis, WarpStateStats: the stall
# reasons, SchedulerStats, LaunchStats, Occupancy), on exactly the kernels of one timed repeat
# (the NVTX range `convstudy sweep --profile` uses, src/cli/profile.hpp). cuDNN chooses its
# engine afresh in each process (--engine-choices none); the kernel name says which it took.
#
#   OUT=$OUT CONVSTUDY_GIT_REV=<rev> LAYER=conv2 N=128 ROWS="cudnn-tf32 hopper-sk-tf32" \
#       scripts/device_ncu_stalls.sh
#
# Writes under $OUT: log.txt, build.log, ncu_<row>.csv per row (ncu --csv --page details: one
# line per kernel, section and metric), in the order of ROWS, each as soon as it is done.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-out/ncu}
export device_t0=${device_t0:-$(date +%s)}
mkdir -p "$OUT"
LAYER=${LAYER:-conv2}
N=${N:-128}
ROWS=${ROWS:-"cudnn-tf32 hopper-sk-tf32 cudnn-fp16 hopper-mc-fp16"}
STAGES=build BUILD_TARGETS=convstudy OUT=$OUT scripts/device_run.sh || exit 2
exec >>"$OUT/log.txt" 2>&1
source scripts/device_lib.sh
NCU=${CONVSTUDY_NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
for v in $ROWS; do
    stamp "ncu $v $LAYER N=$N"
    "$NCU" --csv --page details --print-units base --clock-control none --nvtx \
        --nvtx-include "convstudy@timed kernels/" --section SpeedOfLight --section ComputeWorkloadAnalysis \
        --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy \
        --log-file "$OUT/ncu_$v.csv" build-device/convstudy run --variant "$v" --layer "$LAYER" --batch "$N" \
        --layout nhwc --check sampled --no-cpu-timing --engine-choices none --warmup 2 --repeats 1 |
        tail -3
done
stamp "done"
