#!/usr/bin/env bash
# Builds both sides of a before/after on the GPU machine, for a call whose working tree and two
# carried binaries would pass the device tool's 64 MiB: this tree's convstudy and GPU tests into
# /tmp/ab/new, then OLD_REV's convstudy into /tmp/ab/old from this tree with OLD_REV's side of
# the differing files (.ab/old_src.tar and .ab/old_src.del, packed here by
# `scripts/compare_pack.sh --src OLD_REV`; carry .ab): the same build directory, so only what
# those files touch compiles again. The tree's files are put back afterwards.
#
#   source scripts/device_lib.sh; scripts/device_ab_build.sh && AB_BUILT=1 scripts/device_compare.sh
#
# CONVSTUDY_GIT_REV: this tree's revision (the new rows); the old build records .ab/old_src.rev.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh
B=${B:-build-device}
AB=/tmp/ab
[[ -f .ab/old_src.tar && -f .ab/old_src.del && -f .ab/old_src.rev ]] ||
    { echo "device_ab_build: no .ab/old_src.* (scripts/compare_pack.sh --src OLD_REV, carry .ab)"; exit 2; }
rm -rf "$AB" && mkdir -p "$AB/new" "$AB/old"
stamp "build new ($(device_rev))"
# the GPU tests only for a call that runs them (TESTS=1)
targets=(convstudy) && [[ ${TESTS:-1} == 1 ]] && targets+=(convstudy_gpu_tests)
BUILD_LOG=/tmp/build-ab-new.log device_build "$B" "${targets[@]}" || exit 2
cp "$B/convstudy" "$AB/new/" && device_rev >"$AB/new/REV"
[[ ${TESTS:-1} == 1 ]] && cp "$B/tests/convstudy_gpu_tests" "$AB/new/"
# the old side: OLD_REV's files over the tree's (kept in a backup), HEAD's additions removed;
# extracted with mtimes of now (-m): an archive's older mtime would not make ninja compile again
backup=/tmp/ab_backup.tar
mapfile -t old_files < <(tar -tf .ab/old_src.tar | grep -v '/$')
mapfile -t added < .ab/old_src.del
tar -cf "$backup" "${old_files[@]}" "${added[@]}" 2>/dev/null
tar -xmf .ab/old_src.tar && ((${#added[@]} == 0)) || rm -f "${added[@]}"
stamp "build old ($(cat .ab/old_src.rev): ${#old_files[@]} files swapped, ${#added[@]} removed)"
rc=0
CONVSTUDY_GIT_REV=$(cat .ab/old_src.rev) BUILD_LOG=/tmp/build-ab-old.log device_build "$B" convstudy || rc=2
grep -c "Building CUDA" /tmp/build-ab-old.log | sed "s/^/old build: CUDA objects compiled again: /"
cp "$B/convstudy" "$AB/old/" && cat .ab/old_src.rev >"$AB/old/REV"
tar -xmf "$backup"  # -m: mtimes now, so that a later build compiles them again
stamp "built: $(cat "$AB/new/REV") and $(cat "$AB/old/REV")"
exit $rc
