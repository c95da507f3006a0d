// The GEMM family: what its five variants share — the GEMM view of a layer, the
// tile loaders (weights; the im2col matrix; the implicit unroll with and without index
// reuse), the output map that writes NCHW from the GEMM's columns, the tile-shape choice,
// and the fp32 shared-memory tiled GEMM kernel (SIMT) that im2col-gemm, implicit-gemm and
// implicit-gemm-idx run. The tensor-core kernel is in gemm_wmma.cuh. Each variant's file
// (gemm_*.cu) says what it studies and what it predicts.
//
// The GEMM:  out[m][p] = sum_k  W[m][k] * B[k][p]
//   m in [0, M)   filters; W is the MCRS weight tensor as it lies (M x K row-major)
//   k in [0, K)   K = C*R*S, k = (c*R + r)*S + s
//   p in [0, P)   P = N*E*F columns over the whole batch (or chunk), p = (n*E + e)*F + f
//   B[k][p] = in[n][c][e*stride + r - pad][f*stride + s - pad]  (zero outside the input)
// Columns run over the batch, so small planes (E*F = 169 on conv3-5) do not leave a
// mostly empty tile per image; the output map sends column p to out[n][m][e][f].
//
// Block tile BM x BN, k-step BK, NT threads. Every loader gives each thread a fixed set of
// tile positions:
//   A tile (BM x BK): column k = tid % BK, rows tid / BK + i * (NT / BK): a warp reads runs
//                     of BK consecutive weights of a row (coalesced);
//   B tile (BK x BN): column n = tid % BN (fixed for the whole kernel), rows tid / BN +
//                     i * (NT / BN): a warp reads 32 consecutive columns of one row k.
// Out-of-range rows, columns and k are zero in shared memory (K=363, P=169, M=96 are
// multiples of no tile), and the epilogue stores only m < M, p < P.
//
// Main loop (both kernels): double-buffered shared memory and a register prefetch, ONE
// __syncthreads per k-tile:
//   prologue: tables of tiles 0 and 1; sync; load tile 0 -> regs -> smem[0]; sync
//   iteration t: load tile t+1 (global -> regs); compute on smem[t&1]; regs -> smem[(t+1)&1];
//                table of tile t+2 -> tbl[t&1]; sync
// smem[(t+1)&1] was last read by the compute of iteration t-1 and tbl[t&1] by the loads of
// iteration t-1, both before that iteration's barrier; every condition in the loop is
// uniform over the block, so every thread reaches every barrier.
//
// 32-bit indices where supports_common() guarantees the range (P = N*E*F, C*H*W, K); the
// batch-sized offsets (image base n*C*H*W, output (n*M + m)*E*F, k*P of the col matrix)
// are 64-bit.
#pragma once

#include "conv_shape.hpp"
#include "cuda_check.hpp"
#include "error.hpp"
#include "gemm_rungs.hpp"
#include "simple_plan.hpp"
#include "variant.hpp"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

namespace cs::gpu::variants::gemm {

// ---- element helpers ---------------------------------------------------------------

template <class T>
__device__ __forceinline__ T zero_of();
template <>
__device__ __forceinline__ float zero_of<float>() {
    return 0.0f;
}
template <>
__device__ __forceinline__ __half zero_of<__half>() {
    return __ushort_as_half(static_cast<unsigned short>(0));
}

// ---- what the loaders and the epilogue are given -------------------------------------

// The layer as the implicit loaders see it.
struct ConvDims {
    ConvShape s;
    int K = 0;   // C*R*S
    int RS = 0;  // R*S
    int HW = 0;  // H*W
    int EF = 0;  // E*F
    std::int64_t CHW = 0;
};

inline ConvDims conv_dims(const ConvShape& s) {
    ConvDims d;
    d.s = s;
    d.RS = s.R * s.S;
    d.K = s.C * d.RS;
    d.HW = s.H * s.W;
    d.EF = s.E * s.F;
    d.CHW = std::int64_t(s.C) * d.HW;
    return d;
}

// B read from an explicit K x P matrix (row-major, leading dimension ld): im2col-gemm.
template <class T>
struct ColParams {
    const T* col;
    std::int64_t ld;
    int K, P;
};

// B computed from the NCHW input: the implicit variants. P = images * E*F.
template <class T>
struct ConvParams {
    const T* in;
    ConvDims d;
    int P;
};

// Where column p of row m goes: out[base(p) + m * row_stride] with base(p) = n * img_stride
// + (p - n * cols_per_img), n = p / cols_per_img. NCHW: cols_per_img = E*F, img_stride =
// M*E*F, row_stride = E*F — the GEMM writes the final layout, no permute kernel.
template <class T>
struct OutMap {
    T* out;
    int M, P;
    int cols_per_img;
    std::int64_t img_stride;
    int row_stride;

