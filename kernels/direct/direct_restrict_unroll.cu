// restrict-unroll — __restrict__ pointers and the filter size as a compile-time
// parameter, so the filter loops unroll fully (course-project idea).
//
// Idea: the course report's last step was "tuning with __restrict__ + loop unroll": tell
// the compiler the input, filter and output never alias (it may keep values in registers
// across the output store and use the read-only load path, ld.global.nc), and make the
// filter size a compile-time constant so the r and s loops unroll completely: no loop
// counters or compares, the tap offsets become immediates of the load instructions, and
// the loads of a row are issued together instead of one per loop trip.
//
// Instances (the detail column says which ran):
//   unrolled R x S, stride st   R=S=11 st=4 (conv1), 5x5 st=1 (conv2), 3x3 st=1 (conv3-5):
//                               filter size and stride compile-time
//   unrolled R x S              11x11, 5x5, 3x3 with any other stride (runtime stride)
//   generic                     any other filter size: runtime R, S, stride, the same
//                               code with rolled loops (still __restrict__)
// The stride is a template parameter only for AlexNet's pairs: it enters once per output
// (ih0 = e*stride - pad), not per tap, so it changes little; the tap loops are what the
// unrolling is about.
//
// Otherwise this is register-acc (single_kernel.cu): the same N x M grid, block and
// coalesced mapping from plane_tiling (conv1: 28x28 threads, 2x2 outputs each), one
// filter per block, the sum in a register, the same (c, r, s) order. One addition that
// the unrolling makes cheap: an output whose window lies wholly inside the input (all of
// conv1, the interior of conv2-5) takes a path without any bounds check; border outputs
// take the checked path (both unrolled). Same products in the same order either way, so
// the output is bit-identical to register-acc.
//
// Prediction, per FMA: global 2 loads (input, coalesced; weight, one address per warp:
// a broadcast), shared 0, constant 0 — the same traffic as register-acc. What goes is
// the integer work: register-acc's inner trip is ~2 loads + 1 FMA + ~6 integer/branch
// instructions (index arithmetic, two bounds checks, loop counter); unrolled interior
// code is 2 loads + 1 FMA + ~0.3 address adds. Both are limited by the L1 load pipe at
// 2 requests per FMA, so the gain is capped: expect ~1.3-2x register-acc on conv2-5 at
// N=128 (the instruction issue limit falls away, the L1 limit stays), least on conv1
// whose strided input loads already make it L1-bound.
// Measured: docs/findings.md, "Direct and GEMM formulations".
//
// Resources (nvcc 13.0, sm_90, -Xptxas -v): every instance (11x11/4, 11x11, 5x5/1, 5x5,
// 3x3/1, 3x3, generic) 40 registers, 0 B shared, 0 B stack, no spills.
// Register cap: __maxnreg__(40), chosen so that two of conv1's 784-thread blocks (25
// warps x 40 x 32 = 32000 registers each) fit an SM's 65536 and a 1024-thread block
// always launches. With __launch_bounds__(1024) ptxas settled on 32 registers and spilled
// 4 bytes in the 11x11 instances; with __launch_bounds__(1024, 1) it took 64 (the
// unrolled loads hoisted) and conv1 would run one block per SM. make_plan still checks
// the kernel's attributes.
//
// This file holds the kernels and the plan; supports() is host code, direct_family.cpp
// (declared in direct_rungs.hpp).
#include "conv_shape.hpp"
#include "cuda_check.hpp"
#include "direct_rungs.hpp"
#include "error.hpp"
#include "simple_plan.hpp"
#include "variant.hpp"

#include <cstdint>
#include <string>

