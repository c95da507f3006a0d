#!/usr/bin/env bash
# Nsight Compute on the halo kernel (hopper-halo, gpu/variants/hopper/halo_conv.cu) in one
# device call: the build of `convstudy` only, conv1's golden files at N, then ncu on the
# first halo_kernel launch of `convstudy run` with the warp-state and source-counter sections
# (stall reasons by type, shared-memory wavefronts against ideal, excessive global sectors)
# -> ncu.txt; and the SASS of the kernels' object (UTMALDG, HGMMA, any spill) -> sass.txt.
# How plots/h200/halo_dev/ncu_v2*.txt were made (on the v2 tree, NOTES.md "The halo mainloop").
#
#   OUT=/tmp/out CONVSTUDY_GIT_REV=$(git rev-parse --short HEAD) scripts/device_halo_ncu.sh
#
# Environment: VARIANT (default hopper-halo-fp16), N (default 128), LAYOUT (default nhwc),
# AXIS (e.g. "schedule=pingpong"; default none), SECTIONS (ncu --section names, default
# "WarpStateStats SourceCounters MemoryWorkloadAnalysis_Tables SpeedOfLight"); SOURCE=1: also
# the source page's hottest SASS instructions with their stall reasons -> source.txt; SASS=0:
# no sass.txt.
# About 3 minutes on an H200 from a fresh machine (the build ~2 of them).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-out/device}
mkdir -p "$OUT"
B=build-device
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh
exec > >(tee -a "$OUT/log.txt") 2>&1
VARIANT=${VARIANT:-hopper-halo-fp16}
N=${N:-128}
LAYOUT=${LAYOUT:-nhwc}
SECTIONS=${SECTIONS:-"WarpStateStats SourceCounters MemoryWorkloadAnalysis_Tables SpeedOfLight"}
stamp "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
stamp "git: $(device_rev)"
stamp "build"
BUILD_LOG="$OUT/build.log" device_build $B convstudy || { stamp "BUILD FAILED"; exit 1; }
$B/convstudy generate --batch "$N" --only conv1 --out golden >/dev/null || exit 1
args=(run --variant "$VARIANT" --layer conv1 --batch "$N" --layout "$LAYOUT")
[[ -n ${AXIS:-} ]] && args+=(--axis "$AXIS")
secs=()
for s in $SECTIONS; do secs+=(--section "$s"); done
stamp "ncu: $VARIANT conv1 N=$N $LAYOUT ${AXIS:-}"
ncu --clock-control none -k regex:halo_kernel -c 1 "${secs[@]}" --print-details all $B/convstudy "${args[@]}" \
    >"$OUT/ncu.txt" 2>&1
status=$?
grep -E "PASS|FAIL|ERROR" "$OUT/ncu.txt" | head -3
if [[ ${SOURCE:-0} == 1 ]]; then
    # The same launch again into a report, and its source page: which SASS instructions the
    # warps wait at (scripts/ncu_source_top.py) -> source.txt
    stamp "ncu source page"
    ncu --clock-control none -k regex:halo_kernel -c 1 --section SourceCounters --section WarpStateStats \
        --import-source no -f -o /tmp/halo_src $B/convstudy "${args[@]}" >/dev/null 2>&1 || status=1
    ncu -i /tmp/halo_src.ncu-rep --page source --print-source sass --csv 2>&1 |
        python3 scripts/ncu_source_top.py 60 >"$OUT/source.txt" 2>&1 || status=1
    head -25 "$OUT/source.txt"
fi
obj=$(find $B -name 'halo_conv.cu.o' | head -1)
if [[ -n $obj && ${SASS:-1} == 1 ]]; then
    cuobjdump -sass "$obj" | grep -E "Function|HGMMA|UTMALDG|UTMASTG|STL|LDL|WARPSYNC|BAR" >"$OUT/sass.txt" 2>&1
    stamp "sass: $(grep -c HGMMA "$OUT/sass.txt") HGMMA, $(grep -c UTMALDG "$OUT/sass.txt") UTMALDG, $(grep -c 'STL\|LDL' "$OUT/sass.txt") local accesses"
fi
stamp "done, status $status"
exit $status
