// The cuDNN graph-API plan of the cudnn-<class> rows (cudnn_graph.cu) for any problem, for a
// variant that runs cuDNN on a problem of its own (cudnn_s2d.cu: conv1 rewritten by
// space-to-depth): the same engine search, accuracy screening and workspace limit.
#pragma once

#include "family.hpp"
#include "variant.hpp"

#include <memory>
#include <optional>
#include <string>

namespace cs::gpu::variants {

// Empty when cuDNN's graph API can run the class on this device and layout, else why not.
std::optional<std::string> cudnn_graph_supports(Precision prec, const Problem& p, const cudaDeviceProp& prop);
// The plan for problem p (its layer may be one no table lists). x_at_base: every run() passes
// x at a 16-byte aligned address (a buffer of the caller's), whatever the chunk; else x
// sits where the harness puts chunks of p's own input.
std::unique_ptr<Plan> cudnn_graph_plan(Precision prec, const Problem& p, const PlanContext& ctx, bool x_at_base);

// The cudnn family's rung on the space-to-depth rewrite of a strided layer (cudnn_s2d.cu).
Rung cudnn_s2d_rung();

}  // namespace cs::gpu::variants
