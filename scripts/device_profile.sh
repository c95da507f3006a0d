#!/usr/bin/env bash
# Issue #27's GPU data in one device call of at most 9 minutes on one H100/H200:
#   (a) `sweep --profile` (Nsight Compute, the default metric set) at N=128 on all five layers:
#       - the Hopper ladder: hopper-{wgmma,tma,ws,pp,tmastore,sk,tail,mc,mca}-fp16 and cudnn-fp16 in NHWC,
#         and cudnn-fp16-s2d (conv1; the stride-1 layers SKIP it)          -> hopper_ladder.csv
#       - the fp32-class ladder: hopper-ws-3xtf32, hopper-ws-3xfp16 and cudnn-fp32 in NHWC,
#         and in NCHW (the only layout they have) simt-gemm, split-tf32 and the Winograd rungs
#         of the exact-fp32 ladder (f2x2, f4x4: conv3-5; f3x3-5x5 and its three 3xFP16
#         tensor-core rungs: conv2; other layers SKIP them)
#         -> two sweeps joined by `convstudy merge`                        -> fp32_ladder.csv
#       every profiled kernel of both, one row each                        -> kernels.csv
#   (b) PyTorch eager cuDNN and torch.compile(mode="max-autotune-no-cudagraphs"), fp16,
#       N=128, both layouts (NHWC first), when python3 has torch        -> pytorch.csv
#   ncu's own CSV of the counters `profile` reads, on hopper-ws-fp16 conv2 N=128 (a real
#   sample for tests/data; split-tf32's, an mma.sync kernel, is in the log) -> ncu_raw_conv2.csv
#   and log.txt (everything printed): 6 files under $OUT.
#
#   OUT=/tmp/out CONVSTUDY_GIT_REV=$(git describe --always --dirty) scripts/device_profile.sh
#
# A shorter call: BUDGET (seconds from the start for the sweeps, default 520), PYTORCH_BUDGET=0
# (no PyTorch rows), PROFILE_SWEEPS="hopper" (any of hopper fp32_nhwc fp32_nchw).
# TESTS=1 also builds and runs the GPU tests after the build (gpu_tests.log; ~2 minutes, taken
# from the sweeps' share of BUDGET).
#
# Time. A profiled row costs one ncu process (`run --profile-target` under ncu: start, CUDA
# and ncu set-up, the row's plan and check, warm-ups, then only the kernels of the one timed
# repeat inside the NVTX range "timed kernels" are replayed once per counter pass), so its
# cost is start-up, not kernel time or --repeats: the first H100 profile's rows (stop 23),
# each a whole `profile` process (parent and child), are 5-7 s apart (H100, conv2/conv5
# N=128). Estimated here (a guess from those, not yet measured in a sweep): ~3.5 s per row of
# ours, ~6 s per cuDNN row (engine choice in parent and child): the ladder's 36 profiled rows
# ~140 s, fp32 NHWC 15 rows ~65 s, fp32 NCHW 20 rows ~70 s.
# The default metric set is the issue's list (tensor/HMMA cycles, wgmma instructions, FMA,
# SM, DRAM bytes, L2 hit rate and sectors, occupancy, registers, shared memory: ~9 passes);
# `detailed` adds L1 counters' passes and no column the roofline needs. --repeats stays 20
# (the reference sweeps'): 20 timed kernels of < 3 ms add well under a second per row.
# The checks are sampled (no golden files to generate: --check sampled, 4096 outputs per row
# against the CPU, plus a NaN scan of all), the CSVs' `check` column says so.
# PyTorch runs while the tree builds (the build is CPU work and is niced; the GPU is idle
# and its timer keeps the GPU ahead of Python, so CPU load does not reach its times): eager
# rows take seconds, each torch.compile configuration compiles afresh (max-autotune); none
# starts after PYTORCH_BUDGET (150 s) minus the longest so far (--compile-budget), and each
# configuration left out gets a row with an empty ms and a note saying so.
# The sweeps start after both; each gets a share of the time left before BUDGET (520 s from
# the start) by its estimate, as its timeout: a sweep stopped there keeps its finished layers
# (it writes its CSV after each layer). Total: the build or PyTorch, whichever is longer
# (~150-200 s), ~15 s of raw ncu, ~275 s of sweeps: about 8 minutes; never past ~9.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh
device_out out/profile
B=build-device
C=$B/convstudy
BUDGET=${BUDGET:-520}
PYTORCH_BUDGET=${PYTORCH_BUDGET:-150}
TMP=$(mktemp -d /tmp/device_profile.XXXXXX)
status=0
stamp "device: $(nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader)"
stamp "git: $(device_rev)"

pt_pid=
if ((PYTORCH_BUDGET <= 0)); then
    stamp "PYTORCH_BUDGET=0: no PyTorch rows"
