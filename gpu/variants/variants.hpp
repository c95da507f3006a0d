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

// ---- single-kernel family: single_kernel.cu and its neighbours ----
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

// ---- multi-kernel family: multi_kernel.cu and its neighbours ----
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

// ---- GEMM family and course-project ideas ----
// gemm_im2col.cu, gemm_implicit.cu, gemm_implicit_idx.cu (SIMT tiled GEMM), gemm_wmma_fp16.cu,
// gemm_wmma_tf32.cu (tensor cores). Shared code: gemm_common.cuh, gemm_wmma.cuh.
std::optional<std::string> im2col_gemm_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> im2col_gemm_plan(const Problem&, const PlanContext&);
std::optional<std::string> implicit_gemm_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> implicit_gemm_plan(const Problem&, const PlanContext&);
std::optional<std::string> implicit_gemm_idx_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> implicit_gemm_idx_plan(const Problem&, const PlanContext&);
std::optional<std::string> wmma_fp16_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> wmma_fp16_plan(const Problem&, const PlanContext&);
std::optional<std::string> wmma_tf32_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> wmma_tf32_plan(const Problem&, const PlanContext&);

// ---- direct-convolution course-project ideas: constant memory, restrict+unroll, tiled input ----
// direct_const_weights.cu — filters in __constant__ memory, in chunks of M that fit 64 KB.
std::optional<std::string> const_weights_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> const_weights_plan(const Problem&, const PlanContext&);
// direct_restrict_unroll.cu — __restrict__ + compile-time filter size (11, 5, 3), generic fallback.
std::optional<std::string> restrict_unroll_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> restrict_unroll_plan(const Problem&, const PlanContext&);
// direct_tiled_input.cu — input tile + halo and filter slices in shared memory, register tile.
std::optional<std::string> tiled_input_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> tiled_input_plan(const Problem&, const PlanContext&);

// ---- anchors: cuDNN, cuBLAS ----
#ifdef CONVSTUDY_HAVE_CUDNN
// cudnn_graph.cu — cuDNN 9's graph (backend) API, NCHW or NHWC: the fastest accurate engine
// configuration of heuristics A, B, the fallback list and the global engine list, timed
// in make_plan. fp32 (no tensor cores), tf32, fp16 and bf16 (float compute).
std::optional<std::string> cudnn_fp32_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> cudnn_fp32_plan(const Problem&, const PlanContext&);
std::optional<std::string> cudnn_tf32_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> cudnn_tf32_plan(const Problem&, const PlanContext&);
std::optional<std::string> cudnn_fp16_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> cudnn_fp16_plan(const Problem&, const PlanContext&);
std::optional<std::string> cudnn_bf16_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> cudnn_bf16_plan(const Problem&, const PlanContext&);
// cudnn.cu — the legacy API (cudnnFindConvolutionForwardAlgorithmEx, NCHW): fp32 (FMA math,
// no TF32), tf32 (tensor-op math on float tensors), fp16 (half tensors, float accumulation).
std::optional<std::string> cudnn_legacy_fp32_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> cudnn_legacy_fp32_plan(const Problem&, const PlanContext&);
std::optional<std::string> cudnn_legacy_tf32_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> cudnn_legacy_tf32_plan(const Problem&, const PlanContext&);
std::optional<std::string> cudnn_legacy_fp16_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> cudnn_legacy_fp16_plan(const Problem&, const PlanContext&);
#endif
// cublas_im2col.cu — our im2col unroll + one cuBLAS GEMM per chunk of images + permute.
std::optional<std::string> cublas_im2col_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> cublas_im2col_plan(const Problem&, const PlanContext&);
std::optional<std::string> cublas_im2col_tf32_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> cublas_im2col_tf32_plan(const Problem&, const PlanContext&);
std::optional<std::string> cublas_im2col_fp16_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> cublas_im2col_fp16_plan(const Problem&, const PlanContext&);
std::optional<std::string> cublas_im2col_bf16_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> cublas_im2col_bf16_plan(const Problem&, const PlanContext&);

// ---- exact-fp32 fast family: Winograd, SIMT GEMM at cuBLAS speed, split-TF32 ----
// winograd_f2x2_3x3.cu, winograd_f4x4_3x3.cu (fused Winograd, 3x3 stride 1; shared kernel:
// winograd_fused.cuh), simt_gemm.cu, split_tf32.cu (3xTF32 and its 1xTF32 twin on mma.sync).
// Shared code: fp32fast_common.cuh.
std::optional<std::string> winograd_f2x2_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_f2x2_plan(const Problem&, const PlanContext&);
std::optional<std::string> winograd_f4x4_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_f4x4_plan(const Problem&, const PlanContext&);
// winograd_canvas.cu: winograd-f4x4 on canvases of 4x4 images (less border waste).
std::optional<std::string> winograd_f4x4_canvas_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_f4x4_canvas_plan(const Problem&, const PlanContext&);
// winograd_f2x2_5x5.cu, winograd_f3x3_5x5.cu: fused Winograd F(2x2,5x5), F(3x3,5x5) (5x5 stride 1,
// conv2; the kernel of winograd_fused.cuh generalised to the filter size).
std::optional<std::string> winograd_f2x2_5x5_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_f2x2_5x5_plan(const Problem&, const PlanContext&);
std::optional<std::string> winograd_f3x3_5x5_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_f3x3_5x5_plan(const Problem&, const PlanContext&);
// winograd_3xfp16.cu: Winograd F(3x3,5x5) with the position GEMMs on mma.sync as 3xFP16 and the
// output transform folded in per position (transforms in two small kernels before it).
std::optional<std::string> winograd_3xfp16_f3x3_5x5_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_3xfp16_f3x3_5x5_plan(const Problem&, const PlanContext&);
// hopper/winograd_wgmma.cu: the same on wgmma (sm_90a); shared pieces: winograd_3xfp16.cuh.
std::optional<std::string> winograd_3xfp16_wgmma_f3x3_5x5_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_3xfp16_wgmma_f3x3_5x5_plan(const Problem&, const PlanContext&);
std::optional<std::string> winograd_3xfp16_wgmma_ws_f3x3_5x5_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> winograd_3xfp16_wgmma_ws_f3x3_5x5_plan(const Problem&, const PlanContext&);
std::optional<std::string> simt_gemm_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> simt_gemm_plan(const Problem&, const PlanContext&);
std::optional<std::string> split_tf32_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> split_tf32_plan(const Problem&, const PlanContext&);
std::optional<std::string> tf32_mma_supports(const Problem&, const cudaDeviceProp&);
std::unique_ptr<Plan> tf32_mma_plan(const Problem&, const PlanContext&);

}  // namespace cs::gpu::variants
