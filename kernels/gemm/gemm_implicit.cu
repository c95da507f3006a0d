// implicit-gemm — the fused unroll + GEMM of the course reports (000: "kernel fusion for
// unrolling and matrix multiplication"; 002: Req_2), on our own shared-memory tiled SGEMM.
//
// Idea: the same GEMM as im2col-gemm (gemm_common.cuh: W (M x K) times the unrolled input
// (K x N*E*F), columns over the whole batch, one launch, NCHW written by the epilogue), but
// the B tile is computed from the input inside the tile loads, so the K x N*E*F buffer is
// never written or read back. Each B element is decoded the straightforward way, as the
// reports' first fused kernels did: k -> (c, r, s) and p -> (n, e, f) by integer division.
// It is the "before" of implicit-gemm-idx, which removes that arithmetic.
//
// Tiles (chosen in make_plan for M x N*E*F, gemm_common.cuh choose_tile): 128x128x8 with
// 8x8 outputs per thread when that gives >= 2 blocks per SM (every layer at N=32 except
// conv3-5, every layer at N=128); else 64x64x16 (4x4 per thread, 256 threads); else
// 32x32x32 (4x4 per thread, 64 threads; N=1).
//
// Prediction (FLOPs vs bytes): a 128x128x8 tile loads (128 + 128) * 8 floats = 8 KB for
// 2*128*128*8 = 262 kFLOP: 32 FLOP per byte moved to shared memory (64x64x16: 16; 32x32x32:
// 8), and DRAM sees only the tensors (conv2 N=128: 36 MB in + 2.5 MB weights + 96 MB out
// for 115 GFLOP): compute-bound. The bound is instruction issue: per thread and k-tile
// 512 FFMA + 8 LDS.128 for the product, and for its 4 B elements 2 runtime divisions each
// (k / RS, rs / S, ~20 instructions per division) = ~160 integer instructions on top —
// expected well below implicit-gemm-idx.
// Measured: docs/findings.md, "Direct and GEMM formulations".
//
// SASS (cuobjdump -sass on the object, sm_90), the main loop = one k-tile per thread:
//   128x128x8: 1202 instructions, 512 FFMA (43%), 209 IMAD, 16 inlined division sequences
//   (I2F.U32.RP + MUFU.RCP + IMAD.HI fix-up): 4 per B element — p / EF and ef / F stay in
//   the loop too (the compiler does not hoist the column decode out of the guarded block),
//   not only k / RS and rs / S. implicit-gemm-idx: 746 instructions, 36 IMAD, no division
//   on the path of the loads (the table's 2 run on BK threads only).
//   64x64x16: 905 instructions, 256 FFMA, 198 IMAD, 16 divisions; 32x32x32: 2997, 512 FFMA,
//   821 IMAD, 64 divisions.
// ncu (conv3, N=128, --clock-control none): 1.41 G instructions executed vs 0.80 G for
//   implicit-gemm-idx, and slower; issue-bound on integer work, occupancy limited to 2
//   blocks of 256 threads by the 128-register limit (git show 3ab0d79:gpu/variants/gemm_implicit.cu).
//
// ptxas (sm_90, -O3): 128x128x8: 128 registers (the __launch_bounds__(256, 2) cap),
// 16640 B smem; 64x64x16: 89 registers, 16896 B; 32x32x32: 137 registers, 17408 B;
// 0 bytes spilled, no stack frame.
#include "gemm_common.cuh"
#include "gemm_rungs.hpp"
#include "variant.hpp"

namespace cs::gpu::variants {

std::unique_ptr<Plan> implicit_gemm_plan(const Problem& p, const PlanContext& ctx) {
    return gemm::make_implicit_simt_plan<gemm::ImplicitNaiveB>(
        p, ctx, "fused unroll: (c,r,s) and (n,e,f) decoded by division for every B element");
}

}  // namespace cs::gpu::variants
