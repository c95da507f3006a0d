// tiled-input — a block stages an input tile with its halo in shared memory (direct
// convolution, no GEMM; course-project idea).
//
// Idea: in every single-kernel variant each input element is fetched from L1/L2 once per
// output that uses it and once per filter (~(R/stride)^2 * M times). Here a block owns an
// output tile of TE x TF positions of one image for MB filters, and loops over the
// channels in stages of CB channels:
//   1. all threads copy the stage's input patch — (TE-1)*stride+R rows by
//      (TF-1)*stride+S columns per channel, the halo included, zero outside the image
//      (the padding) — and the MB filters' CB x R x S slices into shared memory;
//   2. __syncthreads; every thread accumulates its outputs from shared memory;
//   3. __syncthreads (before the next stage overwrites the tiles).
// Each thread keeps a register tile: kRows = 2 output rows (e and e + BY) x MB filters,
// 2*MB running sums. Per (c, r, s) it loads 2 inputs (each reused by MB filters) and MB
// weights as MB/4 float4 broadcasts (one address for the whole warp), then does 2*MB FMAs.
//
// Shared-memory layout, chosen so the inner loads do not conflict:
//  - the patch row is stored phase-split by the stride: column pw at
//    (pw % stride) * ceil(PW/stride) + pw / stride, so the threads of a row, which read
//    columns tx*stride + s, read consecutive words (stride 4 would otherwise be a 4-way
//    conflict); the row pitch is the smallest >= the row that minimises the bank
//    conflicts of a warp whose lanes span several tile rows (make_plan searches it);
//  - weights as [c][r][s][MB]: the MB filters of one tap are contiguous, float4 reads.
// Summation order per output is (c, r, s) as in the reference; a zero-padded tap adds
// fmaf(0, w, sum) == sum, so the result equals register-acc's.
//
// Geometry (make_plan, from the layer's shape, for any table):
//  - TF = BX: F cut into ceil(F/32) equal column tiles (55 -> 2 x 28, 27 -> 27, 13 -> 13);
//  - BY from a ~256-thread target, then balanced: TE = BY * kRows rows per tile
//    (55 -> 4 x 14, 27 -> 2 x 14, 13 -> 1 x 14: one wasted row);
//  - MB = 16 filters per block when the grid still has >= 2 blocks per SM, else 8 (N=1);
//  - CB: as many channels per stage as fit 24 KB (so ~8 blocks can share an SM's
//    228 KB); at least 1 — above 48 KB the kernel's limit is raised (opt-in), above the
//    device's opt-in limit the tile is halved (rows first) until one channel fits.
//   layer  block  tile   patch/ch (pitch)  MB  CB  stages  smem (MB 16 / 8)   grid per image
//   conv1  28x7   14x28  63x119 (127)      16   1    3     39760 / 35888 B   8 tiles x 6 groups
//   conv2  27x7   14x27  18x31  (59)       16   4   24     23392 / 20192 B   2 tiles x 16 groups
//   conv3  13x7   14x13  16x15  (45)       16   7   37     24192 / 22176 B   1 tile x 24 groups
//   conv4  13x7   14x13  16x15  (45)       16   7   55     24192 / 22176 B   1 tile x 24 groups
//   conv5  13x7   14x13  16x15  (45)       16   7   55     24192 / 22176 B   1 tile x 16 groups
//   (MB 8 and twice the groups at N=1, where MB 16 would leave < 2 blocks per SM.)
//   The pitch search costs shared memory where a warp spans three tile rows: conv3-5's
//   15-float rows are conflict-free only at a pitch = 13 (mod 32), i.e. 45, which cuts CB
//   from ~16 to 7. A smaller pitch with 2-way conflicts and half the stages is the other
//   side of that trade (not measured yet). The detail column records every run's choice.
//
// Prediction, per FMA (MB = 16, 2 rows): global ~0.006 loads (conv2: a stage loads
// 4 x 18 x 31 inputs + 4 x 25 x 16 weights for 189 x 2 x 16 x 100 FMAs), shared
// (2 + MB/4) / (2*MB) = 0.19 load instructions, all conflict-free or broadcast, constant
// 0 — against 2 L1 loads per FMA in register-acc. The inner loop is then issue-bound
// near 32 FMA in ~40 instructions; with staging, barriers and the wasted row (7% on
// conv2-5) expect a large share of the FMA ceiling at N=128, several times register-acc,
// the fastest of the direct variants. conv1 (C=3: 3 stages, a large strided patch)
// should be the weakest of the five.
// Measured: docs/findings.md, "Direct and GEMM formulations".
//
// Resources (nvcc 13.0, sm_90, -Xptxas -v; no spills, no stack; smem is dynamic):
//   tiled_input_kernel<MB, stride>   <8,1> 77, <8,2> 77, <8,4> 79, <8,runtime> 67,
//   registers                        <16,1> 80, <16,2> 79, <16,4> 79, <16,runtime> 79
// __launch_bounds__(256, 3) caps them at 85 registers; with (256) alone ptxas chose 40
// for <8,1> and spilled 44 bytes. At 80 registers conv3-5's 3-warp blocks fit 8 per SM
// (24 warps), conv2's 6-warp blocks 4.
//
// This file holds the kernel and the plan; supports() and the tiling (choose(): block shape,
// pitch, channels per stage) are host code, direct_family.cpp (declared in direct_rungs.hpp).
#include "conv_shape.hpp"
#include "cuda_check.hpp"
#include "direct_rungs.hpp"
#include "error.hpp"
#include "simple_plan.hpp"
#include "variant.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

