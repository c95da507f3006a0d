// winograd-f2x2 — fused Winograd F(2x2,3x3), fp32, NCHW, for 3x3 stride-1 layers (conv3-5)
// The kernel is the template in winograd_fused.cuh; this file picks its
// tile and says what it predicts and measured.
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
//   (10.7 FLOP/B: ~3 TB/s of L2 at 35 TFLOP/s). At 60% of the FP32 peak (40 TFLOP/s): conv3
//   0.50 ms, conv4 0.74, conv5 0.50 (cuDNN fp32 NCHW 0.494 / 0.674 / 0.482).
//
// Measured (H200, the family's development harness, median of 20, L2 flushed; this tile in
// run 1 of plots/h200/fp32fast_dev/RESULTS.md — the registered build differs only in keeping one
// raw-window buffer, refilled after the transform as in run 2; not re-timed), ms and
// max|err|/max|ref|:
//            conv3            conv4            conv5           cuDNN fp32 NCHW
//   N=1      0.077 (5.8e-7)   0.111 (7.1e-7)   0.110 (8.0e-7)  0.079 / 0.117 / 0.118
//   N=32     0.212 (7.7e-7)   0.310 (8.6e-7)   0.212 (8.7e-7)  0.230 / 0.328 / 0.237
//   N=128    0.622 (7.0e-7)   0.917 (8.3e-7)   0.614 (9.1e-7)  0.494 / 0.674 / 0.482
//   Faster than cuDNN fp32 at N=1 and N=32; 1.26-1.36x slower at N=128, where it runs at
//   32 TFLOP/s of Winograd-domain work (48% of the FP32 peak): the main loop is 69% FFMA
//   (747 instructions per 8-channel stage, 512 FFMA; SASS), two barriers per stage with one
//   block of 16 warps per SM, and the input transform by half of the threads. The error is
//   3x lower than the GEMM variants' (fewer terms per accumulator: 16x fewer than K).
//   Tried (run 2): 16 channels per stage, one-pass: 0.609 / 0.897 / 0.599 (2% faster) but a
//   12-byte spill; 16 channels, two-pass transform (no spill): 0.714 / 1.053 / 0.705 (the
//   third barrier per stage and the smem round trip cost 17%).
//   Next: pack several 13x13 images into one canvas (border waste 14% -> ~5%), split C over
//   two blocks at N=1, fewer barriers (warp-specialised transform).
//
// ptxas (sm_90, -O3): 127 registers, 0 spills; filter transform 34 registers.
#include "variant.hpp"
#include "winograd_fused.cuh"

namespace cs::gpu::variants {
namespace fp32fast {
using WinoF2 = WinoCfg<2, 64, 32, 32, 8, false>;
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
