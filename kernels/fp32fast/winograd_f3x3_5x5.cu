// winograd-f3x3-5x5 — fused Winograd F(3x3,5x5), fp32, NCHW, for 5x5 stride-1 layers (conv2)
// The kernel is the template in winograd_fused.cuh; this file runs its tile (WinoF35,
// fp32fast_tiles.hpp) and says what it predicts and measured. Its twin with 2x2 output tiles is
// winograd_f2x2_5x5.cu.
//
// Idea: each 3x3 output tile from a 7x7 input window: 49 products per (tile, filter, channel)
// instead of 9 * 25 = 225, 4.59x fewer multiplies (F(2x2,5x5): 2.78x), and 27x27 outputs are
// exactly 9x9 tiles of 3: no border waste (F(2x2): 7%). Points 0, 1, -1, 2, -2, 1/2, inf
// (Wino<3, 5> in winograd_fused.cuh): a float32 model of the 2-D algorithm on conv2's
// statistics gave them a lower error than {0, +-1, +-1/2, +-2}, and {0, +-1, +-2, 3} went over
// the fp32 threshold (tools/dev/fp32fast/wino_derive.py computes each).
//
// Tile: 32 filters x 16 tiles x 49 positions, a quarter warp (8 threads, 8x8 each) per position.
// 49 x 8 = 392 threads is not a whole number of warps, so the block is 52 positions x 8 = 416
// threads (13 warps, 128-register cap): the 3 padding positions' threads load and transform but
// own no GEMM tile (6% of the block's FMA lanes idle, in the last warp only). 8 channels per
// stage; shared memory 2 x 8 x 49 x 48 (U) + 8 x 49 x 16 (raw) + 8 x 49 x 24 (V) floats
// = 208 KiB, 1 block/SM. (Half a warp per position would be 800 threads at 72 registers: no
// room for 64 accumulators.)
//
// Prediction (conv2, N=128: 9x9 = 81 tiles per image, 10368 tiles; 8 x 648 = 5184 blocks, 40
// rounds of one block per SM): Winograd-domain FMAs 49 * 96 * 256 * 10368 = 12.5 G (25.0 GFLOP;
// direct 114.7). Scaled from the FMA rate winograd-f4x4's 32x16 block (36 positions, same
// per-thread tile) reached on conv3, less the 3 idle padding positions, the short K loop (12
// stages per block) and the 7x7 transforms: faster than our best fp32 row, still well behind
// cuDNN fp32's FFT. N=32: 1296 blocks, 10 rounds; N=1: 48 blocks, one round.
//
// Error (CPU emulation of this kernel, tools/dev/fp32fast/emu_test.cpp "wino5" / "wino5-conv2",
// both thread orders, against a double direct convolution; max|err|/max|ref|; no FMA
// contraction on the CPU): conv2 at N=4 (C=96, 27x27, pad 2, M=256) and odd 5x5 shapes
// (pad 0/1/2, C and M off the block multiples, 5x5 images, non-square) above F(2x2,5x5)'s
// error (the points 2, -2, 1/2 and G's 1/36, 1/60, 32/45) and well inside the fp32
// threshold 1e-4.
//
// Measured: docs/findings.md, "Exact fp32 faster" (the first runs, against the prediction:
// git show 3ab0d79:gpu/variants/winograd_f3x3_5x5.cu). The fastest fp32 FMA-class row on
// conv2, still behind cuDNN fp32's FFT and hopper-ws-3xfp16: the FP32 pipe is the ceiling of
// every SIMT rung (the loop is not all FFMA, SASS of tools/dev/fp32fast); conv2's exact-class
// row that wins takes the tensor cores.
//
// ptxas (sm_90, -O3, nvcc 13.0): 128 registers (the cap of 416 threads), 0 spills; filter
// transform (5x5, double) 114 registers, 0 spills.
#include "fp32fast_rungs.hpp"
#include "variant.hpp"
#include "winograd_fused.cuh"

namespace cs::gpu::variants {

std::unique_ptr<Plan> winograd_f3x3_5x5_plan(const Problem& p, const PlanContext& ctx) {
    return fp32fast::wino_plan<fp32fast::WinoF35>(p, ctx, "F(3x3,5x5)");
}

}  // namespace cs::gpu::variants
