#!/usr/bin/env bash
# Debug call for the full-width space-to-depth transform in the Hopper family: where does
# `convstudy run` (hopper-tmastore-fp16, conv1 NHWC N=1) exit with status 1 and no message?
# The device machine has no gdb: tools/dev/exittrace.c prints a backtrace at exit / _exit.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=scripts/device_lib.sh
source scripts/device_lib.sh
device_out out/debug
B=build-device
C=$B/convstudy
BUILD_LOG=/tmp/build-dbg.log device_build $B convstudy || exit 1
$C generate --batch 1 --only conv1 --out golden --quiet
gcc -shared -fPIC -o /tmp/exittrace.so tools/dev/exittrace.c -ldl || exit 1
LD_PRELOAD=/tmp/exittrace.so $C run --variant hopper-tmastore-fp16 --layer conv1 --batch 1 --layout nhwc >/tmp/r.txt 2>&1
echo "exit $?"
head -60 /tmp/r.txt
grep -o "convstudy(+0x[0-9a-f]*)" /tmp/r.txt | sed 's/.*(+\(0x[0-9a-f]*\))/\1/' | head -30 |
    xargs -r addr2line -f -C -e $C 2>/dev/null | paste - - | head -30
