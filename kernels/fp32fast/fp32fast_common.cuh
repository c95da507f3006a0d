// The exact-fp32 fast family: what its variants share — cp.async and mma.sync
// wrappers (with CPU models for the emulator in tools/dev/fp32fast/emu.hpp), the weight
// transpose that gives the GEMM variants a zero-padded K x M operand, the im2col row table
// computed at plan time, and the implicit-im2col B-tile loader (any filter, stride, pad).
//
// The GEMM view (simt_gemm.cu, split_tf32.cu):
//   out[m][p] = sum_k Wt[k][m] * B[k][p],  k = (c*R + r)*S + s,  p = (n*E + e)*F + f
//   B[k][p]   = in[n][c][e*stride + r - pad][f*stride + s - pad]  (zero outside the image)
// Wt is the weight tensor transposed to K x M and zero-padded to Kp x Mp (multiples of the
// block tile), written by wt_transpose_kernel at the start of every run (weights change
// between calls); rows k >= K and columns m >= M are zero, so the A loads need no bounds.
// The row table tbl[k] = {c*H*W + r*W + s, (r << 16) | s} is data-independent (layer shape
// only) and is uploaded once at plan time; rows k >= K hold r = -32768, which fails every
// bounds test, so the padded rows of B are zero as well (never garbage times zero).
// Each thread of the B loader owns one column p for the whole kernel: (n, e, f) decoded once
// into the image base offset and the window corner (ih0, iw0); per element: a table load
// (a warp-wide broadcast), two adds, two unsigned compares and one cp.async of 4 bytes with
// zero-fill when out of the image.
#pragma once

#ifndef FP32FAST_EMU
#include <cuda_runtime.h>
#endif

#include <cstdint>
#include <vector>

// Before sm_80 (a build for older GPUs) the copies are plain loads and stores (complete at
// once, so the waits are no-ops) and mma_tf32 traps; the variants' supports() refuse such
// devices, so those paths only keep the build compiling.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define FF_PRE_SM80 1
#endif

// Dynamic shared memory, a launch and its error check: CUDA's, or the host emulation's
// (tools/dev/fp32fast/emu.hpp, FP32FAST_EMU), which has no launch error to check.
#ifdef FP32FAST_EMU
#define FF_DYN_SMEM(T, name) T* name = ::emu::dyn_smem<T>()
#define FF_LAUNCH(kernel, grid, block, smem, stream, ...) ::emu::launch(kernel, dim3(grid), dim3(block), smem, __VA_ARGS__)
#define FF_CHECK_LAUNCH() ((void)0)
#else
#define FF_DYN_SMEM(T, name) extern __shared__ __align__(16) unsigned char ff_dyn_smem_[]; T* name = reinterpret_cast<T*>(ff_dyn_smem_)
#define FF_LAUNCH(kernel, grid, block, smem, stream, ...) kernel<<<grid, block, smem, stream>>>(__VA_ARGS__)
#define FF_CHECK_LAUNCH() CS_CUDA_CHECK_LAUNCH()
#endif

