#!/usr/bin/env bash
# The persistent rungs' `launch` axis (pdl | plain) on the rows where a transform runs before
# the GEMM, in one device call (NOTES.md "NCHW on conv2-5"): build, every GPU test, then the
# NCHW rows of conv2-5 at N=1/32/128 in every operand class with both launch values side by
# side in one process (sampled check): the measurement auto's rule reads (wgmma_ws.cu).
#
#   OUT=$OUT CONVSTUDY_GIT_REV=<rev> scripts/device_launch_axis.sh
#
# Files under $OUT: log.txt, build.log, gpu_tests.log, launch.csv. Time (H200): build ~300 s,
# GPU tests ~120 s, the sweep ~80 s.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
V=hopper-pp-fp16,hopper-tmastore-fp16,hopper-pp-bf16,hopper-pp-tf32,hopper-tmastore-tf32,hopper-sk-tf32
V=$V,hopper-ws-3xtf32,hopper-ws-3xfp16
C="--memory pageable --layout nchw --check sampled --warmup 3 --repeats 20 --no-cpu-timing"
STAGES="build tests sweep" \
    SWEEPS="launch:170:--variants $V --axis launch=pdl,plain --layers conv2,conv3,conv4,conv5 --batch 1,32,128 $C" \
    exec scripts/device_run.sh
