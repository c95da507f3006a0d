#!/usr/bin/env bash
# The main job (README.md): installs missing Debian packages, builds, generates the golden
# files for N = 1, 32, 128 and, where a CUDA device is present, sweeps every variant over
# the five layers and writes the CSV (and the figures and report when plots/ can run)
# to OUT_DIR (default: out/). Without a GPU it stops after the golden files and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
BUILD_DIR=${BUILD_DIR:-build}
OUT_DIR=${OUT_DIR:-out}
BATCHES=${BATCHES:-1,32,128}
MEMORY=${MEMORY:-pageable}
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
# shellcheck disable=SC2086  # CMAKE_ARGS: several cmake arguments, split on spaces
cmake -S . -B "$BUILD_DIR" "${gen[@]}" ${CMAKE_ARGS:-}
cmake --build "$BUILD_DIR" -j "$(nproc)" --target convstudy
mkdir -p "$OUT_DIR"

"$BUILD_DIR/convstudy" generate --batch "$BATCHES" --out golden

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "main: no CUDA device here: the GPU sweep was skipped. Golden files are under golden/;" \
         "run this script on a machine with an NVIDIA GPU for the sweep, CSV and plots." >&2
    exit 0
fi
set +e
"$BUILD_DIR/convstudy" sweep --variants all --batch "$BATCHES" --memory "$MEMORY" --csv "$OUT_DIR/results.csv"
rc=$?
set -e
if [[ -x plots/plot.sh ]]; then
    plots/plot.sh "$OUT_DIR/results.csv" "$OUT_DIR" || echo "main: plotting failed (see above)" >&2
fi
echo "main: results in $OUT_DIR/" >&2
exit $rc
