#include "cuda_check.hpp"

namespace cs::gpu {

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
    // Clear a sticky launch error so the next call reports its own status.
    (void)cudaGetLastError();
    throw CudaError(err, std::string("CUDA error: ") + call + " failed at " + file + ":" + std::to_string(line) +
                             ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

}  // namespace cs::gpu
