// The Hopper family (hopper_core.cuh): the direct epilogue (a warpgroup's accumulator tile
// straight to global memory, NHWC or NCHW) and split-K's reduction of the partial sums.
#pragma once

#include "elements.cuh"
#include "geometry.hpp"
#include "hopper_elems.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace cs::gpu::variants::hopper {

// What every output value gets in float before its one rounding to T, in this order:
//   mul   the split variants' 2^(ex+ew) as two floats (range_scale.hpp; exact: powers of two);
//   bias  the chain's fused bias, nbias (the output's M) values of T (the network-chain issue's
//         epilogue op): filter m adds bias[m], a column at or past nbias reads none;
//   relu  then !(v > 0) -> 0 (a NaN becomes 0 as well): elements.cuh's chain_bias_relu, the one
//         the chain's own ops and the megakernel apply.
// They are run-time arguments, so the fused epilogue adds no kernel instantiation. Fused, the
// bias is added to the fp32 accumulator: one rounding where the separate pass makes two.
template <class T>
struct OutOps {
    const float* mul = nullptr;
    const T* bias = nullptr;
    int nbias = 0;
    int relu = 0;
    template <int K>
    __device__ __forceinline__ void scale(float (&acc)[K]) const {
        if (!mul) return;
        const float a = mul[0], b = mul[1];
#pragma unroll
        for (int i = 0; i < K; ++i) acc[i] = acc[i] * a * b;
    }
    // Filter m's bias (read-only path: the load need not wait for the output's stores).
    __device__ __forceinline__ float bias_of(int m) const {
        return m < nbias ? Elem<T>::to_float(__ldg(bias + m)) : 0.0f;
    }
    // Filter m's bias, then the ReLU, on one value (the split-K fix-ups).
    __device__ __forceinline__ float post(float v, int m) const {
        return chain_bias_relu(v, bias ? bias_of(m) : 0.0f, bias != nullptr, relu != 0);
    }
    // The bias and ReLU on a warpgroup's 64 x BN fragment (acc[4j + 2i + {0,1}]: rows r and r + 8
    // of filters col0 + 8j + {0,1}), before any of it is stored: each filter's bias loaded once
    // for both rows, eight pairs' loads issued before their adds (a load per element between
    // the stores, which may alias the bias, waited for each: the halo's conv1 ran 27% slower).
    template <int BN>
    __device__ __forceinline__ void apply(float (&acc)[BN / 2], int col0) const {
        if (bias) {
            constexpr int kPairs = BN / 8, kBatch = kPairs < 8 ? kPairs : 8;
#pragma unroll
            for (int j0 = 0; j0 < kPairs; j0 += kBatch) {
                float b[2 * kBatch];
#pragma unroll
                for (int j = 0; j < kBatch; ++j) {
                    b[2 * j] = bias_of(col0 + 8 * (j0 + j));
                    b[2 * j + 1] = bias_of(col0 + 8 * (j0 + j) + 1);
                }
                add_pairs<BN, kBatch>(acc, j0, b);
            }
        }
        if (relu) relu_all<BN>(acc);
    }
    // Pairs j0 .. j0 + kBatch - 1 of the fragment get their filters' biases b[2j], b[2j + 1].
    template <int BN, int kBatch>
    __device__ __forceinline__ static void add_pairs(float (&acc)[BN / 2], int j0, const float (&b)[2 * kBatch]) {
#pragma unroll
        for (int j = 0; j < kBatch; ++j)
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                acc[4 * (j0 + j) + 2 * i] += b[2 * j];
                acc[4 * (j0 + j) + 2 * i + 1] += b[2 * j + 1];
            }
    }
    template <int BN>
    __device__ __forceinline__ static void relu_all(float (&acc)[BN / 2]) {
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) acc[i] = chain_bias_relu(acc[i], 0.0f, false, true);
    }
};

