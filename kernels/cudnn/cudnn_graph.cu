// cudnn-fp32, cudnn-tf32, cudnn-fp16, cudnn-bf16 — the cuDNN anchors through cuDNN 9's graph
// (backend) API.
//
// What: one CONVOLUTION_FORWARD operation (cross-correlation, the layer's padding and
// stride, alpha 1, beta 0, no bias) in an operation graph, built with the cudnnBackend*
// descriptors of cudnn_graph.h (no cudnn-frontend header is installed here). Tensors are in
// the problem's layout: cuDNN always takes the dimensions as N,C,H,W (filters K,C,R,S) and
// the strides say the layout — nchw: x (CHW, HW, W, 1), w KCRS (CRS, RS, S, 1); nhwc:
// x (HWC, 1, WC, C), w KRSC (RSC, 1, SC, C), y likewise. The row's data type is the tensors'
// (float, half, bfloat16), the compute type is always float.
//
// Which engine: what PyTorch's benchmark mode does, over a larger set, with an accuracy gate.
//   1. Candidates: the engine configurations of heuristics mode A (= INSTANT) and mode B,
//      the FALLBACK list, and every engine of the graph's global engine list that neither
//      heuristic named (default knobs); de-duplicated by (engine id, knob choices).
//   2. Filtered by the engine's numerical notes for the row's precision class: every row
//      rejects DOWN_CONVERT_INPUTS (as PyTorch does) and REDUCED_PRECISION_REDUCTION (the
//      classes accumulate in float; fp16acc is another class); fp32 also rejects
//      TENSOR_CORE (on float data that is TF32: PyTorch with allow_tf32 off). Engines that
//      need runtime compilation (NVRTC, seconds each, in the row's set-up) are in the search on
//      channels-last shapes whose channel counts are multiples of 8 (rtc_allowed says why not
//      elsewhere), unless the run leaves them out (`--no-cudnn-rtc`: SearchMode::runtime_compiled);
//      detail() counts the ones left out.
//   3. Each remaining configuration is finalized into an execution plan; its workspace must
//      fit PlanContext::workspace_limit.
//   4. Each runs once on scratch data of the plan's largest batch (uniform [-1, 1), weights
//      scaled by sqrt(3/K): the study's distribution) and is compared with a naive direct
//      convolution on the GPU (float products, double sums, in the same layout): max|err| /
//      max|ref| must be within half the class threshold (tolerance.hpp). Winograd and FFT
//      engines that lose too much precision fall here (legacy cuDNN 9.14's Winograd was
//      1e-2 off on conv2 in fp32).
//   5. Timing, outside the timed region, L2 flushed before every sample like the harness's
//      repeats, CUDA events around one execution: 1 warm-up + 3 samples each, then the
//      configurations within 1.25x of the best (at most 6, and the remembered engine's best)
//      get 31-201 more samples (as many as a 150-millisecond budget buys), interleaved round-robin so clock
//      drift hits them alike. The fastest median wins — unless the engine chosen before for
//      this row (engine_choice.hpp: same device, cuDNN version, layer, batch, layout, class;
//      remembered across processes through the CLI's --engine-choices file) is within 3% of
//      it: then that engine stays. Medians of short kernels move by a few percent between
//      processes; the band was chosen by measurement of how often back-to-back sweeps chose
//      the same engine, against how far the anchor may then be from the fastest engine
//      measured (engine_choice.hpp, kKeepBand; git show 3ab0d79:gpu/variants/cudnn_graph.cu).
// The selection is cached per process (layer, N, layout, precision, chunk size), so every
// memory mode and every stream of a sweep runs the same engine; a plan whose workspace
// limit the cached choice exceeds selects anew.
//
// Plan::run builds no descriptor in the steady state: the execution plans for every batch
// size and byte alignment the harness will pass (the streams mode's chunks may start at
// 2-byte aligned addresses) are finalized in make_plan — the chosen configuration where
// it supports the shape, else the next-fastest accurate one —, and variant packs are
// cached per (x, w, y) pointers. cudnnSetStream when the stream changes, then
// cudnnBackendExecute.
//
// detail(): engine id, knobs, notes, workspace, selection time and error, the runner-up
// and the candidate counts. algo(): "winograd" / "fft" when the engine's numerical notes
// say so, else "library" (the notes do not tell implicit GEMM from direct kernels).
//
// Why beside the legacy rows (cudnn-legacy-*, cudnn.cu): cudnnFindConvolutionForwardAlgorithmEx
// reaches cuDNN's 8 legacy algorithm families only; the engine API reaches every engine
// configuration (Hopper's TMA/wgmma kernels among them), which is what PyTorch uses. The
// legacy rows alone ran slower than PyTorch's cuDNN at the same cuDNN version.
//
// The reference is PyTorch's cuDNN on the same layers, timed by scripts/pytorch_anchors.py
// (L2 flushed, median of its repeats). The gate: each row within 1.15x of PyTorch.
// Measured: these rows against PyTorch's per layer, batch, class and layout are in
// docs/findings.md, "The anchors" (the first check on the H200, with the engines chosen and
// the selection's cost: git show 3ab0d79:gpu/variants/cudnn_graph.cu). The global list
// reaches FFT and Winograd engines that are fp32-accurate here and not among PyTorch's
// candidates.
//
// Files (one translation unit: this file includes the four .cuh inside its anonymous
// namespace): cudnn_common.cuh (the screen's reduction, shared with the legacy rows),
// cudnn_graph_descriptors.cuh (descriptor owners, the operation graph, the execution plan),
// cudnn_graph_engine.cuh (the reference check, engine configurations), cudnn_graph_select.cuh
// (select_engine: candidates, trial runs, timing, choice), and here
// the Plan and its entry points (declared in cudnn_rungs.hpp). Host code elsewhere: errors and
// the handle in cudnn_common.hpp/.cpp (shared with the legacy rows), supports() and the family
// spec (cudnn_family) in cudnn_family.cpp.
#include "buffers.hpp"
#include "cuda_check.hpp"
#include "elements.cuh"
#include "engine_choice.hpp"
#include "error.hpp"
#include "cudnn_common.hpp"
#include "cudnn_rungs.hpp"
#include "tolerance.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cudnn_graph.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace cs::gpu::variants {
namespace {

using cudnn::Handle;
using cudnn::status_text;
using cudnn::throw_cudnn;

#include "cudnn_common.cuh"
#include "cudnn_graph_descriptors.cuh"
#include "cudnn_graph_engine.cuh"
#include "cudnn_graph_select.cuh"

// ---- the plan -------------------------------------------------------------------------

class GraphPlan final : public Plan {
public:
    // x_at_base: every run() passes x at a 16-byte aligned address, whatever the chunk.
    GraphPlan(const Problem& p, const PlanContext& ctx, Precision prec, bool x_at_base = false);
    void run(const DeviceIO& io, cudaStream_t stream) override;
    std::size_t workspace_bytes() const override { return ws_.bytes(); }
    std::string detail() const override { return detail_; }
    std::string algo() const override { return algo_; }
    double search_ms() const override { return search_ms_; }

private:
    using Built = BuiltPlan;
    // Builds the plan for a shape from the ranking (the chosen first); nullopt if none runs it
    // within `ws_cap` bytes of workspace.
    std::optional<Built> build(const Shape& s, std::size_t ws_cap) {
        return build_plan(handle_.get(), problem_.layer, problem_.layout, sp_, s, ranking_, ws_cap);
    }
    Built& plan_for(const Shape& s);

