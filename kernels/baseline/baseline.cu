// baseline — the study's "Mcpy" kernel (and, in managed memory, its "UM").
//
// Idea: the most direct mapping. An N x M grid (x: image, y: filter), one block per
// output plane, one thread per output element; the thread clears its output in global
// memory and then adds each of the K = C*R*S products to it there ("lots of access to
// global memory"). No pointer is __restrict__, so the compiler must assume the output
// may alias the inputs and keeps the load-add-store on global memory inside the loop:
// this is the cost the next variant (register accumulation, rla2m) removes.
//
// conv1's 55x55 plane exceeds 1024 threads, so there the block is 28x28 and each thread
// computes a 2x2 set of outputs, mapped coalesced (neighbouring threads write
// neighbouring outputs; see conv_shape.hpp).
//
// Expected: far from any roofline — two global accesses to the output per FMA, and
// every input element reloaded M times from L2. Measured: docs/findings.md, "The study's kernels".
//
// This file holds the kernel and the plan; the family's spec and supports() are host code,
// baseline_family.cpp.
#include "baseline_rungs.hpp"
#include "conv_shape.hpp"
#include "direct_taps.cuh"
#include "cuda_check.hpp"
#include "simple_plan.hpp"

#include <string>

namespace cs::gpu::variants {
namespace {

__global__ void baseline_kernel(const float* in, const float* w, float* out, ConvShape s, int t) {
    const int n = blockIdx.x, m = blockIdx.y;
    const float* in_n = in + std::int64_t(n) * s.C * s.H * s.W;
    const float* w_m = w + std::int64_t(m) * s.C * s.R * s.S;
    float* out_nm = out + (std::int64_t(n) * s.M + m) * s.E * s.F;
    for (int i = 0; i < t; ++i) {
        for (int j = 0; j < t; ++j) {
            int e, f;
            plane_coord<PlaneMapping::coalesced>(t, i, j, e, f);
            if (e >= s.E || f >= s.F) continue;
            GlobalSum sum(out_nm + e * s.F + f);  // the running sum lives in the output element
            dot(sum, in_n, w_m, s, e, f);
        }
    }
}

}  // namespace

std::unique_ptr<Plan> baseline_plan(const Problem& p, const PlanContext& ctx) {
    const ConvShape s = conv_shape(p.layer);
    const PlaneTiling tl = plane_tiling(s.E, s.F, ctx.prop.maxThreadsPerBlock);
    const std::string detail = "grid N x " + std::to_string(s.M) + ", block " + std::to_string(tl.bx) + "x" +
                               std::to_string(tl.by) + ", " + std::to_string(tl.t * tl.t) + " outputs/thread";
    return make_simple_plan(
        [s, tl](const DeviceIO& io, cudaStream_t stream) {
            const dim3 grid(unsigned(io.N), unsigned(s.M));
            const dim3 block(unsigned(tl.bx), unsigned(tl.by));
            baseline_kernel<<<grid, block, 0, stream>>>(static_cast<const float*>(io.in),
                                                         static_cast<const float*>(io.w),
                                                         static_cast<float*>(io.out), s, tl.t);
            CS_CUDA_CHECK_LAUNCH();
        },
        detail);
}

}  // namespace cs::gpu::variants
