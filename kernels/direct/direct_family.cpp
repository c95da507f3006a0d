// The direct family's spec, its rungs' supports() and the host side of their geometry (host
// code; the plans and their kernels are the .cu files): the course reports' constant-memory
// mask, restrict + unrolling and shared-memory input tiling, each on the direct convolution. One
// rung per file: direct_const_weights.cu, direct_restrict_unroll.cu, direct_tiled_input.cu
// (shared taps: direct_taps.cuh); declarations in direct_rungs.hpp.
#include "direct_rungs.hpp"
#include "families.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>

namespace cs::gpu::variants {

// ---- const-weights ----

std::int64_t bank_floats(const cudaDeviceProp& prop) {
    return std::min<std::int64_t>(kConstBankFloats, std::int64_t(prop.totalConstMem) / 4);
}

std::optional<std::string> const_weights_supports(const Problem& p, const cudaDeviceProp& prop) {
    if (const char* why = nm_grid_limit_reason(p.N, p.layer.M, prop)) return std::string(why);
    const Layer& l = p.layer;
    if (l.input_elems(1) > INT_MAX || std::int64_t(l.E()) * l.F() > INT_MAX)
        return std::string("one image or output plane has more than 2^31 elements (32-bit offsets)");
    if (l.K() > bank_floats(prop))
        return "one filter (C*R*S*4 = " + std::to_string(l.K() * 4) + " bytes) does not fit the " +
               std::to_string(bank_floats(prop) * 4) + "-byte constant bank";
    return std::nullopt;
}

// ---- restrict-unroll ----

std::optional<std::string> restrict_unroll_supports(const Problem& p, const cudaDeviceProp& prop) {
    if (const char* why = nm_grid_limit_reason(p.N, p.layer.M, prop)) return std::string(why);
    const Layer& l = p.layer;
    // Offsets inside one image, filter and output plane are 32-bit in the kernel.
    if (l.input_elems(1) > INT_MAX || l.K() > INT_MAX || std::int64_t(l.E()) * l.F() > INT_MAX)
        return std::string("one image, filter or output plane has more than 2^31 elements (32-bit offsets)");
    return std::nullopt;
}

// ---- tiled-input: the tiling (direct_tiled_input.cu's file comment) ----

namespace tiled_input {
namespace {

constexpr int kTargetSmem = 24 * 1024;  // bytes per block the channel stage aims for

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Most lanes of one warp that hit the same bank (different words) in the compute loop's
// input load, over every warp of a BX x BY block, for a row pitch. Lane (ty, tx) reads
// word ty*stride*pitch + tx (+ an offset common to the warp).
int conflict_degree(int pitch, int BX, int BY, int st) {
    const int threads = BX * BY;
    int worst = 1;
    for (int w0 = 0; w0 < threads; w0 += 32) {
        int count[32] = {};
        for (int lane = 0; lane < 32 && w0 + lane < threads; ++lane) {
            const int t = w0 + lane, ty = t / BX, tx = t % BX;
            const long long addr = (long long)ty * st * pitch + tx;
            worst = std::max(worst, ++count[addr % 32]);
        }
    }
    return worst;
}

std::int64_t smem_bytes(const TileGeom& g, int RS, int MB) {
    return (std::int64_t(g.xs_floats) + std::int64_t(g.CB) * RS * MB) * 4;
}

// The geometry for a BX x BY block and MB filters; CB as large as kTargetSmem allows.
TileGeom geometry(const ConvShape& s, int BX, int BY, int MB) {
    TileGeom g{};
    const int st = s.stride;
    g.TE = BY * kRows;
    g.tiles_f = ceil_div(s.F, BX);
    g.ntiles = ceil_div(s.E, g.TE) * g.tiles_f;
    g.mgroups = ceil_div(s.M, MB);
    g.PH = (g.TE - 1) * st + s.R;
    g.PW = (BX - 1) * st + s.S;
    g.PWq = ceil_div(g.PW, st);
    const int row = st * g.PWq;
    g.pitch = row;
    int best = conflict_degree(row, BX, BY, st);
    for (int p = row + 1; p < row + 32 && best > 1; ++p) {
        const int d = conflict_degree(p, BX, BY, st);
        if (d < best) best = d, g.pitch = p;
    }
    const int RS = s.R * s.S;
    auto with_cb = [&](int cb) {
        TileGeom t = g;
        t.CB = cb;
        t.xs_floats = (cb * g.PH * g.pitch + 3) / 4 * 4;
        return t;
    };
    int cb = 1;
    while (cb < s.C && smem_bytes(with_cb(cb + 1), RS, MB) <= kTargetSmem) ++cb;
    g = with_cb(cb);
    // Input staging: LW = ceil(PW / k) threads per row, RP rows per pass; the k with the
    // fewest trips per thread (conv1's 63x119 patch: 8 rows x 24 threads, 40 trips instead
    // of 63 with one whole row per pass; a 13x7 block on a 16x15 patch: 6 rows x 15).
    const int threads = BX * BY;
    int best_trips = INT_MAX;
    for (int k = 1; k <= g.PW; ++k) {
        const int lw = ceil_div(g.PW, k);
        if (lw > threads) continue;
        const int rp = threads / lw;
        const int trips = ceil_div(g.PH, rp) * k;
        if (trips < best_trips) best_trips = trips, g.LW = lw, g.RP = rp;
    }
    return g;
}

}  // namespace

std::optional<std::string> choose(const ConvShape& s, int MB, const cudaDeviceProp& prop, Choice& out) {
    int BX = ceil_div(s.F, ceil_div(s.F, 32));
    const int rows_target = std::max(1, kMaxThreads / BX) * kRows;
    int BY = ceil_div(ceil_div(s.E, ceil_div(s.E, rows_target)), kRows);
    const std::int64_t limit = std::int64_t(prop.sharedMemPerBlockOptin);
    for (;;) {
        const TileGeom g = geometry(s, BX, BY, MB);
        const std::int64_t need = smem_bytes(g, s.R * s.S, MB);
        if (need <= limit) {
            out.BX = BX, out.BY = BY, out.MB = MB, out.g = g, out.smem = need;
            return std::nullopt;
        }
        if (BY > 1)
            BY = ceil_div(BY, 2);
        else if (BX > 1)
            BX = ceil_div(BX, 2);
        else
            return "one channel's input patch and filter slices (" + std::to_string(need) +
                   " bytes for a 1x2-output tile) exceed this device's " + std::to_string(limit) +
                   "-byte opt-in shared memory per block";
    }
}

}  // namespace tiled_input

std::optional<std::string> tiled_input_supports(const Problem& p, const cudaDeviceProp& prop) {
    const Layer& l = p.layer;
    // Offsets inside one image are 32-bit in the kernel (filters and outputs are 64-bit).
    if (l.input_elems(1) > INT_MAX) return std::string("one image has more than 2^31 elements (32-bit offsets)");
    const ConvShape s = conv_shape(l);
    tiled_input::Choice ch;
    if (auto why = tiled_input::choose(s, 8, prop, ch)) return why;
    const std::int64_t blocks = p.N * ch.g.ntiles * ch.g.mgroups;
    if (blocks > prop.maxGridSize[0])
        return "the grid (N x tiles x filter groups = " + std::to_string(blocks) + " blocks) exceeds the x limit";
    return std::nullopt;
}

// ---- the spec ----

Family direct_family() {
    auto rung = [](std::string name, std::string idea, PlainSupports sup, RungPlan pl) {
        return make_rung(std::move(name), {row_fp32()}, std::move(idea), plain(sup), std::move(pl));
    };
    return {"direct",
            {},
            {
                rung("const-weights",
                     "filters in __constant__ memory (broadcast reads), in chunks of M that fit 64 KB: a "
                     "device-to-device copy + a launch per chunk",
                     const_weights_supports, CS_PLAN(const_weights_plan)),
                rung("restrict-unroll",
                     "register-acc with __restrict__ pointers and the filter size compile-time (11, 5, 3: loops "
                     "fully unrolled), a generic fallback",
                     restrict_unroll_supports, CS_PLAN(restrict_unroll_plan)),
                rung("tiled-input",
                     "a block stages its input tile + halo and the filters' channel slices in shared memory; 2 rows "
                     "x 8-16 filters per thread",
                     tiled_input_supports, CS_PLAN(tiled_input_plan)),
            }};
}

}  // namespace cs::gpu::variants
