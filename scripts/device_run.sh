#!/usr/bin/env bash
# One call of the GPU machine (the `device` tool): build with every core, run the GPU
# tests, generate the golden files, run the sweeps, and leave logs and CSVs in $OUT.
#
#   scripts/device_run.sh                      # defaults below
#   STAGES="build tests golden sweep" SWEEPS="main:--variants all --memory pageable" \
#     scripts/device_run.sh
#
# Environment:
#   OUT       where results go (default out/device). At most 8 files come back from the
#             device tool (a 9th is dropped silently: it happened once), so this script
#             writes only log.txt (everything printed, sweeps' lines included),
#             build.log, gpu_tests.log, one <name>.csv per sweep and sanitizer.log:
#             keep SWEEPS to at most 3 entries
#   STAGES    any of: build tests golden sweep pytorch plots sanitize ncu (default: build
#             tests golden sweep); `pytorch` times PyTorch's cuDNN on the same layers
#             (scripts/pytorch_anchors.py -> pytorch.csv), the anchors' reference; `plots` draws every sweep CSV of this call with plots/plot.sh
#             and packs the figures and report.md into one file, figures.tgz
#   BUILD_TARGETS  build only these targets (e.g. "convstudy": a call without GPU tests
#             saves the test binaries' minute of build; default: everything)
#   BATCHES   golden batch sizes (default 1,32,128)
#   GOLDEN_LAYERS  golden files for these layers only (comma separated; default: all): a
#             reference sweep split over two calls by layers generates each call's share
#   SWEEPS    ';'-separated "name:seconds:convstudy sweep arguments" (default: every
#             variant, pageable, N=1,32,128 -> sweep.csv); a sweep past its seconds is
#             stopped, and its CSV keeps every (layer, N) finished by then
#   CONVSTUDY_GIT_REV the revision to record in CSV rows when the tree came without .git
#             (the device tool copies files, not the repository; scripts/device_lib.sh):
#             CONVSTUDY_GIT_REV=$(git describe --always --dirty) in the command
#   GPU_TEST_ARGS     Catch2 test specs: run only those GPU tests (default: all, via ctest)
#   SANITIZE_SECONDS  time limit of each compute-sanitizer job (default 300); the other
#             SANITIZE_* variables (TOOLS, TARGETS, VARIANTS, SPLIT, JOBS) pass through to
#             scripts/sanitize.sh, whose summary is sanitizer.log
#   NCU_ARGS  extra arguments for the ncu stage
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-out/device}
mkdir -p "$OUT"
STAGES=${STAGES:-"build tests golden sweep"}
BATCHES=${BATCHES:-1,32,128}
SWEEPS=${SWEEPS:-"sweep:1200:--variants all --memory pageable --batch 1,32,128"}
B=build-device
LOG="$OUT/log.txt"
exec > >(tee -a "$LOG") 2>&1
has() { [[ " $STAGES " == *" $1 "* ]]; }
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh

stamp "device: $(nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader)"
stamp "git: $(device_rev)"
status=0

if has build; then
    stamp "build"
    # shellcheck disable=SC2086
    if ! BUILD_LOG="$OUT/build.log" device_build $B ${BUILD_TARGETS:-}; then
        stamp "BUILD FAILED"
        exit 1
    fi
fi

if has tests; then
    stamp "GPU tests"
    # On the GPU machine a missing device is a failure, not a skip. GPU_TEST_ARGS (Catch2
    # test specs, e.g. "[layout],[anchors]") runs a part of the GPU tests instead of all.
    if [[ -n ${GPU_TEST_ARGS:-} ]]; then
        # shellcheck disable=SC2086
        CONVSTUDY_REQUIRE_GPU=1 timeout "${TEST_SECONDS:-600}" $B/tests/convstudy_gpu_tests $GPU_TEST_ARGS \
            >>"$(device_log_head "$OUT/gpu_tests.log")" 2>&1 || status=1
    else
        CONVSTUDY_REQUIRE_GPU=1 ctest --test-dir $B -L gpu -V --timeout "${TEST_SECONDS:-600}" \
            >>"$(device_log_head "$OUT/gpu_tests.log")" 2>&1 || status=1
    fi
    grep -E "test cases|assertions|tests passed|tests failed|FAILED|REQUIRE|CHECK\(" "$OUT/gpu_tests.log" | tail -25
fi

if has golden; then
    stamp "golden N=$BATCHES"
    $B/convstudy generate --batch "$BATCHES" ${GOLDEN_LAYERS:+--only "$GOLDEN_LAYERS"} --out golden || status=1
    stamp "golden done"
fi

if has sweep; then
    IFS=';' read -ra specs <<<"$SWEEPS"
    for spec in "${specs[@]}"; do
        name=${spec%%:*}
        rest=${spec#*:}
        secs=${rest%%:*}
        args=${rest#*:}
        stamp "sweep $name (${secs}s at most): $args"
        # shellcheck disable=SC2086
        timeout "$secs" $B/convstudy sweep $args --csv "$OUT/$name.csv" --quiet >"/tmp/$name.txt" 2>&1
        rc=$?
        ((rc == 124)) && echo "sweep $name: stopped at its time limit; the CSV holds the finished (layer, N) groups"
        ((rc)) && status=1
        sed "s/^/  [$name] /" "/tmp/$name.txt" >>"$LOG.sweeps"
        tail -2 "/tmp/$name.txt"
        grep -E " (FAIL|ERROR) " "/tmp/$name.txt" | head -20
    done
fi

if has pytorch; then
    stamp "PyTorch cuDNN anchors"
    PYTHONUNBUFFERED=1 timeout "${PYTORCH_SECONDS:-300}" python3 scripts/pytorch_anchors.py "$OUT/pytorch.csv" \
        >/tmp/pytorch.txt 2>&1 || status=1
    tail -30 /tmp/pytorch.txt
fi

if has plots; then
    stamp "plots"
    csvs=("$OUT"/*.csv)
    if [[ -e ${csvs[0]} ]]; then
        plots/plot.sh "${csvs[@]}" /tmp/figures >/tmp/plots.txt 2>&1 || status=1
        tail -3 /tmp/plots.txt
        tar czf "$OUT/figures.tgz" -C /tmp figures
    else
        echo "plots: no CSV in $OUT"
    fi
fi

if has sanitize; then
    stamp "compute-sanitizer"
    # shellcheck disable=SC2086
    SANITIZE_SECONDS=${SANITIZE_SECONDS:-300} scripts/sanitize.sh $B "$OUT/sanitizer.log" /tmp/sanitize-logs || status=1
    tail -15 "$OUT/sanitizer.log"
fi

if has ncu; then
    stamp "ncu"
    # shellcheck disable=SC2086
    ncu --clock-control none ${NCU_ARGS:-} >"$OUT/ncu.txt" 2>&1 || status=1
    tail -5 "$OUT/ncu.txt"
fi

if [[ -f "$LOG.sweeps" ]]; then
    echo "---- every sweep line ----" >>"$LOG"
    cat "$LOG.sweeps" >>"$LOG"
    rm -f "$LOG.sweeps"
fi
n=$(find "$OUT" -type f | wc -l)
((n > 8)) && echo "warning: $n files in $OUT: the device tool brings back only 8"
stamp "done, status $status"
exit $status
