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
#include "conv_shape.hpp"
#include "cuda_check.hpp"
#include "error.hpp"
#include "simple_plan.hpp"
#include "variant.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

namespace cs::gpu::variants {
namespace {

constexpr int kRows = 2;            // output rows per thread (e, e + BY)
constexpr int kMaxThreads = 256;    // block limit of the kernel (the geometry targets it)
constexpr int kMinBlocks = 3;       // -> at most 85 registers (ptxas takes 67-80, no spills)
constexpr int kTargetSmem = 24 * 1024;  // bytes per block the channel stage aims for

// Everything the kernel needs about the tiling (host-computed; blockDim = BX x BY).
struct TileGeom {
    int tiles_f;    // tiles along F
    int ntiles;     // tiles per image
    int mgroups;    // filter groups: ceil(M / MB)
    int TE;         // output rows per tile (BY * kRows); TF = BX
    int PH, PW;     // input patch per channel: (TE-1)*stride+R rows, (BX-1)*stride+S columns
    int PWq;        // patch columns per stride phase: ceil(PW / stride)
    int pitch;      // floats per staged row (>= stride * PWq)
    int CB;         // channels per stage
    int xs_floats;  // CB * PH * pitch rounded up to 4 floats: the weights start 16-B aligned
    int LW, RP;     // input staging: threads per patch row, patch rows per pass
};

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

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Most lanes of one warp that hit the same bank (different words) in the compute loop's
// input load, over every warp of a BX x BY block, for a row pitch. Lane (ty, tx) reads
// word ty*stride*pitch + tx (+ an offset common to the warp).
int conflict_degree(int pitch, int BX, int BY, int st) {
    const int threads = BX * BY;
    int worst = 1;
    for (int w0 = 0; w0 < threads; w0 += 32) {
        int count[32] = {};
        for (int lane = 0; lane < 32 && w0 + lane < threads; ++lane) {
            const int t = w0 + lane, ty = t / BX, tx = t % BX;
            const long long addr = (long long)ty * st * pitch + tx;
            worst = std::max(worst, ++count[addr % 32]);
        }
    }
    return worst;
}

struct Choice {
    int BX = 0, BY = 0, MB = 0;
    TileGeom g{};
    std::int64_t smem = 0;  // dynamic shared memory bytes
};

std::int64_t smem_bytes(const TileGeom& g, int RS, int MB) {
    return (std::int64_t(g.xs_floats) + std::int64_t(g.CB) * RS * MB) * 4;
}

// The geometry for a BX x BY block and MB filters; CB as large as kTargetSmem allows.
TileGeom geometry(const ConvShape& s, int BX, int BY, int MB) {
    TileGeom g{};
    const int st = s.stride;
    g.TE = BY * kRows;
    g.tiles_f = ceil_div(s.F, BX);
    g.ntiles = ceil_div(s.E, g.TE) * g.tiles_f;
    g.mgroups = ceil_div(s.M, MB);
    g.PH = (g.TE - 1) * st + s.R;
    g.PW = (BX - 1) * st + s.S;
    g.PWq = ceil_div(g.PW, st);
    const int row = st * g.PWq;
    g.pitch = row;
    int best = conflict_degree(row, BX, BY, st);
    for (int p = row + 1; p < row + 32 && best > 1; ++p) {
        const int d = conflict_degree(p, BX, BY, st);
        if (d < best) best = d, g.pitch = p;
    }
    const int RS = s.R * s.S;
    auto with_cb = [&](int cb) {
        TileGeom t = g;
        t.CB = cb;
        t.xs_floats = (cb * g.PH * g.pitch + 3) / 4 * 4;
        return t;
    };
    int cb = 1;
    while (cb < s.C && smem_bytes(with_cb(cb + 1), RS, MB) <= kTargetSmem) ++cb;
    g = with_cb(cb);
    // Input staging: LW = ceil(PW / k) threads per row, RP rows per pass; the k with the
    // fewest trips per thread (conv1's 63x119 patch: 8 rows x 24 threads, 40 trips instead
    // of 63 with one whole row per pass; a 13x7 block on a 16x15 patch: 6 rows x 15).
    const int threads = BX * BY;
    int best_trips = INT_MAX;
    for (int k = 1; k <= g.PW; ++k) {
        const int lw = ceil_div(g.PW, k);
        if (lw > threads) continue;
        const int rp = threads / lw;
        const int trips = ceil_div(g.PH, rp) * k;
        if (trips < best_trips) best_trips = trips, g.LW = lw, g.RP = rp;
    }
    return g;
}

// Block shape for the layer, halved (rows first) until one channel's stage fits the
// device's opt-in shared memory. Returns the reason when nothing fits.
std::optional<std::string> choose(const ConvShape& s, int MB, const cudaDeviceProp& prop, Choice& out) {
    int BX = ceil_div(s.F, ceil_div(s.F, 32));
    const int rows_target = std::max(1, kMaxThreads / BX) * kRows;
    int BY = ceil_div(ceil_div(s.E, ceil_div(s.E, rows_target)), kRows);
    const std::int64_t limit = std::int64_t(prop.sharedMemPerBlockOptin);
    for (;;) {
        const TileGeom g = geometry(s, BX, BY, MB);
        const std::int64_t need = smem_bytes(g, s.R * s.S, MB);
        if (need <= limit) {
            out.BX = BX, out.BY = BY, out.MB = MB, out.g = g, out.smem = need;
            return std::nullopt;
        }
        if (BY > 1)
            BY = ceil_div(BY, 2);
        else if (BX > 1)
            BX = ceil_div(BX, 2);
        else
            return "one channel's input patch and filter slices (" + std::to_string(need) +
                   " bytes for a 1x2-output tile) exceed this device's " + std::to_string(limit) +
                   "-byte opt-in shared memory per block";
    }
}

std::string stride_instance(int stride) {
    return (stride == 1 || stride == 2 || stride == 4) ? "stride " + std::to_string(stride) + " (compile-time)"
                                                        : "stride " + std::to_string(stride) + " (runtime)";
}

}  // namespace

// ---- entry points (the spec: direct_family.cpp) ----

std::optional<std::string> tiled_input_supports(const Problem& p, const cudaDeviceProp& prop) {
    const Layer& l = p.layer;
    // Offsets inside one image are 32-bit in the kernel (filters and outputs are 64-bit).
    if (l.input_elems(1) > INT_MAX) return std::string("one image has more than 2^31 elements (32-bit offsets)");
    const ConvShape s = conv_shape(l);
    Choice ch;
    if (auto why = choose(s, 8, prop, ch)) return why;
    const std::int64_t blocks = p.N * ch.g.ntiles * ch.g.mgroups;
    if (blocks > prop.maxGridSize[0])
        return "the grid (N x tiles x filter groups = " + std::to_string(blocks) + " blocks) exceeds the x limit";
    return std::nullopt;
}

std::unique_ptr<Plan> tiled_input_plan(const Problem& p, const PlanContext& ctx) {
    if (auto why = tiled_input_supports(p, ctx.prop)) throw Skip(*why);
    const ConvShape s = conv_shape(p.layer);
    // MB = 16 when the largest batch a run gets still gives >= 2 blocks per SM, else 8.
    Choice ch;
    const std::int64_t n_run = std::max<std::int64_t>(1, ctx.max_chunk_N);
    bool use16 = s.M > 8 && !choose(s, 16, ctx.prop, ch) &&
                 n_run * ch.g.ntiles * ch.g.mgroups >= 2 * std::int64_t(ctx.prop.multiProcessorCount);
    if (!use16 && choose(s, 8, ctx.prop, ch)) throw Skip("no tile fits shared memory");  // supports() said it does
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
    const int stages = ceil_div(s.C, g.CB);
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
