#!/usr/bin/env bash
# One call of the GPU machine (the `device` tool): build with every core, run the GPU
# tests, generate the golden files, run the sweeps, and leave logs and CSVs in $OUT.
#
#   scripts/device_run.sh                      # defaults below
#   STAGES="build tests golden sweep" SWEEPS="main:--variants all --memory pageable" \
#     scripts/device_run.sh
#
# Environment:
#   OUT       where results go (default out/device); at most 8 files come back from the
#             device tool, so this script writes: log.txt, build.log, gpu_tests.log,
#             one <name>.csv per sweep, and whatever an extra stage adds
#   STAGES    any of: build tests golden sweep sanitize ncu (default: build tests golden sweep)
#   BATCHES   golden batch sizes (default 1,32,128)
#   SWEEPS    ';'-separated "name:convstudy sweep arguments" (default: every variant,
#             pageable, N=1,32,128 -> sweep.csv)
#   SANITIZE_ARGS, NCU_ARGS   extra arguments for those stages
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out/device}
mkdir -p "$OUT"
STAGES=${STAGES:-"build tests golden sweep"}
BATCHES=${BATCHES:-1,32,128}
SWEEPS=${SWEEPS:-"sweep:--variants all --memory pageable --batch 1,32,128"}
B=build-device
LOG="$OUT/log.txt"
exec > >(tee -a "$LOG") 2>&1
has() { [[ " $STAGES " == *" $1 "* ]]; }
t0=$(date +%s)
stamp() { echo "[$(($(date +%s) - t0))s] $*"; }

stamp "device: $(nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader)"
stamp "git: $(git describe --always --dirty 2>/dev/null || echo unknown)"
status=0

if has build; then
    stamp "build"
    cmake -S . -B $B -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_FLAGS="-Xptxas=-v" >"$OUT/build.log" 2>&1 &&
        cmake --build $B -j "$(nproc)" >>"$OUT/build.log" 2>&1
    rc=$?
    grep -E "warning|error" "$OUT/build.log" | grep -v "ptxas info" | head -20
    if ((rc)); then
        tail -40 "$OUT/build.log"
        stamp "BUILD FAILED"
        exit 1
    fi
fi

if has tests; then
    stamp "GPU tests"
    ctest --test-dir $B -L gpu -V --timeout 900 >"$OUT/gpu_tests.log" 2>&1 || status=1
    grep -E "test cases|assertions|tests passed|tests failed|FAILED|REQUIRE|CHECK\(" "$OUT/gpu_tests.log" | tail -25
fi

if has golden; then
    stamp "golden N=$BATCHES"
    $B/convstudy generate --batch "$BATCHES" --out golden || status=1
    stamp "golden done"
fi

if has sweep; then
    IFS=';' read -ra specs <<<"$SWEEPS"
    for spec in "${specs[@]}"; do
        name=${spec%%:*}
        args=${spec#*:}
        stamp "sweep $name: $args"
        # shellcheck disable=SC2086
        $B/convstudy sweep $args --csv "$OUT/$name.csv" --quiet >"$OUT/$name.txt" 2>&1 || status=1
        tail -2 "$OUT/$name.txt"
        grep -E " (FAIL|ERROR) " "$OUT/$name.txt" | head -20
    done
fi

if has sanitize; then
    stamp "compute-sanitizer"
    scripts/sanitize.sh $B "$OUT/sanitizer.log" ${SANITIZE_ARGS:-} || status=1
    tail -15 "$OUT/sanitizer.log"
fi

if has ncu; then
    stamp "ncu"
    # shellcheck disable=SC2086
    ncu --clock-control none ${NCU_ARGS:-} >"$OUT/ncu.txt" 2>&1 || status=1
    tail -5 "$OUT/ncu.txt"
fi

stamp "done, status $status"
exit $status
