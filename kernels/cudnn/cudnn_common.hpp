// What the two cuDNN families share on the host (cudnn.cu and cudnn_legacy_family.cpp, the
// legacy API; cudnn_graph.cu, the graph API): cuDNN's errors as exceptions (CS_CUDNN_CHECK)
// and the handle's owner. Defined in cudnn_common.cpp; the accuracy screen's reduction kernel
// is cudnn_common.cuh.
#pragma once

#include <cudnn.h>

#include <string>

namespace cs::gpu::variants::cudnn {

// cuDNN's name for a status, with its last error message when it has one.
std::string status_text(cudnnStatus_t st);

// A failed cuDNN call as the harness can tell it: out of memory and a broken CUDA context as
// CudaError, an unsupported configuration as cs::Skip, the rest as a runtime error.
[[noreturn]] void throw_cudnn(cudnnStatus_t st, const char* call, const char* file, int line);

class Handle {
public:
    Handle();
    ~Handle();
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    cudnnHandle_t get() const { return h_; }

private:
    cudnnHandle_t h_ = nullptr;
};

}  // namespace cs::gpu::variants::cudnn

#define CS_CUDNN_CHECK(call)                                                          \
    do {                                                                              \
        const cudnnStatus_t cs_st_ = (call);                                          \
        if (cs_st_ != CUDNN_STATUS_SUCCESS)                                           \
            ::cs::gpu::variants::cudnn::throw_cudnn(cs_st_, #call, __FILE__, __LINE__); \
    } while (0)
