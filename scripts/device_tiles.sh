#!/usr/bin/env bash
# One device call that retunes the Hopper tile table on this card (issue #24 item 5) now that
# the 256-pixel tile runs every tile scheduler: build, every GPU test, a tile sweep (every
# tile) of hopper-tmastore and hopper-tail (fp16 and tf32: bf16 shares fp16's key), and
# hopper-sk / hopper-tail / hopper-tmastore at the 256-pixel tile against their defaults and
# cuDNN in all three classes, conv2-5, N=32/128, NHWC.
#
#   OUT=$OUT CONVSTUDY_GIT_REV=<rev> scripts/device_tiles.sh
#   then, here: python3 scripts/hopper_tune.py plots/h100/hopper_tiles.csv plots/h100/hopper_tiles_mc.csv \
#       plots/<card>/hopper_tiles.csv > gpu/variants/hopper/tuned_tiles.inc
#
# Outputs in $OUT: log.txt, gpu_tests.log, tiles.csv (the tile sweep), m256_sched.csv.
# Time (H200, from the 256-pixel call): build ~75 s, tests ~65 s, tile sweep ~200 s, the
# scheduler rows ~40 s: ~6.5 minutes.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh
device_out out/tiles
B=build-device
C=$B/convstudy
T256=m256n128k128B-s4
status=0
device_build_test tiles || exit 1

COMMON=(--layout nhwc --memory pageable --check sampled --no-cpu-timing --quiet --layers "conv2,conv3,conv4,conv5"
    --batch "32,128")
stamp "the 256-pixel tile under every scheduler, against the rungs' defaults and cuDNN"
V=hopper-tmastore-fp16,hopper-sk-fp16,hopper-tail-fp16,hopper-tmastore-bf16,hopper-sk-bf16,hopper-tail-bf16
V=$V,hopper-tmastore-tf32,hopper-sk-tf32,hopper-tail-tf32
timeout 60 $C sweep --variants "$V,cudnn-fp16,cudnn-bf16,cudnn-tf32" "${COMMON[@]}" --repeats 20 \
    --csv /tmp/sched_default.csv >/tmp/sched_default.txt 2>&1 || status=1
timeout 60 $C sweep --variants "$V" --axis "tile=$T256" "${COMMON[@]}" --repeats 20 --csv /tmp/sched_m256.csv \
    >/tmp/sched_m256.txt 2>&1 || status=1
tail -qn1 /tmp/sched_default.txt /tmp/sched_m256.txt
grep -hE " (FAIL|ERROR) " /tmp/sched_default.txt /tmp/sched_m256.txt | head
$C merge /tmp/sched_default.csv /tmp/sched_m256.csv -o "$OUT/m256_sched.csv" || status=1

stamp "tile sweep: hopper-tmastore and hopper-tail, every tile"
timeout 300 $C sweep --variants hopper-tmastore-fp16,hopper-tmastore-tf32,hopper-tail-fp16,hopper-tail-tf32 \
    "${COMMON[@]}" --warmup 2 --repeats 10 --axis tile=all --csv "$OUT/tiles.csv" >/tmp/tiles.txt 2>&1 || status=1
tail -1 /tmp/tiles.txt
grep -E " (FAIL|ERROR) " /tmp/tiles.txt | head

python3 - "$OUT/m256_sched.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1], newline="")) if r["status"] == "PASS" and r["kernel_ms"]]
t = {(r["variant"], r["axes"], r["layer"], r["N"]): float(r["kernel_ms"]) for r in rows}
f = lambda x: f"{x:.4f}" if x else "  -   "
for p in ("fp16", "bf16", "tf32"):
    for layer in ("conv2", "conv3", "conv4", "conv5"):
        for n in ("32", "128"):
            cells = []
            for rung in ("tmastore", "sk", "tail"):
                v = f"hopper-{rung}-{p}"
                cells.append(f"{rung} {f(t.get((v, '', layer, n)))}/{f(t.get((v, 'tile=m256n128k128B-s4', layer, n)))}")
            print(f"{p} {layer} N={n:<3} " + "  ".join(cells) + f"  cudnn {f(t.get((f'cudnn-{p}', '', layer, n)))}")
PY
stamp "done, status $status"
exit $status
