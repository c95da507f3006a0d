#!/usr/bin/env bash
# The Hopper tile table, chosen by measurement (issue #24 item 5): a tile sweep of the rungs
# whose policies have no entry in gpu/variants/hopper/tuned_tiles.inc yet, on the layers and
# batches the table covers, for scripts/hopper_tune.py.
#
#   OUT=$OUT CONVSTUDY_GIT_REV=<rev> scripts/device_tune.sh
#   then, here: python3 scripts/hopper_tune.py plots/<card>/hopper_tiles.csv (merged with the
#   new rows by `convstudy merge`) > gpu/variants/hopper/tuned_tiles.inc
#
# TUNE_VARIANTS (default the cluster rungs hopper-mc-{fp16,bf16,tf32}), TUNE_LAYERS (conv2-5:
# conv1's tile comes from its own rows), TUNE_BATCH (32,128), TUNE_AXES (the axes walked, as
# --axis arguments; default every tile at cluster=2), TUNE_SECONDS (the sweep's time limit,
# 200): the CSV keeps every (layer, N) group finished by then.
# Output: $OUT/tune_tiles.csv and its lines in $OUT/tune.log. The checks are sampled (4096
# outputs against the CPU plus a NaN scan): the table keeps only PASS rows.
# Time (H100, estimated from the stop-24 tile sweep): 8 tiles x 3 precisions x 4 layers x 2
# batches = 192 rows at ~0.6 s (plan, check, 10 timed repeats) ~2 minutes after the build.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-out/tune}
mkdir -p "$OUT"
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh
B=build-device
TUNE_VARIANTS=${TUNE_VARIANTS:-hopper-mc-fp16,hopper-mc-bf16,hopper-mc-tf32}
TUNE_LAYERS=${TUNE_LAYERS:-conv2,conv3,conv4,conv5}
TUNE_BATCH=${TUNE_BATCH:-32,128}
TUNE_SECONDS=${TUNE_SECONDS:-200}
read -r -a AXES <<<"${TUNE_AXES:---axis cluster=2 --axis tile=all}"
{
    stamp "tune: $(nvidia-smi --query-gpu=name --format=csv,noheader), git $(device_rev)"
    BUILD_LOG=$B/build-tune.log device_build $B convstudy || exit 1
    stamp "tile sweep: $TUNE_VARIANTS on $TUNE_LAYERS, N=$TUNE_BATCH, ${AXES[*]} (${TUNE_SECONDS}s at most)"
    timeout "$TUNE_SECONDS" $B/convstudy sweep --variants "$TUNE_VARIANTS" --layers "$TUNE_LAYERS" --batch "$TUNE_BATCH" \
        --layout nhwc --memory pageable --check sampled --no-cpu-timing --warmup 2 --repeats 10 "${AXES[@]}" \
        --csv "$OUT/tune_tiles.csv" --quiet
    rc=$?
    ((rc == 124)) && echo "tile sweep stopped at ${TUNE_SECONDS}s: the CSV keeps the finished groups"
    stamp "tile sweep rc $rc; best per (variant, layer, N):"
    python3 - "$OUT/tune_tiles.csv" <<'PY'
import csv, sys
best = {}
for r in csv.DictReader(open(sys.argv[1], newline="")):
    if r["status"] != "PASS" or not r["kernel_ms"]:
        continue
    k = (r["variant"], r["layer"], r["N"])
    if k not in best or float(r["kernel_ms"]) < best[k][0]:
        best[k] = (float(r["kernel_ms"]), r["axes"])
for k, (t, a) in sorted(best.items()):
    print(f"  {k[0]:<18} {k[1]} N={k[2]:<4} {t:.4f} ms  {a}")
PY
    exit $rc
} 2>&1 | tee -a "$OUT/tune.log"
exit "${PIPESTATUS[0]}"
