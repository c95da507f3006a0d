// The space-to-depth transforms of space_to_depth.hpp on the GPU, for any element of 2 or 4
// bytes (half, bfloat16, float: the transform copies bits) and either layout on each side.
//
// Input, "tiled" (the usual case): one block of 256 threads per rewritten row (n, Y), in
// three steps, each coalesced on the global side:
//   1. the b source rows the row needs (NCHW: b*C runs of W elements; NHWC: b runs of W*C)
//      go to shared memory in source order, in 16-byte pieces aligned as in global memory:
//      a run's interior moves by 16-byte loads and 16-byte shared stores, only its first
//      and last piece element by element (nothing outside the run is read, whatever the
//      input's alignment: the streams mode passes 2-byte aligned chunks). Every thread
//      issues up to 4 pieces' loads before it stores any.
//   2. a table per channel c' of the row: where its X = 0 sits in the tile, and the range
//      of X inside the image (rows outside the image: an empty range, so no loads).
//   3. the row is written in destination order: NHWC, one contiguous run of W'*C' elements,
//      each thread P consecutive channels of one pixel in one store (P = 16 bytes' worth
//      where C' allows: 8 halves or 4 floats for conv1's 48); NCHW, C' runs of W'
//      elements, a warp per run, one element per lane (the runs start at any element).
// Shared memory per block: C' * 16 bytes of table + the tile (b*C*W elements and a piece of
// slack per run): conv1 fp16 6.5 KB, fp32 12 KB, so 8 blocks of 256 threads fit an SM. Rows
// whose tile would pass 48 KB take the "gather" kernel: one thread per element through the
// host map (input_source), correct for any shape, slower.
// Weights: the same launch's last blocks, one thread per element of w' through weight_source
// (conv1: 96*48*3*3 = 41472 elements, 83 KB in fp16; the weights change between runs, so
// they are transformed inside every run).
//
// Bytes and the expected time, conv1 at N=128: 39.6 MB read + 39.9 MB written in fp16
// (79.5 MB; fp32 159 MB). At the ~4.0 TB/s a copy reaches on an H200 that is ~20 us (fp32
// ~40 us); on an H100 at ~2.9 TB/s ~27 us (fp32 ~55 us). The Hopper family's transform
// (hopper_core.cuh, 2-byte loads, one row per block without vector pieces) took 0.115 ms.
// Not measured yet.
#include "cuda_check.hpp"
#include "space_to_depth.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace cs::gpu::s2d {
namespace {

constexpr int kThreads = 256;
constexpr int kPiecesInFlight = 4;           // 16-byte loads a thread issues before storing
constexpr int kTileBudget = 48 * 1024;       // dynamic shared memory without an opt-in
constexpr int kWeightElemsPerThread = 4;

// The tile of one rewritten row, as step 1 lays it out.
struct Tile {
    int runs = 0;    // source runs: b*C rows of W (NCHW source), b rows of W*C (NHWC)
    int len = 0;     // elements per run
    int pieces = 0;  // 16-byte pieces a run can touch (its start aligned down)
    int pitch = 0;   // elements per run slot: pieces * V
    int table_bytes = 0;
    int bytes = 0;   // dynamic shared memory
};

Tile tile_of(const Geom& g, bool src_nchw, int eb) {
    const int V = 16 / eb;
    Tile t;
    t.runs = src_nchw ? g.b * g.C : g.b;
    t.len = src_nchw ? g.W : g.W * g.C;
    t.pieces = (t.len + V - 1 + V - 1) / V;
    t.pitch = t.pieces * V;
    t.table_bytes = g.Cp * 16;
    const long long bytes = t.table_bytes + (long long)t.runs * t.pitch * eb;
    t.bytes = bytes > kTileBudget ? -1 : int(bytes);
    return t;
}

// Element offset of the first element of run k of row (n, Y), or -1 when that source row is
// outside the image.
__device__ __forceinline__ std::int64_t run_start(const Geom& g, bool src_nchw, int n, int Y, int k) {
    const int dy = src_nchw ? k / g.C : k;
    const int c = src_nchw ? k - dy * g.C : 0;
    const int y = g.b * Y + dy - g.pad;
    if (y < 0 || y >= g.H) return -1;
    return src_nchw ? ((std::int64_t(n) * g.C + c) * g.H + y) * g.W : (std::int64_t(n) * g.H + y) * g.W * g.C;
}

template <class E>
__device__ __forceinline__ int phase_of(const E* p) {
    constexpr int V = 16 / int(sizeof(E));
    return int((reinterpret_cast<std::uintptr_t>(p) / sizeof(E)) & (V - 1));
}

template <class E>
union Piece {
    uint4 v;
    E e[16 / sizeof(E)];
};

// P consecutive elements stored as one access.
template <int Bytes>
struct VecOf;
template <>
struct VecOf<2> { using type = unsigned short; };
template <>
struct VecOf<4> { using type = unsigned int; };
template <>
struct VecOf<8> { using type = uint2; };
template <>
struct VecOf<16> { using type = uint4; };

template <class E, int P>
union Pack {
    typename VecOf<int(sizeof(E)) * P>::type v;
    E e[P];
};

// The weights' part of a launch: blocks from `first_block` on, one thread per w' element
// (layout of w: KCRS when kcrs, else KRSC).
template <class E>
__device__ void weights_part(const Geom& g, const E* __restrict__ w, E* __restrict__ w_out, bool kcrs,
                             int first_block) {
    const std::int64_t total = std::int64_t(g.M) * g.Cp * g.Rp * g.Sp;
    const std::int64_t stride = std::int64_t(gridDim.x - first_block) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x - first_block) * blockDim.x + threadIdx.x; i < total; i += stride) {
        std::int64_t q = i;
        int cp, rp, sp;
        if (kcrs) {
            sp = int(q % g.Sp), q /= g.Sp;
            rp = int(q % g.Rp), q /= g.Rp;
            cp = int(q % g.Cp), q /= g.Cp;
        } else {
            cp = int(q % g.Cp), q /= g.Cp;
            sp = int(q % g.Sp), q /= g.Sp;
            rp = int(q % g.Rp), q /= g.Rp;
        }
        const std::int64_t src = weight_source(g, kcrs, int(q), cp, rp, sp);
        w_out[i] = src >= 0 ? w[src] : E(0);
    }
}

