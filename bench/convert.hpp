// Element-type conversion on the GPU, the harness's part of every half and bf16 row: the
// host holds float data, so a variant whose kernels take half or bf16 tensors is given
// them by these kernels (timed as convert_ms, inside total_ms, outside kernel_ms), and its
// output goes back to float the same way. Round to nearest even, as __float2half_rn and
// __float2bfloat16_rn do.
#pragma once

#include "variant.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace cs::gpu {

// dst[i] = (to) src[i] for i < n; `to` is f16 or bf16 (f32: a device-to-device copy).
void convert_from_float(const float* src, void* dst, DType to, std::int64_t n, cudaStream_t s);
// dst[i] = (float) src[i] for i < n; `from` is f16 or bf16 (f32: a copy).
void convert_to_float(const void* src, DType from, float* dst, std::int64_t n, cudaStream_t s);

}  // namespace cs::gpu
