#!/usr/bin/env bash
# One device call for conv2 at N=1, whose split-K cluster rows ran 11% slower in the 04c4951
# reference sweep (12.7 us) than in the three H200 calls before it (11.4 us) while cuDNN's did
# not move, on the same plan (12 tiles, split-K 8 over clusters of 8 CTAs on 96 CTAs): three
# processes of our fp16 and bf16 rows (split-k-cluster as the table picks, and split-k with its
# reduction kernel, which has no cluster) beside cuDNN's, NHWC, 50 repeats, with the card's
# clocks before each. A shift that stays on this machine in every process is the card's or the
# machine's; one that comes and goes is the process's.
#
#   OUT=$OUT CONVSTUDY_GIT_REV=<rev> scripts/device_n1_shift.sh
#
# Outputs in $OUT: log.txt, n1_<k>.csv per process. Time (H200): build ~250 s, ~10 s a process.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh
device_out out/n1_shift
B=build-device
status=0
stamp "card: $(nvidia-smi --query-gpu=pci.bus_id,serial --format=csv,noheader)"
device_build_maybe_test n1 || exit 1  # TESTS=1: every GPU test first
for k in 1 2 3; do
    stamp "process $k: $(nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader)"
    timeout 120 "$B/convstudy" sweep --variants hopper-ws-fp16,hopper-tmastore-fp16,hopper-ws-bf16,cudnn-fp16,cudnn-bf16 \
        --axis scheduler=default,split-k --layers conv2 --batch 1 --layout nhwc --memory pageable --check sampled \
        --no-cpu-timing --repeats 50 --quiet --csv "$OUT/n1_$k.csv" 2>&1 | grep -E "PASS|FAIL|ERROR" |
        sed -E 's/ +/ /g' | cut -c1-150 || status=1
done
stamp "done, status $status"
exit $status
