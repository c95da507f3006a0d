// winograd-f4x4 — fused Winograd F(4x4,3x3), fp32, NCHW, for 3x3 stride-1 layers (conv3-5)
// The kernel is the template in winograd_fused.cuh; this file picks one of its tiles (WinoF4,
// WinoF4W, fp32fast_tiles.hpp) and says what they predict and measured.
//
// Idea: each 4x4 output tile from a 6x6 input window: 36 products per (tile, filter,
// channel) instead of 144, 4x fewer multiplies. The price is accuracy: the transforms hold
// 4, 5, 8 and 1/6, 1/24, so the rounding of the input and output transforms grows well above
// F(2x2)'s — still inside the fp32 threshold (1e-4 of max|out|) on these layers.
//
// Tiles (both 8 channels per stage, two-pass input transform over all threads, 1 block/SM):
//   32 filters x 16 tiles, 288 threads = a quarter warp per position (4 per warp, rows
//     padded to 16/8-float bank offsets), 8x8 per thread, 128 registers, 153 KiB;
//   32 filters x 32 tiles, 576 threads = half a warp per position, 8x8 per thread, at the
//     96-register cap of 18 warps (no spill), 198 KiB.
//   The plan takes the one with fewer estimated rounds (wino_use_wide, winograd_fused.cuh).
//
// Prediction (N=128, conv4: 13x13 -> 4x4 = 16 tiles/image, 2048 tiles, border waste 34%):
//   Winograd-domain FMAs 36 * 384 * 384 * 2048 = 10.9 G (21.7 GFLOP; direct 57.4); per
//   block and channel 36*(32+32) floats for 73.7 kFLOP (8 FLOP/B: near the L2's limit at
//   the FP32 pipe's rate), so fast only if the L2 keeps up.
//
// Measured: docs/findings.md, "Exact fp32 faster" (the development runs, with the plan's pick
// per case: git show 3ab0d79:gpu/variants/winograd_f4x4_3x3.cu).
//   Slower than winograd-f2x2 in every case: the register file caps the block at 36 x 32 x 32
//   accumulators (8 FLOP per L2 byte), the border wastes 34% (16x16 computed for 13x13), and
//   the 6x6 transforms take a share of the issue slots. F(4x4) pays only with the
//   packed canvas (waste 34% -> ~14%) and a larger GEMM tile (non-fused product on the
//   tensor cores in split-TF32 is the likelier route).
//
// ptxas (sm_90, -O3): 32x16: 128 registers, 32x32: 96 registers, 0 spills; filter
// transform 74 registers.
#include "fp32fast_rungs.hpp"
#include "variant.hpp"
#include "winograd_fused.cuh"

namespace cs::gpu::variants {

// One block per SM either way; wino_use_wide counts rounds of one block per SM times the block's
// time: the 32x32 block does twice the 32x16 block's work, at a lower efficiency per block
// (its factor was measured on conv3 at N=128 on the H200: git show
// 3ab0d79:gpu/variants/winograd_f4x4_3x3.cu). Picks 32x16 at N=1 and on conv3/conv4 at N=32,
// 32x32 elsewhere — the measured best in every case of the H200 sweep.
std::unique_ptr<Plan> winograd_f4x4_plan(const Problem& p, const PlanContext& ctx) {
    return fp32fast::wino_plan<fp32fast::WinoF4, fp32fast::WinoF4W>(p, ctx, "F(4x4,3x3)");
}

}  // namespace cs::gpu::variants
