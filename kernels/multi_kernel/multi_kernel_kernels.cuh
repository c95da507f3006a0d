// multi-kernel family — its two kernels (part of multi_kernel.cuh, which includes this file):
// one templated partial-sum kernel and one templated reduction kernel.
//
// Kernel 1 (mk_partial_kernel), one block per (image n, filter m, channel group g): the
// logical N x M x Cg grid is flattened onto blockIdx.x = m + M*(g + Cg*n) (y and z are
// limited to 65535; x to 2^31-1, which supports()/make_plan check). m runs fastest, so
// the blocks in flight share one input plane (n, c) and read it from L2. The block has
// plane_tiling(E, F) threads, t x t outputs per thread (conv1: 28x28 threads, 2x2 each);
// each thread sums the products of its outputs over the group's channels
// c = g*G .. min(C, g*G+G)-1 (in that order, then r, then s) and writes the partial sums
// either to the workspace (plane stride EFp = E*F rounded up to 4 elements, so every
// workspace plane starts 16-byte aligned) or, in the atomic variant, atomicAdd-s them
// into the output. Where the running sums live is the first idea the family studies: in
// mk (the study's Mk, "lots of access to global memory") each thread keeps them in its
// workspace slots — it zeroes the slot, then per tap loads it, adds the product and stores
// it back (kGlobalAcc); from mk-sw-mt on ("more registers") they are registers, stored
// once. Every thread, with or without an output, runs every iteration of the channel loop,
// so every thread reaches every __syncthreads(); threads whose (clamped) outputs fall
// outside E x F compute on the clamped position and store nothing (in mk, which has no
// barriers, they touch no slot at all).
//
// Kernel 2 (mk_reduce_kernel), one block per (n, m) of the chunk: out[n][m][p] = sum over
// g = 0..Cg-1 in that fixed order of ws[n][g][m][p], in float; deterministic.
//
// Workspace layout [n][g][m][EFp] (elements of Wt: float, or __half for the half variant);
// the pad elements p in [E*F, EFp) are never written: make_plan zeroes the buffer once so
// the vectorised reduction never reads uninitialised memory.
#pragma once

#include "buffers.hpp"
#include "conv_shape.hpp"
#include "cuda_check.hpp"
#include "error.hpp"
#include "multi_kernel_rungs.hpp"
#include "variant.hpp"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

