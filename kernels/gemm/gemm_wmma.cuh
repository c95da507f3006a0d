// The tensor-core implicit GEMM of wmma-fp16 and wmma-tf32 (gemm_wmma_fp16.cu,
// gemm_wmma_tf32.cu): the loaders and the main loop of gemm_common.cuh (the index-reuse
// B loader, double-buffered shared memory, one barrier per k-tile), with the inner product
// done by warps on WMMA fragments instead of per-thread FMAs.
//
// Shared-memory layouts (both row-major, as the GEMM's operands are):
//   As[buf][m][k], leading dimension LDA = BK + PAD   -> matrix_a, wmma::row_major
//   Bs[buf][k][n], leading dimension LDB = BN + PAD   -> matrix_b, wmma::row_major
// PAD = 8 halves / 4 floats = 16 bytes: the leading dimensions stay multiples of 8 halves /
// 4 floats (WMMA's rule) and consecutive fragment rows start in different 16-byte bank
// groups. Every fragment pointer is a multiple of 32 bytes from the 128-byte aligned base
// (static_asserts below): rows 16*LDA*sizeof(T) apart, columns 16 elements, k-steps FK*LDB.
// B row-major (not col-major) because a warp's loads write 32 consecutive n of one row k:
// conflict-free stores into Bs[k][n].
//
// Warps: WARPS_M x WARPS_N, each owns a WM x WN warp tile = FM x FN fragments of 16x16.
// Epilogue: the pipeline buffers are reused (the loop's last barrier has passed) as one
// 16 x 20 float staging tile per warp; each accumulator fragment is stored there
// (mem_row_major, ldm 20), then the warp's lanes write it to NCHW with guards (lane: column
// lane % 16, rows lane / 16 + 2q), __syncwarp() around the staging.
#pragma once

#include "gemm_common.cuh"

#include <mma.h>

namespace cs::gpu::variants::gemm {

namespace wmma = nvcuda::wmma;

// fp16 inputs, 16x16x16 fragments, fp32 accumulation, half output.
struct F16Traits {
    using T = __half;
    using FragT = __half;
    static constexpr int FK = 16;
    static constexpr int PAD = 8;
    static constexpr int BK_L = 16, BK_M = 32, BK_S = 32;  // k-step of each tile (below)
    __device__ __forceinline__ static T to_smem(T x) { return x; }
    __device__ __forceinline__ static T from_acc(float x) { return __float2half_rn(x); }
};

// float inputs rounded to tf32 (m16n16k8), fp32 accumulation, float output. The rounding
// (wmma::__float_to_tf32) is done once per element when the tile is written to shared
// memory, not after each fragment load: the fragments then hold exactly the converted
// values, and each element is converted once instead of once per warp that loads it.
struct Tf32Traits {
    using T = float;
    using FragT = wmma::precision::tf32;
    static constexpr int FK = 8;
    static constexpr int PAD = 4;
    // Half the fp16 k-steps on the L and M tiles: the same bytes per tile row, and the
    // register prefetch of BK=16 / 32 floats would spill under the 128-register cap.
    static constexpr int BK_L = 8, BK_M = 16, BK_S = 32;
    __device__ __forceinline__ static T to_smem(float x) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
        return wmma::__float_to_tf32(x);
#else
        return x;
#endif
    }
    __device__ __forceinline__ static T from_acc(float x) { return x; }
};

template <int BM_, int BN_, int BK_, int WARPS_M_, int WARPS_N_, int MINB_>
struct WmmaCfg {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, WARPS_M = WARPS_M_, WARPS_N = WARPS_N_, MINB = MINB_;
    static constexpr int NWARPS = WARPS_M * WARPS_N, NT = 32 * NWARPS;
    static constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;
    static constexpr int FM = WM / 16, FN = WN / 16;
    static_assert(WM % 16 == 0 && WN % 16 == 0, "warp tiles are whole 16x16 fragments");
};
template <class Tr>
using WmmaL = WmmaCfg<128, 128, Tr::BK_L, 2, 4, 2>;  // 8 warps of 64x32 (4x2 fragments)
template <class Tr>
using WmmaM = WmmaCfg<64, 64, Tr::BK_M, 2, 2, 4>;  // 4 warps of 32x32 (2x2 fragments)
template <class Tr>
using WmmaS = WmmaCfg<32, 32, Tr::BK_S, 2, 2, 4>;  // 4 warps of 16x16 (1 fragment)

template <class Tr>
inline const TileOption kWmmaTiles[] = {
    {128, 128,
     Tr::FK == 16 ? "128x128x16 (8 warps of 64x32 = 4x2 fragments)" : "128x128x8 (8 warps of 64x32 = 4x2 fragments)"},
    {64, 64,
     Tr::FK == 16 ? "64x64x32 (4 warps of 32x32 = 2x2 fragments)" : "64x64x16 (4 warps of 32x32 = 2x2 fragments)"},
    {32, 32, "32x32x32 (4 warps of 16x16 = 1 fragment)"},
};