template <class E, int P>
__global__ void __launch_bounds__(kThreads)
    tiled_kernel(const E* __restrict__ in, E* __restrict__ out, Geom g, Tile t, bool src_nchw, bool dst_nchw,
                 int rows, const E* __restrict__ w, E* __restrict__ w_out, bool w_kcrs) {
    if (int(blockIdx.x) >= rows) {
        weights_part(g, w, w_out, w_kcrs, rows);
        return;
    }
    constexpr int V = 16 / int(sizeof(E));
    extern __shared__ __align__(16) unsigned char smem[];
    int4* table = reinterpret_cast<int4*>(smem);  // per c': tile offset of X = 0, X range [lo, hi)
    E* tile = reinterpret_cast<E*>(smem + t.table_bytes);
    const int n = int(blockIdx.x) / g.Hp, Y = int(blockIdx.x) - n * g.Hp;
    const int tid = int(threadIdx.x);

    // 1. source runs -> tile[k * pitch + (element - aligned-down run start)].
    const int items = t.runs * t.pieces;
    for (int i0 = tid; i0 < items; i0 += kPiecesInFlight * kThreads) {
        Piece<E> pc[kPiecesInFlight];
        int dst[kPiecesInFlight];  // tile offset of the piece; -1: nothing
        int lo[kPiecesInFlight], hi[kPiecesInFlight];  // elements of the piece inside the run
#pragma unroll
        for (int u = 0; u < kPiecesInFlight; ++u) {
            dst[u] = -1;
            const int i = i0 + u * kThreads;
            if (i >= items) continue;
            const int k = i / t.pieces, v = i - k * t.pieces;
            const std::int64_t start = run_start(g, src_nchw, n, Y, k);
            if (start < 0) continue;
            const E* src = in + start;
            const int phase = phase_of(src);
            const int first = v * V - phase;  // run element of the piece's first slot
            if (first >= t.len) continue;
            lo[u] = max(0, -first), hi[u] = min(V, t.len - first);
            dst[u] = k * t.pitch + v * V;
            if (lo[u] == 0 && hi[u] == V) {
                pc[u].v = __ldg(reinterpret_cast<const uint4*>(src + first));
            } else {
#pragma unroll
                for (int j = 0; j < V; ++j)
                    if (j >= lo[u] && j < hi[u]) pc[u].e[j] = src[first + j];
            }
        }
#pragma unroll
        for (int u = 0; u < kPiecesInFlight; ++u) {
            if (dst[u] < 0) continue;
            if (lo[u] == 0 && hi[u] == V) {
                *reinterpret_cast<uint4*>(tile + dst[u]) = pc[u].v;
            } else {
#pragma unroll
                for (int j = 0; j < V; ++j)
                    if (j >= lo[u] && j < hi[u]) tile[dst[u] + j] = pc[u].e[j];
            }
        }
    }
    // 2. the table.
    for (int cp = tid; cp < g.Cp; cp += kThreads) {
        const int q = cp / g.C, c = cp - q * g.C, dy = q / g.b, dx = q - dy * g.b;
        const int k = src_nchw ? dy * g.C + c : dy;
        const std::int64_t start = run_start(g, src_nchw, n, Y, k);
        const int x0 = dx - g.pad;  // source column of X = 0
        int4 e{0, 0, 0, 0};
        if (start >= 0) {
            e.x = k * t.pitch + phase_of(in + start) + (src_nchw ? x0 : x0 * g.C + c);
            e.y = x0 >= 0 ? 0 : (-x0 + g.b - 1) / g.b;
            e.z = g.W - 1 - x0 >= 0 ? min(g.Wp, (g.W - 1 - x0) / g.b + 1) : 0;
            e.z = max(e.z, e.y);
        }
        table[cp] = e;
    }
    __syncthreads();

    // 3. the row in destination order.
    const int xstep = src_nchw ? g.b : g.b * g.C;  // tile offset of X + 1 minus X's
    if (dst_nchw) {
        const int warp = tid >> 5, lane = tid & 31;
        for (int cp = warp; cp < g.Cp; cp += kThreads / 32) {
            const int4 e = table[cp];
            E* o = out + ((std::int64_t(n) * g.Cp + cp) * g.Hp + Y) * g.Wp;
            for (int X = lane; X < g.Wp; X += 32) o[X] = (X >= e.y && X < e.z) ? tile[e.x + X * xstep] : E(0);
        }
    } else {
        E* o = out + (std::int64_t(n) * g.Hp + Y) * g.Wp * g.Cp;
        const int groups = g.Wp * g.Cp / P;
        for (int i = tid; i < groups; i += kThreads) {
            const int j0 = i * P, X = j0 / g.Cp, c0 = j0 - X * g.Cp;
            Pack<E, P> pk;
#pragma unroll
            for (int u = 0; u < P; ++u) {
                const int4 e = table[c0 + u];
                pk.e[u] = (X >= e.y && X < e.z) ? tile[e.x + X * xstep] : E(0);
            }
            reinterpret_cast<decltype(pk.v)*>(o)[i] = pk.v;
        }
    }
}

