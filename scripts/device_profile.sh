#!/usr/bin/env bash
# GPU check of issue #27 (NVTX, `convstudy profile`, `sweep --profile`, shards and merge,
# torch.compile anchors), < 8 minutes on an H100/H200. Writes under $OUT:
#   log.txt            everything printed
#   ncu_raw_conv2.csv  ncu's own CSV of `run --profile-target` filtered by the NVTX range
#                      (a real sample for tests/data)
#   profile.csv        `profile` rows: hopper-ws-fp16 and cudnn-fp16, conv2 N=128 nhwc
#   profile_sweep.csv  `sweep --profile` on conv3 N=32, a few variants
#   merged.csv, whole.csv  two shards merged, and the same sweep unsharded
#   pytorch.csv        eager cuDNN and torch.compile rows (fp16, N=128), when python3 has torch
#
#   OUT=/tmp/out CONVSTUDY_GIT_REV=$(git describe --always --dirty) scripts/device_profile.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out/profile}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/log.txt") 2>&1
B=build-device
t0=$(date +%s)
stamp() { echo "[$(($(date +%s) - t0))s] $*"; }
status=0
stamp "build"
cmake -S . -B $B -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 -DCONVSTUDY_BUILD_TESTS=OFF >/tmp/build.log 2>&1 &&
    cmake --build $B -j "$(nproc)" --target convstudy >>/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
C=$B/convstudy
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
stamp "ncu: $NCU ($($NCU --version 2>&1 | tail -1))"
stamp "golden N=32,128 for conv2 and conv3"
$C generate --batch 32,128 --only conv2,conv3 --no-cpu-timing --no-onednn --quiet || status=1

stamp "ncu directly on run --profile-target, filtered by the NVTX range (the raw format)"
timeout 120 "$NCU" --csv --print-units base --clock-control none --nvtx --nvtx-include "convstudy@timed kernels/" \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread \
    --log-file "$OUT/ncu_raw_conv2.csv" \
    $C run --variant cudnn-fp16 --layer conv2 --batch 128 --layout nhwc --warmup 2 --repeats 1 --profile-target || status=1
head -c 3000 "$OUT/ncu_raw_conv2.csv"

for v in hopper-ws-fp16 cudnn-fp16; do
    stamp "profile $v conv2 N=128 nhwc"
    timeout 240 $C profile --variant $v --layer conv2 --batch 128 --layout nhwc --csv "/tmp/profile_$v.csv" \
        --kernels-csv "/tmp/kernels_$v.csv" || status=1
    cat "/tmp/kernels_$v.csv" 2>/dev/null | cut -c1-400
done
{ head -1 /tmp/profile_hopper-ws-fp16.csv; tail -q -n +2 /tmp/profile_*.csv; } >"$OUT/profile.csv"

stamp "sweep --profile (conv3 N=32, detailed metrics)"
timeout 240 $C sweep --layers conv3 --batch 32 --layout nhwc --variants cudnn-fp16,hopper-wgmma-fp16,hopper-ws-fp16 \
    --profile --metrics detailed --repeats 5 --csv "$OUT/profile_sweep.csv" --quiet || status=1
cut -d, -f21,28,37,70- "$OUT/profile_sweep.csv" | head

stamp "two shards merged vs one sweep (conv3 N=32)"
S="--layers conv3 --batch 32 --variants cudnn-fp16,cudnn-fp32,hopper-ws-fp16,simt-gemm,baseline --repeats 5 --quiet"
CUDA_VISIBLE_DEVICES=0 $C sweep $S --shard 1/2 --csv /tmp/s1.csv >/dev/null &
CUDA_VISIBLE_DEVICES=0 $C sweep $S --shard 2/2 --csv /tmp/s2.csv >/dev/null
wait $! || status=1
$C merge /tmp/s1.csv /tmp/s2.csv -o "$OUT/merged.csv" || status=1
$C sweep $S --csv "$OUT/whole.csv" >/dev/null || status=1
python3 - "$OUT/merged.csv" "$OUT/whole.csv" <<'PY' || status=1
import csv, sys
key = lambda r: (r["layer"], r["N"], r["variant"], r["memory"], r["layout"], r["status"])
a = sorted(map(key, csv.DictReader(open(sys.argv[1])))); b = sorted(map(key, csv.DictReader(open(sys.argv[2]))))
print("merged rows == unsharded rows:", a == b, len(a), len(b)); sys.exit(0 if a == b else 1)
PY

if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    stamp "PyTorch eager + torch.compile, fp16 N=128 (both layouts)"
    PYTHONUNBUFFERED=1 timeout 300 python3 scripts/pytorch_anchors.py "$OUT/pytorch.csv" --batches 128 --precisions fp16 \
        --no-s2d --compile-batches 128 --compile-precisions fp16 | tail -20 || status=1
else
    stamp "no python3 with torch and CUDA: torch.compile rows skipped"
fi
stamp "done, status $status"
exit $status
