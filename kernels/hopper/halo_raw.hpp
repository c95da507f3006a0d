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

#include <algorithm>
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
    const int blk = cprime / a.C0, c = cprime - blk * a.C0, dy = blk / a.b, dx = blk - dy * a.b;
    const int y = a.b * Y + dy - a.pad, x = a.b * X + dx - a.pad;
    if (y < 0 || y >= a.H0 || x < 0 || x >= a.W0) return -1;
    return ((std::int64_t(n) * a.H0 + y) * a.W0 + x) * a.C0 + c;
}

// An upper bound of e_end - e0 over every halo of `halo` rows: the grid rows a halo touches at
// most, b raw rows each, and the 16-byte rounding of e0.
inline std::int64_t raw_run_bound(const RawGeom& a, int halo) {
    const std::int64_t grid_rows = (a.Wp - 1 + halo - 1) / a.Wp + 1;
    return grid_rows * a.b * std::int64_t(a.W0) * a.C0 + 7;
}

// ---- The gather: a halo row's 16-byte piece of one 8-channel plane from the raw run in
// shared memory (the run's element 0 is raw element e0). The gatherers keep one plane a thread
// and walk the halo's rows, so a plane's per-channel offsets are the thread's registers.
//
// The pair path: where a row's block lies inside the image and the block's row segment, b C
// elements, is even, the plane's channels (2k, 2k+1) are two consecutive raw elements of one
// raw row (a pair never crosses from one segment, dy, to the next), so each 32-bit word of the
// piece is one unaligned 4-byte read of the run: two aligned words and a funnel shift where
// the pair starts odd. conv1 (C = 3, b = 4): 96% of its rows. Every other row (the image's
// edges, padding) takes its elements one by one through the channel table, with bounds.

// Channel c' of a grid row's block: its raw row dy and its element dxc = dx C + c in that row
// (dy = -1: a padding channel, zero). The gatherers hold the table in shared memory.
struct TabEntry {
    int dy = -1, dxc = 0;
};
CS_HALO_HD TabEntry tab_entry(const RawGeom& a, int cprime) {
    TabEntry t;
    if (cprime < a.C0 * a.b * a.b) {
        const int blk = cprime / a.C0, dy = blk / a.b;
        t.dy = dy;
        t.dxc = (blk - dy * a.b) * a.C0 + (cprime - blk * a.C0);
    }
    return t;
}

// Whether a layer's rows may take the pair path (b C even).
CS_HALO_HD bool pair_path(const RawGeom& a) { return (a.b * a.C0) % 2 == 0; }

// The pair path's offsets for one plane: per word k, its first element's offset from the block's
// origin (dy W C + dx C + c of channel 8 plane + 2k), or -1 for a padding pair (zeros).
struct PlanePairs {
    int off[4];
};
CS_HALO_HD PlanePairs plane_pairs(const RawGeom& a, int plane) {
    PlanePairs pp;
    CS_HALO_UNROLL
    for (int k = 0; k < 4; ++k) {
        const TabEntry t = tab_entry(a, 8 * plane + 2 * k);
        pp.off[k] = t.dy < 0 ? -1 : t.dy * a.W0 * a.C0 + t.dxc;
    }
    return pp;
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
// Whether the block lies inside the image (the pair path's condition besides pair_path()).
CS_HALO_HD bool inner_block(const RawGeom& g, const RowOrigin& o) {
    return o.in && o.ys >= 0 && o.ys + g.b <= g.H0 && o.xs >= 0 && o.xs + g.b <= g.W0;
}

// The 4-byte value at element e of the run (any parity): elements e, e + 1 (low, high half).
CS_HALO_HD std::uint32_t unaligned_pair(std::uint32_t lo, std::uint32_t hi, int e) {
#if defined(__CUDA_ARCH__)
    return __funnelshift_r(lo, hi, (e & 1) * 16);
#else
    return std::uint32_t(((std::uint64_t(hi) << 32) | lo) >> ((e & 1) * 16));
#endif
}

// One piece (four 32-bit words, channel 8 plane + j at half j) of a grid row. Src: word(i), the
// run's i-th 32-bit word; half(e), its element e; tab(c'), the channel table. fast: the pair
// path (pair_path() && inner_block()).
struct Piece {
    std::uint32_t w[4];
};
template <class Src>
CS_HALO_HD Piece gather_piece(const Src& src, const RawGeom& g, const RowOrigin& o, const PlanePairs& pp, int plane,
                              bool fast) {
    Piece r;
    if (fast) {
CS_HALO_UNROLL
        for (int k = 0; k < 4; ++k) {
            const int e = o.a + pp.off[k];
            const std::uint32_t lo = pp.off[k] < 0 ? 0u : src.word(e >> 1);
            const std::uint32_t hi = pp.off[k] < 0 || (e & 1) == 0 ? 0u : src.word((e >> 1) + 1);
            r.w[k] = unaligned_pair(lo, hi, e);
        }
    } else {
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
    }
    return r;
}

}  // namespace cs::gpu::variants::hopper
