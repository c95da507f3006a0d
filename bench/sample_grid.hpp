// The tile-covering sample: the output elements a sampled check compares, and the ones every
// later run of a non-deterministic variant is compared at (harness.hpp).
//
// The grid lives in GEMM coordinates: row = n*E*F + e*F + f (an output pixel of an image),
// column = m (an output channel). The grid's cell is kSampleCell (8 rows x 8 channels): every
// output tile of a GEMM-shaped variant is a multiple of 8 rows and 8 channels (the smallest in
// use is the Hopper family's 64 x 32), and any tile of at least 15 x 15 however placed holds
// a whole cell. Each cell gets one sample: a row chosen from the seed, and the channel
// (row cell mod the cell's width), so that over 8 consecutive row cells (64 output pixels)
// every channel of a column cell is sampled once. So one wrong output tile of 64 x 32, or a
// wrong 64-pixel run of a single channel (the direct kernels' planes), cannot be missed when
// its elements are wrong; docs/check.md states the rest.
#pragma once

#include "layer.hpp"

#include <cstdint>
#include <vector>

namespace cs::gpu {

struct SampleCell {
    int rows = 8;      // output pixels (GEMM rows)
    int channels = 8;  // output channels (GEMM columns)
};
inline constexpr SampleCell kSampleCell{};

// One NCHW flat output index (((n*M + m)*E + e)*F + f) per cell of the grid over the layer's
// output at batch N, sorted ascending; deterministic for (layer, N, seed).
std::vector<std::int64_t> tile_covering_indices(const Layer& l, std::int64_t N, std::uint64_t seed,
                                                SampleCell cell = kSampleCell);
// How many that is: ceil(N*E*F / rows) * ceil(M / channels).
std::int64_t tile_covering_count(const Layer& l, std::int64_t N, SampleCell cell = kSampleCell);

}  // namespace cs::gpu
