#!/usr/bin/env bash
# One device call for the split-K forms that sum in the kernel (split-k-fused, split-k-cluster):
# build, every GPU test, then the forms side by side in one sweep of this binary (--axis
# scheduler=$SCHEDULERS: the reduction kernel against the fused fix-up and the cluster sum,
# same tile, same process) at N=1 on conv2-5 beside cuDNN, both layouts, and
# compute-sanitizer's four tools over the rungs that split at N=1.
#
#   OUT=$OUT CONVSTUDY_GIT_REV=<rev> scripts/device_splitk.sh
#
# SCHEDULERS (default split-k,split-k-fused,split-k-cluster): the scheduler values compared;
# SANITIZE=0: no sanitizer.
# Outputs in $OUT: log.txt, gpu_tests.log, splitk_n1.csv, sanitizer.log.
# Time (H200): build + tests ~200 s, the sweep ~40 s, the sanitizer SANITIZE_DEADLINE (150 s).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh
device_out out/splitk
B=build-device
C=$B/convstudy
status=0
device_build_test splitk || exit 1

V=""
for p in fp16 bf16 tf32; do V="$V,hopper-ws-$p,hopper-tmastore-$p,hopper-m256k64-$p"; done
V="${V#,},hopper-ws-3xtf32,hopper-ws-3xfp16"
stamp "N=1: the split-K forms ${SCHEDULERS:-split-k,split-k-fused,split-k-cluster}, and cuDNN"
timeout 150 $C sweep --variants "$V" --axis "scheduler=${SCHEDULERS:-split-k,split-k-fused,split-k-cluster}" --layers conv2,conv3,conv4,conv5 \
    --batch 1 --check sampled --no-cpu-timing --quiet --repeats 20 --csv /tmp/ours.csv >/tmp/ours.txt 2>&1 || status=1
timeout 100 $C sweep --variants cudnn-fp16,cudnn-bf16,cudnn-tf32,cudnn-fp32 --layers conv2,conv3,conv4,conv5 \
    --batch 1 --check sampled --no-cpu-timing --quiet --repeats 20 --csv /tmp/cudnn.csv >/tmp/cudnn.txt 2>&1 || status=1
tail -qn1 /tmp/ours.txt /tmp/cudnn.txt
grep -hE " (FAIL|ERROR) " /tmp/ours.txt /tmp/cudnn.txt | head
$C merge /tmp/ours.csv /tmp/cudnn.csv -o "$OUT/splitk_n1.csv" || status=1

if [[ ${SANITIZE:-1} == 1 ]]; then
stamp "compute-sanitizer on the rungs that split at N=1"
SANITIZE_VARIANTS=hopper-ws-fp16,hopper-ws-tf32,hopper-ws-3xfp16,hopper-m256k64-bf16 SANITIZE_SPLIT=variant \
    SANITIZE_DEADLINE=${SANITIZE_DEADLINE:-150} bash scripts/sanitize.sh "$B" "$OUT/sanitizer.log" /tmp/san || status=1
tail -5 "$OUT/sanitizer.log"
fi
stamp "done, status $status"
exit $status
