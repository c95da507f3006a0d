#!/usr/bin/env bash
# One device call that measures the Hopper family's tile table on this card (issue #24 item 5:
# tile and schedule chosen by measurement): build, then a tile sweep (every tile of the `tile`
# axis) of the persistent rungs $RUNGS in fp16 and tf32 (bf16 shares fp16's key in the table),
# conv2-5, NHWC, first at $BATCH, then at $BATCH2 for $RUNGS2; optionally Nsight Compute of the
# N=1 rows (split-K: the main kernel and the reduction kernel, one row each).
#
#   OUT=$OUT CONVSTUDY_GIT_REV=<rev> scripts/device_tiles.sh
#   then, here: python3 scripts/hopper_tune.py <the CSVs in tuned_tiles.inc's header> \
#       plots/<card>/<this call's CSVs> > gpu/variants/hopper/tuned_tiles.inc
#
# Settings (environment): RUNGS (default tmastore,tail,sk,mc), BATCH (512); RUNGS2 (sk,mc),
# BATCH2 (32,128), empty RUNGS2 for none; TESTS=1 builds and runs the GPU tests first
# (gpu_tests.log, ~2.5 minutes); N1_PROFILE=1 (default) profiles hopper-ws/tmastore-fp16 and
# cudnn-fp16 at N=1 on conv2-5 (n1_profile.csv, n1_kernels.csv); DEADLINE (seconds from the
# start, default 540): each sweep's timeout is what is left of it (a sweep keeps the layers it
# finished: it writes its CSV after each layer and batch).
# Outputs in $OUT: log.txt, tiles.csv ($BATCH), tiles2.csv ($BATCH2), n1_profile.csv,
# n1_kernels.csv, gpu_tests.log (TESTS=1).
# Time (H200): build ~110 s; a tile row ~0.3-0.5 s (plan, H2D of the inputs, sampled check,
# 2 warm-ups + 10 timed runs): 4 rungs x 2 classes x 4 layers x ~14 tiles at N=512 ~200 s;
# the N=1 profile ~40 s.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh
device_out out/tiles
B=build-device
C=$B/convstudy
RUNGS=${RUNGS-tmastore,tail,sk,mc}
BATCH=${BATCH:-512}
RUNGS2=${RUNGS2-sk,mc}
BATCH2=${BATCH2:-32,128}
DEADLINE=${DEADLINE:-540}
status=0
TESTS=${TESTS:-0} device_build_maybe_test tiles || exit 1
left() { echo $((DEADLINE - ($(date +%s) - device_t0))); }
variants() {  # variants RUNGS: hopper-<rung>-fp16,hopper-<rung>-tf32 for each rung
    local r v=""
    for r in ${1//,/ }; do v="$v,hopper-$r-fp16,hopper-$r-tf32"; done
    echo "${v#,}"
}
COMMON=(--layout nhwc --memory pageable --check sampled --no-cpu-timing --quiet --layers "conv2,conv3,conv4,conv5"
    --warmup 2 --repeats 10 --axis tile=all)

if [[ ${N1_PROFILE:-1} == 1 ]]; then
    stamp "Nsight Compute at N=1: hopper-ws-fp16, hopper-tmastore-fp16, cudnn-fp16"
    timeout 120 $C sweep --variants hopper-ws-fp16,hopper-tmastore-fp16,cudnn-fp16 --layers conv2,conv3,conv4,conv5 \
        --batch 1 --layout nhwc --check sampled --no-cpu-timing --quiet --profile --csv "$OUT/n1_profile.csv" \
        --kernels-csv "$OUT/n1_kernels.csv" >/tmp/n1.txt 2>&1 || status=1
    tail -1 /tmp/n1.txt
fi

if [[ -n $RUNGS ]]; then
    stamp "tile sweep at N=$BATCH: $(variants "$RUNGS") (timeout $(left) s)"
    timeout "$(left)" $C sweep --variants "$(variants "$RUNGS")" "${COMMON[@]}" --batch "$BATCH" \
        --csv "$OUT/tiles.csv" >/tmp/tiles.txt 2>&1 || status=1
    tail -1 /tmp/tiles.txt
    grep -E " (FAIL|ERROR) " /tmp/tiles.txt | head
fi
if [[ -n $RUNGS2 ]] && (($(left) > 30)); then
    stamp "tile sweep at N=$BATCH2: $(variants "$RUNGS2") (timeout $(left) s)"
    timeout "$(left)" $C sweep --variants "$(variants "$RUNGS2")" "${COMMON[@]}" --batch "$BATCH2" \
        --csv "$OUT/tiles2.csv" >/tmp/tiles2.txt 2>&1 || status=1
    tail -1 /tmp/tiles2.txt
    grep -E " (FAIL|ERROR) " /tmp/tiles2.txt | head
fi
stamp "done, status $status"
exit $status
