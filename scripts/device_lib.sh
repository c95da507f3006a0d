# shellcheck shell=bash
# Sourced by scripts/device.sh (not run): the helpers of a GPU-machine job. Source it after
# `cd` to the source tree:
#
#   source scripts/device_lib.sh
#
#   stamp MSG...          prints "[<seconds since the lib was sourced>s] MSG"
#   device_rev            the revision the build records in CSV rows (below)
#   device_gpu            one line: the GPU's name, memory, driver and SM clocks (or "no GPU")
#   device_out DIR        makes DIR and copies everything the script prints from then on to
#                         DIR/log.txt
#   device_log_head FILE  appends a line naming the revision and the GPU to FILE, and prints
#                         FILE (a log says which tree and card made it):
#                           cmd >>"$(device_log_head "$OUT/gpu_tests.log")" 2>&1
#   tail_indented FILE [N]  the last N (default 3) lines of FILE, indented
#
# CONVSTUDY_GIT_REV: the device tool copies the working tree without .git, so CMake cannot
# ask git for the revision and CSV rows would say "unknown". Pass it in the device command,
#   CONVSTUDY_GIT_REV=$(git describe --always --dirty) scripts/device.sh plans/NAME.json
# (CMakeLists.txt reads it at configure time; scripts/pytorch_anchors.py writes it in its rows).

device_t0=${device_t0:-$(date +%s)}

stamp() { echo "[$(($(date +%s) - device_t0))s] $*"; }

device_rev() {
    if [[ -n ${CONVSTUDY_GIT_REV:-} ]]; then
        echo "$CONVSTUDY_GIT_REV"
    else
        git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown
    fi
}

device_gpu() {
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null |
        head -1 | grep . || echo "no GPU (nvidia-smi found none)"
}

device_out() {
    mkdir -p "$1" || return 1
    exec > >(tee -a "$1/log.txt") 2>&1
}

device_log_head() {
    echo "# git $(device_rev), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" >>"$1"
    echo "$1"
}

tail_indented() {
    [[ -f $1 ]] && tail -n "${2:-3}" "$1" | sed 's/^/    /'
}
