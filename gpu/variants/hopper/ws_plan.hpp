// The persistent Hopper kernel's plan (wgmma_ws.cu) as the family spec (family.cpp) calls it:
// a rung is a default point in the space of policies, and each policy is an axis a sweep can
// walk (tile, schedule, scheduler, epilogue, cluster, launch). The axes and supports()
// (supports.cpp) and the tiles each schedule instantiates (ws_tile_ok_rt, here) are host code,
// in every build; the plan (wgmma_ws.cu) is built with the kernels.
#pragma once

#include "family.hpp"
#include "geometry.hpp"
#include "tiles.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cs::gpu::variants::hopper {

enum class Schedule { cooperative, pingpong };

// Whether the persistent kernel instantiates tile i for this schedule (1 CTA per SM; a
// ping-pong warpgroup holds a whole 128 x BN tile: BN <= 128, 128 pixels, MMAs over the
// whole slice).
inline constexpr bool ws_tile_ok_rt(int i, Schedule s) {
    return kTiles[i].minb == 1 &&
           (s == Schedule::cooperative || (kTiles[i].bn <= 128 && kTiles[i].bm == kBM && !kTiles[i].kb));
}

// A rung's defaults; "auto" (or an empty tile) lets the plan choose per problem (the measured
// table, else the rule in wgmma_ws.cu). A rung that is one tile of tiles.hpp names it here:
// one line in family.cpp.
struct WsDefaults {
    std::string schedule = "cooperative";   // cooperative | pingpong
    std::string scheduler = "auto";         // auto (data-parallel, split-K on few tiles) | data-parallel | split-k | stream-k | split-tail
    std::string epilogue = "direct";        // direct | tma-store (falls back to direct where it cannot run)
    std::string cluster = "1";              // 1 | 2: clusters of two CTAs sharing (multicasting) the B tile | 1x2: the A tile
    std::string tile = "";                  // a tiles.hpp name, or empty: the measured table (tuned_tiles.inc), else the rule
    std::string launch = "auto";            // auto (pdl where the tiles leave half the SMs idle) | pdl | plain: the GEMM as the input transform's programmatic dependent
};

// The axes of the persistent rungs, with every value (supports.cpp).
std::vector<Axis> ws_axes();
// Rows: fp16, bf16, tf32 (suffix "tf32"), and the fp32-class splits (suffix "3xtf32" /
// "3xfp16") (supports.cpp).
std::optional<std::string> ws_supports(const PrecisionRow& row, const Problem& p, const cudaDeviceProp& prop);
// The plan (wgmma_ws.cu): the rung's defaults, overridden by the row's axis values.
std::unique_ptr<Plan> ws_plan(const WsDefaults& d, const PrecisionRow& row, const Problem& p, const PlanContext& ctx);

}  // namespace cs::gpu::variants::hopper
