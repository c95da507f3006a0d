# shellcheck shell=bash
# Sourced by the scripts/device_*.sh (not run): the one way they build the tree on the GPU
# machine, and the helpers they share. Source it after `cd` to the source tree:
#
#   source scripts/device_lib.sh
#   device_build build-device convstudy convstudy_gpu_tests || exit 1
#
#   stamp MSG...        prints "[<seconds since the lib was sourced>s] MSG"
#   device_rev          the revision the build records in CSV rows (see below)
#   device_build DIR [TARGET...]
#                       configures the tree in the current directory into DIR (Ninja, Release,
#                       CMAKE_CUDA_ARCHITECTURES=90, ptxas -v) and builds TARGETs (default:
#                       all) with every core. Configure and build output go to $BUILD_LOG
#                       (default DIR/build.log): ptxas's per-kernel registers, spills and
#                       shared memory are in it. Prints the warnings and errors; on failure
#                       also the log's tail, and returns non-zero.
#
# CONVSTUDY_GIT_REV: the device tool copies the working tree without .git, so CMake cannot
# ask git for the revision and CSV rows would say "unknown". Pass it in the device command,
#   CONVSTUDY_GIT_REV=$(git describe --always --dirty) scripts/device_<topic>.sh
# (CMakeLists.txt reads it at configure time, which device_build runs every call). To build
# another checkout (an A/B's old revision, a git worktree) clear it for that build only:
#   (cd "$old" && CONVSTUDY_GIT_REV='' device_build build-ab)

#   device_build_test NAME
#                       the start the one-topic calls share: prints the card and revision,
#                       builds convstudy and the GPU tests into $B (ptxas log
#                       /tmp/build-NAME.log; prints the counts of kernels with spill stores
#                       and of ptxas's wgmma-serialisation warnings),
#                       runs every GPU test into $OUT/gpu_tests.log (device_log_head) and prints
#                       its summary; returns 2 when the build fails, sets status=1 when a test
#                       fails (the caller's $B, $OUT and status)
#   device_build_maybe_test NAME
#                       TESTS=1 (the caller's default): device_build_test NAME; else prints
#                       the card and revision and builds convstudy only (ptxas log
#                       /tmp/build-NAME.log); returns non-zero when the build fails
#   device_log_head FILE  a log's first line: revision and GPU (below)
#   device_out DEFAULT  sets OUT (when unset) to DEFAULT, makes it, and copies everything the
#                       script prints from then on to $OUT/log.txt

#   ab_unpack DIR       unpacks the binaries scripts/compare_pack.sh left in .ab/ (carried) into
#                       DIR/new and DIR/old, the libraries into DIR/lib (on LD_LIBRARY_PATH);
#                       returns 2 when an archive is missing or a binary lacks a library here

device_t0=${device_t0:-$(date +%s)}

ab_unpack() {
    local ab=${1:?ab_unpack: the directory}
    [[ -f .ab/new.tar.xz && -f .ab/old.tar.xz ]] ||
        { echo "ab_unpack: no .ab/{new,old}.tar.xz (scripts/compare_pack.sh, carry them)"; return 2; }
    rm -rf "$ab" && mkdir -p "$ab/new" "$ab/old" "$ab/lib"
    tar -xJf .ab/new.tar.xz -C "$ab/new" && tar -xJf .ab/old.tar.xz -C "$ab/old" || return 2
    if [[ -f .ab/lib.tar.xz ]]; then
        tar -xJf .ab/lib.tar.xz -C "$ab/lib" || return 2
    fi
    export LD_LIBRARY_PATH=$ab/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    cat "$ab/new/REV" "$ab/old/REV" 2>/dev/null | sed 's/^/revision: /'
    local b
    for b in "$ab/new/convstudy" "$ab/old/convstudy"; do
        if ldd "$b" | grep -q "not found"; then
            echo "ab_unpack: $b lacks libraries here:"
            ldd "$b" | grep "not found"
            return 2
        fi
    done
}

# device_log_head FILE: starts FILE with a line naming the revision and the GPU, and prints
# FILE (a log the device tool brings back says which tree and card made it):
#   cmd >>"$(device_log_head "$OUT/gpu_tests.log")" 2>&1
device_log_head() {
    echo "# git $(device_rev), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" >"$1"
    echo "$1"
}

device_out() {
    OUT=${OUT:-$1}
    mkdir -p "$OUT"
    exec > >(tee -a "$OUT/log.txt") 2>&1
}

stamp() { echo "[$(($(date +%s) - device_t0))s] $*"; }

device_rev() {
    if [[ -n ${CONVSTUDY_GIT_REV:-} ]]; then
        echo "$CONVSTUDY_GIT_REV"
    else
        git describe --always --dirty 2>/dev/null || echo unknown
    fi
}

device_build() {
    local dir=${1:?device_build: the build directory}
    shift
    local log=${BUILD_LOG:-$dir/build.log}
    local targets=()
    (($#)) && targets=(--target "$@")
    mkdir -p "$(dirname "$log")" "$dir"
    if [[ -z ${CONVSTUDY_GIT_REV:-} ]] && ! git rev-parse --git-dir >/dev/null 2>&1; then
        echo "device_build: no .git and no CONVSTUDY_GIT_REV: CSV rows will record revision 'unknown'"
    fi
    local rc=0
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DCMAKE_CUDA_FLAGS="-Xptxas=-v" >"$log" 2>&1 &&
        cmake --build "$dir" -j "$(nproc)" "${targets[@]}" >>"$log" 2>&1 || rc=$?
    grep -E "warning|error" "$log" | grep -v "ptxas info" | head -20
    if ((rc)); then
        echo "---- $log (tail) ----"
        tail -40 "$log"
        echo "device_build: $dir ${*:-all} FAILED (rc $rc)"
    fi
    return "$rc"
}

device_build_test() {
    stamp "device: $(nvidia-smi --query-gpu=name --format=csv,noheader), git $(device_rev)"
    BUILD_LOG=/tmp/build-$1.log device_build "$B" convstudy convstudy_gpu_tests || return 2
    grep -cE "spill stores [1-9]" "/tmp/build-$1.log" | sed 's/^/ptxas: kernels with spill stores: /'
    grep -c "C7520" "/tmp/build-$1.log" | sed 's/^/ptxas: wgmma serialisation warnings (C7520): /'
    stamp "GPU tests"
    # shellcheck disable=SC2034  # the caller's status
    CONVSTUDY_REQUIRE_GPU=1 timeout 200 "$B/tests/convstudy_gpu_tests" "${GPU_TESTS_FILTER:-[gpu]}" \
        >>"$(device_log_head "$OUT/gpu_tests.log")" 2>&1 ||
        status=1
    grep -E "test cases|FAILED" "$OUT/gpu_tests.log" | tail -8
}

device_build_maybe_test() {
    if [[ ${TESTS:-0} == 1 ]]; then
        device_build_test "$1"
    else
        stamp "device: $(nvidia-smi --query-gpu=name --format=csv,noheader), git $(device_rev)"
        BUILD_LOG=/tmp/build-$1.log device_build "$B" convstudy
    fi
}
