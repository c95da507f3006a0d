// The layer shape as kernels see it (plain ints, usable on host and device), and the
// study's launch geometry for the single-kernel family: an N x M grid, one block per
// output plane, one thread per output element; a plane larger than the block limit
// (conv1: 55x55 > 1024) gets a block of ceil(E/t) x ceil(F/t) threads, t outputs per
// thread in each dimension (t=2: the study's 28x28 block).
#pragma once

#include "variant.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace cs::gpu {

struct ConvShape {
    int C, H, W, M, R, S, stride, pad, E, F;
};

inline ConvShape conv_shape(const Layer& l) {
    return ConvShape{l.C, l.H, l.W, l.M, l.R, l.S, l.stride, l.pad, l.E(), l.F()};
}

// How output planes map onto a block of threads.
enum class PlaneMapping {
    coalesced,    // thread (ty, tx) computes (ty + i*by, tx + j*bx): neighbours write neighbours
    uncoalesced,  // thread (ty, tx) computes (t*ty + i, t*tx + j): each thread owns a t x t patch
};

struct PlaneTiling {
    int t = 1;        // outputs per thread in each dimension
    int bx = 1, by = 1;  // block size (x along F, y along E)
    int threads() const { return bx * by; }
};

// Smallest t with ceil(E/t) * ceil(F/t) <= max_threads. A device that reports no threads per
// block (max_threads < 1) fits no tiling: t comes back as max(E, F) + 1, more than any plane
// needs, so the callers' t limits reject it instead of this loop running past INT_MAX.
inline PlaneTiling plane_tiling(int E, int F, int max_threads) {
    PlaneTiling p;
    const std::int64_t e = E > 1 ? E : 1, f = F > 1 ? F : 1, limit = e > f ? e : f;
    for (std::int64_t t = 1; t <= limit; ++t) {
        const std::int64_t by = (e + t - 1) / t, bx = (f + t - 1) / t;
        if (by * bx <= max_threads) {
            p.t = int(t);
            p.bx = int(bx);
            p.by = int(by);
            return p;
        }
    }
    p.t = int(limit < INT32_MAX ? limit + 1 : limit);
    return p;
}

// Grid of the study's single-kernel family: x = N (images), y = M (filters).
// Returns an empty reason when it fits the device's grid limits.
inline const char* nm_grid_limit_reason(std::int64_t N, int M, const cudaDeviceProp& prop) {
    if (N > prop.maxGridSize[0]) return "batch N exceeds the grid's x limit";
    if (M > prop.maxGridSize[1]) return "M exceeds the grid's y limit (65535)";
    return nullptr;
}

#ifdef __CUDACC__
// Output coordinates of the (i, j)-th output of this thread under a mapping.
template <PlaneMapping kMap>
__device__ __forceinline__ void plane_coord(int t, int i, int j, int& e, int& f) {
    if constexpr (kMap == PlaneMapping::coalesced) {
        e = threadIdx.y + i * blockDim.y;
        f = threadIdx.x + j * blockDim.x;
    } else {
        e = threadIdx.y * t + i;
        f = threadIdx.x * t + j;
    }
}
#endif

}  // namespace cs::gpu
