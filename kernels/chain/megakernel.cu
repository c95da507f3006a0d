// The chain megakernel (megakernel.hpp): one persistent, co-resident grid walks a chain's layers.
// Work split: mega_schedule.hpp. The pieces here, in the order a launch runs them:
//   prefetch  L2 bulk prefetch of every layer's weights, a share per CTA
//   s2d       layer 0 with C % 8 != 0 and a stride: its input rewritten by space-to-depth
//             (space_to_depth.hpp) into a workspace, so that its convolution loads 16-byte
//             channel runs like the others (AlexNet's conv1: C=3 11x11/4 -> C'=48 3x3/1)
//   conv      per unit: a 4-stage cp.async pipeline of 64 x 32 A (im2col rows, gathered) and
//             64 x 32 B (filters, K contiguous) into padded shared rows (80 B: ldmatrix reads
//             without bank conflicts), 4 warps of 32 x 32 (mma.sync m16n8k16)
//   finish    splits = 1: bias, ReLU, one rounding, stored from the fragments. More: each part
//             stores its fp32 tile in its own workspace slot, raises its tile's counter, waits
//             for the tile's other parts (all resident: units <= grid) and finishes its share of
//             the tile's rows, summing the slots in part order (deterministic); the last part to
//             leave clears the tile's counters for the next layer's launch
//   pool      3x3 stride 2 max (chain_ops.cu's rule: the first element starts, a larger value
//             or a NaN replaces, nothing replaces a NaN), 8 channels a thread where M % 8 == 0
//   barrier   grid-wide, between phases (the generation word counts on across launches)
#include "megakernel.hpp"

#include "buffers.hpp"
#include "cuda_check.hpp"
#include "elements.cuh"
#include "error.hpp"
#include "mega_device.cuh"
#include "mega_schedule.hpp"
#include "space_to_depth.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

