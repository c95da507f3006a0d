#include "convert.hpp"

#include "cuda_check.hpp"
#include "elements.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

namespace cs::gpu {
namespace {


// Grid-stride loops; 4 elements per thread per step where the pointers allow 16/8-byte
// accesses (cudaMalloc'd tensors do; a streams-mode chunk may start anywhere), else 1.
template <typename T>
__global__ void from_float_kernel(const float* __restrict__ src, T* __restrict__ dst, std::int64_t n, bool vec) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (vec) {
        const std::int64_t n4 = n / 4;
        for (std::int64_t j = i; j < n4; j += stride) {
            const float4 v = reinterpret_cast<const float4*>(src)[j];
            T o[4] = {from_float<T>(v.x), from_float<T>(v.y), from_float<T>(v.z), from_float<T>(v.w)};
            reinterpret_cast<uint2*>(dst)[j] = *reinterpret_cast<const uint2*>(o);
        }
        for (std::int64_t j = n4 * 4 + i; j < n; j += stride) dst[j] = from_float<T>(src[j]);
    } else {
        for (std::int64_t j = i; j < n; j += stride) dst[j] = from_float<T>(src[j]);
    }
}

template <typename T>
__global__ void to_float_kernel(const T* __restrict__ src, float* __restrict__ dst, std::int64_t n, bool vec) {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (vec) {
        const std::int64_t n4 = n / 4;
        for (std::int64_t j = i; j < n4; j += stride) {
            const uint2 raw = reinterpret_cast<const uint2*>(src)[j];
            const T* v = reinterpret_cast<const T*>(&raw);
            reinterpret_cast<float4*>(dst)[j] = make_float4(to_float(v[0]), to_float(v[1]), to_float(v[2]), to_float(v[3]));
        }
        for (std::int64_t j = n4 * 4 + i; j < n; j += stride) dst[j] = to_float(src[j]);
    } else {
        for (std::int64_t j = i; j < n; j += stride) dst[j] = to_float(src[j]);
    }
}

bool aligned(const void* p, unsigned a) { return reinterpret_cast<std::uintptr_t>(p) % a == 0; }

unsigned blocks_for(std::int64_t n) {
    // Enough blocks to fill the GPU several times over, few enough that each thread loops.
    return unsigned(std::clamp<std::int64_t>((n / 4 + 255) / 256, 1, 8192));
}

}  // namespace

void convert_from_float(const float* src, void* dst, DType to, std::int64_t n, cudaStream_t s) {
    if (n <= 0) return;
    const bool vec = aligned(src, 16) && aligned(dst, 8);
    switch (to) {
        case DType::f32:
            CS_CUDA_CHECK(cudaMemcpyAsync(dst, src, std::size_t(n) * 4, cudaMemcpyDeviceToDevice, s));
            return;
        case DType::f16:
            from_float_kernel<<<blocks_for(n), 256, 0, s>>>(src, static_cast<__half*>(dst), n, vec);
            break;
        case DType::bf16:
            from_float_kernel<<<blocks_for(n), 256, 0, s>>>(src, static_cast<__nv_bfloat16*>(dst), n, vec);
            break;
    }
    CS_CUDA_CHECK(cudaGetLastError());
}

void convert_to_float(const void* src, DType from, float* dst, std::int64_t n, cudaStream_t s) {
    if (n <= 0) return;
    const bool vec = aligned(src, 8) && aligned(dst, 16);
    switch (from) {
        case DType::f32:
            CS_CUDA_CHECK(cudaMemcpyAsync(dst, src, std::size_t(n) * 4, cudaMemcpyDeviceToDevice, s));
            return;
        case DType::f16:
            to_float_kernel<<<blocks_for(n), 256, 0, s>>>(static_cast<const __half*>(src), dst, n, vec);
            break;
        case DType::bf16:
            to_float_kernel<<<blocks_for(n), 256, 0, s>>>(static_cast<const __nv_bfloat16*>(src), dst, n, vec);
            break;
    }
    CS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cs::gpu
