#!/usr/bin/env bash
# One device call for the 256-pixel CTA tile (tile=m256n128k128B-s4, issue #24: fewer L2 bytes
# per FLOP on the L2-bound conv3-5): build, every GPU test (the axis test runs the value on the
# odd shapes), hopper-tmastore-{fp16,bf16,tf32} at the 256-pixel tile against the same rung at
# its tuned tile and the 128x128 tile, and cuDNN, on conv2-5 at N=32/128 (NHWC); ncu on conv3
# and conv4 N=128 (L2 sectors per tile shape); compute-sanitizer on the 256-pixel rows.
#
#   OUT=$OUT CONVSTUDY_GIT_REV=<rev> scripts/device_m256.sh
#
# Outputs in $OUT: log.txt, gpu_tests.log, m256.csv, m256_profile.csv, m256_kernels.csv,
# sanitizer.log.
# Time (H100, estimated from the A-multicast call): build ~90 s, tests ~70 s, sweeps ~60 s,
# ncu ~40 s, sanitizer ~60 s: ~5.5 minutes.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh
device_out out/m256
B=build-device
C=$B/convstudy
T256=m256n128k128B-s4
T128=m128n128k128B-s6
status=0
device_build_test m256 || exit 1

COMMON=(--layout nhwc --memory pageable --check sampled --no-cpu-timing --quiet --layers "conv2,conv3,conv4,conv5"
    --batch "32,128" --repeats 20)
V=hopper-tmastore-fp16,hopper-tmastore-bf16,hopper-tmastore-tf32
stamp "sweep: tmastore at its tuned tile, at $T128, at $T256; cuDNN"
timeout 60 $C sweep --variants "$V,cudnn-fp16,cudnn-bf16,cudnn-tf32" "${COMMON[@]}" --csv /tmp/m256_default.csv \
    >/tmp/m256_default.txt 2>&1 || status=1
timeout 60 $C sweep --variants "$V" --axis "tile=$T128,$T256" "${COMMON[@]}" --csv /tmp/m256_tiles.csv \
    >/tmp/m256_tiles.txt 2>&1 || status=1
tail -1 /tmp/m256_default.txt /tmp/m256_tiles.txt
grep -hE " (FAIL|ERROR) " /tmp/m256_default.txt /tmp/m256_tiles.txt | head
$C merge /tmp/m256_default.csv /tmp/m256_tiles.csv -o "$OUT/m256.csv" || status=1

stamp "ncu: conv3 and conv4 N=128, hopper-tmastore-fp16 at $T128 and $T256"
P=(--variants hopper-tmastore-fp16 --layers "conv3,conv4" --batch 128 --layout nhwc --memory pageable --check sampled
    --no-cpu-timing --quiet --profile --axis "tile=$T128,$T256")
timeout 120 $C sweep "${P[@]}" --csv "$OUT/m256_profile.csv" --kernels-csv "$OUT/m256_kernels.csv" >/tmp/m256_prof.txt 2>&1 ||
    status=1
tail -1 /tmp/m256_prof.txt

stamp "compute-sanitizer on hopper-tmastore-* at $T256"
SANITIZE_VARIANTS=$V SANITIZE_SPLIT=variant SANITIZE_AXES="--axis tile=$T256" SANITIZE_SECONDS=100 \
    SANITIZE_DEADLINE=110 scripts/sanitize.sh $B "$OUT/sanitizer.log" /tmp/sanitize-logs || status=1
grep TOTAL "$OUT/sanitizer.log" | tail -1

python3 - "$OUT/m256.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1], newline="")) if r["status"] == "PASS" and r["kernel_ms"]]
t = {(r["variant"], r["axes"], r["layer"], r["N"]): float(r["kernel_ms"]) for r in rows}
for p in ("fp16", "bf16", "tf32"):
    v = f"hopper-tmastore-{p}"
    for layer in ("conv2", "conv3", "conv4", "conv5"):
        for n in ("32", "128"):
            d = t.get((v, "", layer, n))
            a = {ax: t.get((v, ax, layer, n)) for ax in ("tile=m128n128k128B-s6", "tile=m256n128k128B-s4")}
            c = t.get((f"cudnn-{p}", "", layer, n))
            f = lambda x: f"{x:.4f}" if x else "  -   "
            print(f"{v:<21} {layer} N={n:<3} tuned {f(d)} 128x128 {f(a['tile=m128n128k128B-s6'])}"
                  f" 256x128 {f(a['tile=m256n128k128B-s4'])} cudnn {f(c)}")
PY
stamp "done, status $status"
exit $status