    Problem problem_;
    RowSpec sp_;
    Handle handle_;
    std::vector<Ranked> ranking_;
    std::map<Shape, Built> plans_;
    std::map<std::tuple<const void*, const void*, const void*, const void*>, BDesc> packs_;
    Buffer ws_;
    std::string detail_, algo_;
    double search_ms_ = std::numeric_limits<double>::quiet_NaN();  // the whole batch on the search's choice only
    cudaStream_t stream_ = nullptr;
};

GraphPlan::GraphPlan(const Problem& p, const PlanContext& ctx, Precision prec, bool x_at_base)
    : problem_(p), sp_(spec_of(prec)) {
    const Layer& l = p.layer;
    const std::int64_t nmax = ctx.max_chunk_N > 0 ? std::max<std::int64_t>(1, std::min(ctx.max_chunk_N, p.N)) : p.N;
    char key[256];
    std::snprintf(key, sizeof key, "%d,%d,%d,%d,%d,%d,%d,%d|%lld|%s|%s|%d", l.C, l.H, l.W, l.M, l.R, l.S, l.stride,
                  l.pad, static_cast<long long>(nmax), p.layout == Layout::nchw ? "nchw" : "nhwc", sp_.name,
                  ctx.device);
    // The search this run's memory already made for the row (the plans of one row search once).
    bool reused = false;
    const auto made = search_once(handle_.get(), std::string("cudnn-graph|") + key, p, sp_, nmax, ctx, reused);
    ranking_ = made->ranking;
    detail_ = made->detail;
    algo_ = made->algo;

    // Execution plans for every (batch, alignment) the harness will pass: chunks of nmax
    // images starting at image 0, nmax, 2*nmax, ... of a 256-byte aligned allocation.
    std::set<Shape> shapes;
    for (std::int64_t first = 0; first < p.N; first += nmax)
        shapes.insert({std::min(nmax, p.N - first),
                       x_at_base ? 16 : alignment_of(std::uintptr_t(l.input_elems(first)) * sp_.elem_bytes), 16,
                       alignment_of(std::uintptr_t(l.output_elems(first)) * sp_.elem_bytes)});
    std::size_t ws = 0;
    std::string fallbacks;
    for (const Shape& s : shapes) {
        auto b = build(s, ctx.workspace_limit);
        if (!b)
            throw cs::Skip("no accurate cuDNN engine configuration runs a chunk of " + std::to_string(s.n) +
                           " images at byte alignment " + std::to_string(s.align_x) + "/" + std::to_string(s.align_y));
        if (b->rank != 0)
            fallbacks += (fallbacks.empty() ? "" : ", ") + std::string("N=") + std::to_string(s.n) + " align " +
                         std::to_string(s.align_x) + "/" + std::to_string(s.align_y) + ": " +
                         recipe_text(ranking_[b->rank].recipe);
        ws = std::max(ws, b->exec.ws);
        plans_.emplace(s, std::move(*b));
    }
    ws_ = Buffer(MemKind::device, ws);
    // The search timed its choice on a chunk of nmax images: the row's time is that kernel's
    // only when one chunk is the batch and it runs on the choice (no fallback).
    if (nmax == p.N && fallbacks.empty()) search_ms_ = ranking_.front().ms;
    if (reused) detail_ += " (selection reused in this run)";
    if (!fallbacks.empty()) detail_ += "; chunks on other engines: " + fallbacks;
}

GraphPlan::Built& GraphPlan::plan_for(const Shape& s) {
    auto it = plans_.find(s);
    if (it != plans_.end()) return it->second;
    // A batch size or alignment the harness does not pass (make_plan prepared those):
    // host-side descriptor work only, within the workspace already allocated.
    auto b = build(s, ws_.bytes());
    if (!b)
        throw std::runtime_error("cuDNN graph plan: no prepared engine runs a batch of " + std::to_string(s.n) +
                                 " images at this alignment within the plan's workspace");
    return plans_.emplace(s, std::move(*b)).first->second;
}

void GraphPlan::run(const DeviceIO& io, cudaStream_t stream) {
    if (io.N <= 0) return;
    const Shape s{io.N, alignment_of(reinterpret_cast<std::uintptr_t>(io.in)),
                  alignment_of(reinterpret_cast<std::uintptr_t>(io.w)),
                  alignment_of(reinterpret_cast<std::uintptr_t>(io.out))};
    Built& b = plan_for(s);
    if (stream != stream_) {
        CS_CUDNN_CHECK(cudnnSetStream(handle_.get(), stream));
        stream_ = stream;
    }
    const auto key = std::make_tuple(static_cast<const void*>(b.exec.plan.get()), io.in, io.w,
                                     static_cast<const void*>(io.out));
    auto it = packs_.find(key);
    if (it == packs_.end()) {
        if (packs_.size() >= 256) packs_.clear();
        it = packs_.emplace(key, variant_pack(io.in, io.w, io.out, ws_.get())).first;
    }
    CS_CUDNN_CHECK(cudnnBackendExecute(handle_.get(), b.exec.plan.get(), it->second.get()));
}

}  // namespace

std::unique_ptr<Plan> cudnn_graph_plan(const PrecisionRow& row, const Problem& p, const PlanContext& ctx) {
    return std::make_unique<GraphPlan>(p, ctx, row.precision);
}
std::unique_ptr<Plan> cudnn_graph_plan_for(Precision prec, const Problem& p, const PlanContext& ctx, bool x_at_base) {
    return std::make_unique<GraphPlan>(p, ctx, prec, x_at_base);
}

}  // namespace cs::gpu::variants
