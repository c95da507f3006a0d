#!/usr/bin/env bash
# compute-sanitizer over every registered variant: memcheck, racecheck, initcheck and
# synccheck, each running the GPU tests that cover every registry entry on small odd
# shapes and on the five AlexNet layers at N=1. The four tools run side by side (one
# process each) and their logs are concatenated into one file with a summary at the end.
#
#   scripts/sanitize.sh BUILD_DIR LOG [catch2 test filter]
# SANITIZE_SECONDS (default 600) bounds each tool's run; a tool stopped there is reported
# as such, with the errors it had found by then.
set -uo pipefail
B=${1:-build-device}
LOG=${2:-sanitizer.log}
FILTER=${3:-"[variants]"}
EXE="$B/tests/convstudy_gpu_tests"
[[ -x "$EXE" ]] || { echo "sanitize: $EXE not built" >&2; exit 2; }
tmp=$(mktemp -d)
pids=()
for tool in memcheck racecheck initcheck synccheck; do
    extra=()
    [[ $tool == memcheck ]] && extra=(--leak-check full)
    timeout "${SANITIZE_SECONDS:-600}" compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 99 --print-limit 20 \
        "$EXE" "$FILTER" --reporter compact >"$tmp/$tool.log" 2>&1 &
    pids+=($!)
done
status=0
i=0
: >"$LOG"
for tool in memcheck racecheck initcheck synccheck; do
    wait "${pids[$i]}"
    rc=$?
    i=$((i + 1))
    summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$tmp/$tool.log" | tail -1)
    tests=$(grep -E "test cases|All tests passed|assertions" "$tmp/$tool.log" | tail -1)
    note=""
    ((rc == 124)) && note=" (stopped at the time limit)"
    echo "== $tool: exit $rc$note; ${summary:-no summary}; ${tests:-no test summary}" >>"$LOG.summary"
    { echo "================ $tool (exit $rc)"; cat "$tmp/$tool.log"; } >>"$LOG"
    ((rc)) && status=1
done
cat "$LOG.summary" >>"$LOG"
cat "$LOG.summary"
rm -rf "$tmp" "$LOG.summary"
exit $status
