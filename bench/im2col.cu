// The unroll and permute kernels of the GEMM path (see im2col.hpp). One thread per col
// element, consecutive threads on consecutive columns p: the writes are coalesced and the
// reads of one row k walk an input row with the layer's stride.
#include "cuda_check.hpp"
#include "im2col.hpp"

namespace cs::gpu {
namespace {

template <typename T>
__global__ void im2col_kernel(const T* __restrict__ in, T* __restrict__ col, ConvShape s, std::int64_t P,
                              std::int64_t total) {
    const std::int64_t plane = std::int64_t(s.E) * s.F;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
         i += std::int64_t(gridDim.x) * blockDim.x) {
        const std::int64_t k = i / P;
        const std::int64_t p = i - k * P;
        const int n = int(p / plane);
        const int ef = int(p - n * plane);
        const int e = ef / s.F, f = ef - (ef / s.F) * s.F;
        const int c = int(k / (s.R * s.S));
        const int rs = int(k - std::int64_t(c) * s.R * s.S);
        const int r = rs / s.S, q = rs - (rs / s.S) * s.S;
        const int ih = e * s.stride + r - s.pad, iw = f * s.stride + q - s.pad;
        T v = T(0.0f);
        if (ih >= 0 && ih < s.H && iw >= 0 && iw < s.W)
            v = in[((std::int64_t(n) * s.C + c) * s.H + ih) * s.W + iw];
        col[i] = v;
    }
}

template <typename T>
__global__ void mnef_to_nmef_kernel(const T* __restrict__ tmp, T* __restrict__ out, ConvShape s, std::int64_t nc,
                                    std::int64_t total) {
    const std::int64_t plane = std::int64_t(s.E) * s.F;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
         i += std::int64_t(gridDim.x) * blockDim.x) {
        // i indexes out as [n][m][ef]
        const std::int64_t ef = i % plane;
        const std::int64_t nm = i / plane;
        const std::int64_t m = nm % s.M, n = nm / s.M;
        out[i] = tmp[(m * nc + n) * plane + ef];
    }
}

unsigned grid_for(std::int64_t total) {
    const std::int64_t blocks = (total + 255) / 256;
    return unsigned(blocks < (1 << 20) ? blocks : (1 << 20));
}

template <typename T>
void im2col_impl(const T* in, T* col, const ConvShape& s, std::int64_t nc, cudaStream_t stream) {
    const std::int64_t P = nc * s.E * s.F;
    const std::int64_t total = std::int64_t(s.C) * s.R * s.S * P;
    if (total == 0) return;
    im2col_kernel<T><<<grid_for(total), 256, 0, stream>>>(in, col, s, P, total);
    CS_CUDA_CHECK_LAUNCH();
}

template <typename T>
void permute_impl(const T* tmp, T* out, const ConvShape& s, std::int64_t nc, cudaStream_t stream) {
    const std::int64_t total = nc * s.M * std::int64_t(s.E) * s.F;
    if (total == 0) return;
    mnef_to_nmef_kernel<T><<<grid_for(total), 256, 0, stream>>>(tmp, out, s, nc, total);
    CS_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_im2col(const float* in, float* col, const ConvShape& s, std::int64_t nc, cudaStream_t stream) {
    im2col_impl(in, col, s, nc, stream);
}
void launch_im2col(const __half* in, __half* col, const ConvShape& s, std::int64_t nc, cudaStream_t stream) {
    im2col_impl(in, col, s, nc, stream);
}
void launch_im2col(const __nv_bfloat16* in, __nv_bfloat16* col, const ConvShape& s, std::int64_t nc,
                   cudaStream_t stream) {
    im2col_impl(in, col, s, nc, stream);
}
void launch_mnef_to_nmef(const float* tmp, float* out, const ConvShape& s, std::int64_t nc, cudaStream_t stream) {
    permute_impl(tmp, out, s, nc, stream);
}
void launch_mnef_to_nmef(const __half* tmp, __half* out, const ConvShape& s, std::int64_t nc,
                         cudaStream_t stream) {
    permute_impl(tmp, out, s, nc, stream);
}
void launch_mnef_to_nmef(const __nv_bfloat16* tmp, __nv_bfloat16* out, const ConvShape& s, std::int64_t nc,
                         cudaStream_t stream) {
    permute_impl(tmp, out, s, nc, stream);
}

}  // namespace cs::gpu
