// The cublas family's spec and its rungs' supports() (host code; the plan and its kernels are
// cublas_im2col.cu): the cuBLAS anchors, our im2col unroll then one cuBLAS GEMM per chunk of
// images, one rung per precision class.
#include "cublas_rungs.hpp"
#include "families.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <stdexcept>

namespace cs::gpu::variants {

cublas::Row cublas::row_of(const PrecisionRow& r) {
    switch (r.precision) {
        case Precision::fp32: return Row::fp32;
        case Precision::tf32: return Row::tf32;
        case Precision::fp16: return Row::fp16;
        case Precision::bf16: return Row::bf16;
        default: throw std::logic_error("cublas-im2col has no " + std::string(to_string(r.precision)) + " row");
    }
}

std::optional<std::string> cublas_im2col_supports(const PrecisionRow& prow, const Problem& p,
                                                  const cudaDeviceProp& prop) {
    using cublas::Row;
    const Row row = cublas::row_of(prow);
    const Layer& l = p.layer;
    if (p.layout != Layout::nchw) return std::string("im2col reads NCHW input and the permute writes NCHW output");
    const std::int64_t plane = std::int64_t(l.E()) * l.F();
    if (std::max<std::int64_t>(l.K(), l.M) * plane > INT_MAX)
        return std::string("one image's GEMM has a matrix of more than 2^31-1 elements (cuBLAS's int sizes)");
    if (row == Row::tf32 && prop.major < 8) return std::string("TF32 tensor cores need compute capability 8.0 or later");
    if (row == Row::fp16 && prop.major * 10 + prop.minor < 53)
        return std::string("half arithmetic needs compute capability 5.3 or later");
    if (row == Row::bf16 && prop.major < 8) return std::string("bfloat16 GEMMs need compute capability 8.0 or later");
    return std::nullopt;
}

// One rung per precision class (the ideas differ), all on cublas_im2col_supports() and
// cublas_im2col_plan().
Family cublas_family() {
    auto rung = [](std::string name, PrecisionRow row, std::string idea) {
        return make_rung(std::move(name), {std::move(row)}, std::move(idea), cublas_im2col_supports,
                         CS_PLAN(cublas_im2col_plan), {"gemm"});
    };
    return {"cublas",
            {},
            {
                rung("cublas-im2col", row_fp32(),
                     "our im2col unroll, then one cublasSgemm per chunk of images (no TF32) and a permute to NCHW"),
                rung("cublas-im2col-tf32", row_tf32(),
                     "our im2col unroll, then cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32 and a permute to NCHW"),
                rung("cublas-im2col-fp16", row_fp16(),
                     "our im2col unroll on half data, then cublasGemmEx (half in/out, float accumulation) and a "
                     "permute"),
                rung("cublas-im2col-bf16", row_bf16(),
                     "our im2col unroll on bfloat16 data, then cublasGemmEx (bf16 in/out, float accumulation) and a "
                     "permute"),
            },
            true};
}

}  // namespace cs::gpu::variants
