// simt-gemm — an implicit-GEMM convolution on the FP32 FMA pipes built like a cuBLAS SGEMM:
// the rungs implicit-gemm-idx lacks, added together.
//
// Idea (what changes against implicit-gemm-idx, gemm_implicit_idx.cu):
//   - weights transposed once per run into a zero-padded Kp x Mp workspace (wt_transpose_kernel,
//     a few us; inside kernel_ms since the weights change between calls): the A tile is
//     16-byte cp.async, no bounds tests, no transposing stores;
//   - the im2col row table {c*H*W + r*W + s, r, s} is computed at plan time for all Kp rows
//     (layer shape only, no data) instead of by 8 threads per k-tile with two divisions;
//   - the B tile goes global -> shared memory by cp.async (4 bytes, zero-filled outside the
//     image), a 3-stage pipeline with one barrier per k-tile and no staging registers;
//   - warp tiling: a warp owns a 64 x 32 (or 64 x 64) block of the output, lanes 8 (m) x 4
//     (n), each thread 8 x 8 (8 x 16) outputs in groups of 4 x 4: a float4 fragment read
//     touches 8 (A) or 4 (B) distinct 16-byte words per warp, one wavefront, no conflicts;
//   - fragments double-buffered in registers across the k-steps of a tile;
//   - k-tiles of 16 (two barriers' worth of loop overhead per 1024 FFMA instead of 512) and,
//     where the output tiles leave the SMs' block slots idle, split-K: K parts written as fp32
//     partial outputs and summed in part order by split_sum_kernel (deterministic).
// Tiles (kSimtCfgs, fp32fast_tiles.hpp): 128x128 and 128x64 with 8x16 per thread, 128x64 and
// 64x64 with 8x8 and k-tiles of 8 (the first rungs; tools/dev/fp32fast/emu_test.cpp runs them
// all), and the default, 128x64x16 with 8x8; choose_split picks the K parts. The sweep's axes
// `tile` and `split` (simt_gemm_axes, fp32fast_family.cpp) force either, for comparing them on
// many shapes.
//
// Prediction (H200, FP32 peak = 132 SMs x 128 FMA/clk x 1.98 GHz): per thread and k-tile
// 512 FFMA of ~600 instructions (~85%), 16 warps/SM: near cuBLAS SGEMM on the same GEMM
// shape (the goal: at least 0.9 of cuBLAS's speed).
//
// Measured: docs/findings.md, "Exact fp32 faster" (the development runs, each step's times
// and ratios to cuBLAS: git show 3ab0d79:gpu/variants/simt_gemm.cu). The steps, in order:
//   128x64, 8x8 per thread, k-tiles of 8: faster than implicit-gemm-idx at N=128, short of
//   the goal: the loop is not all FFMA (675 instructions per k-tile, 512 FFMA; SASS). N=1:
//   cuBLAS splits K (9-48 blocks here on 132 SMs). conv5: 676 blocks on 528 slots, the second
//   round 28% full. The 8x16 tiles (205-211 registers, 8 warps/SM) gained little on
//   conv3/conv4 at N=128 only and lost on conv5: a lone 4-warp block at the tail runs at a
//   quarter of the SM's rate.
//   k-tiles of 16 (a larger FFMA share of the loop): a small gain; split-K by choose_split:
//   the large gain at N=1 and on conv5. Not kept: 8x16 per thread with k-tiles of 16 (more
//   FFMA in the loop, but 225-247 registers, 4-8 warps per SM: slower), 128x128 blocks of 8
//   warps with 8x8 (2 blocks per SM: slower). What was left was the loop's issue rate.
//   So the loaders' address arithmetic out of the loop (SASS: 281 of the 1305 instructions per
//   k-tile were not FFMA; the A source recomputed with 64-bit multiplies per chunk, the B source
//   as in + (base + offset) in 64 bits, the stage as kt % 3 by a multiply): a running A pointer,
//   the B column's window origin as a pointer, stage counters: 1218 instructions per k-tile,
//   faster as predicted (conv1 carries 25% of padded rows: M = 96 in 128-row tiles).
//   split-tf32, on the same B loader, gained too.
//   Then the padded rows: conv1's 96 filters fill 128-row tiles to 75%, and the warps whose
//   upper 32 rows are all padding now skip those products (a warp-uniform branch between an
//   8-row and a 4-row loop): conv1 faster, the other layers unchanged. And the split rule
//   refitted to the measured times of 1-16 parts (choose_split).
//
// ptxas (sm_90, -O3): 128x64 and 64x64 (8x8, k-tiles of 8 or 16): 127 registers; 128x128 and
// 128x64 (8x16): 205 and 211 registers; 0 spills; wt_transpose_kernel 32 registers.
#include "buffers.hpp"
#include "conv_shape.hpp"
#include "copy_now.hpp"
#include "cuda_check.hpp"
#include "error.hpp"
#include "fp32fast_common.cuh"
#include "fp32fast_rungs.hpp"
#include "fp32fast_tiles.hpp"
#include "variant.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace cs::gpu::variants {
namespace fp32fast {

template <int BM, int BN, int WN, int BK_>
__global__ void __launch_bounds__(SimtTile<BM, BN, WN, BK_>::NT, SimtTile<BM, BN, WN, BK_>::MINB)
    simt_gemm_kernel(const float* __restrict__ in, const float* __restrict__ wt, const int2* __restrict__ tbl,
                     float* __restrict__ out, const GemmShape g, int P, int tiles_m, int tiles_n, int kt_split,
                     std::int64_t split_stride) {
    using T = SimtTile<BM, BN, WN, BK_>;
    constexpr int BK = T::BK, NT = T::NT, NSTAGE = T::NSTAGE, TN = T::TN, NH = TN / 4;
    constexpr int A_CHUNKS = BK * BM / 4;
    static_assert(A_CHUNKS % NT == 0, "A tile: whole 16-byte chunks per thread");
    constexpr int A_PER = A_CHUNKS / NT;
    using BLd = ImplicitB<BK, BN, NT, BN>;

    FF_DYN_SMEM(float, smem);
    float* As = smem;                    // [NSTAGE][BK][BM]
    float* Bs = smem + NSTAGE * T::AST;  // [NSTAGE][BK][BN]

    const int tid = int(threadIdx.x);
    // Block = (row tile, column tile, K part): the K parts of one output tile are tiles_m *
    // tiles_n blocks apart; part s covers k-tiles [s * kt_split, (s + 1) * kt_split) and
    // writes its partial sums split_stride floats after part s - 1's (no split: one part,
    // straight into the output).
    const int mn = int(blockIdx.x % unsigned(tiles_m * tiles_n)), part = int(blockIdx.x / unsigned(tiles_m * tiles_n));
    const int mt = mn % tiles_m, nt = mn / tiles_m;
    const int m0 = mt * BM, p0 = nt * BN;
    const int kt0 = part * kt_split, ktiles = g.Kp / BK - kt0 < kt_split ? g.Kp / BK - kt0 : kt_split;
    out += part * split_stride;

    BLd b;
    b.init(in, g, P, p0, tid);

    // Tiles are loaded in k order, so the A source is a running pointer (one add per tile):
    // chunk i of a thread is row tid / (BM/4) + i * NT / (BM/4), column (tid % (BM/4)) * 4.
    static_assert(NT % (BM / 4) == 0, "a thread's A chunks share their column");
    constexpr int A_ROWS = NT / (BM / 4);
    const float* a_src = wt + std::int64_t(kt0 * BK + tid / (BM / 4)) * g.Mp + m0 + (tid % (BM / 4)) * 4;
    const std::int64_t a_rows = std::int64_t(A_ROWS) * g.Mp, a_tile = std::int64_t(BK) * g.Mp;
    const int a_dst = (tid / (BM / 4)) * BM + (tid % (BM / 4)) * 4;
    int k_next = kt0 * BK;
    auto load_tile = [&](int stage) {
        float* as = As + stage * T::AST + a_dst;
#pragma unroll
        for (int i = 0; i < A_PER; ++i) cp_async16(as + i * A_ROWS * BM, a_src + i * a_rows);
        b.load(in, tbl, g, k_next, Bs + stage * T::BST, tid);
        a_src += a_tile;
        k_next += BK;
    };

    const int warp = tid / 32, lane = tid % 32;
    const int wm = warp % T::NWM, wn = warp / T::NWM;
    const int ty = lane / 4, tx = lane % 4;

    float acc[8][TN];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

#pragma unroll
    for (int s = 0; s < NSTAGE - 1; ++s) {
        if (s < ktiles) load_tile(s);
        cp_async_commit();
    }

    // Whether any of the warp's rows 32..63 (a thread's rows 4..7) is a real filter.
    const bool upper_rows = m0 + wm * T::WM + 32 < g.M;
    int rd = 0, wr = NSTAGE - 1;  // the stage read this k-tile, the stage refilled
    for (int kt = 0; kt < ktiles; ++kt) {
        cp_async_wait<NSTAGE - 2>();
        __syncthreads();  // tile kt visible to all; the stage refilled below was last read in kt-1
        if (kt + NSTAGE - 1 < ktiles) load_tile(wr);
        cp_async_commit();
        const float* as = As + rd * T::AST + wm * T::WM + ty * 4;
        const float* bs = Bs + rd * T::BST + wn * WN + tx * 4;
        rd = rd + 1 == NSTAGE ? 0 : rd + 1;
        wr = wr + 1 == NSTAGE ? 0 : wr + 1;

        // MI = 8 rows per thread, or 4 where the warp's upper 32 rows are all padding (M not a
        // multiple of the tile: conv1's 96 filters in 128-row tiles): those warps skip the
        // padded half of their products, which frees issue slots for the other warps.
        auto compute = [&](auto mi) {
            constexpr int MI = decltype(mi)::value;
            float a[2][MI], bb[2][TN];
            auto frag = [&](int buf, int kk) {
                const float4 a0 = *reinterpret_cast<const float4*>(as + kk * BM);
                a[buf][0] = a0.x, a[buf][1] = a0.y, a[buf][2] = a0.z, a[buf][3] = a0.w;
                if constexpr (MI == 8) {
                    const float4 a1 = *reinterpret_cast<const float4*>(as + kk * BM + 32);
                    a[buf][4] = a1.x, a[buf][5] = a1.y, a[buf][6] = a1.z, a[buf][7] = a1.w;
                }
#pragma unroll
                for (int h = 0; h < NH; ++h) {
                    const float4 b0 = *reinterpret_cast<const float4*>(bs + kk * BN + 16 * h);
                    bb[buf][h * 4 + 0] = b0.x, bb[buf][h * 4 + 1] = b0.y, bb[buf][h * 4 + 2] = b0.z,
                    bb[buf][h * 4 + 3] = b0.w;
                }
            };
            frag(0, 0);
#pragma unroll
            for (int kk = 0; kk < BK; ++kk) {
                if (kk + 1 < BK) frag((kk + 1) & 1, kk + 1);
#pragma unroll
                for (int i = 0; i < MI; ++i)
#pragma unroll
                    for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[kk & 1][i], bb[kk & 1][j], acc[i][j]);
            }
        };
        if (upper_rows)
            compute(std::integral_constant<int, 8>{});
        else
            compute(std::integral_constant<int, 4>{});
    }
    cp_async_wait<0>();

