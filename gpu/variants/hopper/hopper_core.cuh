// The Hopper family: what its variants share — the implicit-GEMM view of a
// layer in NHWC, the PTX wrappers (wgmma, descriptors, cp.async, mbarrier, TMA, fences),
// the epilogue, the layout / space-to-depth transform kernels, and the Plan that runs
// transform + GEMM inside run(). Element type T: __half, __nv_bfloat16 (fp16 / bf16 rows) or
// float (tf32 rows: fp32 tensors, wgmma .tf32 k8). Shared-memory rows, swizzles, descriptors,
// TMA boxes and tile tables are in bytes (a k-slice row is 128 B or 64 B whatever T is), so
// the 4-byte type reuses everything; Elem<T> (output conversion) and OperandOf<T> (the tf32
// rounding that transforms apply to what they write) are the per-type parts. Each rung's file
// (wgmma_cpasync.cu, wgmma_tma.cu) holds its kernel and says what it studies (the persistent
// rungs: ws_kernel.cuh composed from pipeline.cuh, tile_scheduler.cuh, epilogue.cuh and
// schedule_pingpong.cuh, planned in wgmma_ws.cu; TMA host pieces in hopper_tma.cuh; tiles in tiles.hpp; the family spec in family.cpp; the wgmma wrappers are generated into wgmma_ops.cuh by
// tools/dev/hopper/gen_wgmma.py). The host side of the GEMM view (ConvGeom, the transforms'
// parameters, Setup / make_setup, supports_common) is plain C++ in geometry.hpp, which the
// rungs' supports() (supports.cpp) use in every build. Everything here is built
// for sm_90a only (CMake object library cs_gpu_hopper: -gencode=arch=compute_90a,code=sm_90a);
// device code is guarded by __CUDA_ARCH_FEAT_SM90_ALL, and supports() refuses other GPUs.
//
// ---- The GEMM (NHWC, "TN": both operands K-major) -----------------------------------------
//   rows    p in [0, P), P = N*E*F output pixels, p = (n*E + e)*F + f
//   columns m in [0, M) filters
//   k       in [0, K),  K = R*S*C, k = (r*S + s)*C + c: channels innermost, so that a K-run of
//           one filter tap (r,s) is a contiguous run of C channels in the NHWC input and in the
//           KRSC weights — the unit cp.async chunks (16 B = 8 channels) and TMA boxes address.
//   out[p][m] = sum_k  A[p][k] * B[m][k],  A[p][k] = in[n][e*st + r - pad][f*st + s - pad][c]
//   (zero outside the image), B[m][k] = w[m][r][s][c] (KRSC as it lies).
// The NHWC output is row-major P x M, exactly the GEMM's D; the NCHW output is written by the
// same epilogue with out[n][m][e][f] addressing (no permute kernel).
//
// ---- CTA tile --------------------------------------------------------------------------
// 128 rows (output pixels) x BN filters (BN = 96, 128, 192, 256: wgmma n), k-slices of BK
// (64 or 32 halves, 32 or 16 floats = one 128 B / 64 B swizzled shared-memory row). 256
// threads = 2 warpgroups; warpgroup g owns rows 64g..64g+63 and all BN columns: one
// wgmma.m64nBNk16 per 16 k (tf32: m64nBNk8 per 8 k; 32 bytes of K either way), its
// accumulator 64 x BN fp32 = BN/2 registers per thread.
//
// ---- Shared memory layout (what wgmma's descriptors and TMA's swizzle agree on) --------
// A stage: 128 rows x BK elements, row i at i*ROWB (ROWB = BK*sizeof(T) bytes), its 16-byte chunk j
// stored at chunk j ^ ((i*ROWB >> 7) & (ROWB/16 - 1)) — CUTLASS's Swizzle<3,4,3> (128 B) or
// Swizzle<2,4,3> (64 B) on byte offsets, which is what TMA's CU_TENSOR_MAP_SWIZZLE_128B/64B
// write and what a descriptor with layout type 1 (128B) / 2 (64B) reads. B stage: BN rows of
// the same shape. Every stage buffer starts at a multiple of 1024 B (the swizzle period), so
// the k-step kk inside a row is addressed by adding kk*sizeof(T) bytes (32 per wgmma) to the descriptor's start
// address, and warpgroup g's A rows by adding 64*g*ROWB. Descriptor: start >> 4 (bits 0-13),
// LBO (unused for swizzled K-major, 1), SBO = 8 rows * ROWB (bits 32-45), layout (62-63).
//
// ---- Accumulator fragment (wgmma m64nN, fp32) -------------------------------------------
// thread t of the warpgroup (warp w = t/32, lane l): d[4*j + 2*i + h] is row 16*w + l/4 + 8*i,
// column 8*j + 2*(l%4) + h, for j < N/8, i, h in {0,1}.
#pragma once

#include "buffers.hpp"
#include "conv_shape.hpp"
#include "cuda_check.hpp"
#include "error.hpp"
#include "geometry.hpp"
#include "mbarrier.cuh"
#include "range_scale.hpp"
#include "s2d_vec.cuh"
#include "space_to_depth.hpp"
#include "split_mutation.hpp"
#include "tf32_round.cuh"
#include "variant.hpp"
#include "wgmma_ops.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace cs::gpu::variants::hopper {

constexpr int kThreads = 256;  // 2 warpgroups (kBM, the rows per CTA: geometry.hpp)

