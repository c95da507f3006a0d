// The two cuDNN families' entry points: each rung's supports() (host code, in every build
// where CMake found cuDNN: cudnn_family.cpp for the graph-API family "cudnn",
// cudnn_legacy_family.cpp for "cudnn-legacy") and plan (its .cu file, built with the
// kernels). The specs name the plans through CS_PLAN (family.hpp).
#pragma once

#include "family.hpp"
#include "variant.hpp"

#include <memory>
#include <optional>
#include <string>

namespace cs::gpu::variants {

// cudnn-fp32, -tf32, -fp16, -bf16: the graph API (cudnn_graph.cu).
std::optional<std::string> cudnn_graph_supports(const PrecisionRow&, const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> cudnn_graph_plan(const PrecisionRow&, const Problem&, const PlanContext&);
// The graph-API plan of those rows for problem p (its layer may be one no table lists), for a
// variant that runs cuDNN on a problem of its own (cudnn_s2d.cu): the same engine search,
// accuracy screening and workspace limit. x_at_base: every run() passes x at a 16-byte aligned
// address (a buffer of the caller's), whatever the chunk; else x sits where the harness puts
// chunks of p's own input.
std::unique_ptr<Plan> cudnn_graph_plan_for(Precision prec, const Problem& p, const PlanContext& ctx, bool x_at_base);

// cudnn-fp32-s2d, ...: the layer rewritten by space-to-depth, then the graph API (cudnn_s2d.cu).
std::optional<std::string> cudnn_s2d_supports(const PrecisionRow&, const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> cudnn_s2d_plan(const PrecisionRow&, const Problem&, const PlanContext&);

// cudnn-legacy-fp32, -tf32, -fp16: the legacy API (cudnn.cu; its descriptors: cudnn_legacy.hpp).
std::optional<std::string> cudnn_legacy_supports(const PrecisionRow&, const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> cudnn_legacy_plan(const PrecisionRow&, const Problem&, const PlanContext&);

}  // namespace cs::gpu::variants