    // Epilogue: one column's NCHW base at a time (keeps the register count under the cap).
    const int mrow = m0 + wm * T::WM + ty * 4;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
        const std::int64_t cb = nchw_col_base(g, P, p0 + wn * WN + tx * 4 + (j & 3) + (j >> 2) * 16);
        if (cb < 0) continue;
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const int m = mrow + (i & 3) + (i >> 2) * 32;
            if (m < g.M) out[cb + std::int64_t(m) * g.EF] = acc[i][j];
        }
    }
}

// K parts: the time of S parts in k-tile rounds (a round = every block slot busy with one
// k-tile; the divisor 3.1 below is its time in microseconds, measured on the H200 for 128x64x16
// tiles, 4 blocks/SM) is the full waves times the
// k-tiles of a part, plus the last partial wave, filled to a fraction r of the slots, costing
// min(1, max(0.5, 1.25 r)) of a round (fitted to the H200's times of 1-16 parts on conv1-5 at
// N = 1, 32, 128: an SM with 2 of its 4 blocks still runs at most of its full rate, so a wave
// 40% full costs half a round and one 80% full a whole one), plus the sum of the parts (S + 1
// passes over the output at the bandwidth the 3.0e6 below stands for, in bytes per
// microsecond, and a launch; both constants chosen by measurement, git show
// 3ab0d79:gpu/variants/simt_gemm.cu). The smallest S within 3% of the best, at
// least 4 k-tiles per part, at most 16 parts, and the parts' partial outputs within ws_room
// bytes.
struct SimtSplit {
    int parts = 1, kt_per = 1;
};
inline SimtSplit choose_split(std::int64_t tiles, int ktiles, int slots, std::int64_t out_elems, std::size_t ws_room) {
    auto cost = [&](int S) {
        const int kps = (ktiles + S - 1) / S;
        const double waves = double(tiles * S) / slots;
        const double full = std::floor(waves), rest = waves - full;
        const double rounds = full + (rest > 0 ? std::min(1.0, std::max(0.5, 1.25 * rest)) : 0.0);
        const double red_us = S > 1 ? double(S + 1) * double(out_elems) * 4.0 / 3.0e6 + 4.0 : 0.0;
        return rounds * kps + red_us / 3.1;
    };
    int best = 1;
    double best_cost = cost(1);
    for (int S = 2; S <= 16 && (ktiles + S - 1) / S >= 4; ++S) {
        if (std::size_t(S) * std::size_t(out_elems) * 4 > ws_room) break;
        const double c = cost(S);
        if (c < best_cost) best = S, best_cost = c;
    }
    for (int S = 1; S < best; ++S)  // the fewest parts within 3% of the best
        if (cost(S) <= 1.03 * best_cost) {
            best = S;
            break;
        }
    const int kps = (ktiles + best - 1) / best;
    return {(ktiles + kps - 1) / kps, kps};
}

