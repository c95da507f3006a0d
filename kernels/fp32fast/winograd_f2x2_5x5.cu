// winograd-f2x2-5x5 — fused Winograd F(2x2,5x5), fp32, NCHW, for 5x5 stride-1 layers (conv2)
// The kernel is the template in winograd_fused.cuh (generalised from 3x3 to r x r); this file
// picks one of its tiles (WinoF25, WinoF25W, fp32fast_tiles.hpp) and says what they predict and
// measured. Its twin with 3x3 output tiles is winograd_f3x3_5x5.cu.
//
// Idea: each 2x2 output tile from a 6x6 input window: 36 products per (tile, filter, channel)
// instead of 4 * 25 = 100, 2.78x fewer multiplies. The 6x6 windows are those of F(4x4,3x3), so
// the kernel runs the same block shapes as winograd-f4x4; only the transforms differ (and the
// 5x5 filter transform, in double as before). Points 0, 1, -1, 2, -1/2, inf (matrices in
// winograd_fused.cuh, Wino<2, 5>): picked by the error of a float32 model of the 2-D algorithm
// on conv2's statistics, the lowest of this set, {0, +-1, +-2, inf} (F(4x4,3x3)'s) and
// {0, +-1, +-1/2, inf} (tools/dev/fp32fast/wino_derive.py computes the three).
//
// Tiles (8 channels per stage, two-pass input transform over all threads, 1 block/SM):
//   32 filters x 16 tiles, 288 threads = a quarter warp per position, 8x8 per thread, 153 KiB;
//   32 filters x 32 tiles, 576 threads = half a warp per position, 8x8 per thread at the
//     96-register cap, 198 KiB. The plan takes the one with fewer estimated rounds
//     (wino_use_wide: winograd-f4x4's rule, whose choice was the measured best on the H200).
//
// Prediction (conv2: C=96, 27x27, pad 2, M=256 -> 14x14 tiles of 2x2 = 196 per image, border
// waste 1 - (27/28)^2 = 7%; N=128: 25088 tiles, the 32x32 block, 8 x 784 = 6272 blocks = 48
// rounds of one block per SM):
//   direct 114.7 GFLOP; Winograd-domain FMAs 36 * 96 * 256 * 25088 = 22.2 G (44.4 GFLOP).
//   Scaled from the same 32x32 block's FMA rate on conv4 (winograd-f4x4), no gain over our
//   best fp32 row was expected and far from cuDNN fp32's FFT. C = 96 is only 12 pipeline
//   stages per block (conv4: 48), so the prologue and epilogue weigh more: if anything
//   slower. The 36-position fused block is capped by the register file (36 x 32 x 32
//   accumulators), as winograd-f4x4 is; the 5x5 tile that should pay is winograd-f3x3-5x5
//   (49/9 = 5.4 products per output instead of 9, no border waste on 27x27).
//
// Error (CPU emulation of this kernel, tools/dev/fp32fast/emu_test.cpp "wino5" / "wino5-conv2":
// every thread, barrier and cp.async modelled, both thread orders, against a double direct
// convolution; max|err|/max|ref|; the CPU does not contract into FMAs, the GPU will): conv2 at
// N=4 (C=96, 27x27, pad 2, M=256) with either tile and odd 5x5 shapes (pad 0/1/2, C and M
// off the block multiples, 5x5 images, non-square) well inside the fp32 threshold 1e-4.
//
// Measured: docs/findings.md, "Exact fp32 faster" (the first runs, against the prediction:
// git show 3ab0d79:gpu/variants/winograd_f2x2_5x5.cu). As predicted, between simt-gemm and
// winograd-f3x3-5x5, which carries conv2's SIMT Winograd.
//
// ptxas (sm_90, -O3, nvcc 13.0): 32x16: 130 registers, 32x32: 96 registers (the cap of 576
// threads), 0 spills (the factored form of the input transform spilled 8 bytes at 96: see
// Wino<2, 5>::in); filter transform (5x5, double) 102 registers, 0 spills.
#include "fp32fast_rungs.hpp"
#include "variant.hpp"
#include "winograd_fused.cuh"

namespace cs::gpu::variants {

// winograd-f4x4's rule (wino_use_wide in winograd_fused.cuh) picks between these two blocks.
std::unique_ptr<Plan> winograd_f2x2_5x5_plan(const Problem& p, const PlanContext& ctx) {
    return fp32fast::wino_plan<fp32fast::WinoF25, fp32fast::WinoF25W>(p, ctx, "F(2x2,5x5)");
}

}  // namespace cs::gpu::variants
