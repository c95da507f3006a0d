#!/usr/bin/env bash
# SASS of the tensor-core Winograd kernels (this machine has no cuobjdump: run on the GPU
# machine after a build): the listing of each, gzipped, and an opcode histogram of each one's
# main loop (between the first and last BAR.SYNC) on stdout.
#   tools/dev/winograd_tc_sass.sh BUILD_DIR OUT_DIR
set -euo pipefail
B=$1 OUT=$2
mkdir -p "$OUT"
cuobjdump -sass "$B/convstudy" > /tmp/all_sass.txt
for k in wtc_wgmma_kernel wtc_main_kernel wtc_input_kernel; do
    awk -v k="$k" '/Function : /{f = index($0, k) > 0} f' /tmp/all_sass.txt > "/tmp/$k.sass"
    echo "== $k: $(grep -c '^ */\*[0-9a-f]*\*/' "/tmp/$k.sass") instructions"
    awk '/BAR.SYNC/{n++} {print n+0, $0}' "/tmp/$k.sass" | awk '$1 >= 1' | grep -oE '\*/ +[A-Z][A-Z0-9_.]*' \
        | awk '{split($2, o, "."); c[o[1]]++} END {for (x in c) printf "%6d %s\n", c[x], x}' | sort -rn | head -25
    gzip -c "/tmp/$k.sass" > "$OUT/$k.sass.gz"
done
