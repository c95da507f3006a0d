#!/usr/bin/env bash
# A/B on the GPU machine: build the tree as it is and revision REV (a git worktree under
# /tmp), then run the same sweep with both binaries in one process order (A, B, A, B) so that
# clocks and the machine are shared. Usage: OUT=... scripts/device_ab.sh REV "SWEEP ARGS"
# (the sweep args without --csv; golden files for the batches under golden/, made first for
# GOLDEN_BATCHES when set).
set -uo pipefail
cd "$(dirname "$0")/.."
REV=$1
ARGS=$2
OUT=${OUT:-out/device}
mkdir -p "$OUT"
old=/tmp/ab_old
rm -rf "$old"
git worktree add -f "$old" "$REV" >/dev/null 2>&1 || { echo "device_ab: no revision $REV here"; exit 2; }
for d in . "$old"; do
    (cd "$d" && cmake -S . -B build-ab -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null &&
        cmake --build build-ab -j "$(nproc)" >/tmp/ab_build.log 2>&1) || { tail -20 /tmp/ab_build.log; exit 1; }
done
[[ -n ${GOLDEN_BATCHES:-} ]] && build-ab/convstudy generate --batch "$GOLDEN_BATCHES" --out golden >/dev/null
for round in 1 2; do
    # shellcheck disable=SC2086
    build-ab/convstudy sweep $ARGS --csv "$OUT/ab_new_$round.csv" --quiet > /tmp/ab_new.txt 2>&1
    # shellcheck disable=SC2086
    "$old/build-ab/convstudy" sweep $ARGS --golden golden --csv "$OUT/ab_old_$round.csv" --quiet > /tmp/ab_old.txt 2>&1
done
echo "device_ab: done (new = this tree, old = $REV)"
