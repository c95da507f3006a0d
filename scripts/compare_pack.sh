#!/usr/bin/env bash
# Packs the binaries scripts/device_compare.sh runs into .ab/ (git-ignored), built here on the
# CPU machine (nvcc without a GPU; the device only runs them):
#   .ab/new.tar.xz  this tree's build: convstudy, REV
#   .ab/tests.tar.xz  its convstudy_gpu_tests (carry it only when TESTS=1: the working tree and
#                   what the call carries must stay under 64 MiB together)
#   .ab/old.tar.xz  an older revision's convstudy, built in a git worktree (OLD_DIR), REV
#   .ab/lib.tar.xz  the shared libraries they link that the GPU machine lacks (oneDNN)
#
#   scripts/compare_pack.sh OLD_REV [NEW_BUILD_DIR]
#
# The old revision builds in $OLD_DIR (default /tmp/ab_old, a worktree of OLD_REV) with the
# same configuration as the device's (Release, sm_90a via CMAKE_CUDA_ARCHITECTURES=90); its
# build takes long on two cores, so it is reused when already there. The new build must be of
# the committed tree (its REV is `git describe --dirty`; a dirty tree is refused).
#
#   scripts/compare_pack.sh --src OLD_REV
#
# packs instead only OLD_REV's side of the files that differ from HEAD (.ab/old_src.tar, and
# .ab/old_src.del: the files HEAD added), a few kilobytes, for a call whose working tree and
# binaries would pass the device tool's 64 MiB: scripts/device_ab_build.sh builds both sides
# on the GPU machine from this tree and those files.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == --src ]]; then
    OLD_REV=${2:?usage: scripts/compare_pack.sh --src OLD_REV}
    [[ $(git status --porcelain --untracked-files=no) ]] && { echo "compare_pack: commit first"; exit 2; }
    mkdir -p .ab
    # what the build reads: not the data, scripts or prose
    mapfile -t changed < <(git diff --name-only "$OLD_REV" HEAD -- . ":!plots" ":!scripts" ":!*.md")
    keep=() del=()
    for f in "${changed[@]}"; do
        if git cat-file -e "$OLD_REV:$f" 2>/dev/null; then keep+=("$f"); else del+=("$f"); fi
    done
    rm -f .ab/old_src.tar
    ((${#keep[@]})) && git archive -o .ab/old_src.tar "$OLD_REV" -- "${keep[@]}"
    [[ -f .ab/old_src.tar ]] || tar -cf .ab/old_src.tar -T /dev/null
    printf '%s\n' "${del[@]}" | sed '/^$/d' >.ab/old_src.del
    git rev-parse --short=7 "$OLD_REV" >.ab/old_src.rev
    echo "compare_pack: ${#keep[@]} files of $OLD_REV in .ab/old_src.tar, ${#del[@]} to delete (.ab/old_src.del)"
    exit 0
fi
OLD_REV=${1:?usage: scripts/compare_pack.sh OLD_REV [NEW_BUILD_DIR]}
NEW_BUILD=${2:-build}
OLD_DIR=${OLD_DIR:-/tmp/ab_old}
rev=$(git describe --always --dirty --abbrev=7)
[[ $rev == *-dirty ]] && { echo "compare_pack: the tree has uncommitted changes; commit first"; exit 2; }
# configure again: the revision the CSV rows record is read at configure time
CONVSTUDY_GIT_REV=$rev cmake -S . -B "$NEW_BUILD" >/dev/null
ninja -C "$NEW_BUILD" convstudy convstudy_gpu_tests >/dev/null
if [[ ! -d $OLD_DIR ]]; then
    git worktree add -f "$OLD_DIR" "$OLD_REV" >/dev/null
fi
[[ $(git -C "$OLD_DIR" rev-parse HEAD) == $(git rev-parse "$OLD_REV^{commit}") ]] ||
    { echo "compare_pack: $OLD_DIR is not at $OLD_REV"; exit 2; }
if [[ ! -f $OLD_DIR/build-ab/build.ninja ]]; then
    # shellcheck disable=SC2086  # CCACHE_ARGS: several arguments
    cmake -S "$OLD_DIR" -B "$OLD_DIR/build-ab" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
        ${CCACHE_ARGS:-} >/dev/null
fi
ninja -C "$OLD_DIR/build-ab" convstudy >/dev/null
mkdir -p .ab
tmp=$(mktemp -d)
mkdir -p "$tmp/new" "$tmp/old"
mkdir -p "$tmp/tests"
cp "$NEW_BUILD/convstudy" "$tmp/new/"
cp "$NEW_BUILD/tests/convstudy_gpu_tests" "$tmp/tests/"
echo "$rev" >"$tmp/new/REV"
cp "$OLD_DIR/build-ab/convstudy" "$tmp/old/"
git rev-parse --short=7 "$OLD_REV" >"$tmp/old/REV"
strip "$tmp/new/convstudy" "$tmp/tests/convstudy_gpu_tests" "$tmp/old/convstudy"
tar -cJf .ab/new.tar.xz -C "$tmp/new" . && tar -cJf .ab/old.tar.xz -C "$tmp/old" .
tar -cJf .ab/tests.tar.xz -C "$tmp/tests" .
# Libraries the binaries link here that the GPU machine lacks (oneDNN: the device's own
# builds go without it); device_compare.sh puts them on LD_LIBRARY_PATH
libs=()
for b in "$NEW_BUILD/convstudy" "$OLD_DIR/build-ab/convstudy"; do
    for l in libdnnl.so.2 libOpenCL.so.1; do
        p=$(ldd "$b" | awk -v l="$l" '$1 == l {print $3}')
        [[ -n $p ]] && libs+=("$p")
    done
done
if ((${#libs[@]})); then
    mkdir -p "$tmp/lib"
    cp -L "${libs[@]}" "$tmp/lib/"
    tar -cJf .ab/lib.tar.xz -C "$tmp/lib" .
fi
rm -rf "$tmp"
ls -l .ab/
