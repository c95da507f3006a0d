#!/usr/bin/env bash
# Issue 24's goals on one card in one device call: every tensor-core Hopper rung but the two
# first (wgmma, tma: the ladder's start, never the best row) and cuDNN's rows of the same
# classes (the plain ones and conv1's space-to-depth ones), conv1-5, N=1, 32 and 128, both
# layouts, sampled check, 20 repeats; then the goals table reads it like the reference sweep's
# (plots/convplots/docs.py goals_24). For the card the reference sweep did not run on (the
# goals say "confirmed on an H100").
#
#   OUT=/tmp/out CONVSTUDY_GIT_REV=$(git rev-parse --short HEAD) scripts/device_goals.sh
#
# Writes goals.csv (and device_run.sh's log.txt, build.log) under $OUT. SECONDS_SWEEP bounds
# the sweep (default 380: a fresh machine's build takes ~150 s of the call's 600). A part of
# the goals: CLASSES (default fp16,bf16,tf32), BATCH (default 1,32,128), LAYOUT (default all),
# e.g. CLASSES=fp16 BATCH=128 LAYOUT=nhwc for the five-layer total alone (~30 s of sweep).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
V=""
IFS=, read -r -a classes <<<"${CLASSES:-fp16,bf16,tf32}"
for p in "${classes[@]}"; do
    for r in ws pp tmastore sk tail mc mca m256k64; do V="$V,hopper-$r-$p"; done
    [[ $p == tf32 ]] || V="$V,hopper-halo-$p"
    V="$V,cudnn-$p,cudnn-$p-s2d"
done
STAGES="build sweep" BUILD_TARGETS=convstudy \
    SWEEPS="goals:${SECONDS_SWEEP:-380}:--variants ${V#,} --memory pageable --batch ${BATCH:-1,32,128} --layout ${LAYOUT:-all} --check sampled --warmup 3 --repeats 20 --no-cpu-timing" \
    exec scripts/device_run.sh
