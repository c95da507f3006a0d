#!/usr/bin/env bash
# NCHW on conv2-5 under Nsight Compute in one device call (NOTES.md "NCHW on conv2-5"): the
# Hopper rows that are fastest in NCHW at N=128 in the reference sweep, each beside the same
# rung in NHWC and cuDNN's rows in both layouts, one profiled launch per row (`sweep --profile
# --kernels-csv`, sampled check): how the NCHW time splits between the input and weight
# transform kernels, the GEMM and its NCHW epilogue (the kernels CSV has every kernel of a row).
#
#   OUT=$OUT CONVSTUDY_GIT_REV=<rev> scripts/device_nchw_profile.sh
#
# Writes nchw.csv, kernels_nchw.csv, log.txt and build.log under $OUT. Time (H200): build
# ~250 s, the profiled sweep ~150 s.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-out/device}
C="--memory pageable --layout all --check sampled --warmup 3 --repeats 20 --no-cpu-timing --profile"
V=hopper-pp-fp16,hopper-mc-fp16,hopper-tmastore-fp16,hopper-pp-tf32,hopper-tmastore-tf32,cudnn-fp16,cudnn-tf32
STAGES="build sweep" BUILD_TARGETS=convstudy \
    SWEEPS="nchw:300:--variants $V --layers conv2,conv3,conv4,conv5 --batch 128 $C --kernels-csv $OUT/kernels_nchw.csv" \
    exec scripts/device_run.sh