namespace cs::gpu::variants::multi_kernel {

// Division by a run-time divisor d >= 1 without the divide sequence: q = x / d for every
// x < 2^31 as (umulhi(x, m) + x) >> s, with 2^(s-1) < d <= 2^s and m = floor(2^32 (2^s - d)
// / d) + 1 (the round-up multiplier; hi <= x keeps hi + x below 2^32). Checked on the host
// against x / d for divisors 1..2^32-1 and x over the 32-bit range.
struct FastDiv {
    unsigned d = 1, m = 1, s = 0;
    static FastDiv make(unsigned d) {
        FastDiv f;
        f.d = d;
        while ((std::uint64_t(1) << f.s) < d) ++f.s;
        f.m = unsigned(((std::uint64_t(1) << 32) * ((std::uint64_t(1) << f.s) - d)) / d + 1);
        return f;
    }
#ifdef __CUDACC__
    __device__ __forceinline__ unsigned div(unsigned x) const { return (__umulhi(x, m) + x) >> s; }
#endif
};

// Everything the kernels need, by value.
struct MkArgs {
    ConvShape s;
    int t = 1;         // outputs per thread per dimension (<= the kernel's kT)
    int G = 1;         // channels per group (one block sums G channels)
    int Cg = 1;        // groups per image: ceil(C / G)
    int EFp = 4;       // workspace plane stride in elements: E*F rounded up to 4
    int Hp = 0, Wp = 0;  // shared input plane: rows (H + 2 pad) and row stride (>= W + 2 pad)
    int Sw = 1;        // shared filter row stride (S, or S rounded up to 4 for float4 rows)
    int w_floats = 0;  // shared floats before the input plane (filter slice, multiple of 4)
    FastDiv by_M, by_Cg, by_W, by_Wp;  // the block index and plane positions are divided by these
};

#ifdef __CUDACC__

template <class T>
__device__ __forceinline__ float to_float(T v) {
    if constexpr (std::is_same_v<T, __half>)
        return __half2float(v);
    else
        return v;
}

template <class W>
__device__ __forceinline__ W from_float(float v) {
    if constexpr (std::is_same_v<W, __half>)
        return __float2half_rn(v);
    else
        return v;
}

// A float load and store on global memory that the compiler must issue as written (mk's
// running sums: with __restrict__ pointers it could otherwise keep the sum in a register,
// which is the next variant's idea). asm volatile statements keep their order, so each
// load sees the thread's previous store; the load may be served by L1.
__device__ __forceinline__ float ld_global(const float* p) {
    float v;
    asm volatile("ld.global.f32 %0, [%1];" : "=f"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ void st_global(float* p, float v) {
    asm volatile("st.global.f32 [%0], %1;" ::"l"(p), "f"(v));
}

// Copies n contiguous elements of src (global) into shared memory through put(k, value),
// converted to float. kVec with float data: scalar loads up to the first 16-byte boundary
// (src's alignment is read at run time: a plane or filter slice starts 16-byte aligned
// only when its element offset is a multiple of 4), float4 loads for the body, scalar
// loads for the tail. Every element 0..n-1 is put exactly once.
template <bool kVec, class T, class Put>
__device__ __forceinline__ void stage_flat(const T* __restrict__ src, int n, int tid, int nth, Put put) {
    if constexpr (kVec && std::is_same_v<T, float>) {
        const int mis = int((reinterpret_cast<std::uintptr_t>(src) >> 2) & 3u);  // float index mod 4
        const int head = min((4 - mis) & 3, n);
        const int nvec = (n - head) >> 2;
        const int tail0 = head + 4 * nvec;
        const float4* src4 = reinterpret_cast<const float4*>(src + head);
        for (int k = tid; k < nvec; k += nth) {
            const float4 v = src4[k];
            const int e = head + 4 * k;
            put(e, v.x);
            put(e + 1, v.y);
            put(e + 2, v.z);
            put(e + 3, v.w);
        }
        const int extra = head + (n - tail0);
        for (int k = tid; k < extra; k += nth) {
            const int e = k < head ? k : tail0 + (k - head);
            put(e, src[e]);
        }
    } else {
        for (int k = tid; k < n; k += nth) put(k, to_float(src[k]));
    }
}

// Copies one H x W input plane into the interior of the shared plane (row stride Wp,
// interior origin at (pad, pad)), converted to float. Rows and columns are tracked
// incrementally, so there is one integer division per thread per call, not per element.
// kVec with float data: as stage_flat, float4 loads for the 16-byte-aligned body.
template <bool kVec, class T>
__device__ __forceinline__ void stage_plane(const T* __restrict__ src, float* __restrict__ plane, int H, int W,
                                            const FastDiv by_W, int Wp, int pad, int tid, int nth) {
    float* const d0 = plane + pad * Wp + pad;
    const int n = H * W;
    if constexpr (kVec && std::is_same_v<T, float>) {
        const int mis = int((reinterpret_cast<std::uintptr_t>(src) >> 2) & 3u);
        const int head = min((4 - mis) & 3, n);
        const int nvec = (n - head) >> 2;
        const int tail0 = head + 4 * nvec;
        const float4* src4 = reinterpret_cast<const float4*>(src + head);
        if (tid < nvec) {
            const int e0 = head + 4 * tid;
            int r = int(by_W.div(unsigned(e0))), q = e0 - r * W;
            const int step = 4 * nth, dr = int(by_W.div(unsigned(step))), dq = step - dr * W;
            for (int k = tid; k < nvec; k += nth) {
                const float4 v = src4[k];
                const float vals[4] = {v.x, v.y, v.z, v.w};
                int rr = r, qq = q;
#pragma unroll
                for (int u = 0; u < 4; ++u) {
                    d0[rr * Wp + qq] = vals[u];
                    if (++qq == W) {
                        qq = 0;
                        ++rr;
                    }
                }
                r += dr;
                q += dq;
                if (q >= W) {
                    q -= W;
                    ++r;
                }
            }
        }
        const int extra = head + (n - tail0);
        for (int k = tid; k < extra; k += nth) {
            const int e = k < head ? k : tail0 + (k - head);
            const int r = int(by_W.div(unsigned(e)));
            d0[r * Wp + (e - r * W)] = src[e];
        }
    } else {
        if (tid < n) {
            int r = int(by_W.div(unsigned(tid))), q = tid - r * W;
            const int dr = int(by_W.div(unsigned(nth))), dq = nth - dr * W;
            for (int k = tid; k < n; k += nth) {
                d0[r * Wp + q] = to_float(src[k]);
                r += dr;
                q += dq;
                if (q >= W) {
                    q -= W;
                    ++r;
                }
            }
        }
    }
}

// Kernel 1. Template flags = what each variant studies:
//   T        element type of in / w (float, or __half: loaded and converted to float)
//   Wt       what is stored: workspace element (float / __half) or, kAtomic, the output
//   kSW      the channel's R x S filter slice staged in shared memory by all threads
//   kSI      the channel's whole input plane staged in shared memory, with a zero halo
//            of `pad` (and any extra columns up to the row stride), so the inner loop
//            has no bounds checks; else the input is read from global memory with checks
//   kVec     float4 staging loads; filter rows read from shared memory as float4 into
//            registers (row stride Sw = S rounded up to 4); the tap loop fully unrolled
//            for kS in {3, 5, 11} (and the row loop too when kT = 1); with a shared plane
//            and stride % 4 == 0 (conv1) the input row is read as float4 as well
//   kAtomic  atomicAdd the partial sums into the (zeroed) output instead of a workspace
//   kMap     output mapping of a thread's t x t outputs (uncoalesced for Mk, Mk-sw-mt)
//   kT       compile-time bound on t (1, 2 or 4; the run-time t <= kT). kT = 1 kernels are
//            limited to 32 registers (launch bounds 1024 x 2): at G = 1 their blocks are
//            tiny and many, and resident blocks per SM hide each block's fixed latency
//   kS       compile-time R = S (3, 5, 11) for the unrolled rows, 0: run-time R and S
template <class T, class Wt, bool kSW, bool kSI, bool kVec, bool kAtomic, bool kGlobalAcc, PlaneMapping kMap, int kT,
          int kS>
__global__ void __launch_bounds__(1024, kT == 1 ? 2 : 1)
    mk_partial_kernel(const T* __restrict__ in, const T* __restrict__ w, Wt* __restrict__ dst, const MkArgs a) {
    static_assert(!kVec || std::is_same_v<T, float>, "vector loads are written for float data");
    static_assert(!kGlobalAcc || (!kSW && !kSI && !kVec && !kAtomic && std::is_same_v<Wt, float>),
                  "global accumulation is mk's: no shared memory (so no barriers), float workspace");
    static_assert(!kAtomic || std::is_same_v<Wt, float>, "atomic accumulation is into a float output");
    static_assert(kS == 0 || kVec, "compile-time S is only instantiated for the vector variants");
    constexpr bool kRows4 = kVec && kS > 0;  // filter rows in registers, read as float4
    constexpr int kSp = kS > 0 ? round_up4(kS) : 4;
    extern __shared__ float4 mk_smem[];
    float* const w_s = reinterpret_cast<float*>(mk_smem);
    float* const in_s = w_s + a.w_floats;  // 16-byte aligned: w_floats is a multiple of 4

    // kS > 0 is instantiated only for square filters (R == S == kS): both loops unroll.
    const int C = a.s.C, H = a.s.H, W = a.s.W, M = a.s.M, R = kS > 0 ? kS : a.s.R;
    const int S = kS > 0 ? kS : a.s.S;
    const int st = a.s.stride, pad = a.s.pad, E = a.s.E, F = a.s.F;
    const int RS = R * S;
    const int t = a.t, Wp = a.Wp;

    const unsigned b = blockIdx.x;  // = m + M * (g + Cg * n) < 2^31
    const unsigned rest = a.by_M.div(b);
    const int m = int(b - rest * unsigned(M));
    const unsigned nn = a.by_Cg.div(rest);
    const int g = int(rest - nn * unsigned(a.Cg));
    const int n = int(nn);  // image within this call's chunk
    const int c0 = g * a.G;
    const int c1 = min(C, c0 + a.G);
    const int tid = int(threadIdx.y * blockDim.x + threadIdx.x);
    const int nth = int(blockDim.x * blockDim.y);

    // Output rows of i and columns of j (each depends on one index only), and the same
    // clamped into the plane for the loads of threads that have nothing to store.
    int eo[kT], fo[kT], ec[kT], fc[kT];
#pragma unroll
    for (int i = 0; i < kT; ++i) {
        int e, f;
        plane_coord<kMap>(t, i, i, e, f);
        eo[i] = e;
        fo[i] = f;
        ec[i] = min(e, E - 1);
        fc[i] = min(f, F - 1);
    }

    if constexpr (kSI) {
        // Zero halo, once: the staging below writes only the interior, every channel.
        if ((pad > 0 || Wp > W) && tid < a.Hp * Wp) {
            int r = int(a.by_Wp.div(unsigned(tid))), q = tid - r * Wp;
            const int dr = int(a.by_Wp.div(unsigned(nth))), dq = nth - dr * Wp;
            for (int k = tid; k < a.Hp * Wp; k += nth) {
                if (r < pad || r >= pad + H || q < pad || q >= pad + W) in_s[k] = 0.0f;
                r += dr;
                q += dq;
                if (q >= Wp) {
                    q -= Wp;
                    ++r;
                }
            }
        }
    }

    float acc[kT][kT];
#pragma unroll
    for (int i = 0; i < kT; ++i)
#pragma unroll
        for (int j = 0; j < kT; ++j) acc[i][j] = 0.0f;

    // kGlobalAcc: the thread's workspace slots hold its running sums (zeroed here); a thread
    // without an output touches no slot (mk has no barriers, so it may simply skip).
    float* const ws_plane =
        kGlobalAcc ? reinterpret_cast<float*>(dst) + ((std::int64_t(n) * a.Cg + g) * M + m) * a.EFp : nullptr;
    auto owns = [&](int i, int j) { return i < t && j < t && eo[i] < E && fo[j] < F; };
    if constexpr (kGlobalAcc) {
#pragma unroll
        for (int i = 0; i < kT; ++i)
#pragma unroll
            for (int j = 0; j < kT; ++j)
                if (owns(i, j)) st_global(ws_plane + eo[i] * F + fo[j], 0.0f);
    }

    for (int c = c0; c < c1; ++c) {  // block-uniform trip count: barriers below are safe
        const T* const in_c = in + (std::int64_t(n) * C + c) * (std::int64_t(H) * W);
        const T* const w_c = w + (std::int64_t(m) * C + c) * RS;
        if constexpr (kSW || kSI) {
            if (c != c0) __syncthreads();  // every read of the previous channel is done
            if constexpr (kSW) {
                // Row stride kSp (rows 16-byte aligned for float4 reads) or S (packed).
                stage_flat<kVec>(w_c, RS, tid, nth, [&](int k, float v) {
                    if constexpr (kRows4)
                        w_s[(k / kS) * kSp + (k % kS)] = v;
                    else
                        w_s[k] = v;
                });
            }
            if constexpr (kSI) stage_plane<kVec>(in_c, in_s, H, W, a.by_W, Wp, pad, tid, nth);
            __syncthreads();
        }
        // Rows fully unrolled for one output per thread (conv2-5); with 2x2 or more outputs
        // the unrolled rows' hoisted loads would spill, so the row loop stays a loop there.
        constexpr int kRowUnroll = (kS > 0 && kT == 1) ? kS : 1;
#pragma unroll kRowUnroll
        for (int r = 0; r < R; ++r) {
            if constexpr (kRows4) {
                // Filter row r in chunks of 4 taps: one float4 shared load (a broadcast) per
                // chunk, used by all t x t outputs of the thread before the next chunk, so
                // few registers hold weights. Each output still sums q = 0, 1, .. in order.
                const float4* row4 = reinterpret_cast<const float4*>(w_s + r * kSp);
#pragma unroll
                for (int u = 0; u < kSp / 4; ++u) {
                    const float4 wv = row4[u];
                    const float wq[4] = {wv.x, wv.y, wv.z, wv.w};
#pragma unroll
                    for (int i = 0; i < kT; ++i) {
                        if (i >= t) continue;  // block-uniform
                        const int ih = ec[i] * st + r;  // row in padded coordinates
#pragma unroll
                        for (int j = 0; j < kT; ++j) {
                            if (j >= t) continue;  // block-uniform
                            const int iw = fc[j] * st + 4 * u;  // padded column of tap q = 4u
                            float sum = acc[i][j];
                            if constexpr (kSI) {
                                const float* p = in_s + ih * Wp + iw;
                                if ((st & 3) == 0) {
                                    // iw and Wp are multiples of 4, so p is 16-byte aligned;
                                    // make_plan made the row stride cover the last column read.
                                    const float4 v = *reinterpret_cast<const float4*>(p);
                                    const float vq[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                                    for (int k = 0; k < 4; ++k)
                                        if (4 * u + k < kS) sum = fmaf(vq[k], wq[k], sum);
                                } else {
#pragma unroll
                                    for (int k = 0; k < 4; ++k)
                                        if (4 * u + k < kS) sum = fmaf(p[k], wq[k], sum);
                                }
                            } else {
                                const int gh = ih - pad;
                                if (gh >= 0 && gh < H) {
                                    const T* p = in_c + gh * W;
#pragma unroll
                                    for (int k = 0; k < 4; ++k) {
                                        const int gw = iw - pad + k;
                                        if (4 * u + k < kS && gw >= 0 && gw < W)
                                            sum = fmaf(to_float(p[gw]), wq[k], sum);
                                    }
                                }
                            }
                            acc[i][j] = sum;
                        }
                    }
                }
            } else {
                auto weight = [&](int q) -> float {
                    if constexpr (kSW)
                        return w_s[r * S + q];
                    else
                        return to_float(w_c[r * S + q]);
                };
                // sum = x * w + sum, on the register (sum) or, kGlobalAcc, on the slot in
                // global memory: a load, the same fmaf, a store, for every tap.
                auto mac = [&](float& sum, float x, float wv, int i, int j) {
                    if constexpr (kGlobalAcc) {
                        float* const slot = ws_plane + eo[i] * F + fo[j];
                        if (owns(i, j)) st_global(slot, fmaf(x, wv, ld_global(slot)));
                    } else {
                        sum = fmaf(x, wv, sum);
                    }
                };
#pragma unroll
                for (int i = 0; i < kT; ++i) {
                    if (i >= t) continue;  // block-uniform
                    const int ih = ec[i] * st + r;  // row in padded coordinates
#pragma unroll
                    for (int j = 0; j < kT; ++j) {
                        if (j >= t) continue;  // block-uniform
                        const int iw = fc[j] * st;  // padded column of tap q = 0
                        float sum = acc[i][j];
                        if constexpr (kSI) {
                            const float* p = in_s + ih * Wp + iw;
                            for (int q = 0; q < S; ++q) mac(sum, p[q], weight(q), i, j);
                        } else {
                            const int gh = ih - pad;
                            if (gh >= 0 && gh < H) {
                                const T* p = in_c + gh * W;
                                const int gw0 = iw - pad;
                                for (int q = 0; q < S; ++q) {
                                    const int gw = gw0 + q;
                                    if (gw >= 0 && gw < W) mac(sum, to_float(p[gw]), weight(q), i, j);
                                }
                            }
                        }
                        acc[i][j] = sum;
                    }
                }
            }
        }
    }

    if constexpr (!kGlobalAcc) {  // (kGlobalAcc: the sums are already in the workspace)
#pragma unroll
        for (int i = 0; i < kT; ++i) {
#pragma unroll
            for (int j = 0; j < kT; ++j) {
                if (i < t && j < t && eo[i] < E && fo[j] < F) {
                    const int p = eo[i] * F + fo[j];
                    if constexpr (kAtomic)
                        atomicAdd(dst + (std::int64_t(n) * M + m) * (std::int64_t(E) * F) + p, acc[i][j]);
                    else
                        dst[((std::int64_t(n) * a.Cg + g) * M + m) * a.EFp + p] = from_float<Wt>(acc[i][j]);
                }
            }
        }
    }
}

// Kernel 2: one block per output plane (n, m) of the chunk; the sum over the groups in the
// fixed order g = 0, 1, .., Cg-1, in float. kVec: float4 loads of the workspace (planes are
// 16-byte aligned, EFp a multiple of 4), scalar stores (output planes are not aligned when
// E*F is odd); the pad lanes p >= E*F are summed (zeros) and dropped.
template <class Wt, class T, bool kVec>
__global__ void __launch_bounds__(1024, 1)
    mk_reduce_kernel(const Wt* __restrict__ ws, T* __restrict__ out, const MkArgs a) {
    static_assert(!kVec || std::is_same_v<Wt, float>, "the vector reduction reads a float workspace");
    const unsigned plane = blockIdx.x;  // = m + M * n < 2^31
    const unsigned M = unsigned(a.s.M);
    const unsigned n = a.by_M.div(plane), m = plane - n * M;
    const int EF = a.s.E * a.s.F;
    const std::int64_t gstride = std::int64_t(M) * a.EFp;  // elements between groups
    const Wt* const src = ws + (std::int64_t(n) * a.Cg * M + m) * a.EFp;
    T* const dst = out + std::int64_t(plane) * EF;
    if constexpr (kVec) {
        const int nv = a.EFp / 4;
        const std::int64_t gstride4 = gstride / 4;
        for (int p4 = int(threadIdx.x); p4 < nv; p4 += int(blockDim.x)) {
            const float4* s4 = reinterpret_cast<const float4*>(src) + p4;
            float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll 4
            for (int g = 0; g < a.Cg; ++g) {
                const float4 v = s4[g * gstride4];
                sum.x += v.x;
                sum.y += v.y;
                sum.z += v.z;
                sum.w += v.w;
            }
            const int p = 4 * p4;
            if (p + 0 < EF) dst[p + 0] = from_float<T>(sum.x);
            if (p + 1 < EF) dst[p + 1] = from_float<T>(sum.y);
            if (p + 2 < EF) dst[p + 2] = from_float<T>(sum.z);
            if (p + 3 < EF) dst[p + 3] = from_float<T>(sum.w);
        }
    } else {
        for (int p = int(threadIdx.x); p < EF; p += int(blockDim.x)) {
            float sum = 0.0f;
#pragma unroll 4
            for (int g = 0; g < a.Cg; ++g) sum += to_float(src[g * gstride + p]);
            dst[p] = from_float<T>(sum);
        }
    }
}

#endif  // __CUDACC__

}  // namespace cs::gpu::variants::multi_kernel