// ---- element helpers ----------------------------------------------------------------------
template <class T>
struct Elem;
template <>
struct Elem<__half> {
    __device__ __forceinline__ static __half from(float x) { return __float2half_rn(x); }
    __device__ __forceinline__ static __half2 pair(float a, float b) { return __floats2half2_rn(a, b); }
    using Pair = __half2;
    static constexpr const char* name = "fp16";
};
template <>
struct Elem<__nv_bfloat16> {
    __device__ __forceinline__ static __nv_bfloat16 from(float x) { return __float2bfloat16_rn(x); }
    __device__ __forceinline__ static __nv_bfloat162 pair(float a, float b) { return __floats2bfloat162_rn(a, b); }
    using Pair = __nv_bfloat162;
    static constexpr const char* name = "bf16";
};
// tf32: fp32 tensors in and out; wgmma m64nNk8.tf32 reads the fp32 bits of the operands in
// shared memory and uses their tf32 part (the low 13 mantissa bits are ignored: truncation).
// The output is the fp32 accumulator as it is.
template <>
struct Elem<float> {
    __device__ __forceinline__ static float from(float x) { return x; }
    __device__ __forceinline__ static float2 pair(float a, float b) { return make_float2(a, b); }
    using Pair = float2;
    static constexpr const char* name = "tf32";
};

// What a transform kernel applies to each operand element it writes (the GEMM reads the
// transformed tensor): nothing for half / bfloat16 (already the MMA's type); for tf32 the
// round to nearest (cvt.rna.tf32.f32, ties away from zero, what cuBLAS/cuDNN do on Ampere),
// so that an operand that passes through a transform anyway is rounded, not truncated, by
// the tensor core — free there. Operands read in place (NHWC input, KRSC weights) are
// truncated by the tensor core; rounding them would cost a pass over the input (see
// wgmma_cpasync.cu, "tf32"). __host__ __device__ for the CPU test tests/hopper_prep_emulation.cu.
// kActive = false: the identity, and the transform's code is the plain copy (the fp16 / bf16
// kernels compile to the same machine code as before tf32 existed).
// put(o, cp, Cp, x): how a transform writes value x of channel cp into pixel o (Cp value
// channels per pixel, kParts * Cp written): o[cp] = op(x).
// What a split transform applies besides the split (range_scale.hpp): the tensor's power-of-two
// scale m0 * m1 (two floats: 2^-e may lie outside one float's range) and the test-only
// mutations' low-part factors (1 normally; lo for every channel, lo_half for channels < Cp/2).
// Read once per thread from the plan's RangeScale; the identity for the unsplit operands.
struct SplitScale {
    float m0 = 1.0f, m1 = 1.0f, lo = 1.0f, lo_half = 1.0f;
    __host__ __device__ __forceinline__ float scaled(float x) const { return x * m0 * m1; }
    __host__ __device__ __forceinline__ float lo_of(int cp, int Cp) const { return cp < Cp / 2 ? lo * lo_half : lo; }
};
// kInput: the input's scale and mutation, else the weights'; rs null: the identity.
__device__ __forceinline__ SplitScale load_split_scale(const RangeScale* rs, bool kInput) {
    SplitScale s;
    if (rs) {
        const float* m = kInput ? rs->in_mul : rs->w_mul;
        s.m0 = m[0];
        s.m1 = m[1];
        if (kInput) s.lo = rs->lo_keep_in;
        else s.lo_half = rs->lo_keep_w_half;
    }
    return s;
}

template <class T>
struct OperandOf {
    static constexpr bool kActive = false;
    static constexpr bool kScaled = false;
    static constexpr int kParts = 1;
    __host__ __device__ __forceinline__ static T op(T x) { return x; }
    __host__ __device__ __forceinline__ static void put(T* o, int cp, int, T x, const SplitScale& = {}) { o[cp] = x; }
};
template <>
struct OperandOf<float> {
    static constexpr bool kActive = true;
    static constexpr bool kScaled = false;
    static constexpr int kParts = 1;
    __host__ __device__ __forceinline__ static void put(float* o, int cp, int, float x, const SplitScale& = {}) {
        o[cp] = op(x);
    }
    __host__ __device__ __forceinline__ static float op(float x) { return rna_tf32(x); }
};

// 3xTF32 (the fp32-class rung hopper-ws-3xtf32): each fp32 operand x becomes a tf32 high part
// hi = rna(x) and a tf32 low part lo = rna(x - hi) (|x - hi - lo| <= 2^-22 |x|), written
// as three blocks of Cp channels per pixel: [hi, hi, lo] for the input (kInput) and
// [hi, lo, hi] for the weights. The unchanged tf32 GEMM over K' = R*S*3*Cp then sums
// hi*hi + hi*lo + lo*hi in its fp32 accumulators: the three tensor-core products of
// 3xTF32 (lo*lo, ~2^-22, is dropped) without a line of kernel code changed.
// Range: tf32 has fp32's exponent range, so the split itself needs no scale; the plan still
// scales both tensors (range_scale.hpp, max|x'| and max|w'| in [1, 2)) so that the low parts'
// products (~2^-11 |x w|) never reach fp32's subnormals, whatever the data's magnitude, and so
// that inf / NaN data is an ERROR like 3xFP16's. s: the scale (and the test mutations).
template <bool kInput>
struct Split3 {
    static constexpr bool kActive = true;
    static constexpr bool kScaled = true;
    static constexpr int kParts = 3;
    static constexpr int kInLog2 = 0, kWLog2 = 0;  // range_scale.hpp's targets
    __host__ __device__ __forceinline__ static void put(float* o, int cp, int Cp, float x, const SplitScale& s = {}) {
        x = s.scaled(x);
        const float hi = OperandOf<float>::op(x);
        const float lo = OperandOf<float>::op(x - hi) * s.lo_of(cp, Cp);
        o[cp] = hi;
        o[Cp + cp] = kInput ? hi : lo;
        o[2 * Cp + cp] = kInput ? lo : hi;
    }
};

