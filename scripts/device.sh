#!/usr/bin/env bash
# The one runner for the GPU machine: runs a plan (plans/NAME.json, docs/cli.md "Plans") step
# by step. An experiment is a plan file, not a script.
#
#   scripts/device.sh plans/reference.json
#   OUT=/tmp/out CONVSTUDY_GIT_REV=$(git describe --always --dirty) scripts/device.sh plans/goals.json
#
# The plan's first step is its build: the runner configures and builds convstudy with that
# step's preset and cmake_args, has `convstudy plan check` validate the plan and
# `convstudy plan steps` turn every step into its commands, then runs them in order (the
# build step's own commands first: the rest of its targets). Each step's output goes to its
# log in $OUT (build.log, gpu_tests.log, stepNN-KIND.log), its CSVs and summaries beside them;
# the console and $OUT/log.txt get one line per step with its wall time and the log's last
# lines; a copy of the plan goes there too (plan-NAME.json). The first failing step (non-zero
# exit, or past its timeout_s) stops the plan with a message naming the step, its exit code
# and its log; what earlier steps wrote stays in $OUT.
#
# Environment:
#   OUT                where everything goes (default out/)
#   BUILD_DIR          the build folder (default build-device)
#   PREBUILT           set: the build steps are skipped and the programs already in BUILD_DIR
#                      run (a build carried from a machine without a GPU, made from this tree,
#                      configured with CONVSTUDY_GIT_REV set as here: another revision is refused)
#   STEPS              the steps to run, as indices (e.g. "1,3"); the build step always runs.
#                      Default: all. For a plan longer than one call of the GPU machine: the
#                      next call runs the rest on the machine the first one warmed. Sweep
#                      steps that share one process run the selected ones only (plan steps
#                      --steps).
#   CONVSTUDY_GIT_REV  the revision CSV rows record (the device tool copies the tree without
#                      .git); default: git describe here, else "unknown" with a warning
# Exit status: 0 when every step succeeded, 1 when one failed, 2 for a bad plan or usage.
set -uo pipefail
if (($# != 1)) || [[ $1 == -h || $1 == --help ]]; then
    sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
[[ -f $1 ]] || { echo "device: no plan file '$1'" >&2; exit 2; }
PLAN=$(realpath "$1")
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-out}
BUILD_DIR=${BUILD_DIR:-build-device}
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh
device_out "$OUT" || { echo "device: cannot create $OUT" >&2; exit 2; }
OUT=$(realpath "$OUT")
CONVSTUDY_GIT_REV=$(device_rev)
export CONVSTUDY_GIT_REV
[[ $CONVSTUDY_GIT_REV == unknown ]] &&
    echo "device: warning: no .git and no CONVSTUDY_GIT_REV: CSV rows will record revision 'unknown'"
stamp "device: $(device_gpu)"
stamp "git: $CONVSTUDY_GIT_REV; plan: $1; out: $OUT"
# The results name the plan that made them: a copy beside them.
cp "$PLAN" "$OUT/plan-$(basename "$PLAN")" || exit 2

# ---- bootstrap: the build step's configure, and convstudy (which reads the rest) --------
boot=$(python3 - "$PLAN" <<'PY'
import json, shlex, sys
try:
    steps = json.load(open(sys.argv[1]))["steps"]
    first = steps[0]
except Exception as e:
    sys.exit(f"device: {sys.argv[1]}: cannot read its first step: {e}")
if not isinstance(first, dict) or first.get("kind") != "build":
    sys.exit(f"device: {sys.argv[1]}: the first step must be the build step")
words = ["cmake", "--preset", first.get("preset", "device")] + list(first.get("cmake_args", []))
print(" ".join(shlex.quote(str(w)) for w in words))
PY
) || exit 2
configure=()
eval "configure=($boot)"
configure+=(-B "$BUILD_DIR")
t=$(date +%s)
if [[ -n ${PREBUILT:-} ]]; then
    # A build made elsewhere from this same tree (e.g. on a machine without a GPU, with the
    # plan's preset) and carried here: its programs run as they are; the build steps are skipped.
    [[ -x $BUILD_DIR/convstudy ]] || { stamp "device: PREBUILT is set but $BUILD_DIR/convstudy is missing"; exit 2; }
    version=$("$BUILD_DIR/convstudy" --version)
    stamp "bootstrap: PREBUILT: the programs in $BUILD_DIR as carried ($version)"
    # The rows record the revision the carried build was configured with, not CONVSTUDY_GIT_REV:
    # a build configured before its tree's commit would name another tree in every row.
    built=$(sed -n 's/.*(\(.*\))$/\1/p' <<<"$version")
    if [[ -n $built && $CONVSTUDY_GIT_REV != unknown && $built != "$CONVSTUDY_GIT_REV" ]]; then
        stamp "device: PREBUILT: the carried convstudy records revision $built, CONVSTUDY_GIT_REV is $CONVSTUDY_GIT_REV;"
        stamp "  its rows would name another tree: configure the carried build with CONVSTUDY_GIT_REV=$CONVSTUDY_GIT_REV"
        exit 2
    fi
elif ! { stamp "bootstrap: ${configure[*]}; build convstudy"
         "${configure[@]}" && cmake --build "$BUILD_DIR" --parallel --target convstudy; } >>"$OUT/build.log" 2>&1; then
    tail_indented "$OUT/build.log" 30
    stamp "device: the bootstrap build FAILED ($(($(date +%s) - t))s); its log: $OUT/build.log"
    exit 1
fi
stamp "bootstrap done ($(($(date +%s) - t))s)"
C=$BUILD_DIR/convstudy
"$C" plan check "$PLAN" || { stamp "device: the plan is not valid (above)"; exit 2; }
mapfile -t lines < <("$C" plan steps "$PLAN" --out "$OUT" --build-dir "$BUILD_DIR" ${STEPS:+--steps "$STEPS"})
((${#lines[@]})) || { stamp "device: convstudy plan steps printed nothing"; exit 2; }

# ---- the steps ------------------------------------------------------------------------
plan_t0=$(date +%s)
cur=""      # the step running: its index
step_t0=0
nsteps=0

# The end of step $cur: its wall time and what its log says.
finish_step() {
    local kind=$1 log=$2
    stamp "step $cur ($kind) done in $(($(date +%s) - step_t0))s; $OUT/$log:"
    case $kind in
    sweep) grep -E " (FAIL|ERROR) " "$OUT/$log" | head -20 | sed 's/^/    /' ;;
    gpu-tests) grep -E "test cases|assertions|tests passed|tests failed|FAILED" "$OUT/$log" | tail -6 | sed 's/^/    /' ;;
    ab) grep -E "^(A/B|A/A)|^  (missing|status change|unstable|slower|faster)" "$OUT/$log" | head -12 | sed 's/^/    /' ;;
    esac
    tail_indented "$OUT/$log" 3
}

prev_kind="" prev_log=""
words=()
shards=()  # the background shards of the step running (their PIDs)
for line in "${lines[@]}"; do
    eval "words=($line)"
    idx=${words[0]} kind=${words[1]} log=${words[2]} limit=${words[3]}
    cmd=("${words[@]:4}")
    if [[ $kind != build && -n ${STEPS:-} && ",$STEPS," != *",$idx,"* ]]; then
        [[ $idx != "$cur" ]] && stamp "step $idx ($kind): skipped, not in STEPS=$STEPS"
        cur=$idx prev_kind="" prev_log=""
        continue
    fi
    if [[ $kind == build && -n ${PREBUILT:-} ]]; then
        [[ $idx != "$cur" ]] && stamp "step $idx (build): skipped, PREBUILT"
        cur=$idx prev_kind="" prev_log=""
        continue
    fi
    if [[ $idx != "$cur" ]]; then
        [[ -n $cur && -n $prev_kind ]] && finish_step "$prev_kind" "$prev_log"
        cur=$idx
        step_t0=$(date +%s)
        nsteps=$((nsteps + 1))
        stamp "step $idx ($kind)$( ((limit > 0)) && echo ", ${limit}s at most"): log $OUT/$log"
        echo "# plan $(basename "$PLAN") step $idx ($kind)" >>"$OUT/$log"
        device_log_head "$OUT/$log" >/dev/null
    fi
    prev_kind=$kind prev_log=$log
    # "&" first: one of the step's shards, started in the background (one per GPU); "wait": all
    # of them done, the step failing when one failed (convstudy plan steps: kGpuParallel, kGpuWait)
    background=0
    [[ ${cmd[0]} == "&" ]] && background=1 cmd=("${cmd[@]:1}")
    shown=$(printf '%q ' "${cmd[@]}")
    echo "  \$ $shown$( ((background)) && echo "&")"
    echo "\$ $shown" >>"$OUT/$log"
    limited=()
    ((limit > 0)) && limited=(timeout --kill-after=30 "$limit")
    if [[ ${cmd[*]} == wait ]]; then
        rc=0
        for pid in "${shards[@]}"; do
            wait "$pid" || { r=$?; ((rc == 0)) && rc=$r; }
        done
        shards=()
    elif ((background)); then
        "${limited[@]}" "${cmd[@]}" >>"$OUT/$log" 2>&1 &
        shards+=($!)
        continue
    else
        "${limited[@]}" "${cmd[@]}" >>"$OUT/$log" 2>&1
        rc=$?
    fi
    if ((rc != 0)); then
        why="exit $rc"
        ((rc == 124 || rc == 137)) && ((limit > 0)) && why="stopped at its time limit of ${limit}s (exit $rc)"
        echo "---- $OUT/$log (tail) ----"
        tail -n 25 "$OUT/$log"
        stamp "device: step $idx ($kind) FAILED: $why after $(($(date +%s) - step_t0))s; its log: $OUT/$log." \
            "The plan stops here; what the steps before wrote is in $OUT"
        exit 1
    fi
done
[[ -n $prev_kind ]] && finish_step "$prev_kind" "$prev_log"
stamp "device: plan $(basename "$PLAN"): all $nsteps steps done in $(($(date +%s) - plan_t0))s; files in $OUT:"
find "$OUT" -maxdepth 1 -type f -printf '    %f (%s bytes)\n' | sort
exit 0
