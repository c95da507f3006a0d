// The chain megakernel's device pieces (megakernel.cu): the PTX wrappers (cp.async, ldmatrix,
// mma.sync, acquire/release) and the grid barrier.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace cs::gpu::mega {

// ---- PTX pieces ------------------------------------------------------------------------
__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
    return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(std::uint32_t dst, const void* src, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
template <class T>
__device__ __forceinline__ void mma16816(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                         std::uint32_t b1) {
    if constexpr (std::is_same_v<T, __half>) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    } else {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
}
__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_release(unsigned* p, unsigned v) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned atom_add_acq_rel(unsigned* p, unsigned v) {
    unsigned old;
    asm volatile("atom.add.acq_rel.gpu.global.u32 %0, [%1], %2;\n" : "=r"(old) : "l"(p), "r"(v) : "memory");
    return old;
}

// The grid barrier: every CTA's writes before it are seen by every CTA after it. Two levels:
// the CTAs arrive on their group's counter (kBarGroup CTAs a group), the last of a group on the
// root counter, and the last of all moves the generation on; the others wait for that. (Made
// to spread one counter's serialised atomics; the phase profiles before and after show no
// phase cheaper for it: a barrier costs its round trips.) Thread 0 reads the generation before
// arriving (it cannot move until this CTA arrives); each last arrival resets its counter
// before going on, so counters and generation are as they were found, less the generation's
// steps: no reset per launch.
constexpr int kBarGroup = 16;
constexpr int kBarWords = 2 + 64;  // root, generation, the groups' counters (grid <= 64 x kBarGroup)

__device__ __forceinline__ void grid_barrier(unsigned* bar) {
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned gen = ld_acquire(bar + 1);
        __threadfence();
        const unsigned group = blockIdx.x / kBarGroup;
        const unsigned groups = (gridDim.x + kBarGroup - 1) / kBarGroup;
        const unsigned members = min(unsigned(kBarGroup), gridDim.x - group * kBarGroup);
        bool wait = true;
        if (atom_add_acq_rel(bar + 2 + group, 1) == members - 1) {
            atomicExch(bar + 2 + group, 0u);
            if (atom_add_acq_rel(bar, 1) == groups - 1) {
                atomicExch(bar, 0u);
                st_release(bar + 1, gen + 1);
                wait = false;
            }
        }
        if (wait)
            while (ld_acquire(bar + 1) == gen) __nanosleep(32);
    }
    __syncthreads();
}

}  // namespace cs::gpu::mega
