#!/usr/bin/env bash
# One device call for the cluster along the filters (rung hopper-mca, cluster=1x2: the A tile
# multicast): build, every GPU test, the rung against hopper-tmastore, the cluster rung along
# the pixels (hopper-mc) and cuDNN on conv2-5 at N=1/32/128 (NHWC, three classes), its tile
# sweep at N=128, ncu on conv3/conv5 N=128 (L2 traffic: what the idea should halve), SASS
# (the multicast im2col load), and compute-sanitizer on its three rows.
#
#   OUT=$OUT CONVSTUDY_GIT_REV=<rev> scripts/device_mca.sh
#
# Outputs in $OUT (8 files): log.txt, gpu_tests.log, mca.csv, mca_tiles.csv, mca_profile.csv,
# mca_kernels.csv (ncu per kernel), sass.csv (scripts/device_sass.sh), sanitizer.log.
# Time (H100, estimated from the split-tail call): build ~90 s, tests ~70 s, sweeps ~70 s,
# ncu ~25 s, SASS ~30 s, sanitizer ~40 s: ~5.5 minutes.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh
device_out out/mca
B=build-device
C=$B/convstudy
status=0
device_build_test mca || exit 1

COMMON=(--layout nhwc --memory pageable --check sampled --no-cpu-timing --quiet)
V=hopper-tmastore-fp16,hopper-mc-fp16,hopper-mca-fp16,cudnn-fp16,hopper-tmastore-bf16,hopper-mc-bf16,hopper-mca-bf16
V=$V,cudnn-bf16,hopper-tmastore-tf32,hopper-mc-tf32,hopper-mca-tf32,cudnn-tf32
stamp "sweep: the rung against tmastore, mc and cuDNN"
timeout 150 $C sweep --variants "$V" --layers conv2,conv3,conv4,conv5 --batch 1,32,128 --repeats 20 "${COMMON[@]}" \
    --csv "$OUT/mca.csv" >/tmp/mca.txt 2>&1 || status=1
tail -1 /tmp/mca.txt
grep -E " (FAIL|ERROR) " /tmp/mca.txt | head

stamp "tile sweep of hopper-mca-fp16 (N=128)"
timeout 60 $C sweep --variants hopper-mca-fp16 --layers conv2,conv3,conv4,conv5 --batch 128 --repeats 10 \
    --axis cluster=1x2 --axis tile=all "${COMMON[@]}" --csv "$OUT/mca_tiles.csv" >/tmp/mca_tiles.txt 2>&1 || status=1
tail -1 /tmp/mca_tiles.txt

stamp "ncu: conv3 and conv5 N=128, mca against tmastore and mc"
timeout 90 $C sweep --variants hopper-tmastore-fp16,hopper-mc-fp16,hopper-mca-fp16 --layers conv3,conv5 --batch 128 \
    --profile "${COMMON[@]}" --csv "$OUT/mca_profile.csv" --kernels-csv "$OUT/mca_kernels.csv" >/tmp/mca_prof.txt 2>&1 ||
    status=1
tail -1 /tmp/mca_prof.txt

stamp "SASS"
timeout 90 scripts/device_sass.sh $C "$OUT/sass.csv" || status=1
grep -c "" "$OUT/sass.csv" | sed 's/^/sass.csv rows: /'

stamp "compute-sanitizer on hopper-mca-*"
SANITIZE_VARIANTS=hopper-mca-fp16,hopper-mca-bf16,hopper-mca-tf32 SANITIZE_SPLIT=variant SANITIZE_SECONDS=100 \
    SANITIZE_DEADLINE=110 scripts/sanitize.sh $B "$OUT/sanitizer.log" /tmp/sanitize-logs || status=1
grep TOTAL "$OUT/sanitizer.log" | tail -1

python3 - "$OUT/mca.csv" <<'PY'
import csv, sys
t = {(r["layer"], r["N"], r["variant"]): r for r in csv.DictReader(open(sys.argv[1], newline=""))}
for p in ("fp16", "bf16", "tf32"):
    for l in ("conv2", "conv3", "conv4", "conv5"):
        for n in ("1", "32", "128"):
            row = [t.get((l, n, f"{v}-{p}")) for v in ("hopper-tmastore", "hopper-mc", "hopper-mca", "cudnn")]
            cells = [(r["kernel_ms"] if r["status"] == "PASS" else r["status"]) if r else "-" for r in row]
            print(f"  {p} {l} N={n:<4} tmastore {cells[0]:>9} mc {cells[1]:>9} mca {cells[2]:>9} cudnn {cells[3]:>9}")
PY
stamp "done, status $status"
exit $status
