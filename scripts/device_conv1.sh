#!/usr/bin/env bash
# One device call for conv1's GEMM on the space-to-depth rewrite (issue #24 item 2): the tiles
# that trim the MMAs to the 48 channels of a 64-half slice (-mma96: 3 of 4 k-steps) and the
# 256-pixel tiles of 96 filters (half the weight reads per output), against the rung's tuned
# tile and the cuDNN rows (plain and s2d). Build, every GPU test (the axis test runs each new
# tile on the odd shapes), a tile sweep of hopper-tmastore on conv1 (every tile, three classes,
# both layouts, N=32/128: the table's conv1 entries), the same rows with cuDNN at 20 repeats,
# ncu on conv1 N=128 (L2 bytes and tensor pipe per tile), compute-sanitizer on the new tiles.
#
#   OUT=$OUT CONVSTUDY_GIT_REV=<rev> scripts/device_conv1.sh
#
# Outputs in $OUT: log.txt, gpu_tests.log, conv1_tiles.csv, conv1.csv, conv1_kernels.csv,
# conv1_profile.csv, sanitizer.log (SANITIZE_TILES: the tiles sanitized, default the newest).
# Time (H200): build ~80 s, tests ~65 s, tile sweep ~120 s, rows ~30 s, ncu ~40 s, sanitizer ~40 s.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh
device_out out/conv1
B=build-device
C=$B/convstudy
NEW=m256n128k128B-s4-mma96,m256n128k128B-s4,m256n96k128B-s4-mma96
status=0
# CONV1_AFTER_RANGE=1: run after scripts/device_range.sh in the same call (its build and GPU
# tests stand; no sanitizer here; the profile's row CSV stays in /tmp: 8 files in all).
if [[ ${CONV1_AFTER_RANGE:-0} != 1 ]]; then
    device_build_test conv1 || exit 1
else
    stamp "device: $(nvidia-smi --query-gpu=name --format=csv,noheader), git $(device_rev)"
fi

V=hopper-tmastore-fp16,hopper-tmastore-bf16,hopper-tmastore-tf32
stamp "tile sweep: hopper-tmastore on conv1, every tile"
timeout 200 $C sweep --variants "$V" --layers conv1 --batch 32,128 --layout all --memory pageable --check sampled \
    --no-cpu-timing --warmup 2 --repeats 10 --axis tile=all --csv "$OUT/conv1_tiles.csv" --quiet >/tmp/t.txt 2>&1 || status=1
tail -1 /tmp/t.txt
grep -E " (FAIL|ERROR) " /tmp/t.txt | head

stamp "conv1 rows: the rung at its default and the new tiles, cuDNN plain and s2d (20 repeats)"
R=(--layers conv1 --batch "32,128" --layout all --memory pageable --check sampled --no-cpu-timing --repeats 20 --quiet)
timeout 60 $C sweep --variants "$V,cudnn-fp16,cudnn-bf16,cudnn-tf32,cudnn-fp16-s2d,cudnn-bf16-s2d,cudnn-tf32-s2d" "${R[@]}" \
    --csv /tmp/c1_default.csv >/tmp/c1d.txt 2>&1 || status=1
timeout 60 $C sweep --variants hopper-tmastore-fp16,hopper-tmastore-bf16 --axis "tile=$NEW" "${R[@]}" \
    --csv /tmp/c1_new.csv >/tmp/c1n.txt 2>&1 || status=1
tail -qn1 /tmp/c1d.txt /tmp/c1n.txt
$C merge /tmp/c1_default.csv /tmp/c1_new.csv -o "$OUT/conv1.csv" || status=1

stamp "ncu: conv1 N=128 NHWC, hopper-tmastore-fp16 at m128n96k128B-s7 and the new tiles"
timeout 120 $C sweep --variants hopper-tmastore-fp16 --layers conv1 --batch 128 --layout nhwc --memory pageable \
    --check sampled --no-cpu-timing --quiet --profile --axis "tile=$NEW" \
    --csv "$([[ ${CONV1_AFTER_RANGE:-0} == 1 ]] && echo /tmp || echo "$OUT")/conv1_profile.csv" \
    --kernels-csv "$OUT/conv1_kernels.csv" >/tmp/p.txt 2>&1 || status=1
tail -1 /tmp/p.txt

stamp "compute-sanitizer on hopper-tmastore-fp16 and -bf16 at the trimmed tiles"
[[ ${CONV1_AFTER_RANGE:-0} == 1 ]] && SANITIZE_TILES=" "
for t in ${SANITIZE_TILES:-m256n128k128B-s4-mma96}; do
    SANITIZE_VARIANTS=hopper-tmastore-fp16,hopper-tmastore-bf16 SANITIZE_SPLIT=variant SANITIZE_AXES="--axis tile=$t" \
        SANITIZE_SECONDS=60 SANITIZE_DEADLINE=70 scripts/sanitize.sh $B "/tmp/san_$t.log" "/tmp/sanitize-$t" || status=1
    { echo "## tile=$t"; cat "/tmp/san_$t.log"; } >>"$OUT/sanitizer.log"
    grep TOTAL "/tmp/san_$t.log" | tail -1
done

python3 - "$OUT/conv1.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1], newline="")) if r["status"] == "PASS" and r["kernel_ms"]]
for r in sorted(rows, key=lambda r: (r["layout"], r["N"], r["precision"], float(r["kernel_ms"]))):
    print(f"{r['layout']} N={r['N']:<4} {r['variant']:<22} {r['axes']:<28} {float(r['kernel_ms']):.4f}")
PY
stamp "done, status $status"
exit $status
