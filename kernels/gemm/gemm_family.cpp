// The GEMM family's spec and its rungs' supports() (host code; the plans and their kernels are
// the .cu files): our own GEMMs, from the lecture's im2col + tiled SGEMM to tensor cores through
// WMMA. One rung per file: gemm_im2col.cu, gemm_implicit.cu, gemm_implicit_idx.cu
// (the SIMT tiled GEMM of gemm_common.cuh), gemm_wmma_fp16.cu, gemm_wmma_tf32.cu (gemm_wmma.cuh).
// GEMM view: W (M x K) times the unrolled input (K x N*E*F); tiles chosen per layer and batch in
// each plan.
#include "families.hpp"
#include "gemm_rungs.hpp"

#include <climits>
#include <cstdint>

namespace cs::gpu::variants {

namespace gemm {
std::optional<std::string> supports_common(const Problem& p) {
    const Layer& l = p.layer;
    const std::int64_t cols = p.N * std::int64_t(l.E()) * l.F();
    if (cols > std::int64_t(INT_MAX) - 1024)
        return "N*E*F = " + std::to_string(cols) + " columns exceed 32-bit indices";
    if (std::int64_t(l.C) * l.H * l.W > INT_MAX) return std::string("one image's C*H*W exceeds 32-bit offsets");
    if (l.K() > INT_MAX / 2) return std::string("K = C*R*S exceeds 32-bit indices");
    if (l.H >= 16384 || l.W >= 16384) return std::string("H or W >= 16384 (the index table packs r and s in 16 bits)");
    return std::nullopt;
}
}  // namespace gemm

std::optional<std::string> im2col_gemm_supports(const Problem& p, const cudaDeviceProp&) {
    return gemm::supports_common(p);
}
std::optional<std::string> implicit_gemm_supports(const Problem& p, const cudaDeviceProp&) {
    return gemm::supports_common(p);
}
std::optional<std::string> implicit_gemm_idx_supports(const Problem& p, const cudaDeviceProp&) {
    return gemm::supports_common(p);
}
std::optional<std::string> wmma_fp16_supports(const Problem& p, const cudaDeviceProp& prop) {
    if (prop.major < 8) return std::string("the WMMA kernels are built for compute capability 8.0 and newer");
    return gemm::supports_common(p);
}
std::optional<std::string> wmma_tf32_supports(const Problem& p, const cudaDeviceProp& prop) {
    if (prop.major < 8) return std::string("tf32 tensor cores need compute capability 8.0 or newer");
    return gemm::supports_common(p);
}

Family gemm_family() {
    auto rung = [](std::string name, PrecisionRow row, std::string idea, PlainSupports sup, RungPlan pl) {
        return make_rung(std::move(name), {std::move(row)}, std::move(idea), plain(sup), std::move(pl), {"gemm"});
    };
    return {"gemm",
            {},
            {
                rung("im2col-gemm", row_fp32(),
                     "im2col kernel writes the K x N*E*F matrix (workspace, chunked over the batch), then our "
                     "shared-memory tiled SGEMM writes NCHW",
                     im2col_gemm_supports, CS_PLAN(im2col_gemm_plan)),
                rung("implicit-gemm", row_fp32(),
                     "the same tiled SGEMM with the unroll folded into its B-tile loads (no buffer), indices decoded "
                     "by division per element",
                     implicit_gemm_supports, CS_PLAN(implicit_gemm_plan)),
                rung("implicit-gemm-idx", row_fp32(),
                     "implicit-gemm with index reuse: (n,e,f) once per thread, each k-tile's (c,r,s) once per block "
                     "in a shared table",
                     implicit_gemm_idx_supports, CS_PLAN(implicit_gemm_idx_plan)),
                rung("wmma-fp16", row_fp16(),
                     "implicit GEMM with index reuse on tensor cores: WMMA 16x16x16 half fragments, fp32 accumulation",
                     wmma_fp16_supports, CS_PLAN(wmma_fp16_plan)),
                rung("wmma-tf32", row_tf32(),
                     "implicit GEMM with index reuse on tensor cores: WMMA 16x16x8 tf32 fragments, fp32 accumulation",
                     wmma_tf32_supports, CS_PLAN(wmma_tf32_plan)),
            }};
}

}  // namespace cs::gpu::variants
