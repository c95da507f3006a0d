#!/usr/bin/env bash
# The cut-tile kernels (stream-K, split-tail: ws_kernel's kCuts instances) before and after a
# change, on one GPU machine in one call: scripts/device_compare.sh runs this tree's binary and
# an older revision's (both built here by scripts/compare_pack.sh; carry .ab) on the rows the
# change touches and their controls, then the SASS of both binaries (scripts/device_sass.sh:
# CALL and WARPSYNC counts per kernel), then, time allowing, a tile sweep of the cut-tile rungs
# with the new binary (the tuned table's input, scripts/hopper_tune.py).
#
#   scripts/compare_pack.sh OLD_REV && device call (carry .ab):
#   OUT=$OUT scripts/device_cuts.sh
#
# Files under $OUT (8 at most come back): log.txt, new.csv, old.csv, compare.txt,
# gpu_tests.log (TESTS=1), sass_new.csv, sass_old.csv, tiles.csv.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-out/cuts}
mkdir -p "$OUT"
V=hopper-tail-fp16,hopper-tail-bf16,hopper-tail-tf32,hopper-sk-fp16,hopper-sk-bf16,hopper-sk-tf32
V=$V,hopper-tmastore-fp16,hopper-tmastore-bf16,hopper-tmastore-tf32,cudnn-fp16,cudnn-bf16,cudnn-tf32
export SWEEP_ARGS=${SWEEP_ARGS:-"--variants $V --memory pageable --layout nhwc --batch 32,128 --warmup 3 --repeats 20"}
export LAYERS=${LAYERS:-conv2,conv3,conv4,conv5}
export TESTS=${TESTS:-1}
export DEADLINE=${DEADLINE:-420}
OUT=$OUT scripts/device_compare.sh
status=$?
exec >>"$OUT/log.txt" 2>&1
for side in new old; do
    scripts/device_sass.sh "/tmp/ab/$side/convstudy" "$OUT/sass_$side.csv" || status=1
done
# CALL and WARPSYNC in the persistent kernels, the cut-tile instances (the kCuts template
# argument, the 9th) apart from the rest
for side in new old; do
    awk -F'"' -v side="$side" 'NR > 1 && $2 ~ /ws_kernel</ {
        n = split($2, t, "; "); cuts = (t[9] == "true") ? "kCuts" : "other"
        split($3, c, ","); calls[cuts] += c[14]; ws[cuts] += c[15]; k[cuts]++
    } END { for (x in k) printf "sass %s %s: %d kernels, CALL %d, WARPSYNC %d\n", side, x, k[x], calls[x], ws[x] }' \
        "$OUT/sass_$side.csv"
done
left=$((570 - SECONDS))
if ((left > 60)); then
    echo "tile sweep of the cut-tile rungs (${left}s at most)"
    timeout "$left" /tmp/ab/new/convstudy sweep --variants hopper-tail-fp16,hopper-tail-tf32,hopper-sk-fp16,hopper-sk-tf32 \
        --axis tile=all --layers conv2,conv5 --batch 32,128 --memory pageable --layout nhwc --check sampled \
        --warmup 2 --repeats 10 --no-cpu-timing --csv "$OUT/tiles.csv" --quiet | tail -2
fi
exit $status