// OutOps' bias and ReLU with each thread's biases loaded once and held in registers, for a
// persistent kernel whose every tile covers the same BN filters (the halo mainloop: all of
// conv1's filters in each tile), so that no tile's epilogue waits on a load: the biases of
// OutOps::apply, loaded at the kernel's start instead of after each tile's MMAs. The same
// arithmetic (the bias, then the ReLU, before the one rounding); no split scale (mul).
template <class T, int BN>
struct HeldOps {
    float b[BN / 4];  // filters col0 + 8j + {0, 1}: b[2j], b[2j + 1]
    bool bias = false, relu = false;
    __device__ __forceinline__ void load(const OutOps<T>& ops, int col0) {
        bias = ops.bias != nullptr;
        relu = ops.relu != 0;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
            b[2 * j] = bias ? ops.bias_of(col0 + 8 * j) : 0.0f;
            b[2 * j + 1] = bias ? ops.bias_of(col0 + 8 * j + 1) : 0.0f;
        }
    }
    __device__ __forceinline__ void apply(float (&acc)[BN / 2]) const {
        if (bias) OutOps<T>::template add_pairs<BN, BN / 8>(acc, 0, b);
        if (relu) OutOps<T>::template relu_all<BN>(acc);
    }
};

// ---- epilogue --------------------------------------------------------------------------
// Warpgroup `wg` of the CTA writes its 64 x BN accumulator tile (rows p0 + 64*wg ..., columns
// m0 ...) straight from the fragment: NHWC as pairs of adjacent filters (4-byte stores where M
// is even), NCHW as single elements at out[n][m][e][f]. Rows >= P and columns >= M are skipped.
// ct: the thread's index among the CTA's 256 consumer threads (warpgroup ct/128).
// kDownLog2 > 0: every value is multiplied by 2^-kDownLog2 first (exact: the 3xFP16 split
// scales its weights up by 2^kDownLog2).
// ops (OutOps below): the split variants' scale, then the chain's fused bias and ReLU; all
// absent for a plain convolution and for the fp32 partial sums of split-K.
template <class T, int BN, int kDownLog2 = 0>
__device__ __forceinline__ void store_tile(float (&acc)[BN / 2], T* __restrict__ out, const ConvGeom& g,
                                           int p0, int m0, bool nchw, int ct, const OutOps<T>& ops = {}) {
    if constexpr (kDownLog2 > 0) {
        constexpr float down = 1.0f / float(1 << kDownLog2);
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) acc[i] *= down;
    }
    ops.scale(acc);
    const int t = ct & 127;
    const int wg = ct >> 7;
    const int lane = t & 31, warp = t >> 5;
    const int row0 = p0 + wg * 64 + warp * 16 + (lane >> 2);
    const int col0 = m0 + 2 * (lane & 3);
    ops.template apply<BN>(acc, col0);
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
// (deterministic), the epilogue's 2^-kDown and OutOps, the output's type and layout. Their
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

// Output (p, m) from its parts' sum v: the epilogue's 2^-kDown and OutOps, the output's
// type and layout.
template <class TO, int kDown>
__device__ __forceinline__ void splitk_store(float v, TO* __restrict__ out, const ConvGeom& g, bool nchw,
                                             const OutOps<TO>& ops, int p, int m) {
    if constexpr (kDown > 0) v *= 1.0f / float(1 << kDown);
    if (ops.mul) v = v * ops.mul[0] * ops.mul[1];
    v = ops.post(v, m);
    std::int64_t idx = std::int64_t(p) * g.M + m;
    if (nchw) {  // out[n][m][ef]
        const int n = p / g.EF, ef = p - n * g.EF;
        idx = (std::int64_t(n) * g.M + m) * g.EF + ef;
    }
    out[idx] = Elem<TO>::from(v);
}

template <class TO, int kDown>
__global__ void splitk_reduce_kernel(const float* __restrict__ partial, TO* __restrict__ out, const ConvGeom g,
                                     int parts, int nchw, const OutOps<TO> ops) {
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
    splitk_store<TO, kDown>(v[0], out, g, nchw != 0, ops, p, m);
}

}  // namespace cs::gpu::variants::hopper
