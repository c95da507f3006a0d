#!/usr/bin/env bash
# Before/after on one GPU machine, without a build there: this tree's `convstudy` (and its GPU
# tests) and an older revision's `convstudy`, both built on the CPU machine by
# scripts/compare_pack.sh into .ab/ (git-ignored; name it in the device call's `carry`), run
# the same reference sweep (every variant, N=1/32/128, both layouts, pageable, 20 repeats)
# layer by layer, new then old on each layer, so that both see the same card, clocks and
# machine. `convstudy compare old.csv new.csv` then judges every row against its own spread.
# The new binary's rows are also a reference sweep of this tree (full golden check).
#
#   OUT=/tmp/out LAYERS=conv1,conv2 TESTS=1 scripts/device_compare.sh
#
#   LAYERS  the layers of this call (default all five; a call of at most 10 minutes takes
#           about half: conv1,conv2 then conv3,conv4,conv5 on an H200)
#   TESTS   1: run the new tree's GPU tests first (gpu_tests.log; carry .ab/tests.tar.xz)
#   SWEEP_ARGS  the sweep (default: the reference sweep's arguments)
#   DEADLINE    seconds from the start after which no sweep runs on (default 560): a sweep
#               stopped there keeps the (layer, N) sets it finished
# Files under $OUT: log.txt, new.csv, old.csv, gpu_tests.log, compare.txt.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh
device_out out/compare
LAYERS=${LAYERS:-conv1,conv2,conv3,conv4,conv5}
SWEEP_ARGS=${SWEEP_ARGS:-"--variants all --memory pageable --batch 1,32,128 --warmup 3 --repeats 20"}
AB=/tmp/ab
DEADLINE=${DEADLINE:-560}
status=0
stamp "device: $(nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader)"
# AB_BUILT=1: the binaries are in $AB/{new,old} already (scripts/device_ab_build.sh built them
# here), the GPU tests beside the new one
if [[ ${AB_BUILT:-0} == 1 ]]; then
    [[ -x $AB/new/convstudy && -x $AB/old/convstudy ]] || { echo "AB_BUILT=1: no $AB/{new,old}/convstudy"; exit 2; }
else
    ab_unpack "$AB" || exit 2
fi
NEW=$AB/new/convstudy
OLD=$AB/old/convstudy

if [[ ${TESTS:-0} == 1 ]]; then
    [[ ${AB_BUILT:-0} == 1 ]] || tar -xJf .ab/tests.tar.xz -C "$AB/new" ||
        { echo "TESTS=1: carry .ab/tests.tar.xz too"; exit 2; }
    stamp "GPU tests (new)"
    CONVSTUDY_REQUIRE_GPU=1 timeout 300 "$AB/new/convstudy_gpu_tests" "[gpu]" \
        >>"$(device_log_head "$OUT/gpu_tests.log")" 2>&1 || status=1
    sed -i "1s/^# git [^,]*/# git $(cat "$AB/new/REV")/" "$OUT/gpu_tests.log"
    grep -E "test cases|FAILED" "$OUT/gpu_tests.log" | tail -8
fi

stamp "golden N=1,32,128 for $LAYERS (new generator)"
# --no-onednn: as the device's own builds (without oneDNN) generate, so the CSVs match theirs
"$NEW" generate --batch 1,32,128 --only "$LAYERS" --out golden --no-onednn --quiet || { echo "generate failed"; exit 1; }
stamp "golden done"
# The old revision reads the same golden files when its loader accepts them; else its own.
OLDG=golden
if ! "$OLD" run --variant baseline --layer "${LAYERS%%,*}" --batch 1 --golden golden --repeats 1 >/tmp/oldprobe.txt 2>&1; then
    tail -3 /tmp/oldprobe.txt
    stamp "the old binary does not read these golden files: its own"
    OLDG=golden_old
    "$OLD" generate --batch 1,32,128 --only "$LAYERS" --out golden_old --no-onednn --quiet 2>&1 | tail -3
fi

IFS=',' read -ra layers <<<"$LAYERS"
for L in "${layers[@]}"; do
    for side in new old; do
        bin=$NEW g=golden
        [[ $side == old ]] && bin=$OLD g=$OLDG
        left=$((DEADLINE - ($(date +%s) - device_t0)))
        if ((left < 20)); then
            stamp "sweep $side $L: not run, DEADLINE=$DEADLINE s reached"
            status=1
            continue
        fi
        stamp "sweep $side $L (${left}s at most)"
        # shellcheck disable=SC2086
        timeout "$left" "$bin" sweep $SWEEP_ARGS --layers "$L" --golden "$g" --csv "/tmp/${side}_$L.csv" --quiet \
            >"/tmp/${side}_$L.txt" 2>&1 || { echo "sweep $side $L: rc $? (124: stopped at the deadline)"; tail -5 "/tmp/${side}_$L.txt"; status=1; }
        tail -1 "/tmp/${side}_$L.txt"
    done
done
# one CSV per side: the header once, the layers' rows in order
for side in new old; do
    first=1
    for L in "${layers[@]}"; do
        f=/tmp/${side}_$L.csv
        [[ -f $f ]] || continue
        if ((first)); then cat "$f"; first=0; else tail -n +2 "$f"; fi
    done >"$OUT/$side.csv"
done
stamp "compare old -> new"
"$NEW" compare "$OUT/old.csv" "$OUT/new.csv" >"$OUT/compare.txt" 2>&1
echo "compare: rc $?"
head -40 "$OUT/compare.txt"
stamp "done, status $status"
exit $status