template <class Cfg, class Tr>
struct WmmaSmem {
    using T = typename Tr::T;
    static constexpr int LDA = Cfg::BK + Tr::PAD;
    static constexpr int LDB = Cfg::BN + Tr::PAD;
    static constexpr int A_ELEMS = Cfg::BM * LDA;  // one buffer
    static constexpr int B_ELEMS = Cfg::BK * LDB;
    static constexpr int PIPE_BYTES = 2 * (A_ELEMS + B_ELEMS) * int(sizeof(T));
    static constexpr int LDS = 20;  // staging ldm (floats): a multiple of 4
    static constexpr int STAGE_BYTES = Cfg::NWARPS * 16 * LDS * 4;
    static constexpr int BYTES = PIPE_BYTES > STAGE_BYTES ? PIPE_BYTES : STAGE_BYTES;
    // 256-bit alignment of every fragment pointer.
    static_assert((A_ELEMS * sizeof(T)) % 32 == 0, "A buffers 32-byte aligned");
    static_assert((B_ELEMS * sizeof(T)) % 32 == 0, "B buffers 32-byte aligned");
    static_assert((16 * LDA * sizeof(T)) % 32 == 0, "A fragment rows 32-byte aligned");
    static_assert((Tr::FK * sizeof(T)) % 32 == 0, "A fragment k-steps 32-byte aligned");
    static_assert((Tr::FK * LDB * sizeof(T)) % 32 == 0, "B fragment k-steps 32-byte aligned");
    static_assert((16 * sizeof(T)) % 32 == 0, "B fragment columns 32-byte aligned");
    static_assert((LDA * sizeof(T)) % 16 == 0 && (LDB * sizeof(T)) % 16 == 0, "ldm a multiple of 16 bytes");
    static_assert((16 * LDS * 4) % 32 == 0, "staging tiles 32-byte aligned");
    static_assert(Cfg::BK % Tr::FK == 0, "BK a multiple of the fragment's k");
    static_assert(BYTES <= 48 * 1024, "static shared memory limit");
};

template <class Cfg, class Tr>
__global__ void __launch_bounds__(Cfg::NT, Cfg::MINB)
    wmma_gemm_kernel(const typename Tr::T* __restrict__ A, int M, int K, const ConvParams<typename Tr::T> bp,
                     const OutMap<typename Tr::T> om, int tiles_m) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    using T = typename Tr::T;
    using Sm = WmmaSmem<Cfg, Tr>;
    constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, NT = Cfg::NT, FK = Tr::FK;
    constexpr int FM = Cfg::FM, FN = Cfg::FN, WM = Cfg::WM, WN = Cfg::WN;
    constexpr int LDA = Sm::LDA, LDB = Sm::LDB, LDS = Sm::LDS;
    using ALd = ATile<T, BM, BK, NT>;
    using BLd = ImplicitIdxB<T, BK, BN, NT>;
    using FragA = wmma::fragment<wmma::matrix_a, 16, 16, FK, typename Tr::FragT, wmma::row_major>;
    using FragB = wmma::fragment<wmma::matrix_b, 16, 16, FK, typename Tr::FragT, wmma::row_major>;
    using FragC = wmma::fragment<wmma::accumulator, 16, 16, FK, float>;

    __shared__ __align__(128) unsigned char smem[Sm::BYTES];
    __shared__ int2 tbl[2][BK];
    T* As = reinterpret_cast<T*>(smem);  // [2][BM][LDA]
    T* Bs = As + 2 * Sm::A_ELEMS;        // [2][BK][LDB]

    const int tid = int(threadIdx.x);
    const int warp = tid / 32, lane = tid % 32;
    const int wm = warp / Cfg::WARPS_N, wn = warp % Cfg::WARPS_N;
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
        T* as = As + buf * Sm::A_ELEMS;
        T* bs = Bs + buf * Sm::B_ELEMS;
#pragma unroll
        for (int i = 0; i < ALd::kN; ++i) as[ALd::row(tid, i) * LDA + ALd::col(tid)] = Tr::to_smem(a.v[i]);
