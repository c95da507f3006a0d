// The exact-fp32 fast family's spec and its rungs' supports() (host code; the plans and their
// kernels are the .cu files): fp32-class results faster than the FMA floor of a plain implicit
// GEMM. Fused Winograd on the FMA pipes (winograd_f2x2_3x3.cu, winograd_f4x4_3x3.cu,
// winograd_f2x2_5x5.cu, winograd_f3x3_5x5.cu; kernel: winograd_fused.cuh), on canvases
// (winograd_canvas.cu), on the tensor cores as 3xFP16 (winograd_3xfp16.cu; winograd_wgmma.cu
// and winograd_wgmma_ws.cu on wgmma, sm_90a; shared: winograd_3xfp16.cuh), an implicit GEMM built
// like cuBLAS SGEMM (simt_gemm.cu) and 3xTF32 on mma.sync (split_tf32.cu, whose one-product twin
// tf32-mma-1x shows the error the split removes); shared: fp32fast_common.cuh. NCHW; Winograd needs
// 3x3 or 5x5 stride 1. Host headers: the entry points (fp32fast_rungs.hpp), the tiles
// (fp32fast_tiles.hpp), the canvas geometry (winograd_canvas.hpp).
#include "families.hpp"
#include "fp32fast_rungs.hpp"
#include "fp32fast_tiles.hpp"
#include "tma_driver.hpp"
#include "winograd_canvas.hpp"

#include <climits>
#include <cstddef>
#include <cstdint>

