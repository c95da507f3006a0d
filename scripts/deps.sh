#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages convstudy needs when they are missing (apt-get, as
# root or through sudo). A CUDA toolkit (nvcc, cudart, cuBLAS, CUPTI; cuDNN optional) is a
# prerequisite this script does not install. On a machine with no package registry
# (the GPU machine) missing optional packages are reported and the build goes on.
set -uo pipefail

required=(cmake g++ catch2 libcli11-dev nlohmann-json3-dev libssl-dev zlib1g-dev)
optional=(ninja-build libdnnl-dev python3-numpy python3-matplotlib shellcheck)

missing_req=()
missing_opt=()
# A package counts as there when dpkg has it, or, for a tool, when its command is on PATH
# (cmake from pip or a tarball, ninja, shellcheck).
have() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed" && return 0
    case $1 in
    cmake) command -v cmake >/dev/null ;;
    ninja-build) command -v ninja >/dev/null ;;
    shellcheck) command -v shellcheck >/dev/null ;;
    *) return 1 ;;
    esac
}
for p in "${required[@]}"; do have "$p" || missing_req+=("$p"); done
for p in "${optional[@]}"; do have "$p" || missing_opt+=("$p"); done

if ((${#missing_req[@]} + ${#missing_opt[@]} == 0)); then
    exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null; then SUDO="sudo"; else SUDO="none"; fi
fi

updated=0 reachable=1
install() {
    [[ "$SUDO" == none ]] && return 1
    command -v apt-get >/dev/null || return 1
    ((reachable)) || return 1
    echo "deps: installing $*" >&2
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1 && return 0
    # The package lists may be stale or absent: update once and try again. When the registry
    # cannot be reached (the GPU machine), no later package is tried: each try would wait again.
    if ((!updated)); then
        updated=1
        if ! $SUDO apt-get update -qq >/dev/null 2>&1; then
            reachable=0
            echo "deps: the package registry cannot be reached: nothing is installed" >&2
            return 1
        fi
    fi
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1
}

# Everything missing in one go; where that fails, one package at a time, so that one package that
# cannot be had does not stop the others.
if ! install "${missing_req[@]}" "${missing_opt[@]}"; then
    for p in "${missing_req[@]}" "${missing_opt[@]}"; do
        have "$p" || install "$p" || true
    done
fi
for p in "${missing_opt[@]}"; do
    have "$p" || echo "deps: optional package $p is not installed (and could not be)" >&2
done

still=()
for p in "${required[@]}"; do have "$p" || still+=("$p"); done
if ((${#still[@]})); then
    # Some systems provide these outside dpkg; CMake has the last word.
    echo "deps: warning: packages not installed: ${still[*]} (CMake will say whether it finds them)" >&2
fi
exit 0
