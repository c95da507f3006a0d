// single-kernel family — the study's rla2m, rswbdl2m (rswbdla2m), rswmtla2m and swso.
//
// Same launch as the baseline (an N x M grid, x: image, y: filter; one block per output
// plane; a block of plane_tiling(E, F) threads, t x t outputs per thread when the plane is
// larger than the block limit — conv1: 28x28 threads, 2x2 outputs each), the same loop
// over (c, r, s) with the same bounds checks, and the same FMA for every product, so
// each output is the same sum in the same order in every variant. They differ only in
// where the running sum and the filter live:
//
//   variant (study)          running sum           filter read from
//   register-acc (rla2m)     a register            global memory
//   shared-weights-one-      a register            shared memory, staged by ONE thread
//     loader (rswbdl2m)                            while the block waits at the barrier
//   shared-weights-many-     a register            shared memory, staged by many threads:
//     loaders (rswmtla2m)                          K = C*R*S threads one element each when
//                                                  K <= threads (conv1: 363 <= 784), else
//                                                  R*S threads one tap across all channels
//                                                  (conv2-5; a tap loop if R*S > threads)
//   shared-weights-shared-   shared memory, one    shared memory, staged by one thread
//     out (swso)             slot per output of
//                            the thread (volatile)
//
// Each has a twin `<name>-uncoalesced` that maps the t x t outputs of a thread onto an
// adjacent patch (PlaneMapping::uncoalesced) instead of strides of the block size; the
// study's Table 8. When t == 1 (conv2-5) the two mappings are the same computation.
// As in the baseline, no pointer is __restrict__: the read-only cache path is not what
// these variants study.
//
// Prediction, in global memory accesses per FMA. Baseline: 2 loads (input, weight) + 1
// store (the running sum; its PTX forwards the stored value instead of reloading it), and
// since the next loads may alias that store the compiler cannot issue them ahead of it:
// every FMA waits a full load latency.
//  - rla2m: 2 loads, 1/K stores, and no store in the loop, so the unrolled loads are
//    issued together. Removing the per-FMA store and the chain it imposes should be the
//    big step: several times faster than the baseline on every layer.
//  - rswbdl2m: 1 load (input) + 1 shared load (weight, a broadcast) per FMA, plus K
//    serial loads by one thread per block before anyone computes. Shared and L1 share
//    the same load pipe, so the per-FMA gain over rla2m is small, and the serial
//    staging (K = 2304..3456 dependent-latency loads on conv2-5, a few in flight) keeps
//    the block idle: slower than rla2m, most on conv3-5 (small blocks, large K).
//  - rswmtla2m: the same per-FMA traffic with staging spread over up to K threads: about
//    rla2m, a little better where the staging of rswbdl2m hurt.
//  - swso: as rswbdl2m plus a shared load and a shared store per FMA on a dependent chain
//    (volatile keeps the sum in shared memory, as the study meant): the slowest of the
//    family, still well ahead of the baseline's global chain.
//  - uncoalesced (conv1 only): neighbouring threads read inputs 2*stride*4 = 32 bytes
//    apart instead of 16 and write every other output, so each warp load touches twice
//    the sectors: expect the L1-bound variants 1.3-2x slower on conv1, identical elsewhere.
//  (A first H200 check contradicted the rswbdl2m line: from N=32 up the other resident
//  blocks hide the one-thread staging and it is as fast as rswmtla2m; only at N=1, with
//  nothing to hide it, do the many loaders win, on conv2-5.)
// Measured: docs/findings.md, "The study's kernels".
//
// Resources (nvcc 13.0, sm_90, -Xptxas -v; no spills, no stack/local memory in any):
//   kernel (coalesced / uncoalesced)    registers   static smem   dynamic smem
//   register-acc                          32 / 32        0           0
//   shared-weights-one-loader             32 / 32        0           C*R*S*4
//   shared-weights-many-loaders, element  31 / 31        0           C*R*S*4
//   shared-weights-many-loaders, tap      32 / 32        0           C*R*S*4
//   shared-weights-shared-out             31 / 32        0           C*R*S*4 + t*t*threads*4
// __launch_bounds__(1024) caps every kernel at 64 registers, so a 1024-thread block can
// always launch; make_plan still checks the kernel's attributes and skips if not.
//
// Shared memory: the filter needs C*R*S*4 bytes (conv2: 9.6 KB, conv4/5: 13.8 KB), swso
// adds t*t*threads*4 for the sums. It is dynamic shared memory; above the 48 KB default
// make_plan raises the kernel's limit with cudaFuncSetAttribute (outside timing), and
// above the device's opt-in limit supports() refuses with the reason.
//
// This file holds the kernels and the plans; the family's spec, supports() and the shared-memory
// need of each idea are host code, single_kernel_family.cpp (declared in single_kernel_rungs.hpp).
#include "conv_shape.hpp"
#include "direct_taps.cuh"
#include "cuda_check.hpp"
#include "error.hpp"
#include "simple_plan.hpp"
#include "single_kernel_rungs.hpp"

