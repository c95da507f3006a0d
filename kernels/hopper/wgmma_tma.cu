// hopper-tma-{fp16,bf16,tf32} — Hopper rung 2: rung 1's wgmma core fed by the tensor memory
// accelerator (TMA) through an mbarrier pipeline instead of per-thread cp.async.
//
// Idea: rung 1 spends its issue slots on address arithmetic, bounds tests and 16-byte copies
// per thread per k-slice, and every k-slice ends in a CTA-wide barrier. TMA moves a whole
// tile with one instruction from one thread, does the im2col addressing, the padding and the
// swizzle in hardware, and signals completion on an mbarrier (transaction bytes), so the
// consumer warps only wait on a barrier and issue wgmma.
//   A (pixels x channels of one filter tap): cuTensorMapEncodeIm2col over the NHWC input
//     {C, W, H, N} (hopper_tma.cuh); B (filters x channels of one tap): a tiled 3D map over
//     the KRSC weights {C, R*S, M}. A k-slice is one tap and BK channels (pipeline.cuh:
//     tma_load_slice, mma_slice).
// Pipeline: STAGES stages with full / empty mbarriers; thread 0 fills them first and, after
// both warpgroups released slice kt-1, refills its stage with slice kt-1+STAGES. Thread 0 is
// also a consumer: rung 3 (wgmma_ws.cu) gives the copies a producer warpgroup of their own.
// Not persistent: one CTA per tile, 2 CTAs/SM where the tile allows it, so one CTA's fill and
// epilogue overlap the other's mainloop. Tile: the `tile` axis (tiles.hpp), default below.
// Numbers: the report's Hopper ladder (rung 2 against rungs 1 and 3 per layer); the history
// of the tile choice is in NOTES.md ("Hopper rung 2").
#include "hopper_core.cuh"
#include "hopper_tma.cuh"
#include "pipeline.cuh"
#include "rungs.hpp"
#include "tiles.hpp"

#include <cstdlib>
#include <type_traits>

namespace cs::gpu::variants::hopper {
namespace {

template <class T, int TILE>
__global__ void __launch_bounds__(kThreads, kTiles[TILE].minb)
    wgmma_tma_kernel(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                     T* __restrict__ out, const ConvGeom g, int tiles_n, int cslices, int nchw_out) {
#ifdef CS_HOPPER_DEVICE
    constexpr Tile kT = kTiles[TILE];
    constexpr int BN = kT.bn, ROWB = kT.rowb, STAGES = kT.stages, BK = ROWB / int(sizeof(T));
    using St = StageShape<BN, ROWB>;
    extern __shared__ unsigned char smem_raw[];
    const std::uint32_t sbase = (smem_u32(smem_raw) + 1023u) & ~1023u;
    const std::uint32_t full0 = sbase + STAGES * St::kBytes;  // STAGES x 8 bytes
    const std::uint32_t empty0 = full0 + STAGES * 8;          // STAGES x 8 bytes

    const int tid = int(threadIdx.x);
    const TileOrigin o = TileOrigin::of(int(blockIdx.x), tiles_n, BN, g);
    const int KT = g.R * g.S * cslices;

    if (tid == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full0 + 8 * s, 1);
            mbar_init(empty0 + 8 * s, 2);
        }
        mbar_fence_init();
    }
    __syncthreads();

    auto issue = [&](int kt, int stage) {
        tma_load_slice<BN, ROWB, BK>(&tmA, &tmB, sbase + std::uint32_t(stage) * St::kBytes, full0 + 8 * stage, o,
                                     KSlice::of(kt, cslices, g.S));
    };
    if (tid == 0) {
        const int pre = KT < STAGES ? KT : STAGES;
        for (int kt = 0; kt < pre; ++kt) issue(kt, kt);
    }

    float acc[BN / 2];
    zero(acc);
    const int wg = tid >> 7;
    Ring<STAGES> r;
    for (int kt = 0; kt < KT; ++kt) {
        mbar_wait(full0 + 8 * r.stage, r.phase);
        const std::uint32_t st = sbase + std::uint32_t(r.stage) * St::kBytes;
        mma_slice<T, BN, ROWB>(acc, st + std::uint32_t(wg) * 64u * ROWB, st + St::kABytes);
        wgmma_wait<1>();
        if (kt > 0) {
            // slice kt-1 has been read by this warpgroup: release its stage.
            const int ps = r.stage == 0 ? STAGES - 1 : r.stage - 1;
            if ((tid & 127) == 0) mbar_arrive(empty0 + 8 * ps);
            if (tid == 0 && kt - 1 + STAGES < KT) {
                mbar_wait(empty0 + 8 * ps, std::uint32_t((kt - 1) / STAGES) & 1u);
                issue(kt - 1 + STAGES, ps);
            }
            __syncwarp();  // warp 0 reconverges before the next (warpgroup-collective) wgmma
        }
        r.advance();
    }
    wgmma_wait<0>();
    fence_regs(acc);
    store_tile<T, BN>(acc, out, g, o.p0, o.m0, nchw_out != 0, tid);
#else
    (void)tmA, (void)tmB, (void)out, (void)g, (void)tiles_n, (void)cslices, (void)nchw_out;
#endif
}

template <int TILE>
constexpr int smem_bytes() {
    return kTiles[TILE].stages * StageShape<kTiles[TILE].bn, kTiles[TILE].rowb>::kBytes + 1024 + kTiles[TILE].stages * 16;
}

template <class T>
struct TmaGemm {
    int tile = 0;
    std::string info;
    // Cached maps and what they were encoded for.
    CUtensorMap a{}, b{};
    const void* key_in = nullptr;
    const void* key_w = nullptr;
    int key_n = -1;

