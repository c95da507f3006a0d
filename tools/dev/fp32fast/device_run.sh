#!/usr/bin/env bash
# One device call for the fp32-fast family : uses the carried prebuilt
# build-fp32fast/test_fp32fast when it runs there, else builds it; then the full check+timing
# run, SASS instruction mix, and compute-sanitizer memcheck/racecheck on the odd shapes.
# Everything lands in $OUT; stdout gets the summary and any failure.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
B=build-fp32fast/test_fp32fast
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"
if ! timeout 60 "$B" --quick > "$OUT/quick.txt" 2>&1; then
    echo "prebuilt binary failed (below); rebuilding on the device"
    tail -5 "$OUT/quick.txt"
    nvcc -std=c++17 -O3 -arch=sm_90 -I gpu -I gpu/variants -I layers -o /tmp/test_fp32fast \
        tools/dev/fp32fast/test_fp32fast.cu gpu/variants/winograd_f2x2_3x3.cu gpu/variants/winograd_f4x4_3x3.cu \
        gpu/variants/winograd_f2x2_5x5.cu gpu/variants/winograd_f3x3_5x5.cu \
        gpu/variants/simt_gemm.cu gpu/variants/split_tf32.cu gpu/cuda_check.cpp -lcublas || exit 1
    B=/tmp/test_fp32fast
fi
timeout 240 "$B" ${FF_ARGS:-} > "$OUT/results.txt" 2>&1
echo "full run exit $?"
grep -E "FAIL|NONDET|plan:|error" "$OUT/results.txt" | cut -c1-220 | head -20
sed -n '/^summary/,$p' "$OUT/results.txt"
cuobjdump -sass "$B" > /tmp/sass.txt 2>&1 && python3 tools/dev/fp32fast/sass_stats.py < /tmp/sass.txt > "$OUT/sass_stats.txt"
gzip -c /tmp/sass.txt > "$OUT/sass.txt.gz"
if [ "${FF_SANITIZE:-1}" = 1 ]; then
    timeout 60 compute-sanitizer --tool memcheck "$B" --quick > "$OUT/memcheck.txt" 2>&1
    echo "memcheck exit $?: $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.txt")"
    timeout 90 compute-sanitizer --tool racecheck "$B" --quick > "$OUT/racecheck.txt" 2>&1
    echo "racecheck exit $?: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/racecheck.txt")"
fi
