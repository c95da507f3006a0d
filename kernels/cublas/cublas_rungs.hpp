// The cublas family's entry points: the rungs' supports() (host code, cublas_family.cpp, in
// every build) and plan (cublas_im2col.cu, built with the kernels), and what both need of a
// row: which GEMM it runs. cublas_family.cpp names the plan through CS_PLAN (family.hpp).
#pragma once

#include "family.hpp"
#include "variant.hpp"

#include <memory>
#include <optional>
#include <string>

namespace cs::gpu::variants {

namespace cublas {
// The GEMM a row runs: cublasSgemm (fp32) or cublasGemmEx on float with TF32, half or bfloat16.
enum class Row { fp32, tf32, fp16, bf16 };
// The GEMM's row of a precision class (std::logic_error for a class it has no row for).
Row row_of(const PrecisionRow& r);
}  // namespace cublas

std::optional<std::string> cublas_im2col_supports(const PrecisionRow&, const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> cublas_im2col_plan(const PrecisionRow&, const Problem&, const PlanContext&);  // cublas_im2col.cu

}  // namespace cs::gpu::variants
