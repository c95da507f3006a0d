#!/bin/bash
# Device-side run of the Hopper family check, from the repository root:
#   tools/dev/hopper/device_run.sh [all|quick|final|nosan]   (final: no racecheck)
# Uses the carried build-hopper/test_hopper (built here by build.sh) or builds it on the device.
# Writes logs to $OUT: cp.log, tma.log, ws.log, sass_counts.txt, {memcheck,racecheck,synccheck}.log
# (+ build.log when it had to build).
set -u
OUT=${OUT:-/tmp/hopper_out}
mkdir -p "$OUT"
MODE=${1:-all}
B=build-hopper/test_hopper
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
if ! $B --probe; then
    echo "carried binary does not run here: building on the device"
    OUTDIR=/tmp/bh sh tools/dev/hopper/build.sh > "$OUT/build.log" 2>&1
    tail -3 "$OUT/build.log"
    B=/tmp/bh/test_hopper
fi
cuobjdump --dump-sass "$B" > /tmp/sass.txt 2>&1
awk '/Function :/{f=$3; fs[f]=1} /HGMMA/{h[f]++} /UTMALDG/{t[f]++} /LDGSTS/{g[f]++} /[^A-Z]LDL[. ]/{l[f]++} /[^A-Z]STL[. ]/{s[f]++}
     END{for (f in fs) printf "HGMMA=%d UTMALDG=%d LDGSTS=%d LDL=%d STL=%d %s\n", h[f], t[f], g[f], l[f], s[f], f}' /tmp/sass.txt \
    | sort -k6 > "$OUT/sass_counts.txt"
echo "== SASS (per kernel: HGMMA UTMALDG LDGSTS LDL STL)"
grep "wgmma_" "$OUT/sass_counts.txt" | grep "6__half" | sed -E 's/_ZN2cs3gpu8variants6hopper[0-9]+_GLOBAL__N__[0-9a-f_]+_[0-9]+_wgmma_[a-z]+_cu_[0-9a-f]+[0-9]+//; s/EEEv.*//' | cut -c1-110
grep -oE "HGMMA\.[0-9A-Za-z.]+" /tmp/sass.txt | sort | uniq -c | head -20
if [ "$MODE" = quick ]; then Q=--quick; else Q=; fi
echo "== rung 1 (cp.async)"
timeout 240 "$B" --rung cp --no-cublas $Q > "$OUT/cp.log" 2>&1; echo "exit $?"
grep -E "FAIL|FATAL|ERROR|mismatch|outputs off" "$OUT/cp.log" | head -30
sed -n '/==== summary/,$p' "$OUT/cp.log"
echo "== rung 2 (TMA)"
timeout 240 "$B" --rung tma $Q > "$OUT/tma.log" 2>&1; echo "exit $?"
grep -E "FAIL|FATAL|ERROR|mismatch|outputs off" "$OUT/tma.log" | head -30
sed -n '/==== summary/,$p' "$OUT/tma.log"
echo "== rung 3 (warp-specialised, persistent)"
timeout 240 "$B" --rung ws --no-cublas $Q > "$OUT/ws.log" 2>&1; echo "exit $?"
grep -E "FAIL|FATAL|ERROR|mismatch|outputs off" "$OUT/ws.log" | head -30
sed -n '/==== summary/,$p' "$OUT/ws.log"
if [ "$MODE" != nosan ]; then
    TOOLS="memcheck:60 synccheck:30 racecheck:40"
    [ "$MODE" = final ] && TOOLS="memcheck:60 synccheck:30"
    for tl in $TOOLS; do
        tool=${tl%%:*}; lim=${tl##*:}
        echo "== compute-sanitizer $tool (odd shapes, all rungs; limit ${lim}s)"
        timeout $lim compute-sanitizer --tool $tool "$B" --quick --rung all > "$OUT/$tool.log" 2>&1; echo "exit $?"
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|RESULT" "$OUT/$tool.log" | tail -3
    done
fi