namespace cs::gpu::variants {
namespace {

using tiled_input::Choice;
using tiled_input::kMaxThreads;
using tiled_input::kRows;
using tiled_input::TileGeom;

constexpr int kMinBlocks = 3;  // -> at most 85 registers (ptxas takes 67-80, no spills)

template <int kMB, int kST>
__global__ void __launch_bounds__(kMaxThreads, kMinBlocks)
    tiled_input_kernel(const float* __restrict__ in, const float* __restrict__ w, float* __restrict__ out,
                       ConvShape s, TileGeom g) {
    static_assert(kMB % 4 == 0, "weights are read as float4");
    extern __shared__ float4 smem4[];
    float* xs = reinterpret_cast<float*>(smem4);  // [CB][PH][pitch] input patch
    float* ws = xs + g.xs_floats;                 // [CB][R][S][kMB] weights
    const int st = kST > 0 ? kST : s.stride;
    const int BX = int(blockDim.x), BY = int(blockDim.y);
    const int tx = int(threadIdx.x), ty = int(threadIdx.y);
    const int tid = ty * BX + tx, nthreads = BX * BY;

    // Block -> (filter group, tile, image), filter group fastest: the blocks that read the
    // same input patch run side by side and share it in L1/L2.
    unsigned b = blockIdx.x;
    const int mg = int(b % unsigned(g.mgroups));
    b /= unsigned(g.mgroups);
    const int tile = int(b % unsigned(g.ntiles));
    const int n = int(b / unsigned(g.ntiles));
    const int e0 = (tile / g.tiles_f) * g.TE, f0 = (tile % g.tiles_f) * BX;
    const int m0 = mg * kMB;
    const int ih0 = e0 * st - s.pad, iw0 = f0 * st - s.pad;  // patch origin in the image
    const int RS = s.R * s.S;
    const std::int64_t K = std::int64_t(s.C) * RS;
    const float* __restrict__ in_n = in + std::int64_t(n) * s.C * s.H * s.W;

    // Input staging: LW threads per patch row, RP rows per pass; threads beyond idle.
    const int lrow = tid / g.LW, lcol = tid - lrow * g.LW;

    float acc[kRows][kMB];
#pragma unroll
    for (int i = 0; i < kRows; ++i)
#pragma unroll
        for (int mb = 0; mb < kMB; ++mb) acc[i][mb] = 0.0f;

    // Every thread runs every trip of this loop (its bounds are the block's), so every
    // thread reaches both barriers.
    for (int c0 = 0; c0 < s.C; c0 += g.CB) {
        const int cbn = min(g.CB, s.C - c0);

        // 1a. the input patch of channels c0 .. c0+cbn, zero outside the image
        if (lrow < g.RP) {
            for (int c = 0; c < cbn; ++c) {
                const float* __restrict__ xc = in_n + (c0 + c) * s.H * s.W;
                float* xsc = xs + c * g.PH * g.pitch;
                for (int ph = lrow; ph < g.PH; ph += g.RP) {
                    const int ih = ih0 + ph;
                    const bool row_in = ih >= 0 && ih < s.H;
                    float* dst = xsc + ph * g.pitch;
                    for (int pw = lcol; pw < g.PW; pw += g.LW) {
                        const int iw = iw0 + pw;
                        dst[(pw % st) * g.PWq + pw / st] =
                            (row_in && iw >= 0 && iw < s.W) ? xc[ih * s.W + iw] : 0.0f;
                    }
                }
            }
        }
        // 1b. the weights: ws[i * kMB + mb] = w[m0 + mb][c0 * R * S + i], zero past M
        const int taps = cbn * RS;
        for (int j = tid; j < taps * kMB; j += nthreads) {
            const int mb = j % kMB, i = j / kMB;
            const int m = m0 + mb;
            ws[j] = m < s.M ? w[m * K + std::int64_t(c0) * RS + i] : 0.0f;
        }
        __syncthreads();

        // 2. accumulate: thread (ty, tx) reads patch rows (ty + i*BY)*stride + r and
        //    (phase-split) column tx*stride + q.
        for (int c = 0; c < cbn; ++c) {
            const float* xsc = xs + (c * g.PH + ty * st) * g.pitch + tx;
            const float* wsc = ws + c * RS * kMB;
            for (int r = 0; r < s.R; ++r) {
                const float* xr = xsc + r * g.pitch;
                const float* wr = wsc + r * s.S * kMB;
                for (int q = 0; q < s.S; ++q) {
                    const int col = (q % st) * g.PWq + q / st;
                    float x[kRows];
#pragma unroll
                    for (int i = 0; i < kRows; ++i) x[i] = xr[i * BY * st * g.pitch + col];
                    const float4* w4 = reinterpret_cast<const float4*>(wr + q * kMB);
#pragma unroll
                    for (int k = 0; k < kMB / 4; ++k) {
                        const float4 wv = w4[k];
#pragma unroll
                        for (int i = 0; i < kRows; ++i) {
                            acc[i][4 * k + 0] = fmaf(x[i], wv.x, acc[i][4 * k + 0]);
                            acc[i][4 * k + 1] = fmaf(x[i], wv.y, acc[i][4 * k + 1]);
                            acc[i][4 * k + 2] = fmaf(x[i], wv.z, acc[i][4 * k + 2]);
                            acc[i][4 * k + 3] = fmaf(x[i], wv.w, acc[i][4 * k + 3]);
                        }
                    }
                }
            }
        }
        // 3. the tiles are overwritten by the next stage only after everyone is done.
        __syncthreads();
    }

    // Outputs: coalesced along tx; rows past E, columns past F, filters past M skipped.
    const int f = f0 + tx;
    if (f >= s.F) return;  // after the last barrier
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
        const int e = e0 + ty + i * BY;
        if (e >= s.E) continue;
#pragma unroll
        for (int mb = 0; mb < kMB; ++mb) {
            const int m = m0 + mb;
            if (m < s.M) out[((std::int64_t(n) * s.M + m) * s.E + e) * s.F + f] = acc[i][mb];
        }
    }
}

using KernelFn = void (*)(const float*, const float*, float*, ConvShape, TileGeom);

template <int kMB>
KernelFn pick_stride(int stride) {
    switch (stride) {
        case 1: return tiled_input_kernel<kMB, 1>;
        case 2: return tiled_input_kernel<kMB, 2>;
        case 4: return tiled_input_kernel<kMB, 4>;
        default: return tiled_input_kernel<kMB, 0>;
    }
}

KernelFn pick_kernel(int mb, int stride) { return mb == 16 ? pick_stride<16>(stride) : pick_stride<8>(stride); }

std::string stride_instance(int stride) {
    return (stride == 1 || stride == 2 || stride == 4) ? "stride " + std::to_string(stride) + " (compile-time)"
                                                        : "stride " + std::to_string(stride) + " (runtime)";
}

}  // namespace

