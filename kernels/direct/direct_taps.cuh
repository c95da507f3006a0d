// The direct convolution's inner loop, shared by the direct kernels that differ only in
// where they read the filter and where they keep the running sum (baseline.cu,
// half_baseline.cu, single_kernel.cu, direct_const_weights.cu): one output's C*R*S
// products in the baseline's order (c, r, s), taps that fall in the zero padding skipped,
// each product added into a Sum policy. The policies are what those kernels study:
//   GlobalSum      the running sum in the output element in global memory (the study's
//                  baseline: a load-FMA-store per tap)
//   HalfGlobalSum  the same in half precision (__hfma on the half output element)
//   RegSum         the sum in a register (register accumulation)
//   SharedSum      the sum in a shared-memory slot (volatile: a load and a store per tap)
// The filter pointer may be global, shared or __constant__ memory: after inlining the
// compiler keeps the address space of the caller's pointer (checked in the PTX: the folded
// kernels compile to the same instructions as the four loops they replace).
#pragma once

#include "conv_shape.hpp"

#include <cuda_fp16.h>

namespace cs::gpu::variants {

struct GlobalSum {
    float* p;
    __device__ __forceinline__ explicit GlobalSum(float* out) : p(out) { *p = 0.0f; }
    __device__ __forceinline__ void add(float a, float b) { *p = fmaf(a, b, *p); }
    __device__ __forceinline__ float get() const { return *p; }
};

struct HalfGlobalSum {
    __half* p;
    __device__ __forceinline__ explicit HalfGlobalSum(__half* out) : p(out) { *p = __ushort_as_half(0); }  // +0.0
    __device__ __forceinline__ void add(__half a, __half b) { *p = __hfma(a, b, *p); }
    __device__ __forceinline__ __half get() const { return *p; }
};

struct RegSum {
    float v;
    __device__ __forceinline__ explicit RegSum(float*) : v(0.0f) {}
    __device__ __forceinline__ void add(float a, float b) { v = fmaf(a, b, v); }
    __device__ __forceinline__ float get() const { return v; }
};

// volatile: every step loads and stores the slot, which is what swso studies (otherwise
// the compiler may keep the sum in a register and the variant would silently be rswbdl2m).
struct SharedSum {
    volatile float* p;
    __device__ __forceinline__ explicit SharedSum(float* slot) : p(slot) { *p = 0.0f; }
    __device__ __forceinline__ void add(float a, float b) { *p = fmaf(a, b, *p); }
    __device__ __forceinline__ float get() const { return *p; }
};

// One output (e, f) of image in_n (C x H x W) with filter wk (C x R x S).
template <class Sum, class T>
__device__ __forceinline__ void dot(Sum& sum, const T* in_n, const T* wk, const ConvShape& s, int e, int f) {
    for (int c = 0; c < s.C; ++c) {
        for (int r = 0; r < s.R; ++r) {
            const int ih = e * s.stride + r - s.pad;
            if (ih < 0 || ih >= s.H) continue;
            for (int q = 0; q < s.S; ++q) {
                const int iw = f * s.stride + q - s.pad;
                if (iw < 0 || iw >= s.W) continue;
                sum.add(in_n[(c * s.H + ih) * s.W + iw], wk[(c * s.R + r) * s.S + q]);
            }
        }
    }
}

}  // namespace cs::gpu::variants
