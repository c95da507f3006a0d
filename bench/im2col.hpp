// The unroll (im2col) step shared by every GEMM-based variant (our tiled GEMM, cuBLAS):
// a chunk of nc images becomes the K x P matrix
//
//   col[k][p],  k = (c*R + r)*S + s  (K = C*R*S rows),
//               p = (n*E + e)*F + f  (P = nc*E*F columns, row-major, leading dim P)
//
// holding in[n][c][e*stride + r - pad][f*stride + s - pad] (zero outside the input). Then
// out = W (M x K, row-major: the MCRS weights as they are) x col gives an M x P matrix,
// i.e. [m][n][e][f]: NCHW only when nc == 1, so batched callers either run one GEMM per
// image (strided batch) or permute.
#pragma once

#include "conv_shape.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace cs::gpu {

// Bytes of the col matrix for nc images of element size eb.
inline std::size_t im2col_bytes(const ConvShape& s, std::int64_t nc, std::size_t eb) {
    return std::size_t(s.C) * s.R * s.S * std::size_t(nc) * s.E * s.F * eb;
}

// in: the first of nc images (NCHW); col: K x (nc*E*F). Launch errors are checked.
void launch_im2col(const float* in, float* col, const ConvShape& s, std::int64_t nc, cudaStream_t stream);
void launch_im2col(const __half* in, __half* col, const ConvShape& s, std::int64_t nc, cudaStream_t stream);
void launch_im2col(const __nv_bfloat16* in, __nv_bfloat16* col, const ConvShape& s, std::int64_t nc,
                   cudaStream_t stream);

// out[n][m][e][f] = tmp[m][n][e][f] for nc images: the permute after one GEMM over a chunk.
void launch_mnef_to_nmef(const float* tmp, float* out, const ConvShape& s, std::int64_t nc, cudaStream_t stream);
void launch_mnef_to_nmef(const __half* tmp, __half* out, const ConvShape& s, std::int64_t nc,
                         cudaStream_t stream);
void launch_mnef_to_nmef(const __nv_bfloat16* tmp, __nv_bfloat16* out, const ConvShape& s, std::int64_t nc,
                         cudaStream_t stream);

}  // namespace cs::gpu
