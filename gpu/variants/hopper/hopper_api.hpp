// The Hopper family's entry points beyond the registry's supports()/make_plan(): a plan with a
// chosen tile configuration, for the standalone tuning / test program
// (tools/dev/hopper/test_hopper.cu). The registry uses the default configuration (cfg = -1).
#pragma once

#include "variant.hpp"

#include <memory>
#include <optional>
#include <string>

namespace cs::gpu::variants::hopper {

// Rung 1 (wgmma_cpasync.cu): wgmma from shared memory filled by cp.async.
int cpasync_num_configs();
std::string cpasync_config_name(int cfg, DType dt = DType::f16);  // names in elements of dt
std::optional<std::string> cpasync_supports(const Problem& p, const cudaDeviceProp& prop);
// dt: DType::f16, DType::bf16 or DType::f32 (tf32: fp32 tensors, wgmma .tf32); cfg -1 = the
// default choice for the problem. Configurations are numbered alike for every dt: a tile's
// k-slice is a 128 B (or 64 B) row, i.e. 64 (32) halves or 32 (16) floats.
std::unique_ptr<Plan> cpasync_plan(DType dt, const Problem& p, const PlanContext& ctx, int cfg);

// Rung 2 (wgmma_tma.cu): wgmma from shared memory filled by TMA (im2col + tiled), mbarriers.
int tma_num_configs();
std::string tma_config_name(int cfg, DType dt = DType::f16);  // names in elements of dt
std::optional<std::string> tma_supports(const Problem& p, const cudaDeviceProp& prop);
std::unique_ptr<Plan> tma_plan(DType dt, const Problem& p, const PlanContext& ctx, int cfg);

// Rung 3 (wgmma_ws.cu): rung 2 + producer / consumer warpgroups (setmaxnreg), persistent grid.
int ws_num_configs();
std::string ws_config_name(int cfg, DType dt = DType::f16);  // names in elements of dt
// parts = 3: the 3xTF32 split (hopper-ws-3xtf32: fp32 tensors, K tripled).
std::optional<std::string> ws_supports(const Problem& p, const cudaDeviceProp& prop, int parts = 1);
std::unique_ptr<Plan> ws_plan(DType dt, const Problem& p, const PlanContext& ctx, int cfg);
// 3xTF32 on rung 3: each fp32 operand split into tf32 hi + lo parts by the transforms,
// hi*hi + hi*lo + lo*hi summed by the unchanged tf32 kernel over three channel blocks.
std::unique_ptr<Plan> ws_3xtf32_plan(const Problem& p, const PlanContext& ctx, int cfg);
// 3xFP16 on rung 3: the same split into half operands (fp32 problem; low parts scaled by 2^11).
std::unique_ptr<Plan> ws_3xfp16_plan(const Problem& p, const PlanContext& ctx, int cfg);

// Rung 4 (wgmma_pingpong.cuh on rung 3's kernel): ping-pong consumer warpgroups. Same
// configurations and supports() as rung 3; tiles wider than 128 filters are refused.
std::unique_ptr<Plan> pp_plan(DType dt, const Problem& p, const PlanContext& ctx, int cfg);

}  // namespace cs::gpu::variants::hopper
