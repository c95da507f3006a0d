#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages convstudy needs when they are missing (apt-get, as
# root or through sudo). A CUDA toolkit (nvcc, cudart, cuBLAS; cuDNN optional) is a
# prerequisite this script does not install. On a machine with no package registry
# (the GPU machine) missing optional packages are reported and the build goes on.
set -uo pipefail

required=(cmake g++ catch2 libcli11-dev nlohmann-json3-dev libssl-dev zlib1g-dev)
optional=(ninja-build libdnnl-dev python3-numpy python3-matplotlib shellcheck)

missing_req=()
missing_opt=()
have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in "${required[@]}"; do have "$p" || missing_req+=("$p"); done
for p in "${optional[@]}"; do have "$p" || missing_opt+=("$p"); done

if ((${#missing_req[@]} + ${#missing_opt[@]} == 0)); then
    exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null; then SUDO="sudo"; else SUDO="none"; fi
fi

install() {
    [[ "$SUDO" == none ]] && return 1
    command -v apt-get >/dev/null || return 1
    echo "deps: installing $*" >&2
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1 && return 0
    # The package lists may be stale or absent: update once and try again.
    $SUDO apt-get update -qq >/dev/null 2>&1 || true
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1
}

if ((${#missing_req[@]})); then
    if ! install "${missing_req[@]}" "${missing_opt[@]}"; then
        # One package that cannot be had must not stop the others.
        for p in "${missing_req[@]}"; do
            have "$p" || install "$p" || true
        done
    fi
fi
for p in "${missing_opt[@]}"; do
    have "$p" || install "$p" || echo "deps: optional package $p is not installed (and could not be)" >&2
done

still=()
for p in "${required[@]}"; do have "$p" || still+=("$p"); done
if ((${#still[@]})); then
    # Some systems provide these outside dpkg; CMake has the last word.
    echo "deps: warning: packages not installed: ${still[*]} (CMake will say whether it finds them)" >&2
fi
exit 0
