#!/bin/bash
# Device-side check of the tf32 rungs (one call), from the repository root:
#   bash tools/dev/hopper/device_tf32.sh [san]     (san: + compute-sanitizer on the odd shapes)
# (~60-100 s without san, on an H200; run with carry ["build-hopper/test_hopper"] after build.sh
# here, or without: it then builds on the device, ~20 s.)
# Uses the carried build-hopper/test_hopper (built here by build.sh) or builds it on the device.
# 1. correctness first: tf32 on every shape (12 odd shapes N=3, conv1/conv2 N=5 chunked, the five
#    layers N=1 and N=128, conv1's space-to-depth GEMM), every rung, both layouts, every tile
#    config for NHWC; fp16/bf16 odd shapes as a check that their host paths still work;
# 2. timings: tf32 at N=128 (every config, L2 flushed, median of 20) and cuBLAS tf32 GEMMs;
# 3. SASS counts of the tf32 kernels.
# Logs to $OUT: tf32_check.log, f16_check.log, tf32_time.log, sass_counts_tf32.txt, hgmma_kinds.txt
# (+ tf32_{memcheck,synccheck,racecheck}.log with san).
set -u
OUT=${OUT:-/tmp/hopper_out}
mkdir -p "$OUT"
B=build-hopper/test_hopper
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
if ! $B --probe; then
    echo "carried binary does not run here: building on the device"
    OUTDIR=/tmp/bh sh tools/dev/hopper/build.sh > "$OUT/build.log" 2>&1
    tail -3 "$OUT/build.log"
    B=/tmp/bh/test_hopper
fi
T0=$(date +%s)
echo "== correctness: tf32, all shapes, all rungs, all tiles"
timeout 50 "$B" --rung all --dt tf32 --no-time > "$OUT/tf32_check.log" 2>&1; echo "exit $? ($(( $(date +%s) - T0 )) s)"
grep -E "FAIL|FATAL|ERROR|mismatch|outputs off|SKIP" "$OUT/tf32_check.log" | head -30
grep -c PASS "$OUT/tf32_check.log"; tail -1 "$OUT/tf32_check.log"
echo "== correctness: fp16/bf16 odd shapes (host paths after the generic core)"
timeout 20 "$B" --rung all --dt fp16,bf16 --quick > "$OUT/f16_check.log" 2>&1; echo "exit $? ($(( $(date +%s) - T0 )) s)"
grep -E "FAIL|FATAL|ERROR" "$OUT/f16_check.log" | head -10; grep -c PASS "$OUT/f16_check.log"; tail -1 "$OUT/f16_check.log"
echo "== timing: tf32 N=128"
timeout 60 "$B" --rung all --dt tf32 --big-only > "$OUT/tf32_time.log" 2>&1; echo "exit $? ($(( $(date +%s) - T0 )) s)"
grep -E "FAIL|FATAL|ERROR" "$OUT/tf32_time.log" | head -10
sed -n '/==== summary/,$p' "$OUT/tf32_time.log"
cuobjdump --dump-sass "$B" > /tmp/sass.txt 2>&1
awk '/Function :/{f=$3; fs[f]=1} /HGMMA/{h[f]++} /UTMALDG/{t[f]++} /LDGSTS/{g[f]++} /[^A-Z]LDL[. ]/{l[f]++} /[^A-Z]STL[. ]/{s[f]++}
     END{for (f in fs) printf "HGMMA=%d UTMALDG=%d LDGSTS=%d LDL=%d STL=%d %s\n", h[f], t[f], g[f], l[f], s[f], f}' /tmp/sass.txt \
    | sort -k6 | grep -E "kernelIf" > "$OUT/sass_counts_tf32.txt"
grep -oE "HGMMA\.[0-9A-Za-z.]+" /tmp/sass.txt | sort | uniq -c > "$OUT/hgmma_kinds.txt"
echo "== SASS (tf32 kernels: HGMMA UTMALDG LDGSTS LDL STL)"
sed -E 's/_ZN2cs3gpu8variants6hopper[0-9]+_GLOBAL__N__[0-9a-f_]+_[0-9]+_wgmma_[a-z]+_cu_[0-9a-f]+[0-9]+//; s/EEEv.*//' "$OUT/sass_counts_tf32.txt" | cut -c1-100
cat "$OUT/hgmma_kinds.txt"
if [ "${1:-}" = san ]; then
    for tl in memcheck:60 synccheck:30 racecheck:40; do
        tool=${tl%%:*}; lim=${tl##*:}
        echo "== compute-sanitizer $tool (tf32 odd shapes, all rungs; limit ${lim}s)"
        timeout $lim compute-sanitizer --tool $tool "$B" --quick --rung all --dt tf32 > "$OUT/tf32_$tool.log" 2>&1
        echo "exit $?"
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|RESULT" "$OUT/tf32_$tool.log" | tail -3
    done
fi
echo "total $(( $(date +%s) - T0 )) s"
