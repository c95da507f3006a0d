// The Hopper family's rungs with kernels of their own (rung 1: wgmma_cpasync.cu, rung 2:
// wgmma_tma.cu, the halo mainloop: halo_conv.cu) as the family spec (family.cu) calls them;
// the persistent skeleton's rungs are in ws_plan.hpp.
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
// The halo mainloop (halo_conv.cu): fp16 / bf16 rows.
std::optional<std::string> halo_supports(const PrecisionRow& row, const Problem& p, const cudaDeviceProp& prop);
std::unique_ptr<Plan> halo_plan(const PrecisionRow& row, const Problem& p, const PlanContext& ctx);

}  // namespace cs::gpu::variants::hopper