#pragma unroll
        for (int i = 0; i < BLd::kN; ++i) bs[BLd::row(tid, i) * LDB + BLd::col(tid)] = Tr::to_smem(b.v[i]);
    };
    store(0);
    __syncthreads();

    FragC acc[FM][FN];
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

    for (int t = 0; t < ktiles; ++t) {
        const int cur = t & 1;
        const bool more = t + 1 < ktiles;
        if (more) {
            a.load(A, M, K, m0, (t + 1) * BK, tid);
            b.load(bp, (t + 1) * BK, tbl[cur ^ 1], tid);
        }
        const T* as = As + cur * Sm::A_ELEMS + (wm * WM) * LDA;
        const T* bs = Bs + cur * Sm::B_ELEMS + wn * WN;
#pragma unroll
        for (int kk = 0; kk < BK; kk += FK) {
            FragB fb[FN];
#pragma unroll
            for (int j = 0; j < FN; ++j) wmma::load_matrix_sync(fb[j], bs + kk * LDB + j * 16, LDB);
#pragma unroll
            for (int i = 0; i < FM; ++i) {
                FragA fa;
                wmma::load_matrix_sync(fa, as + i * 16 * LDA + kk, LDA);
#pragma unroll
                for (int j = 0; j < FN; ++j) wmma::mma_sync(acc[i][j], fa, fb[j], acc[i][j]);
            }
        }
        if (more) store(cur ^ 1);
        if (t + 2 < ktiles) BLd::make_table(bp, tbl[cur], (t + 2) * BK, tid);
        __syncthreads();
    }

    // Epilogue: the loop's last barrier has passed, so the pipeline buffers are free.
    float* st = reinterpret_cast<float*>(smem) + warp * 16 * LDS;
    const int col = lane % 16, row0 = lane / 16;
    std::int64_t cb[FN];
#pragma unroll
    for (int j = 0; j < FN; ++j) cb[j] = om.col_base(p0 + wn * WN + j * 16 + col);
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) {
            wmma::store_matrix_sync(st, acc[i][j], LDS, wmma::mem_row_major);
            __syncwarp();
#pragma unroll
            for (int q = 0; q < 8; ++q) {
                const int r = row0 + 2 * q;
                const int m = m0 + wm * WM + i * 16 + r;
                if (cb[j] >= 0 && m < M)
                    om.out[cb[j] + std::int64_t(m) * om.row_stride] = Tr::from_acc(st[r * LDS + col]);
            }
            __syncwarp();
        }
#endif
}

template <class Cfg, class Tr>
inline void launch_wmma_gemm_cfg(const typename Tr::T* A, int M, int K, const ConvParams<typename Tr::T>& bp,
                                 const OutMap<typename Tr::T>& om, cudaStream_t stream) {
    const std::int64_t tm = (M + Cfg::BM - 1) / Cfg::BM, tn = (std::int64_t(bp.P) + Cfg::BN - 1) / Cfg::BN;
    if (tm * tn == 0) return;
    wmma_gemm_kernel<Cfg, Tr><<<unsigned(tm * tn), Cfg::NT, 0, stream>>>(A, M, K, bp, om, int(tm));
    CS_CUDA_CHECK_LAUNCH();
}

// Launches the WMMA implicit GEMM with the tile of kWmmaTiles[cfg].
template <class Tr>
inline void launch_wmma_gemm(int cfg, const typename Tr::T* A, int M, int K, const ConvParams<typename Tr::T>& bp,
                             const OutMap<typename Tr::T>& om, cudaStream_t stream) {
    switch (cfg) {
        case 0: launch_wmma_gemm_cfg<WmmaL<Tr>, Tr>(A, M, K, bp, om, stream); break;
        case 1: launch_wmma_gemm_cfg<WmmaM<Tr>, Tr>(A, M, K, bp, om, stream); break;
        default: launch_wmma_gemm_cfg<WmmaS<Tr>, Tr>(A, M, K, bp, om, stream); break;
    }
}

// The variant-level pieces shared by wmma-fp16 and wmma-tf32.
template <class Tr>
inline std::unique_ptr<Plan> make_wmma_plan(const Problem& p, const PlanContext& ctx, const char* what) {
    const ConvShape s = conv_shape(p.layer);
    const ConvDims d = conv_dims(s);
    const std::int64_t Pmax = std::max<std::int64_t>(1, ctx.max_chunk_N) * d.EF;
    const TileChoice tc = choose_tile(kWmmaTiles<Tr>, s.M, Pmax, ctx.prop.multiProcessorCount);
    const int cfg = tc.index;
    const std::string detail =
        std::string(what) + ", implicit GEMM with index reuse; " + tile_detail(kWmmaTiles<Tr>, tc, Pmax) + " (" +
        (cfg == 0 ? "large tile: >= 2 blocks per SM" : "smaller tile: the large one would leave SMs idle") + ")";
    return make_simple_plan(
        [s, d, cfg](const DeviceIO& io, cudaStream_t stream) {
            using T = typename Tr::T;
            const int P = int(io.N * d.EF);
            const ConvParams<T> bp{static_cast<const T*>(io.in), d, P};
            const OutMap<T> om = nchw_out(static_cast<T*>(io.out), s, P);
            launch_wmma_gemm<Tr>(cfg, static_cast<const T*>(io.w), s.M, d.K, bp, om, stream);
        },
        detail);
}

}  // namespace cs::gpu::variants::gemm
