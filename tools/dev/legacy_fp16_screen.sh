#!/usr/bin/env bash
# The cudnn-legacy-fp16 row on the odd 5x5 shape (odd_c33_5x5, N=1), planned afresh N times:
# which algorithm each process chooses, its error on the golden data (max_bound_ratio) and what
# the plan's accuracy screen passed over. Its algorithm choice varies between processes (Find
# timings); one of them used to break the per-element bound (NOTES.md, reliability findings).
# Run on the GPU machine after a build:  tools/dev/legacy_fp16_screen.sh [BUILD_DIR] [N]
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build-device}
RUNS=${2:-12}
T=${TMPDIR:-/tmp}/legacy_fp16_screen
mkdir -p "$T"
# The odd shapes, as scripts/sanitize.sh (and tests/gpu/gpu_test_util.hpp) define them.
sed -n "/^cat >\"\$ODD_TABLE\" <<'EOF'/,/^EOF/p" scripts/sanitize.sh | sed '1d;$d' >"$T/odd.json"
"$B/convstudy" generate --layers "$T/odd.json" --only odd_c33_5x5 --batch 1 --out "$T/golden" --quiet --no-cpu-timing \
    --no-onednn >/dev/null || exit 1
for i in $(seq 1 "$RUNS"); do
    "$B/convstudy" sweep --table "$T/odd.json" --golden "$T/golden" --layers odd_c33_5x5 --variants cudnn-legacy-fp16 \
        --batch 1 --repeats 0 --csv "$T/run$i.csv" --quiet >/dev/null 2>&1
    python3 - "$T/run$i.csv" <<'PY'
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))[0]
d = r["detail"]
print(r["status"], "bound ratio", r["max_bound_ratio"][:5], "|", d.split(",")[0], "|",
      d[d.find("err"):].split(" (")[0], "|", d[d.find("passed over"):][:160] if "passed over" in d else "")
PY
done