#include <cstdint>
#include <string>

namespace cs::gpu::variants {
namespace {

using sk::Accum;
using sk::Idea;

constexpr int kMaxThreads = 1024;  // the block limit of every CUDA device so far

// Where the filter is read from, and who stages it into shared memory.
enum class Weights {
    global,       // rla2m: straight from global memory
    one_loader,   // rswbdl2m, swso: thread 0 copies all K values
    per_element,  // rswmtla2m when K <= threads: thread k copies element k
    per_tap,      // rswmtla2m otherwise: thread rs copies tap rs of every channel
};

constexpr bool stages(Weights w) { return w != Weights::global; }

// The Sum policies (RegSum, SharedSum) and the tap loop dot(): direct_taps.cuh.

// All outputs of this thread. `wk` is the filter (global or shared memory); `sums` the
// swso slots (null for register sums): slot (i*t + j) * threads + tid, so neighbouring
// threads use neighbouring banks.
template <PlaneMapping kMap, Accum kAcc>
__device__ __forceinline__ void outputs(const float* in_n, const float* wk, float* out_nm, float* sums,
                                        const ConvShape& s, int t, int tid, int nthreads) {
    for (int i = 0; i < t; ++i) {
        for (int j = 0; j < t; ++j) {
            int e, f;
            plane_coord<kMap>(t, i, j, e, f);
            if (e >= s.E || f >= s.F) continue;  // the block's edge: no output here
            if constexpr (kAcc == Accum::reg) {
                RegSum sum(nullptr);
                dot(sum, in_n, wk, s, e, f);
                out_nm[e * s.F + f] = sum.get();
            } else {
                SharedSum sum(sums + (i * t + j) * nthreads + tid);
                dot(sum, in_n, wk, s, e, f);
                out_nm[e * s.F + f] = sum.get();
            }
        }
    }
}

// Copies the filter w_m (K = C*R*S floats, layout (c, r, s)) into shared memory.
template <Weights kW>
__device__ __forceinline__ void stage_filter(float* ws, const float* w_m, int K, int RS, int C, int tid,
                                             int nthreads) {
    if constexpr (kW == Weights::one_loader) {
        if (tid == 0)
            for (int k = 0; k < K; ++k) ws[k] = w_m[k];
    } else if constexpr (kW == Weights::per_element) {
        // make_plan picks this only when K <= threads: one element per thread, threads
        // k >= K idle. The loop keeps it correct for any K all the same.
        for (int k = tid; k < K; k += nthreads) ws[k] = w_m[k];
    } else if constexpr (kW == Weights::per_tap) {
        // Thread rs copies tap rs of every channel (R*S loaders); a tap loop when R*S
        // exceeds the block.
        for (int rs = tid; rs < RS; rs += nthreads)
            for (int c = 0; c < C; ++c) ws[c * RS + rs] = w_m[c * RS + rs];
    }
}

template <PlaneMapping kMap, Weights kW, Accum kAcc>
__global__ void __launch_bounds__(kMaxThreads)
    single_kernel(const float* in, const float* w, float* out, ConvShape s, int t) {
    extern __shared__ float smem[];  // [K filter values][t*t*threads sums (swso)]
    const int n = blockIdx.x, m = blockIdx.y;
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    const int nthreads = blockDim.x * blockDim.y;
    const int RS = s.R * s.S;
    const int K = s.C * RS;
    const float* in_n = in + std::int64_t(n) * s.C * s.H * s.W;
    const float* w_m = w + std::int64_t(m) * K;
    float* out_nm = out + (std::int64_t(n) * s.M + m) * s.E * s.F;

    if constexpr (stages(kW)) {
        stage_filter<kW>(smem, w_m, K, RS, s.C, tid, nthreads);
        // Every thread of the block reaches this barrier: no thread has returned yet, and
        // the threads without outputs (the block's edge) only skip work after it.
        __syncthreads();
        outputs<kMap, kAcc>(in_n, smem, out_nm, smem + K, s, t, tid, nthreads);
    } else {
        static_assert(kAcc == Accum::reg, "shared sums are only studied with a staged filter");
        outputs<kMap, kAcc>(in_n, w_m, out_nm, nullptr, s, t, tid, nthreads);
    }
}

using KernelFn = void (*)(const float*, const float*, float*, ConvShape, int);

template <PlaneMapping kMap>
KernelFn pick_kernel(Weights w, Accum a) {
    if (a == Accum::shared) return single_kernel<kMap, Weights::one_loader, Accum::shared>;
    switch (w) {
        case Weights::global: return single_kernel<kMap, Weights::global, Accum::reg>;
        case Weights::one_loader: return single_kernel<kMap, Weights::one_loader, Accum::reg>;
        case Weights::per_element: return single_kernel<kMap, Weights::per_element, Accum::reg>;
        case Weights::per_tap: return single_kernel<kMap, Weights::per_tap, Accum::reg>;
    }
    return nullptr;
}

Weights weights_of(Idea idea, std::int64_t K, int threads) {
    switch (idea) {
        case Idea::register_acc: return Weights::global;
        case Idea::one_loader:
        case Idea::shared_out: return Weights::one_loader;
        case Idea::many_loaders: return K <= threads ? Weights::per_element : Weights::per_tap;
    }
    return Weights::global;
}

const char* weights_detail(Weights w) {
    switch (w) {
        case Weights::global: return "filter from global memory";
        case Weights::one_loader: return "filter staged by 1 thread";
        case Weights::per_element: return "filter staged by C*R*S threads, 1 element each";
        case Weights::per_tap: return "filter staged by R*S threads, 1 tap x C channels each";
    }
    return "?";
}

template <PlaneMapping kMap>
std::unique_ptr<Plan> make_plan(Idea idea, const Problem& p, const PlanContext& ctx) {
    const ConvShape s = conv_shape(p.layer);
    const PlaneTiling tl = plane_tiling(s.E, s.F, ctx.prop.maxThreadsPerBlock);
    const Weights wsrc = weights_of(idea, p.layer.K(), tl.threads());
    const Accum acc = sk::accum_of(idea);
    const KernelFn kernel = pick_kernel<kMap>(wsrc, acc);
    const std::int64_t smem = sk::smem_bytes(idea, s, tl);

    // Never launch wrong: the kernel's own limits, then the shared memory it needs.
    cudaFuncAttributes fa{};
    CS_CUDA_CHECK(cudaFuncGetAttributes(&fa, kernel));
    if (fa.maxThreadsPerBlock < tl.threads())
        throw Skip("the kernel can launch at most " + std::to_string(fa.maxThreadsPerBlock) +
                   " threads per block (registers); the plane needs " + std::to_string(tl.threads()));
    if (smem + std::int64_t(fa.sharedSizeBytes) > std::int64_t(ctx.prop.sharedMemPerBlockOptin))
        throw Skip("needs " + std::to_string(smem) + " bytes of shared memory per block; this device allows " +
                   std::to_string(ctx.prop.sharedMemPerBlockOptin) + " (opt-in limit)");
    bool opt_in = false;
    if (smem + std::int64_t(fa.sharedSizeBytes) > std::int64_t(ctx.prop.sharedMemPerBlock)) {
        opt_in = true;
        // Only ever raised, so a plan made earlier with a larger need stays valid.
        if (fa.maxDynamicSharedSizeBytes < smem)
            CS_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    }

    std::string detail = "grid N x " + std::to_string(s.M) + ", block " + std::to_string(tl.bx) + "x" +
                         std::to_string(tl.by) + ", " + std::to_string(tl.t * tl.t) + " outputs/thread (" +
                         (tl.t == 1 ? "1 per thread: mappings identical"
                                    : kMap == PlaneMapping::coalesced ? "coalesced" : "uncoalesced") +
                         "), " + weights_detail(wsrc) + ", sum in " +
                         (acc == Accum::reg ? "a register" : "shared memory");
    if (smem > 0) detail += ", " + std::to_string(smem) + " B dynamic shared" + (opt_in ? " (opt-in)" : "");

    return make_simple_plan(
        [kernel, s, tl, smem](const DeviceIO& io, cudaStream_t stream) {
            if (io.N <= 0) return;
            const dim3 grid(unsigned(io.N), unsigned(s.M));
            const dim3 block(unsigned(tl.bx), unsigned(tl.by));
            kernel<<<grid, block, std::size_t(smem), stream>>>(static_cast<const float*>(io.in),
                                                               static_cast<const float*>(io.w),
                                                               static_cast<float*>(io.out), s, tl.t);
            CS_CUDA_CHECK_LAUNCH();
        },
        detail);
}

}  // namespace

RungPlan sk::plan(Idea idea, PlaneMapping map) {
    if (map == PlaneMapping::coalesced)
        return [idea](const PrecisionRow&, const Problem& p, const PlanContext& c) {
            return make_plan<PlaneMapping::coalesced>(idea, p, c);
        };
    return [idea](const PrecisionRow&, const Problem& p, const PlanContext& c) {
        return make_plan<PlaneMapping::uncoalesced>(idea, p, c);
    };
}

}  // namespace cs::gpu::variants
