// The GEMM family's entry points: each rung's supports() (host code, gemm_family.cpp, in every
// build) and plan (its .cu file, built with the kernels). gemm_family.cpp names the plans through
// CS_PLAN (family.hpp). A plan is made only for a problem its supports() accepted (the harness
// asks once per row; plans do not ask again).
#pragma once

#include "variant.hpp"

#include <memory>
#include <optional>
#include <string>

namespace cs::gpu::variants {

namespace gemm {
// What every rung of the family needs of a problem: the 32-bit index ranges of the GEMM view
// (P = N*E*F columns, one image's C*H*W, K) and the packed (r, s) of the index table.
std::optional<std::string> supports_common(const Problem& p);
}  // namespace gemm

std::optional<std::string> im2col_gemm_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> im2col_gemm_plan(const Problem&, const PlanContext&);          // gemm_im2col.cu
std::optional<std::string> implicit_gemm_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> implicit_gemm_plan(const Problem&, const PlanContext&);        // gemm_implicit.cu
std::optional<std::string> implicit_gemm_idx_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> implicit_gemm_idx_plan(const Problem&, const PlanContext&);    // gemm_implicit_idx.cu
std::optional<std::string> wmma_fp16_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> wmma_fp16_plan(const Problem&, const PlanContext&);            // gemm_wmma_fp16.cu
std::optional<std::string> wmma_tf32_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> wmma_tf32_plan(const Problem&, const PlanContext&);            // gemm_wmma_tf32.cu

}  // namespace cs::gpu::variants
