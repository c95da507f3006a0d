#!/usr/bin/env bash
# Why a row of the before/after comparison (scripts/device_compare.sh) is slower: the SASS of
# the old and the new kernel and Nsight Compute's sections for one launch of each, on the same
# machine, from the binaries in .ab/ (scripts/compare_pack.sh; unpacked by ab_unpack). After
# device_compare.sh in the same call it reuses that call's golden files, else makes the row's.
#
#   OUT=... ROW="hopper-ws-fp16 conv2 32 nhwc" OLD_FUN='wgmma_ws_kernel.*Li128ELi32ELi8E' \
#     NEW_FUN='9ws_kernelI6__halfLi6ELb0E.*EpiDirect' scripts/device_ab_probe.sh
#
#   ROW      variant layer N layout
#   OLD_FUN / NEW_FUN  regexes (awk) over the mangled kernel names of the old / new binary:
#            every matching function's SASS goes to sass_old.txt / sass_new.txt
#   KERNEL   ncu's kernel-name regex for both (default: ws_kernel)
#   SASS     0: no SASS files (the ncu reports only)
# Files: sass_old.txt, sass_new.txt, ncu_old.txt, ncu_new.txt (and log.txt via device_out).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh
device_out out/ab_probe
AB=/tmp/ab
read -r VAR LAYER N LAYOUT <<<"${ROW:?ROW=\"variant layer N layout\"}"
KERNEL=${KERNEL:-ws_kernel}
ab_unpack "$AB" || exit 2
# the row's golden set (made here with the new generator when this call has none)
[[ -f golden/alexnet/n$N/$LAYER.output.npy ]] ||
    "$AB/new/convstudy" generate --batch "$N" --only "$LAYER" --out golden --no-onednn --quiet || exit 1
check=(--golden golden)
status=0
SASS=${SASS:-1}
for side in old new; do
    fun=OLD_FUN
    [[ $side == new ]] && fun=NEW_FUN
    ((SASS)) && stamp "SASS $side (${!fun})"
    ((SASS)) && timeout 240 cuobjdump -sass "$AB/$side/convstudy" 2>/dev/null | awk -v re="${!fun}" '
        /Function : / { keep = ($3 ~ re); if (keep) { n++; print "##", $3 } ; next }
        keep { print }
        END { print "## functions: " n+0 > "/dev/stderr" }' >"$OUT/sass_$side.txt"
    NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    stamp "ncu $side: $VAR $LAYER N=$N $LAYOUT"
    timeout 120 "$NCU" --clock-control none -k "regex:$KERNEL" -c 1 \
        --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
        --section SchedulerStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
        --section SourceCounters --print-details all \
        "$AB/$side/convstudy" run --variant "$VAR" --layer "$LAYER" --batch "$N" --layout "$LAYOUT" \
        "${check[@]}" --warmup 0 --repeats 1 >"$OUT/ncu_$side.txt" 2>&1 || status=1
    grep -E "Duration|Registers Per|Warp Cycles Per Issued|Issue Slots Busy|Compute \(SM\) Throughput|L2 Cache Throughput|Block Size|Grid Size|Dynamic Shared" "$OUT/ncu_$side.txt" | head -16
done
stamp "done, status $status"
exit $status
