// The registry: every variant convstudy knows, in one table. The CLI, the tests and the
// CSV take names from here; nothing else lists variants.
//
// Columns: name, study aliases (an alias may imply a memory mode), family, precision,
// element type on the bus, the idea in one line, deterministic?, supports(), make_plan().
#include "error.hpp"
#include "family.hpp"
#include "variant.hpp"
#include "variants/families.hpp"
#include "variants/variants.hpp"

#include <algorithm>
#include <cctype>

namespace cs::gpu {

namespace v = variants;

namespace {
// Rows not yet written as family specs (families.hpp lists the ones that are).
std::vector<Variant> legacy_rows() {
    static const std::vector<Variant> table = {
        {"baseline", {{"Mcpy", "pageable"}, {"UM", "managed"}}, "baseline", Precision::fp32, DType::f32,
         "one thread per output, sum kept in global memory (study: Mcpy, UM in managed memory)", true,
         v::baseline_supports, v::baseline_plan},
        // ---- single-kernel family ----
        // gpu/variants/single_kernel.cu and half_baseline.cu. Each has an `-uncoalesced`
        // twin (Table 8): each thread on an adjacent t x t patch of outputs; identical to
        // the coalesced one where a plane fits a block (t = 1: conv2-5).
        {"register-acc", {{"rla2m", ""}}, "single-kernel", Precision::fp32, DType::f32,
         "sum in a register, one coalesced store per output, filter read from global memory", true,
         v::register_acc_supports, v::register_acc_plan},
        {"register-acc-uncoalesced", {{"rla2m-nc", ""}}, "single-kernel", Precision::fp32, DType::f32,
         "register-acc with each thread on an adjacent t x t output patch (t=1: same as coalesced)", true,
         v::register_acc_supports, v::register_acc_uncoalesced_plan},
        {"shared-weights-one-loader", {{"rswbdl2m", ""}, {"rswbdla2m", ""}}, "single-kernel", Precision::fp32,
         DType::f32, "filter in shared memory copied by ONE thread while the block waits; sum in a register", true,
         v::shared_weights_one_loader_supports, v::shared_weights_one_loader_plan},
        {"shared-weights-one-loader-uncoalesced", {{"rswbdl2m-nc", ""}, {"rswbdla2m-nc", ""}}, "single-kernel",
         Precision::fp32, DType::f32,
         "shared-weights-one-loader with each thread on an adjacent t x t output patch (t=1: same as coalesced)",
         true, v::shared_weights_one_loader_supports, v::shared_weights_one_loader_uncoalesced_plan},
        {"shared-weights-many-loaders", {{"rswmtla2m", ""}}, "single-kernel", Precision::fp32, DType::f32,
         "filter in shared memory copied by C*R*S threads (K <= block) or R*S threads (a tap each); sum in a register",
         true, v::shared_weights_many_loaders_supports, v::shared_weights_many_loaders_plan},
        {"shared-weights-many-loaders-uncoalesced", {{"rswmtla2m-nc", ""}}, "single-kernel", Precision::fp32,
         DType::f32,
         "shared-weights-many-loaders with each thread on an adjacent t x t output patch (t=1: same as coalesced)",
         true, v::shared_weights_many_loaders_supports, v::shared_weights_many_loaders_uncoalesced_plan},
        {"shared-weights-shared-out", {{"swso", ""}}, "single-kernel", Precision::fp32, DType::f32,
         "filter in shared memory (one loader) and each running sum in a shared-memory slot, not a register", true,
         v::shared_weights_shared_out_supports, v::shared_weights_shared_out_plan},
        {"shared-weights-shared-out-uncoalesced", {{"swso-nc", ""}}, "single-kernel", Precision::fp32, DType::f32,
         "shared-weights-shared-out with each thread on an adjacent t x t output patch (t=1: same as coalesced)",
         true, v::shared_weights_shared_out_supports, v::shared_weights_shared_out_uncoalesced_plan},
        {"half-baseline", {{"halfprecision", ""}, {"half-precision", ""}}, "single-kernel", Precision::fp16acc,
         DType::f16, "the baseline on half data: half sum kept in global memory (the harness converts float to half on the GPU)",
         true, v::half_baseline_supports, v::half_baseline_plan},
        {"half-baseline-uncoalesced", {{"halfprecision-nc", ""}, {"half-precision-nc", ""}}, "single-kernel",
         Precision::fp16acc, DType::f16,
         "half-baseline with each thread on an adjacent t x t output patch (t=1: same as coalesced)", true,
         v::half_baseline_supports, v::half_baseline_uncoalesced_plan},
        // ---- multi-kernel family ----
        // ---- GEMM family ----
        // gpu/variants/gemm_*.cu (shared: gemm_common.cuh, gemm_wmma.cuh). GEMM view: W (M x K)
        // times the unrolled input (K x N*E*F); tiles chosen per layer and batch in make_plan.
        {"im2col-gemm", {}, "gemm", Precision::fp32, DType::f32,
         "im2col kernel writes the K x N*E*F matrix (workspace, chunked over the batch), then our shared-memory "
         "tiled SGEMM writes NCHW",
         true, v::im2col_gemm_supports, v::im2col_gemm_plan, "gemm"},
        {"implicit-gemm", {}, "gemm", Precision::fp32, DType::f32,
         "the same tiled SGEMM with the unroll folded into its B-tile loads (no buffer), indices decoded by division "
         "per element",
         true, v::implicit_gemm_supports, v::implicit_gemm_plan, "gemm"},
        {"implicit-gemm-idx", {}, "gemm", Precision::fp32, DType::f32,
         "implicit-gemm with index reuse: (n,e,f) once per thread, each k-tile's (c,r,s) once per block in a shared "
         "table",
         true, v::implicit_gemm_idx_supports, v::implicit_gemm_idx_plan, "gemm"},
        {"wmma-fp16", {}, "gemm", Precision::fp16, DType::f16,
         "implicit GEMM with index reuse on tensor cores: WMMA 16x16x16 half fragments, fp32 accumulation",
         true, v::wmma_fp16_supports, v::wmma_fp16_plan, "gemm"},
        {"wmma-tf32", {}, "gemm", Precision::tf32, DType::f32,
         "implicit GEMM with index reuse on tensor cores: WMMA 16x16x8 tf32 fragments, fp32 accumulation",
         true, v::wmma_tf32_supports, v::wmma_tf32_plan, "gemm"},
        // ---- direct-convolution course-project ideas ----
        // gpu/variants/direct_*.cu: the course reports' constant-memory mask, restrict +
        // unrolling, and shared-memory input tiling, each on the direct convolution.
        {"const-weights", {}, "direct", Precision::fp32, DType::f32,
         "filters in __constant__ memory (broadcast reads), in chunks of M that fit 64 KB: a device-to-device "
         "copy + a launch per chunk",
         true, v::const_weights_supports, v::const_weights_plan},
        {"restrict-unroll", {}, "direct", Precision::fp32, DType::f32,
         "register-acc with __restrict__ pointers and the filter size compile-time (11, 5, 3: loops fully "
         "unrolled), a generic fallback",
         true, v::restrict_unroll_supports, v::restrict_unroll_plan},
        {"tiled-input", {}, "direct", Precision::fp32, DType::f32,
         "a block stages its input tile + halo and the filters' channel slices in shared memory; 2 rows x 8-16 "
         "filters per thread",
         true, v::tiled_input_supports, v::tiled_input_plan},
        // ---- anchors ----
        // gpu/variants/cudnn.cu (only when cuDNN was found: CONVSTUDY_HAVE_CUDNN) and
        // gpu/variants/cublas_im2col.cu. The libraries people use, in the same harness;
        // vs_cudnn divides cudnn-fp32's (fp16 rows: cudnn-fp16's) kernel_ms by each row's.
#ifdef CONVSTUDY_HAVE_CUDNN
        // gpu/variants/cudnn_graph.cu: cuDNN 9's graph API, the fastest accurate engine config.
        {"cudnn-fp32", {}, "cudnn", Precision::fp32, DType::f32,
         "cuDNN graph API on float tensors: fastest fp32-accurate engine config of heuristics A/B, fallback and the "
         "global list, no tensor cores (TF32 off)",
         false, v::cudnn_fp32_supports, v::cudnn_fp32_plan, "library", {Layout::nchw, Layout::nhwc}},
        {"cudnn-tf32", {}, "cudnn", Precision::tf32, DType::f32,
         "cuDNN graph API on float tensors, tensor cores (TF32) allowed: fastest tf32-accurate engine config", false,
         v::cudnn_tf32_supports, v::cudnn_tf32_plan, "library", {Layout::nchw, Layout::nhwc}},
        {"cudnn-fp16", {}, "cudnn", Precision::fp16, DType::f16,
         "cuDNN graph API on half tensors, float compute: fastest fp16-accurate engine config", false,
         v::cudnn_fp16_supports, v::cudnn_fp16_plan, "library", {Layout::nchw, Layout::nhwc}},
        {"cudnn-bf16", {}, "cudnn", Precision::bf16, DType::bf16,
         "cuDNN graph API on bfloat16 tensors, float compute: fastest bf16-accurate engine config", false,
         v::cudnn_bf16_supports, v::cudnn_bf16_plan, "library", {Layout::nchw, Layout::nhwc}},
        // gpu/variants/cudnn.cu: the legacy API's Find (8 algorithm families), NCHW only.
        {"cudnn-legacy-fp32", {}, "cudnn-legacy", Precision::fp32, DType::f32,
         "cuDNN legacy API: fastest of cudnnFindConvolutionForwardAlgorithmEx that is FMA math (TF32 off) and "
         "fp32-accurate",
         false, v::cudnn_legacy_fp32_supports, v::cudnn_legacy_fp32_plan, "library"},
        {"cudnn-legacy-tf32", {}, "cudnn-legacy", Precision::tf32, DType::f32,
         "cuDNN legacy API on float tensors, tensor-op math (TF32 allowed): fastest tf32-accurate algorithm found",
         false, v::cudnn_legacy_tf32_supports, v::cudnn_legacy_tf32_plan, "library"},
        {"cudnn-legacy-fp16", {}, "cudnn-legacy", Precision::fp16, DType::f16,
         "cuDNN legacy API on half tensors, float accumulation, tensor-op math: fastest fp16-accurate algorithm found",
         false, v::cudnn_legacy_fp16_supports, v::cudnn_legacy_fp16_plan, "library"},
#endif
        {"cublas-im2col", {}, "cublas", Precision::fp32, DType::f32,
         "our im2col unroll, then one cublasSgemm per chunk of images (no TF32) and a permute to NCHW", true,
         v::cublas_im2col_supports, v::cublas_im2col_plan, "gemm"},
        {"cublas-im2col-tf32", {}, "cublas", Precision::tf32, DType::f32,
         "our im2col unroll, then cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32 and a permute to NCHW", true,
         v::cublas_im2col_tf32_supports, v::cublas_im2col_tf32_plan, "gemm"},
        {"cublas-im2col-fp16", {}, "cublas", Precision::fp16, DType::f16,
         "our im2col unroll on half data, then cublasGemmEx (half in/out, float accumulation) and a permute", true,
         v::cublas_im2col_fp16_supports, v::cublas_im2col_fp16_plan, "gemm"},
        {"cublas-im2col-bf16", {}, "cublas", Precision::bf16, DType::bf16,
         "our im2col unroll on bfloat16 data, then cublasGemmEx (bf16 in/out, float accumulation) and a permute",
         true, v::cublas_im2col_bf16_supports, v::cublas_im2col_bf16_plan, "gemm"},
        // ---- exact-fp32 fast family ----
        // gpu/variants/winograd_f2x2_3x3.cu, winograd_f4x4_3x3.cu (kernel: winograd_fused.cuh),
        // simt_gemm.cu, split_tf32.cu (shared: fp32fast_common.cuh). fp32-class results faster than
        // the FMA floor of a plain implicit GEMM; tf32-mma-1x is split-tf32's kernel with one product,
        // to show the error the split removes. NCHW; Winograd needs 3x3 or 5x5 stride 1.
        // gpu/variants/winograd_f2x2_5x5.cu, winograd_f3x3_5x5.cu: the same kernel for 5x5 filters (conv2).
        {"winograd-f2x2", {}, "fp32-fast", Precision::fp32, DType::f32,
         "fused Winograd F(2x2,3x3): filter transform each run, input transform in shared memory, 16 batched "
         "channel GEMMs in registers, output transform in the epilogue",
         true, v::winograd_f2x2_supports, v::winograd_f2x2_plan, "winograd"},
        {"winograd-f4x4", {}, "fp32-fast", Precision::fp32, DType::f32,
         "fused Winograd F(4x4,3x3): as winograd-f2x2 with 6x6 windows, 36 GEMMs, 4x fewer multiplies", true,
         v::winograd_f4x4_supports, v::winograd_f4x4_plan, "winograd"},
        {"winograd-f2x2-5x5", {}, "fp32-fast", Precision::fp32, DType::f32,
         "fused Winograd F(2x2,5x5) (points 0, +-1, 2, -1/2, inf) for conv2: the fused kernel generalised to 5x5 "
         "filters, 6x6 windows, 36 batched channel GEMMs, 2.78x fewer multiplies than direct",
         true, v::winograd_f2x2_5x5_supports, v::winograd_f2x2_5x5_plan, "winograd"},
        {"winograd-f3x3-5x5", {}, "fp32-fast", Precision::fp32, DType::f32,
         "fused Winograd F(3x3,5x5) (points 0, +-1, +-2, 1/2, inf): 7x7 windows, 49 batched channel GEMMs, 4.59x "
         "fewer multiplies than direct; 27x27 outputs = 9x9 tiles, no border waste",
         true, v::winograd_f3x3_5x5_supports, v::winograd_f3x3_5x5_plan, "winograd"},
        {"winograd-3xfp16-f3x3-5x5", {}, "fp32-fast", Precision::fp32, DType::f32,
         "winograd-f3x3-5x5's 49 position GEMMs on the tensor cores (mma.sync m16n8k16) as 3xFP16: transforms "
         "split into fp16 hi + lo, hi*hi + hi*lo + lo*hi in fp32, each position folded into the 3x3 outputs at once",
         true, v::winograd_3xfp16_f3x3_5x5_supports, v::winograd_3xfp16_f3x3_5x5_plan, "winograd"},
        {"winograd-3xfp16-wgmma-f3x3-5x5", {}, "fp32-fast", Precision::fp32, DType::f32,
         "winograd-3xfp16-f3x3-5x5 with the position GEMMs on wgmma m64n32k16 from 128 B-swizzled shared memory, "
         "fed by TMA (one warpgroup of 64 tiles x 32 filters, 2 blocks/SM): no fragment registers, no copy "
         "instructions, products in flight while the next stage loads",
         true, v::winograd_3xfp16_wgmma_f3x3_5x5_supports, v::winograd_3xfp16_wgmma_f3x3_5x5_plan, "winograd"},
        {"winograd-3xfp16-wgmma-ws-f3x3-5x5", {}, "fp32-fast", Precision::fp32, DType::f32,
         "winograd-3xfp16-wgmma-f3x3-5x5 warp-specialised, blocks of 64 tiles x 64 filters: an MMA warpgroup "
         "(wgmma m64n64k16, TMA) hands each position's products through shared memory to two fold warpgroups; "
         "the outputs leave through shared memory as whole rows",
         true, v::winograd_3xfp16_wgmma_ws_f3x3_5x5_supports, v::winograd_3xfp16_wgmma_ws_f3x3_5x5_plan, "winograd"},
        {"winograd-f4x4-canvas", {}, "fp32-fast", Precision::fp32, DType::f32,
         "winograd-f4x4 on canvases of 4x4 images a pad apart (pack and unpack kernels around it): 86% of the "
         "tiles' outputs used on 13x13 planes instead of 66%",
         true, v::winograd_f4x4_canvas_supports, v::winograd_f4x4_canvas_plan, "winograd"},
        {"simt-gemm", {}, "fp32-fast", Precision::fp32, DType::f32,
         "implicit GEMM built like cuBLAS SGEMM: transposed weights, plan-time im2col table, 3-stage cp.async, "
         "warp tiles, 8x8 per thread, double-buffered fragments, k-tiles of 16, split-K where the tiles are few",
         true, v::simt_gemm_supports, v::simt_gemm_plan, "gemm"},
        {"split-tf32", {}, "fp32-fast", Precision::fp32, DType::f32,
         "3xTF32 implicit GEMM on mma.sync m16n8k8: each operand split into tf32 hi + lo, three products in fp32",
         true, v::split_tf32_supports, v::split_tf32_plan, "gemm"},
        {"tf32-mma-1x", {}, "fp32-fast", Precision::tf32, DType::f32,
         "split-tf32's kernel with one product (hi x hi): plain TF32 on mma.sync, for the error comparison", true,
         v::tf32_mma_supports, v::tf32_mma_plan, "gemm"},
        // gpu/variants/multi_kernel.cu, multi_kernel_vec.cu (shared code: multi_kernel.cuh).
        // Workspace C*N*M*E*F partials, cut into chunks of images (and channel groups when
        // one image does not fit) to stay under the plan's workspace limit.
        {"mk", {{"Mk", ""}}, "multi-kernel", Precision::fp32, DType::f32,
         "N x M x C blocks each write one channel's partial plane to a workspace, the running sum kept in that "
         "global slot (read-add-write per tap, as the study's Mk); a 2nd kernel sums over C in fixed order",
         true, v::mk_supports, v::mk_plan},
        {"mk-sw-mt", {{"Mk-sw-mt", ""}}, "multi-kernel", Precision::fp32, DType::f32,
         "mk + the channel's R x S filter slice in shared memory, staged by all threads, and the sum in a register", true, v::mk_sw_mt_supports,
         v::mk_sw_mt_plan},
        {"mk-sw-mt-si-c", {{"Mk-sw-mt-si-c", ""}}, "multi-kernel", Precision::fp32, DType::f32,
         "mk-sw-mt + the channel's input plane in shared memory where the device's opt-in limit allows; coalesced "
         "conv1 mapping",
         true, v::mk_sw_mt_si_c_supports, v::mk_sw_mt_si_c_plan},
        {"mk-sw-mt-si-c-vec", {{"Mk-sw-mt-si-c-vec", ""}}, "multi-kernel", Precision::fp32, DType::f32,
         "mk-sw-mt-si-c + float4 loads (alignment checked at run time), float4 filter rows, unrolled rows", true,
         v::mk_sw_mt_si_c_vec_supports, v::mk_sw_mt_si_c_vec_plan},
        {"mk-sw-mt-si-c-half", {{"Mk-sw-mt-si-c-half", ""}}, "multi-kernel", Precision::fp16, DType::f16,
         "mk-sw-mt-si-c on half data: float products and sums, half workspace, half output", true,
         v::mk_sw_mt_si_c_half_supports, v::mk_sw_mt_si_c_half_plan},
        {"exp-mk-sw-mt-si-c-vec", {{"exp-Mk-sw-mt-si-c-vec", ""}}, "multi-kernel", Precision::fp32, DType::f32,
         "single kernel: mk-sw-mt-si-c-vec's per-channel partials atomicAdd-ed into the zeroed output, no workspace",
         false, v::exp_mk_sw_mt_si_c_vec_supports, v::exp_mk_sw_mt_si_c_vec_plan},
    };
    return table;
}
}  // namespace

const std::vector<Variant>& registry() {
    static const std::vector<Variant> table = [] {
        std::vector<Variant> t;
        for (const auto& f : v::families()) {
            if (f.name == "legacy") {
                for (const auto& r : legacy_rows()) t.push_back(r);
                continue;
            }
            for (auto& r : expand(f)) t.push_back(std::move(r));
        }
        return t;
    }();
    return table;
}

PrecisionRow row_fp32() { return {Precision::fp32, DType::f32, "fp32"}; }
PrecisionRow row_tf32() { return {Precision::tf32, DType::f32, "tf32"}; }
PrecisionRow row_fp16() { return {Precision::fp16, DType::f16, "fp16"}; }
PrecisionRow row_bf16() { return {Precision::bf16, DType::bf16, "bf16"}; }

namespace {
std::string fill(std::string s, const std::string& suffix) {
    for (std::size_t i; (i = s.find("{p}")) != std::string::npos;) s.replace(i, 3, suffix);
    return s;
}
}  // namespace

std::vector<Variant> expand(const Family& f) {
    std::vector<Variant> out;
    for (const auto& r : f.rungs) {
        if (r.rows.size() != 1 && !r.aliases.empty())
            throw Error("registry: rung " + r.name + " has aliases but " + std::to_string(r.rows.size()) + " rows");
        for (const auto& row : r.rows) {
            Variant v;
            v.name = fill(r.name, row.suffix);
            v.aliases = r.aliases;
            v.family = f.name;
            v.precision = row.precision;
            v.io = row.io;
            v.idea = fill(r.idea, row.suffix);
            v.deterministic = r.deterministic;
            v.supports = [fn = r.supports, row](const Problem& p, const cudaDeviceProp& prop) { return fn(row, p, prop); };
            v.make_plan = [fn = r.make_plan, row](const Problem& p, const PlanContext& c) { return fn(row, p, c); };
            v.algo = r.algo;
            v.layouts = r.layouts;
            v.axes = f.axes;
            v.axes.insert(v.axes.end(), r.axes.begin(), r.axes.end());
            out.push_back(std::move(v));
        }
    }
    return out;
}

RungSupports plain(PlainSupports f) {
    return [f](const PrecisionRow&, const Problem& p, const cudaDeviceProp& prop) { return f(p, prop); };
}
RungPlan plain(PlainPlan f) {
    return [f](const PrecisionRow&, const Problem& p, const PlanContext& c) { return f(p, c); };
}

std::string Config::get(std::string_view axis) const {
    for (const auto& [k, v] : set)
        if (k == axis) return v;
    return {};
}

std::string Config::str() const {
    std::string s;
    for (const auto& [k, v] : set) s += (s.empty() ? "" : ";") + k + "=" + v;
    return s;
}

std::optional<std::string> config_error(const Variant& v, const Config& c) {
    for (const auto& [k, val] : c.set) {
        const Axis* ax = nullptr;
        for (const auto& a : v.axes)
            if (a.name == k) ax = &a;
        if (!ax) {
            std::string names;
            for (const auto& a : v.axes) names += (names.empty() ? "" : ", ") + a.name;
            return v.name + " has no axis '" + k + "'" + (names.empty() ? " (it has none)" : " (its axes: " + names + ")");
        }
        if (std::find(ax->values.begin(), ax->values.end(), val) == ax->values.end()) {
            std::string vals;
            for (const auto& x : ax->values) vals += (vals.empty() ? "" : ", ") + x;
            return "'" + val + "' is not a value of " + v.name + "'s axis " + k + " (values: " + vals + ")";
        }
    }
    return std::nullopt;
}

std::pair<std::string, std::vector<std::string>> parse_axis_arg(std::string_view text) {
    const auto eq = text.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size())
        throw Error("--axis takes NAME=VALUE[,VALUE...] (or NAME=all), not '" + std::string(text) + "'");
    std::pair<std::string, std::vector<std::string>> r{std::string(text.substr(0, eq)), {}};
    std::string_view rest = text.substr(eq + 1);
    while (!rest.empty()) {
        const auto c = rest.find(',');
        const std::string_view one = rest.substr(0, c);
        if (one.empty()) throw Error("--axis " + std::string(text) + ": an empty value");
        r.second.emplace_back(one);
        if (c == std::string_view::npos) break;
        rest = rest.substr(c + 1);
    }
    return r;
}