namespace cs::gpu {

namespace mega {

constexpr int kThreads = 128;  // 4 warps, 2 x 2 of 32 x 32
constexpr int kStages = 4;
constexpr int kRow = kStepK + 8;  // a shared row: 32 elements + 8 of padding (80 B)
constexpr int kTileElems = kTileP * kTileM;

template <class T>
constexpr int smem_bytes() {
    return kStages * (kTileP + kTileM) * kRow * int(sizeof(T));
}

struct LayerArgs {
    const void* in = nullptr;    // NHWC input (layer 0 with s2d: the rewritten input's workspace)
    const void* w = nullptr;     // M x R x S x C (layer 0 with s2d: the rewritten filters)
    const void* bias = nullptr;  // M values or null
    void* conv = nullptr;        // N x E x F x M
    void* pooled = nullptr;      // N x PE x PF x M, or null
    int C = 0, H = 0, W = 0, M = 0, R = 0, S = 0, stride = 1, pad = 0, E = 0, F = 0, PE = 0, PF = 0;
    int K = 0;
    int relu = 0, vec = 0;       // vec: C % 8 == 0 (16-byte loads)
    long long P = 0;
    GemmSplit split;
    unsigned* counters = nullptr;  // 2 per tile: parts arrived, parts left (zero between launches)
    // s2d (layer 0 only): the source input and its geometry; s2d_src null: none
    const void* s2d_src = nullptr;
    s2d::Geom s2d;
};

struct Args {
    LayerArgs l[kMegaMaxLayers];
    int layers = 0;
    int N = 0;
    float* ws = nullptr;       // the split parts' fp32 slots (the largest layer's)
    unsigned* bar = nullptr;   // [0] arrivals, [1] generation
    // The phase profile (ChainMegakernel::phases): CTA 0 writes %globaltimer at the start, after
    // every grid barrier and at its end; null in a timed launch.
    unsigned long long* stamps = nullptr;
};

// The chain's epilogue on one fp32 value of filter m: chain_bias_relu (elements.cuh), one rounding.
template <class T>
__device__ __forceinline__ T post(float v, const T* bias, int relu, int m) {
    return from_float<T>(chain_bias_relu(v, bias ? to_float(bias[m]) : 0.0f, bias != nullptr, relu != 0));
}

// ---- the convolution's loads -----------------------------------------------------------
// A thread's two A rows (pixels) of a unit: where each pixel's image starts and its window's
// top-left input row and column (hb, wb), or valid false past P.
struct RowGeom {
    long long img = 0;
    int hb = 0, wb = 0;
    bool valid = false;
};

__device__ __forceinline__ RowGeom row_geom(const LayerArgs& L, long long p) {
    RowGeom g;
    if (p >= L.P) return g;
    const int EF = L.E * L.F;
    const long long n = p / EF;
    const int ef = int(p - n * EF);
    const int e = ef / L.F, f = ef - e * L.F;
    g.img = n * L.H * (long long)L.W;
    g.hb = e * L.stride - L.pad;
    g.wb = f * L.stride - L.pad;
    g.valid = true;
    return g;
}

// K step ks of the unit into stage `st` (vec: 16-byte cp.async, zero filled past the image, K
// and M). Thread t loads chunk t & 3 (8 elements) of rows t / 4 and t / 4 + 32 of A and B.
template <class T>
__device__ __forceinline__ void load_step_vec(const LayerArgs& L, const RowGeom (&rg)[2], int m0, int ks,
                                              T* As, T* Bs) {
    const int t = threadIdx.x, chunk = t & 3, row = t >> 2;
    const int k = ks * kStepK + chunk * 8;
    const bool kin = k < L.K;
    int r = 0, s = 0, c = 0;
    if (kin) {
        const int tap = k / L.C;
        c = k - tap * L.C;
        r = tap / L.S;
        s = tap - r * L.S;
    }
    const T* in = static_cast<const T*>(L.in);
    const T* w = static_cast<const T*>(L.w);
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        const int rr = row + 32 * i;
        const int h = rg[i].hb + r, x = rg[i].wb + s;
        const bool ok = kin && rg[i].valid && h >= 0 && h < L.H && x >= 0 && x < L.W;
        const T* src = ok ? in + ((rg[i].img + h * (long long)L.W + x) * L.C + c) : in;
        cp_async16(smem_addr(As + rr * kRow + chunk * 8), src, ok);
        // Filters m0 + rr, K contiguous.
        const int m = m0 + rr;
        const bool okb = kin && m < L.M;
        const T* wsrc = okb ? w + ((long long)m * L.K + k) : w;
        cp_async16(smem_addr(Bs + rr * kRow + chunk * 8), wsrc, okb);
    }
}

// The same step element by element (C % 8 != 0 and no s2d: the odd test chains): plain loads
// stored to shared memory, not overlapped with the math (correct, slow).
template <class T>
__device__ __forceinline__ void load_step_scalar(const LayerArgs& L, long long p0, int m0, int ks, T* As, T* Bs) {
    const T* in = static_cast<const T*>(L.in);
    const T* w = static_cast<const T*>(L.w);
    for (int e = threadIdx.x; e < kTileP * kStepK; e += kThreads) {
        const int rr = e / kStepK, kk = e - rr * kStepK, k = ks * kStepK + kk;
        T v = from_float<T>(0.0f);
        const RowGeom g = row_geom(L, p0 + rr);
        if (g.valid && k < L.K) {
            const int tap = k / L.C, c = k - tap * L.C, r = tap / L.S, s = tap - r * L.S;
            const int h = g.hb + r, x = g.wb + s;
            if (h >= 0 && h < L.H && x >= 0 && x < L.W) v = __ldcg(in + (g.img + h * (long long)L.W + x) * L.C + c);
        }
        As[rr * kRow + kk] = v;
    }
    for (int e = threadIdx.x; e < kTileM * kStepK; e += kThreads) {
        const int rr = e / kStepK, kk = e - rr * kStepK, k = ks * kStepK + kk, m = m0 + rr;
        Bs[rr * kRow + kk] = m < L.M && k < L.K ? w[(long long)m * L.K + k] : from_float<T>(0.0f);
    }
}

// ---- one unit -------------------------------------------------------------------------
template <class T>
__device__ void conv_unit(const LayerArgs& L, const Unit& x, int tile, float* ws, unsigned char* smem) {
    T* As = reinterpret_cast<T*>(smem);
    T* Bs = As + kStages * kTileP * kRow;
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const int wm = warp & 1, wn = warp >> 1;
    const long long p0 = (long long)x.tile_p * kTileP;
    const int m0 = x.tile_m * kTileM;
    const int nk = x.k1 - x.k0;
    RowGeom rg[2];
    if (L.vec) {
        rg[0] = row_geom(L, p0 + (t >> 2));
        rg[1] = row_geom(L, p0 + (t >> 2) + 32);
    }
    auto load = [&](int i) {
        T* a = As + (i % kStages) * kTileP * kRow;
        T* b = Bs + (i % kStages) * kTileM * kRow;
        if (L.vec)
            load_step_vec<T>(L, rg, m0, x.k0 + i, a, b);
        else
            load_step_scalar<T>(L, p0, m0, x.k0 + i, a, b);
    };
    float acc[2][4][4] = {};
    __syncthreads();  // the stages are free (the previous unit's last reads are done)
#pragma unroll
    for (int i = 0; i < kStages - 1; ++i) {
        if (i < nk) load(i);
        cp_async_commit();
    }
    for (int i = 0; i < nk; ++i) {
        cp_async_wait<kStages - 2>();
        __syncthreads();  // step i landed for all; step i - 1's stage is free
        if (i + kStages - 1 < nk) load(i + kStages - 1);
        cp_async_commit();
        const T* a = As + (i % kStages) * kTileP * kRow;
        const T* b = Bs + (i % kStages) * kTileM * kRow;
#pragma unroll
        for (int kk = 0; kk < kStepK; kk += 16) {
            std::uint32_t af[2][4], bf[2][4];
#pragma unroll
            for (int mi = 0; mi < 2; ++mi)
                ldmatrix_x4(af[mi], smem_addr(a + (wm * 32 + mi * 16 + (lane & 15)) * kRow + kk + (lane >> 4) * 8));
#pragma unroll
            for (int nj = 0; nj < 2; ++nj)
                ldmatrix_x4(bf[nj], smem_addr(b + (wn * 32 + nj * 16 + (lane & 7) + ((lane >> 4) << 3)) * kRow + kk +
                                              ((lane >> 3) & 1) * 8));
#pragma unroll
            for (int mi = 0; mi < 2; ++mi)
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    mma16816<T>(acc[mi][j], af[mi], bf[j >> 1][(j & 1) * 2], bf[j >> 1][(j & 1) * 2 + 1]);
        }
    }
    cp_async_wait<0>();

    const T* bias = static_cast<const T*>(L.bias);
    T* out = static_cast<T*>(L.conv);
    const int g = lane >> 2, q = lane & 3;
    if (L.split.splits == 1) {
        const bool pair = (L.M & 1) == 0;
#pragma unroll
        for (int mi = 0; mi < 2; ++mi)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const long long p = p0 + wm * 32 + mi * 16 + g + 8 * h;
                if (p >= L.P) continue;
                T* orow = out + p * L.M;
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const int m = m0 + wn * 32 + j * 8 + 2 * q;
                    const T v0 = post<T>(acc[mi][j][2 * h], bias, L.relu, m < L.M ? m : 0);
                    const T v1 = post<T>(acc[mi][j][2 * h + 1], bias, L.relu, m + 1 < L.M ? m + 1 : 0);
                    if (pair && m + 1 < L.M) {
                        T two[2] = {v0, v1};
                        std::uint32_t bits;
                        memcpy(&bits, two, 4);
                        *reinterpret_cast<std::uint32_t*>(orow + m) = bits;
                    } else {
                        if (m < L.M) orow[m] = v0;
                        if (m + 1 < L.M) orow[m + 1] = v1;
                    }
                }
            }
        return;
    }
    // A part of several: its fp32 tile into its slot (row-major 64 x 64).
    const int tiles = L.split.tiles(), splits = L.split.splits;
    float* slot = ws + ((long long)x.split * tiles + tile) * kTileElems;
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int rr = wm * 32 + mi * 16 + g + 8 * h, cc = wn * 32 + j * 8 + 2 * q;
                __stcg(reinterpret_cast<float2*>(slot + rr * kTileM + cc),
                       make_float2(acc[mi][j][2 * h], acc[mi][j][2 * h + 1]));
            }
    unsigned* cnt = L.counters + 2 * tile;
    __threadfence();
    __syncthreads();
    if (t == 0) {
        atom_add_acq_rel(cnt, 1);
        while (ld_acquire(cnt) < unsigned(splits)) __nanosleep(20);
    }
    __syncthreads();
    // This part's rows of the tile: the slots summed in part order, 4 columns a thread, the
    // slots' loads issued kBatch at a time before their adds (one load at a time, each waiting
    // for L2, made a 22-part tile's finish cost tens of microseconds).
    const int r0 = kTileP * x.split / splits, r1 = kTileP * (x.split + 1) / splits;
    const float* base = ws + (long long)tile * kTileElems;
    const long long slot_stride = (long long)tiles * kTileElems;
    constexpr int kBatch = 8;
    for (int e = r0 * kTileM + 4 * t; e < r1 * kTileM; e += 4 * kThreads) {
        const int rr = e / kTileM, cc = e - rr * kTileM;
        const long long p = p0 + rr;
        if (p >= L.P || m0 + cc >= L.M) continue;
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        for (int k0 = 0; k0 < splits; k0 += kBatch) {
            float4 part[kBatch];
#pragma unroll
            for (int k = 0; k < kBatch; ++k)
                if (k0 + k < splits)
                    part[k] = __ldcg(reinterpret_cast<const float4*>(base + (k0 + k) * slot_stride + e));
#pragma unroll
            for (int k = 0; k < kBatch; ++k)
                if (k0 + k < splits) {
                    v.x += part[k].x;
                    v.y += part[k].y;
                    v.z += part[k].z;
                    v.w += part[k].w;
                }
        }
        const float f[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int m = m0 + cc + i;
            if (m < L.M) out[p * L.M + m] = post<T>(f[i], bias, L.relu, m);
        }
    }
    __syncthreads();
    if (t == 0 && atom_add_acq_rel(cnt + 1, 1) == unsigned(splits) - 1) {
        // Every part has passed its wait and read what it needed: clear both for the next launch.
        atomicExch(cnt, 0u);
        atomicExch(cnt + 1, 0u);
    }
}

