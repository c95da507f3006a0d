#!/usr/bin/env bash
# NCHW on conv2-5 before and after a change to its transforms, on one GPU machine in one call
# (NOTES.md "NCHW on conv2-5"): both sides built there (scripts/device_ab_build.sh, from this
# tree and OLD_REV's differing files), this tree's GPU tests, then scripts/device_compare.sh on
# the NCHW rows of the persistent rungs (launched as the input transform's programmatic
# dependent), the fp32-class splits (both operands transformed), the cp.async / TMA rung (the
# transform alone, a plain launch) and cuDNN (neither: the control), new then old per layer.
#
#   scripts/compare_pack.sh --src OLD_REV && device call (carry .ab):
#   OUT=$OUT CONVSTUDY_GIT_REV=<this tree's> scripts/device_nchw_ab.sh
#
# Files under $OUT: log.txt, gpu_tests.log, new.csv, old.csv, compare.txt. Time (H200, 639bf40):
# the two builds with the GPU tests' (TESTS=1) and the tests took ~470 s, which left the sweeps
# (~60 s) no time before DEADLINE; they ran in the next call on the warm machine, whose
# /tmp/ab still held both binaries: `AB_BUILT=1 SWEEP_ARGS=... scripts/device_compare.sh`.
# TESTS=0 fits all in one call.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-out/nchw_ab}
mkdir -p "$OUT"
export device_t0=${device_t0:-$(date +%s)}  # one clock for every DEADLINE below
V=hopper-ws-fp16,hopper-pp-fp16,hopper-tmastore-fp16,hopper-sk-fp16,hopper-mc-fp16,hopper-pp-bf16
V=$V,hopper-tmastore-tf32,hopper-ws-3xtf32,hopper-ws-3xfp16,hopper-tma-fp16,cudnn-fp16
export SWEEP_ARGS=${SWEEP_ARGS:-"--variants $V --memory pageable --layout nchw --batch 1,32,128 --warmup 3 --repeats 20"}
export LAYERS=${LAYERS:-conv2,conv3,conv4,conv5}
export TESTS=${TESTS:-1}
export DEADLINE=${DEADLINE:-575}
scripts/device_ab_build.sh >>"$OUT/log.txt" 2>&1 || { tail -30 "$OUT/log.txt"; exit 2; }
OUT=$OUT AB_BUILT=1 scripts/device_compare.sh
