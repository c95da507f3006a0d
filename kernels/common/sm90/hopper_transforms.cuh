// The Hopper family (hopper_core.cuh): the transforms that run before a rung's GEMM (NCHW to
// NHWC, channel padding, space-to-depth of the input and the weights, with the operand type's
// rounding or split applied), and their launchers.
#pragma once

#include "cuda_check.hpp"
#include "geometry.hpp"
#include "hopper_elems.cuh"
#include "range_scale.hpp"
#include "s2d_vec.cuh"
#include "space_to_depth.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace cs::gpu::variants::hopper {

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

// The tap packing (Setup::pack, PackGeom: the map in geometry.hpp).
// The input (prep_pack_input_kernel): one thread per (pixel, 8 packed elements),
// the pixel decoded once in 32-bit arithmetic, each element's tap (dy, dx) and source offset
// from a per-block table of the Kp elements, one 16-byte store per 8 (two for fp32). The first
// cut, one thread per element with 64-bit divisions (prep_pack_kernel below, which the weights
// and any other Op still take), was the longest kernel of VGG's conv1_1 row, busy with its
// integer arithmetic rather than DRAM (the profile in results/h200/networks/pack_vgg16_n32.log).
struct PackTable {
    int dy[kPackMaxK], dx[kPackMaxK];
    std::int64_t off[kPackMaxK];  // source offset from (e * stride, f * stride), tap (pad, pad)'s pixel
};
template <class T, class Op, class TW>
__global__ void __launch_bounds__(256)
    prep_pack_input_kernel(const T* __restrict__ in, TW* __restrict__ out, const PackGeom g, std::int64_t total) {
    grid_launch_dependents();  // a GEMM launched as its programmatic dependent may start (HopperPlan)
    __shared__ PackTable tab;
    for (int k = int(threadIdx.x); k < g.Kp; k += int(blockDim.x)) {
        if (k < g.R * g.S * g.C) {
            const PackTap t = pack_tap(g, k);
            const int dy = t.r - g.pad, dx = t.s - g.pad;
            tab.dy[k] = dy, tab.dx[k] = dx;
            tab.off[k] = g.src_nchw ? std::int64_t(t.c) * g.H * g.W + std::int64_t(dy) * g.W + dx
                                    : (std::int64_t(dy) * g.W + dx) * g.C + t.c;
        } else {
            tab.dy[k] = -(1 << 24), tab.dx[k] = 0, tab.off[k] = 0;  // outside every image: zero
        }
    }
    __syncthreads();
    const std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int groups = g.Kp / 8, grp = int(idx % groups), pix = int(idx / groups);
    const int f = pix % g.F, q = pix / g.F, e = q % g.E, n = q / g.E;
    const int y0 = e * g.stride, x0 = f * g.stride;  // tap (pad, pad)'s source pixel
    const std::int64_t base = g.src_nchw ? (std::int64_t(n) * g.C * g.H + y0) * g.W + x0
                                         : ((std::int64_t(n) * g.H + y0) * g.W + x0) * g.C;
    constexpr int kQ = int(8 * sizeof(TW) / 16);  // 16-byte stores per 8 elements
    union {
        TW e[8];
        uint4 q[kQ];
    } v;
CS_HOPPER_UNROLL
    for (int j = 0; j < 8; ++j) {
        const int k = grp * 8 + j, y = y0 + tab.dy[k], x = x0 + tab.dx[k];
        v.e[j] = (unsigned(y) < unsigned(g.H) && unsigned(x) < unsigned(g.W)) ? Op::op(in[base + tab.off[k]])
                                                                                : Elem<TW>::from(0.0f);
    }
    uint4* dst = reinterpret_cast<uint4*>(out + idx * 8);
CS_HOPPER_UNROLL
    for (int j = 0; j < kQ; ++j) dst[j] = v.q[j];
}

