// cublas-im2col, cublas-im2col-tf32, cublas-im2col-fp16, cublas-im2col-bf16 — the cuBLAS anchors.
//
// What: the classic framework path (Caffe, early Torch/MXNet): unroll the input with our
// shared im2col kernel (bench/im2col.hpp), then one cuBLAS GEMM does all the arithmetic.
// Per chunk of nc images:
//   1. launch_im2col: col = K x P row-major, K = C*R*S, P = nc*E*F (columns p = (n*E+e)*F+f);
//   2. GEMM: tmp (M x P, row-major) = W (M x K, the MCRS weights as they are) x col.
//      cuBLAS is column-major: a row-major A x B = C is, read column-major, B^T A^T = C^T,
//      so the call is gemm(N, N, m=P, n=M, k=K, A=col, lda=P, B=W, ldb=K, C=tmp, ldc=P).
//      (Check on K=1, M=2, P=4: col-major A(i,0) = col[i], B(0,j) = W[j],
//      C(i,j) = tmp[i + 4j] = col[i]*W[j] = tmp[m=j][p=i].)
//   3. tmp is [m][n][e][f]: launch_mnef_to_nmef permutes it into the NCHW output. When a
//      chunk is one image, [m][e][f] already is NCHW and the GEMM writes the output directly.
// Why one GEMM per chunk and a permute, not a strided-batched GEMM per image writing NCHW
// straight away: per image, the GEMM's row count is E*F (169 on conv3-5, 729 on conv2,
// 3025 on conv1: odd numbers), so per-image pointers and leading dimensions are only 2-
// or 4-byte aligned and the tensor-core (tf32, fp16) kernels need 16; one GEMM over the
// chunk has ld = nc*E*F (a multiple of 8 when nc is) and a large m, and the permute costs
// one extra read and write of the output (a few % of the GEMM at N=128).
//
// Workspace: col (K*nc*E*F elements) + tmp (M*nc*E*F, when nc > 1) + cuBLAS's own
// workspace (32 MiB on Hopper, 4 MiB before, NVIDIA's recommendation; given to cuBLAS with
// cublasSetWorkspace so nothing is allocated in run()), all inside
// PlanContext::workspace_limit: nc is the most images whose buffers fit (at most the
// plan's max_chunk_N); run() loops over chunks. If one image's col does not fit: SKIP.
// On conv2 at N=128 col alone is 2400 x 93312 floats = 0.9 GB.
//
// Rows:
//   cublas-im2col       fp32: cublasSgemm with CUBLAS_DEFAULT_MATH. For an fp32 GEMM the
//                       default math keeps at least fp32's precision; TF32 only on request
//                       (CUBLAS_TF32_TENSOR_OP_MATH or a *_FAST_TF32 compute type). The
//                       fp32 threshold (1e-4) would fail a TF32 result (~3e-4).
//   cublas-im2col-tf32  cublasGemmEx, float data, CUBLAS_COMPUTE_32F_FAST_TF32.
//   cublas-im2col-fp16  half data (DType::f16), cublasGemmEx with half A, B and C and
//                       CUBLAS_COMPUTE_32F (float accumulation, precision class fp16), with
//                       CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION so split-K partial
//                       sums are reduced in float, not in the half output type.
//   cublas-im2col-bf16  the same on bfloat16 data (DType::bf16): CUDA_R_16BF A, B and C,
//                       CUBLAS_COMPUTE_32F, reduced-precision reduction disallowed.
//                       Precision class bf16 (8-bit mantissa operands, float sums).
//
// Why it is in the study: it is what "convolution as GEMM" costs with the best GEMM there
// is, beside our own tiled GEMM and cuDNN's implicit-GEMM / Winograd / FFT.
//
// Expected: the GEMM at the fp32 FMA ceiling would take 2*M*K*P / ceiling, behind cuDNN
// (Winograd / FFT do fewer FLOPs), plus im2col writing K*P floats (0.9 GB on conv2 at N=128)
// at HBM speed. tf32 and fp16 shrink the GEMM by their ceilings' ratio to fp32's, so there
// im2col's traffic dominates. Measured: docs/findings.md, "The anchors" (the first H200
// sweep: git show 3ab0d79:gpu/variants/cublas_im2col.cu).
//
// Here the plan and its kernels' calls (cublas_im2col_plan, declared in cublas_rungs.hpp);
// supports() and the family spec (cublas_family) are host code, cublas_family.cpp.
#include "buffers.hpp"
#include "conv_shape.hpp"
#include "cublas_rungs.hpp"
#include "cuda_check.hpp"
#include "error.hpp"
#include "im2col.hpp"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace cs::gpu::variants {
namespace {

[[noreturn]] void throw_cublas(cublasStatus_t st, const char* call, const char* file, int line) {
    const std::string msg = std::string("cuBLAS error: ") + call + " failed at " + file + ":" +
                            std::to_string(line) + ": " + cublasGetStatusString(st);
    if (st == CUBLAS_STATUS_ALLOC_FAILED) throw CudaError(cudaErrorMemoryAllocation, msg);
    const cudaError_t ce = cudaPeekAtLastError();
    if (ce != cudaSuccess) throw CudaError(ce, msg + "; CUDA: " + cudaGetErrorName(ce));
    if (st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_ARCH_MISMATCH) throw cs::Skip(msg);
    throw std::runtime_error(msg);
}

#define CS_CUBLAS_CHECK(call)                                                              \
    do {                                                                                   \
        const cublasStatus_t cs_st_ = (call);                                              \
        if (cs_st_ != CUBLAS_STATUS_SUCCESS) throw_cublas(cs_st_, #call, __FILE__, __LINE__); \
    } while (0)

class BlasHandle {
public:
    BlasHandle() { CS_CUBLAS_CHECK(cublasCreate(&h_)); }
    ~BlasHandle() {
        if (h_) (void)cublasDestroy(h_);
    }
    BlasHandle(const BlasHandle&) = delete;
    BlasHandle& operator=(const BlasHandle&) = delete;
    cublasHandle_t get() const { return h_; }

private:
    cublasHandle_t h_ = nullptr;
};

using cublas::Row;
using cublas::row_of;

std::size_t elem_bytes(Row r) { return r == Row::fp16 || r == Row::bf16 ? 2 : 4; }

std::string mb(std::size_t bytes) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f MB", double(bytes) / 1e6);
    return b;
}

// Images per chunk under the limit; 0 when not even one image fits. Also keeps every
// GEMM dimension product below 2^31 elements (cuBLAS's int leading dimensions).
struct Chunking {
    std::int64_t nc = 0;
    std::size_t col_bytes = 0, tmp_bytes = 0, blas_ws = 0;
};

Chunking choose_chunking(const ConvShape& s, Row row, std::int64_t max_n, std::size_t limit, int cc_major) {
    const std::size_t eb = elem_bytes(row);
    const std::size_t plane = std::size_t(s.E) * s.F;
    const std::size_t K = std::size_t(s.C) * s.R * s.S;
    const std::size_t col1 = K * plane * eb, tmp1 = std::size_t(s.M) * plane * eb;
    const std::size_t recommended = std::size_t(cc_major >= 9 ? 32 : 4) << 20;
    Chunking c;
    // cuBLAS gets its recommended workspace when that leaves room for a chunk of one image.
    c.blas_ws = recommended + col1 <= limit ? recommended : 0;
    const std::size_t room = limit - c.blas_ws;
    if (col1 > room) return c;  // nc = 0
    const std::int64_t by_bytes = std::int64_t(room / (col1 + tmp1));
    const std::int64_t by_int = std::int64_t(std::size_t(INT_MAX) / (std::max<std::size_t>(K, s.M) * plane));
    c.nc = std::max<std::int64_t>(1, std::min({max_n, by_bytes, by_int}));
    c.col_bytes = col1 * std::size_t(c.nc);
    c.tmp_bytes = c.nc > 1 ? tmp1 * std::size_t(c.nc) : 0;
    return c;
}

class CublasIm2colPlan final : public Plan {
public:
    CublasIm2colPlan(const Problem& p, const PlanContext& ctx, Row row) : s_(conv_shape(p.layer)), row_(row) {
        const std::int64_t max_n = std::max<std::int64_t>(1, std::min(ctx.max_chunk_N, p.N));
        const Chunking c = choose_chunking(s_, row, max_n, ctx.workspace_limit, ctx.prop.major);
        if (c.nc == 0)
            throw cs::Skip("one image's unrolled matrix needs " +
                           mb(std::size_t(s_.C) * s_.R * s_.S * s_.E * s_.F * elem_bytes(row)) +
                           ", more than the workspace limit of " + mb(ctx.workspace_limit));
        nc_ = c.nc;
        col_ = Buffer(MemKind::device, c.col_bytes);
        tmp_ = Buffer(MemKind::device, c.tmp_bytes);
        blas_ws_ = Buffer(MemKind::device, c.blas_ws);
        const cublasHandle_t h = handle_.get();
        switch (row_) {
            case Row::fp32: CS_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH)); break;
            case Row::tf32:  // the compute type asks for TF32
                CS_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
                break;
            case Row::fp16:
            case Row::bf16:
                CS_CUBLAS_CHECK(cublasSetMathMode(
                    h, cublasMath_t(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
                break;
        }
        const std::int64_t chunks = (p.N + nc_ - 1) / nc_;
        const char* gemm = row_ == Row::fp32   ? "cublasSgemm (default math, no TF32)"
                           : row_ == Row::tf32 ? "cublasGemmEx COMPUTE_32F_FAST_TF32"
                           : row_ == Row::fp16 ? "cublasGemmEx half A/B/C, COMPUTE_32F"
                                               : "cublasGemmEx bf16 A/B/C, COMPUTE_32F";
        detail_ = std::string("im2col + ") + gemm + ", " + std::to_string(nc_) + " images per GEMM (" +
                  std::to_string(chunks) + (chunks == 1 ? " chunk" : " chunks") + " for N=" + std::to_string(p.N) +
                  "), col " + mb(c.col_bytes) + ", tmp " + mb(c.tmp_bytes) + ", cuBLAS ws " + mb(c.blas_ws);
    }

    void run(const DeviceIO& io, cudaStream_t stream) override {
        const cublasHandle_t h = handle_.get();
        if (stream != stream_) {
            // cublasSetStream resets the handle to cuBLAS's default workspace: set ours again.
            CS_CUBLAS_CHECK(cublasSetStream(h, stream));
            CS_CUBLAS_CHECK(cublasSetWorkspace(h, blas_ws_.get(), blas_ws_.bytes()));
            stream_ = stream;
        }
        const std::int64_t in_img = std::int64_t(s_.C) * s_.H * s_.W;
        const std::int64_t out_img = std::int64_t(s_.M) * s_.E * s_.F;
        const std::size_t eb = elem_bytes(row_);
        for (std::int64_t first = 0; first < io.N; first += nc_) {
            const std::int64_t nc = std::min(nc_, io.N - first);
            const void* in = static_cast<const std::byte*>(io.in) + std::size_t(first * in_img) * eb;
            void* out = static_cast<std::byte*>(io.out) + std::size_t(first * out_img) * eb;
            void* c = nc == 1 ? out : tmp_.get();  // one image: [m][e][f] is already NCHW
            if (row_ == Row::fp16)
                launch_im2col(static_cast<const __half*>(in), col_.as<__half>(), s_, nc, stream);
            else if (row_ == Row::bf16)
                launch_im2col(static_cast<const __nv_bfloat16*>(in), col_.as<__nv_bfloat16>(), s_, nc, stream);
            else
                launch_im2col(static_cast<const float*>(in), col_.as<float>(), s_, nc, stream);
            gemm(io.w, c, int(nc * s_.E * s_.F));
            if (nc > 1) {
                if (row_ == Row::fp16)
                    launch_mnef_to_nmef(tmp_.as<__half>(), static_cast<__half*>(out), s_, nc, stream);
                else if (row_ == Row::bf16)
                    launch_mnef_to_nmef(tmp_.as<__nv_bfloat16>(), static_cast<__nv_bfloat16*>(out), s_, nc, stream);
                else
                    launch_mnef_to_nmef(tmp_.as<float>(), static_cast<float*>(out), s_, nc, stream);
            }
        }
    }

    std::size_t workspace_bytes() const override { return col_.bytes() + tmp_.bytes() + blas_ws_.bytes(); }
    std::string detail() const override { return detail_; }

private:
    // C (M x P row-major) = W (M x K row-major) x col (K x P row-major), as the column-major
    // C^T (P x M, ld P) = col^T (P x K, ld P) x W^T (K x M, ld K).
    void gemm(const void* w, void* c, int P) {
        const cublasHandle_t h = handle_.get();
        const int M = s_.M, K = s_.C * s_.R * s_.S;
        const float alpha = 1.0f, beta = 0.0f;  // float scale type for all three rows
        switch (row_) {
            case Row::fp32:
                CS_CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, P, M, K, &alpha, col_.as<float>(), P,
                                            static_cast<const float*>(w), K, &beta, static_cast<float*>(c), P));
                break;
            case Row::tf32:
                CS_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, P, M, K, &alpha, col_.get(), CUDA_R_32F, P,
                                             w, CUDA_R_32F, K, &beta, c, CUDA_R_32F, P,
                                             CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
                break;
            case Row::fp16:
                CS_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, P, M, K, &alpha, col_.get(), CUDA_R_16F, P,
                                             w, CUDA_R_16F, K, &beta, c, CUDA_R_16F, P, CUBLAS_COMPUTE_32F,
                                             CUBLAS_GEMM_DEFAULT));
                break;
            case Row::bf16:
                CS_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, P, M, K, &alpha, col_.get(), CUDA_R_16BF,
                                             P, w, CUDA_R_16BF, K, &beta, c, CUDA_R_16BF, P, CUBLAS_COMPUTE_32F,
                                             CUBLAS_GEMM_DEFAULT));
                break;
        }
    }

    ConvShape s_;
    Row row_;
    BlasHandle handle_;
    std::int64_t nc_ = 1;
    Buffer col_, tmp_, blas_ws_;
    std::string detail_;
    cudaStream_t stream_ = nullptr;
};

}  // namespace

std::unique_ptr<Plan> cublas_im2col_plan(const PrecisionRow& row, const Problem& p, const PlanContext& ctx) {
    return std::make_unique<CublasIm2colPlan>(p, ctx, row_of(row));
}

}  // namespace cs::gpu::variants