// 3xFP16 (hopper-ws-3xfp16): the same three products on half operands, which the tensor core
// multiplies at twice the tf32 rate with as many significand bits (11). fp16's narrow exponent
// is what must be managed: lo = x - hi is ~2^-11 |x| and would fall into fp16's subnormals
// (< 2^-14) for |x| < 2^-3, so the low parts are stored scaled up, lo' = half((x - hi) * 2^11)
// (Ootomo & Yokota's trick), and the weights' high block carries the same factor,
// hi_w' = hi_w * 2^11 (exact): input [hi, hi, lo'], weights [hi_w', lo_w', hi_w] sum to
// 2^11 (hi*hi + hi*lo + lo*hi), which the epilogue scales back by 2^-11 (kLoLog2).
// Range: the split alone holds |w| < 2^4 (hi_w' below fp16's 65504) and |x| < 65504, and values
// under ~2^-14 lose relative precision. So the plan scales each tensor by a power of two found
// on the device (range_scale.hpp): max|x'| in [2^14, 2^15) (hi below 65504, elements down to
// 2^-28 of the max keep full precision), max|w'| in [2^3, 2^4) (hi_w' = 2^11 hi_w below 65504);
// the epilogue multiplies by 2^(ex+ew) (and 2^-11, kLoLog2). Any finite data with
// max|x| max|w| K < 2^127 is then in range; outside it the plan reports an ERROR naming it.
constexpr int kLoLog2 = 11;
constexpr int kHalfInLog2 = 14, kHalfWLog2 = 3;  // the 3xFP16 split's targets (range_scale.hpp)
template <bool kInput>
struct Split3Half {
    static constexpr bool kActive = true;
    static constexpr bool kScaled = true;
    static constexpr int kParts = 3;
    static constexpr int kInLog2 = kHalfInLog2, kWLog2 = kHalfWLog2;
    __host__ __device__ __forceinline__ static void put(__half* o, int cp, int Cp, float x, const SplitScale& s = {}) {
        x = s.scaled(x);
        const __half hi = __float2half_rn(x);
        const float hf = __half2float(hi);
        const __half lo = __float2half_rn((x - hf) * float(1 << kLoLog2) * s.lo_of(cp, Cp));  // x - hf is exact
        if (kInput) {
            o[cp] = hi;
            o[Cp + cp] = hi;
            o[2 * Cp + cp] = lo;
        } else {
            o[cp] = __float2half_rn(hf * float(1 << kLoLog2));  // exact (power of two)
            o[Cp + cp] = lo;
            o[2 * Cp + cp] = hi;
        }
    }
};

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
__device__ __forceinline__ void tma_load_1d(std::uint32_t dst, const void* tmap, std::uint32_t bar, int c0) {
    CS_HOPPER_ASM(
        "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2}], [%3];\n" ::"r"(dst),
        "l"(reinterpret_cast<std::uint64_t>(tmap)), "r"(c0), "r"(bar)
        : "memory");
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

// ---- epilogue --------------------------------------------------------------------------
// Warpgroup `wg` of the CTA writes its 64 x BN accumulator tile (rows p0 + 64*wg ..., columns
// m0 ...) straight from the fragment: NHWC as pairs of adjacent filters (4-byte stores where M
// is even), NCHW as single elements at out[n][m][e][f]. Rows >= P and columns >= M are skipped.
// ct: the thread's index among the CTA's 256 consumer threads (warpgroup ct/128).
// kDownLog2 > 0: every value is multiplied by 2^-kDownLog2 first (exact: the 3xFP16 split
// scales its weights up by 2^kDownLog2).
// out_mul (the split variants' 2^(ex+ew) as two floats, range_scale.hpp): every value is then
// multiplied by out_mul[0] * out_mul[1] as well (exact: powers of two); null for the others.
template <class T, int BN, int kDownLog2 = 0>
__device__ __forceinline__ void store_tile(float (&acc)[BN / 2], T* __restrict__ out, const ConvGeom& g,
                                           int p0, int m0, bool nchw, int ct, const float* out_mul = nullptr) {
    if constexpr (kDownLog2 > 0) {
        constexpr float down = 1.0f / float(1 << kDownLog2);
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) acc[i] *= down;
    }
    if (out_mul) {
        const float a = out_mul[0], b = out_mul[1];
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) acc[i] = acc[i] * a * b;
    }
    const int t = ct & 127;
    const int wg = ct >> 7;
    const int lane = t & 31, warp = t >> 5;
    const int row0 = p0 + wg * 64 + warp * 16 + (lane >> 2);
    const int col0 = m0 + 2 * (lane & 3);
    const bool pair_ok = (g.M & 1) == 0;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        const int p = row0 + 8 * i;
        if (p >= g.P) continue;
        if (!nchw) {
            T* orow = out + std::int64_t(p) * g.M;
#pragma unroll
            for (int j = 0; j < BN / 8; ++j) {
                const int m = col0 + 8 * j;
                const float v0 = acc[4 * j + 2 * i], v1 = acc[4 * j + 2 * i + 1];
                if (pair_ok && m + 1 < g.M) {
                    *reinterpret_cast<typename Elem<T>::Pair*>(orow + m) = Elem<T>::pair(v0, v1);
                } else {
                    if (m < g.M) orow[m] = Elem<T>::from(v0);
                    if (m + 1 < g.M) orow[m + 1] = Elem<T>::from(v1);
                }
            }
        } else {
            const int n = p / g.EF, ef = p - n * g.EF;
            T* obase = out + std::int64_t(n) * g.M * g.EF + ef;
#pragma unroll
            for (int j = 0; j < BN / 8; ++j) {
                const int m = col0 + 8 * j;
                if (m < g.M) obase[std::int64_t(m) * g.EF] = Elem<T>::from(acc[4 * j + 2 * i]);
                if (m + 1 < g.M) obase[std::int64_t(m + 1) * g.EF] = Elem<T>::from(acc[4 * j + 2 * i + 1]);
            }
        }
    }
}

