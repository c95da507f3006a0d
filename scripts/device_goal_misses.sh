#!/usr/bin/env bash
# The cells of issue 24's goals that a sweep reads over, under Nsight Compute in one device call
# (`sweep --profile --kernels-csv`: one timed repeat per row profiled, NHWC, sampled check): our
# best rows of each missed cell beside cuDNN's rows of the class, so NOTES.md's table
# "goal misses" (plots/convplots/docs.py goal_misses) can say what the profile shows.
#
#   OUT=/tmp/out CONVSTUDY_GIT_REV=$(git rev-parse --short HEAD) CARD=h200 scripts/device_goal_misses.sh
#
# CARD=h200 (default): the H200 reference sweep's misses (conv2 bf16/tf32 at N=32 and 128,
# conv4 bf16 and conv5 at N=128, conv2-5 fp16 at N=512): the call that made
# plots/h200/profile_goal_misses.csv. CARD=h100: the cells the H100 confirmation
# (plots/h100/goals_24.csv) reads over where the H200 meets them, with the rows that are best
# there (conv2 at N=32: stream-K in fp16, the pair rung in bf16, and tf32's, over on both
# cards; tf32 conv1 against its s2d row at N=128).
# Writes <name>.csv and kernels_<name>.csv per sweep, log.txt and build.log under $OUT; join
# the parts with `convstudy merge` and concatenate the kernels CSVs (one header).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-out/device}
C="--memory pageable --layout nhwc --check sampled --warmup 3 --repeats 20 --no-cpu-timing --profile"
case ${CARD:-h200} in
h200)
    SWEEPS="miss128:200:--variants hopper-mc-bf16,hopper-sk-tf32,hopper-tmastore-fp16,hopper-tmastore-bf16,hopper-tail-tf32,cudnn-fp16,cudnn-bf16,cudnn-tf32 --layers conv2,conv4,conv5 --batch 128 $C --kernels-csv $OUT/kernels_miss128.csv"
    SWEEPS="$SWEEPS;miss32:60:--variants hopper-tail-bf16,hopper-pp-tf32,cudnn-bf16,cudnn-tf32 --layers conv2 --batch 32 $C --kernels-csv $OUT/kernels_miss32.csv"
    SWEEPS="$SWEEPS;miss512:150:--variants hopper-mc-fp16,hopper-tmastore-fp16,hopper-sk-fp16,cudnn-fp16 --layers conv2,conv3,conv4,conv5 --batch 512 $C --kernels-csv $OUT/kernels_miss512.csv"
    ;;
h100)
    SWEEPS="miss32:200:--variants hopper-sk-fp16,hopper-mc-bf16,hopper-tmastore-tf32,hopper-pp-tf32,cudnn-fp16,cudnn-bf16,cudnn-tf32 --layers conv2 --batch 32 $C --kernels-csv $OUT/kernels_miss32.csv"
    SWEEPS="$SWEEPS;miss128:90:--variants hopper-tmastore-tf32,cudnn-tf32,cudnn-tf32-s2d --layers conv1 --batch 128 $C --kernels-csv $OUT/kernels_miss128.csv"
    ;;
*)
    echo "device_goal_misses: CARD is h200 or h100" >&2
    exit 2
    ;;
esac
STAGES="build sweep" BUILD_TARGETS=convstudy SWEEPS="$SWEEPS" exec scripts/device_run.sh