    void run_tile(bool prepare_only, const T* out_dummy, T* out, const ConvGeom& g, bool nchw, cudaStream_t stream) const {
        (void)out_dummy;
        with_tile(tile, [&](auto I) {
            constexpr int i = decltype(I)::value;
            if constexpr (kTiles[i].bm == kBM) {  // 128-pixel tiles (the plan refuses the others)
                constexpr int smem = smem_bytes<i>();
                if (prepare_only) {
                    CS_CUDA_CHECK(
                        cudaFuncSetAttribute(wgmma_tma_kernel<T, i>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
                    return;
                }
                constexpr int BN = kTiles[i].bn, BK = kTiles[i].rowb / int(sizeof(T));
                const int tiles_n = (g.M + BN - 1) / BN;
                const std::int64_t grid = std::int64_t((g.P + kBM - 1) / kBM) * tiles_n;
                wgmma_tma_kernel<T, i><<<unsigned(grid), kThreads, smem, stream>>>(a, b, out, g, tiles_n,
                                                                                  (g.C + BK - 1) / BK, nchw ? 1 : 0);
                CS_CUDA_CHECK_LAUNCH();
            }
        });
    }
    void prepare() const { run_tile(true, nullptr, nullptr, ConvGeom{}, false, nullptr); }
    void launch(const T* in, const T* w, T* out, const ConvGeom& g, bool nchw, cudaStream_t stream) {
        if (g.P == 0) return;
        if (in != key_in || w != key_w || g.N != key_n) {
            const std::string err = encode_maps<T>(a, b, g, in, w, kTiles[tile].rowb / int(sizeof(T)), kTiles[tile].bn);
            if (!err.empty()) throw cs::Error("hopper-tma: " + err);
            key_in = in, key_w = w, key_n = g.N;
        }
        run_tile(false, nullptr, out, g, nchw, stream);
    }
    std::string detail() const { return info; }
    std::string config() const { return "tile=" + tile_name(tile); }
    std::size_t workspace_bytes() const { return 0; }
};

// Default tile (from the tile sweep on the H200, N=128): 128x96 for M <= 96; 128x256 where M
// is a multiple of 256 and the grid is >= 4 waves (conv2); else 128x128 with 3 stages and 2
// CTAs/SM (conv3-5: one CTA's fill and epilogue overlap the other's mainloop). In bytes, so
// tf32 takes the same tiles.
int default_tile(const Setup& u, std::int64_t n, int sms, int es) {
    const int rowb = choose_bk(u.g.C, es) * es;
    const std::int64_t rows = (n * u.g.EF + kBM - 1) / kBM;
    if (u.g.M <= 96) return find_tile(96, rowb, 1, 8);
    if (u.g.M % 256 == 0 && rows * (u.g.M / 256) >= 4 * std::int64_t(sms)) return find_tile(256, rowb, 1, 8);
    return find_tile(128, rowb, 2, 3);
}

template <class T>
std::unique_ptr<Plan> plan_t(const Problem& p, const PlanContext& ctx) {
    Setup u = make_setup(p);
    TmaGemm<T> gemm;
    gemm.tile = whole_slice_tile(p.axes.id("tile"),
                                 default_tile(u, std::max<std::int64_t>(1, ctx.max_chunk_N),
                                              ctx.prop.multiProcessorCount, int(sizeof(T))),
                                 "rung 2");
    gemm.prepare();
    // Check the maps at plan time (the addresses are placeholders: encoding reads no memory).
    {
        const std::int64_t maxn = std::max<std::int64_t>(1, ctx.max_chunk_N);
        ConvGeom g = geom_for(u, maxn);
        CUtensorMap a, b;
        const int bn = kTiles[gemm.tile].bn, bk = kTiles[gemm.tile].rowb / int(sizeof(T));
        const std::string err = encode_maps<T>(a, b, g, reinterpret_cast<const void*>(std::uintptr_t(1) << 20),
                                               reinterpret_cast<const void*>(std::uintptr_t(1) << 21), bk, bn);
        if (!err.empty()) throw Skip(err);
        const std::int64_t tiles = (maxn * u.g.EF + kBM - 1) / kBM * ((u.g.M + bn - 1) / bn);
        const int cs = (u.g.C + bk - 1) / bk;
        gemm.info = std::string("wgmma m64n") + std::to_string(bn) + "k" + std::to_string(WgmmaSS<T, 96>::kK) + " " +
                    Elem<T>::name + " fed by TMA (im2col + tiled maps, " + (kTiles[gemm.tile].rowb == 128 ? "128B" : "64B") +
                    " swizzle) on mbarriers, CTA tile " + tile_text(gemm.tile, int(sizeof(T))) + ", " +
                    std::to_string(tiles) + " CTAs for " + std::to_string(maxn) + " image(s); " +
                    std::to_string(u.g.R * u.g.S) + " taps x " + std::to_string(cs) + " channel slice(s) of " +
                    std::to_string(bk) + " (C=" + std::to_string(u.g.C) + ")";
    }
    return make_hopper_plan<T>(p, ctx, std::move(u), std::move(gemm));
}

}  // namespace

std::unique_ptr<Plan> tma_plan(const PrecisionRow& row, const Problem& p, const PlanContext& ctx) {
    if (row.io == DType::f32) return plan_t<float>(p, ctx);
    if (row.io == DType::bf16) return plan_t<__nv_bfloat16>(p, ctx);
    return plan_t<__half>(p, ctx);
}

}  // namespace cs::gpu::variants::hopper