// ---- split-K: the partial sums' reduction -------------------------------------------------
// A split-K launch (rung 3/4 where one image leaves most SMs idle) writes each K part's fp32
// 128 x BN tile to partial[part][p][m] (P x M row-major, as store_tile's NHWC path).
// splitk_sum and splitk_store finish output (p, m): the parts summed in order
// (deterministic), the epilogue's 2^-kDown and out_mul, the output's type and layout. Their
// two callers: the reduction kernel below (one thread per output element, in the output's
// order) and the fused split-K's fix-up inside the persistent kernel (ws_kernel.cuh), which
// thus give the same bits. __ldcg: a fused part reads partials other SMs wrote during the
// kernel (L2).
// The parts' sum of W consecutive floats at partial + pm (W = 1, or 4 at a 16-byte aligned
// pm), in part order, with up to 8 parts' loads in flight at once: a fused part's fix-up has
// few threads over many parts, so the loads' latency bounds it, not their bytes.
template <int W>
__device__ __forceinline__ void splitk_sum(const float* __restrict__ partial, std::int64_t stride, int parts,
                                           std::int64_t pm, float (&v)[W]) {
    static_assert(W == 1 || W == 4, "one float or a float4");
#pragma unroll
    for (int i = 0; i < W; ++i) v[i] = 0.0f;
    for (int k0 = 0; k0 < parts; k0 += 8) {
        float x[8][W];
#pragma unroll
        for (int j = 0; j < 8; ++j)
            if (k0 + j < parts) {
                const float* q = partial + std::int64_t(k0 + j) * stride + pm;
                if constexpr (W == 4) {
                    const float4 f = __ldcg(reinterpret_cast<const float4*>(q));
                    x[j][0] = f.x, x[j][1] = f.y, x[j][2] = f.z, x[j][3] = f.w;
                } else {
                    x[j][0] = __ldcg(q);
                }
            }
#pragma unroll
        for (int j = 0; j < 8; ++j)
            if (k0 + j < parts)
#pragma unroll
                for (int i = 0; i < W; ++i) v[i] += x[j][i];
    }
}

// Output (p, m) from its parts' sum v: the epilogue's 2^-kDown and out_mul, the output's
// type and layout.
template <class TO, int kDown>
__device__ __forceinline__ void splitk_store(float v, TO* __restrict__ out, const ConvGeom& g, bool nchw,
                                             const float* __restrict__ out_mul, int p, int m) {
    if constexpr (kDown > 0) v *= 1.0f / float(1 << kDown);
    if (out_mul) v = v * out_mul[0] * out_mul[1];
    std::int64_t idx = std::int64_t(p) * g.M + m;
    if (nchw) {  // out[n][m][ef]
        const int n = p / g.EF, ef = p - n * g.EF;
        idx = (std::int64_t(n) * g.M + m) * g.EF + ef;
    }
    out[idx] = Elem<TO>::from(v);
}

template <class TO, int kDown>
__global__ void splitk_reduce_kernel(const float* __restrict__ partial, TO* __restrict__ out, const ConvGeom g,
                                     int parts, int nchw, const float* __restrict__ out_mul) {
    const std::int64_t total = std::int64_t(g.P) * g.M;
    const std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    int p, m;
    if (nchw) {  // idx = (n*M + m)*EF + ef
        const std::int64_t ef = idx % g.EF, nm = idx / g.EF;
        m = int(nm % g.M);
        p = int((nm / g.M) * g.EF + ef);
    } else {
        p = int(idx / g.M);
        m = int(idx - std::int64_t(p) * g.M);
    }
    float v[1];
    splitk_sum<1>(partial, total, parts, std::int64_t(p) * g.M + m, v);
    splitk_store<TO, kDown>(v[0], out, g, nchw != 0, out_mul, p, m);
}

// ---- transforms: NCHW -> NHWC, channel padding, space-to-depth ---------------------------
// in'[n][Y][X][c'] with c' = (dy*b + dx)*C + c  (c' < C*b*b; the rest up to Cp is zero)
//                = in[n][c][b*Y + dy - padf][b*X + dx - padf]  (zero outside the image).
// w'[m][R'][S'][c'] = w[m][c][b*R' + dy][b*S' + dx] (zero where b*R'+dy >= R or b*S'+dx >= S).
// b = 1, padf = 0: a layout change and/or channel padding; b = stride > 1 with padf = pad:
// space-to-depth, after which the layer is an R'xS' stride-1 convolution without padding with
// the same E x F output (sum over r = b*R'+dy, s = b*S'+dx of the original taps). The
// parameters: PrepGeom / PrepWGeom (geometry.hpp), set by make_setup.
//
// NCHW sources (and the split operands): PrepRow below; an NHWC source of unsplit operands
// takes the full-width copy of s2d_vec.cuh (launch_prep_input).
// One block per output row (n, Y): the b source rows it needs go to shared memory, read
// coalesced in the source layout (NCHW: tile[dy][c][xx]; NHWC: tile[dy][xx][c], each dy one
// contiguous run of Wt*C elements), then the row is written coalesced in NHWC order (a warp
// per output pixel X, lanes over c'). xx = source column + padf.
// Memory-level parallelism: each thread issues kU = 8 independent loads before it writes any
// of them to shared memory. No integer division per element: the NCHW index is split with a
// float reciprocal and a +-1 fix-up, and each lane decodes its (at most 8) channels
// c' = lane + 32k once.
// Measured on the H200 (git show 3ab0d79:gpu/variants/hopper/hopper_core.cuh): far below the
// copy bandwidth on conv1's space-to-depth and lower still from NCHW on conv2-5 (runs of W
// elements a channel): a layout change alone (b = 1) goes through PrepTranspose below instead.
// __device__ with explicit thread ids so that a host program can emulate a block
// (tests/hopper_prep_emulation.cu).
// #pragma unroll in __host__ __device__ code, for the device pass only (the host compiler warns).
#if defined(__CUDA_ARCH__)
#define CS_HOPPER_UNROLL _Pragma("unroll")
#else
#define CS_HOPPER_UNROLL
#endif