// The input by staged rows (pack_stage_* in geometry.hpp): one block per output row (n, e).
// Its R source rows of every channel (R*W*C elements) are read once, coalesced and with several
// loads in flight a thread, into shared memory (zeros outside the image), then each thread
// writes (pixel, 8 packed elements) with one 16-byte store per 8 (two for fp32), the values
// from shared memory. The kernel above
// reads the source by one 2- or 4-byte load per packed element: on ResNet's stem (147
// elements a row) it was the row's longest kernel (results/h200/networks/, the profile).
template <class T, class Op, class TW>
__global__ void __launch_bounds__(256)
    prep_pack_rows_kernel(const T* __restrict__ in, TW* __restrict__ out, const PackGeom g) {
    grid_launch_dependents();  // a GEMM launched as its programmatic dependent may start (HopperPlan)
    extern __shared__ __align__(16) unsigned char pack_stage_smem[];
    TW* st = reinterpret_cast<TW*>(pack_stage_smem);
    __shared__ int tdx[kPackMaxK], toff[kPackMaxK];
    const int tid = int(threadIdx.x), nt = int(blockDim.x);
    const int row = int(blockIdx.x), e = row % g.E, n = row / g.E;
    for (int k = tid; k < g.Kp; k += nt) {
        if (k < g.R * g.S * g.C) {
            const PackStageTap t = pack_stage_tap(g, k);
            tdx[k] = t.dx, toff[k] = t.off;
        } else {
            tdx[k] = -(1 << 24), toff[k] = 0;  // past R*S*C: outside every image, zero
        }
    }
    // The staged rows inside the image, [r0, r1), are contiguous pieces of the source: all of
    // them in NHWC, one per channel in NCHW. They are copied by 16-byte vectors where rows are
    // whole vectors (else element by element), kBatch loads in flight a thread before any
    // store; the rows outside the image are zeros.
    constexpr int kV = 16 / int(sizeof(T)), kBatch = 4;
    const int y0 = e * g.stride - g.pad;
    const int r0 = max(0, -y0), r1 = min(g.R, g.H - y0);
    const int run = g.src_nchw ? g.W : g.W * g.C;         // elements of one staged row
    const int segs = g.src_nchw ? g.C : 1, seg = g.R * run;  // pieces, staged elements a piece
    const int len = max(0, r1 - r0) * run;                  // source elements a piece
    const auto src_of = [&](int p) {
        return in + (g.src_nchw ? ((std::int64_t(n) * g.C + p) * g.H + y0 + r0) * g.W
                                : (std::int64_t(n) * g.H + y0 + r0) * run);
    };
    const auto dst_of = [&](int p) { return st + p * seg + r0 * run; };
    if (r0 > 0 || r1 < g.R)
        for (int i = tid; i < pack_stage_elems(g); i += nt) {
            const int r = (i % seg) / run;
            if (r < r0 || r >= r1) st[i] = Elem<TW>::from(0.0f);
        }
    if (run % kV == 0 && (reinterpret_cast<std::uintptr_t>(in) & 15) == 0) {
        const int nv = len / kV, total = segs * nv;
        for (int v0 = tid; v0 < total; v0 += kBatch * nt) {
            union {
                uint4 q;
                T e[kV];
            } b[kBatch];
CS_HOPPER_UNROLL
            for (int u = 0; u < kBatch; ++u) {
                const int v = v0 + u * nt, p = v / max(nv, 1);
                if (v < total) b[u].q = __ldg(reinterpret_cast<const uint4*>(src_of(p)) + (v - p * nv));
            }
CS_HOPPER_UNROLL
            for (int u = 0; u < kBatch; ++u) {
                const int v = v0 + u * nt, p = v / max(nv, 1);
                if (v >= total) continue;
CS_HOPPER_UNROLL
                for (int t = 0; t < kV; ++t) b[u].e[t] = Op::op(b[u].e[t]);
                *reinterpret_cast<uint4*>(dst_of(p) + (v - p * nv) * kV) = b[u].q;
            }
        }
    } else {
        const int total = segs * len;
        for (int i0 = tid; i0 < total; i0 += kBatch * nt) {
            T b[kBatch];
CS_HOPPER_UNROLL
            for (int u = 0; u < kBatch; ++u) {
                const int i = i0 + u * nt, p = i / max(len, 1);
                if (i < total) b[u] = src_of(p)[i - p * len];
            }
CS_HOPPER_UNROLL
            for (int u = 0; u < kBatch; ++u) {
                const int i = i0 + u * nt, p = i / max(len, 1);
                if (i < total) dst_of(p)[i - p * len] = Op::op(b[u]);
            }
        }
    }
    __syncthreads();
    const int groups = g.Kp / 8, step = g.stride * pack_stage_step(g);
    TW* orow = out + std::int64_t(row) * g.F * g.Kp;
    constexpr int kQ = int(8 * sizeof(TW) / 16);  // 16-byte stores per 8 elements
    for (int it = tid; it < g.F * groups; it += nt) {
        const int f = it / groups, k0 = (it - f * groups) * 8, xs = f * g.stride, base = f * step;
        union {
            TW e[8];
            uint4 q[kQ];
        } v;
CS_HOPPER_UNROLL
        for (int j = 0; j < 8; ++j)
            v.e[j] = unsigned(xs + tdx[k0 + j]) < unsigned(g.W) ? st[toff[k0 + j] + base] : Elem<TW>::from(0.0f);
        uint4* dst = reinterpret_cast<uint4*>(orow + std::int64_t(it) * 8);  // f * Kp + k0
CS_HOPPER_UNROLL
        for (int j = 0; j < kQ; ++j) dst[j] = v.q[j];
    }
}
// Its shared memory: the staged rows (pack_stage_elems), where they fit without an opt-in.
template <class TW>
inline std::size_t pack_rows_smem(const PackGeom& g) {
    return std::size_t(pack_stage_elems(g)) * sizeof(TW);
}
constexpr std::size_t kPackRowsSmemMax = 48 * 1024;