namespace cs::gpu::variants::fp32fast {

// ---- asynchronous copies (sm_80+) --------------------------------------------------------

// 4 bytes, cached in L1 (.ca: neighbouring tiles re-read the same input); zero-filled when
// !valid (src-size 0: nothing is read, src must still be a valid address).
__device__ __forceinline__ void cp_async4(float* smem, const float* gmem, bool valid) {
#ifdef FP32FAST_EMU
    ::emu::cp_async(smem, gmem, 4, valid);
#elif defined(FF_PRE_SM80)
    *smem = valid ? *gmem : 0.0f;
#else
    const unsigned s = unsigned(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(valid ? 4 : 0)
                 : "memory");
#endif
}

// 16 bytes, L2 only (.cg): weights and transformed filters, streamed once per block.
__device__ __forceinline__ void cp_async16(float* smem, const float* gmem) {
#ifdef FP32FAST_EMU
    ::emu::cp_async(smem, gmem, 16, true);
#elif defined(FF_PRE_SM80)
    *reinterpret_cast<float4*>(smem) = *reinterpret_cast<const float4*>(gmem);
#else
    const unsigned s = unsigned(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#ifdef FP32FAST_EMU
    ::emu::cp_async_commit();
#elif defined(FF_PRE_SM80)
#else
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#ifdef FP32FAST_EMU
    ::emu::cp_async_wait(N);
#elif defined(FF_PRE_SM80)
#else
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// ---- TF32 and the m16n8k8 tensor-core product ----------------------------------------------

// Round to TF32 (10 mantissa bits), to nearest, ties away from zero; the result is a float
// bit pattern with the low 13 bits zero.
__device__ __forceinline__ std::uint32_t to_tf32(float x) {
#ifdef FP32FAST_EMU
    return ::emu::cvt_rna_tf32(x);
#elif defined(FF_PRE_SM80)
    return (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
#else
    std::uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
#endif
}

// d += A (16x8, row) * B (8x8, col); fragments as in the PTX ISA (g = lane/4, t = lane%4):
//   a0 (g, t)  a1 (g+8, t)  a2 (g, t+4)  a3 (g+8, t+4);  b0 (k=t, n=g)  b1 (k=t+4, n=g);
//   d0 (g, 2t) d1 (g, 2t+1) d2 (g+8, 2t) d3 (g+8, 2t+1).
__device__ __forceinline__ void mma_tf32(float d[4], const std::uint32_t a[4], const std::uint32_t b[2]) {
#ifdef FP32FAST_EMU
    ::emu::mma_tf32(d, a, b, d);
#elif defined(FF_PRE_SM80)
    (void)d, (void)a, (void)b;
    __trap();
#else
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// ---- the GEMM operands -----------------------------------------------------------------------

struct GemmShape {
    int C, H, W, M, R, S, stride, pad, E, F;
    int K, Kp, Mp;  // K = C*R*S; Kp, Mp: padded to the block tile
    int HW, EF;
    std::int64_t CHW, MEF;
};

inline int round_up(int x, int m) { return (x + m - 1) / m * m; }

inline GemmShape gemm_shape(int C, int H, int W, int M, int R, int S, int stride, int pad, int kmult, int mmult) {
    GemmShape g{};
    g.C = C, g.H = H, g.W = W, g.M = M, g.R = R, g.S = S, g.stride = stride, g.pad = pad;
    g.E = (H + 2 * pad - R) / stride + 1;
    g.F = (W + 2 * pad - S) / stride + 1;
    g.K = C * R * S;
    g.Kp = round_up(g.K, kmult);
    g.Mp = round_up(M, mmult);
    g.HW = H * W;
    g.EF = g.E * g.F;
    g.CHW = std::int64_t(C) * g.HW;
    g.MEF = std::int64_t(M) * g.EF;
    return g;
}

// tbl[k] for k < Kp (host side; uploaded at plan time).
inline std::vector<int2> im2col_row_table(const GemmShape& g) {
    std::vector<int2> t(std::size_t(g.Kp));
    for (int k = 0; k < g.Kp; ++k) {
        if (k < g.K) {
            const int c = k / (g.R * g.S), rs = k % (g.R * g.S), r = rs / g.S, s = rs % g.S;
            t[std::size_t(k)].x = c * g.HW + r * g.W + s;
            t[std::size_t(k)].y = int((unsigned(r) << 16) | unsigned(s));
        } else {
            t[std::size_t(k)].x = 0;
            t[std::size_t(k)].y = int(0x80000000u);  // r = -32768: outside every image
        }
    }
    return t;
}

// Wt[k][m] = w[m][k] (k < K, m < M), else 0; Kp x Mp. Blocks of 32 x 8 threads move a 32 x 32
// tile through shared memory so both the reads (along k) and the writes (along m) coalesce.
// (static: one copy per translation unit that launches it.)
static __global__ void __launch_bounds__(256)
    wt_transpose_kernel(const float* __restrict__ w, float* __restrict__ wt, int M, int K, int Mp, int Kp) {
    FF_DYN_SMEM(float, tile);  // [32][33]
    const int tx = int(threadIdx.x) % 32, ty = int(threadIdx.x) / 32;
    const int k0 = int(blockIdx.x) * 32, m0 = int(blockIdx.y) * 32;
    for (int i = ty; i < 32; i += 8) {
        const int m = m0 + i, k = k0 + tx;
        tile[i * 33 + tx] = (m < M && k < K) ? w[std::int64_t(m) * K + k] : 0.0f;
    }
    __syncthreads();
    for (int i = ty; i < 32; i += 8) {
        const int k = k0 + i, m = m0 + tx;
        if (k < Kp && m < Mp) wt[std::int64_t(k) * Mp + m] = tile[tx * 33 + i];
    }
}

// The implicit B tile: BK rows x BN columns, NT threads; thread tid owns column tid % BN and
// rows tid / BN + i * (NT / BN). Shared-memory row stride LDB (floats).
template <int BK, int BN, int NT, int LDB>
struct ImplicitB {
    static_assert(NT % BN == 0, "each thread owns one column");
    static constexpr int kStep = NT / BN;
    static_assert(BK % kStep == 0, "rows split evenly");
    static constexpr int kPer = BK / kStep;
    const float* src;  // in + n*C*H*W + ih0*W + iw0: the column's window origin (not read itself)
    int ih0, iw0;

    __device__ __forceinline__ void init(const float* in, const GemmShape& g, int P, int p0, int tid) {
        const int p = p0 + tid % BN;
        if (p < P) {
            const int n = p / g.EF, ef = p - n * g.EF;
            const int e = ef / g.F, f = ef - e * g.F;
            ih0 = e * g.stride - g.pad;
            iw0 = f * g.stride - g.pad;
            src = in + (std::int64_t(n) * g.CHW + std::int64_t(ih0) * g.W + iw0);
        } else {
            ih0 = -(1 << 30);  // fails every bounds test
            iw0 = 0;
            src = in;
        }
    }
    // Issues the cp.async of rows [k0, k0 + BK) into dst (BK x LDB floats); tid as in init.
    // Rows outside the image are zero-filled from `in` (a valid address; nothing is read).
    __device__ __forceinline__ void load(const float* __restrict__ in, const int2* __restrict__ tbl, const GemmShape& g,
                                         int k0, float* dst, int tid) const {
        const int col = tid % BN, row0 = tid / BN;
        const int2* const t0 = tbl + (k0 + row0);
        float* const d0 = dst + row0 * LDB + col;
#pragma unroll
        for (int i = 0; i < kPer; ++i) {
            const int2 t = __ldg(t0 + i * kStep);
            const int r = t.y >> 16, s = t.y & 0xFFFF;
            const bool ok = unsigned(ih0 + r) < unsigned(g.H) && unsigned(iw0 + s) < unsigned(g.W);
            cp_async4(d0 + i * kStep * LDB, ok ? src + t.x : in, ok);
        }
    }
};

// Output offset of GEMM column p in NCHW (row m adds m * E*F); -1 when p >= P.
__device__ __forceinline__ std::int64_t nchw_col_base(const GemmShape& g, int P, int p) {
    if (p >= P) return -1;
    const int n = p / g.EF;
    return std::int64_t(n) * g.MEF + (p - n * g.EF);
}

}  // namespace cs::gpu::variants::fp32fast