struct PrepRow {
    static constexpr int kU = 8;  // loads in flight per thread
    static constexpr int kK = 8;  // channels decoded once per lane (Cp <= 256)

    template <class T>
    __host__ __device__ static void load(const T* __restrict__ in, T* tile, const PrepGeom& g, int n, int Y, int tid,
                                         int nthreads, T zero) {
        const int Wt = g.Wp * g.b;
        if (g.src_nchw) {
            const int total = g.b * g.C * Wt;  // tile index i = (dy*C + c)*Wt + xx
            const float invW = 1.0f / float(Wt), invC = 1.0f / float(g.C);
            for (int i0 = tid; i0 < total; i0 += kU * nthreads) {
                T v[kU];
CS_HOPPER_UNROLL
                for (int u = 0; u < kU; ++u) {
                    const int i = i0 + u * nthreads;
                    v[u] = zero;
                    if (i < total) {
                        int row = int((float(i) + 0.5f) * invW), xx = i - row * Wt;
                        if (xx < 0) --row, xx += Wt;
                        else if (xx >= Wt) ++row, xx -= Wt;
                        int dy = int((float(row) + 0.5f) * invC), c = row - dy * g.C;
                        if (c < 0) --dy, c += g.C;
                        else if (c >= g.C) ++dy, c -= g.C;
                        const int y = g.b * Y + dy - g.padf, x = xx - g.padf;
                        if (y >= 0 && y < g.H && x >= 0 && x < g.W)
                            v[u] = in[((std::int64_t(n) * g.C + c) * g.H + y) * g.W + x];
                    }
                }
CS_HOPPER_UNROLL
                for (int u = 0; u < kU; ++u) {
                    const int i = i0 + u * nthreads;
                    if (i < total) tile[i] = v[u];
                }
            }
        } else {
            const int run = Wt * g.C;
            const int lo = g.padf * g.C, hi = (g.padf + g.W) * g.C;
            for (int dy = 0; dy < g.b; ++dy) {
                const int y = g.b * Y + dy - g.padf;
                const bool yok = y >= 0 && y < g.H;
                const T* src = in + (std::int64_t(n) * g.H + (yok ? y : 0)) * g.W * g.C;
                T* dst = tile + dy * run;
                for (int i0 = tid; i0 < run; i0 += kU * nthreads) {
                    T v[kU];
CS_HOPPER_UNROLL
                    for (int u = 0; u < kU; ++u) {
                        const int i = i0 + u * nthreads;
                        v[u] = (i < run && yok && i >= lo && i < hi) ? src[i - lo] : zero;
                    }
CS_HOPPER_UNROLL
                    for (int u = 0; u < kU; ++u) {
                        const int i = i0 + u * nthreads;
                        if (i < run) dst[i] = v[u];
                    }
                }
            }
        }
    }

    // Tile offset of channel c' of output pixel X = 0 (-1: a zero padding channel).
    __host__ __device__ static int tile_offset(const PrepGeom& g, int cp) {
        if (cp >= g.C * g.b * g.b) return -1;
        const int Wt = g.Wp * g.b;
        const s2d::Channel ch = s2d::channel(cp, g.C, g.b);
        return g.src_nchw ? (ch.dy * g.C + ch.c) * Wt + ch.dx : (ch.dy * Wt + ch.dx) * g.C + ch.c;
    }

    // Op::op(x): applied to every element written (OperandOf<T> in the kernel: the tf32
    // rounding; Keep: the plain map, as the host emulation checks it).
    struct Keep {
        static constexpr bool kActive = false;
        static constexpr bool kScaled = false;
        static constexpr int kParts = 1;
        template <class T>
        __host__ __device__ static T op(T x) { return x; }
        template <class T>
        __host__ __device__ static void put(T* o, int cp, int, T x, const SplitScale& = {}) { o[cp] = x; }
    };
    // T: the tile's (source) type; TW: the written type (T, or __half for Split3Half).
    template <class T, class Op = Keep, class TW = T>
    // ss: the split's scale (Op::kScaled), the identity otherwise.
    __host__ __device__ static void store(const T* tile, TW* __restrict__ out, const PrepGeom& g, int n, int Y,
                                          int tid, int nthreads, T zero, const SplitScale& ss = {}) {
        const int warp = tid >> 5, lane = tid & 31, nw = nthreads >> 5;
        const int xstep = g.src_nchw ? g.b : g.b * g.C;  // tile offset of X+1 minus X
        int off[kK];
CS_HOPPER_UNROLL
        for (int k = 0; k < kK; ++k) {
            const int cp = lane + 32 * k;
            off[k] = cp < g.Cp ? tile_offset(g, cp) : -1;
        }
        const int px = g.Cp * Op::kParts;  // elements written per pixel
        TW* orow = out + (std::int64_t(n) * g.Hp + Y) * g.Wp * px;
        for (int X = warp; X < g.Wp; X += nw) {
            TW* o = orow + X * px;
            const int xo = X * xstep;
CS_HOPPER_UNROLL
            for (int k = 0; k < kK; ++k) {
                const int cp = lane + 32 * k;
                if (cp < g.Cp) Op::put(o, cp, g.Cp, off[k] >= 0 ? tile[off[k] + xo] : zero, ss);
            }
            for (int cp = lane + 32 * kK; cp < g.Cp; cp += 32) {
                const int t = tile_offset(g, cp);
                Op::put(o, cp, g.Cp, t >= 0 ? tile[t + xo] : zero, ss);
            }
        }
    }
};

