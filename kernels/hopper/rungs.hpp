// The Hopper family's rungs with kernels of their own (rung 1: wgmma_cpasync.cu, rung 2:
// wgmma_tma.cu, the halo mainloops: halo_conv.cu, rowhalo_conv.cu) as the family spec (family.cpp) calls them:
// their supports() are host code (supports.cpp, in every build), their plans are in the .cu
// files (built with the kernels) and re-check supports() through these declarations; the
// persistent skeleton's rungs are in ws_plan.hpp.
#pragma once

#include "error.hpp"
#include "family.hpp"
#include "geometry.hpp"
#include "tiles.hpp"

#include <memory>
#include <optional>
#include <string>

namespace cs::gpu::variants::hopper {

std::optional<std::string> cpasync_supports(const Problem& p, const cudaDeviceProp& prop);
std::unique_ptr<Plan> cpasync_plan(const PrecisionRow& row, const Problem& p, const PlanContext& ctx);
std::optional<std::string> tma_supports(const Problem& p, const cudaDeviceProp& prop);
std::unique_ptr<Plan> tma_plan(const PrecisionRow& row, const Problem& p, const PlanContext& ctx);
// The halo mainloop (halo_conv.cu): fp16 / bf16 rows.
std::optional<std::string> halo_supports(const PrecisionRow& row, const Problem& p, const cudaDeviceProp& prop);
std::unique_ptr<Plan> halo_plan(const PrecisionRow& row, const Problem& p, const PlanContext& ctx);
// The row-halo mainloop (rowhalo_conv.cu): fp16, bf16 and tf32 rows.
std::optional<std::string> rowhalo_supports(const PrecisionRow& row, const Problem& p, const cudaDeviceProp& prop);
std::unique_ptr<Plan> rowhalo_plan(const PrecisionRow& row, const Problem& p, const PlanContext& ctx);

// The tile of a rung that runs kBM-pixel tiles with MMAs over the whole slice (rungs 1 and 2:
// `rung`): the row's `tile` axis value (a kTiles index), else `dflt`; a cs::Skip says why the
// rung cannot run it.
inline int whole_slice_tile(std::optional<int> tile, int dflt, const std::string& rung) {
    const int t = tile.value_or(dflt);
    if (t < 0 || t >= kNumTiles) throw Skip("no tile " + std::to_string(t) + " in tiles.hpp");
    if (kTiles[t].bm != kBM || kTiles[t].kb)
        throw Skip("tile " + tile_name(t) + ": " + rung + " runs " + std::to_string(kBM) +
                   "-pixel tiles with MMAs over the whole slice only");
    return t;
}

}  // namespace cs::gpu::variants::hopper
