// copy_to_device_now: host (pageable) to device, landed on return.
#pragma once

#include "cuda_check.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>

namespace cs::gpu {

// cudaMemcpy from pageable memory may return once its staging copy is made, before the DMA
// to the device completes (the CUDA runtime's "API synchronization behavior"), and the
// harness's streams are non-blocking: a kernel on one of them could read the buffer's old
// bytes. Plan set-up only.
inline void copy_to_device_now(void* dst, const void* src, std::size_t bytes) {
    CS_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    CS_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}

}  // namespace cs::gpu
