#!/usr/bin/env bash
# One device call: build the check while PyTorch's anchors run, then the check, then the join.
# Usage (repository root, on the GPU machine): tools/dev/cudnn_graph/device.sh OUTDIR
out=${1:-/tmp/cg_out}
mkdir -p "$out"
python3 -c "import torch;print('torch', torch.__version__, 'cudnn', torch.backends.cudnn.version())" 2>&1
ls /usr/lib/x86_64-linux-gnu/libcudnn.so.* /usr/local/cuda/lib64/libcudnn.so.* 2>/dev/null | head -3
(tools/dev/cudnn_graph/build.sh /tmp/cg_check >"$out/build.log" 2>&1; echo "build rc $?" >>"$out/build.log") &
bp=$!
PYTHONUNBUFFERED=1 timeout "${PT_TIMEOUT:-80}" python3 scripts/pytorch_anchors.py "$out/pt.csv" >"$out/pt.log" 2>&1
echo "pytorch rc $?"; tail -n 45 "$out/pt.log"
wait $bp; tail -n 3 "$out/build.log"
timeout "${CHECK_TIMEOUT:-70}" /tmp/cg_check "$out/graph.csv" >"$out/check.log" 2>&1
echo "check rc $?"; grep -E "^(conv|ceil|gemm|cases|device)" "$out/check.log" | cut -c1-150
python3 tools/dev/cudnn_graph/compare.py "$out/graph.csv" "$out/pt.csv" 2>&1 | tee "$out/compare.txt" | cut -c1-170