template <class T>
__device__ void conv_layer(const LayerArgs& L, float* ws, unsigned char* smem) {
    const GemmSplit& sp = L.split;
    for (int u = blockIdx.x; u < sp.units(); u += gridDim.x) {
        const Unit x = sp.unit(u);
        conv_unit<T>(L, x, u % sp.tiles(), ws, smem);
    }
}

// ---- the other phases --------------------------------------------------------------------
// The rewritten input, one (image, Y, X, dy) a thread: its b*C channels (dx, c) are b pixels
// of one source row, contiguous in NHWC, loaded 16 at a time before their stores (one element a
// thread and loop iteration waited for each load in turn). Each element's source is
// s2d::input_source's (the map the filters' rewrite and the CPU reference share).
template <class T>
__device__ void s2d_phase(const LayerArgs& L, int N) {
    const s2d::Geom& g = L.s2d;
    const T* src = static_cast<const T*>(L.s2d_src);
    T* dst = static_cast<T*>(const_cast<void*>(L.in));
    const int run = g.b * g.C;  // channels of one dy
    const long long total = (long long)N * g.Hp * g.Wp * g.b;
    for (long long i = blockIdx.x * (long long)kThreads + threadIdx.x; i < total;
         i += (long long)gridDim.x * kThreads) {
        const int dy = int(i % g.b);
        const long long pix = i / g.b;
        const int X = int(pix % g.Wp);
        const long long rest = pix / g.Wp;
        const int Y = int(rest % g.Hp);
        const long long n = rest / g.Hp;
        T* o = dst + pix * g.Cp + dy * run;
        for (int q0 = 0; q0 < run; q0 += 16) {  // 16 loads in flight, then their stores
            T v[16];
#pragma unroll
            for (int k = 0; k < 16; ++k) {
                const long long from = q0 + k < run ? s2d::input_source(g, false, n, dy * run + q0 + k, Y, X) : -1;
                v[k] = from >= 0 ? __ldg(src + from) : from_float<T>(0.0f);
            }
#pragma unroll
            for (int k = 0; k < 16; ++k)
                if (q0 + k < run) o[q0 + k] = v[k];
        }
    }
}

