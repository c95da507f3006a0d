// The GEMM family's spec: our own GEMMs, from the lecture's im2col + tiled SGEMM to tensor
// cores through WMMA. One rung per file: gemm_im2col.cu, gemm_implicit.cu, gemm_implicit_idx.cu
// (the SIMT tiled GEMM of gemm_common.cuh), gemm_wmma_fp16.cu, gemm_wmma_tf32.cu (gemm_wmma.cuh).
// GEMM view: W (M x K) times the unrolled input (K x N*E*F); tiles chosen per layer and batch in
// each plan.
#include "families.hpp"

namespace cs::gpu::variants {

// The rungs' entry points, one pair per file.
std::optional<std::string> im2col_gemm_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> im2col_gemm_plan(const Problem&, const PlanContext&);
std::optional<std::string> implicit_gemm_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> implicit_gemm_plan(const Problem&, const PlanContext&);
std::optional<std::string> implicit_gemm_idx_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> implicit_gemm_idx_plan(const Problem&, const PlanContext&);
std::optional<std::string> wmma_fp16_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> wmma_fp16_plan(const Problem&, const PlanContext&);
std::optional<std::string> wmma_tf32_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> wmma_tf32_plan(const Problem&, const PlanContext&);

Family gemm_family() {
    auto rung = [](std::string name, PrecisionRow row, std::string idea, PlainSupports sup, PlainPlan pl) {
        return make_rung(std::move(name), {std::move(row)}, std::move(idea), plain(sup), plain(pl), {"gemm"});
    };
    return {"gemm",
            {},
            {
                rung("im2col-gemm", row_fp32(),
                     "im2col kernel writes the K x N*E*F matrix (workspace, chunked over the batch), then our "
                     "shared-memory tiled SGEMM writes NCHW",
                     im2col_gemm_supports, im2col_gemm_plan),
                rung("implicit-gemm", row_fp32(),
                     "the same tiled SGEMM with the unroll folded into its B-tile loads (no buffer), indices decoded "
                     "by division per element",
                     implicit_gemm_supports, implicit_gemm_plan),
                rung("implicit-gemm-idx", row_fp32(),
                     "implicit-gemm with index reuse: (n,e,f) once per thread, each k-tile's (c,r,s) once per block "
                     "in a shared table",
                     implicit_gemm_idx_supports, implicit_gemm_idx_plan),
                rung("wmma-fp16", row_fp16(),
                     "implicit GEMM with index reuse on tensor cores: WMMA 16x16x16 half fragments, fp32 accumulation",
                     wmma_fp16_supports, wmma_fp16_plan),
                rung("wmma-tf32", row_tf32(),
                     "implicit GEMM with index reuse on tensor cores: WMMA 16x16x8 tf32 fragments, fp32 accumulation",
                     wmma_tf32_supports, wmma_tf32_plan),
            }};
}

}  // namespace cs::gpu::variants
