// What the two cuDNN families share (cudnn.cu, the legacy API; cudnn_graph.cu, the graph API):
// cuDNN's errors as exceptions (CS_CUDNN_CHECK), the handle's owner, and the accuracy screen's
// reduction kernel. Each includes it once inside its anonymous namespace, so nothing here is
// visible outside the file that includes it.

#pragma once

// ---- errors ---------------------------------------------------------------------------

// cuDNN's name for a status, with its last error message when it has one.
std::string status_text(cudnnStatus_t st) {
    std::string s = cudnnGetErrorString(st);
    char last[512] = {0};
    cudnnGetLastErrorString(last, sizeof last);
    if (last[0]) s += std::string(" (") + last + ")";
    return s;
}

// A failed cuDNN call as the harness can tell it: out of memory and a broken CUDA context as
// CudaError, an unsupported configuration as cs::Skip, the rest as a runtime error.
[[noreturn]] void throw_cudnn(cudnnStatus_t st, const char* call, const char* file, int line) {
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

#define CS_CUDNN_CHECK(call)                                                                \
    do {                                                                                    \
        const cudnnStatus_t cs_st_ = (call);                                                \
        if (cs_st_ != CUDNN_STATUS_SUCCESS) throw_cudnn(cs_st_, #call, __FILE__, __LINE__); \
    } while (0)

// ---- the handle -----------------------------------------------------------------------

class Handle {
public:
    Handle() { CS_CUDNN_CHECK(cudnnCreate(&h_)); }
    ~Handle() {
        if (h_) (void)cudnnDestroy(h_);
    }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    cudnnHandle_t get() const { return h_; }

private:
    cudnnHandle_t h_ = nullptr;
};

// ---- the accuracy screen --------------------------------------------------------------

// out[0] = max |a - ref|, out[1] = max |ref|, as float bits (non-negative floats order like
// their bits); a non-finite difference counts as +inf. `a` in the row's type, `ref` in the
// row's type (legacy) or float (graph).
template <typename T, typename R>
__global__ void max_diff_kernel(const T* a, const R* ref, std::int64_t n, unsigned* out) {
    float d = 0.0f, m = 0.0f;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
         i += std::int64_t(gridDim.x) * blockDim.x) {
        const float r = to_float(ref[i]);
        float x = fabsf(to_float(a[i]) - r);
        if (!(x <= 3.0e38f)) x = __int_as_float(0x7f800000);
        d = fmaxf(d, x);
        m = fmaxf(m, fabsf(r));
    }
    for (int off = 16; off > 0; off /= 2) {
        d = fmaxf(d, __shfl_down_sync(0xffffffffu, d, off));
        m = fmaxf(m, __shfl_down_sync(0xffffffffu, m, off));
    }
    if ((threadIdx.x & 31) == 0) {
        atomicMax(&out[0], __float_as_uint(d));
        atomicMax(&out[1], __float_as_uint(m));
    }
}
