// winograd-f2x2 — fused Winograd F(2x2,3x3), fp32, NCHW, for 3x3 stride-1 layers (conv3-5)
// (issue 15, item 2). The kernel is the template in winograd_fused.cuh; this file picks its
// tile and says what it predicts.
//
// Idea: each 2x2 output tile from a 4x4 input window: 16 products per (tile, filter,
// channel) instead of 36, i.e. 2.25x fewer multiplies; the transforms are adds only
// (B^T, A^T of 0 and +-1), and G's 1/2 is exact, so the only extra rounding is the
// input/output transforms' few adds: the error stays at direct convolution's level.
//
// Tile: 64 filters x 32 tiles x 16 positions per block, 512 threads = one warp per
// position, each thread 8x8 of that position's GEMM (64 accumulators, 128-register cap of
// 512 threads/SM); 8 channels per stage. Shared memory 144 KiB (epilogue), 1 block/SM.
//
// Prediction (N=128, conv4: C=M=384, 13x13 -> 7x7 = 49 tiles/image, 6272 tiles):
//   Winograd-domain FMAs 16 * 384 * 384 * 6272 = 14.8 G (29.6 GFLOP; direct: 57.4 GFLOP,
//   border waste 14%); per block and channel 16*(64+32) floats from L2 for 32768 FLOP
//   (10.7 FLOP/B: ~3 TB/s of L2 at 35 TFLOP/s, below the ~5.5 TB/s the L2 gives).
//   Input transform ~6% and epilogue ~3% of the issue slots. At 60% of the FP32 peak
//   (40 TFLOP/s): conv3 0.50 ms, conv4 0.74, conv5 0.50 (cuDNN fp32 0.494 / 0.674 / 0.482).
//   N=1: 49 tiles -> 2 tile blocks x 6 = 12 blocks on 132 SMs: latency-bound, ~60-80 us.
//
// Measured (H200): see the report of issue 15.
// ptxas (sm_90, -O3): see the report of issue 15.
#include "variants.hpp"
#include "winograd_fused.cuh"

namespace cs::gpu::variants {
namespace fp32fast {
using WinoF2 = WinoCfg<2, 64, 32, 32, 8>;
}

#ifndef FP32FAST_EMU
std::optional<std::string> winograd_f2x2_supports(const Problem& p, const cudaDeviceProp& prop) {
    return fp32fast::wino_supports<fp32fast::WinoF2>(p, prop);
}

std::unique_ptr<Plan> winograd_f2x2_plan(const Problem& p, const PlanContext& ctx) {
    if (auto why = fp32fast::wino_supports<fp32fast::WinoF2>(p, ctx.prop)) throw Skip(*why);
    return std::make_unique<fp32fast::WinoPlan<fp32fast::WinoF2>>(p, ctx, "F(2x2,3x3)");
}
#endif

}  // namespace cs::gpu::variants