std::vector<std::string> expand_axis_values(const Variant& v, const std::string& axis,
                                            const std::vector<std::string>& requested) {
    const Axis* ax = nullptr;
    for (const auto& a : v.axes)
        if (a.name == axis) ax = &a;
    if (!ax) return {};
    std::vector<std::string> out;
    for (const auto& r : requested) {
        if (r == "all") {
            for (const auto& x : ax->values)
                if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
        } else if (r == "default") {
            if (std::find(out.begin(), out.end(), "") == out.end()) out.push_back("");
        } else if (std::find(ax->values.begin(), ax->values.end(), r) != ax->values.end() &&
                   std::find(out.begin(), out.end(), r) == out.end()) {
            out.push_back(r);  // a value this variant's axis lacks is not a row of it
        }
    }
    return out;
}

std::string_view to_string(Precision p) {
    switch (p) {
        case Precision::fp32: return "fp32";
        case Precision::tf32: return "tf32";
        case Precision::fp16: return "fp16";
        case Precision::bf16: return "bf16";
        case Precision::fp16acc: return "fp16acc";
    }
    return "?";
}

std::string_view to_string(DType d) {
    switch (d) {
        case DType::f32: return "f32";
        case DType::f16: return "f16";
        case DType::bf16: return "bf16";
    }
    return "?";
}