template <class T, class Op, class TW = T>
__global__ void __launch_bounds__(256) prep_input_tiled_kernel(const T* __restrict__ in, TW* __restrict__ out,
                                                               const PrepGeom g, const RangeScale* rs) {
    grid_launch_dependents();  // a GEMM launched as its programmatic dependent may start (HopperPlan)
    extern __shared__ __align__(16) unsigned char prep_smem[];
    T* tile = reinterpret_cast<T*>(prep_smem);
    const int n = int(blockIdx.x) / g.Hp, Y = int(blockIdx.x) - n * g.Hp;
    const T zero = Elem<T>::from(0.0f);
    PrepRow::load<T>(in, tile, g, n, Y, int(threadIdx.x), int(blockDim.x), zero);
    __syncthreads();
    PrepRow::store<T, Op, TW>(tile, out, g, n, Y, int(threadIdx.x), int(blockDim.x), zero,
                              load_split_scale(Op::kScaled ? rs : nullptr, true));
}

// The same map one element per thread (no shared memory): for images whose tile would not
// fit in 48 KB, and for the weights where the transpose does not apply (kIn false: filters for
// images, R x S taps for pixels, PrepTranspose::weights). total: value elements (pixels * Cp).
template <class T, class Op, class TW = T, bool kIn = true>
__global__ void prep_gather_kernel(const T* __restrict__ in, TW* __restrict__ out, const PrepGeom g,
                                   std::int64_t total, const RangeScale* rs) {
    grid_launch_dependents();  // a GEMM launched as its programmatic dependent may start (HopperPlan)
    const std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int cp = int(idx % g.Cp);
    std::int64_t q = idx / g.Cp;
    const int X = int(q % g.Wp);
    q /= g.Wp;
    const int Y = int(q % g.Hp);
    const int n = int(q / g.Hp);
    T v = Elem<T>::from(0.0f);
    if (cp < g.C * g.b * g.b) {
        const s2d::Channel ch = s2d::channel(cp, g.C, g.b);
        const int y = g.b * Y + ch.dy - g.padf, x = g.b * X + ch.dx - g.padf;
        if (y >= 0 && y < g.H && x >= 0 && x < g.W) v = in[s2d::offset(g.src_nchw, n, ch.c, y, x, g.C, g.H, g.W)];
    }
    Op::put(out + (idx - cp) * Op::kParts, cp, g.Cp, v, load_split_scale(Op::kScaled ? rs : nullptr, kIn));
}

// b = 1, padf = 0 from NCHW (conv2-5's NCHW rows, the splits' too): per image a [C][H*W] ->
// [H*W][Cp] transpose through a 64 x 64 shared-memory tile: read as runs of 64 pixels of one
// channel, written as runs of 64 channels of one pixel (channels C..Cp-1 zero). PrepRow reads a
// run of W elements per channel (26 bytes on conv3-5's 13-wide images). Grid: (pixel tiles,
// channel tiles, images); the row pitch keeps both phases free of bank conflicts (4 bytes *
// an odd count). The KCRS -> KRSC weights are the same map with a filter for an image and its
// R x S taps for pixels (PrepTranspose::weights). Measured on the H200 at N=128, fp16, against
// PrepRow and cuDNN's nchwToNhwc (git show 3ab0d79:gpu/variants/hopper/hopper_core.cuh): the
// inputs about at cuDNN's speed and well ahead of PrepRow; the weights between the
// element-per-thread kernel and cuDNN (9 taps fill 9 of a tile's 64 pixel columns).
struct PrepTranspose {
    static constexpr int kTile = 64, kThreads = 256;
    static bool fits(const PrepGeom& g, std::int64_t n) { return g.b == 1 && g.padf == 0 && g.src_nchw && n <= 65535; }
    static PrepGeom weights(const PrepWGeom& w) { return PrepGeom{w.C, w.R, w.S, w.b, 0, w.Rp, w.Sp, w.Cp, w.src_kcrs}; }
    static dim3 grid(const PrepGeom& g, std::int64_t n) {
        return dim3(unsigned((g.H * g.W + kTile - 1) / kTile), unsigned((g.Cp + kTile - 1) / kTile), unsigned(n));
    }
};
// kIn: the input (else the KCRS -> KRSC weights: "images" of filters, R x S "pixels").
template <class T, class Op, class TW = T, bool kIn = true>
__global__ void __launch_bounds__(PrepTranspose::kThreads)
    prep_transpose_kernel(const T* __restrict__ in, TW* __restrict__ out, const PrepGeom g, const RangeScale* rs) {
    grid_launch_dependents();  // a GEMM launched as its programmatic dependent may start (HopperPlan)
    constexpr int kT = PrepTranspose::kTile, kRows = PrepTranspose::kThreads / kT;
    constexpr int kPitch = kT + (sizeof(T) == 2 ? 2 : 1);
    __shared__ T tile[kT][kPitch];
    const int HW = g.H * g.W, p0 = int(blockIdx.x) * kT, c0 = int(blockIdx.y) * kT, n = int(blockIdx.z);
    const int tx = int(threadIdx.x) % kT, ty = int(threadIdx.x) / kT;
    const T zero = Elem<T>::from(0.0f);
    const T* src = in + std::int64_t(n) * g.C * HW;
CS_HOPPER_UNROLL
    for (int r = ty; r < kT; r += kRows) {  // tile[c - c0][p - p0]
        const int c = c0 + r, p = p0 + tx;
        tile[r][tx] = (c < g.C && p < HW) ? src[std::int64_t(c) * HW + p] : zero;
    }
    __syncthreads();
    const SplitScale ss = load_split_scale(Op::kScaled ? rs : nullptr, kIn);
    const int cp = c0 + tx;
    if (cp >= g.Cp) return;
    TW* dst = out + std::int64_t(n) * HW * g.Cp * Op::kParts;
CS_HOPPER_UNROLL
    for (int r = ty; r < kT; r += kRows) {
        const int p = p0 + r;
        if (p < HW) Op::put(dst + std::int64_t(p) * g.Cp * Op::kParts, cp, g.Cp, tile[tx][r], ss);
    }
}

