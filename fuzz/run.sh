#!/usr/bin/env bash
# Builds the three libFuzzer targets with clang (AddressSanitizer + UndefinedBehaviorSanitizer,
# every UB report fatal) and runs each for SECONDS (default 60) on its seed corpus.
#
#   fuzz/run.sh [SECONDS]       build into $FUZZ_BUILD (default build-fuzz) and run
#   fuzz/run.sh --build-only
#
# Targets: fuzz_npy (.npy reader), fuzz_manifest (golden manifest: load_golden,
# golden_batches, generate_golden's merge), fuzz_layers (layer-table loader). The committed
# seeds in fuzz/corpus/<target>/ are read, never written: new inputs libFuzzer finds go to
# $FUZZ_BUILD/corpus/<target>/, crashes to $FUZZ_BUILD/crashes/<target>/. Exit status 0 when
# every target ran its time without a finding, 1 otherwise (the finding's log is printed).
# Needs clang, libFuzzer (libclang-rt-dev), libomp-dev, libssl-dev, nlohmann-json3-dev;
# installs the missing ones with apt-get when it can.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
B=${FUZZ_BUILD:-build-fuzz}
SECONDS_EACH=${1:-60}
BUILD_ONLY=0
[[ $SECONDS_EACH == --build-only ]] && BUILD_ONLY=1
TARGETS=(fuzz_npy fuzz_manifest fuzz_layers)

# ---- tools -------------------------------------------------------------------------------
CXX=${FUZZ_CXX:-}
if [[ -z $CXX ]]; then
    for c in clang++ clang++-19 clang++-18 clang++-17 clang++-16 clang++-15 clang++-14; do
        command -v "$c" >/dev/null && { CXX=$c; break; }
    done
fi
need=()
[[ -z $CXX ]] && need+=(clang)
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in libclang-rt-dev libomp-dev libssl-dev nlohmann-json3-dev; do
    have_pkg "$p" || need+=("$p")
done
if ((${#need[@]})); then
    SUDO=""
    [[ $(id -u) -ne 0 ]] && SUDO=sudo
    echo "fuzz: installing ${need[*]}" >&2
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null 2>&1 ||
        { $SUDO apt-get update -qq >/dev/null 2>&1 || true
          $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; }
    [[ -z $CXX ]] && CXX=clang++
fi

# ---- build -------------------------------------------------------------------------------
mkdir -p "$B/generated" "$B/obj"
cmake -DSRC="$SRC" -DOUT="$SRC/$B/generated" -P fuzz/configure.cmake
SAN=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
FLAGS=(-std=c++20 -g -O1 -Wall -Wextra -Wpedantic -Wshadow -Wno-unknown-pragmas -Wno-pass-failed -fopenmp
       -I"$SRC/io" -I"$SRC/goldenio" -I"$SRC/core" -I"$SRC/reference" -I"$SRC/$B/generated" -I"$SRC/fuzz")
LIB_SOURCES=(core/layer.cpp "$B/generated/builtin_table.cpp" io/npy.cpp goldenio/golden.cpp goldenio/golden_manifest.cpp
             goldenio/golden_load.cpp goldenio/golden_generate.cpp io/checksum.cpp
             io/atomic_file.cpp io/progress.cpp io/shell_quote.cpp reference/conv_ref.cpp reference/cpu_anchor.cpp
             reference/datagen.cpp)
objs=()
for s in "${LIB_SOURCES[@]}"; do
    o="$B/obj/$(basename "${s%.cpp}").o"
    objs+=("$o")
    # Rebuild when the source or any header in the repository is newer.
    if [[ ! -f $o || $s -nt $o || -n $(find core io goldenio reference fuzz -name '*.hpp' -newer "$o" | head -1) ]]; then
        echo "fuzz: compiling $s" >&2
        "$CXX" "${FLAGS[@]}" "${SAN[@]}" -fsanitize=fuzzer-no-link -c "$s" -o "$o"
    fi
done
rm -f "$B/libcs_fuzz.a"
ar rcs "$B/libcs_fuzz.a" "${objs[@]}"
for t in "${TARGETS[@]}"; do
    echo "fuzz: building $t" >&2
    "$CXX" "${FLAGS[@]}" "${SAN[@]}" -fsanitize=fuzzer "fuzz/$t.cpp" "$B/libcs_fuzz.a" -lcrypto -o "$B/$t"
done
((BUILD_ONLY)) && exit 0

# ---- run ---------------------------------------------------------------------------------
export OMP_NUM_THREADS=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
declare -A max_len=([fuzz_npy]=4096 [fuzz_manifest]=16384 [fuzz_layers]=4096)
status=0
summary=()
for t in "${TARGETS[@]}"; do
    mkdir -p "$B/corpus/$t" "$B/crashes/$t"
    log="$B/$t.log"
    dict=()
    [[ -f fuzz/$t.dict ]] && dict=(-dict="fuzz/$t.dict")
    echo "fuzz: $t for ${SECONDS_EACH}s" >&2
    set +e
    "$B/$t" "$B/corpus/$t" "fuzz/corpus/$t" "${dict[@]}" -max_total_time="$SECONDS_EACH" -timeout=10 \
        -max_len="${max_len[$t]}" -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$B/crashes/$t/" >"$log" 2>&1
    rc=$?
    set -e
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
    if ((rc != 0)); then
        status=1
        summary+=("$t: FAILED (exit $rc) after ${runs:-?} executions; log $log")
        tail -60 "$log" >&2
    else
        summary+=("$t: ${SECONDS_EACH}s, ${runs:-?} executions, ${cov:-?} coverage edges, corpus $(ls "$B/corpus/$t" | wc -l) new + $(ls "fuzz/corpus/$t" | wc -l) seeds")
    fi
done
printf 'fuzz: %s\n' "${summary[@]}"
exit $status
