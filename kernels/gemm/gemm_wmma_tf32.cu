// wmma-tf32 — wmma-fp16's kernel with tf32 fragments (m16n16k8, wmma::precision::tf32) on
// float data: fp32 tensors on the bus and in memory, operands rounded to tf32 (10-bit
// mantissa) inside the matrix units, fp32 accumulation; precision class tf32.
//
// Idea: the fp32 path to the tensor cores — no conversion of the tensors, at the price of
// twice the bytes of the fp16 variant per tile and half the tensor throughput per
// instruction. The rounding (wmma::__float_to_tf32) happens once per element when a tile is
// written to shared memory, not after each fragment load (gemm_wmma.cuh, Tf32Traits): the
// fragments hold exactly the converted values and each element is converted once.
//
// Tiles: as wmma-fp16 (same rule, same three block tiles), with k-steps 8 / 16 / 32 on the
// 128x128 / 64x64 / 32x32 tiles (the same bytes per tile row as fp16's 16 / 32 / 32 halves;
// BK = 16 / 32 floats spilled under the 128-register cap). ldm = BK+4 and BN+4 floats.
//
// Prediction: 128x128x8 tile: 8 KB of floats for 262 kFLOP (32 FLOP per byte into shared
// memory); per k-tile and warp 16 HMMA.1688 against ~70 loader instructions: like fp16,
// bound by instruction issue and the load/store unit, not by the tf32 ceiling — expected
// far below it at N=128 on conv2-4, conv5 lower (partial wave).
// Measured: docs/findings.md, "Direct and GEMM formulations".
//
// ptxas (sm_90, -O3): 128x128x8: 128 registers (cap), 20864 B smem; 64x64x16: 128 registers
// (cap of __launch_bounds__(128, 4)), 19200 B; 32x32x32: 128 registers, 18944 B; 0 bytes
// spilled.
#include "gemm_wmma.cuh"
#include "gemm_rungs.hpp"
#include "variant.hpp"

namespace cs::gpu::variants {

std::unique_ptr<Plan> wmma_tf32_plan(const Problem& p, const PlanContext& ctx) {
    if (ctx.prop.major < 8) throw Skip("tf32 tensor cores need compute capability 8.0 or newer");
    return gemm::make_wmma_plan<gemm::Tf32Traits>(p, ctx, "WMMA 16x16x8 tf32 fragments, fp32 accumulators");
}

}  // namespace cs::gpu::variants
