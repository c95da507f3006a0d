#!/usr/bin/env bash
# Second device call: the check alone, with the system cuDNN and then with PyTorch's (9.19).
out=${1:-/tmp/cg_out}
mkdir -p "$out"
tools/dev/cudnn_graph/build.sh /tmp/cg_check >"$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 1; }
timeout 40 /tmp/cg_check "$out/graph.csv" >"$out/check.log" 2>&1; echo "check rc $?"
grep -E "^(conv|cases|device)" "$out/check.log" | cut -c1-100
lib=$(python3 -c "import os,nvidia.cudnn as c; print(os.path.join(os.path.dirname(c.__file__),'lib'))" 2>/dev/null)
[ -z "$lib" ] && lib=$(dirname "$(python3 -c "import torch,glob,os;print((glob.glob(os.path.join(os.path.dirname(torch.__file__),'lib','libcudnn.so*'))+[''])[0])")")
echo "torch cudnn lib: $lib"
if [ -n "$lib" ] && [ -e "$lib/libcudnn.so.9" ]; then
  LD_LIBRARY_PATH="$lib:$LD_LIBRARY_PATH" timeout 40 /tmp/cg_check "$out/graph919.csv" >"$out/check919.log" 2>&1; echo "check919 rc $?"
  grep -E "^(conv|cases)" "$out/check919.log" | cut -c1-100
fi
