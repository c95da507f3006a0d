#!/usr/bin/env bash
# A/B on the GPU machine: build the tree as it is and revision REV (a git worktree under
# /tmp), then run the same sweep with both binaries in one process order (A, B, A, B) so that
# clocks and the machine are shared. Usage: OUT=... scripts/device_ab.sh REV "SWEEP ARGS"
# (the sweep args without --csv; golden files for the batches under golden/, made first for
# GOLDEN_BATCHES when set).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh
REV=${1:?usage: OUT=... scripts/device_ab.sh REV "SWEEP ARGS"}
ARGS=${2:?usage: OUT=... scripts/device_ab.sh REV "SWEEP ARGS"}
OUT=${OUT:-out/device}
mkdir -p "$OUT"
old=/tmp/ab_old
rm -rf "$old"
git worktree add -f "$old" "$REV" >/dev/null 2>&1 || { echo "device_ab: no revision $REV here"; exit 2; }
BUILD_LOG=/tmp/ab_build_new.log device_build build-ab || exit 1
(cd "$old" && CONVSTUDY_GIT_REV='' BUILD_LOG=/tmp/ab_build_old.log device_build build-ab) || exit 1
[[ -n ${GOLDEN_BATCHES:-} ]] && build-ab/convstudy generate --batch "$GOLDEN_BATCHES" --out golden >/dev/null
for round in 1 2; do
    # shellcheck disable=SC2086
    build-ab/convstudy sweep $ARGS --csv "$OUT/ab_new_$round.csv" --quiet > /tmp/ab_new.txt 2>&1
    # shellcheck disable=SC2086
    "$old/build-ab/convstudy" sweep $ARGS --golden golden --csv "$OUT/ab_old_$round.csv" --quiet > /tmp/ab_old.txt 2>&1
done
echo "device_ab: done (new = this tree, old = $REV)"
