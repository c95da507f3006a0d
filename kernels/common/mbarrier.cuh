// The shared-memory mbarrier and the bulk copy that completes on one (sm_90 and later): the
// PTX wrappers the Hopper family (kernels/common/sm90/hopper_ptx.cuh) and the space-to-depth copy
// (s2d_vec.cuh) share. Below sm_90 (and in the host pass) each is a no-op and a wait returns
// at once, so a kernel that includes them still compiles for older targets; it must not run
// a path that relies on them there.
#pragma once

#include <cstdint>

namespace cs::gpu {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define CS_MBAR_DEVICE 1
#endif
// One PTX statement where the target has it (sm_90 and later), nothing elsewhere: the guard
// of every wrapper below.
#ifdef CS_MBAR_DEVICE
#define CS_SM90_ASM(...) asm volatile(__VA_ARGS__)
#else
#define CS_SM90_ASM(...) ((void)0)
#endif

// Programmatic dependent launch (sm_90): a grid lets the grid launched after it as its
// programmatic dependent (cudaLaunchAttributeProgrammaticStreamSerialization) start once every
// block of it has called grid_launch_dependents (or exited); the dependent's threads that read
// what this grid writes call grid_dependency_wait first, which returns once this grid has
// completed and its writes are visible. Both are no-ops in a plain launch.
__device__ __forceinline__ void grid_launch_dependents() {
    CS_SM90_ASM("griddepcontrol.launch_dependents;" ::: "memory");
}
__device__ __forceinline__ void grid_dependency_wait() {
    CS_SM90_ASM("griddepcontrol.wait;" ::: "memory");
}

__device__ __forceinline__ void mbar_init(std::uint32_t bar, std::uint32_t count) {
    CS_SM90_ASM("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_fence_init() {
    CS_SM90_ASM("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
    CS_SM90_ASM("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
    CS_SM90_ASM("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ bool mbar_try_wait(std::uint32_t bar, std::uint32_t parity) {
#ifdef CS_MBAR_DEVICE
    std::uint32_t ok;
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(ok)
        : "r"(bar), "r"(parity)
        : "memory");
    return ok != 0;
#else
    return true;
#endif
}
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
    while (!mbar_try_wait(bar, parity)) {
    }
}
// `bytes` (a multiple of 16, source and destination 16-byte aligned) from global to shared
// memory by the TMA engine, completing on `bar` (whose expected bytes the caller has raised).
__device__ __forceinline__ void bulk_copy_g2s(std::uint32_t dst, const void* src, std::uint32_t bytes,
                                              std::uint32_t bar) {
    CS_SM90_ASM("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}
// A run of `bytes` (as bulk_copy_g2s asks) by bulk copies of at most 8 KiB, issued by kLanes
// threads in turn (this one is `lane`), all completing on `bar`: the space-to-depth kernel's run
// (one thread) and the halo loader's (a warp).
template <int kLanes>
__device__ __forceinline__ void bulk_copy_run(std::uint32_t dst, const unsigned char* src, std::uint32_t bytes,
                                              std::uint32_t bar, int lane) {
    constexpr std::uint32_t kPiece = 8192;
    for (std::uint32_t off = std::uint32_t(lane) * kPiece; off < bytes; off += kLanes * kPiece)
        bulk_copy_g2s(dst + off, src + off, min(kPiece, bytes - off), bar);
}

}  // namespace cs::gpu