std::string_view to_string(Layout l) { return l == Layout::nchw ? "nchw" : "nhwc"; }

const std::vector<Layout>& all_layouts() {
    static const std::vector<Layout> l = {Layout::nchw, Layout::nhwc};
    return l;
}

std::optional<Layout> parse_layout(std::string_view s) {
    for (auto l : all_layouts())
        if (to_string(l) == s) return l;
    return std::nullopt;
}

namespace {
bool iequal(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}
}  // namespace

VariantRef find_variant(std::string_view name) {
    for (const auto& v : registry()) {
        if (iequal(v.name, name)) return {&v, ""};
        for (const auto& a : v.aliases)
            if (iequal(a.name, name)) return {&v, a.memory};
    }
    return {};
}

std::string variant_names_for_help() {
    std::string s;
    for (const auto& v : registry()) {
        if (!s.empty()) s += ", ";
        s += v.name;
        if (!v.aliases.empty()) {
            s += " (";
            for (std::size_t i = 0; i < v.aliases.size(); ++i) s += (i ? ", " : "") + v.aliases[i].name;
            s += ")";
        }
    }
#ifndef CONVSTUDY_HAVE_CUDNN
    s += "; unavailable in this build: cudnn-fp32, cudnn-tf32, cudnn-fp16, cudnn-bf16, cudnn-legacy-fp32, "
         "cudnn-legacy-tf32, cudnn-legacy-fp16 (cuDNN was not found when it was configured)";
#endif
    return s;
}

}  // namespace cs::gpu
