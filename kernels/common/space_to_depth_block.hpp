// The steps of space_to_depth.cu's kernels as __host__ __device__ code with explicit thread
// ids, so that a host program can emulate a block (tests/test_space_to_depth.cpp runs every
// thread of a step before the next, as __syncthreads orders them). On the host a 16-byte
// access checks its alignment (a misaligned one on the GPU is a fault) and counts a
// violation in Block::misaligned instead.
#pragma once

#include "space_to_depth.hpp"

#include <vector_types.h>

#include <cstdint>
#include <cstring>

#if defined(__CUDA_ARCH__)
#define CS_S2D_UNROLL _Pragma("unroll")
#else
#define CS_S2D_UNROLL
#endif

namespace cs::gpu::s2d {

constexpr int kThreads = 256;
constexpr int kPiecesInFlight = 4;      // 16-byte loads a thread issues before it stores any
constexpr int kTileBudget = 48 * 1024;  // dynamic shared memory without an opt-in

// The tile of one rewritten row (n, Y), as load() lays it out.
struct Tile {
    int runs = 0;         // source runs: b*C rows of W (NCHW source), b rows of W*C (NHWC)
    int len = 0;          // elements per run
    int pieces = 0;       // 16-byte pieces a run can touch (its start aligned down)
    int pitch = 0;        // elements per run slot: pieces * V
    int table_bytes = 0;  // C' entries of 16 bytes
    int bytes = 0;        // dynamic shared memory; -1: past kTileBudget (the gather kernel runs)
};

inline Tile tile_of(const Geom& g, bool src_nchw, int eb) {
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

// The largest P (elements per store, at most 16 bytes) that divides C': an NHWC row's
// pixels then start at multiples of P elements.
inline int pack_of(const Geom& g, int eb) {
    int p = 16 / eb;
    while (p > 1 && g.Cp % p != 0) p /= 2;
    return p;
}

// P consecutive elements as one access.
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

// E: the element's bits (unsigned short for half and bfloat16, unsigned int for float).
template <class E>
struct Block {
    static constexpr int V = 16 / int(sizeof(E));  // elements per 16-byte piece

    // Host emulation: vector accesses at misaligned addresses; reads outside [lo, hi) when set.
    static inline int misaligned = 0, outside = 0;
    static inline const E *bound_lo = nullptr, *bound_hi = nullptr;

    template <class T>
    CS_S2D_HD static bool aligned(const T* p, int bytes) {
#if defined(__CUDA_ARCH__)
        (void)p, (void)bytes;
        return true;
#else
        const bool ok = reinterpret_cast<std::uintptr_t>(p) % std::uintptr_t(bytes) == 0;
        misaligned += !ok;
        return ok;
#endif
    }
    CS_S2D_HD static uint4 load16(const E* p) {
#if defined(__CUDA_ARCH__)
        return __ldg(reinterpret_cast<const uint4*>(p));
#else
        uint4 v{0, 0, 0, 0};
        inside(p), inside(p + V - 1);
        if (aligned(p, 16)) std::memcpy(&v, p, 16);
        return v;
#endif
    }
    CS_S2D_HD static E load1(const E* p) {
#if !defined(__CUDA_ARCH__)
        inside(p);
#endif
        return *p;
    }
#if !defined(__CUDA_ARCH__)
    static void inside(const E* p) { outside += bound_lo && (p < bound_lo || p >= bound_hi); }
#endif
    template <class T>
    CS_S2D_HD static void store(T* p, const T& v) {
        if (aligned(p, int(sizeof(T)))) *p = v;
    }

    union Piece {
        uint4 v;
        E e[16 / sizeof(E)];
    };

    // Element offset of the first element of run k of row (n, Y), -1 when that source row
    // is outside the image.
    CS_S2D_HD static std::int64_t run_start(const Geom& g, bool src_nchw, int n, int Y, int k) {
        const int dy = src_nchw ? k / g.C : k;
        const int c = src_nchw ? k - dy * g.C : 0;
        const int y = g.b * Y + dy - g.pad;
        if (y < 0 || y >= g.H) return -1;
        return src_nchw ? ((std::int64_t(n) * g.C + c) * g.H + y) * g.W : (std::int64_t(n) * g.H + y) * g.W * g.C;
    }
    // The element position of p within its 16-byte piece.
    CS_S2D_HD static int phase_of(const E* p) { return int((reinterpret_cast<std::uintptr_t>(p) / sizeof(E)) & (V - 1)); }

    // Step 1, thread tid of nthreads: the source runs of row (n, Y) into
    // tile[k * pitch + (element - the run's start aligned down to 16 bytes)].
    CS_S2D_HD static void load(const E* __restrict__ in, E* tile, const Geom& g, const Tile& t, bool src_nchw, int n,
                               int Y, int tid, int nthreads) {
        const int items = t.runs * t.pieces;
        for (int i0 = tid; i0 < items; i0 += kPiecesInFlight * nthreads) {
            Piece pc[kPiecesInFlight];
            int dst[kPiecesInFlight];  // tile offset of the piece; -1: nothing
            int lo[kPiecesInFlight], hi[kPiecesInFlight];  // its elements inside the run
CS_S2D_UNROLL
            for (int u = 0; u < kPiecesInFlight; ++u) {
                dst[u] = -1, lo[u] = 0, hi[u] = 0;
                const int i = i0 + u * nthreads;
                if (i >= items) continue;
                const int k = i / t.pieces, v = i - k * t.pieces;
                const std::int64_t start = run_start(g, src_nchw, n, Y, k);
                if (start < 0) continue;
                const E* src = in + start;
                const int first = v * V - phase_of(src);  // run element of the piece's first slot
                if (first >= t.len) continue;
                lo[u] = first < 0 ? -first : 0;
                hi[u] = t.len - first < V ? t.len - first : V;
                dst[u] = k * t.pitch + v * V;
                if (lo[u] == 0 && hi[u] == V) {
                    pc[u].v = load16(src + first);
                } else {
CS_S2D_UNROLL
                    for (int j = 0; j < V; ++j)
                        if (j >= lo[u] && j < hi[u]) pc[u].e[j] = load1(src + first + j);
                }
            }
CS_S2D_UNROLL
            for (int u = 0; u < kPiecesInFlight; ++u) {
                if (dst[u] < 0) continue;
                if (lo[u] == 0 && hi[u] == V) {
                    store(reinterpret_cast<uint4*>(tile + dst[u]), pc[u].v);
                } else {
CS_S2D_UNROLL
                    for (int j = 0; j < V; ++j)
                        if (j >= lo[u] && j < hi[u]) tile[dst[u] + j] = pc[u].e[j];
                }
            }
        }
    }

    // Step 2: per channel c' of row (n, Y), the tile offset of X = 0 (x) and the range
    // [y, z) of X inside the image (empty where the source row is outside).
    CS_S2D_HD static void table(const E* in, int4* table, const Geom& g, const Tile& t, bool src_nchw, int n, int Y,
                                int tid, int nthreads) {
        for (int cp = tid; cp < g.Cp; cp += nthreads) {
            const auto [dy, dx, c] = channel(cp, g.C, g.b);
            const int k = src_nchw ? dy * g.C + c : dy;
            const std::int64_t start = run_start(g, src_nchw, n, Y, k);
            const int x0 = dx - g.pad;  // source column of X = 0
            int4 e{0, 0, 0, 0};
            if (start >= 0) {
                e.x = k * t.pitch + phase_of(in + start) + (src_nchw ? x0 : x0 * g.C + c);
                e.y = x0 >= 0 ? 0 : (-x0 + g.b - 1) / g.b;
                const int last = (g.W - 1 - x0) / g.b + 1;  // X past the last column inside
                e.z = g.W - 1 - x0 < 0 ? 0 : (last < g.Wp ? last : g.Wp);
                if (e.z < e.y) e.z = e.y;
            }
            table[cp] = e;
        }
    }

    // Step 3: row (n, Y) of in' in destination order. NCHW: a warp per channel run, a lane per
    // element; NHWC: the row's W'*C' contiguous elements, P consecutive channels per store
    // (a thread on one group of channels over the pixels, where C'/P <= nthreads).
    template <int P>
    CS_S2D_HD static void write(const E* tile, const int4* table, E* __restrict__ out, const Geom& g, bool src_nchw,
                                bool dst_nchw, int n, int Y, int tid, int nthreads) {
        const int xstep = src_nchw ? g.b : g.b * g.C;  // tile offset of X + 1 minus X's
        if (dst_nchw) {
            const int warp = tid >> 5, lane = tid & 31;
            for (int cp = warp; cp < g.Cp; cp += nthreads >> 5) {
                const int4 e = table[cp];
                E* o = out + ((std::int64_t(n) * g.Cp + cp) * g.Hp + Y) * g.Wp;
                for (int X = lane; X < g.Wp; X += 32) o[X] = (X >= e.y && X < e.z) ? tile[e.x + X * xstep] : E(0);
            }
        } else {
            E* o = out + (std::int64_t(n) * g.Hp + Y) * g.Wp * g.Cp;
            const int G = g.Cp / P;  // stores per pixel
            if (G <= nthreads) {
                // A thread keeps one group of P channels (their table entries in registers)
                // and walks the pixels: `active` threads, a multiple of G.
                const int active = nthreads / G * G;
                if (tid >= active) return;
                const int grp = tid % G;
                int base[P], lo[P], hi[P];
CS_S2D_UNROLL
                for (int u = 0; u < P; ++u) {
                    const int4 e = table[grp * P + u];
                    base[u] = e.x, lo[u] = e.y, hi[u] = e.z;
                }
                for (int X = tid / G; X < g.Wp; X += active / G) {
                    Pack<E, P> pk;
CS_S2D_UNROLL
                    for (int u = 0; u < P; ++u)
                        pk.e[u] = (X >= lo[u] && X < hi[u]) ? tile[base[u] + X * xstep] : E(0);
                    store(reinterpret_cast<decltype(pk.v)*>(o) + (X * G + grp), pk.v);
                }
                return;
            }
            const int groups = g.Wp * G;
            for (int i = tid; i < groups; i += nthreads) {
                const int j0 = i * P, X = j0 / g.Cp, c0 = j0 - X * g.Cp;
                Pack<E, P> pk;
CS_S2D_UNROLL
                for (int u = 0; u < P; ++u) {
                    const int4 e = table[c0 + u];
                    pk.e[u] = (X >= e.y && X < e.z) ? tile[e.x + X * xstep] : E(0);
                }
                store(reinterpret_cast<decltype(pk.v)*>(o) + i, pk.v);
            }
        }
    }

    // The gather kernel's element i of in' (destination order): its value.
    CS_S2D_HD static E gather(const E* __restrict__ in, const Geom& g, bool src_nchw, bool dst_nchw, std::int64_t i) {
        int cp, Y, X;
        if (dst_nchw) {
            X = int(i % g.Wp), i /= g.Wp;
            Y = int(i % g.Hp), i /= g.Hp;
            cp = int(i % g.Cp), i /= g.Cp;
        } else {
            cp = int(i % g.Cp), i /= g.Cp;
            X = int(i % g.Wp), i /= g.Wp;
            Y = int(i % g.Hp), i /= g.Hp;
        }
        const std::int64_t src = input_source(g, src_nchw, i, cp, Y, X);
        return src >= 0 ? in[src] : E(0);
    }

    // Element i of w' (w's layout: KCRS when kcrs, else KRSC): its value.
    CS_S2D_HD static E weight(const E* __restrict__ w, const Geom& g, bool kcrs, std::int64_t i) {
        int cp, rp, sp;
        if (kcrs) {
            sp = int(i % g.Sp), i /= g.Sp;
            rp = int(i % g.Rp), i /= g.Rp;
            cp = int(i % g.Cp), i /= g.Cp;
        } else {
            cp = int(i % g.Cp), i /= g.Cp;
            sp = int(i % g.Sp), i /= g.Sp;
            rp = int(i % g.Rp), i /= g.Rp;
        }
        const std::int64_t src = weight_source(g, kcrs, int(i), cp, rp, sp);
        return src >= 0 ? w[src] : E(0);
    }
};

}  // namespace cs::gpu::s2d
