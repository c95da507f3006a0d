// The exact-fp32 fast family's spec: fp32-class results faster than the FMA floor of a plain
// implicit GEMM. Fused Winograd on the FMA pipes (winograd_f2x2_3x3.cu, winograd_f4x4_3x3.cu,
// winograd_f2x2_5x5.cu, winograd_f3x3_5x5.cu; kernel: winograd_fused.cuh), on canvases
// (winograd_canvas.cu), on the tensor cores as 3xFP16 (winograd_3xfp16.cu; hopper/winograd_wgmma.cu
// and winograd_wgmma_ws.cu on wgmma, sm_90a; shared: winograd_3xfp16.cuh), an implicit GEMM built
// like cuBLAS SGEMM (simt_gemm.cu) and 3xTF32 on mma.sync (split_tf32.cu, whose one-product twin
// tf32-mma-1x shows the error the split removes); shared: fp32fast_common.cuh. NCHW; Winograd needs
// 3x3 or 5x5 stride 1.
#include "families.hpp"

namespace cs::gpu::variants {

// The rungs' entry points, one pair per file (split_tf32.cu: one pair for its two rungs).
std::optional<std::string> winograd_f2x2_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_f2x2_plan(const Problem&, const PlanContext&);
std::optional<std::string> winograd_f4x4_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_f4x4_plan(const Problem&, const PlanContext&);
std::optional<std::string> winograd_f2x2_5x5_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_f2x2_5x5_plan(const Problem&, const PlanContext&);
std::optional<std::string> winograd_f3x3_5x5_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_f3x3_5x5_plan(const Problem&, const PlanContext&);
std::optional<std::string> winograd_3xfp16_f3x3_5x5_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_3xfp16_f3x3_5x5_plan(const Problem&, const PlanContext&);
std::optional<std::string> winograd_3xfp16_wgmma_f3x3_5x5_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_3xfp16_wgmma_f3x3_5x5_plan(const Problem&, const PlanContext&);
std::optional<std::string> winograd_3xfp16_wgmma_ws_f3x3_5x5_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_3xfp16_wgmma_ws_f3x3_5x5_plan(const Problem&, const PlanContext&);
std::optional<std::string> winograd_f4x4_canvas_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_f4x4_canvas_plan(const Problem&, const PlanContext&);
std::optional<std::string> simt_gemm_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> simt_gemm_plan(const Problem&, const PlanContext&);
std::vector<Axis> simt_gemm_axes();  // its tile and K parts
std::optional<std::string> split_tf32_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> split_tf32_plan(const PrecisionRow&, const Problem&, const PlanContext&);

Family fp32fast_family() {
    auto rung = [](std::string name, PrecisionRow row, std::string idea, RungSupports sup, RungPlan pl,
                   std::string algo) {
        return make_rung(std::move(name), {std::move(row)}, std::move(idea), std::move(sup), std::move(pl),
                         {std::move(algo)});
    };
    auto wino = [&](std::string name, std::string idea, PlainSupports sup, PlainPlan pl) {
        return rung(std::move(name), row_fp32(), std::move(idea), plain(sup), plain(pl), "winograd");
    };
    Rung simt = rung("simt-gemm", row_fp32(),
                     "implicit GEMM built like cuBLAS SGEMM: transposed weights, plan-time im2col table, 3-stage "
                     "cp.async, warp tiles, 8x8 per thread, double-buffered fragments, k-tiles of 16, split-K where the "
                     "tiles are few",
                     plain(simt_gemm_supports), plain(simt_gemm_plan), "gemm");
    simt.axes = simt_gemm_axes();
    return {
        "fp32-fast",
        {},
        {
            wino("winograd-f2x2",
                 "fused Winograd F(2x2,3x3): filter transform each run, input transform in shared memory, 16 "
                 "batched channel GEMMs in registers, output transform in the epilogue",
                 winograd_f2x2_supports, winograd_f2x2_plan),
            wino("winograd-f4x4",
                 "fused Winograd F(4x4,3x3): as winograd-f2x2 with 6x6 windows, 36 GEMMs, 4x fewer multiplies",
                 winograd_f4x4_supports, winograd_f4x4_plan),
            wino("winograd-f2x2-5x5",
                 "fused Winograd F(2x2,5x5) (points 0, +-1, 2, -1/2, inf) for conv2: the fused kernel generalised "
                 "to 5x5 filters, 6x6 windows, 36 batched channel GEMMs, 2.78x fewer multiplies than direct",
                 winograd_f2x2_5x5_supports, winograd_f2x2_5x5_plan),
            wino("winograd-f3x3-5x5",
                 "fused Winograd F(3x3,5x5) (points 0, +-1, +-2, 1/2, inf): 7x7 windows, 49 batched channel GEMMs, "
                 "4.59x fewer multiplies than direct; 27x27 outputs = 9x9 tiles, no border waste",
                 winograd_f3x3_5x5_supports, winograd_f3x3_5x5_plan),
            wino("winograd-3xfp16-f3x3-5x5",
                 "winograd-f3x3-5x5's 49 position GEMMs on the tensor cores (mma.sync m16n8k16) as 3xFP16: "
                 "transforms split into fp16 hi + lo, hi*hi + hi*lo + lo*hi in fp32, each position folded into the "
                 "3x3 outputs at once; per-tensor power-of-two scales found on the GPU each run cover the "
                 "transforms' growth (225|x|, 25/9|w|): fp32 class for any finite data with max|x| max|w| K < 2^127, "
                 "else an ERROR naming the range",
                 winograd_3xfp16_f3x3_5x5_supports, winograd_3xfp16_f3x3_5x5_plan),
            wino("winograd-3xfp16-wgmma-f3x3-5x5",
                 "winograd-3xfp16-f3x3-5x5 with the position GEMMs on wgmma m64n32k16 from 128 B-swizzled shared "
                 "memory, fed by TMA (one warpgroup of 64 tiles x 32 filters, 2 blocks/SM): no fragment registers, "
                 "no copy instructions, products in flight while the next stage loads",
                 winograd_3xfp16_wgmma_f3x3_5x5_supports, winograd_3xfp16_wgmma_f3x3_5x5_plan),
            wino("winograd-3xfp16-wgmma-ws-f3x3-5x5",
                 "winograd-3xfp16-wgmma-f3x3-5x5 warp-specialised, blocks of 64 tiles x 64 filters: an MMA "
                 "warpgroup (wgmma m64n64k16, TMA) hands each position's products through shared memory to two fold "
                 "warpgroups; the outputs leave through shared memory as whole rows",
                 winograd_3xfp16_wgmma_ws_f3x3_5x5_supports, winograd_3xfp16_wgmma_ws_f3x3_5x5_plan),
            wino("winograd-f4x4-canvas",
                 "winograd-f4x4 on canvases of 4x4 images a pad apart (pack and unpack kernels around it): 86% of "
                 "the tiles' outputs used on 13x13 planes instead of 66%",
                 winograd_f4x4_canvas_supports, winograd_f4x4_canvas_plan),
            simt,
            rung("split-tf32", row_fp32(),
                 "3xTF32 implicit GEMM on mma.sync m16n8k8: each operand split into tf32 hi + lo, three products in "
                 "fp32; tf32 keeps fp32's exponent, so no scale: fp32 class wherever products stay above 2^-115",
                 plain(split_tf32_supports), split_tf32_plan, "gemm"),
            rung("tf32-mma-1x", row_tf32(),
                 "split-tf32's kernel with one product (hi x hi): plain TF32 on mma.sync, for the error comparison",
                 plain(split_tf32_supports), split_tf32_plan, "gemm"),
        },
    };
}

}  // namespace cs::gpu::variants
