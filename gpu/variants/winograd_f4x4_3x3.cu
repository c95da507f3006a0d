// winograd-f4x4 — fused Winograd F(4x4,3x3), fp32, NCHW, for 3x3 stride-1 layers (conv3-5)
// (issue 15, item 2). The kernel is the template in winograd_fused.cuh; this file picks its
// tile and says what it predicts.
//
// Idea: each 4x4 output tile from a 6x6 input window: 36 products per (tile, filter,
// channel) instead of 144, 4x fewer multiplies. The price is accuracy: the transforms hold
// 4, 5, 8 and 1/6, 1/24, so the rounding of the input and output transforms grows by ~10x
// against F(2x2) — the fp32 threshold (1e-4 of max|out|) decides whether it may stay in the
// fp32 class (else F(3x3,3x3) is the next candidate, issue 15).
//
// Tile: 32 filters x 32 tiles x 36 positions per block, 576 threads = half a warp per
// position (two per warp, their shared-memory rows padded to opposite bank halves), each
// thread 8x8 (64 accumulators; 576 threads/SM caps registers at 112); 4 channels per
// stage; shared memory 162 KiB (epilogue), 1 block/SM.
//
// Prediction (N=128, conv4: 13x13 -> 4x4 = 16 tiles/image, 2048 tiles, border waste 34%):
//   Winograd-domain FMAs 36 * 384 * 384 * 2048 = 10.9 G (21.7 GFLOP; direct 57.4); per
//   block and channel 36*(32+32) floats for 73.7 kFLOP (8 FLOP/B, ~4.4 TB/s of L2 at 35
//   TFLOP/s: near the L2's limit). The input transform (~110 instructions per (channel,
//   tile), 128 of 576 threads) costs ~15% of a stage. At 30-35 TFLOP/s: conv3 0.45 ms,
//   conv4 0.65, conv5 0.45 (cuDNN fp32 0.494 / 0.674 / 0.482) — the waste is what keeps it
//   from F(2x2)'s 2x lead; the packed canvas (issue 15) cuts it to ~14%.
//
// Measured (H200): see the report of issue 15.
// ptxas (sm_90, -O3): see the report of issue 15.
#include "variants.hpp"
#include "winograd_fused.cuh"

namespace cs::gpu::variants {
namespace fp32fast {
using WinoF4 = WinoCfg<4, 32, 16, 8, 4>;
}

#ifndef FP32FAST_EMU
std::optional<std::string> winograd_f4x4_supports(const Problem& p, const cudaDeviceProp& prop) {
    return fp32fast::wino_supports<fp32fast::WinoF4>(p, prop);
}

std::unique_ptr<Plan> winograd_f4x4_plan(const Problem& p, const PlanContext& ctx) {
    if (auto why = fp32fast::wino_supports<fp32fast::WinoF4>(p, ctx.prop)) throw Skip(*why);
    return std::make_unique<fp32fast::WinoPlan<fp32fast::WinoF4>>(p, ctx, "F(4x4,3x3)");
}
#endif

}  // namespace cs::gpu::variants
