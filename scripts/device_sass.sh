#!/usr/bin/env bash
# SASS evidence of the Hopper rungs' instructions: for every kernel of ours (namespace
# cs::gpu) in the built binary, count the instructions that tell which hardware paths it
# uses — warpgroup MMA (HGMMA), TMA loads and stores (UTMALDG, UTMASTG, UTMACMDFLUSH),
# bulk copies (UBLKCP), multicast (.MULTICAST), mbarrier ops (SYNCS), cluster barriers
# (UCGABAR_*), register reallocation (USETMAXREG), async copies (LDGSTS), shared-memory
# matrix loads (LDSM) and tensor-core mma.sync (HMMA) — so NOTES.md can state, per rung,
# that the instruction the idea needs is in the code the GPU ran — and the subroutine calls
# (CALL: a 64-bit division is one), warp re-convergence points (WARPSYNC) and moves from
# vector to uniform registers (R2UR: e.g. wgmma descriptors built per thread) that tell a
# k-loop ptxas could not prove convergent or uniform. A last column, hgmma_shapes,
# lists each warpgroup-MMA shape with its count (e.g. 64x64x16:108), so a tile's wgmma
# width shows in the code too.
#
#   scripts/device_sass.sh BINARY OUT_CSV
#
# Needs cuobjdump and c++filt (the GPU machine's CUDA toolkit). One CSV row per kernel:
# kernel (demangled, shortened to 300 characters), then one count per instruction.
set -uo pipefail
if (($# != 2)); then
    sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
BIN=$1
CSV=$2
command -v cuobjdump >/dev/null || { echo "device_sass: cuobjdump not on PATH" >&2; exit 2; }
[[ -f $BIN ]] || { echo "device_sass: no binary $BIN" >&2; exit 2; }
cuobjdump -sass "$BIN" 2>/dev/null | awk -v csv="$CSV" '
BEGIN {
    n = split("HGMMA UTMALDG UTMASTG UTMACMDFLUSH UBLKCP MULTICAST SYNCS UCGABAR USETMAXREG LDGSTS LDSM HMMA CALL WARPSYNC R2UR", ins, " ")
    printf "kernel" > csv
    for (i = 1; i <= n; i++) printf ",%s", ins[i] > csv
    printf ",hgmma_shapes\n" > csv
}
function flush() {
    if (name == "" || name !~ /_ZN2cs3gpu/) return
    cmd = "c++filt \"" name "\""; cmd | getline dem; close(cmd)
    gsub(/"/, "", dem); gsub(/,/, ";", dem)
    printf "\"%s\"", substr(dem, 1, 300) > csv
    for (i = 1; i <= n; i++) printf ",%d", cnt[ins[i]] + 0 > csv
    sh = ""
    for (k in shp) sh = sh (sh == "" ? "" : " ") k ":" shp[k]
    printf ",%s\n", sh > csv
}
/Function : / { flush(); name = $3; delete cnt; delete shp; next }
/\/\*[0-9a-f]+\*\// {
    for (i = 1; i <= n; i++) if (index($0, ins[i])) cnt[ins[i]]++
    if (match($0, /HGMMA\.[0-9]+x[0-9]+x[0-9]+/)) shp[substr($0, RSTART + 6, RLENGTH - 6)]++
}
END { flush() }'
rows=$(($(wc -l <"$CSV") - 1))
echo "device_sass: $rows kernels of ours -> $CSV"
((rows > 0))