// One K part's partial output: the chunk's outputs, rounded up to whole float4s.
inline std::int64_t split_stride_of(const GemmShape& g, int P) { return (std::int64_t(P / g.EF) * g.MEF + 3) / 4 * 4; }

template <int BM, int BN, int WN, int BK>
void launch_simt(const float* in, const float* wt, const int2* tbl, float* out, const GemmShape& g, int P, int split,
                 int kt_split, cudaStream_t stream) {
    using T = SimtTile<BM, BN, WN, BK>;
    const int tiles_m = (g.M + BM - 1) / BM, tiles_n = (P + BN - 1) / BN;
    const std::int64_t blocks = std::int64_t(tiles_m) * tiles_n * split;
    if (blocks == 0) return;
    auto k = &simt_gemm_kernel<BM, BN, WN, BK>;
    const std::int64_t split_stride = split_stride_of(g, P);
    FF_LAUNCH(k, unsigned(blocks), T::NT, T::SMEM, stream, in, wt, tbl, out, g, P, tiles_m, tiles_n, kt_split,
              split_stride);
    FF_CHECK_LAUNCH();
}

// out[i] = sum over the K parts of part[s * stride + i], in part order (deterministic), n
// elements; thread q of the grid (blocks of kSumThreads) takes elements 4q..4q+3 by float4 where
// out is 16-byte aligned (stride is a multiple of 4 floats), else element q.
constexpr int kSumThreads = 256;
__global__ void split_sum_kernel(const float* __restrict__ part, std::int64_t stride, float* __restrict__ out,
                                 std::int64_t n, int split, bool vec) {
    const std::int64_t q = std::int64_t(blockIdx.x) * kSumThreads + threadIdx.x;
    if (vec && 4 * q + 3 < n) {
        float4 a = reinterpret_cast<const float4*>(part)[q];
        for (int s = 1; s < split; ++s) {
            const float4 b = reinterpret_cast<const float4*>(part + s * stride)[q];
            a.x += b.x, a.y += b.y, a.z += b.z, a.w += b.w;
        }
        reinterpret_cast<float4*>(out)[q] = a;
        return;
    }
    for (std::int64_t i = vec ? 4 * q : q; i < n && i < (vec ? 4 * q + 4 : q + 1); ++i) {
        float a = part[i];
        for (int s = 1; s < split; ++s) a += part[s * stride + i];
        out[i] = a;
    }
}