template <class T>
__device__ void pool_phase(const LayerArgs& L, int N) {
    const T* in = static_cast<const T*>(L.conv);
    T* out = static_cast<T*>(L.pooled);
    const int V = (L.M & 7) == 0 ? 8 : 1;
    const int groups = L.M / V;
    const long long total = (long long)N * L.PE * L.PF * groups;
    for (long long i = blockIdx.x * (long long)kThreads + threadIdx.x; i < total;
         i += (long long)gridDim.x * kThreads) {
        const int cg = int(i % groups);
        const long long pix = i / groups;
        const int j = int(pix % L.PF);
        const long long rest = pix / L.PF;
        const int r = int(rest % L.PE);
        const long long n = rest / L.PE;
        const T* win = in + ((n * L.E + 2 * r) * L.F + 2 * j) * L.M + cg * V;
        T* o = out + pix * L.M + cg * V;
        if (V == 8) {
            float m[8];
            for (int a = 0; a < 3; ++a)
                for (int b = 0; b < 3; ++b) {
                    const uint4 raw = __ldcg(reinterpret_cast<const uint4*>(win + ((long long)a * L.F + b) * L.M));
                    T v[8];
                    memcpy(v, &raw, 16);
#pragma unroll
                    for (int k = 0; k < 8; ++k) m[k] = a + b == 0 ? to_float(v[k]) : pool_step(m[k], to_float(v[k]));
                }
            T v[8];
#pragma unroll
            for (int k = 0; k < 8; ++k) v[k] = from_float<T>(m[k]);
            uint4 raw;
            memcpy(&raw, v, 16);
            *reinterpret_cast<uint4*>(o) = raw;
        } else {
            float m = 0.0f;
            for (int a = 0; a < 3; ++a)
                for (int b = 0; b < 3; ++b) {
                    const float v = to_float(__ldcg(win + ((long long)a * L.F + b) * L.M));
                    m = a + b == 0 ? v : pool_step(m, v);
                }
            *o = from_float<T>(m);
        }
    }
}