    __device__ __forceinline__ std::int64_t col_base(int p) const {
        if (p >= P) return -1;
        const int n = p / cols_per_img;
        return std::int64_t(n) * img_stride + (p - n * cols_per_img);
    }
};

template <class T>
inline OutMap<T> nchw_out(T* out, const ConvShape& s, int P) {
    const int EF = s.E * s.F;
    return OutMap<T>{out, s.M, P, EF, std::int64_t(s.M) * EF, EF};
}

// ---- A tile: the weights, M x K row-major ---------------------------------------------

template <class T, int BM, int BK, int NT>
struct ATile {
    static_assert(NT % BK == 0, "the A tile needs NT to be a multiple of BK");
    static constexpr int kStep = NT / BK;  // rows per pass
    static_assert(BM % kStep == 0, "the A tile needs BM to be a multiple of NT / BK");
    static constexpr int kN = BM / kStep;  // elements per thread
    T v[kN];

    __device__ __forceinline__ static int col(int tid) { return tid % BK; }
    __device__ __forceinline__ static int row(int tid, int i) { return tid / BK + i * kStep; }

    __device__ __forceinline__ void load(const T* __restrict__ A, int M, int K, int m0, int k0, int tid) {
        const int k = k0 + col(tid);
#pragma unroll
        for (int i = 0; i < kN; ++i) {
            const int m = m0 + row(tid, i);
            v[i] = (m < M && k < K) ? A[std::int64_t(m) * K + k] : zero_of<T>();
        }
    }
};

// ---- B tile loaders ---------------------------------------------------------------------
// Interface: Params; init(params, p0, tid) once per kernel; make_table(params, tbl, k0, tid)
// (only the index-reuse loader has a table); load(params, k0, tbl, tid) fills v[].

template <int BK, int BN, int NT>
struct BLayout {
    static_assert(NT % BN == 0, "the B tile needs NT to be a multiple of BN");
    static constexpr int kStep = NT / BN;  // rows per pass
    static_assert(BK % kStep == 0, "the B tile needs BK to be a multiple of NT / BN");
    static constexpr int kN = BK / kStep;  // elements per thread
    __device__ __forceinline__ static int col(int tid) { return tid % BN; }
    __device__ __forceinline__ static int row(int tid, int i) { return tid / BN + i * kStep; }
};

// im2col-gemm: B is the unrolled matrix in global memory (coalesced rows).
template <class T, int BK, int BN, int NT>
struct ColMatrixB : BLayout<BK, BN, NT> {
    using L = BLayout<BK, BN, NT>;
    using Params = ColParams<T>;
    T v[L::kN];
    const T* ptr;
    bool ok;

    __device__ __forceinline__ void init(const Params& pr, int p0, int tid) {
        const int p = p0 + L::col(tid);
        ok = p < pr.P;
        ptr = pr.col + (ok ? p : 0);
    }
    __device__ __forceinline__ static void make_table(const Params&, int2*, int, int) {}
    __device__ __forceinline__ void load(const Params& pr, int k0, const int2*, int tid) {
#pragma unroll
        for (int i = 0; i < L::kN; ++i) {
            const int k = k0 + L::row(tid, i);
            v[i] = (ok && k < pr.K) ? ptr[std::int64_t(k) * pr.ld] : zero_of<T>();
        }
    }
};

// implicit-gemm: every element decodes k -> (c, r, s) and p -> (n, e, f) with integer
// division, as the course reports' fused kernel did. (The compiler hoists the p part: a
// thread's column is fixed; the k part, two divisions per element and tile, stays.)
template <class T, int BK, int BN, int NT>
struct ImplicitNaiveB : BLayout<BK, BN, NT> {
    using L = BLayout<BK, BN, NT>;
    using Params = ConvParams<T>;
    T v[L::kN];
    int p;

