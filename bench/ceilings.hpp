// Ceilings measured on the device in the same run as the rows they judge (bench/ceilings.cu):
// the cuBLAS GEMM rate of each precision class and the device-to-device copy bandwidth
// (pct_peak and the roofline use them), and the cuBLAS GEMM of one layer's im2col shape
// (im2col_gemm_ms: cuBLAS on the explicit im2col GEMM, a reference and not a ceiling: it
// streams the im2col matrix, which an implicit GEMM never builds).
//
// What each measures:
//   fp32  cublasGemmEx, float A/B/C, CUBLAS_COMPUTE_32F with CUBLAS_DEFAULT_MATH: FMA SGEMM,
//         no TF32 (the fp32 class's own arithmetic)
//   tf32  the same with CUBLAS_COMPUTE_32F_FAST_TF32 (tensor cores on tf32-rounded operands)
//   fp16  half A/B/C, CUBLAS_COMPUTE_32F (float accumulation), reduced-precision split-K
//         reduction disallowed: the fp16 class (fp16acc rows are judged by it too)
//   bf16  the same on bfloat16 A/B/C
//   Each: an 8192 x 8192 x 8192 product (1.1 TFLOP) on uniform random non-zero data
//   (zeros would flatter the tensor cores,
//   which draw less power on them), 2 warm-ups then the median of 7, 2*M*N*K / time.
//   copy_gbs: cudaMemcpyAsync device-to-device of 1 GiB, median of 9, (bytes read + bytes
//   written) / time / 1e9.
//   im2col_gemm_ms: C (M x Ncols) = W (M x K) * col (K x Ncols), Ncols = N*E*F, row-major
//   as cublas_im2col.cu calls it, in the class's types above; L2 flushed before every
//   sample like the harness's repeats, 2 warm-ups, median of 9. NaN when the matrices do not
//   fit in device memory (large batches).
#pragma once

#include "device.hpp"
#include "variant.hpp"

namespace cs::gpu {

struct Ceilings {
    double fp32 = 0, tf32 = 0, fp16 = 0, bf16 = 0;  // TFLOP/s, cuBLAS GEMM, float accumulation
    double copy_gbs = 0;                            // device-to-device, bytes read + written, GB/s
};

// Measures every ceiling once per device (cached).
Ceilings measure_ceilings(DeviceContext& ctx);
// Destroys the cuBLAS handles and workspaces the ceilings keep for the process (the command's
// end: compute-sanitizer's leak check sees no allocation of ours left); a later measurement
// makes them again.
void release_ceilings() noexcept;

// Median time (ms) of the cuBLAS GEMM M x K by K x Ncols in the precision class (fp16acc as
// fp16), on random data; cached per device, shape and class. NaN when it cannot run.
double im2col_gemm_ms(DeviceContext& ctx, Precision p, int M, long long Ncols, int K);

}  // namespace cs::gpu
