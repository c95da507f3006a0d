#!/usr/bin/env bash
# One device call for the cuDNN row that runs past its own engine search (NOTES.md "The goals
# on this tree, one call each, twice"): cudnn-bf16 on conv5 at N=128 NHWC ran 11-24% over the
# time the search measured for the configuration it chose, while cudnn-fp16 on the same
# configuration ran at it. The search times on its own uniform scratch tensors; the row times on
# the sweep's inputs. This call varies the row's data (generator seeds, and the input and weight
# scales, which move exponents only) in separate processes, each with the fp16 row and our
# bf16 row as controls, and prints each row's time beside its search's: a data-dependent gap
# moves with the seeds and scales, a protocol-dependent one does not.
#
#   OUT=$OUT CONVSTUDY_GIT_REV=<rev> scripts/device_anchor_ab.sh
#
# Outputs in $OUT: log.txt, anchor_<k>.csv per process. Time (H200): build ~250 s, ~15 s a process.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh
device_out out/anchor_ab
B=build-device
status=0
device_build_maybe_test anchor || exit 1  # TESTS=1: every GPU test first
k=0
for data in "--seed 20261123" "--seed 1" "--seed 2" "--seed 20261123 --input-scale 2^-4" \
    "--seed 20261123 --weight-scale 16" "--seed 20261123"; do
    k=$((k + 1))
    stamp "process $k: $data"
    # shellcheck disable=SC2086  # data: options
    timeout 90 "$B/convstudy" sweep --variants cudnn-bf16,cudnn-fp16,hopper-tmastore-bf16 --layers conv5 --batch 128 \
        --layout nhwc --memory pageable --check sampled --no-cpu-timing --repeats 50 --quiet $data \
        --csv "$OUT/anchor_$k.csv" >/dev/null 2>&1 || status=1
    python3 - "$OUT/anchor_$k.csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1], newline="")):
    s = float(r["search_ms"]) if r["search_ms"] else None
    k = float(r["kernel_ms"]) if r["status"] == "PASS" else None
    ratio = f"{k / s:.3f}" if k and s else "-"
    cfg = r["detail"].split(" [")[0][:70] if s else r["config"][:70]
    print(f"  {r['variant']:<22} {r['status']:<5} row {r['kernel_ms']:<9} search {s or '-':<8} row/search {ratio}  {cfg}")
PY
done
stamp "done, status $status"
exit $status
