// The full-width NHWC space-to-depth copy's geometry and limits (s2d_vec.cuh holds its
// kernel): host code, so that the choice of input kernel (input_kernel_name, space_to_depth.cpp)
// is made without the kernels, and the kernel reads the same limits.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cs::gpu::s2d {

struct VecGeom {
    int C, H, W;     // source image (NHWC)
    int b, pad;      // block factor, the layer's padding (folded into the rewritten image)
    int Hp, Wp, Cp;  // rewritten image (NHWC); channels past C*b*b are zeros
};

constexpr int kVecThreads = 256;
constexpr int kVecSmemLimit = 40 * 1024;

// A block's shared memory: the tables (12 bytes a channel) and `rows` output rows' source run.
inline std::size_t vec_smem_bytes(const VecGeom& g, int es, int rows) {
    return std::size_t(g.Cp) * 12 + 16 + std::size_t(rows) * g.b * g.W * g.C * es + 48;
}
// Output rows per block: as many (at most 4) as fit kVecSmemLimit with their source rows; 0
// when one row does not fit.
inline int vec_rows_per_block(const VecGeom& g, int es) {
    for (int r = 4; r >= 1; --r)
        if (vec_smem_bytes(g, es, r) <= std::size_t(kVecSmemLimit)) return r;
    return 0;
}
// Whether the kernel takes this shape: whole 16-byte vectors per output pixel, a row's source
// in kVecSmemLimit; and this call: both tensors 16-byte aligned as well.
inline bool vec_shape_ok(const VecGeom& g, int es) {
    return (std::int64_t(g.Cp) * es) % 16 == 0 && vec_rows_per_block(g, es) > 0;
}
inline bool vec_ok(const VecGeom& g, int es, const void* in, const void* out) {
    return vec_shape_ok(g, es) && reinterpret_cast<std::uintptr_t>(in) % 16 == 0 &&
           reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
}

struct Geom;
// The full-width copy's view of a rewrite (space_to_depth.cpp).
VecGeom vec_geom(const Geom& g);

}  // namespace cs::gpu::s2d
