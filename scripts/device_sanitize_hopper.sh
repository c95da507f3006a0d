#!/usr/bin/env bash
# compute-sanitizer's four tools over every Hopper rung in one device call (issue 24's
# Done-when: "the sanitizer summary covers every new rung, all four tools clean"): every rung
# in fp16 and tf32, the ws and halo rungs in bf16, the two fp32-class splits, on AlexNet at
# N=1 and the odd shapes in both layouts (the NCHW rows run the transpose transforms and, at
# these one-wave sizes, the GEMM as the input transform's programmatic dependent), each tool's
# planted-error control first. The list is ffcac3c's summary's
# (plots/h200/sanitizer_hopper_91245a6.log: 200 jobs in one call, clean).
#
#   OUT=$OUT CONVSTUDY_GIT_REV=<rev> scripts/device_sanitize_hopper.sh
#
# Files under $OUT: log.txt, build.log, sanitizer.log. Time (H200): build ~300 s, the jobs
# ~300 s (SANITIZE_DEADLINE).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
V=hopper-wgmma-fp16,hopper-wgmma-tf32,hopper-tma-fp16,hopper-tma-tf32,hopper-ws-fp16,hopper-ws-tf32,hopper-ws-bf16
V=$V,hopper-pp-fp16,hopper-pp-tf32,hopper-tmastore-fp16,hopper-tmastore-tf32,hopper-sk-fp16,hopper-sk-tf32
V=$V,hopper-tail-fp16,hopper-tail-tf32,hopper-mc-fp16,hopper-mc-tf32,hopper-mca-fp16,hopper-mca-tf32
V=$V,hopper-m256k64-fp16,hopper-m256k64-tf32,hopper-halo-fp16,hopper-halo-bf16,hopper-ws-3xtf32,hopper-ws-3xfp16
STAGES="build sanitize" SANITIZE_SPLIT=variant SANITIZE_VARIANTS=$V SANITIZE_SECONDS=${SANITIZE_SECONDS:-150} \
    SANITIZE_DEADLINE=${SANITIZE_DEADLINE:-300} exec scripts/device_run.sh
