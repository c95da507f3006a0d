#!/usr/bin/env bash
# Diagnostic builds on the GPU machine (modifies the working copy there: never commit its
# result): the wgmma Winograd main kernels at conv2 N=128 without the output stores, then also
# with the fold reduced to one output, to split the main kernels' time into MMA pipeline / fold /
# epilogue. The rows FAIL by construction (no timing then), so ncu measures each kernel once.
#   tools/dev/fp32fast/diag_epilogue_fold.sh BUILD_DIR
set -u
B=${1:-build-device}
dur() {
    for v in winograd-3xfp16-wgmma-f3x3-5x5 winograd-3xfp16-wgmma-ws-f3x3-5x5; do
        ncu --clock-control none -k regex:wtc_wgmma --section SpeedOfLight "$B/convstudy" run --variant $v \
            --layer conv2 --batch 128 --repeats 0 2>&1 | grep -E "^  void|Duration" | sed 's/(CUtensorMap.*//' | cut -c1-80
    done
}
echo "== as built"; dur
sed -i 's/if (i < o.ne \&\& j < o.nf) p\[/if (i < o.ne \&\& j < o.nf \&\& Y[i * MT + j][e] == 1234.5f) p[/' \
    gpu/variants/winograd_3xfp16.cuh
sed -i 's/o.base\[m \* EF + std::int64_t(yi) \* a.F + x\] = src\[/if (src[0] == 1234.5f) o.base[m * EF + std::int64_t(yi) * a.F + x] = src[/' \
    gpu/variants/hopper/winograd_wgmma.cuh
[[ $(cat gpu/variants/winograd_3xfp16.cuh gpu/variants/hopper/winograd_wgmma.cuh | grep -c "1234.5f") == 2 ]] ||
    echo "PATCH 1 NOT APPLIED"
cmake --build "$B" -j "$(nproc)" --target convstudy >/dev/null 2>&1 || echo "BUILD 1 FAILED"
echo "== no output stores"; dur
sed -i 's/if (c\[y\] != 0.0f) {/if (y == 0) {/' gpu/variants/winograd_3xfp16.cuh
grep -q "if (y == 0) {" gpu/variants/winograd_3xfp16.cuh || echo "PATCH 2 NOT APPLIED"
cmake --build "$B" -j "$(nproc)" --target convstudy >/dev/null 2>&1 || echo "BUILD 2 FAILED"
echo "== no output stores, fold into one output"; dur
