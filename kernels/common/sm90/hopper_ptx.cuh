// The Hopper family (hopper_core.cuh): its architecture wrappers, one PTX statement each where
// they can be (cp.async, fences, wgmma fence/commit/wait, setmaxnreg, shared-memory descriptors
// and swizzles, TMA loads, cluster addressing and multicast). The wgmma instructions themselves
// are generated into wgmma_ops.cuh; mbarriers are in mbarrier.cuh.
#pragma once

#include "mbarrier.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace cs::gpu::variants::hopper {

// ---- PTX wrappers ------------------------------------------------------------------------
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define CS_HOPPER_DEVICE 1
#endif
// One PTX statement on sm_90a (wgmma, setmaxnreg, ...), nothing elsewhere (the host pass, other
// targets): the guard of the single-statement wrappers.
#ifdef CS_HOPPER_DEVICE
#define CS_HOPPER_ASM(...) asm volatile(__VA_ARGS__)
#else
#define CS_HOPPER_ASM(...) ((void)0)
#endif

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
    return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte global -> shared copy; src-size 0 writes 16 zero bytes (padding, k >= K, p >= P).
__device__ __forceinline__ void cp_async_16(std::uint32_t dst, const void* src, bool pred) {
    CS_HOPPER_ASM("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(pred ? 16 : 0)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
    CS_HOPPER_ASM("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    CS_HOPPER_ASM("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
// Orders this thread's generic-proxy shared-memory writes (st.shared, completed cp.async)
// before later async-proxy reads (wgmma operands) — followed by a barrier for other threads.
__device__ __forceinline__ void fence_proxy_async_smem() {
    CS_HOPPER_ASM("fence.proxy.async.shared::cta;\n" ::: "memory");
}

__device__ __forceinline__ void wgmma_fence() {
    CS_HOPPER_ASM("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
    CS_HOPPER_ASM("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    CS_HOPPER_ASM("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accumulator reads/writes across wgmma issue / wait.
template <int N>
__device__ __forceinline__ void fence_regs(float (&d)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Warpgroup register reallocation (all threads of the warpgroup execute it).
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
    CS_HOPPER_ASM("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
    CS_HOPPER_ASM("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

// Shared-memory matrix descriptor (K-major, swizzled): layout 1 = 128B, 2 = 64B, 3 = 32B.
__device__ __forceinline__ std::uint64_t smem_desc(std::uint32_t addr, std::uint32_t sbo_bytes,
                                                   std::uint32_t layout) {
    std::uint64_t d = 0;
    d |= std::uint64_t((addr & 0x3FFFFu) >> 4);
    d |= std::uint64_t(1) << 16;  // leading byte offset: unused for swizzled K-major
    d |= std::uint64_t((sbo_bytes >> 4) & 0x3FFFu) << 32;
    d |= std::uint64_t(layout) << 62;
    return d;
}
// Shared-memory matrix descriptor without swizzle (K-major, layout 0): the operand is core
// matrices of 8 rows x 16 bytes, each 128 contiguous bytes; lbo_bytes apart along K, sbo_bytes
// apart along M / N. Any 16-byte aligned start: the halo mainloop shifts A by whole rows.
__device__ __forceinline__ std::uint64_t smem_desc_plain(std::uint32_t addr, std::uint32_t lbo_bytes,
                                                         std::uint32_t sbo_bytes) {
    std::uint64_t d = 0;
    d |= std::uint64_t((addr & 0x3FFFFu) >> 4);
    d |= std::uint64_t((lbo_bytes >> 4) & 0x3FFFu) << 16;
    d |= std::uint64_t((sbo_bytes >> 4) & 0x3FFFu) << 32;
    return d;
}
// BK elements of ES bytes per row: 128 B rows (64 halves, 32 floats) or 64 B rows (32 halves,
// 16 floats). Everything below is in bytes, so halves and floats share it.
template <int BK, int ES = 2>
struct SwizzleOf {
    static_assert(BK * ES == 128 || BK * ES == 64, "k-slices of 128 B (128B swizzle) or 64 B (64B swizzle) rows");
    static constexpr int kRowBytes = BK * ES;
    static constexpr std::uint32_t kLayout = kRowBytes == 128 ? 1u : 2u;  // descriptor layout type
    static constexpr std::uint32_t kSbo = 8u * kRowBytes;         // 8-row group stride
    static constexpr int kChunks = kRowBytes / 16;                // 16-byte chunks per row
    // Byte offset of chunk j of row i inside a 1024-aligned tile.
    __host__ __device__ static constexpr std::uint32_t offset(int i, int j) {
        return std::uint32_t(i * kRowBytes + ((j ^ ((i * kRowBytes >> 7) & (kChunks - 1))) << 4));
    }
};

// mbarrier: the wrappers of mbarrier.cuh (shared with s2d_vec.cuh), named here too for the
// callers that qualify them (hw::mbar_wait)
using cs::gpu::mbar_arrive;
using cs::gpu::mbar_arrive_expect_tx;
using cs::gpu::mbar_fence_init;
using cs::gpu::mbar_init;
using cs::gpu::mbar_try_wait;
using cs::gpu::mbar_wait;

// A tensor map's descriptor fetched ahead of its first TMA: a kernel's first load (or store)
// otherwise waits out that fetch from the kernel's parameters (as CUTLASS's collectives
// prefetch theirs at the kernel's start).
__device__ __forceinline__ void tma_prefetch_desc(const void* tmap) {
    CS_HOPPER_ASM("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(tmap)) : "memory");
}

// TMA: im2col load of a 4D NHWC tensor (coordinates c, w, h, n of the first pixel; offsets
// of the filter tap s, r), and tiled 2D / 3D loads; all complete on the mbarrier.
__device__ __forceinline__ void tma_load_im2col_4d(std::uint32_t dst, const void* tmap, std::uint32_t bar, int c,
                                                   int w, int h, int n, int off_w, int off_h) {
#ifdef CS_HOPPER_DEVICE
    const unsigned short ow = static_cast<unsigned short>(off_w), oh = static_cast<unsigned short>(off_h);
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};\n" ::"r"(dst),
        "l"(reinterpret_cast<std::uint64_t>(tmap)), "r"(c), "r"(w), "r"(h), "r"(n), "r"(bar), "h"(ow), "h"(oh)
        : "memory");
#endif
}
__device__ __forceinline__ void tma_load_2d(std::uint32_t dst, const void* tmap, std::uint32_t bar, int c0, int c1) {
    CS_HOPPER_ASM(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
        "l"(reinterpret_cast<std::uint64_t>(tmap)), "r"(c0), "r"(c1), "r"(bar)
        : "memory");
}
__device__ __forceinline__ void tma_load_3d(std::uint32_t dst, const void* tmap, std::uint32_t bar, int c0, int c1,
                                            int c2) {
    CS_HOPPER_ASM(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
        "l"(reinterpret_cast<std::uint64_t>(tmap)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
        : "memory");
}
// A tiled 4D load (the row-halo mainloop's plane of an input row).
__device__ __forceinline__ void tma_load_4d(std::uint32_t dst, const void* tmap, std::uint32_t bar, int c0, int c1,
                                            int c2, int c3) {
    CS_HOPPER_ASM(
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
        "l"(reinterpret_cast<std::uint64_t>(tmap)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
        : "memory");
}

// Clusters (the `cluster` axis): this CTA's rank in its cluster, a shared-memory address of
// the same variable in CTA `rank` of the cluster, an arrive on a peer's mbarrier, the
// cluster-wide barrier (per thread, not .aligned: the producer warpgroup reaches it with
// one thread having run the loads), and a tiled 3D TMA load multicast to the CTAs of `mask`
// (the same shared-memory offset and mbarrier in each).
__device__ __forceinline__ std::uint32_t cluster_rank() {
    std::uint32_t r = 0;
    CS_HOPPER_ASM("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
__device__ __forceinline__ std::uint32_t mapa_shared(std::uint32_t addr, std::uint32_t rank) {
    std::uint32_t r = addr;
    CS_HOPPER_ASM("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
    return r;
}
// The remote arrive keeps the default .release.cta semantics, as CUTLASS's ClusterBarrier
// does: what it orders is this warpgroup's completed wgmma reads of the stage (wgmma_wait)
// before the peer's TMA refills it, not memory the peer reads; a .release.cluster arrive
// would put a cluster-scope fence in the consumer's issue path every k-slice (NOTES.md,
// "Hopper core v2": the cluster rung).
__device__ __forceinline__ void mbar_arrive_remote(std::uint32_t cluster_bar) {
    CS_HOPPER_ASM("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_bar) : "memory");
}
// 16 bytes of a cluster peer's shared memory (addr from mapa_shared).
__device__ __forceinline__ float4 ld_shared_cluster_v4(std::uint32_t addr) {
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    CS_HOPPER_ASM("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(addr)
                 : "memory");
    return v;
}
__device__ __forceinline__ void cluster_sync_all() {
    CS_HOPPER_ASM("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
__device__ __forceinline__ void tma_load_3d_multicast(std::uint32_t dst, const void* tmap, std::uint32_t bar, int c0,
                                                      int c1, int c2, std::uint16_t mask) {
    CS_HOPPER_ASM(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(dst),
        "l"(reinterpret_cast<std::uint64_t>(tmap)), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "h"(mask)
        : "memory");
}

// The im2col load multicast to the CTAs of `mask` (the cluster along the filters shares the
// A tile: each CTA loads half of its pixels, box of the map's pixels per column).
__device__ __forceinline__ void tma_load_im2col_4d_multicast(std::uint32_t dst, const void* tmap, std::uint32_t bar,
                                                             int c, int w, int h, int n, int off_w, int off_h,
                                                             std::uint16_t mask) {
#ifdef CS_HOPPER_DEVICE
    const unsigned short ow = static_cast<unsigned short>(off_w), oh = static_cast<unsigned short>(off_h);
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8}, %9;\n" ::"r"(dst),
        "l"(reinterpret_cast<std::uint64_t>(tmap)), "r"(c), "r"(w), "r"(h), "r"(n), "r"(bar), "h"(ow), "h"(oh),
        "h"(mask)
        : "memory");
#endif
}

}  // namespace cs::gpu::variants::hopper
