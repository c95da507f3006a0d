#!/usr/bin/env bash
# scripts/device.sh's step loop with a stand-in convstudy (PREBUILT, no GPU needed): a step's
# shards (plan steps' "&" lines) run at once and "wait" waits for them all; a shard that fails
# fails its step and stops the plan, with the step's exit code in the message; the lines after a
# failed wait do not run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/build"
cat > "$tmp/build/convstudy" <<'X'
#!/usr/bin/env bash
case $1 in
--version) echo "stand-in 0" ;;
plan) cat <<'L'
0 build build.log 0 true
1 sweep s1.log 30 '&' sh -c 'sleep 2; echo shard-slow'
1 sweep s1.log 30 '&' sh -c 'echo shard-fast'
1 sweep s1.log 30 wait
1 sweep s1.log 30 echo merged
2 tune s2.log 30 '&' sh -c 'exit 3'
2 tune s2.log 30 '&' sh -c 'sleep 1'
2 tune s2.log 30 wait
2 tune s2.log 30 echo after-the-failed-wait
L
;;
esac
X
chmod +x "$tmp/build/convstudy"
echo '{"steps": [{"kind": "build", "preset": "device"}]}' > "$tmp/plan.json"
set +e
out=$(cd "$root" && OUT="$tmp/out" PREBUILT=1 BUILD_DIR="$tmp/build" CONVSTUDY_GIT_REV=test \
    timeout 60 bash scripts/device.sh "$tmp/plan.json" 2>&1)
rc=$?
set -e
fail() { echo "device_runner: $*"; echo "---- device.sh printed:"; echo "$out"; exit 1; }
((rc == 1)) || fail "exit $rc, expected 1 (step 2's shard failed)"
s1=$(cat "$tmp/out/s1.log")
# both shards ran, at once: the fast one's line before the slow one's, then the merge after both
fast=$(grep -n '^shard-fast$' <<<"$s1" | cut -d: -f1)
slow=$(grep -n '^shard-slow$' <<<"$s1" | cut -d: -f1)
merged=$(grep -n '^merged$' <<<"$s1" | cut -d: -f1)
[[ -n $fast && -n $slow && -n $merged ]] || fail "s1.log lacks a shard's or the merge's line: $s1"
((fast < slow && slow < merged)) || fail "the shards did not run at once, or the merge ran before them: $s1"
grep -q 'step 2 (tune) FAILED: exit 3' <<<"$out" || fail "no FAILED line naming step 2 and exit 3"
! grep -q 'after-the-failed-wait' "$tmp/out/s2.log" || fail "a command after the failed wait ran"
echo "device_runner: shards at once, the wait, a failing shard's step and exit code: as expected"

# A carried build that records another revision than CONVSTUDY_GIT_REV (configured before its
# tree's commit) is refused before any step: its rows would name another tree.
cat > "$tmp/build/convstudy" <<'X'
#!/usr/bin/env bash
[[ $1 == --version ]] && echo "convstudy 0.2.0 (abc-dirty)"
X
set +e
out=$(cd "$root" && OUT="$tmp/out2" PREBUILT=1 BUILD_DIR="$tmp/build" CONVSTUDY_GIT_REV=def \
    timeout 60 bash scripts/device.sh "$tmp/plan.json" 2>&1)
rc=$?
set -e
((rc == 2)) || fail "exit $rc for a carried build of another revision, expected 2"
grep -q 'records revision abc-dirty, CONVSTUDY_GIT_REV is def' <<<"$out" || fail "no line naming both revisions"
echo "device_runner: a carried build of another revision is refused"