// One thread per element of in' (destination order) through the host map.
template <class E>
__global__ void __launch_bounds__(kThreads)
    gather_kernel(const E* __restrict__ in, E* __restrict__ out, Geom g, bool src_nchw, bool dst_nchw,
                  std::int64_t n_img, int blocks, const E* __restrict__ w, E* __restrict__ w_out, bool w_kcrs) {
    if (int(blockIdx.x) >= blocks) {
        weights_part(g, w, w_out, w_kcrs, blocks);
        return;
    }
    const std::int64_t total = n_img * g.Cp * g.Hp * g.Wp;
    const std::int64_t stride = std::int64_t(blocks) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
        std::int64_t q = i;
        int cp, Y, X;
        if (dst_nchw) {
            X = int(q % g.Wp), q /= g.Wp;
            Y = int(q % g.Hp), q /= g.Hp;
            cp = int(q % g.Cp), q /= g.Cp;
        } else {
            cp = int(q % g.Cp), q /= g.Cp;
            X = int(q % g.Wp), q /= g.Wp;
            Y = int(q % g.Hp), q /= g.Hp;
        }
        const std::int64_t src = input_source(g, src_nchw, q, cp, Y, X);
        out[i] = src >= 0 ? in[src] : E(0);
    }
}

// The largest P (elements per store, at most 16 bytes) that divides C'.
int pack_of(const Geom& g, int eb) {
    int p = 16 / eb;
    while (p > 1 && g.Cp % p != 0) p /= 2;
    return p;
}

