// The Hopper family's non-persistent rungs (rung 1: wgmma_cpasync.cu, rung 2: wgmma_tma.cu)
// as the family spec (family.cu) calls them; the persistent rungs are in ws_plan.hpp.
#pragma once

#include "family.hpp"

#include <memory>
#include <optional>
#include <string>

namespace cs::gpu::variants::hopper {

std::optional<std::string> cpasync_supports(const Problem& p, const cudaDeviceProp& prop);
std::unique_ptr<Plan> cpasync_plan(const PrecisionRow& row, const Problem& p, const PlanContext& ctx);
std::optional<std::string> tma_supports(const Problem& p, const cudaDeviceProp& prop);
std::unique_ptr<Plan> tma_plan(const PrecisionRow& row, const Problem& p, const PlanContext& ctx);

}  // namespace cs::gpu::variants::hopper
