// winograd-f2x2 — fused Winograd F(2x2,3x3), fp32, NCHW, for 3x3 stride-1 layers (conv3-5)
// The kernel is the template in winograd_fused.cuh; this file runs its tile (WinoF2,
// fp32fast_tiles.hpp) and says what it predicts and measured.
//
// Idea: each 2x2 output tile from a 4x4 input window: 16 products per (tile, filter,
// channel) instead of 36, i.e. 2.25x fewer multiplies; the transforms are adds only
// (B^T, A^T of 0 and +-1) and G's 1/2 is exact, so the only extra rounding is the
// transforms' few adds: the error stays at direct convolution's level.
//
// Tile: 64 filters x 32 tiles x 16 positions per block, 512 threads = one warp per
// position, each thread 8x8 of that position's GEMM (64 accumulators, at the 128-register
// cap of 512 threads/SM); 8 channels per stage; one-pass input transform (one thread per
// (channel, tile)); shared memory 144 KiB (epilogue), 1 block/SM.
//
// Prediction (N=128, conv4: C=M=384, 13x13 -> 7x7 = 49 tiles/image, 6272 tiles):
//   Winograd-domain FMAs 16 * 384 * 384 * 6272 = 14.8 G (29.6 GFLOP; direct: 57.4 GFLOP,
//   border waste 14%); per block and channel 16*(64+32) floats from L2 for 32768 FLOP
//   (10.7 FLOP/B), so the FP32 pipe, not the L2, should bound it.
//
// Measured: this tile against cuDNN fp32 per layer and batch is in docs/findings.md,
// "Exact fp32 faster" (the development runs: git show 3ab0d79:gpu/variants/winograd_f2x2_3x3.cu).
//   Where it loses, the main loop is not all FFMA (747 instructions per 8-channel stage,
//   512 FFMA; SASS), two barriers per stage with one block of 16 warps per SM, and the input
//   transform by half of the threads. The error is below the GEMM variants' (fewer terms per
//   accumulator: 16x fewer than K).
//   8 channels per stage was chosen by measurement: 16 channels one-pass spilled 12 bytes
//   for little gain; 16 channels with a two-pass transform (no spill) lost more to the third
//   barrier per stage and the smem round trip than it saved.
//   Next: pack several 13x13 images into one canvas (border waste 14% -> ~5%), split C over
//   two blocks at N=1, fewer barriers (warp-specialised transform).
//
// ptxas (sm_90, -O3): 127 registers, 0 spills; filter transform 34 registers.
#include "fp32fast_rungs.hpp"
#include "variant.hpp"
#include "winograd_fused.cuh"

namespace cs::gpu::variants {

std::unique_ptr<Plan> winograd_f2x2_plan(const Problem& p, const PlanContext& ctx) {
    return fp32fast::wino_plan<fp32fast::WinoF2>(p, ctx, "F(2x2,3x3)");
}

}  // namespace cs::gpu::variants
