#include "sample_grid.hpp"

#include <algorithm>

namespace cs::gpu {

namespace {

std::uint64_t mix(std::uint64_t x) {  // SplitMix64's finaliser
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

}  // namespace

std::int64_t tile_covering_count(const Layer& l, std::int64_t N, SampleCell cell) {
    const std::int64_t rows = N * l.E() * l.F();
    return (rows + cell.rows - 1) / cell.rows * ((l.M + cell.channels - 1) / cell.channels);
}

std::vector<std::int64_t> tile_covering_indices(const Layer& l, std::int64_t N, std::uint64_t seed, SampleCell cell) {
    const std::int64_t E = l.E(), F = l.F(), plane = E * F, M = l.M;
    const std::int64_t rows = N * plane;
    const std::int64_t row_cells = (rows + cell.rows - 1) / cell.rows;
    const std::int64_t col_cells = (M + cell.channels - 1) / cell.channels;
    std::vector<std::int64_t> idx(std::size_t(row_cells * col_cells));
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < row_cells; ++r) {
        const std::int64_t row_extent = std::min<std::int64_t>(cell.rows, rows - r * cell.rows);
        for (std::int64_t c = 0; c < col_cells; ++c) {
            const std::int64_t col_extent = std::min<std::int64_t>(cell.channels, M - c * cell.channels);
            const std::uint64_t h = mix(seed ^ mix(std::uint64_t(r * col_cells + c)));
            const std::int64_t row = r * cell.rows + std::int64_t(h % std::uint64_t(row_extent));
            const std::int64_t m = c * cell.channels + r % col_extent;
            const std::int64_t n = row / plane, p = row % plane;
            idx[std::size_t(r * col_cells + c)] = ((n * M + m) * E + p / F) * F + p % F;
        }
    }
    std::sort(idx.begin(), idx.end());
    return idx;
}

}  // namespace cs::gpu
