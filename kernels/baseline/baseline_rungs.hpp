// The baseline family's entry points: its rung's supports() (host code, baseline_family.cpp, in
// every build) and plan (baseline.cu, built with the kernels). baseline_family.cpp names the plan
// through CS_PLAN (family.hpp).
#pragma once

#include "variant.hpp"

#include <memory>
#include <optional>
#include <string>

namespace cs::gpu::variants {

std::optional<std::string> baseline_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> baseline_plan(const Problem&, const PlanContext&);  // baseline.cu

}  // namespace cs::gpu::variants