namespace cs::gpu::variants {
namespace {

constexpr int kMaxRegs = 40;  // see the file comment

// The K products of one output in the order (c, r, s). kR, kS > 0: compile-time filter,
// loops unrolled; 0: runtime. kInterior: the window lies inside the input, no checks.
template <int kR, int kS, bool kInterior>
__device__ __forceinline__ float dot(const float* __restrict__ in_n, const float* __restrict__ w_m,
                                     const ConvShape& s, int ih0, int iw0) {
    const int R = kR > 0 ? kR : s.R;
    const int S = kS > 0 ? kS : s.S;
    const int HW = s.H * s.W;
    float sum = 0.0f;
    for (int c = 0; c < s.C; ++c) {
        const float* __restrict__ x = in_n + c * HW;
        const float* __restrict__ wc = w_m + c * R * S;
        if constexpr (kR > 0 && kS > 0) {
#pragma unroll
            for (int r = 0; r < kR; ++r) {
                const int ih = ih0 + r;
                if constexpr (!kInterior) {
                    if (ih < 0 || ih >= s.H) continue;
                }
                const float* __restrict__ xr = x + ih * s.W;
#pragma unroll
                for (int q = 0; q < kS; ++q) {
                    const int iw = iw0 + q;
                    if constexpr (!kInterior) {
                        if (iw < 0 || iw >= s.W) continue;
                    }
                    sum = fmaf(xr[iw], wc[r * kS + q], sum);
                }
            }
        } else {
            for (int r = 0; r < R; ++r) {
                const int ih = ih0 + r;
                if constexpr (!kInterior) {
                    if (ih < 0 || ih >= s.H) continue;
                }
                const float* __restrict__ xr = x + ih * s.W;
                for (int q = 0; q < S; ++q) {
                    const int iw = iw0 + q;
                    if constexpr (!kInterior) {
                        if (iw < 0 || iw >= s.W) continue;
                    }
                    sum = fmaf(xr[iw], wc[r * S + q], sum);
                }
            }
        }
    }
    return sum;
}

// kR = kS = 0: generic. kStride = 0: runtime stride.
template <int kR, int kS, int kStride>
__global__ void __maxnreg__(kMaxRegs)
    restrict_unroll_kernel(const float* __restrict__ in, const float* __restrict__ w, float* __restrict__ out,
                           ConvShape s, int t) {
    const int n = blockIdx.x, m = blockIdx.y;
    const int R = kR > 0 ? kR : s.R;
    const int S = kS > 0 ? kS : s.S;
    const int stride = kStride > 0 ? kStride : s.stride;
    const float* __restrict__ in_n = in + std::int64_t(n) * s.C * s.H * s.W;
    const float* __restrict__ w_m = w + std::int64_t(m) * s.C * R * S;
    float* __restrict__ out_nm = out + (std::int64_t(n) * s.M + m) * s.E * s.F;
    for (int i = 0; i < t; ++i) {
        for (int j = 0; j < t; ++j) {
            int e, f;
            plane_coord<PlaneMapping::coalesced>(t, i, j, e, f);
            if (e >= s.E || f >= s.F) continue;
            const int ih0 = e * stride - s.pad, iw0 = f * stride - s.pad;
            const bool interior = ih0 >= 0 && iw0 >= 0 && ih0 + R <= s.H && iw0 + S <= s.W;
            out_nm[e * s.F + f] = interior ? dot<kR, kS, true>(in_n, w_m, s, ih0, iw0)
                                           : dot<kR, kS, false>(in_n, w_m, s, ih0, iw0);
        }
    }
}

using KernelFn = void (*)(const float*, const float*, float*, ConvShape, int);

struct Instance {
    KernelFn kernel;
    std::string name;
};

Instance pick(const ConvShape& s) {
    const std::string rs = std::to_string(s.R) + "x" + std::to_string(s.S);
    const std::string st = std::to_string(s.stride);
    auto unrolled = [&](KernelFn k, bool stride_ct) {
        return Instance{k, "unrolled " + rs + ", stride " + st + (stride_ct ? " (compile-time)" : " (runtime)")};
    };
    if (s.R == 11 && s.S == 11)
        return s.stride == 4 ? unrolled(restrict_unroll_kernel<11, 11, 4>, true)
                             : unrolled(restrict_unroll_kernel<11, 11, 0>, false);
    if (s.R == 5 && s.S == 5)
        return s.stride == 1 ? unrolled(restrict_unroll_kernel<5, 5, 1>, true)
                             : unrolled(restrict_unroll_kernel<5, 5, 0>, false);
    if (s.R == 3 && s.S == 3)
        return s.stride == 1 ? unrolled(restrict_unroll_kernel<3, 3, 1>, true)
                             : unrolled(restrict_unroll_kernel<3, 3, 0>, false);
    return Instance{restrict_unroll_kernel<0, 0, 0>, "generic (runtime " + rs + ", stride " + st + ")"};
}

}  // namespace

// ---- the plan (the spec and supports(): direct_family.cpp) ----

std::unique_ptr<Plan> restrict_unroll_plan(const Problem& p, const PlanContext& ctx) {
    const ConvShape s = conv_shape(p.layer);
    const PlaneTiling tl = plane_tiling(s.E, s.F, ctx.prop.maxThreadsPerBlock);
    const Instance inst = pick(s);
    cudaFuncAttributes fa{};
    CS_CUDA_CHECK(cudaFuncGetAttributes(&fa, inst.kernel));
    if (fa.maxThreadsPerBlock < tl.threads())
        throw Skip("the kernel can launch at most " + std::to_string(fa.maxThreadsPerBlock) +
                   " threads per block (registers); the plane needs " + std::to_string(tl.threads()));
    const std::string detail = "instance: " + inst.name + "; grid N x " + std::to_string(s.M) + ", block " +
                               std::to_string(tl.bx) + "x" + std::to_string(tl.by) + ", " +
                               std::to_string(tl.t * tl.t) + " outputs/thread (coalesced), sum in a register, " +
                               "unchecked path for interior windows";
    const KernelFn kernel = inst.kernel;
    return make_simple_plan(
        [kernel, s, tl](const DeviceIO& io, cudaStream_t stream) {
            if (io.N <= 0) return;
            const dim3 grid(unsigned(io.N), unsigned(s.M));
            const dim3 block(unsigned(tl.bx), unsigned(tl.by));
            kernel<<<grid, block, 0, stream>>>(static_cast<const float*>(io.in), static_cast<const float*>(io.w),
                                               static_cast<float*>(io.out), s, tl.t);
            CS_CUDA_CHECK_LAUNCH();
        },
        detail);
}

}  // namespace cs::gpu::variants
