// The Hopper family's measured tile table and its lookup (host code): the tiles a committed
// tile sweep measured fastest (tuned_tiles.inc, written by scripts/hopper_tune.py) per rung
// policies, element bytes, layer shape, N and layout; wgmma_ws.cu's plan asks it first and
// falls back to its rule (default_tile) where it answers -1.
#pragma once

#include "../../conv_shape.hpp"
#include "tiles.hpp"

#include <cmath>
#include <cstdint>
#include <string>

namespace cs::gpu::variants::hopper {

struct TunedTile {
    const char* policies;  // "cooperative/tma-store", "pingpong/direct", ... (the fp32-class splits
                           // would add "/3xtf32" / "/3xfp16": none measured)
    int es, C, H, W, M, R, S, stride, pad;
    int N;
    const char* layout;
    const char* tile;
};
inline constexpr TunedTile kTuned[] = {
#include "tuned_tiles.inc"
};
inline constexpr int kNumTuned = int(sizeof(kTuned) / sizeof(kTuned[0]));

// A measurement stands for batches within this factor of its N only: N=1 runs split-K, N=32
// and up data-parallel, so a tile measured at one says little of the other.
inline constexpr double kTunedReach = 4.0;

// The measured tile for this problem: the entry of the same policies, element size and layer
// shape at the nearest measured N within a factor of kTunedReach (the problem's layout
// preferred at equal distance); -1 when none was measured.
inline int tuned_tile(const std::string& policies, int es, const ConvShape& s, bool nchw, std::int64_t n) {
    int best = -1;
    double best_d = 0;
    for (int i = 0; i < kNumTuned; ++i) {
        const TunedTile& t = kTuned[i];
        if (policies != t.policies || t.es != es || t.C != s.C || t.H != s.H || t.W != s.W || t.M != s.M ||
            t.R != s.R || t.S != s.S || t.stride != s.stride || t.pad != s.pad || tile_index(t.tile) < 0)
            continue;
        const double dn = std::abs(std::log(double(t.N) / double(n)));
        if (dn > std::log(kTunedReach) + 1e-9) continue;
        const double d = dn + ((std::string(t.layout) == "nchw") != nchw ? 1e-3 : 0);
        if (best < 0 || d < best_d) best = i, best_d = d;
    }
    return best < 0 ? -1 : tile_index(kTuned[best].tile);
}

}  // namespace cs::gpu::variants::hopper
