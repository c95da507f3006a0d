// The halo rung's s2d=loader geometry (halo_conv.cu): which run of the raw NHWC input a halo
// reads, and which raw element each (grid row, channel) of the halo is. Plain C++ callable on
// the host too: tests/test_halo_raw.cpp checks on the CPU that every element a halo's gather
// reads lies in the run its loader brings, against the space-to-depth map itself, and that
// the bound the plan checks holds for every halo.
//
// The grid rows are the positions q = (n Hp + Y) Wp + X of the rewritten image (Hp x Wp, C'
// channels); channel c' = (dy b + dx) C + c of row q is raw element (n, b Y + dy - pad,
// b X + dx - pad, c), zero outside the image and for c' >= C b b (channel padding).
// Consecutive grid rows read consecutive raw rows, across images too, so the raw rows of a
// halo's first to last grid row are one contiguous run of the input.
#pragma once

#include "space_to_depth.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define CS_HALO_HD __host__ __device__ __forceinline__
#else
#define CS_HALO_HD inline
#endif
#if defined(__CUDA_ARCH__)
#define CS_HALO_UNROLL _Pragma("unroll")
#else
#define CS_HALO_UNROLL
#endif

namespace cs::gpu::variants::hopper {

constexpr int kHRawBox = 256;    // raw elements a TMA box
constexpr int kHRawBoxes = 64;   // boxes a halo's run may take (the 32 KiB buffer of 2-byte elements)

struct RawGeom {
    int rows = 0;          // grid rows: N Hp Wp
    int HWp = 0, Wp = 0;   // the rewritten image's Hp Wp and Wp
    int C0 = 0, H0 = 0, W0 = 0;  // the raw NHWC input's C, H, W
    int b = 1, pad = 0;    // block factor, the layer's padding
};

// Raw elements [e0, e0 + kHRawBox nbox) of the input: the run a halo of `halo` grid rows from
// q0 reads (e0 rounded down to 16 bytes of 2-byte elements).
struct RawRun {
    int e0 = 0, nbox = 0;
};
CS_HALO_HD RawRun raw_run(const RawGeom& a, int q0, int halo) {
    const int qb = std::min(q0 + halo, a.rows) - 1;
    const int na = q0 / a.HWp, Ya = (q0 - na * a.HWp) / a.Wp;
    const int nb = qb / a.HWp, Yb = (qb - nb * a.HWp) / a.Wp;
    const int rowel = a.W0 * a.C0;
    const int ylo = std::min(std::max(0, a.b * Ya - a.pad), a.H0);
    const int yhi = std::max(0, std::min(a.H0, a.b * Yb + a.b - a.pad));
    const int es = (na * a.H0 + ylo) * rowel, ee = std::max(es, (nb * a.H0 + yhi) * rowel);
    RawRun r;
    r.e0 = es & ~7;
    r.nbox = (ee - r.e0 + kHRawBox - 1) / kHRawBox;
    return r;
}

// The raw element (flat NHWC index) channel c' of grid row q is, or -1 for a zero.
CS_HALO_HD std::int64_t raw_element(const RawGeom& a, int q, int cprime) {
    if (q < 0 || q >= a.rows || cprime >= a.C0 * a.b * a.b) return -1;
    const int n = q / a.HWp, rem = q - n * a.HWp, Y = rem / a.Wp, X = rem - Y * a.Wp;
    const s2d::Channel ch = s2d::channel(cprime, a.C0, a.b);
    const int y = a.b * Y + ch.dy - a.pad, x = a.b * X + ch.dx - a.pad;
    if (y < 0 || y >= a.H0 || x < 0 || x >= a.W0) return -1;
    return ((std::int64_t(n) * a.H0 + y) * a.W0 + x) * a.C0 + ch.c;
}

// An upper bound of e_end - e0 over every halo of `halo` rows: the grid rows a halo touches at
// most, b raw rows each, and the 16-byte rounding of e0.
inline std::int64_t raw_run_bound(const RawGeom& a, int halo) {
    const std::int64_t grid_rows = (a.Wp - 1 + halo - 1) / a.Wp + 1;
    return grid_rows * a.b * std::int64_t(a.W0) * a.C0 + 7;
}

// ---- The gather: a halo row's 16-byte pieces (one per 8-channel plane) from the raw run in
// shared memory (the run's element 0 is raw element e0). The gatherers take one grid row a
// thread, every plane of it, and walk the halo's rows 128 apart.
//
// The row path (RowGather<b, C>, for a block factor and channel count known at compile time,
// b C even): each of the block's b raw rows is one run of b C elements, read as b C / 2 + 1
// aligned words and funnel-shifted into b C / 2 pairs (a pair never crosses from one raw row
// to the next); runs outside the image are zeros and are not read, and every pair is masked by
// the row's columns (all ones inside the image: no divergent path at the borders). One row's
// setup serves all its planes: under a tenth of the instructions of an element gather. Every
// other layer takes the table path: its elements one by one through the channel table, with
// bounds.

// Channel c' of a grid row's block (s2d::channel): its raw row dy and its element dxc = dx C + c
// in that row (dy = -1: a padding channel, zero). The gatherers hold the table in shared memory.
struct TabEntry {
    int dy = -1, dxc = 0;
};
CS_HALO_HD TabEntry tab_entry(const RawGeom& a, int cprime) {
    TabEntry t;
    if (cprime < a.C0 * a.b * a.b) {
        const s2d::Channel ch = s2d::channel(cprime, a.C0, a.b);
        t.dy = ch.dy;
        t.dxc = ch.dx * a.C0 + ch.c;
    }
    return t;
}

// A grid row's block: the run offset of its origin (raw element (n, ys, xs, 0) less e0; only
// in-image elements are read from it), the origin's raw row and column, and whether the row
// is inside the tensor (q < rows: else zeros).
struct RowOrigin {
    int a = 0, ys = 0, xs = 0;
    bool in = false;
};
CS_HALO_HD RowOrigin row_origin(const RawGeom& g, int n, int Y, int X, bool in, int e0) {
    RowOrigin o;
    o.ys = g.b * Y - g.pad;
    o.xs = g.b * X - g.pad;
    o.a = (n * g.H0 + o.ys) * (g.W0 * g.C0) + o.xs * g.C0 - e0;
    o.in = in;
    return o;
}

// A gatherer's walk over the halo's rows, G at a time: grid row q = (n Hp + Y) Wp + X, one
// division at the start, then steps of G without one.
struct GridWalk {
    int n = 0, Y = 0, X = 0, Hp = 1;
    CS_HALO_HD GridWalk(const RawGeom& g, int q) {
        Hp = g.HWp / g.Wp;
        n = q / g.HWp;
        const int rem = q - n * g.HWp;
        Y = rem / g.Wp;
        X = rem - Y * g.Wp;
    }
    CS_HALO_HD void step(const RawGeom& g, int G) {
        X += G;
        while (X >= g.Wp) {
            X -= g.Wp;
            if (++Y == Hp) Y = 0, ++n;
        }
    }
};

// The 4-byte value at element e of the run (any parity) from the words holding it: elements
// e, e + 1 as the low and high half.
CS_HALO_HD std::uint32_t unaligned_pair(std::uint32_t lo, std::uint32_t hi, int e) {
#if defined(__CUDA_ARCH__)
    return __funnelshift_r(lo, hi, (e & 1) * 16);
#else
    return std::uint32_t(((std::uint64_t(hi) << 32) | lo) >> ((e & 1) * 16));
#endif
}

// Src: word(i), the run buffer's i-th 32-bit word; half(e), its element e; tab(c'), the
// channel table; zeros(), the index of kPairs + 1 zero words (a run outside the image reads
// them: one select instead of a zero and a predicate a word). Put: put(plane, w0, w1, w2, w3),
// a piece's four words (channel 8 plane + j at half j).
//
// The row path reads whole words around each run, so a block crossing the image's border reads
// up to (pad C) / 2 + 1 words before its run's first in-image element or kPairs after its last:
// outside the run, and where the run starts or ends its buffer, outside the buffer (the shared
// memory beside it: the ring before the first buffer, the table after the second). Those
// elements are masked: every element whose column lies outside the image is zeroed by the
// row's mask, so the words' contents never matter (tests/test_halo_raw.cpp fills them with
// garbage).
template <int kB, int kC>
struct RowGather {
    static constexpr int kPairs = kB * kC / 2;
    static_assert(kB * kC % 2 == 0, "a raw row's segment holds whole pairs");
    // One run of the row (raw row ys + dy) into pr[dy kPairs ..], masked by the row's columns.
    template <class Src, std::size_t kN>
    CS_HALO_HD static void run(const Src& src, const RawGeom& g, const RowOrigin& o, int dy,
                               const std::uint32_t (&mask)[kPairs], std::uint32_t (&pr)[kN]) {
        const int rowel = g.W0 * g.C0, y = o.ys + dy, e = o.a + dy * rowel;
        const bool ok = o.in && y >= 0 && y < g.H0;
        const int w0 = ok ? e >> 1 : src.zeros();  // e >> 1: floor, negative e too
        std::uint32_t w[kPairs + 1];
        CS_HALO_UNROLL
        for (int t = 0; t <= kPairs; ++t) w[t] = src.word(w0 + t);
        CS_HALO_UNROLL
        for (int j = 0; j < kPairs; ++j) pr[dy * kPairs + j] = unaligned_pair(w[j], w[j + 1], e) & mask[j];
    }
    template <int kCK, class Src, class Put>
    CS_HALO_HD static void row(const Src& src, const RawGeom& g, const RowOrigin& o, Put&& put) {
        static_assert(4 * kCK >= kB * kPairs, "the planes hold the block's channels");
        // The row's mask: pair j's elements are columns xe + 2j, xe + 2j + 1 of the raw row,
        // kept where inside [0, W C) (one unsigned compare each), the same for every run.
        const unsigned rowel = unsigned(g.W0 * g.C0);
        const int xe = o.xs * kC;
        std::uint32_t mask[kPairs];
        CS_HALO_UNROLL
        for (int j = 0; j < kPairs; ++j)
            mask[j] = (unsigned(xe + 2 * j) < rowel ? 0xffffu : 0u) | (unsigned(xe + 2 * j + 1) < rowel ? 0xffff0000u : 0u);
        std::uint32_t pr[4 * kCK];
        CS_HALO_UNROLL
        for (int dy = 0; dy < kB; ++dy) run(src, g, o, dy, mask, pr);
        CS_HALO_UNROLL
        for (int k = kB * kPairs; k < 4 * kCK; ++k) pr[k] = 0u;
        CS_HALO_UNROLL
        for (int p = 0; p < kCK; ++p) put(p, pr[4 * p], pr[4 * p + 1], pr[4 * p + 2], pr[4 * p + 3]);
    }
};

// The table path: one piece, element by element through the channel table, with bounds.
struct Piece {
    std::uint32_t w[4];
};
template <class Src>
CS_HALO_HD Piece gather_piece(const Src& src, const RawGeom& g, const RowOrigin& o, int plane) {
    Piece r;
    const int rowel = g.W0 * g.C0;
    CS_HALO_UNROLL
    for (int k = 0; k < 4; ++k) {
        std::uint32_t v = 0;
        CS_HALO_UNROLL
        for (int h = 0; h < 2; ++h) {
            const TabEntry t = src.tab(8 * plane + 2 * k + h);
            const int y = o.ys + t.dy, x = o.xs * g.C0 + t.dxc;
            const bool ok = o.in && t.dy >= 0 && y >= 0 && y < g.H0 && x >= 0 && x < rowel;
            if (ok) v |= std::uint32_t(src.half(o.a + t.dy * rowel + t.dxc)) << (16 * h);
        }
        r.w[k] = v;
    }
    return r;
}

}  // namespace cs::gpu::variants::hopper
