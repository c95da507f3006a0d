// The halo rung's s2d=loader geometry (kernels/hopper/halo_raw.hpp), without a GPU: for
// every 256-row halo of 128-row tiles (the ping-pong schedule's), every element its gather
// reads — each (grid row, channel) of the halo, by the space-to-depth map written out here
// from space_to_depth.hpp's definition — lies in the raw run its loader brings
// ([e0, e0 + 256 nbox)), the run fits the kernel's buffer where the plan's bound says it does,
// and the bound is never under a halo's run.
#include "catch.hpp"
#include "layer.hpp"
#include "test_util.hpp"

#include "halo_raw.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

using namespace cs;
using namespace cs::gpu::variants::hopper;
using cs::test::make_layer;

namespace {

// AlexNet's conv1 (layers/alexnet.json): C=3, 227x227, 96 filters of 11x11, stride 4.
Layer conv1() { return make_layer("conv1", 3, 227, 227, 96, 11, 11, 4, 0); }

// The rewritten grid of make_setup (kernels/common/sm90/geometry.hpp) for a strided layer with C % 8 != 0.
RawGeom geom_of(const Layer& l, int N) {
    const int b = l.stride;
    RawGeom g;
    g.Wp = (l.W + 2 * l.pad + b - 1) / b;
    const int Hp = (l.H + 2 * l.pad + b - 1) / b;
    g.HWp = Hp * g.Wp;
    g.rows = N * g.HWp;
    g.C0 = l.C, g.H0 = l.H, g.W0 = l.W, g.b = b, g.pad = l.pad;
    return g;
}

// in'[n][Y][X][c'] of the rewrite, c' = (dy b + dx) C + c, as the flat NHWC index of the
// element it copies, or -1 for a zero.
std::int64_t s2d_source(const RawGeom& g, int N, int q, int cp) {
    if (q >= N * g.HWp || cp >= g.C0 * g.b * g.b) return -1;
    const int n = q / g.HWp, Y = (q % g.HWp) / g.Wp, X = q % g.Wp;
    const int c = cp % g.C0, dx = (cp / g.C0) % g.b, dy = cp / g.C0 / g.b;
    const int y = g.b * Y + dy - g.pad, x = g.b * X + dx - g.pad;
    if (y < 0 || y >= g.H0 || x < 0 || x >= g.W0) return -1;
    return ((std::int64_t(n) * g.H0 + y) * g.W0 + x) * g.C0 + c;
}

void check_halos(const Layer& l, int N) {
    const RawGeom g = geom_of(l, N);
    const int Cp = (g.C0 * g.b * g.b + 15) / 16 * 16;  // the planes the halo holds
    const std::int64_t bound = raw_run_bound(g, 256);
    std::int64_t widest = 0;
    int tiles = 0;
    for (int q0 = 0; q0 < g.rows; q0 += 128, ++tiles) {
        const RawRun r = raw_run(g, q0, 256);
        INFO(l.name << " N=" << N << " tile at row " << q0 << ": e0 " << r.e0 << ", " << r.nbox << " boxes");
        REQUIRE(r.e0 % 8 == 0);
        REQUIRE(r.nbox >= 0);
        std::int64_t last = -1;
        for (int q = q0; q < q0 + 256; ++q)
            for (int cp = 0; cp < Cp; ++cp) {
                const std::int64_t want = s2d_source(g, N, q, cp);
                REQUIRE(raw_element(g, q, cp) == want);
                if (want < 0) continue;
                REQUIRE(want >= r.e0);
                REQUIRE(want < std::int64_t(r.e0) + std::int64_t(kHRawBox) * r.nbox);
                last = std::max(last, want);
            }
        if (last >= 0) widest = std::max(widest, last + 1 - r.e0);
    }
    INFO(l.name << " N=" << N << ": " << tiles << " tiles, widest run " << widest << ", bound " << bound);
    CHECK(widest <= bound);
    CHECK(widest > 0);
}

}  // namespace

TEST_CASE("halo s2d=loader: every element a halo gathers lies in the raw run its loader brings", "[hopper][halo]") {
    check_halos(conv1(), 2);                                              // C'=48, 57x57: image boundaries in halos
    check_halos(make_layer("odd_s4_c3", 3, 35, 31, 7, 11, 11, 4, 0), 3);   // a halo over many grid rows
    check_halos(make_layer("odd_c3_s2", 3, 19, 23, 5, 5, 3, 2, 1), 3);     // padding, C' = 16 with 4 zero channels
    check_halos(make_layer("s4_p2_c3", 3, 30, 27, 8, 11, 11, 4, 2), 2);    // padding on both sides of the blocks
}

TEST_CASE("halo s2d=loader: the plan's bound keeps conv1's runs in the 32 KiB buffer", "[hopper][halo]") {
    const RawGeom g = geom_of(conv1(), 128);
    const std::int64_t bound = raw_run_bound(g, 256);
    CHECK(bound <= std::int64_t(kHRawBox) * kHRawBoxes);
    for (int q0 = 0; q0 < g.rows; q0 += 128) REQUIRE(raw_run(g, q0, 256).nbox <= kHRawBoxes);
}
