#!/usr/bin/env bash
# One device call for the full-width space-to-depth copy (gpu/variants/s2d_vec.cuh), the
# transform of conv1's rewrite for the Hopper family and the cudnn-*-s2d rows alike: build,
# every GPU test (the [s2d] tests compare the transform bit for bit with the host map), conv1
# at N=1/32/128 in both layouts (hopper-tmastore in three classes against cuDNN plain and s2d,
# 20 repeats), the halo rung with each value of its `launch` axis (the GEMM as the transform's
# programmatic dependent, or after it) against cudnn-*-s2d in one sweep, ncu per kernel on conv1
# N=128 NHWC (the transform apart from the GEMMs), and compute-sanitizer on the rows that take
# the kernel.
#
#   OUT=$OUT CONVSTUDY_GIT_REV=<rev> scripts/device_s2d_vec.sh
#
# Outputs in $OUT: log.txt, gpu_tests.log, conv1_s2d.csv, halo_launch.csv, s2d_kernels.csv
# (the profiled sweep's own rows go to /tmp), sanitizer.log. Time (H200): build with the tests
# ~250 s, tests ~110 s, sweeps ~60 s, ncu ~40 s, sanitizer ~90 s.
# Settings: GPU_TESTS_FILTER (the Catch2 tags of the GPU tests run, default [gpu]: all; [s2d]
# the transform's bit-for-bit tests alone), HALO_AXES (the halo sweep's axes, default
# "--axis launch=all"), SANITIZE=0 skips the sanitizer, HALO_SOURCE=1 adds
# scripts/device_halo_ncu.sh's source view of the halo kernel at N=128 NHWC (ncu.txt, source.txt).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh
device_out out/s2d_vec
B=build-device
C=$B/convstudy
status=0
HALO_AXES=${HALO_AXES:---axis launch=all}
device_build_test s2dv || exit 1

stamp "golden N=1,32,128 (conv1)"
$C generate --batch 1,32,128 --only conv1 --out golden --quiet || status=1
V=hopper-tmastore-fp16,hopper-tmastore-bf16,hopper-tmastore-tf32,cudnn-fp16,cudnn-bf16,cudnn-tf32
V=$V,cudnn-fp16-s2d,cudnn-bf16-s2d,cudnn-tf32-s2d
stamp "conv1: the rung against cuDNN plain and s2d"
timeout 120 $C sweep --variants "$V" --layers conv1 --batch 1,32,128 --layout all --memory pageable --no-cpu-timing \
    --repeats 20 --quiet --csv "$OUT/conv1_s2d.csv" >/tmp/c.txt 2>&1 || status=1
tail -1 /tmp/c.txt
grep -E " (FAIL|ERROR) " /tmp/c.txt | head

stamp "conv1: hopper-halo, $HALO_AXES, against cudnn-*-s2d"
# shellcheck disable=SC2086  # HALO_AXES: options
timeout 120 $C sweep --variants hopper-halo-fp16,hopper-halo-bf16,cudnn-fp16-s2d,cudnn-bf16-s2d $HALO_AXES \
    --layers conv1 --batch 1,32,128 --layout all --memory pageable --no-cpu-timing --repeats 20 --quiet \
    --csv "$OUT/halo_launch.csv" >/tmp/h.txt 2>&1 || status=1
tail -1 /tmp/h.txt
grep -E " (FAIL|ERROR) " /tmp/h.txt | head

stamp "ncu: conv1 N=128 NHWC"
timeout 120 $C sweep --variants hopper-halo-fp16,hopper-tmastore-fp16,hopper-tmastore-tf32,cudnn-fp16-s2d,cudnn-tf32-s2d --layers conv1 \
    --batch 128 --layout nhwc --memory pageable --check sampled --no-cpu-timing --quiet --profile \
    --csv /tmp/s2d_profile.csv --kernels-csv "$OUT/s2d_kernels.csv" >/tmp/p.txt 2>&1 || status=1
tail -1 /tmp/p.txt

if [[ ${HALO_SOURCE:-0} == 1 ]]; then
    stamp "ncu source view of the halo kernel (conv1 N=128 NHWC)"
    SOURCE=1 SASS=0 scripts/device_halo_ncu.sh >/dev/null 2>&1 || status=1
    head -25 "$OUT/source.txt"
fi

if [[ ${SANITIZE:-1} == 1 ]]; then
    stamp "compute-sanitizer on the rows that take the full-width transform"
    SANITIZE_VARIANTS=hopper-halo-fp16,hopper-tmastore-fp16,hopper-tmastore-tf32,hopper-ws-bf16 SANITIZE_SPLIT=variant \
        SANITIZE_SECONDS=${SANITIZE_SECONDS:-80} SANITIZE_DEADLINE=${SANITIZE_DEADLINE:-90} \
        scripts/sanitize.sh $B "$OUT/sanitizer.log" /tmp/sanitize-logs || status=1
    grep TOTAL "$OUT/sanitizer.log" | tail -1
fi

python3 - "$OUT/s2d_kernels.csv" "$OUT/conv1_s2d.csv" "$OUT/halo_launch.csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1], newline="")):
    print(f"{r['row'][:44]:<44} {r['kernel'].split('(')[0][:58]:<58} {float(r['gpu__time_duration.sum']) / 1e3:8.1f} us")
for f in sys.argv[2:]:
    rows = [r for r in csv.DictReader(open(f, newline="")) if r["status"] == "PASS"]
    for r in sorted(rows, key=lambda r: (r["layout"], int(r["N"]), r["precision"], float(r["kernel_ms"]))):
        print(f"{r['layout']} N={r['N']:<4} {r['variant']:<22} {r['config'][:34]:<34} {float(r['kernel_ms']):.4f}")
PY
stamp "done, status $status"
exit $status