    __device__ __forceinline__ void init(const Params&, int p0, int tid) { p = p0 + L::col(tid); }
    __device__ __forceinline__ static void make_table(const Params&, int2*, int, int) {}
    __device__ __forceinline__ void load(const Params& pr, int k0, const int2*, int tid) {
        const ConvShape& s = pr.d.s;
#pragma unroll
        for (int i = 0; i < L::kN; ++i) {
            const int k = k0 + L::row(tid, i);
            T x = zero_of<T>();
            if (p < pr.P && k < pr.d.K) {
                const int n = p / pr.d.EF, ef = p - n * pr.d.EF;
                const int e = ef / s.F, f = ef - e * s.F;
                const int c = k / pr.d.RS, rs = k - c * pr.d.RS;
                const int r = rs / s.S, q = rs - r * s.S;
                const int ih = e * s.stride + r - s.pad, iw = f * s.stride + q - s.pad;
                if (ih >= 0 && ih < s.H && iw >= 0 && iw < s.W)
                    x = pr.in[((std::int64_t(n) * s.C + c) * s.H + ih) * s.W + iw];
            }
            v[i] = x;
        }
    }
};

// Index reuse (implicit-gemm-idx and the WMMA kernels):
//  - a column's (n, e, f), its image base offset and its window corner (ih0, iw0) are
//    computed once per thread in init() (a thread's column never changes);
//  - a k-tile's rows are decoded once per BLOCK: BK threads write the table entry
//    {c*H*W + r*W + s, (r << 16) | s} of each row k into shared memory (double-buffered,
//    written two tiles ahead, see the main loop), and every thread reads it back
//    (a broadcast) for its rows.
// Per element: one shared-memory load, two adds, two unsigned compares, one load. A row
// k >= K gets r = -32768, which fails the bounds test (supports_common: H, W < 16384);
// a column p >= P gets ih0 = -2^30, which fails it too.
template <class T, int BK, int BN, int NT>
struct ImplicitIdxB : BLayout<BK, BN, NT> {
    using L = BLayout<BK, BN, NT>;
    using Params = ConvParams<T>;
    static_assert(BK <= NT, "the table is written by BK threads");
    T v[L::kN];
    std::int64_t base;
    int ih0, iw0;

