#!/usr/bin/env bash
# scripts/deps.sh on a machine whose package registry cannot be reached (the GPU machine): it
# tries one install of everything missing and one `apt-get update`, then nothing more, reports
# the packages it could not install and exits 0 so that the build goes on. Fake dpkg-query,
# apt-get, sudo and id stand in for the system's (every package missing, every apt-get failing).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
cat > "$tmp/bin/dpkg-query" <<'X'
#!/bin/sh
exit 1
X
cat > "$tmp/bin/apt-get" <<X
#!/bin/sh
echo "\$*" >> "$tmp/calls"
exit 100
X
cat > "$tmp/bin/id" <<'X'
#!/bin/sh
echo 0
X
chmod +x "$tmp/bin/"*
# Only the fakes and the basic tools: no cmake, ninja or shellcheck command either.
mkdir "$tmp/sys"
for t in bash sh env grep cat rm mkdir dirname; do ln -s "$(command -v "$t")" "$tmp/sys/$t"; done
out=$(PATH="$tmp/bin:$tmp/sys" bash "$root/scripts/deps.sh" 2>&1) || { echo "deps.sh failed: $out"; exit 1; }
calls=$(cat "$tmp/calls")
n_update=$(grep -c '^update' <<<"$calls" || true)
n_install=$(grep -c '^install' <<<"$calls" || true)
[[ $n_update == 1 ]] || { echo "expected one apt-get update, got $n_update: $calls"; exit 1; }
[[ $n_install == 1 ]] || { echo "expected one apt-get install (of everything), got $n_install: $calls"; exit 1; }
grep -q "cannot be reached" <<<"$out" || { echo "no word on the registry: $out"; exit 1; }
grep -q "optional package shellcheck is not installed" <<<"$out" || { echo "missing packages not reported: $out"; exit 1; }
grep -q "packages not installed: cmake" <<<"$out" || { echo "missing required packages not reported: $out"; exit 1; }
echo "deps_offline: one install, one update, then nothing more; missing packages reported"