// Before anything else: ask L2 for every layer's weights, a 16-byte-aligned share per CTA.
__device__ void prefetch_weights(const Args& a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (threadIdx.x != 0) return;
    for (int l = 0; l < a.layers; ++l) {
        const LayerArgs& L = a.l[l];
        const long long bytes = (long long)L.M * L.K * 2;
        const long long share = ((bytes + gridDim.x - 1) / gridDim.x + 15) / 16 * 16;
        const long long from = share * blockIdx.x;
        if (from >= bytes) continue;
        long long n = std::min(share, bytes - from) / 16 * 16;
        const char* p = static_cast<const char*>(L.w) + from;
        while (n > 0) {
            const unsigned chunk = unsigned(std::min(n, 1ll << 20));
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(p), "r"(chunk) : "memory");
            p += chunk;
            n -= chunk;
        }
    }
#else
    (void)a;
#endif
}

__device__ __forceinline__ void stamp(const Args& a, int& i) {
    if (a.stamps && blockIdx.x == 0 && threadIdx.x == 0) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        a.stamps[i] = t;
    }
    ++i;
}

// The phases, in order (phase_names below lists them the same way): [s2d], conv, [pool] per
// layer, a grid barrier after each but the last.
template <class T>
__global__ void __launch_bounds__(kThreads) chain_megakernel(const __grid_constant__ Args a) {
    extern __shared__ __align__(128) unsigned char smem[];
    int st = 0;
    stamp(a, st);
    prefetch_weights(a);
    for (int l = 0; l < a.layers; ++l) {
        const LayerArgs& L = a.l[l];
        const bool last = l + 1 == a.layers;
        if (L.s2d_src) {
            s2d_phase<T>(L, a.N);
            grid_barrier(a.bar);
            stamp(a, st);
        }
        conv_layer<T>(L, a.ws, smem);
        if (L.pooled) {
            grid_barrier(a.bar);
            stamp(a, st);
            pool_phase<T>(L, a.N);
        }
        if (!last) {
            grid_barrier(a.bar);
            stamp(a, st);
        }
    }
    stamp(a, st);
}

}  // namespace mega