    __device__ __forceinline__ void init(const Params& pr, int p0, int tid) {
        const ConvShape& s = pr.d.s;
        const int p = p0 + L::col(tid);
        if (p < pr.P) {
            const int n = p / pr.d.EF, ef = p - n * pr.d.EF;
            const int e = ef / s.F, f = ef - e * s.F;
            ih0 = e * s.stride - s.pad;
            iw0 = f * s.stride - s.pad;
            base = std::int64_t(n) * pr.d.CHW + std::int64_t(ih0) * s.W + iw0;
        } else {
            ih0 = -(1 << 30);
            iw0 = 0;
            base = 0;
        }
    }
    __device__ __forceinline__ static void make_table(const Params& pr, int2* tbl, int k0, int tid) {
        if (tid < BK) {
            const int k = k0 + tid;
            int2 t;
            if (k < pr.d.K) {
                const ConvShape& s = pr.d.s;
                const int c = k / pr.d.RS, rs = k - c * pr.d.RS;
                const int r = rs / s.S, q = rs - r * s.S;
                t.x = c * pr.d.HW + r * s.W + q;
                t.y = int((unsigned(r) << 16) | unsigned(q));
            } else {
                t.x = 0;
                t.y = int(0x80000000u);  // r = -32768
            }
            tbl[tid] = t;
        }
    }
    __device__ __forceinline__ void load(const Params& pr, int, const int2* tbl, int tid) {
        const ConvShape& s = pr.d.s;
#pragma unroll
        for (int i = 0; i < L::kN; ++i) {
            const int2 t = tbl[L::row(tid, i)];
            const int r = t.y >> 16, q = t.y & 0xFFFF;
            const bool in_img = unsigned(ih0 + r) < unsigned(s.H) && unsigned(iw0 + q) < unsigned(s.W);
            v[i] = in_img ? pr.in[base + t.x] : zero_of<T>();
        }
    }
};

// ---- the fp32 SIMT tiled GEMM ---------------------------------------------------------
// Each thread owns TM x TN outputs: rows g*(BM/(TM/4)) + ty*4 + {0..3} and columns
// h*(BN/(TN/4)) + tx*4 + {0..3} (groups of 4 so that the shared-memory reads are float4
// and a warp's 16 tx read 256 contiguous bytes). A is stored transposed, As[k][m], padded
// by 4 floats per row (128x8 tile: the transposing stores hit 32 distinct banks).

template <int BM_, int BN_, int BK_, int TM_, int TN_, int MINB_>
struct SimtCfg {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_, MINB = MINB_;
    static constexpr int NT = (BM / TM) * (BN / TN);
    static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are groups of 4");
};
using Simt128 = SimtCfg<128, 128, 8, 8, 8, 2>;  // 256 threads, 8x8 per thread
using Simt64 = SimtCfg<64, 64, 16, 4, 4, 2>;    // 256 threads, 4x4 per thread
using Simt32 = SimtCfg<32, 32, 32, 4, 4, 4>;    //  64 threads, 4x4 per thread

template <class Cfg, template <class, int, int, int> class BLoad>
__global__ void __launch_bounds__(Cfg::NT, Cfg::MINB)
    simt_gemm_kernel(const float* __restrict__ A, int M, int K,
                     const typename BLoad<float, Cfg::BK, Cfg::BN, Cfg::NT>::Params bp, const OutMap<float> om,
                     int tiles_m) {
    constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN, NT = Cfg::NT;
    constexpr int LDA = BM + 4;
    constexpr int GM = TM / 4, GN = TN / 4;    // float4 groups per thread
    constexpr int SM = BM / GM, SN = BN / GN;  // spacing of the groups
    using ALd = ATile<float, BM, BK, NT>;
    using BLd = BLoad<float, BK, BN, NT>;

    __shared__ __align__(16) float As[2][BK][LDA];
    __shared__ __align__(16) float Bs[2][BK][BN];
    __shared__ int2 tbl[2][BK];

    const int tid = int(threadIdx.x);
    const int mt = int(blockIdx.x % unsigned(tiles_m));
    const int nt = int(blockIdx.x / unsigned(tiles_m));
    const int m0 = mt * BM, p0 = nt * BN;
    const int ktiles = (K + BK - 1) / BK;

    ALd a;
    BLd b;
    b.init(bp, p0, tid);
    BLd::make_table(bp, tbl[0], 0, tid);
    if (ktiles > 1) BLd::make_table(bp, tbl[1], BK, tid);
    __syncthreads();
    a.load(A, M, K, m0, 0, tid);
    b.load(bp, 0, tbl[0], tid);

    auto store = [&](int buf) {
#pragma unroll
        for (int i = 0; i < ALd::kN; ++i) As[buf][ALd::col(tid)][ALd::row(tid, i)] = a.v[i];
#pragma unroll
        for (int i = 0; i < BLd::kN; ++i) Bs[buf][BLd::row(tid, i)][BLd::col(tid)] = b.v[i];
    };
    store(0);
    __syncthreads();

    const int ty = tid / (BN / TN), tx = tid % (BN / TN);
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    for (int t = 0; t < ktiles; ++t) {
        const int cur = t & 1;
        const bool more = t + 1 < ktiles;
        if (more) {
            a.load(A, M, K, m0, (t + 1) * BK, tid);
            b.load(bp, (t + 1) * BK, tbl[cur ^ 1], tid);
        }
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float ar[TM], br[TN];
#pragma unroll
            for (int g = 0; g < GM; ++g) {
                const float4 x = *reinterpret_cast<const float4*>(&As[cur][kk][g * SM + ty * 4]);
                ar[g * 4 + 0] = x.x, ar[g * 4 + 1] = x.y, ar[g * 4 + 2] = x.z, ar[g * 4 + 3] = x.w;
            }
#pragma unroll
            for (int h = 0; h < GN; ++h) {
                const float4 y = *reinterpret_cast<const float4*>(&Bs[cur][kk][h * SN + tx * 4]);
                br[h * 4 + 0] = y.x, br[h * 4 + 1] = y.y, br[h * 4 + 2] = y.z, br[h * 4 + 3] = y.w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(ar[i], br[j], acc[i][j]);
        }
        if (more) store(cur ^ 1);
        if (t + 2 < ktiles) BLd::make_table(bp, tbl[cur], (t + 2) * BK, tid);
        __syncthreads();
    }

    // Epilogue: each column's output base once, then the rows.
    std::int64_t cb[TN];
#pragma unroll
    for (int h = 0; h < GN; ++h)
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) cb[h * 4 + jj] = om.col_base(p0 + h * SN + tx * 4 + jj);
#pragma unroll
    for (int g = 0; g < GM; ++g)
#pragma unroll
        for (int ii = 0; ii < 4; ++ii) {
            const int m = m0 + g * SM + ty * 4 + ii;
            if (m >= M) continue;
            const std::int64_t ro = std::int64_t(m) * om.row_stride;
#pragma unroll
            for (int j = 0; j < TN; ++j)
                if (cb[j] >= 0) om.out[cb[j] + ro] = acc[g * 4 + ii][j];
        }
}

// ---- tile-shape choice ------------------------------------------------------------------
// The largest block tile that still gives at least two blocks per SM (enough warps to
// fill the machine), else the tile with the most blocks: big tiles read each input and
// weight element fewer times (intensity ~ BM*BN/(BM+BN) FLOP per loaded element), small
// tiles keep more SMs busy when M*P is small (N=1: P = E*F).
struct TileOption {
    int bm, bn;
    const char* what;  // e.g. "128x128x8, 8x8 outputs/thread, 256 threads"
};

