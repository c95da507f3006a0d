#!/usr/bin/env bash
# The test command (README.md): installs missing Debian packages, configures and builds,
# runs every test. Extra arguments go to ctest, e.g. `-L gpu`.
#
# Kernels: on a machine where nvidia-smi sees a GPU, everything is built, the GPU tests
# included (ctest label `gpu`). Without one, the build is host-only (CMake option
# CONVSTUDY_KERNELS=OFF): the CPU tests, a convstudy that lists every variant and answers
# supports(), and no variant .cu file compiled (CI compiles them in a step of its own,
# .ci/run). CONVSTUDY_KERNELS=ON or OFF in the environment decides instead.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
BUILD_DIR=${BUILD_DIR:-build}
kernels=${CONVSTUDY_KERNELS:-}
if [[ -z $kernels ]]; then
    if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
        kernels=ON
    else
        kernels=OFF
    fi
fi
case $kernels in
ON | OFF) ;;
*) echo "test.sh: CONVSTUDY_KERNELS must be ON or OFF, not '$kernels'" >&2; exit 2 ;;
esac
echo "test.sh: CONVSTUDY_KERNELS=$kernels" >&2
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
# shellcheck disable=SC2086  # CMAKE_ARGS: several cmake arguments, split on spaces
cmake -S . -B "$BUILD_DIR" "${gen[@]}" "-DCONVSTUDY_KERNELS=$kernels" ${CMAKE_ARGS:-}
cmake --build "$BUILD_DIR" -j "$(nproc)"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" "$@"
