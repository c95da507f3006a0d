// The single-kernel family's entry points and the host-visible parts its kernels share:
// supports() and the shared-memory need of each idea (host code, single_kernel_family.cpp, in
// every build), the plans (single_kernel.cu and half_baseline.cu, built with the kernels).
// single_kernel_family.cpp names the plans through CS_PLAN (family.hpp).
#pragma once

#include "conv_shape.hpp"
#include "family.hpp"
#include "variant.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace cs::gpu::variants {

namespace sk {  // the single-kernel family

// The four ideas, as the registry rows see them (single_kernel.cu's file comment).
enum class Idea { register_acc, one_loader, many_loaders, shared_out };
// Where the running sum lives.
enum class Accum { reg, shared };

constexpr Accum accum_of(Idea idea) { return idea == Idea::shared_out ? Accum::shared : Accum::reg; }

// Dynamic shared memory of one block: the filter, plus swso's sums.
std::int64_t smem_bytes(Idea idea, const ConvShape& s, const PlaneTiling& tl);

std::optional<std::string> supports(Idea idea, const Problem& p, const cudaDeviceProp& prop);

// The plan of an idea under a mapping (single_kernel.cu).
RungPlan plan(Idea idea, PlaneMapping map);

}  // namespace sk

std::optional<std::string> half_baseline_supports(const Problem& p, const cudaDeviceProp& prop);
std::unique_ptr<Plan> half_baseline_plan(const Problem& p, const PlanContext& ctx);              // half_baseline.cu
std::unique_ptr<Plan> half_baseline_uncoalesced_plan(const Problem& p, const PlanContext& ctx);  // half_baseline.cu

}  // namespace cs::gpu::variants