elif python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    stamp "PyTorch eager + torch.compile (fp16, N=128, NHWC then NCHW), beside the build"
    PYTHONUNBUFFERED=1 timeout $((PYTORCH_BUDGET + 60)) python3 scripts/pytorch_anchors.py "$OUT/pytorch.csv" \
        --batches 128 --precisions fp16 --no-s2d --compile-batches 128 --compile-precisions fp16 \
        --compile-layouts nhwc,nchw --compile-budget "$PYTORCH_BUDGET" >"$TMP/pytorch.txt" 2>&1 &
    pt_pid=$!
else
    stamp "no python3 with torch and CUDA: no PyTorch rows"
fi

stamp "build (niced while PyTorch runs)"
if ! (renice -n 10 -p "$BASHPID" >/dev/null; BUILD_LOG="$TMP/build.log" device_build $B convstudy); then
    [[ -n $pt_pid ]] && kill "$pt_pid"
    exit 1
fi
grep -cE "spill stores [1-9]" "$TMP/build.log" | sed 's/^/ptxas: kernels with spill stores: /'
if [[ ${TESTS:-0} == 1 ]]; then
    stamp "build and run the GPU tests (TESTS=1)"
    if BUILD_LOG="$TMP/build_tests.log" device_build $B convstudy_gpu_tests; then
        CONVSTUDY_REQUIRE_GPU=1 timeout 200 "$B/tests/convstudy_gpu_tests" "[gpu]" \
            >>"$(device_log_head "$OUT/gpu_tests.log")" 2>&1 || status=1
        grep -E "test cases|FAILED" "$OUT/gpu_tests.log" | tail -8
    else
        status=1
    fi
fi

if [[ -n $pt_pid ]]; then
    stamp "waiting for PyTorch"
    wait "$pt_pid" || { echo "pytorch_anchors.py: rc $?"; status=1; }
    sed -n '/^PyTorch /,$p' "$TMP/pytorch.txt"
    grep -E "compile .* s with compilation|not compiled|failed" "$TMP/pytorch.txt" | head -30
fi

NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
stamp "ncu: $NCU ($("$NCU" --version 2>&1 | tail -1)); its tensor-pipe counters on this device:"
"$NCU" --query-metrics 2>&1 | grep -E "^sm__(pipe_tensor|inst_executed_pipe_tensor)" | cut -c1-150
# The counters `profile` reads, raw from ncu on a wgmma kernel (the file) and an mma.sync one
# (the log): which of them move for which instruction.
M=gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active
M=$M,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
M=$M,sm__inst_executed_pipe_tensor_op_gmma.sum,sm__inst_executed_pipe_tensor_op_hmma.sum,dram__bytes_read.sum
M=$M,launch__registers_per_thread
for v in hopper-ws-fp16:nhwc split-tf32:nchw; do
    stamp "ncu on $v conv2 N=128, filtered by the NVTX range"
    timeout 60 "$NCU" --csv --print-units base --clock-control none --nvtx --nvtx-include "convstudy@timed kernels/" \
        --metrics "$M" --log-file "$TMP/ncu_${v%%:*}.csv" "$C" run --variant "${v%%:*}" --layer conv2 --batch 128 \
        --layout "${v##*:}" --check sampled --no-cpu-timing --warmup 2 --repeats 1 --profile-target >/dev/null ||
        status=1
    grep -v "^==" "$TMP/ncu_${v%%:*}.csv" | cut -d, -f5,13- | cut -c1-200
done
[[ -f $TMP/ncu_hopper-ws-fp16.csv ]] && cp "$TMP/ncu_hopper-ws-fp16.csv" "$OUT/ncu_raw_conv2.csv"

COMMON=(--batch 128 --memory pageable --check sampled --no-cpu-timing --profile --metrics default --quiet)
HOPPER=hopper-wgmma-fp16,hopper-tma-fp16,hopper-ws-fp16,hopper-pp-fp16,hopper-tmastore-fp16,hopper-sk-fp16,hopper-tail-fp16,hopper-mc-fp16,hopper-mca-fp16
HOPPER=$HOPPER,cudnn-fp16,cudnn-fp16-s2d
FP32_NHWC=hopper-ws-3xtf32,hopper-ws-3xfp16,cudnn-fp32
FP32_NCHW=simt-gemm,split-tf32,winograd-f2x2,winograd-f4x4,winograd-f3x3-5x5,winograd-3xfp16-f3x3-5x5
FP32_NCHW=$FP32_NCHW,winograd-3xfp16-wgmma-f3x3-5x5,winograd-3xfp16-wgmma-ws-f3x3-5x5
# name, estimated seconds (the shares), layout, variants
SWEEPS=("hopper 140 nhwc $HOPPER" "fp32_nhwc 65 nhwc $FP32_NHWC" "fp32_nchw 70 nchw $FP32_NCHW")
# PROFILE_SWEEPS: the sweeps to run, by name (default all three)
PROFILE_SWEEPS=${PROFILE_SWEEPS:-"hopper fp32_nhwc fp32_nchw"}
left_est=0
for spec in "${SWEEPS[@]}"; do
    read -r name est _ <<<"$spec"
    [[ " $PROFILE_SWEEPS " == *" $name "* ]] && left_est=$((left_est + est))
