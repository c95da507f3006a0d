#!/usr/bin/env bash
# The cut-tile kernels (stream-K, split-tail: ws_kernel's kCuts instances) before and after a
# change, on one GPU machine in one call: both sides built there (scripts/device_ab_build.sh,
# from this tree and OLD_REV's differing files), scripts/device_compare.sh runs them on the
# rows the change touches and their controls, new then old per layer, then the SASS of both
# binaries (scripts/device_sass.sh: CALL and WARPSYNC counts per kernel), then, time allowing,
# a tile sweep of the cut-tile rungs with the new binary (the tuned table's input,
# scripts/hopper_tune.py).
#
#   scripts/compare_pack.sh --src OLD_REV && device call (carry .ab):
#   OUT=$OUT CONVSTUDY_GIT_REV=<this tree's> scripts/device_cuts.sh
#
# Files under $OUT (8 at most come back): log.txt, new.csv, old.csv, compare.txt,
# gpu_tests.log (TESTS=1), sass_new.csv (not with SASS=0), sass_old.csv (SASS_OLD=1), sass_warpsync.txt (the
# WARPSYNCs of one cut-tile kernel and of its data-parallel twin, in context), tiles.csv.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-out/cuts}
mkdir -p "$OUT"
export device_t0=${device_t0:-$(date +%s)}  # one clock for every DEADLINE below
V=hopper-tail-fp16,hopper-tail-bf16,hopper-tail-tf32,hopper-sk-fp16,hopper-sk-bf16,hopper-sk-tf32
V=$V,hopper-tmastore-fp16,hopper-tmastore-bf16,hopper-tmastore-tf32,cudnn-fp16,cudnn-bf16,cudnn-tf32
export SWEEP_ARGS=${SWEEP_ARGS:-"--variants $V --memory pageable --layout nhwc --batch 32,128 --warmup 3 --repeats 20"}
export LAYERS=${LAYERS:-conv2,conv3,conv4,conv5}
export TESTS=${TESTS:-0}
export DEADLINE=${DEADLINE:-520}  # seconds from the start: the builds take ~250 of them
scripts/device_ab_build.sh >>"$OUT/log.txt" 2>&1 || { tail -30 "$OUT/log.txt"; exit 2; }
OUT=$OUT AB_BUILT=1 scripts/device_compare.sh
status=$?
exec >>"$OUT/log.txt" 2>&1
sides="new${SASS_OLD:+ old}"  # SASS_OLD=1: the old binary's SASS too; SASS=0: none
[[ ${SASS:-1} == 0 ]] && sides=""
for side in $sides; do
    scripts/device_sass.sh "/tmp/ab/$side/convstudy" "$OUT/sass_$side.csv" || status=1
done
# Where the WARPSYNCs sit in one cut-tile kernel (fp16, tile 1, TMA store, kCut = 1: split-tail)
# and in its data-parallel twin: each with the instructions around it (one disassembly of the
# binary, read twice: it takes tens of seconds)
[[ -n $sides ]] && cuobjdump -sass /tmp/ab/new/convstudy >/tmp/ab/new.sass 2>/dev/null
[[ -n $sides ]] && for k in Li1ELb0EEEv Li0ELb0EEEv; do
    awk -v want="ws_kernelI6__halfLi1ELb0ENS2_11EpiTmaStoreES4_Li0ELi1ELb0E$k" '
        /Function : / { on = index($0, want) > 0; if (on) print; next }
        on { line[++n] = $0; if (index($0, "WARPSYNC")) hit[n] = 1 }
        END { for (i = 1; i <= n; i++) for (j = i - 4; j <= i + 2; j++) if (hit[j]) { print line[i]; break } }' \
        /tmp/ab/new.sass
done >"$OUT/sass_warpsync.txt"
# CALL and WARPSYNC in the persistent kernels, the cut-tile instances (the kCuts template
# argument, the 9th: true, or the cut kind 1-3) apart from the rest
for side in $sides; do
    awk -F'"' -v side="$side" 'NR > 1 && $2 ~ /ws_kernel</ {
        n = split($2, t, "; "); cuts = (t[9] == "true" || t[9] ~ /^[123]$/) ? "kCuts" : "other"
        split($3, c, ","); calls[cuts] += c[14]; ws[cuts] += c[15]; k[cuts]++
    } END { for (x in k) printf "sass %s %s: %d kernels, CALL %d, WARPSYNC %d\n", side, x, k[x], calls[x], ws[x] }' \
        "$OUT/sass_$side.csv"
done
left=$((575 - $(date +%s) + device_t0))
if [[ ${TILES:-1} == 1 ]] && ((left > 60)); then  # TILES=0: no tile sweep
    echo "tile sweep of the cut-tile rungs (${left}s at most)"
    timeout "$left" /tmp/ab/new/convstudy sweep --variants hopper-tail-fp16,hopper-tail-tf32,hopper-sk-fp16,hopper-sk-tf32 \
        --axis tile=all --layers conv2,conv5 --batch 32,128 --memory pageable --layout nhwc --check sampled \
        --warmup 2 --repeats 10 --no-cpu-timing --csv "$OUT/tiles.csv" --quiet | tail -2
fi
exit $status
