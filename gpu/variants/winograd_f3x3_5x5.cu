// winograd-f3x3-5x5 — fused Winograd F(3x3,5x5), fp32, NCHW, for 5x5 stride-1 layers (conv2)
// The kernel is the template in winograd_fused.cuh; this file picks its tile and says what it
// predicts and measured. Its twin with 2x2 output tiles is winograd_f2x2_5x5.cu.
//
// Idea: each 3x3 output tile from a 7x7 input window: 49 products per (tile, filter, channel)
// instead of 9 * 25 = 225, 4.59x fewer multiplies (F(2x2,5x5): 2.78x), and 27x27 outputs are
// exactly 9x9 tiles of 3: no border waste (F(2x2): 7%). Points 0, 1, -1, 2, -2, 1/2, inf
// (Wino<3, 5> in winograd_fused.cuh): a float32 model of the 2-D algorithm on conv2's
// statistics gave 6-7e-6 of max|ref| against 7-9e-6 for {0, +-1, +-1/2, +-2} and 1.8e-4 (over
// the fp32 threshold) for {0, +-1, +-2, 3} (tools/dev/fp32fast/wino_derive.py).
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
// direct 114.7). winograd-f4x4's 32x16 block (36 positions, same per-thread tile) ran conv3
// (N=128, 7.25 G FMAs in 0.845 ms) at 8.6 T FMA/s (17.2 TFLOP/s of Winograd-domain work):
// conv2 ~1.46 ms, ~1.6 ms with the 3 idle padding positions (6%), the short K loop (12 stages
// per block) and the 7x7 transforms: ~70 effective TFLOP/s, 1.3-1.5x faster than our best fp32
// row today (2.14 ms), still ~3.4x cuDNN fp32's FFT (0.464 ms). N=32: 1296 blocks, 10 rounds,
// ~0.4 ms (cuDNN 0.180); N=1: 48 blocks, one round, ~0.05 ms (cuDNN 0.082).
//
// Error (CPU emulation of this kernel, tools/dev/fp32fast/emu_test.cpp "wino5" / "wino5-conv2",
// both thread orders, against a double direct convolution; max|err|/max|ref|; no FMA
// contraction on the CPU): conv2 at N=4 (C=96, 27x27, pad 2, M=256) 6.8e-6; odd 5x5 shapes
// (pad 0/1/2, C and M off the block multiples, 5x5 images, non-square) 2.2-3.9e-6. 3.5x
// F(2x2,5x5)'s error (the points 2, -2, 1/2 and G's 1/36, 1/60, 32/45), 15x inside the fp32
// threshold 1e-4.
//
// Measured (H200, 17ae14b + registration, median of 20, L2 flushed; plots/h200/conv2_winograd_5x5.csv):
// conv2 N=128 1.753 ms (65 effective TFLOP/s, 14.3 TFLOP/s of Winograd-domain FMA work, 21% of
// the FP32 peak), N=32 0.452, N=1 0.059 ms; max_rel_err 1.0e-5 / 8.4e-6 / 7.2e-6 (the emulation's
// 6.8e-6 plus the GPU's FMA contraction). Prediction 1.6 / 0.4 / 0.05: 10% slower than predicted
// at N=128. The fastest fp32 FMA-class row on conv2 (simt-gemm 2.86, implicit-gemm-idx 3.71 ms),
// still 4.0x cuDNN fp32's FFT (0.438) and 2.9x hopper-ws-3xfp16 (0.596): the FP32 pipe is the
// ceiling of every SIMT rung (the loop is 59% FFMA, SASS of tools/dev/fp32fast); conv2's
// exact-class row that wins takes the tensor cores.
//
// ptxas (sm_90, -O3, nvcc 13.0): 128 registers (the cap of 416 threads), 0 spills; filter
// transform (5x5, double) 114 registers, 0 spills.
#include "variant.hpp"
#include "winograd_fused.cuh"

namespace cs::gpu::variants {
namespace fp32fast {
using WinoF35 = WinoCfgR<3, 5, 32, 16, 8, 8>;  // 416 threads (52 positions, 49 used), 208 KiB
}

#ifndef FP32FAST_EMU
std::optional<std::string> winograd_f3x3_5x5_supports(const Problem& p, const cudaDeviceProp& prop) {
    return fp32fast::wino_supports<fp32fast::WinoF35>(p, prop);
}

std::unique_ptr<Plan> winograd_f3x3_5x5_plan(const Problem& p, const PlanContext& ctx) {
    if (auto why = fp32fast::wino_supports<fp32fast::WinoF35>(p, ctx.prop)) throw Skip(*why);
    return std::make_unique<fp32fast::WinoPlan<fp32fast::WinoF35>>(p, ctx, "F(3x3,5x5)");
}
#endif

}  // namespace cs::gpu::variants
