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

}  // namespace cs::gpu::variants::hopper
