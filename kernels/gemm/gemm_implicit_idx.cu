// implicit-gemm-idx — implicit-gemm with the course report's "index reusing" (000, opt. 4
// and 5: the (c, p, q) decomposition computed once and reused, in shared memory for its
// second kernel).
//
// Idea: the division arithmetic of implicit-gemm is redundant. A thread's B column never
// changes, so (n, e, f), the image's base offset and the window corner (ih0, iw0) are
// computed once per thread; a k-tile's rows are the same for every column, so BK threads
// decode (c, r, s) of the tile's BK rows once per BLOCK into a small shared table
// {c*H*W + r*W + s, (r << 16) | s}, written two tiles ahead in the double-buffered loop,
// and every thread reads its rows back (a broadcast). Per B element what is left: one
// shared-memory load, two adds, two unsigned bounds tests and the load itself
// (ImplicitIdxB in gemm_common.cuh). Same tiles and summation order as implicit-gemm, so
// the outputs are identical (test_gemm_gpu.cpp checks they agree).
//
// Prediction: the same 32 FLOP per shared-memory byte as implicit-gemm (128x128x8 tile),
// now with ~10 integer instructions per B element instead of ~50: per thread and k-tile
// ~560 FFMA+LDS against ~60 loader instructions, a good share of the FMA ceiling for a
// two-stage pipeline with 16 warps per SM on conv2-4 at N=128; conv1 lower
// (M = 96 fills 75% of the 128-row tile), conv5 lower (338 blocks on 264 block slots: a
// second, 28% full wave).
// Measured: docs/findings.md, "Direct and GEMM formulations".
//
// SASS (cuobjdump -sass on the object, sm_90), the main loop = one k-tile per thread:
//   128x128x8: 746 instructions, 512 FFMA (69%), 36 IMAD, 2 division sequences (the table
//   entry, executed by the BK = 8 table threads only) — implicit-gemm: 1202 instructions,
//   209 IMAD, 16 divisions; im2col-gemm's GEMM (B from the col buffer): 671, 29 IMAD, none.
//   64x64x16: 485 instructions, 256 FFMA, 38 IMAD; 32x32x32: 1048, 512 FFMA, 69 IMAD.
// ncu (conv3, N=128, --clock-control none): 0.80 G instructions executed (implicit-gemm
//   1.41 G): neither memory- nor issue-saturated (the profile: git show
//   3ab0d79:gpu/variants/gemm_implicit_idx.cu); occupancy 25% (register-limited: 2 blocks of 256
//   threads at 128 registers), so FMA-pipe latency between dependent k-steps shows.
//
// ptxas (sm_90, -O3): 128x128x8: 128 registers (cap of __launch_bounds__(256, 2)),
// 16768 B smem; 64x64x16: 96 registers, 17152 B; 32x32x32: 135 registers, 17920 B;
// 0 bytes spilled, no stack frame.
#include "gemm_common.cuh"
#include "gemm_rungs.hpp"
#include "variant.hpp"

namespace cs::gpu::variants {

std::unique_ptr<Plan> implicit_gemm_idx_plan(const Problem& p, const PlanContext& ctx) {
    return gemm::make_implicit_simt_plan<gemm::ImplicitIdxB>(
        p, ctx, "fused unroll with index reuse: column (n,e,f) once per thread, k-tile (c,r,s) table in shared memory");
}

}  // namespace cs::gpu::variants