namespace cs::gpu::variants {

namespace fp32fast {
namespace {

// ---- the GEMM rungs (simt_gemm.cu, split_tf32.cu) ------------------------------------------------

// simt-gemm: the index ranges of its GEMM view and of the im2col row table.
std::optional<std::string> simt_common_supports(const Problem& p) {
    if (p.layout != Layout::nchw) return std::string("NCHW only (the implicit B loader reads NCHW)");
    const Layer& l = p.layer;
    if (p.N * std::int64_t(l.E()) * l.F() > std::int64_t(INT_MAX) - 1024)
        return std::string("N*E*F columns exceed 32-bit indices");
    if (std::int64_t(l.C) * l.H * l.W > INT_MAX / 2) return std::string("one image's C*H*W exceeds 32-bit offsets");
    if (l.K() > INT_MAX / 4) return std::string("K = C*R*S exceeds 32-bit indices");
    if (l.H >= 16384 || l.W >= 16384 || l.R >= 16384 || l.S >= 16384)
        return std::string("H, W, R or S >= 16384 (the row table packs r and s in 16 bits)");
    return std::nullopt;
}

// split-tf32 and tf32-mma-1x: mma.sync tf32 and cp.async, the 3xTF32 block's shared memory (the
// larger of the two), the same index ranges and the packed weights' 32-bit index.
std::optional<std::string> tc_supports(const Problem& p, const cudaDeviceProp& prop) {
    if (p.layout != Layout::nchw) return std::string("NCHW only (the implicit B loader reads NCHW)");
    if (prop.major < 8) return std::string("needs sm_80+ (mma.sync tf32, cp.async)");
    if (prop.sharedMemPerBlockOptin < std::size_t(TcTile<true>::SMEM))
        return std::string("needs ") + std::to_string(TcTile<true>::SMEM) + " bytes of shared memory per block";
    const Layer& l = p.layer;
    if (p.N * std::int64_t(l.E()) * l.F() > std::int64_t(INT_MAX) - 1024)
        return std::string("N*E*F columns exceed 32-bit indices");
    if (std::int64_t(l.C) * l.H * l.W > INT_MAX / 2) return std::string("one image's C*H*W exceeds 32-bit offsets");
    if (l.K() > INT_MAX / 4) return std::string("K = C*R*S exceeds 32-bit indices");
    if (double(l.M + 127) * double(l.K() + 15) * 2 > double(INT_MAX))
        return std::string("M*K too large for the packed weights' 32-bit index");
    if (l.H >= 16384 || l.W >= 16384 || l.R >= 16384 || l.S >= 16384)
        return std::string("H, W, R or S >= 16384 (the row table packs r and s in 16 bits)");
    return std::nullopt;
}

// ---- the Winograd rungs ---------------------------------------------------------------------------

// What every fused Winograd rung asks of a problem's shape (winograd_fused.cuh's and the 3xFP16
// split's, winograd_3xfp16.cuh): NCHW and an R x R filter at stride 1; empty when the shape has them.
std::optional<std::string> winograd_filter_supports(const Problem& p, int R) {
    const Layer& l = p.layer;
    if (p.layout != Layout::nchw) return std::string("NCHW only");
    if (l.R != R || l.S != R || l.stride != 1)
        return "Winograd F(mxm," + std::to_string(R) + "x" + std::to_string(R) + ") needs a " + std::to_string(R) + "x" +
               std::to_string(R) + " filter at stride 1 (this layer: " + std::to_string(l.R) + "x" +
               std::to_string(l.S) + " stride " + std::to_string(l.stride) + ")";
    return std::nullopt;
}
// ... and of its size: `smem` bytes of shared memory per block, and 32-bit indices for the
// batch's tiles of mt x mt outputs (plus the `block_tiles` of a block past the last) and for the
// input's offsets.
std::optional<std::string> winograd_size_supports(const Problem& p, const cudaDeviceProp& prop, int smem, int mt,
                                                  int block_tiles) {
    const Layer& l = p.layer;
    if (prop.sharedMemPerBlockOptin < std::size_t(smem))
        return "needs " + std::to_string(smem) + " bytes of shared memory per block (device opt-in limit " +
               std::to_string(prop.sharedMemPerBlockOptin) + ")";
    const std::int64_t tiles = p.N * std::int64_t((l.E() + mt - 1) / mt) * ((l.F() + mt - 1) / mt);
    if (tiles > std::int64_t(INT_MAX) - block_tiles) return std::string("N * tiles exceeds 32-bit indices");
    if (p.N * l.C * l.H * l.W > std::int64_t(INT_MAX))
        return std::string("N*C*H*W exceeds the kernel's 32-bit input offsets");
    return std::nullopt;
}

// The fused Winograd rungs on the FMA pipes (winograd_fused.cuh), block Cfg (fp32fast_tiles.hpp).
template <class Cfg>
std::optional<std::string> wino_supports(const Problem& p, const cudaDeviceProp& prop) {
    if (auto why = winograd_filter_supports(p, Cfg::R)) return why;
    if (prop.major < 8) return std::string("needs sm_80+ (cp.async)");
    return winograd_size_supports(p, prop, Cfg::SMEM, Cfg::MT, Cfg::BN);
}

// The 3xFP16 rungs (winograd_3xfp16.cuh), Cfg with a main kernel whose device needs `device`
// checks and whose block takes `smem` bytes of shared memory.
using DeviceCheck = std::optional<std::string> (*)(const cudaDeviceProp&);
template <class Cfg>
std::optional<std::string> wtc_supports(const Problem& p, const cudaDeviceProp& prop, DeviceCheck device, int smem) {
    if (auto why = winograd_filter_supports(p, Cfg::R)) return why;
    if (auto why = device(prop)) return why;
    return winograd_size_supports(p, prop, smem, Cfg::MT, Cfg::BT);
}
// mma.sync m16n8k16 (winograd_3xfp16.cu).
std::optional<std::string> wtc_mma_sync_device(const cudaDeviceProp& prop) {
    if (prop.major < 8) return std::string("needs sm_80+ (mma.sync f16, ldmatrix, cp.async)");
    return std::nullopt;
}
// wgmma and TMA (winograd_wgmma.cu, winograd_wgmma_ws.cu: sm_90a objects), with the
// driver's tensor-map encoder.
std::optional<std::string> wtc_wgmma_device(const cudaDeviceProp& prop) {
    if (prop.major != 9 || prop.minor != 0) return std::string("needs sm_90 (Hopper): built for sm_90a (wgmma, TMA)");
    if (!hopper::driver_fns().error.empty()) return hopper::driver_fns().error;
    return std::nullopt;
}

}  // namespace
}  // namespace fp32fast

std::optional<std::string> simt_gemm_supports(const Problem& p, const cudaDeviceProp&) {
    return fp32fast::simt_common_supports(p);
}

std::vector<Axis> simt_gemm_axes() {
    std::vector<std::string> tiles;
    for (int i = 0; i < fp32fast::kSimtNumCfgs; ++i) tiles.push_back(fp32fast::simt_tile_name(i));
    return {{"tile", tiles, "block tile BMxBNxBK and outputs per thread (kSimtCfgs; default the last)"},
            {"split", fp32fast::kSimtSplits,
             "at most S K parts of ceil(k-tiles / S) k-tiles each (the detail says how many), summed in order by a "
             "second kernel (default: choose_split's rule)",
             fp32fast::kSimtSplitParts}};
}

std::optional<std::string> split_tf32_supports(const Problem& p, const cudaDeviceProp& prop) {
    return fp32fast::tc_supports(p, prop);
}

std::optional<std::string> winograd_f2x2_supports(const Problem& p, const cudaDeviceProp& prop) {
    return fp32fast::wino_supports<fp32fast::WinoF2>(p, prop);
}
std::optional<std::string> winograd_f4x4_supports(const Problem& p, const cudaDeviceProp& prop) {
    return fp32fast::wino_supports<fp32fast::WinoF4>(p, prop);
}
std::optional<std::string> winograd_f2x2_5x5_supports(const Problem& p, const cudaDeviceProp& prop) {
    return fp32fast::wino_supports<fp32fast::WinoF25>(p, prop);
}
std::optional<std::string> winograd_f3x3_5x5_supports(const Problem& p, const cudaDeviceProp& prop) {
    return fp32fast::wino_supports<fp32fast::WinoF35>(p, prop);
}

std::optional<std::string> winograd_3xfp16_f3x3_5x5_supports(const Problem& p, const cudaDeviceProp& prop) {
    return fp32fast::wtc_supports<fp32fast::WtcF35>(p, prop, fp32fast::wtc_mma_sync_device,
                                                    fp32fast::WtcMmaSyncTile<fp32fast::WtcF35>::SMEM);
}
std::optional<std::string> winograd_3xfp16_wgmma_f3x3_5x5_supports(const Problem& p, const cudaDeviceProp& prop) {
    return fp32fast::wtc_supports<fp32fast::WtcF35W>(p, prop, fp32fast::wtc_wgmma_device,
                                                     fp32fast::WtcWgmmaTile<fp32fast::WtcF35W>::SMEM);
}
std::optional<std::string> winograd_3xfp16_wgmma_ws_f3x3_5x5_supports(const Problem& p, const cudaDeviceProp& prop) {
    return fp32fast::wtc_supports<fp32fast::WtcF35Ws>(p, prop, fp32fast::wtc_wgmma_device,
                                                      fp32fast::WtcWgmmaWsTile<fp32fast::WtcF35Ws>::SMEM);
}

// winograd-f4x4 on the canvases: the layer as winograd-f4x4 takes it, and the canvas problem too.
std::optional<std::string> winograd_f4x4_canvas_supports(const Problem& p, const cudaDeviceProp& prop) {
    if (auto why = winograd_f4x4_supports(p, prop)) return why;
    const int k = fp32fast::canvas_side(p.N);
    const fp32fast::CanvasGeom g = fp32fast::canvas_geom(p.layer, k);
    const std::int64_t canvases = (p.N + k * k - 1) / (k * k);
    if (auto why = winograd_f4x4_supports(fp32fast::canvas_problem(p, g, canvases), prop)) return "canvas: " + *why;
    return std::nullopt;
}

Family fp32fast_family() {
    auto rung = [](std::string name, PrecisionRow row, std::string idea, RungSupports sup, RungPlan pl,
                   std::string algo) {
        return make_rung(std::move(name), {std::move(row)}, std::move(idea), std::move(sup), std::move(pl),
                         {std::move(algo)});
    };
    auto wino = [&](std::string name, std::string idea, PlainSupports sup, RungPlan pl) {
        return rung(std::move(name), row_fp32(), std::move(idea), plain(sup), std::move(pl), "winograd");
    };
    Rung simt = rung("simt-gemm", row_fp32(),
                     "implicit GEMM built like cuBLAS SGEMM: transposed weights, plan-time im2col table, 3-stage "
                     "cp.async, warp tiles, 8x8 per thread, double-buffered fragments, k-tiles of 16, split-K where the "
                     "tiles are few",
                     plain(simt_gemm_supports), CS_PLAN(simt_gemm_plan), "gemm");
    simt.axes = simt_gemm_axes();
    // fp32-fast holds three unrelated ladders: a GEMM, Winograd for 3x3 and Winograd for 5x5
    const auto on = [](const char* ladder, Rung r) {
        r.ladder = ladder;
        return r;
    };
    const char* kGemm = "fp32-fast GEMM";
    const char* kWino3 = "fp32-fast Winograd 3x3";
    const char* kWino5 = "fp32-fast Winograd 5x5";
    return {
        "fp32-fast",
        {},
        {
            on(kWino3, wino("winograd-f2x2",
                 "fused Winograd F(2x2,3x3): filter transform each run, input transform in shared memory, 16 "
                 "batched channel GEMMs in registers, output transform in the epilogue",
                 winograd_f2x2_supports, CS_PLAN(winograd_f2x2_plan))),
            on(kWino3, wino("winograd-f4x4",
                 "fused Winograd F(4x4,3x3): as winograd-f2x2 with 6x6 windows, 36 GEMMs, 4x fewer multiplies",
                 winograd_f4x4_supports, CS_PLAN(winograd_f4x4_plan))),
            on(kWino5, wino("winograd-f2x2-5x5",
                 "fused Winograd F(2x2,5x5) (points 0, +-1, 2, -1/2, inf) for conv2: the fused kernel generalised "
                 "to 5x5 filters, 6x6 windows, 36 batched channel GEMMs, 2.78x fewer multiplies than direct",
                 winograd_f2x2_5x5_supports, CS_PLAN(winograd_f2x2_5x5_plan))),
            on(kWino5, wino("winograd-f3x3-5x5",
                 "fused Winograd F(3x3,5x5) (points 0, +-1, +-2, 1/2, inf): 7x7 windows, 49 batched channel GEMMs, "
                 "4.59x fewer multiplies than direct; 27x27 outputs = 9x9 tiles, no border waste",
                 winograd_f3x3_5x5_supports, CS_PLAN(winograd_f3x3_5x5_plan))),
            on(kWino5, wino("winograd-3xfp16-f3x3-5x5",
                 "winograd-f3x3-5x5's 49 position GEMMs on the tensor cores (mma.sync m16n8k16) as 3xFP16: "
                 "transforms split into fp16 hi + lo, hi*hi + hi*lo + lo*hi in fp32, each position folded into the "
                 "3x3 outputs at once; per-tensor power-of-two scales found on the GPU each run cover the "
                 "transforms' growth (225|x|, 25/9|w|): fp32 class for any finite data with max|x| max|w| K < 2^127, "
                 "else an ERROR naming the range",
                 winograd_3xfp16_f3x3_5x5_supports, CS_PLAN(winograd_3xfp16_f3x3_5x5_plan))),
            on(kWino5, wino("winograd-3xfp16-wgmma-f3x3-5x5",
                 "winograd-3xfp16-f3x3-5x5 with the position GEMMs on wgmma m64n32k16 from 128 B-swizzled shared "
                 "memory, fed by TMA (one warpgroup of 64 tiles x 32 filters, 2 blocks/SM): no fragment registers, "
                 "no copy instructions, products in flight while the next stage loads",
                 winograd_3xfp16_wgmma_f3x3_5x5_supports, CS_PLAN(winograd_3xfp16_wgmma_f3x3_5x5_plan))),
            on(kWino5, wino("winograd-3xfp16-wgmma-ws-f3x3-5x5",
                 "winograd-3xfp16-wgmma-f3x3-5x5 warp-specialised, blocks of 64 tiles x 64 filters: an MMA "
                 "warpgroup (wgmma m64n64k16, TMA) hands each position's products through shared memory to two fold "
                 "warpgroups; the outputs leave through shared memory as whole rows",
                 winograd_3xfp16_wgmma_ws_f3x3_5x5_supports, CS_PLAN(winograd_3xfp16_wgmma_ws_f3x3_5x5_plan))),
            on(kWino3, wino("winograd-f4x4-canvas",
                 "winograd-f4x4 on canvases of 4x4 images a pad apart (pack and unpack kernels around it): 86% of "
                 "the tiles' outputs used on 13x13 planes instead of 66%",
                 winograd_f4x4_canvas_supports, CS_PLAN(winograd_f4x4_canvas_plan))),
            on(kGemm, simt),
            on(kGemm, rung("split-tf32", row_fp32(),
                 "3xTF32 implicit GEMM on mma.sync m16n8k8: each operand split into tf32 hi + lo, three products in "
                 "fp32; tf32 keeps fp32's exponent, so no scale: fp32 class wherever products stay above 2^-115",
                 plain(split_tf32_supports), CS_PLAN(split_tf32_plan), "gemm")),
            on(kGemm, rung("tf32-mma-1x", row_tf32(),
                 "split-tf32's kernel with one product (hi x hi): plain TF32 on mma.sync, for the error comparison",
                 plain(split_tf32_supports), CS_PLAN(split_tf32_plan), "gemm")),
        },
    };
}

}  // namespace cs::gpu::variants
