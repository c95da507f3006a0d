// cuDNN's errors and the handle's owner (cudnn_common.hpp), for both cuDNN families.
#include "cudnn_common.hpp"

#include "cuda_check.hpp"
#include "error.hpp"

#include <cuda_runtime_api.h>

#include <stdexcept>

namespace cs::gpu::variants::cudnn {

std::string status_text(cudnnStatus_t st) {
    std::string s = cudnnGetErrorString(st);
    char last[512] = {0};
    cudnnGetLastErrorString(last, sizeof last);
    if (last[0]) s += std::string(" (") + last + ")";
    return s;
}

void throw_cudnn(cudnnStatus_t st, const char* call, const char* file, int line) {
    std::string msg = std::string("cuDNN error: ") + call + " failed at " + file + ":" + std::to_string(line) +
                      ": " + status_text(st);
    if (st == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED ||
        st == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED)
        throw CudaError(cudaErrorMemoryAllocation, msg);
    // A kernel that broke the context shows up as an execution failure: pass the CUDA
    // error on so the harness sees a sticky error for what it is.
    const cudaError_t ce = cudaPeekAtLastError();
    if (ce != cudaSuccess) throw CudaError(ce, msg + "; CUDA: " + cudaGetErrorName(ce));
    if (CUDNN_STATUS_CATEGORY(st) == CUDNN_STATUS_NOT_SUPPORTED) throw cs::Skip(msg);
    throw std::runtime_error(msg);
}

Handle::Handle() { CS_CUDNN_CHECK(cudnnCreate(&h_)); }
Handle::~Handle() {
    if (h_) (void)cudnnDestroy(h_);
}

}  // namespace cs::gpu::variants::cudnn
