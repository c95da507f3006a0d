// Round to TF32 as the tensor-core operands take it: to nearest, ties away from zero
// (cvt.rna.tf32.f32, what cuBLAS / cuDNN do on Ampere and later); on the host, and on a device
// before sm_80, the same on the bits (inf and NaN kept) for the CPU emulations. One definition
// for the Hopper transforms (hopper_elems.cuh's OperandOf<float>) and the full-width
// space-to-depth copy (space_to_depth.cu). (fp32fast_common.cuh's to_tf32 keeps its own: it
// has an emulator build.)
#pragma once

#include <cstdint>
#include <cstring>

namespace cs::gpu {

__host__ __device__ __forceinline__ float rna_tf32(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    std::uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
#else
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    if ((u & 0x7F800000u) != 0x7F800000u) u = (u + 0x1000u) & ~0x1FFFu;  // not inf / nan
    std::memcpy(&x, &u, 4);
    return x;
#endif
}

// The same on a float's bits (the transforms that copy bits).
__host__ __device__ __forceinline__ std::uint32_t rna_tf32_bits(std::uint32_t u) {
    float x;
    std::memcpy(&x, &u, 4);
    x = rna_tf32(x);
    std::memcpy(&u, &x, 4);
    return u;
}

}  // namespace cs::gpu
