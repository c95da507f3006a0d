#!/usr/bin/env bash
# One device call for ping-pong in clusters of two (issue #24; cuDNN's tf32 conv2 kernel runs
# 128x128 tiles, one warpgroup per tile, CTA pairs: NOTES "cuDNN's tf32 kernel on conv2 at
# N=128 against ours"): build convstudy and the GPU tests, run every GPU test, then two
# sweeps of the same binary on conv2-5, NHWC, sampled check:
#   pp_tiles.csv  $PP_VARIANTS with $PP_AXES (default: ping-pong in pairs along the filters,
#                 hopper-mca, and alone, hopper-pp; every tile, data-parallel and split-K: the
#                 tile sweep that says what the pair is worth)
#   pp_ref.csv    the rows it must beat, in the same call: cuDNN in each class and the rungs
#                 that hold the cells today (stream-K, split-tail, cluster, their defaults)
#
#   OUT=$OUT CONVSTUDY_GIT_REV=<rev> scripts/device_pp_cluster.sh
#
# Settings: BATCH (default 32,128), LAYERS (conv2,conv3,conv4,conv5), TESTS (1: build and run
# the GPU tests), DEADLINE (seconds from the start, default 540: each sweep's timeout is
# what is left). Writes log.txt, gpu_tests.log, pp_tiles.csv, pp_ref.csv under $OUT.
# Time (H200): build with the tests ~250 s, GPU tests ~110 s, a tile row ~0.1-0.3 s.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh
device_out out/pp_cluster
B=build-device
C=$B/convstudy
BATCH=${BATCH:-32,128}
LAYERS=${LAYERS:-conv2,conv3,conv4,conv5}
DEADLINE=${DEADLINE:-540}
PP_VARIANTS=${PP_VARIANTS:-hopper-mca-fp16,hopper-mca-bf16,hopper-mca-tf32,hopper-pp-fp16,hopper-pp-bf16,hopper-pp-tf32}
PP_AXES=${PP_AXES:-"--axis schedule=pingpong --axis scheduler=data-parallel,split-k --axis tile=all"}
status=0
TESTS=${TESTS:-1} device_build_maybe_test pp || exit 1
left() { echo $((DEADLINE - ($(date +%s) - device_t0))); }
COMMON=(--layout nhwc --memory pageable --check sampled --no-cpu-timing --quiet --layers "$LAYERS"
    --batch "$BATCH" --warmup 2 --repeats 10)
sweep() {  # sweep NAME ARGS...: one sweep into $OUT/NAME.csv within the deadline
    local name=$1
    shift
    (($(left) > 20)) || { stamp "$name: no time left"; status=1; return; }
    stamp "$name (timeout $(left) s)"
    timeout "$(left)" "$C" sweep "${COMMON[@]}" "$@" --csv "$OUT/$name.csv" >"/tmp/$name.txt" 2>&1 || status=1
    tail -1 "/tmp/$name.txt"
    grep -E " (FAIL|ERROR) " "/tmp/$name.txt" | head
}
sweep pp_ref --variants cudnn-fp16,cudnn-bf16,cudnn-tf32,hopper-sk-fp16,hopper-sk-bf16,hopper-sk-tf32,hopper-tail-fp16,hopper-tail-bf16,hopper-tail-tf32,hopper-mc-fp16,hopper-mc-bf16,hopper-mc-tf32
# shellcheck disable=SC2086  # PP_VARIANTS, PP_AXES: lists
sweep pp_tiles --variants "$PP_VARIANTS" $PP_AXES
stamp "done, status $status"
exit $status