struct TileChoice {
    int index = 0;
    std::int64_t tiles_m = 0, tiles_n = 0;
    std::int64_t blocks() const { return tiles_m * tiles_n; }
};

template <std::size_t N>
inline TileChoice choose_tile(const TileOption (&opts)[N], int M, std::int64_t P, int sms) {
    TileChoice best;
    bool have = false;
    for (std::size_t i = 0; i < N; ++i) {  // opts: largest first
        TileChoice c;
        c.index = int(i);
        c.tiles_m = (M + opts[i].bm - 1) / opts[i].bm;
        c.tiles_n = (P + opts[i].bn - 1) / opts[i].bn;
        if (c.blocks() >= 2 * std::int64_t(sms)) return c;
        if (!have || c.blocks() > best.blocks()) best = c, have = true;
    }
    return best;
}

template <std::size_t N>
inline std::string tile_detail(const TileOption (&opts)[N], const TileChoice& c, std::int64_t P) {
    return std::string("block tile ") + opts[c.index].what + ", " + std::to_string(c.tiles_m) + "x" +
           std::to_string(c.tiles_n) + " = " + std::to_string(c.blocks()) + " blocks for P=" + std::to_string(P) +
           " columns";
}

inline const TileOption kSimtTiles[] = {
    {128, 128, "128x128x8 (8x8 outputs/thread, 256 threads)"},
    {64, 64, "64x64x16 (4x4 outputs/thread, 256 threads)"},
    {32, 32, "32x32x32 (4x4 outputs/thread, 64 threads)"},
};

template <class Cfg, template <class, int, int, int> class BLoad, class Params>
inline void launch_simt_gemm_cfg(const float* A, int M, int K, int P, const Params& bp, const OutMap<float>& om,
                                 cudaStream_t stream) {
    const std::int64_t tm = (M + Cfg::BM - 1) / Cfg::BM, tn = (std::int64_t(P) + Cfg::BN - 1) / Cfg::BN;
    if (tm * tn == 0) return;
    simt_gemm_kernel<Cfg, BLoad><<<unsigned(tm * tn), Cfg::NT, 0, stream>>>(A, M, K, bp, om, int(tm));
    CS_CUDA_CHECK_LAUNCH();
}

// Launches the SIMT GEMM with the tile of kSimtTiles[cfg] over M x P.
template <template <class, int, int, int> class BLoad, class Params>
inline void launch_simt_gemm(int cfg, const float* A, int M, int K, int P, const Params& bp,
                             const OutMap<float>& om, cudaStream_t stream) {
    switch (cfg) {
        case 0: launch_simt_gemm_cfg<Simt128, BLoad>(A, M, K, P, bp, om, stream); break;
        case 1: launch_simt_gemm_cfg<Simt64, BLoad>(A, M, K, P, bp, om, stream); break;
        default: launch_simt_gemm_cfg<Simt32, BLoad>(A, M, K, P, bp, om, stream); break;
    }
}

// ---- support checks -----------------------------------------------------------------------

// The index ranges the kernels assume (see the top of this file).
// implicit-gemm and implicit-gemm-idx: one SIMT GEMM launch over all N*E*F columns of the
// call, writing NCHW; the tile is chosen for the largest call (ctx.max_chunk_N images).
template <template <class, int, int, int> class BLoad>
inline std::unique_ptr<Plan> make_implicit_simt_plan(const Problem& p, const PlanContext& ctx, const char* what) {
    const ConvShape s = conv_shape(p.layer);
    const ConvDims d = conv_dims(s);
    const std::int64_t Pmax = std::max<std::int64_t>(1, ctx.max_chunk_N) * d.EF;
    const TileChoice tc = choose_tile(kSimtTiles, s.M, Pmax, ctx.prop.multiProcessorCount);
    const int cfg = tc.index;
    const std::string detail = std::string(what) + "; " + tile_detail(kSimtTiles, tc, Pmax);
    return make_simple_plan(
        [s, d, cfg](const DeviceIO& io, cudaStream_t stream) {
            const int P = int(io.N * d.EF);
            const ConvParams<float> bp{static_cast<const float*>(io.in), d, P};
            launch_simt_gemm<BLoad>(cfg, static_cast<const float*>(io.w), s.M, d.K, P, bp,
                                    nchw_out(static_cast<float*>(io.out), s, P), stream);
        },
        detail);
}

inline std::string mib(double bytes) {
    char b[48];
    std::snprintf(b, sizeof b, "%.2f MiB", bytes / (1024.0 * 1024.0));
    return b;
}

}  // namespace cs::gpu::variants::gemm
