#!/usr/bin/env bash
# The H200 reference sweep (plots/h200/sweep_all_variants.csv) in three device calls, split by
# layers and batches so each fits one call's 600 s; each part times its cuDNN rows in the same
# process as ours. Every variant, both layouts, pageable, golden check, CPU timing, 20 repeats
# after 3 warm-ups, L2 flushed (the sweep's defaults).
#
#   OUT=$OUT CONVSTUDY_GIT_REV=<rev> scripts/device_reference.sh 1   # conv1 N=1/32/128, conv2 N=1/32
#   OUT=$OUT CONVSTUDY_GIT_REV=<rev> scripts/device_reference.sh 2   # conv2 and conv3 at N=128
#   OUT=$OUT CONVSTUDY_GIT_REV=<rev> scripts/device_reference.sh 3   # conv3 N=1/32, conv4, conv5
#
# Each part builds convstudy only (on a fresh H200 ~270 s of the call; part 1 then sweeps for
# ~190 s). TESTS=1 also builds and runs every GPU test first (gpu_tests.log; ~2 minutes more):
# give it to a part whose machine is still warm from the part before (its build intact, parts 2
# and 3 sweep for ~130 s and ~110 s), as the 04c4951 sweep did with part 2. Each part writes
# log.txt, build.log, and ref_<part>a.csv (and ref_<part>b.csv) under $OUT; merge the three
# calls' CSVs with `convstudy merge` into the reference sweep.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
part=${1:?"usage: scripts/device_reference.sh 1|2|3"}
common="--variants all --memory pageable --layout all --warmup 3 --repeats 20"
case $part in
1) sweeps="ref_1a:260:$common --layers conv1 --batch 1,32,128;ref_1b:170:$common --layers conv2 --batch 1,32" ;;
2) sweeps="ref_2a:480:$common --layers conv2,conv3 --batch 128" ;;
3) sweeps="ref_3a:180:$common --layers conv3 --batch 1,32;ref_3b:380:$common --layers conv4,conv5 --batch 1,32,128" ;;
*)
    echo "device_reference.sh: part $part: expected 1, 2 or 3"
    exit 2
    ;;
esac
stages="build golden sweep"
targets=convstudy
if [[ ${TESTS:-0} == 1 ]]; then
    stages="build tests golden sweep"
    targets=""
fi
STAGES=$stages BUILD_TARGETS=$targets BATCHES=1,32,128 SWEEPS=$sweeps exec scripts/device_run.sh