namespace {

using mega::Args;
using mega::LayerArgs;

template <class T>
void* kernel_of() {
    return reinterpret_cast<void*>(&mega::chain_megakernel<T>);
}

class Megakernel final : public ChainMegakernel {
public:
    Megakernel(const std::vector<MegaLayer>& layers, std::int64_t N, DType t, const cudaDeviceProp& prop,
               const MegaTensors& ten, int ctas_per_sm)
        : t_(t) {
        const bool half = t == DType::f16;
        kernel_ = half ? kernel_of<__half>() : kernel_of<__nv_bfloat16>();
        smem_ = half ? mega::smem_bytes<__half>() : mega::smem_bytes<__nv_bfloat16>();
        CS_CUDA_CHECK(cudaFuncSetAttribute(kernel_, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_));
        int fit = 0;
        CS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel_, mega::kThreads, smem_));
        per_sm_ = std::max(1, std::min(ctas_per_sm, fit));
        if (fit < 1) throw Error("megakernel: no CTA fits on an SM");
        grid_ = prop.multiProcessorCount * per_sm_;
        a_.layers = int(layers.size());
        a_.N = int(N);
        long long ws_floats = 0;
        std::size_t counters = 0;
        std::vector<std::size_t> counter_at;
        for (std::size_t i = 0; i < layers.size(); ++i) {
            const MegaLayer& m = layers[i];
            LayerArgs& L = a_.l[i];
            L.C = m.C, L.H = m.H, L.W = m.W, L.M = m.M, L.R = m.R, L.S = m.S, L.stride = m.stride, L.pad = m.pad;
            L.E = (m.H + 2 * m.pad - m.R) / m.stride + 1;
            L.F = (m.W + 2 * m.pad - m.S) / m.stride + 1;
            L.PE = m.pool ? (L.E - 3) / 2 + 1 : 0;
            L.PF = m.pool ? (L.F - 3) / 2 + 1 : 0;
            L.in = i == 0 ? ten.input : (ten.pooled[i - 1] ? ten.pooled[i - 1] : ten.conv[i - 1]);
            L.w = ten.w[i];
            L.bias = m.bias ? ten.bias[i] : nullptr;
            L.relu = m.relu ? 1 : 0;
            L.conv = ten.conv[i];
            L.pooled = m.pool ? ten.pooled[i] : nullptr;
            if (i == 0 && m.C % 8 != 0 && m.stride > 1 && (m.C * m.stride * m.stride) % 8 == 0) {
                // The space-to-depth rewrite: the kernel's s2d phase writes the input, here the filters.
                Layer src;
                src.C = m.C, src.H = m.H, src.W = m.W, src.M = m.M, src.R = m.R, src.S = m.S, src.stride = m.stride,
                src.pad = m.pad;
                const s2d::Geom g = s2d::geom(src);
                s2d_in_ = Buffer(MemKind::device, std::size_t(N) * g.Hp * g.Wp * g.Cp * 2);
                s2d_w_ = Buffer(MemKind::device, std::size_t(m.M) * g.Rp * g.Sp * g.Cp * 2);
                // The filters only (no images): the input's rewrite is the kernel's s2d phase.
                s2d::launch(g, 2, nullptr, false, nullptr, false, 0, ten.w[0], false, s2d_w_.get(), nullptr);
                CS_CUDA_CHECK(cudaDeviceSynchronize());
                L.s2d = g;
                L.s2d_src = ten.input;
                L.in = s2d_in_.get();
                L.w = s2d_w_.get();
                L.C = g.Cp, L.H = g.Hp, L.W = g.Wp, L.R = g.Rp, L.S = g.Sp, L.stride = 1, L.pad = 0;
                s2d_note_ = "; " + std::string("layer 1 by space-to-depth (C'=") + std::to_string(g.Cp) + ", " +
                            std::to_string(g.Rp) + "x" + std::to_string(g.Sp) + " stride 1)";
            }
            L.K = L.R * L.S * L.C;
            L.vec = L.C % 8 == 0 ? 1 : 0;
            L.P = N * (long long)L.E * L.F;
            L.split = mega::plan_split(L.P, L.M, L.K, grid_);
            if (L.split.splits > 1)
                ws_floats = std::max(ws_floats, (long long)L.split.units() * mega::kTileElems);
            counter_at.push_back(counters);
            counters += 2 * std::size_t(L.split.tiles());
        }
        ws_ = Buffer(MemKind::device, std::size_t(std::max(ws_floats, 1ll)) * 4);
        if (grid_ > 64 * mega::kBarGroup) throw Error("megakernel: a grid of " + std::to_string(grid_) + " CTAs is over the barrier's " + std::to_string(64 * mega::kBarGroup));
        counters_ = Buffer(MemKind::device, (counters + mega::kBarWords) * sizeof(unsigned));
        CS_CUDA_CHECK(cudaMemset(counters_.get(), 0, counters_.bytes()));
        a_.ws = ws_.as<float>();
        a_.bar = counters_.as<unsigned>() + counters;
        for (std::size_t i = 0; i < layers.size(); ++i) a_.l[i].counters = counters_.as<unsigned>() + counter_at[i];
    }

    void run(cudaStream_t s) override { launch(a_, s); }

