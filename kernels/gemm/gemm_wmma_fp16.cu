// wmma-fp16 — tensor cores through WMMA (course reports 000 opt. 3/5, 002 Req_1): half
// inputs and weights, fp32 accumulation, half output.
//
// Idea: the implicit GEMM with index reuse (gemm_wmma.cuh, loaders of gemm_common.cuh), the
// inner product done by warps with 16x16x16 fragments (matrix_a row-major from As[m][k],
// matrix_b row-major from Bs[k][n], ldm = BK+8 and BN+8 halves) instead of per-thread FMAs.
// K, M and P are padded with zeros in shared memory to whole fragments; stores are guarded.
//
// Tile per layer (make_plan, choose_tile: the largest tile with >= 2 blocks per SM, else the
// one with the most blocks):
//   128x128x16, 8 warps of 64x32 (4x2 fragments) — every layer at N=128, conv1-2 at N=32;
//   64x64x32, 4 warps of 32x32 (2x2 fragments)   — conv3-5 at N=32 (128x128 gives 86-129
//                                                  blocks for 132 SMs);
//   32x32x32, 4 warps of one 16x16 fragment      — N=1: P = E*F is 169 on conv3-5, so the
//                                                  big tile makes 6 blocks for 132 SMs; the
//                                                  small one 48-285 blocks.
// The course report's second shape (8x32x16 fragments) served M = 4; AlexNet's M >= 96
// fills 16-row fragments, so the second shape here is a smaller block tile, not another
// fragment shape. detail() names the tile chosen.
//
// Prediction (FLOPs vs bytes): a 128x128x16 tile loads 8 KB of halves for 524 kFLOP
// (64 FLOP per byte into shared memory); DRAM traffic is the half tensors. The HMMA work
// per k-tile and warp is 8 fragment products (16 HMMA.16816) against ~110 load, index and
// store instructions (8 + 8 two-byte elements per thread) and 6 fragment loads: issue- and
// LSU-bound, not tensor-bound — expected far below the fp16 ceiling at N=128 on conv2-4;
// conv5 lower (338 blocks: a partial second wave).
// Measured: docs/findings.md, "Direct and GEMM formulations".
//
// ptxas (sm_90, -O3): 128x128x16: 128 registers (the __launch_bounds__(256, 2) cap),
// 21248 B smem; 64x64x32: 127 registers, 19968 B; 32x32x32: 72 registers, 10752 B;
// 0 bytes spilled.
#include "gemm_wmma.cuh"
#include "gemm_rungs.hpp"
#include "variant.hpp"

namespace cs::gpu::variants {

std::unique_ptr<Plan> wmma_fp16_plan(const Problem& p, const PlanContext& ctx) {
    if (ctx.prop.major < 8) throw Skip("the WMMA kernels are built for compute capability 8.0 and newer");
    return gemm::make_wmma_plan<gemm::F16Traits>(p, ctx, "WMMA 16x16x16 half fragments, fp32 accumulators");
}

}  // namespace cs::gpu::variants
