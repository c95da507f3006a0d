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
# A row is a variant, or a variant with axis values, each after an @:
#   hopper-mc-tf32@schedule=pingpong@tile=m128n128k128B-s6
# (`convstudy run --axis` per value). Writes under $OUT: log.txt, build.log, ncu_<row>.csv per
# row (the row with each @ as _ and each = as -; ncu --csv --page details: one line per kernel,
# section and metric), in the order of ROWS, each as soon as it is done. MEMORY=1 adds the
# memory sections (shared-memory wavefronts and bank conflicts: MemoryWorkloadAnalysis and its
# tables). SOURCE=1 adds, per row, the source page of the timed repeat's first GEMM kernel (SRC_KERNEL,
# an ncu -k filter, default the names of our GEMMs and cuDNN's sm90 ones): the SASS instructions its
# warps wait at, with the stall reasons (scripts/ncu_source_top.py) -> source_<row>.txt.
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
SECTIONS=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats
    --section LaunchStats --section Occupancy)
[[ ${MEMORY:-0} == 1 ]] && SECTIONS+=(--section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables)
for row in $ROWS; do
    IFS=@ read -r -a parts <<<"$row"
    v=${parts[0]}
    axes=()
    for a in "${parts[@]:1}"; do axes+=(--axis "$a"); done
    label=${row//@/_}
    label=${label//=/-}
    # the profiled process: one timed repeat of the row (both ncu runs below profile it)
    run=(build-device/convstudy run --variant "$v" "${axes[@]}" --layer "$LAYER" --batch "$N" --layout nhwc
        --check sampled --no-cpu-timing --engine-choices none --warmup 2 --repeats 1)
    stamp "ncu $row $LAYER N=$N"
    "$NCU" --csv --page details --print-units base --clock-control none --nvtx \
        --nvtx-include "convstudy@timed kernels/" "${SECTIONS[@]}" --log-file "$OUT/ncu_$label.csv" "${run[@]}" |
        tail -3
    if [[ ${SOURCE:-0} == 1 ]]; then
        stamp "ncu source page $row"
        "$NCU" --clock-control none --nvtx --nvtx-include "convstudy@timed kernels/" -k "regex:${SRC_KERNEL:-sm90_xmma|cutlass|ws_kernel|halo_kernel|gemm}" -c 1 \
            --section SourceCounters --section WarpStateStats --section SpeedOfLight --import-source no -f -o "/tmp/src_$label" \
            "${run[@]}" >/dev/null 2>&1
        {
            "$NCU" -i "/tmp/src_$label.ncu-rep" --page details --print-units base --section SpeedOfLight 2>&1 |
                grep -E "^  [a-zA-Z_].*\(|Duration|Compute \(SM\) Throughput" | head -4
            "$NCU" -i "/tmp/src_$label.ncu-rep" --page source --print-source sass --csv 2>&1 |
                python3 scripts/ncu_source_top.py "${TOP:-40}"
        } >"$OUT/source_$label.txt" 2>&1
        head -22 "$OUT/source_$label.txt"
    fi
done
stamp "done"