private:
    void launch(Args& a, cudaStream_t s) {  // cudaLaunchKernelEx: cooperative, capturable
        cudaLaunchConfig_t cfg{};
        cfg.gridDim = dim3(unsigned(grid_));
        cfg.blockDim = dim3(mega::kThreads);
        cfg.dynamicSmemBytes = std::size_t(smem_);
        cfg.stream = s;
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeCooperative;
        attr[0].val.cooperative = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        void* args[] = {&a};
        CS_CUDA_CHECK(cudaLaunchKernelExC(&cfg, kernel_, args));
    }

public:

    std::string detail() const override {
        std::string d = "megakernel: one cooperative launch of " + std::to_string(grid_) + " CTAs (" +
                        std::to_string(per_sm_) + " per SM) x " + std::to_string(mega::kThreads) +
                        " threads, mma.sync m16n8k16 " + (t_ == DType::f16 ? "f16" : "bf16") +
                        ", tiles 64x64, 4 cp.async stages of K 32; weights prefetched to L2; a grid barrier "
                        "between phases" +
                        s2d_note_;
        for (int i = 0; i < a_.layers; ++i) {
            const auto& sp = a_.l[i].split;
            d += "; layer " + std::to_string(i + 1) + ": " + std::to_string(sp.tiles()) + " tiles x " +
                 std::to_string(sp.splits) + " K parts";
        }
        return d;
    }
    std::string phases(cudaStream_t s) override {
        std::vector<std::string> names;
        for (int i = 0; i < a_.layers; ++i) {
            const std::string n = std::to_string(i + 1);
            if (a_.l[i].s2d_src) names.push_back("s2d" + n);
            names.push_back("conv" + n);
            if (a_.l[i].pooled) names.push_back("pool" + n);
        }
        Buffer st(MemKind::device, (names.size() + 1) * 8);
        CS_CUDA_CHECK(cudaMemsetAsync(st.get(), 0, st.bytes(), s));
        Args b = a_;
        b.stamps = st.as<unsigned long long>();
        launch(b, s);
        std::vector<unsigned long long> t(names.size() + 1);
        CS_CUDA_CHECK(cudaMemcpyAsync(t.data(), st.get(), st.bytes(), cudaMemcpyDeviceToHost, s));
        CS_CUDA_CHECK(cudaStreamSynchronize(s));
        std::string out = "phases by CTA 0's %globaltimer (us, each to the grid barrier after it; the last to CTA 0's end):";
        for (std::size_t i = 0; i < names.size(); ++i) {
            char buf[64];
            std::snprintf(buf, sizeof buf, " %s %.2f", names[i].c_str(), double(t[i + 1] - t[i]) * 1e-3);
            out += buf;
        }
        return out;
    }
    std::size_t workspace_bytes() const override {
        return ws_.bytes() + counters_.bytes() + s2d_in_.bytes() + s2d_w_.bytes();
    }

