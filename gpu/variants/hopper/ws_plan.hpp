// The persistent Hopper kernel's plan (wgmma_ws.cu) as the family spec (family.cu) calls it:
// a rung is a default point in the space of policies, and each policy is an axis a sweep can
// walk (tile, schedule, scheduler, epilogue, cluster, launch).
#pragma once

#include "family.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cs::gpu::variants::hopper {

// A rung's defaults; "auto" (or an empty tile) lets the plan choose per problem (the measured
// table, else the rule in wgmma_ws.cu). A rung that is one tile of tiles.hpp names it here:
// one line in family.cu.
struct WsDefaults {
    std::string schedule = "cooperative";   // cooperative | pingpong
    std::string scheduler = "auto";         // auto (data-parallel, split-K on few tiles) | data-parallel | split-k | stream-k | split-tail
    std::string epilogue = "direct";        // direct | tma-store (falls back to direct where it cannot run)
    std::string cluster = "1";              // 1 | 2: clusters of two CTAs sharing (multicasting) the B tile | 1x2: the A tile
    std::string tile = "";                  // a tiles.hpp name, or empty: the measured table (tuned_tiles.inc), else the rule
    std::string launch = "auto";            // auto (pdl where the tiles leave half the SMs idle) | pdl | plain: the GEMM as the input transform's programmatic dependent
};

// The axes of the persistent rungs, with every value.
std::vector<Axis> ws_axes();
// Rows: fp16, bf16, tf32 (suffix "tf32"), and the fp32-class splits (suffix "3xtf32" /
// "3xfp16").
std::optional<std::string> ws_supports(const PrecisionRow& row, const Problem& p, const cudaDeviceProp& prop);
std::unique_ptr<Plan> ws_plan(const WsDefaults& d, const PrecisionRow& row, const Problem& p, const PlanContext& ctx);

}  // namespace cs::gpu::variants::hopper