template <class E>
void launch_t(const Geom& g, const E* in, bool src_nchw, E* out, bool dst_nchw, std::int64_t n, const E* w,
              bool w_kcrs, E* w_out, cudaStream_t stream) {
    const std::int64_t wtotal = w ? std::int64_t(g.M) * g.Cp * g.Rp * g.Sp : 0;
    const int wblocks = int((wtotal + std::int64_t(kThreads) * kWeightElemsPerThread - 1) /
                            (std::int64_t(kThreads) * kWeightElemsPerThread));
    const Tile t = tile_of(g, src_nchw, int(sizeof(E)));
    if (t.bytes >= 0) {
        const std::int64_t rows = n * g.Hp;
        if (rows + wblocks == 0) return;
        if (rows + wblocks > 0x7fffffff) throw std::runtime_error("space-to-depth: too many rows for one launch");
        const unsigned grid = unsigned(rows + wblocks);
        const int P = dst_nchw ? 1 : pack_of(g, int(sizeof(E)));
        auto go = [&](auto kernel) {
            kernel<<<grid, kThreads, std::size_t(t.bytes), stream>>>(in, out, g, t, src_nchw, dst_nchw, int(rows), w,
                                                                     w_out, w_kcrs);
        };
        if constexpr (sizeof(E) == 2) {
            if (P == 8) go(tiled_kernel<E, 8>);
            else if (P == 4) go(tiled_kernel<E, 4>);
            else if (P == 2) go(tiled_kernel<E, 2>);
            else go(tiled_kernel<E, 1>);
        } else {
            if (P == 4) go(tiled_kernel<E, 4>);
            else if (P == 2) go(tiled_kernel<E, 2>);
            else go(tiled_kernel<E, 1>);
        }
    } else {
        const std::int64_t total = n * g.Cp * g.Hp * g.Wp;
        const int blocks = int(std::min<std::int64_t>((total + kThreads - 1) / kThreads, 65536));
        if (blocks + wblocks == 0) return;
        gather_kernel<E><<<unsigned(blocks + wblocks), kThreads, 0, stream>>>(in, out, g, src_nchw, dst_nchw, n,
                                                                              blocks, w, w_out, w_kcrs);
    }
    CS_CUDA_CHECK_LAUNCH();
}

}  // namespace

const char* input_kernel_name(const Geom& g, bool src_nchw, int elem_bytes) {
    return tile_of(g, src_nchw, elem_bytes).bytes >= 0 ? "tiled" : "gather";
}

void launch(const Geom& g, int elem_bytes, const void* in, bool src_nchw, void* out, bool dst_nchw, std::int64_t n,
            const void* w, bool w_kcrs, void* w_out, cudaStream_t stream) {
    if (reinterpret_cast<std::uintptr_t>(out) % 16 != 0 || (w && reinterpret_cast<std::uintptr_t>(w_out) % 16 != 0))
        throw std::logic_error("space-to-depth: the transformed tensors must be 16-byte aligned");
    if (elem_bytes == 2)
        launch_t(g, static_cast<const unsigned short*>(in), src_nchw, static_cast<unsigned short*>(out), dst_nchw, n,
                 static_cast<const unsigned short*>(w), w_kcrs, static_cast<unsigned short*>(w_out), stream);
    else if (elem_bytes == 4)
        launch_t(g, static_cast<const unsigned int*>(in), src_nchw, static_cast<unsigned int*>(out), dst_nchw, n,
                 static_cast<const unsigned int*>(w), w_kcrs, static_cast<unsigned int*>(w_out), stream);
    else
        throw std::logic_error("space-to-depth: elements of 2 or 4 bytes only");
}

}  // namespace cs::gpu::s2d
