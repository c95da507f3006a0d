// The entry points of each variant file: supports() and make_plan() per variant. The
// registry (gpu/registry.cpp) is the only place that names them as variants.
#pragma once

#include "variant.hpp"

#include <memory>
#include <optional>
#include <string>

namespace cs::gpu::variants {

using SupportsFn = std::optional<std::string> (*)(const Problem&, const cudaDeviceProp&);
using PlanFn = std::unique_ptr<Plan> (*)(const Problem&, const PlanContext&);

// baseline.cu — the study's Mcpy / UM kernel.
std::optional<std::string> baseline_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> baseline_plan(const Problem&, const PlanContext&);

// ---- single-kernel family (issue 3): single_kernel.cu and its neighbours ----
// single_kernel.cu — rla2m, rswbdl2m, rswmtla2m, swso; *_uncoalesced_plan: the same
// kernel with each thread on an adjacent t x t patch (PlaneMapping::uncoalesced).
std::optional<std::string> register_acc_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> register_acc_plan(const Problem&, const PlanContext&);
std::unique_ptr<Plan> register_acc_uncoalesced_plan(const Problem&, const PlanContext&);
std::optional<std::string> shared_weights_one_loader_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> shared_weights_one_loader_plan(const Problem&, const PlanContext&);
std::unique_ptr<Plan> shared_weights_one_loader_uncoalesced_plan(const Problem&, const PlanContext&);
std::optional<std::string> shared_weights_many_loaders_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> shared_weights_many_loaders_plan(const Problem&, const PlanContext&);
std::unique_ptr<Plan> shared_weights_many_loaders_uncoalesced_plan(const Problem&, const PlanContext&);
std::optional<std::string> shared_weights_shared_out_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> shared_weights_shared_out_plan(const Problem&, const PlanContext&);
std::unique_ptr<Plan> shared_weights_shared_out_uncoalesced_plan(const Problem&, const PlanContext&);
// half_baseline.cu — the study's halfprecision (baseline kernel on half data, half sum).
std::optional<std::string> half_baseline_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> half_baseline_plan(const Problem&, const PlanContext&);
std::unique_ptr<Plan> half_baseline_uncoalesced_plan(const Problem&, const PlanContext&);

// ---- multi-kernel family (issue 4): multi_kernel.cu and its neighbours ----
// multi_kernel.cu — Mk, Mk-sw-mt, Mk-sw-mt-si-c, Mk-sw-mt-si-c-half; multi_kernel_vec.cu —
// Mk-sw-mt-si-c-vec and exp-Mk-sw-mt-si-c-vec (single kernel, atomics). Shared code:
// multi_kernel.cuh.
std::optional<std::string> mk_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> mk_plan(const Problem&, const PlanContext&);
std::optional<std::string> mk_sw_mt_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> mk_sw_mt_plan(const Problem&, const PlanContext&);
std::optional<std::string> mk_sw_mt_si_c_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> mk_sw_mt_si_c_plan(const Problem&, const PlanContext&);
std::optional<std::string> mk_sw_mt_si_c_vec_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> mk_sw_mt_si_c_vec_plan(const Problem&, const PlanContext&);
std::optional<std::string> mk_sw_mt_si_c_half_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> mk_sw_mt_si_c_half_plan(const Problem&, const PlanContext&);
std::optional<std::string> exp_mk_sw_mt_si_c_vec_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> exp_mk_sw_mt_si_c_vec_plan(const Problem&, const PlanContext&);

}  // namespace cs::gpu::variants
