// The tile-covering sample (bench/sample_grid.hpp): one wrong output tile cannot be missed.
// conv1 at N=128 and N=2048: a wrong tile of the smallest tile in use (the Hopper family's
// 64 x 32, in GEMM coordinates), planted at every tile position, is caught by the sample every
// time; and through the check itself (gpu::compare_sampled), for a spread of positions.
#include "catch.hpp"

#include "layer.hpp"
#include "sample_grid.hpp"
#include "tolerance.hpp"

#include <cmath>
#include <vector>

using namespace cs;

namespace {

Layer conv1() {
    Layer l;
    l.name = "conv1";
    l.C = 3, l.H = 227, l.W = 227, l.M = 96, l.R = 11, l.S = 11, l.stride = 4, l.pad = 0;
    return l;
}

// For each tile (rows x cols, aligned at multiples of its size) of the output in GEMM
// coordinates, whether a sampled index falls in it.
std::vector<char> tiles_hit(const Layer& l, std::int64_t N, const std::vector<std::int64_t>& idx, int tr, int tc,
                            std::int64_t& row_tiles, std::int64_t& col_tiles) {
    const std::int64_t E = l.E(), F = l.F(), plane = E * F;
    row_tiles = (N * plane + tr - 1) / tr;
    col_tiles = (l.M + tc - 1) / tc;
    std::vector<char> hit(std::size_t(row_tiles * col_tiles), 0);
    for (std::int64_t i : idx) {
        const std::int64_t f = i % F, e = i / F % E, m = i / plane % l.M, n = i / (plane * l.M);
        const std::int64_t row = n * plane + e * F + f;
        hit[std::size_t(row / tr * col_tiles + m / tc)] = 1;
    }
    return hit;
}

}  // namespace

TEST_CASE("the tile-covering sample hits every 64 x 32 output tile of conv1 at N=128 and N=2048", "[sampled][grid]") {
    const Layer l = conv1();
    for (std::int64_t N : {std::int64_t(128), std::int64_t(2048)}) {
        INFO("N=" << N);
        const auto idx = gpu::tile_covering_indices(l, N, 20261123);
        CHECK(std::int64_t(idx.size()) == gpu::tile_covering_count(l, N));
        for (std::size_t i = 1; i < idx.size(); ++i) REQUIRE(idx[i - 1] < idx[i]);
        REQUIRE(idx.back() < l.output_elems(N));
        std::int64_t rt = 0, ct = 0;
        const auto hit = tiles_hit(l, N, idx, 64, 32, rt, ct);
        std::int64_t missed = 0;
        for (char h : hit) missed += h == 0;
        CHECK(rt * ct == std::int64_t(hit.size()));
        CHECK(missed == 0);
        // The grid's own cell (8 x 8) is the finest it guarantees: every cell holds one sample.
        const auto cells = tiles_hit(l, N, idx, gpu::kSampleCell.rows, gpu::kSampleCell.channels, rt, ct);
        std::int64_t empty = 0;
        for (char h : cells) empty += h == 0;
        CHECK(empty == 0);
    }
}

TEST_CASE("every channel of a column cell is sampled within 64 consecutive output pixels", "[sampled][grid]") {
    // The direct kernels' tiles are planes of one channel: a wrong run of 64 pixels of one
    // channel (aligned to the 8-pixel cells) is caught too.
    const Layer l = conv1();
    const std::int64_t N = 4;
    const auto idx = gpu::tile_covering_indices(l, N, 7);
    std::int64_t rt = 0, ct = 0;
    const auto hit = tiles_hit(l, N, idx, 64, 1, rt, ct);
    std::int64_t missed = 0;
    for (std::int64_t r = 0; r + 1 < rt; ++r)  // the last, partial run may be shorter than 64
        for (std::int64_t c = 0; c < ct; ++c) missed += hit[std::size_t(r * ct + c)] == 0;
    CHECK(missed == 0);
}

TEST_CASE("a planted wrong tile fails the sampled check wherever it is", "[sampled][grid]") {
    const Layer l = conv1();
    const std::int64_t N = 128, E = l.E(), F = l.F(), plane = E * F;
    const auto idx = gpu::tile_covering_indices(l, N, 3);
    std::vector<double> golden(idx.size(), 1.0);
    std::vector<float> out(std::size_t(l.output_elems(N)), 1.0f);
    // Unmutated: passes with zero error in every class.
    auto check = [&] {
        return gpu::compare_sampled(out.data(), idx.data(), golden.data(), nullptr, std::int64_t(idx.size()), 1.0,
                                    gpu::Precision::fp16);
    };
    REQUIRE(gpu::passes(check(), gpu::Precision::fp16));
    const std::int64_t row_tiles = N * plane / 64, col_tiles = l.M / 32;
    int caught = 0, planted = 0;
    for (std::int64_t t = 0; t < row_tiles * col_tiles; t += 97) {  // a spread of positions, edges included
        const std::int64_t r0 = t / col_tiles * 64, c0 = t % col_tiles * 32;
        auto plant = [&](float v) {
            for (std::int64_t row = r0; row < r0 + 64; ++row)
                for (std::int64_t m = c0; m < c0 + 32; ++m) {
                    const std::int64_t n = row / plane, p = row % plane;
                    out[std::size_t(((n * l.M + m) * E + p / F) * F + p % F)] = v;
                }
        };
        plant(1.5f);
        ++planted;
        caught += !gpu::passes(check(), gpu::Precision::fp16);
        plant(1.0f);
    }
    CHECK(planted > 100);
    CHECK(caught == planted);
}
