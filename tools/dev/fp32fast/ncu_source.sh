#!/usr/bin/env bash
# Per-SASS-instruction stall samples of the wgmma Winograd main kernels (ncu source page), for
# finding where their warps wait. On the GPU machine after a build:
#   [KERNELS=regex] tools/dev/fp32fast/ncu_source.sh BUILD_DIR OUT_DIR   -> OUT_DIR/ncu_source.csv.gz
# Read it with tools/dev/fp32fast/ncu_source_summary.py (here, no GPU needed).
set -uo pipefail
B=$1 OUT=$2
ncu --clock-control none --target-processes all -k "regex:${KERNELS:-wtc_wgmma}" --section SourceCounters --section WarpStateStats \
    --page source --print-source sass --csv env B="$B" tools/dev/fp32fast/ncu_winograd_wgmma.sh > /tmp/ncu_source.csv 2>/tmp/ncu_source.err
tail -3 /tmp/ncu_source.err
gzip -c /tmp/ncu_source.csv > "$OUT/ncu_source.csv.gz"
head -3 /tmp/ncu_source.csv | cut -c1-600