// The weights, and any Op the input kernel does not take: one thread per packed element.
// kIn: the input (pixels' rows), else the weights (filters' rows). total: rows x Kp.
template <class T, class Op, class TW = T, bool kIn = true>
__global__ void prep_pack_kernel(const T* __restrict__ in, TW* __restrict__ out, const PackGeom g, std::int64_t total,
                                 const RangeScale* rs) {
    grid_launch_dependents();  // a GEMM launched as its programmatic dependent may start (HopperPlan)
    const std::int64_t idx = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int k = int(idx % g.Kp);
    const std::int64_t row = idx / g.Kp;
    std::int64_t src;
    if constexpr (kIn) {
        const int f = int(row % g.F);
        const std::int64_t q = row / g.F;
        src = pack_source(g, int(q / g.E), int(q % g.E), f, k);
    } else {
        src = pack_weight_source(g, int(row), k);
    }
    const T v = src < 0 ? Elem<T>::from(0.0f) : in[src];
    Op::put(out + (idx - k) * Op::kParts, k, g.Kp, v, load_split_scale(Op::kScaled ? rs : nullptr, kIn));
}

template <class T, class Op, class TW, bool kIn>
inline void launch_prep_pack(const PackGeom& g, const T* in, TW* out, std::int64_t rows, cudaStream_t stream,
                             const RangeScale* rs) {
    if constexpr (kIn && Op::kParts == 1 && !Op::kScaled && std::is_same_v<T, TW>) {
        if (g.Kp % 8 == 0 && pack_rows_smem<TW>(g) <= kPackRowsSmemMax && rows % g.F == 0) {
            const std::size_t smem = pack_rows_smem<TW>(g);
            prep_pack_rows_kernel<T, Op, TW><<<unsigned(rows / g.F), 256, smem, stream>>>(in, out, g);
            CS_CUDA_CHECK_LAUNCH();
            return;
        }
        if (g.Kp % 8 == 0) {
            const std::int64_t total = rows * (g.Kp / 8);
            prep_pack_input_kernel<T, Op, TW><<<unsigned((total + 255) / 256), 256, 0, stream>>>(in, out, g, total);
            CS_CUDA_CHECK_LAUNCH();
            return;
        }
    }
    const std::int64_t total = rows * g.Kp;
    prep_pack_kernel<T, Op, TW, kIn><<<unsigned((total + 255) / 256), 256, 0, stream>>>(in, out, g, total, rs);
    CS_CUDA_CHECK_LAUNCH();
}

// Op: OperandOf<T> (one block of channels), or Split3<true> / Split3<false> (3 blocks).
// T: the problem's type (what the transforms read); TW: the operands' (what they write).
// rs: the split's scale (range_scale.hpp), null for the unsplit operands.
template <class T, class Op = OperandOf<T>, class TW = T>
inline void launch_prep_input(const Setup& u, const T* in, TW* out, std::int64_t n, cudaStream_t stream,
                              const RangeScale* rs = nullptr) {
    if (u.pack) return launch_prep_pack<T, Op, TW, true>(u.pk, in, out, n * u.g.EF, stream, rs);
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
    if (u.pack) return launch_prep_pack<T, Op, TW, false>(u.pk, w, out, u.s.M, stream, rs);
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

}  // namespace cs::gpu::variants::hopper
