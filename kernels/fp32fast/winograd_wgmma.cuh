// The wgmma Winograd rungs' shared pieces (winograd_wgmma.cu, winograd_wgmma_ws.cu): the tiled
// TMA maps over the Winograd-domain operands V [NX][Tp][K2] and U [NX][Mp][K2] (halves; boxes of
// 64 halves = one chunk's hi + lo = one 128 B row in the 128B swizzle, x the block's tile rows /
// filter rows x 1 position), the stage's copies, and the epilogue of a warpgroup's 64 x WN
// fragment. Everything else (transforms, fold, plan) is winograd_3xfp16.cuh; the tiles are host
// code in fp32fast_tiles.hpp, the rungs' supports() in fp32fast_family.cpp.
#pragma once

#include "hopper_core.cuh"
#include "hopper_tma.cuh"
#include "winograd_3xfp16.cuh"

namespace cs::gpu::variants {
namespace fp32fast {
namespace hw = cs::gpu::variants::hopper;

struct WtcMaps {
    CUtensorMap v, u;
};

// Encoded once per plan: V's boxes are Cfg::BT tile rows, U's Cfg::BM filter rows.
template <class Cfg>
WtcMaps wtc_encode_maps(const WtcArgs& a) {
    WtcMaps st{};
    const auto& fns = hw::driver_fns();
    auto encode = [&](CUtensorMap& m, const __half* base, int rows, int box_rows, const char* what) {
        const cuuint64_t dims[3] = {cuuint64_t(a.K2), cuuint64_t(rows), cuuint64_t(Cfg::NX)};
        const cuuint64_t strides[2] = {cuuint64_t(a.K2) * 2, cuuint64_t(a.K2) * 2 * cuuint64_t(rows)};
        const cuuint32_t box[3] = {cuuint32_t(2 * Cfg::CH), cuuint32_t(box_rows), 1};
        const cuuint32_t estr[3] = {1, 1, 1};
        const CUresult r = fns.tiled(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, const_cast<__half*>(base), dims, strides,
                                     box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        if (r != CUDA_SUCCESS)
            throw Skip(std::string("cuTensorMapEncodeTiled refused the map of ") + what + " (CUresult " +
                       std::to_string(int(r)) + ")");
    };
    encode(st.v, a.V, a.Tp, Cfg::BT, "the transformed tiles");
    encode(st.u, a.U, a.Mp, Cfg::BM, "the transformed filters");
    return st;
}

// The TMA-fed main kernels' glue to WtcPlan (its Main interface): Self provides NT, SMEM (its
// tile, fp32fast_tiles.hpp) and kernel(), the __global__ function taking (V map, U map, WtcArgs).
template <class Self, class Cfg>
struct WtcTmaMain {
    using State = WtcMaps;
    static std::string copies() { return "TMA"; }
    static void prepare() {
        CS_CUDA_CHECK(cudaFuncSetAttribute(Self::kernel(), cudaFuncAttributeMaxDynamicSharedMemorySize, Self::SMEM));
    }
    static State make_state(const WtcArgs& a) { return wtc_encode_maps<Cfg>(a); }
    static void launch(const State& st, const WtcArgs& a, unsigned blocks, cudaStream_t stream) {
        Self::kernel()<<<blocks, Self::NT, Self::SMEM, stream>>>(st.v, st.u, a);
        CS_CUDA_CHECK_LAUNCH();
    }
};

// A stage's layout in shared memory: G chunks, each BT rows of V then BM rows of U (128 B each).
template <class Cfg, int G>
struct WtcStage {
    static constexpr std::uint32_t ROWB = 128, A_BYTES = Cfg::BT * ROWB, CK_BYTES = (Cfg::BT + Cfg::BM) * ROWB;
    static constexpr std::uint32_t BYTES = G * CK_BYTES;
    // Stage s = (position xi, chunk group): 2G tiled TMA loads (V rows t0.., U rows m0.., one chunk's
    // hi + lo each), completing on bar. Chunks past Cp are outside the maps: TMA fills them with
    // zeros and counts their bytes all the same.
    __device__ __forceinline__ static void issue(const CUtensorMap* tmV, const CUtensorMap* tmU, std::uint32_t dst,
                                                 std::uint32_t bar, int xi, int kc, int t0, int m0) {
        hw::mbar_arrive_expect_tx(bar, BYTES);
#pragma unroll
        for (int g = 0; g < G; ++g) {
            hw::tma_load_3d(dst + g * CK_BYTES, tmV, bar, (kc + g) * 2 * Cfg::CH, t0, xi);
            hw::tma_load_3d(dst + g * CK_BYTES + A_BYTES, tmU, bar, (kc + g) * 2 * Cfg::CH, m0, xi);
        }
    }
};

// A stage's products for one warpgroup: per chunk and k16, hi*hi into acc[0], hi*lo into acc[1],
// lo*hi into acc[2] (wgmma m64nWNk16, A = the BT = 64 V rows, B = WN U rows): three independent
// accumulator chains, issued in turn, so that consecutive wgmma do not wait on each other's
// results. dA, dB: descriptors of the stage's first chunk (start address >> 4 in the low bits: a
// chunk is CK_BYTES >> 4 more, a k16 step 2 more, the lo half of a row 4 more). One commit group.
template <class Cfg, int G, int WN>
__device__ __forceinline__ void wtc_stage_mma(float (&acc)[3][WN / 2], std::uint64_t dA, std::uint64_t dB) {
    using W = hw::WgmmaSS<__half, WN>;
    constexpr std::uint64_t LO = (Cfg::CH * 2) >> 4;  // the lo half of a row, in 16 B units
    hw::wgmma_fence();
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
        for (int ks = 0; ks < Cfg::CH / 16; ++ks) {
            const std::uint64_t k = g * (WtcStage<Cfg, G>::CK_BYTES >> 4) + 2 * ks;
            W::mma(acc[0], dA + k, dB + k);
            W::mma(acc[1], dA + k, dB + LO + k);
            W::mma(acc[2], dA + LO + k, dB + k);
        }
    hw::wgmma_commit();
}

// After the position's wait: the merged products m[e] = acc0 + 2^-11 (acc1 + acc2) of element e.
template <int EL>
__device__ __forceinline__ float wtc_merged(const float (&acc)[3][EL], int e) {
    return fmaf(acc[1][e] + acc[2][e], 1.0f / 2048.0f, acc[0][e]);
}

// Epilogues of a warpgroup's 64 x WN fragment of folded outputs: accumulator element 4j + 2i + h
// of wgmma m64nN is tile t0 + 16*warp + lane/4 + 8i, filter m0 + 8j + 2*(lane%4) + h (warp: the
// warp's index in its warpgroup). Writing the outputs is a large share of the main kernels' time
// at conv2 N=128 (ncu with and without the stores; git show 3ab0d79:gpu/variants/hopper/winograd_wgmma.cuh):
// 96 MB, written when the block ends.
//
// Direct: each thread stores its 144 outputs (4-byte stores; a warp instruction covers 4 filter
// planes x 8 tiles). Its two tiles are located once (wtc_out_tile; located per element, as
// wtc_store does for the mma.sync rung's scattered fragment, ~2100 instructions per warp). Used where another block on the SM overlaps
// the epilogue (the one-warpgroup rung, where it measured at least as fast as the staged form).
template <int MT, int WN>
__device__ __forceinline__ void wtc_store_direct(const WtcArgs& a, const float (&Y)[MT * MT][WN / 2], int t0, int m0,
                                                 int warp, int lane) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        const int t = t0 + 16 * warp + lane / 4 + 8 * i;
        if (t >= a.T) continue;
        const WtcOutTile o = wtc_out_tile<MT>(a, t);
#pragma unroll
        for (int j = 0; j < WN / 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) wtc_put<MT, WN / 2>(a, o, Y, 4 * j + 2 * i + h, m0 + 8 * j + 2 * (lane % 4) + h);
    }
}

// Staged: the fragment goes to S in shared memory (filter-major, 9 outputs per tile, a filter's row
// WTC_SP floats: 4 mod 32, so a warp's 32 writes hit 32 banks), then each warp writes whole output
// rows: for each run of the block's tiles within one tile row and each (filter, output row), 3 x
// run floats contiguous in NCHW (27 at conv2: 108 B). Used where the epilogue is exposed (one
// block per SM: the warp-specialised rung, where it measured faster than the direct form).
// sync(): a barrier over every thread that writes S (and that no longer reads what S overlays).
constexpr int WTC_SP = 64 * 9 + 4;
template <int MT, int WN, class Sync>
__device__ __forceinline__ void wtc_store_staged(const WtcArgs& a, const float (&Y)[MT * MT][WN / 2], int t0, int m0,
                                                 int warp, int lane, float* S, Sync sync) {
    static_assert(MT * MT <= 9, "S holds 9 outputs per tile");
    const WtcOutMul om(a);  // the range scale's 2^(ex+ew)
    sync();  // S overlays the pipeline's buffers
#pragma unroll
    for (int j = 0; j < WN / 8; ++j)
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                float* const row = S + (8 * j + 2 * (lane % 4) + h) * WTC_SP + (16 * warp + lane / 4 + 8 * i) * 9;
#pragma unroll
                for (int k = 0; k < MT * MT; ++k) row[k] = om(Y[k][4 * j + 2 * i + h]);
            }
    sync();
    const std::int64_t EF = std::int64_t(a.E) * a.F;
    for (int tl = 0; tl < 64 && t0 + tl < a.T;) {  // runs of tiles in one tile row (uniform over the block)
        const int t = t0 + tl;
        const WtcOutTile o = wtc_out_tile<MT>(a, t);
        const int cnt = min(min(a.tiles_w - o.tw, 64 - tl), a.T - t), nf = min(cnt * MT, o.nf);
        for (int idx = warp; idx < WN * MT; idx += 4) {  // (filter, output row of the tile row)
            const int ml = idx / MT, yi = idx - ml * MT, m = m0 + ml;
            if (m >= a.M || yi >= o.ne) continue;
            const float* const src = S + ml * WTC_SP + tl * 9 + yi * MT;
            for (int x = lane; x < nf; x += 32) {
                const int tt = x / MT;
                o.base[m * EF + std::int64_t(yi) * a.F + x] = src[tt * 9 + (x - tt * MT)];
            }
        }
        tl += cnt;
    }
}

}  // namespace fp32fast
}  // namespace cs::gpu::variants
