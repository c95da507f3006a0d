// half-baseline — the study's "halfprecision": the baseline (Mcpy) kernel on half data.
//
// Idea: the same kernel as baseline.cu — N x M grid, one thread per output (t x t on
// planes larger than a block), the running sum kept in the output element in global
// memory — with inputs, weights and outputs stored as IEEE half (DType::f16) on the device.
// The study copied halves, so its h2d/d2h halved (its Table 3: copies ~0.75x, kernel
// ~0.9x of Mcpy). Here the host holds float, as every user's would: the copies carry
// float, and the harness converts on the GPU after the copy in and before the copy out
// (bench/convert.cu), timed as convert_ms, inside total_ms and outside kernel_ms. (Until
// 2026-11-23 the harness converted on the host in set-up, which hid that cost; the rows
// measured before then carried half copies and no conversion.) The kernel itself only
// reads and writes halves.
//
// Accumulation in half (precision class fp16acc): the baseline's running sum lives in the
// output element, and the output is half, so every step is a half FMA (__hfma: one
// rounding to half per product-and-add) on the half stored in global memory — the study's
// kernel did its arithmetic on halves too. Accumulating in float would need the sum in a
// register, which is rla2m's idea, not this one; that combination is left to the
// fp16-input variants of the other families.
//
// Prediction, in global accesses per FMA: the baseline's 2 loads + 1 store (the sum is
// stored every step; the next loads may alias it, so none is issued ahead of the store),
// each of 2 bytes instead of 4. The kernel is bound by that serial load latency, not by
// bytes, so kernel_ms should stay close to the baseline's (within ~15%), while the copies
// halve: total_ms drops most where copies dominate (conv1), less elsewhere.
// Uncoalesced twin (conv1): a latency-bound chain, so the mapping should matter less here
// than in the register-sum variants.
// (A first H200 check: the kernel gained a little more than predicted at N=32 and 128; the
// copies about halve, as predicted.)
// Measured: docs/findings.md, "The study's kernels".
//
// Resources (nvcc 13.0, sm_90, -Xptxas -v; no spills, no stack/local memory):
//   half_baseline_kernel coalesced / uncoalesced: 32 / 32 registers, 0 shared memory.
//
// This file holds the kernel and the plans; the rungs' spec and supports() are host code,
// single_kernel_family.cpp (declared in single_kernel_rungs.hpp).
#include "conv_shape.hpp"
#include "direct_taps.cuh"
#include "cuda_check.hpp"
#include "error.hpp"
#include "simple_plan.hpp"
#include "single_kernel_rungs.hpp"
#include "variant.hpp"

#include <cuda_fp16.h>

#include <cstdint>
#include <string>

namespace cs::gpu::variants {
namespace {

template <PlaneMapping kMap>
__global__ void __launch_bounds__(1024)
    half_baseline_kernel(const __half* in, const __half* w, __half* out, ConvShape s, int t) {
    const int n = blockIdx.x, m = blockIdx.y;
    const __half* in_n = in + std::int64_t(n) * s.C * s.H * s.W;
    const __half* w_m = w + std::int64_t(m) * s.C * s.R * s.S;
    __half* out_nm = out + (std::int64_t(n) * s.M + m) * s.E * s.F;
    for (int i = 0; i < t; ++i) {
        for (int j = 0; j < t; ++j) {
            int e, f;
            plane_coord<kMap>(t, i, j, e, f);
            if (e >= s.E || f >= s.F) continue;
            HalfGlobalSum sum(out_nm + e * s.F + f);  // the half running sum in the output element
            dot(sum, in_n, w_m, s, e, f);
        }
    }
}

template <PlaneMapping kMap>
std::unique_ptr<Plan> plan(const Problem& p, const PlanContext& ctx) {
    const ConvShape s = conv_shape(p.layer);
    const PlaneTiling tl = plane_tiling(s.E, s.F, ctx.prop.maxThreadsPerBlock);
    cudaFuncAttributes fa{};
    CS_CUDA_CHECK(cudaFuncGetAttributes(&fa, half_baseline_kernel<kMap>));
    if (fa.maxThreadsPerBlock < tl.threads())
        throw Skip("the kernel can launch at most " + std::to_string(fa.maxThreadsPerBlock) +
                   " threads per block (registers); the plane needs " + std::to_string(tl.threads()));
    const std::string detail = "grid N x " + std::to_string(s.M) + ", block " + std::to_string(tl.bx) + "x" +
                               std::to_string(tl.by) + ", " + std::to_string(tl.t * tl.t) + " outputs/thread (" +
                               (tl.t == 1 ? "1 per thread: mappings identical"
                                          : kMap == PlaneMapping::coalesced ? "coalesced" : "uncoalesced") +
                               "), half data, half sum in global memory";
    return make_simple_plan(
        [s, tl](const DeviceIO& io, cudaStream_t stream) {
            if (io.N <= 0) return;
            const dim3 grid(unsigned(io.N), unsigned(s.M));
            const dim3 block(unsigned(tl.bx), unsigned(tl.by));
            half_baseline_kernel<kMap><<<grid, block, 0, stream>>>(static_cast<const __half*>(io.in),
                                                                    static_cast<const __half*>(io.w),
                                                                    static_cast<__half*>(io.out), s, tl.t);
            CS_CUDA_CHECK_LAUNCH();
        },
        detail);
}

}  // namespace

std::unique_ptr<Plan> half_baseline_plan(const Problem& p, const PlanContext& ctx) {
    return plan<PlaneMapping::coalesced>(p, ctx);
}
std::unique_ptr<Plan> half_baseline_uncoalesced_plan(const Problem& p, const PlanContext& ctx) {
    return plan<PlaneMapping::uncoalesced>(p, ctx);
}

}  // namespace cs::gpu::variants