// Op: OperandOf<T> (one block of channels), or Split3<true> / Split3<false> (3 blocks).
// T: the problem's type (what the transforms read); TW: the operands' (what they write).
// rs: the split's scale (range_scale.hpp), null for the unsplit operands.
template <class T, class Op = OperandOf<T>, class TW = T>
inline void launch_prep_input(const Setup& u, const T* in, TW* out, std::int64_t n, cudaStream_t stream,
                              const RangeScale* rs = nullptr) {
    const PrepGeom& g = u.pg;
    const std::size_t smem = std::size_t(g.b) * g.C * g.Wp * g.b * sizeof(T);
    // An NHWC source of unsplit operands: the space-to-depth map as a full-width copy (s2d_vec.cuh,
    // the same kernel as the cudnn-*-s2d rows' transform).
    // Launched from space_to_depth.cu: the kernel template instantiated here, in the sm_90a-only
    // objects, made its launch exit the process (status 1, no message; exit() called from
    // HopperPlan::run, found with tools/dev/exittrace.c).
    if constexpr (Op::kParts == 1 && !Op::kScaled && std::is_same_v<T, TW>) {
        const s2d::VecGeom vg{g.C, g.H, g.W, g.b, g.padf, g.Hp, g.Wp, g.Cp};
        if (!g.src_nchw && s2d::launch_nhwc_vec(vg, int(sizeof(T)), Op::kActive, in, out, n, stream)) return;
    }
    if (PrepTranspose::fits(g, n)) {
        prep_transpose_kernel<T, Op, TW><<<PrepTranspose::grid(g, n), PrepTranspose::kThreads, 0, stream>>>(in, out, g, rs);
    } else if (smem <= 48 * 1024) {
        const std::int64_t blocks = n * g.Hp;
        prep_input_tiled_kernel<T, Op, TW><<<unsigned(blocks), 256, smem, stream>>>(in, out, g, rs);
    } else {
        const std::int64_t total = n * u.ws_img / Op::kParts;
        prep_gather_kernel<T, Op, TW><<<unsigned((total + 255) / 256), 256, 0, stream>>>(in, out, g, total, rs);
    }
    CS_CUDA_CHECK_LAUNCH();
}

template <class T, class Op = OperandOf<T>, class TW = T>
inline void launch_prep_weights(const Setup& u, const T* w, TW* out, cudaStream_t stream,
                                const RangeScale* rs = nullptr) {
    const PrepGeom tg = PrepTranspose::weights(u.pw);
    if (PrepTranspose::fits(tg, u.pw.M)) {
        prep_transpose_kernel<T, Op, TW, false>
            <<<PrepTranspose::grid(tg, u.pw.M), PrepTranspose::kThreads, 0, stream>>>(w, out, tg, rs);
    } else {
        const std::int64_t total = u.w_elems / Op::kParts;
        prep_gather_kernel<T, Op, TW, false><<<unsigned((total + 255) / 256), 256, 0, stream>>>(w, out, tg, total, rs);
    }
    CS_CUDA_CHECK_LAUNCH();
}

inline std::string mib(double bytes) {
    char b[48];
    std::snprintf(b, sizeof b, "%.2f MiB", bytes / (1024.0 * 1024.0));
    return b;
}

// ---- the Plan: transforms (if any) + the rung's GEMM, all inside run() --------------------
// Gemm: a rung's launcher with
//   void launch(const T* in, const T* w, T* out, const ConvGeom& g, bool nchw_out, cudaStream_t);
//   std::string detail() const;
//   std::string config() const;           (the axis values it runs with, for the CSV)
//   std::size_t workspace_bytes() const;  (its own device memory: rung 3's split-K partials)
// Whether a GEMM policy reads the raw input itself (raw_input(): the halo rung's s2d=loader),
// so that the plan runs no input transform and keeps no workspace for it.
template <class G, class = void>
struct HasRawInput : std::false_type {};
template <class G>
struct HasRawInput<G, std::void_t<decltype(std::declval<const G&>().raw_input())>> : std::true_type {};
template <class G>
inline bool reads_raw_input(const G& g) {
    if constexpr (HasRawInput<G>::value)
        return g.raw_input();
    else
        return false;
}
// Whether the plan runs the input transform into its workspace: the setup asks for one and the
// GEMM does not read the raw input itself.
template <class G>
inline bool transforms_input(const Setup& u, const G& g) {
    return u.tin && !reads_raw_input(g);
}
// Whether a GEMM policy can be launched as the input transform's programmatic dependent
// (after_transform: set where the transform runs; dependent_launch(): whether it then is —
// the persistent kernel's producer waits for the transform's writes before its first load,
// ws_kernel.cuh). The cp.async and TMA rungs' kernels have no such wait.
template <class G, class = void>
struct HasDependentLaunch : std::false_type {};
template <class G>
struct HasDependentLaunch<G, std::void_t<decltype(std::declval<const G&>().dependent_launch())>> : std::true_type {};

// The transformed input lives in a workspace sized for `chunk` images (all of the largest call
// when the workspace limit allows, else run() loops over chunks of images).
// T: the GEMM's operand type; TIO: the problem's (input, weights, output; T, or float for the
// 3xFP16 split). InOp / WOp: what the transforms write (OperandOf<T>, or Split3 / Split3Half;
// Setup::parts must be their kParts).
template <class T, class Gemm, class InOp = OperandOf<T>, class WOp = OperandOf<T>, class TIO = T>
class HopperPlan final : public Plan {
public:
    HopperPlan(Setup u, Gemm gemm, std::int64_t chunk, Buffer ws_in, Buffer ws_w)
        : u_(std::move(u)), gemm_(std::move(gemm)), chunk_(chunk), ws_in_(std::move(ws_in)), ws_w_(std::move(ws_w)) {
        if constexpr (InOp::kScaled) {
            // The split's scales (range_scale.hpp): computed each run, applied by the transforms,
            // undone by the GEMM's epilogue (WsGemm::out_mul).
            mut_ = split_mutation();
            const SplitKeep keep = split_keep(mut_);
            scale_ = RangeScaleBuffer(RangeTargets{InOp::kInLog2, InOp::kWLog2, std::int64_t(u_.s.C) * u_.s.R * u_.s.S},
                                      keep.lo_in, keep.lo_w_half);
            gemm_.out_mul = scale_.out_mul();
        }
        if constexpr (HasDependentLaunch<Gemm>::value) gemm_.after_transform = transforms_input(u_, gemm_);
    }