// The whole run: transpose the weights, then the GEMM (into the output, or with split > 1 into
// split partial outputs in ws, n floats each, summed into the output by a second kernel).
inline void simt_gemm_enqueue(int cfg, const float* in, const float* w, float* wt, const int2* tbl, float* out,
                              float* ws, const GemmShape& g, int P, int split, int kt_split, cudaStream_t stream) {
    auto tk = &wt_transpose_kernel;
    const dim3 tgrid(unsigned((g.Kp + 31) / 32), unsigned((g.Mp + 31) / 32));
    FF_LAUNCH(tk, tgrid, 256, 32 * 33 * 4, stream, w, wt, g.M, g.K, g.Mp, g.Kp);
    FF_CHECK_LAUNCH();
    float* dst = split > 1 ? ws : out;
    switch (cfg) {
        case 0: launch_simt<128, 128, 64, 8>(in, wt, tbl, dst, g, P, split, kt_split, stream); break;
        case 1: launch_simt<128, 64, 64, 8>(in, wt, tbl, dst, g, P, split, kt_split, stream); break;
        case 2: launch_simt<128, 64, 32, 8>(in, wt, tbl, dst, g, P, split, kt_split, stream); break;
        case 3: launch_simt<64, 64, 32, 8>(in, wt, tbl, dst, g, P, split, kt_split, stream); break;
        default: launch_simt<128, 64, 32, 16>(in, wt, tbl, dst, g, P, split, kt_split, stream); break;
    }
    if (split > 1) {
        const std::int64_t n = std::int64_t(P / g.EF) * g.MEF;
        const bool vec = reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
        auto sk = &split_sum_kernel;
        const std::int64_t threads = vec ? (n + 3) / 4 : n;
        FF_LAUNCH(sk, unsigned((threads + kSumThreads - 1) / kSumThreads), kSumThreads, 0, stream, ws,
                  split_stride_of(g, P), out, n, split, vec);
        FF_CHECK_LAUNCH();
    }
}

}  // namespace fp32fast

