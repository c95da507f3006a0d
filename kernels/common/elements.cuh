// Device-side element helpers shared by the harness's conversions, the ceilings and the
// library anchors' scratch data: float <-> half / bf16 with round-to-nearest-even, the chain's
// bias + ReLU and max-pool step on one value, and the
// counter-based uniform numbers (SplitMix64 of seed + i) that fill scratch tensors on the
// GPU with the golden generator's distribution (uniform in [-1, 1), reference/datagen.hpp).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace cs::gpu {

template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) { return v; }
template <>
__device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

// The chain's post-ops on one fp32 value, as the reference's epilogue: the bias added (where
// has_bias), then ReLU as `!(v > 0) -> 0` (-0 and NaN give +0). The chain ops
// (bench/chain_ops.cu), the chain megakernel (kernels/chain/megakernel.cu) and the Hopper
// epilogues' fused ops (sm90/hopper_store.cuh's OutOps) all apply it.
__device__ __forceinline__ float chain_bias_relu(float v, float b, bool has_bias, bool relu) {
    if (has_bias) v += b;
    return relu && !(v > 0.0f) ? 0.0f : v;
}

// The max-pool's step, as maxpool3x3s2_ref: a larger value or a NaN replaces the running
// maximum, and nothing replaces a NaN (no comparison with it is true). Exact in any format:
// the values are compared in float, and the winner converts back to T unchanged. The window's
// first element starts the maximum and is not compared again (a step with itself changes nothing).
__device__ __forceinline__ float pool_step(float m, float v) { return v > m || isnan(v) ? v : m; }

// Uniform in [-1, 1) from (seed, i): SplitMix64's finaliser, the top 24 bits.
__device__ __forceinline__ float uniform_pm1(unsigned long long seed, std::int64_t i) {
    unsigned long long z = seed + static_cast<unsigned long long>(i) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return float(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

// p[i] = scale * uniform_pm1(seed, i), in T, grid-stride.
template <typename T>
__global__ void fill_uniform_kernel(T* p, std::int64_t n, float scale, unsigned long long seed) {
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
         i += std::int64_t(gridDim.x) * blockDim.x)
        p[i] = from_float<T>(uniform_pm1(seed, i) * scale);
}

}  // namespace cs::gpu
