// The exact-fp32 fast family's entry points: each rung's supports() and simt-gemm's axes (host
// code, fp32fast_family.cpp, in every build) and each rung's plan (its .cu file, built with the
// kernels; the wgmma rungs' in the Hopper objects, sm_90a). fp32fast_family.cpp names the plans
// through CS_PLAN (family.hpp). A plan is made only for a problem its supports() accepted (the
// harness asks once per row; plans do not ask again); the canvas plan asks winograd-f4x4's of
// its canvas problem.
#pragma once

#include "family.hpp"
#include "variant.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cs::gpu::variants {

std::optional<std::string> winograd_f2x2_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_f2x2_plan(const Problem&, const PlanContext&);           // winograd_f2x2_3x3.cu
std::optional<std::string> winograd_f4x4_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_f4x4_plan(const Problem&, const PlanContext&);           // winograd_f4x4_3x3.cu
std::optional<std::string> winograd_f2x2_5x5_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_f2x2_5x5_plan(const Problem&, const PlanContext&);       // winograd_f2x2_5x5.cu
std::optional<std::string> winograd_f3x3_5x5_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_f3x3_5x5_plan(const Problem&, const PlanContext&);       // winograd_f3x3_5x5.cu
std::optional<std::string> winograd_3xfp16_f3x3_5x5_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_3xfp16_f3x3_5x5_plan(const Problem&, const PlanContext&);  // winograd_3xfp16.cu
std::optional<std::string> winograd_3xfp16_wgmma_f3x3_5x5_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_3xfp16_wgmma_f3x3_5x5_plan(const Problem&,
                                                          const PlanContext&);  // winograd_wgmma.cu
std::optional<std::string> winograd_3xfp16_wgmma_ws_f3x3_5x5_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_3xfp16_wgmma_ws_f3x3_5x5_plan(const Problem&,
                                                             const PlanContext&);  // winograd_wgmma_ws.cu
std::optional<std::string> winograd_f4x4_canvas_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_f4x4_canvas_plan(const Problem&, const PlanContext&);    // winograd_canvas.cu
std::optional<std::string> simt_gemm_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> simt_gemm_plan(const Problem&, const PlanContext&);               // simt_gemm.cu
std::vector<Axis> simt_gemm_axes();  // its tile and K parts (fp32fast_tiles.hpp: kSimtCfgs, kSimtSplits)
// Both of split_tf32.cu's rungs: split-tf32 (fp32 row: 3xTF32) and tf32-mma-1x (tf32 row: one product).
std::optional<std::string> split_tf32_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> split_tf32_plan(const PrecisionRow&, const Problem&, const PlanContext&);  // split_tf32.cu

}  // namespace cs::gpu::variants