#ifndef FP32FAST_EMU
namespace {

using fp32fast::simt_tile_name;

class SimtGemmPlan final : public Plan {
public:
    SimtGemmPlan(const Problem& p, const PlanContext& ctx) {
        const Layer& l = p.layer;
        // The axes (simt_gemm_axes): a tile and a number of K parts, else the defaults.
        int forced_cfg = -1, forced_split = 0;
        if (const auto t = p.axes.id("tile")) forced_cfg = *t;  // a kSimtCfgs index (simt_gemm_axes)
        if (const auto k = p.axes.id("split")) forced_split_ = forced_split = *k;  // a count of K parts
        g_ = fp32fast::gemm_shape(l.C, l.H, l.W, l.M, l.R, l.S, l.stride, l.pad, fp32fast::kSimtBK, fp32fast::kSimtMaxBM);
        const std::int64_t Pmax = std::max<std::int64_t>(1, ctx.max_chunk_N) * g_.EF;
        cfg_ = forced_cfg >= 0 && forced_cfg < fp32fast::kSimtNumCfgs ? forced_cfg : fp32fast::kSimtDefaultCfg;
        const std::size_t wt_bytes = std::size_t(g_.Kp) * std::size_t(g_.Mp) * 4;
        const std::size_t tbl_bytes = std::size_t(g_.Kp) * sizeof(int2);
        if (wt_bytes + tbl_bytes > ctx.workspace_limit)
            throw Skip("transposed weights need " + std::to_string(wt_bytes + tbl_bytes) +
                       " bytes, over the workspace limit");
        const auto& c = fp32fast::kSimtCfgs[cfg_];
        if (c.smem > int(ctx.prop.sharedMemPerBlock)) throw Skip("tile needs more shared memory than 48 KB");
        const std::int64_t tiles = ((l.M + c.bm - 1) / c.bm) * ((Pmax + c.bn - 1) / c.bn);
        const std::int64_t out_elems = fp32fast::split_stride_of(g_, int(Pmax));
        const int ktiles = g_.Kp / fp32fast::kSimtCfgs[cfg_].bk;
        split_ = fp32fast::choose_split(tiles, ktiles, c.minb * ctx.prop.multiProcessorCount, out_elems,
                                        ctx.workspace_limit - wt_bytes - tbl_bytes);
        if (forced_split > 0) {
            split_.kt_per = (ktiles + std::min(forced_split, ktiles) - 1) / std::min(forced_split, ktiles);
            split_.parts = (ktiles + split_.kt_per - 1) / split_.kt_per;
            if (std::size_t(split_.parts) * std::size_t(out_elems) * 4 > ctx.workspace_limit - wt_bytes - tbl_bytes)
                throw Skip("the K parts' partial outputs exceed the workspace limit");
        }
        if (split_.parts > 1) part_ = Buffer(MemKind::device, std::size_t(split_.parts) * std::size_t(out_elems) * 4);
        wt_ = Buffer(MemKind::device, wt_bytes);
        tbl_ = Buffer(MemKind::device, tbl_bytes);
        const auto t = fp32fast::im2col_row_table(g_);
        copy_to_device_now(tbl_.get(), t.data(), tbl_bytes);
        detail_ = std::string(c.what) + ", 3-stage cp.async, " + std::to_string(tiles) + " tiles for P=" +
                  std::to_string(Pmax) +
                  (split_.parts > 1 ? " x split-K " + std::to_string(split_.parts) + " (" + std::to_string(split_.kt_per) +
                                          " k-tiles each, partials summed in order by a second kernel)"
                                    : std::string()) +
                  "; weights transposed to " + std::to_string(g_.Kp) + "x" + std::to_string(g_.Mp) + " each run";
    }
    void run(const DeviceIO& io, cudaStream_t stream) override {
        const int P = int(io.N * g_.EF);
        fp32fast::simt_gemm_enqueue(cfg_, static_cast<const float*>(io.in), static_cast<const float*>(io.w),
                                    wt_.as<float>(), tbl_.as<int2>(), static_cast<float*>(io.out), part_.as<float>(), g_,
                                    P, split_.parts, split_.kt_per, stream);
    }
    std::size_t workspace_bytes() const override { return wt_.bytes() + tbl_.bytes() + part_.bytes(); }
    std::string detail() const override { return detail_; }
    std::string config() const override {
        return "tile=" + simt_tile_name(cfg_) + ";split=" + std::to_string(forced_split_ > 0 ? forced_split_ : split_.parts);
    }

private:
    fp32fast::GemmShape g_{};
    int cfg_ = 0;
    int forced_split_ = 0;  // the split axis's value (at most this many parts), 0: the rule's
    fp32fast::SimtSplit split_{};
    Buffer wt_, tbl_, part_;
    std::string detail_;
};

}  // namespace

std::unique_ptr<Plan> simt_gemm_plan(const Problem& p, const PlanContext& ctx) {
    return std::make_unique<SimtGemmPlan>(p, ctx);
}

#endif  // FP32FAST_EMU

}  // namespace cs::gpu::variants
