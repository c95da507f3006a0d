#!/usr/bin/env bash
# One device call after a merge: build this tree and an older revision (A/B), the whole GPU
# test suite, golden files, the A/B sweep of the Hopper ladder, and a tile sweep of the
# persistent rungs. Usage: OUT=... REV=<old rev> scripts/device_check.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-out/device}
mkdir -p "$OUT"
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh
old=/tmp/ab_old
rm -rf "$old"
git worktree add -f "$old" "${REV:?}" >/dev/null 2>&1 || { echo "no revision $REV"; exit 2; }
stamp "build new and old"
BUILD_LOG="$OUT/build.log" device_build build-ab || exit 1
(cd "$old" && CONVSTUDY_GIT_REV='' BUILD_LOG=/tmp/old_build.log device_build build-ab) || exit 1
stamp "GPU tests"
# shellcheck disable=SC2086  # GPU_TEST_ARGS: several Catch2 specs
CONVSTUDY_REQUIRE_GPU=1 timeout "${TEST_SECONDS:-240}" build-ab/tests/convstudy_gpu_tests ${GPU_TEST_ARGS:-} >>"$(device_log_head "$OUT/gpu_tests.log")" 2>&1
echo "gpu tests rc=$?"; tail -3 "$OUT/gpu_tests.log"; grep -B3 -A10 "FAILED" "$OUT/gpu_tests.log" | head -60
stamp "golden"
build-ab/convstudy generate --batch "${BATCHES:-32,128}" --out golden >/dev/null 2>&1 || echo "generate failed"
stamp "A/B"
AB="--layers conv2,conv3,conv4,conv5 --layout nhwc --batch 128 --repeats 10"
for round in 1 2; do
    # shellcheck disable=SC2086  # AB: the sweep's arguments, split
    build-ab/convstudy sweep $AB --variants "${AB_VARIANTS_NEW:-hopper-ws-fp16,hopper-pp-fp16,hopper-tma-fp16,hopper-tmastore-fp16,hopper-sk-fp16,cudnn-fp16}" \
        --csv "$OUT/ab_new_$round.csv" --quiet >/dev/null 2>&1 || echo "new sweep rc=$?"
    # shellcheck disable=SC2086
    "$old/build-ab/convstudy" sweep $AB --variants "${AB_VARIANTS_OLD:-hopper-ws-fp16,hopper-pp-fp16,hopper-tma-fp16,cudnn-fp16}" \
        --golden golden --csv "$OUT/ab_old_$round.csv" --quiet >/dev/null 2>&1 || echo "old sweep rc=$?"
done
stamp "tiles"
timeout "${TILE_SECONDS:-170}" build-ab/convstudy sweep --variants "${TILE_VARIANTS:-hopper-tmastore-fp16,hopper-pp-fp16,hopper-tmastore-tf32,hopper-pp-tf32}" \
    --axis tile=all --layout nhwc --batch "${BATCHES:-32,128}" --repeats 10 --csv "$OUT/tiles.csv" --quiet >/dev/null 2>&1
echo "tiles rc=$?"
stamp "done"