done
for spec in "${SWEEPS[@]}"; do
    read -r name est layout variants <<<"$spec"
    [[ " $PROFILE_SWEEPS " == *" $name "* ]] || continue
    left=$((BUDGET - ($(date +%s) - device_t0)))
    secs=$((left * est / left_est))
    left_est=$((left_est - est))
    if ((secs < 20)); then
        stamp "sweep $name: not run, ${left}s left of BUDGET=$BUDGET"
        status=1
        continue
    fi
    stamp "sweep --profile $name ($layout, ${secs}s at most, ~${est}s estimated)"
    timeout "$secs" "$C" sweep --variants "$variants" --layout "$layout" "${COMMON[@]}" \
        --csv "$TMP/$name.csv" --kernels-csv "$TMP/kernels_$name.csv" >"$TMP/$name.txt" 2>&1
    rc=$?
    ((rc == 124)) && echo "sweep $name: stopped at ${secs}s; the CSV keeps the layers finished by then"
    ((rc)) && status=1
    tail -2 "$TMP/$name.txt"
    grep -E " (FAIL|ERROR) |ncu failed|error" "$TMP/$name.txt" | head -20
done

[[ -f $TMP/hopper.csv ]] && cp "$TMP/hopper.csv" "$OUT/hopper_ladder.csv"
if [[ -f $TMP/fp32_nhwc.csv && -f $TMP/fp32_nchw.csv ]]; then
    "$C" merge "$TMP/fp32_nhwc.csv" "$TMP/fp32_nchw.csv" -o "$OUT/fp32_ladder.csv" || status=1
elif [[ -f $TMP/fp32_nhwc.csv ]]; then
    cp "$TMP/fp32_nhwc.csv" "$OUT/fp32_ladder.csv"
fi
# the per-kernel CSVs: one header (the union of their columns), rows in sweep order
python3 - "$OUT/kernels.csv" "$TMP"/kernels_{hopper,fp32_nhwc,fp32_nchw}.csv <<'PY' || status=1
import csv, os, sys
parts = [p for p in sys.argv[2:] if os.path.exists(p)]
rows, cols = [], []
for p in parts:
    with open(p, newline="") as f:
        r = csv.DictReader(f)
        cols += [c for c in r.fieldnames or [] if c not in cols]
        rows += list(r)
if rows:
    with open(sys.argv[1], "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
print(f"kernels.csv: {len(rows)} kernels from {len(parts)} sweeps")
PY

stamp "summary"
python3 - "$OUT"/hopper_ladder.csv "$OUT"/fp32_ladder.csv <<'PY' || status=1
import csv, os, sys
for p in sys.argv[1:]:
    if not os.path.exists(p):
        print(f"{p}: missing")
        continue
    rows = list(csv.DictReader(open(p, newline="")))
    st = {}
    for r in rows:
        st[r["status"]] = st.get(r["status"], 0) + 1
    prof = [r for r in rows if r["status"] == "PASS" and r.get("ncu_kernels")]
    print(f"{os.path.basename(p)}: {len(rows)} rows {st}, {len(prof)} profiled")
    print(f"  {'layer':<6} {'variant':<34} {'layout':<5} {'kernel_ms':>9} {'tensor%':>7} {'gmma%':>6} {'hmma%':>6} "
          f"{'fma%':>6} {'dramMB':>8} {'regs':>5}  note")
    for r in rows:
        if r["status"] != "PASS":
            continue
        mb = (float(r["ncu_dram_read_bytes"] or 0) + float(r["ncu_dram_write_bytes"] or 0)) / 1e6
        print(f"  {r['layer']:<6} {r['variant']:<34} {r['layout']:<5} {r['kernel_ms']:>9} {r['ncu_tensor_pct']:>7} "
              f"{r['ncu_gmma_pct']:>6} {r['ncu_hmma_pct']:>6} {r['ncu_fma_pct']:>6} {mb:8.1f} "
              f"{r['ncu_registers']:>5}  {r['ncu_note'][:80]}")
PY
rm -rf "$TMP"
n=$(find "$OUT" -type f | wc -l)
stamp "done, status $status, $n files in $OUT"
exit $status
