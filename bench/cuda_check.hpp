// CS_CUDA_CHECK(call): runs a CUDA runtime call and, when it fails, throws cs::CudaError
// whose message names the failing call, the file and line, and the CUDA error.
// CS_CUDA_CHECK_LAUNCH() does the same for the last kernel launch.
#pragma once

#include "error.hpp"

#include <cuda_runtime_api.h>

#include <string>

namespace cs::gpu {

class CudaError : public cs::Error {
public:
    CudaError(cudaError_t code, const std::string& msg) : cs::Error(msg), code_(code) {}
    cudaError_t code() const { return code_; }

private:
    cudaError_t code_;
};

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);

}  // namespace cs::gpu

#define CS_CUDA_CHECK(call)                                                              \
    do {                                                                                 \
        const cudaError_t cs_err_ = (call);                                              \
        if (cs_err_ != cudaSuccess) ::cs::gpu::throw_cuda_error(cs_err_, #call, __FILE__, __LINE__); \
    } while (0)

#define CS_CUDA_CHECK_LAUNCH() CS_CUDA_CHECK(cudaPeekAtLastError())
