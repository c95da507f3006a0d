#!/usr/bin/env bash
# The test command (README.md): installs missing Debian packages, configures and builds
# everything, runs every test. GPU tests (ctest label `gpu`) are counted as skipped on a
# machine without a CUDA device. Extra arguments go to ctest, e.g. `-L gpu`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
BUILD_DIR=${BUILD_DIR:-build}
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
# shellcheck disable=SC2086  # CMAKE_ARGS: several cmake arguments, split on spaces
cmake -S . -B "$BUILD_DIR" "${gen[@]}" ${CMAKE_ARGS:-}
cmake --build "$BUILD_DIR" -j "$(nproc)"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" "$@"
