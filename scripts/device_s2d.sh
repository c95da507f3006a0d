#!/usr/bin/env bash
# GPU check of issue #24 item 3, the cudnn-<class>-s2d rows (gpu/variants/cudnn_s2d.cu,
# space_to_depth.cu), ~10 minutes on an H100/H200. Writes under $OUT:
#   log.txt         everything printed
#   gpu_tests.log   the GPU tests [s2d] (transform kernels bit for bit against the host map,
#                   the rows on conv1 N=1 and strided odd shapes in both layouts, SKIP on
#                   stride 1, chunking, the streams mode) and [anchors]
#   s2d.csv         sweep of conv1, N=1,32,128, both layouts: cudnn-<class> and
#                   cudnn-<class>-s2d of every class, and hopper-ws-{fp16,bf16,tf32} (their
#                   vs_cudnn now against the faster of the two cuDNN rows)
#   kernels.csv     ncu, one row per kernel of one timed repeat of cudnn-fp16-s2d and
#                   cudnn-fp32-s2d on conv1 N=128 in both layouts: the transform
#                   (tiled_kernel) apart from cuDNN's kernel
#
#   OUT=/tmp/out CONVSTUDY_GIT_REV=$(git describe --always --dirty) scripts/device_s2d.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
B=build-device
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh
device_out out/s2d
status=0
stamp "device: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader)"
stamp "build"
BUILD_LOG=/tmp/build.log device_build $B convstudy convstudy_gpu_tests || exit 1
C=$B/convstudy

stamp "GPU tests [s2d],[anchors]"
CONVSTUDY_REQUIRE_GPU=1 timeout 600 $B/tests/convstudy_gpu_tests "[s2d],[anchors]" -s >>"$(device_log_head "$OUT/gpu_tests.log")" 2>&1 ||
    status=1
grep -E "cudnn-.*-s2d (nchw|nhwc) on|test cases|assertions|FAILED" "$OUT/gpu_tests.log" | tail -40

stamp "golden conv1 N=1,32,128"
$C generate --batch 1,32,128 --only conv1 --no-cpu-timing --no-onednn --quiet || status=1

stamp "sweep conv1"
V=cudnn-fp32,cudnn-fp32-s2d,cudnn-tf32,cudnn-tf32-s2d,cudnn-fp16,cudnn-fp16-s2d,cudnn-bf16,cudnn-bf16-s2d
V=$V,hopper-ws-fp16,hopper-ws-bf16,hopper-ws-tf32
timeout 900 $C sweep --variants $V --layers conv1 --batch 1,32,128 --layout nchw,nhwc --memory pageable \
    --csv "$OUT/s2d.csv" --quiet >/tmp/s2d.txt 2>&1 || status=1
python3 - "$OUT/s2d.csv" <<'PY' || status=1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(f"{'variant':<18} {'layout':<5} {'N':>4} {'status':<6} {'kernel_ms':>9} {'vs_cudnn':>8}  detail")
for r in rows:
    print(f"{r['variant']:<18} {r['layout']:<5} {r['N']:>4} {r['status']:<6} {r['kernel_ms']:>9} "
          f"{r.get('vs_cudnn', ''):>8}  {r.get('detail', '')[:150]}")
bad = [r for r in rows if r["variant"].endswith("-s2d") and r["status"] != "PASS"]
print("s2d rows not PASS:", len(bad))
sys.exit(1 if bad else 0)
PY

for v in cudnn-fp16-s2d cudnn-fp32-s2d; do
    for layout in nchw nhwc; do
        stamp "ncu: $v conv1 N=128 $layout"
        timeout 240 $C profile --variant $v --layer conv1 --batch 128 --layout $layout --check sampled \
            --no-cpu-timing --kernels-csv "/tmp/kernels_${v}_$layout.csv" >/dev/null || status=1
        cut -c1-300 "/tmp/kernels_${v}_$layout.csv" 2>/dev/null
    done
done
kcsv=(/tmp/kernels_cudnn-*-s2d_*.csv)
[[ -f ${kcsv[0]} ]] && { head -1 "${kcsv[0]}"; tail -q -n +2 "${kcsv[@]}"; } >"$OUT/kernels.csv"
stamp "done, status $status"
exit $status