private:
    DType t_;
    void* kernel_ = nullptr;
    int smem_ = 0, per_sm_ = 1, grid_ = 0;
    Args a_;
    Buffer ws_, counters_, s2d_in_, s2d_w_;
    std::string s2d_note_;
};

}  // namespace

std::optional<std::string> mega_refusal(const std::vector<MegaLayer>& layers, DType t, Layout layout,
                                        const cudaDeviceProp& prop) {
    if (t != DType::f16 && t != DType::bf16) return std::string("the megakernel runs f16 and bf16 operands only");
    if (layout != Layout::nhwc) return std::string("the megakernel runs NHWC only");
    if (layers.empty() || layers.size() > std::size_t(kMegaMaxLayers))
        return "the megakernel walks 1 to " + std::to_string(kMegaMaxLayers) + " layers, not " +
               std::to_string(layers.size());
    if (prop.major < 8) return std::string("the megakernel needs sm_80 or later (mma.sync with bf16, cp.async)");
    if (!prop.cooperativeLaunch) return std::string("the device has no cooperative launch");
    for (const MegaLayer& m : layers)
        if (m.pool && ((m.H + 2 * m.pad - m.R) / m.stride + 1 < 3 || (m.W + 2 * m.pad - m.S) / m.stride + 1 < 3))
            return std::string("a pooled layer's output is smaller than the 3x3 window");
    return std::nullopt;
}

std::unique_ptr<ChainMegakernel> make_chain_megakernel(const std::vector<MegaLayer>& layers, std::int64_t N, DType t,
                                                       Layout layout, const cudaDeviceProp& prop,
                                                       const MegaTensors& tensors, int ctas_per_sm) {
    if (auto why = mega_refusal(layers, t, layout, prop)) throw Skip(*why);
    if (tensors.w.size() != layers.size() || tensors.bias.size() != layers.size() ||
        tensors.conv.size() != layers.size() || tensors.pooled.size() != layers.size() || !tensors.input)
        throw Error("megakernel: the tensors name " + std::to_string(tensors.w.size()) + " layers' weights for " +
                    std::to_string(layers.size()) + " layers (a bug)");
    return std::make_unique<Megakernel>(layers, N, t, prop, tensors, ctas_per_sm);
}

}  // namespace cs::gpu
