// What the two cuDNN families' kernels share (cudnn.cu, the legacy API; cudnn_graph.cu, the
// graph API): the accuracy screen's reduction kernel. Each includes it once inside its
// anonymous namespace, so nothing here is visible outside the file that includes it. cuDNN's
// errors and the handle are host code: cudnn_common.hpp.

#pragma once

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
