// The chain megakernel's work split (issue 52, item 4): which units each CTA of the one
// persistent grid runs for a layer's convolution, as an implicit GEMM of P = N*E*F output pixels
// by M filters over K = R*S*C.
//
//   tile   kTileP pixels x kTileM filters of the output (tiles_p x tiles_m of them)
//   unit   (tile, split): one of `splits` contiguous ranges of the K steps (kStepK each) of a
//          tile; splits = 1 writes the tile; more add their fp32 partial sums into the layer's
//          workspace and the last part to arrive finishes the tile (megakernel.cu)
//   walk   CTA b runs units b, b + grid, ... of each layer (units <= grid: one each); the units
//          of a tile are `tiles` apart, so its parts run side by side on different SMs
//
// Plain C++ callable on the host too (tests/test_mega_schedule.cpp checks that every tile's K
// steps are covered exactly once and that the split never needs a second wave); the kernel
// calls it with blockIdx.x.
#pragma once

#include <algorithm>

#if defined(__CUDACC__)
#define CS_MEGA_HD __host__ __device__ __forceinline__
#else
#define CS_MEGA_HD inline
#endif

namespace cs::gpu::mega {

constexpr int kTileP = 64;       // output pixels per tile
constexpr int kTileM = 64;       // filters per tile
constexpr int kStepK = 32;       // K per pipeline step
constexpr int kMinSplitSteps = 4;  // a part runs at least this many K steps (8 ran slower: longer serial mainloops)

struct Unit {
    int tile_p = 0, tile_m = 0;  // the tile's pixel and filter block indices
    int split = 0;               // which K part
    int k0 = 0, k1 = 0;          // its K steps [k0, k1)
};

struct GemmSplit {
    int tiles_p = 0, tiles_m = 0, ksteps = 0, splits = 1;

    CS_MEGA_HD int tiles() const { return tiles_p * tiles_m; }
    CS_MEGA_HD int units() const { return tiles() * splits; }
    // Unit u (0 <= u < units()): tile u % tiles() (pixel blocks fastest), part u / tiles().
    CS_MEGA_HD Unit unit(int u) const {
        Unit x;
        const int t = u % tiles();
        x.split = u / tiles();
        x.tile_p = t % tiles_p;
        x.tile_m = t / tiles_p;
        x.k0 = int((long long)ksteps * x.split / splits);
        x.k1 = int((long long)ksteps * (x.split + 1) / splits);
        return x;
    }
};

// The split of a P x M x K convolution GEMM over a grid of `grid` CTAs: as many K parts as
// keep every unit in one wave (tiles * splits <= grid), each at least kMinSplitSteps long.
// A layer of more tiles than CTAs takes splits = 1 (the CTAs walk several tiles).
inline GemmSplit plan_split(long long P, int M, int K, int grid) {
    GemmSplit s;
    s.tiles_p = int((P + kTileP - 1) / kTileP);
    s.tiles_m = (M + kTileM - 1) / kTileM;
    s.ksteps = (K + kStepK - 1) / kStepK;
    const int tiles = s.tiles();
    const int by_grid = tiles > 0 ? grid / tiles : 1;
    const int by_depth = s.ksteps / kMinSplitSteps;
    s.splits = std::max(1, std::min(by_grid, by_depth));
    return s;
}

}  // namespace cs::gpu::mega
