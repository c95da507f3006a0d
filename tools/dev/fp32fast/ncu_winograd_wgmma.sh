#!/usr/bin/env bash
# The wgmma Winograd rungs on conv2 N=128, once each (check only), for ncu:
#   NCU_ARGS="--target-processes all -k regex:wtc_ --section ... tools/dev/fp32fast/ncu_winograd_wgmma.sh"
#   STAGES="... ncu" scripts/device_run.sh
# VARIANTS, LAYER, BATCH override the defaults; B is device_run.sh's build directory.
set -euo pipefail
B=${B:-build-device}
for v in ${VARIANTS:-winograd-3xfp16-wgmma-f3x3-5x5 winograd-3xfp16-wgmma-ws-f3x3-5x5}; do
    "$B/convstudy" run --variant "$v" --layer "${LAYER:-conv2}" --batch "${BATCH:-128}" --repeats 0
done