// ---- the plan (the spec, supports() and choose(): direct_family.cpp) ----

std::unique_ptr<Plan> tiled_input_plan(const Problem& p, const PlanContext& ctx) {
    const ConvShape s = conv_shape(p.layer);
    // MB = 16 when the largest batch a run gets still gives >= 2 blocks per SM, else 8.
    Choice ch;
    const std::int64_t n_run = std::max<std::int64_t>(1, ctx.max_chunk_N);
    bool use16 = s.M > 8 && !tiled_input::choose(s, 16, ctx.prop, ch) &&
                 n_run * ch.g.ntiles * ch.g.mgroups >= 2 * std::int64_t(ctx.prop.multiProcessorCount);
    if (!use16 && tiled_input::choose(s, 8, ctx.prop, ch)) throw Skip("no tile fits shared memory");  // supports() said it does
    const KernelFn kernel = pick_kernel(ch.MB, s.stride);

    cudaFuncAttributes fa{};
    CS_CUDA_CHECK(cudaFuncGetAttributes(&fa, kernel));
    if (fa.maxThreadsPerBlock < ch.BX * ch.BY)
        throw Skip("the kernel can launch at most " + std::to_string(fa.maxThreadsPerBlock) +
                   " threads per block (registers); the tile needs " + std::to_string(ch.BX * ch.BY));
    if (ch.smem + std::int64_t(fa.sharedSizeBytes) > std::int64_t(ctx.prop.sharedMemPerBlockOptin))
        throw Skip("needs " + std::to_string(ch.smem) + " bytes of shared memory per block; this device allows " +
                   std::to_string(ctx.prop.sharedMemPerBlockOptin) + " (opt-in limit)");
    bool opt_in = false;
    if (ch.smem + std::int64_t(fa.sharedSizeBytes) > std::int64_t(ctx.prop.sharedMemPerBlock)) {
        opt_in = true;
        // Only ever raised, so a plan made earlier with a larger need stays valid.
        if (fa.maxDynamicSharedSizeBytes < ch.smem)
            CS_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(ch.smem)));
    }

    const TileGeom g = ch.g;
    const int stages = (s.C + g.CB - 1) / g.CB;
    const std::string detail =
        "block " + std::to_string(ch.BX) + "x" + std::to_string(ch.BY) + " threads, tile " + std::to_string(g.TE) +
        "x" + std::to_string(ch.BX) + " outputs x " + std::to_string(ch.MB) + " filters (" + std::to_string(kRows) +
        " rows x " + std::to_string(ch.MB) + " filters per thread); grid N x " + std::to_string(g.ntiles) +
        " tiles x " + std::to_string(g.mgroups) + " filter groups; input patch " + std::to_string(g.PH) + "x" +
        std::to_string(g.PW) + " (pitch " + std::to_string(g.pitch) + ") x " + std::to_string(g.CB) +
        " channels per stage, " + std::to_string(stages) + (stages == 1 ? " stage, " : " stages, ") +
        std::to_string(ch.smem) + " B dynamic shared" + (opt_in ? " (opt-in)" : "") + ", " + stride_instance(s.stride);

    const int BX = ch.BX, BY = ch.BY;
    const std::int64_t smem = ch.smem;
    return make_simple_plan(
        [kernel, s, g, BX, BY, smem](const DeviceIO& io, cudaStream_t stream) {
            if (io.N <= 0) return;
            const dim3 grid(unsigned(io.N * g.ntiles * g.mgroups));
            const dim3 block(static_cast<unsigned>(BX), static_cast<unsigned>(BY));
            kernel<<<grid, block, std::size_t(smem), stream>>>(static_cast<const float*>(io.in),
                                                               static_cast<const float*>(io.w),
                                                               static_cast<float*>(io.out), s, g);
            CS_CUDA_CHECK_LAUNCH();
        },
        detail);
}

}  // namespace cs::gpu::variants
