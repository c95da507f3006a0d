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
#include <stdexcept>
#include <string>
#include <vector>

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

namespace {

// A raw input whose every element is distinct from its neighbours and never zero.
std::uint16_t raw_value(std::int64_t e) { return std::uint16_t(1 + (e * 40503) % 65521); }

// A run buffer in shared memory as the kernel reads it (halo_conv.cu's gatherers): 32-bit words
// and 2-byte elements of one 32 KiB buffer, and the channel table. The row path may read a few
// words beyond the buffer (the shared memory beside it): kGuard words each side hold garbage,
// which its masks must drop; reads further out throw.
constexpr int kGuard = 16;
struct HostRun {
    std::vector<std::uint16_t> h;  // 2 kGuard elements of garbage, the buffer, 2 kGuard of garbage
    std::vector<TabEntry> t;
    std::uint32_t word(int i) const {
        const std::int64_t k = std::int64_t(i) + kGuard;
        if (k < 0 || 2 * k + 1 >= std::int64_t(h.size())) throw std::out_of_range("word " + std::to_string(i));
        return std::uint32_t(h[std::size_t(2 * k)]) | (std::uint32_t(h[std::size_t(2 * k + 1)]) << 16);
    }
    std::uint16_t half(int e) const { return h.at(std::size_t(e + 2 * kGuard)); }
    int zeros() const { return int(h.size() / 2) - kGuard - 8; }  // the last 8 words: zeros
    TabEntry tab(int cp) const { return t.at(std::size_t(cp)); }
};

// Every halo of `halo` rows over 128-row tiles, gathered as the kernel's kG gatherers do (a
// thread a row, rows kG apart by GridWalk: 128, or 256 for s2d=loader-wide; kRows:
// RowGather<b, C>'s runs, else the table), against the space-to-depth map: every row gathered
// once, every piece equal to the elements it stands for, zeros where they are. Returns how many
// rows crossed the image's border (the row path's masks).
template <int kB, int kC, bool kRows, int kG = 128>
int check_gather(const Layer& l, int N, int halo) {
    const RawGeom g = geom_of(l, N);
    REQUIRE((!kRows || (g.b == kB && g.C0 == kC)));
    constexpr int kCK = (kB * kB * kC + 15) / 16 * 2;  // 16-channel multiples, as the kernel's planes
    const int planes = (g.C0 * g.b * g.b + 15) / 16 * 2;
    REQUIRE((!kRows || planes == kCK));
    const std::int64_t total = std::int64_t(N) * g.H0 * g.W0 * g.C0;
    constexpr int kWords = kHRawBox * kHRawBoxes / 2;
    HostRun run;
    for (int cp = 0; cp < planes * 8; ++cp) run.t.push_back(tab_entry(g, cp));
    int cut = 0;
    for (int q0 = 0; q0 < g.rows; q0 += 128) {
        const RawRun rr = raw_run(g, q0, 256);
        // the loader's run: its elements in the tensor from e0; the rest of the buffer and the
        // guards stale (garbage)
        run.h.assign(std::size_t(2 * kWords + 4 * kGuard + 16), 0xa5a5);
        std::fill(run.h.end() - 16, run.h.end(), std::uint16_t(0));
        for (std::int64_t i = 0; i < std::int64_t(kHRawBox) * rr.nbox && rr.e0 + i < total; ++i)
            run.h[std::size_t(i + 2 * kGuard)] = raw_value(rr.e0 + i);
        std::vector<int> times(std::size_t(halo), 0);
        for (int gt = 0; gt < kG; ++gt) {
            GridWalk wk(g, q0 + gt);
            for (int i = gt; i < halo; i += kG, wk.step(g, kG)) {
                const int q = q0 + i;
                ++times[std::size_t(i)];
                const RowOrigin o = row_origin(g, wk.n, wk.Y, wk.X, q < g.rows, rr.e0);
                std::vector<std::uint32_t> got(std::size_t(planes) * 4, 0xdeadbeefu);
                if constexpr (kRows) {
                    cut += o.xs * kC < 0 || (o.xs + kB) * kC > g.W0 * g.C0;
                    RowGather<kB, kC>::template row<kCK>(run, g, o, [&](int p, std::uint32_t w0, std::uint32_t w1,
                                                                                 std::uint32_t w2, std::uint32_t w3) {
                        got[std::size_t(4 * p)] = w0, got[std::size_t(4 * p + 1)] = w1;
                        got[std::size_t(4 * p + 2)] = w2, got[std::size_t(4 * p + 3)] = w3;
                    });
                } else {
                    for (int p = 0; p < planes; ++p) {
                        const Piece pc = gather_piece(run, g, o, p);
                        for (int k = 0; k < 4; ++k) got[std::size_t(4 * p + k)] = pc.w[k];
                    }
                }
                for (int cp = 0; cp < planes * 8; ++cp) {
                    const std::int64_t src = raw_element(g, q, cp);
                    const std::uint16_t want = src < 0 ? 0 : raw_value(src);
                    const std::uint16_t v = std::uint16_t(got[std::size_t(cp / 2)] >> (16 * (cp % 2)));
                    INFO(l.name << " N=" << N << " row " << q << " channel " << cp << (kRows ? " (rows)" : " (table)"));
                    REQUIRE(v == want);
                }
            }
        }
        REQUIRE(std::count(times.begin(), times.end(), 1) == halo);
    }
    return cut;
}

}  // namespace

TEST_CASE("halo s2d=loader: the gatherers' pieces are the space-to-depth rewrite", "[hopper][halo]") {
    // conv1's blocks (b = 4, C = 3) by the row path: its right and bottom borders cut blocks
    CHECK(check_gather<4, 3, true>(conv1(), 2, 244) > 0);
    check_gather<4, 3, true>(make_layer("odd_s4_c3", 3, 35, 31, 7, 11, 11, 4, 0), 3, 256);
    CHECK(check_gather<4, 3, true>(make_layer("s4_p2_c3", 3, 30, 27, 8, 11, 11, 4, 2), 2, 256) > 0);  // left too
    // the table path, on those and on shapes the row path does not take
    check_gather<4, 3, false>(conv1(), 2, 244);
    check_gather<4, 3, false>(make_layer("s4_p2_c3", 3, 30, 27, 8, 11, 11, 4, 2), 2, 256);
    check_gather<2, 3, false>(make_layer("odd_c3_s2", 3, 19, 23, 5, 5, 3, 2, 1), 3, 256);  // padding, zero channels
    check_gather<3, 1, false>(make_layer("c1_s3", 1, 29, 31, 4, 6, 6, 3, 0), 2, 256);
    // s2d=loader-wide: two warpgroups of gatherers, rows 256 apart (a walk's step past a whole
    // grid row and an image)
    CHECK(check_gather<4, 3, true, 256>(conv1(), 2, 244) > 0);
    check_gather<4, 3, true, 256>(make_layer("odd_s4_c3", 3, 35, 31, 7, 11, 11, 4, 0), 3, 256);
    check_gather<2, 3, false, 256>(make_layer("odd_c3_s2", 3, 19, 23, 5, 5, 3, 2, 1), 3, 256);
}