    void run(const DeviceIO& io, cudaStream_t stream) override {
        const TIO* in = static_cast<const TIO*>(io.in);
        const TIO* w = static_cast<const TIO*>(io.w);
        TIO* out = static_cast<TIO*>(io.out);
        const bool nchw_out = u_.src_nchw;
        const RangeScale* rs = nullptr;
        if constexpr (InOp::kScaled) {
            static_assert(std::is_same_v<TIO, float>, "the split variants read fp32 tensors");
            scale_.compute(in, io.N * u_.src_img, w, std::int64_t(u_.s.M) * u_.s.C * u_.s.R * u_.s.S, stream);
            rs = scale_.device();
        }
        if constexpr (std::is_same_v<T, TIO>) {
            if (!u_.tw && !u_.tin) {
                gemm_.launch(in, w, out, geom_for(u_, io.N), nchw_out, stream);
                return;
            }
        }
        // A plan whose operand type differs from its problem's always transforms both.
        const T* wop = nullptr;
        if (u_.tw) {
            launch_prep_weights<TIO, WOp, T>(u_, w, ws_w_.as<T>(), stream, rs);
            wop = ws_w_.as<T>();
        } else if constexpr (std::is_same_v<T, TIO>) {
            wop = w;
        }
        if (!transforms_input(u_, gemm_)) {  // NHWC read in place, or the GEMM's loader transforms it
            if constexpr (std::is_same_v<T, TIO>) gemm_.launch(in, wop, out, geom_for(u_, io.N), nchw_out, stream);
            return;
        }
        for (std::int64_t first = 0; first < io.N; first += chunk_) {
            const std::int64_t cnt = std::min(chunk_, io.N - first);
            launch_prep_input<TIO, InOp, T>(u_, in + first * u_.src_img, ws_in_.as<T>(), cnt, stream, rs);
            gemm_.launch(ws_in_.as<T>(), wop, out + first * u_.out_img, geom_for(u_, cnt), nchw_out, stream);
        }
    }
    std::size_t workspace_bytes() const override {
        return ws_in_.bytes() + ws_w_.bytes() + gemm_.workspace_bytes();
    }
    std::string config() const override { return gemm_.config(); }
    std::optional<std::string> run_error() const override {
        if constexpr (InOp::kScaled)
            return scale_.error(InOp::kInLog2 == 0 ? "the 3xTF32 split" : "the 3xFP16 split");
        return std::nullopt;
    }
    std::string detail() const override {
        const bool raw = reads_raw_input(gemm_);
        std::string d = gemm_.detail() + "; " + u_.what(raw);
        if constexpr (InOp::kScaled) d += "; " + scale_.describe() + split_mutation_note(mut_);
        if (transforms_input(u_, gemm_)) {
            d += ", workspace " + mib(double(workspace_bytes())) + " (" + std::to_string(chunk_) + " image(s) per chunk)";
            if constexpr (HasDependentLaunch<Gemm>::value)
                if (gemm_.dependent_launch()) d += "; the GEMM launched as the input transform's programmatic dependent";
        }
        return d;
    }

private:
    Setup u_;
    Gemm gemm_;
    std::int64_t chunk_;
    Buffer ws_in_, ws_w_;
    RangeScaleBuffer scale_;  // the split variants only
    SplitMutation mut_ = SplitMutation::none;
};

// Builds the workspace and the plan; throws Skip when one transformed image does not fit.
template <class T, class Gemm, class InOp = OperandOf<T>, class WOp = OperandOf<T>, class TIO = T>
inline std::unique_ptr<Plan> make_hopper_plan(const Problem& p, const PlanContext& ctx, Setup u, Gemm gemm) {
    static_assert(InOp::kParts == WOp::kParts, "input and weights split into the same channel blocks");
    if (u.parts != InOp::kParts) throw cs::Error("hopper: the setup's channel blocks do not match the transforms");
    if (!std::is_same_v<T, TIO> && !(u.tin && u.tw))
        throw cs::Error("hopper: an operand type other than the problem's needs both transforms");
    const std::int64_t max_n = std::max<std::int64_t>(1, ctx.max_chunk_N);
    std::int64_t chunk = max_n;
    Buffer ws_in, ws_w;
    if (transforms_input(u, gemm)) {
        const std::size_t per_img = std::size_t(u.ws_img) * sizeof(T);
        const std::size_t wbytes = std::size_t(u.w_elems) * sizeof(T);
        const std::size_t limit = ctx.workspace_limit > wbytes ? ctx.workspace_limit - wbytes : 0;
        if (per_img > limit)
            throw Skip("the transformed image (" + mib(double(per_img)) + ") exceeds the workspace limit " +
                       mib(double(ctx.workspace_limit)));
        chunk = std::max<std::int64_t>(1, std::min<std::int64_t>(max_n, std::int64_t(limit / per_img)));
        ws_in = Buffer(MemKind::device, std::size_t(chunk) * per_img);
    }
    if (u.tw) ws_w = Buffer(MemKind::device, std::size_t(u.w_elems) * sizeof(T));
    (void)p;
    return std::make_unique<HopperPlan<T, Gemm, InOp, WOp, TIO>>(std::move(u), std::move(gemm), chunk,
                                                                  std::move(ws_in), std::move(ws_w));
}

}  // namespace cs::gpu::variants::hopper
