#!/usr/bin/env bash
# The main job (README.md): installs missing Debian packages, builds, and runs the reference
# plan's golden and sweep steps (plans/reference.json: the plan whose CSV is committed under
# results/, so `convstudy compare` can hold this run against it): the golden files for N = 1,
# 32, 128 and, where a CUDA device is present, every variant over the five layers in both
# layouts, into OUT_DIR/reference.csv (default out/), then the figures and report when plots/
# can run. Without a GPU it stops after the golden files and says so. The plan's other steps
# (its build, the PyTorch anchors) are the GPU runner's: scripts/device.sh plans/reference.json.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
BUILD_DIR=${BUILD_DIR:-build}
OUT_DIR=${OUT_DIR:-out}
PLAN=plans/reference.json
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
# shellcheck disable=SC2086  # CMAKE_ARGS: several cmake arguments, split on spaces
cmake -S . -B "$BUILD_DIR" "${gen[@]}" ${CMAKE_ARGS:-}
cmake --build "$BUILD_DIR" -j "$(nproc)" --target convstudy
mkdir -p "$OUT_DIR"

gpu=1
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then gpu=0; fi
# Each line of `plan steps`: index, kind, log, time limit, then the command, shell-quoted.
mapfile -t lines < <("$BUILD_DIR/convstudy" plan steps "$PLAN" --out "$OUT_DIR" --build-dir "$BUILD_DIR")
((${#lines[@]})) || { echo "main: convstudy plan steps $PLAN printed nothing" >&2; exit 2; }
rc=0 csv=""
words=()
for line in "${lines[@]}"; do
    eval "words=($line)"
    kind=${words[1]}
    cmd=("${words[@]:4}")
    if [[ ${cmd[0]} == "&" || ${cmd[0]} == wait ]]; then
        echo "main: $PLAN deals a step over several GPUs (gpus), which scripts/device.sh runs; here one process" >&2
        exit 2
    fi
    case $kind in
    golden) "${cmd[@]}" ;;
    sweep)
        if ((gpu)); then
            set +e
            "${cmd[@]}"
            rc=$?
            set -e
            for ((i = 0; i + 1 < ${#cmd[@]}; ++i)); do [[ ${cmd[i]} == --csv ]] && csv=${cmd[i + 1]}; done
        fi
        ;;
    esac
done
if ((!gpu)); then
    echo "main: no CUDA device here: the GPU sweep was skipped. Golden files are under golden/;" \
         "run this script on a machine with an NVIDIA GPU for the sweep, CSV and plots." >&2
    exit 0
fi
if [[ -n $csv && -x plots/plot.sh ]]; then
    plots/plot.sh "$csv" "$OUT_DIR" || echo "main: plotting failed (see above)" >&2
fi
echo "main: results in $OUT_DIR/ (compare with: $BUILD_DIR/convstudy compare results/h200/sweep_all_variants.csv.gz $csv)" >&2
exit $rc
