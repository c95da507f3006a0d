// cuDNN's side of a chain run (cudnn_chain.hpp): per layer one graph-API operation graph of
// convolution + bias + ReLU, then, for a layer that pools, cuDNN's pooling.
//
// The graph: the cudnn-<class> rows' convolution (cudnn_graph_descriptors.cuh, build_graph:
// cross-correlation, the layer's padding and stride, dilation 1, float compute, tensors in the
// layout by their strides) with an Epilogue appended: its output a virtual float tensor, then a
// pointwise ADD of the bias (1 x M x 1 x 1 of the element type, strides of the layout) and a
// pointwise RELU_FWD, each in float, the last op writing y in the element type (an intermediate of
// the two a virtual float tensor too). A layer without bias leaves out the ADD, one without ReLU
// the RELU_FWD; a layer with neither is the plain convolution graph, the anchors' own.
//
// Which engine: the anchors' search (cudnn_graph_select.cuh, select_engine) on this graph —
// heuristics A and B, the fallback list and the global engine list (runtime-compiled engines where
// rtc_allowed lets them in), the same notes filter per class, every configuration finalized within
// PlanContext::workspace_limit, run once on the search's scratch data and screened, then timed
// with L2 flushed, the choice remembered under the row's engine-choices key with the epilogue
// appended ("...|fp32|convolution + bias + ReLU"; a plain graph's key is the anchor's). The
// screen is the anchors' screen: the naive direct convolution on the GPU (float products, double
// sums) with the bias added and ReLU applied in float (epilogue_reference), the scratch bias
// uniform in [-0.5, 0.5) times 1/sqrt(3) like the generator's; max|err| / max|ref| within half the
// class threshold (tolerance.hpp), as for the anchors. No engine that runs the fused graph:
// cs::Skip naming the graph, the class, the layout and what the search saw.
//
// The pooling: legacy cudnnPoolingForward (CUDNN_POOLING_MAX, 3x3 window, stride 2, no padding,
// CUDNN_PROPAGATE_NAN), 4-D descriptors in the layout (CUDNN_TENSOR_NCHW or CUDNN_TENSOR_NHWC),
// from conv_out into pooled (deprecated in cuDNN 9, still supported; no engine to search). Its
// output size is checked against maxpool3x3s2_size at plan time, and one pooling of a single image
// runs there too, so that a type or layout cuDNN's pooling refuses is a cs::Skip of the plan, not
// an error inside a captured run.
//
// run() enqueues on the stream given: cudnnSetStream, cudnnBackendExecute with a variant pack
// cached per (in, w, bias, conv_out) pointers (host-side descriptor work on a new set only), and
// the pooling. No device allocation, no host sync: the chain captures it into a CUDA graph. The
// execution plan is built at plan time for the layer's N with every tensor 16-byte aligned (what
// cudaMalloc gives), and its workspace allocated there (Buffer, freed with the object); run()
// refuses a pointer that is not 16-byte aligned.
//
// One translation unit with its own copy of the anchors' descriptors and search: it includes
// cudnn_common.cuh and the three cudnn_graph_*.cuh inside its anonymous namespace, as
// cudnn_graph.cu does. Built only with the kernels and cuDNN (CMakeLists.txt).
#include "cudnn_chain.hpp"

#include "buffers.hpp"
#include "cuda_check.hpp"
#include "cudnn_common.hpp"
#include "cudnn_legacy.hpp"
#include "elements.cuh"
#include "engine_choice.hpp"
#include "error.hpp"
#include "tolerance.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cudnn.h>
#include <cudnn_graph.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
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

namespace cs::gpu {
namespace variants {
namespace {

using cudnn::Handle;
using cudnn::status_text;
using cudnn::throw_cudnn;

#include "cudnn_common.cuh"
#include "cudnn_graph_descriptors.cuh"
#include "cudnn_graph_engine.cuh"
#include "cudnn_graph_select.cuh"

// ---- the pooling ----------------------------------------------------------------------

// The 3x3 stride-2 max-pool of a layer's conv output, in the chain's layout and element type.
struct Pooling {
    cudnn_legacy::PoolDesc pool;
    cudnn_legacy::TensorDesc x, y;
};

void set_tensor(const cudnn_legacy::TensorDesc& d, Layout layout, cudnnDataType_t t, std::int64_t n, int c, int h,
                int w) {
    const cudnnTensorFormat_t f = layout == Layout::nchw ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
    CS_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d.get(), f, t, int(n), c, h, w));
}

// The pooling's descriptors for n images of the layer's conv output; cs::Error when cuDNN's output
// size is not maxpool3x3s2_size's (the chain's reference, reference/network_ref.hpp).
std::unique_ptr<Pooling> make_pooling(const Layer& l, std::int64_t n, Layout layout, cudnnDataType_t t) {
    auto p = std::make_unique<Pooling>();
    CS_CUDNN_CHECK(
        cudnnSetPooling2dDescriptor(p->pool.get(), CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN, 3, 3, 0, 0, 2, 2));
    set_tensor(p->x, layout, t, n, l.M, l.E(), l.F());
    int dims[4] = {0, 0, 0, 0};
    CS_CUDNN_CHECK(
        cudnnGetPooling2dForwardOutputDim(p->pool.get(), p->x.get(), &dims[0], &dims[1], &dims[2], &dims[3]));
    if (dims[0] != n || dims[1] != l.M || dims[2] != l.pooled_E() || dims[3] != l.pooled_F())
        throw cs::Error("cuDNN chain layer '" + l.name + "': cuDNN's pooling output is " + std::to_string(dims[0]) +
                        "x" + std::to_string(dims[1]) + "x" + std::to_string(dims[2]) + "x" + std::to_string(dims[3]) +
                        ", the chain's " + std::to_string(n) + "x" + std::to_string(l.M) + "x" +
                        std::to_string(l.pooled_E()) + "x" + std::to_string(l.pooled_F()));
    set_tensor(p->y, layout, t, n, l.M, l.pooled_E(), l.pooled_F());
    return p;
}

// One pooling of a single image on scratch memory, synchronised (plan time only): a type or
// layout cuDNN's pooling does not run throws here (cs::Skip for NOT_SUPPORTED, throw_cudnn).
void probe_pooling(cudnnHandle_t h, const Layer& l, Layout layout, const RowSpec& sp) {
    const auto one = make_pooling(l, 1, layout, sp.data);
    Buffer x(MemKind::device, std::size_t(l.M) * l.E() * l.F() * sp.elem_bytes);
    Buffer y(MemKind::device, std::size_t(l.M) * l.pooled_E() * l.pooled_F() * sp.elem_bytes);
    CS_CUDA_CHECK(cudaMemset(x.get(), 0, x.bytes()));
    const float alpha = 1.0f, beta = 0.0f;
    CS_CUDNN_CHECK(cudnnSetStream(h, nullptr));
    CS_CUDNN_CHECK(cudnnPoolingForward(h, one->pool.get(), &alpha, one->x.get(), x.get(), &beta, one->y.get(),
                                       y.get()));
    CS_CUDA_CHECK(cudaDeviceSynchronize());
}

// ---- the layer ------------------------------------------------------------------------

std::string layout_name(Layout l) { return l == Layout::nchw ? "nchw" : "nhwc"; }

// A bad argument (cs::Error): the class, the batch, the layer's shape and its pool.
void check_args(const Layer& l, std::int64_t N, Precision p) {
    const std::string who = "cuDNN chain layer '" + l.name + "': ";
    if (p == Precision::fp16acc)
        throw cs::Error(who + "the fp16acc class is not offered (cuDNN's graph rows accumulate in float)");
    if (N < 1) throw cs::Error(who + "the batch must be at least 1 image, not " + std::to_string(N));
    if (l.C < 1 || l.H < 1 || l.W < 1 || l.M < 1 || l.R < 1 || l.S < 1 || l.stride < 1 || l.pad < 0 || l.E() < 1 ||
        l.F() < 1)
        throw cs::Error(who + "not a convolution cuDNN can run: " + l.shape_string());
    if (l.pool == Pool::max3x3s2 && (l.E() < 3 || l.F() < 3))
        throw cs::Error(who + "a 3x3 max-pool needs a conv output of at least 3x3, not " + std::to_string(l.E()) + "x" +
                        std::to_string(l.F()));
}

class ChainLayer final : public CudnnChainLayer {
public:
    ChainLayer(const Layer& l, std::int64_t N, Precision p, Layout layout, const PlanContext& ctx);
    void run(const void* in, const void* w, const void* bias, void* conv_out, void* pooled, cudaStream_t s) override;
    std::string detail() const override { return detail_; }
    std::size_t workspace_bytes() const override { return ws_.bytes(); }

private:
    Selection select(const PlanContext& ctx);

    Layer layer_;
    std::int64_t N_;
    Layout layout_;
    RowSpec sp_;
    Epilogue ep_;
    Handle handle_;
    BuiltPlan plan_;  // the graph and its execution plan
    Buffer ws_;
    std::unique_ptr<Pooling> pooling_;  // null: the layer does not pool
    std::map<std::tuple<const void*, const void*, const void*, const void*>, BDesc> packs_;
    std::string detail_;
};

// The search of this layer's graph, or the one this run's engine memory already made for it
// (reused when its choice fits this plan's workspace limit), as GraphPlan does.
Selection ChainLayer::select(const PlanContext& ctx) {
    const Layer& l = layer_;
    char key[320];
    std::snprintf(key, sizeof key, "cudnn-chain|%d,%d,%d,%d,%d,%d,%d,%d|%lld|%s|%s|%s|%d", l.C, l.H, l.W, l.M, l.R,
                  l.S, l.stride, l.pad, static_cast<long long>(N_), layout_name(layout_).c_str(), sp_.name,
                  ep_.text().c_str(), ctx.device);
    const Problem p{l, N_, layout_, {}};
    try {
        bool reused = false;
        Selection s = *search_once(handle_.get(), key, p, sp_, N_, ctx, reused, ep_);
        if (reused) s.detail += " (selection reused in this run)";
        return s;
    } catch (const cs::Skip& e) {
        throw cs::Skip("cuDNN chain layer '" + l.name + "' (" + ep_.text() + " graph, " + sp_.name + ", " +
                       layout_name(layout_) + ", N=" + std::to_string(N_) + "): " + e.what());
    }
}

ChainLayer::ChainLayer(const Layer& l, std::int64_t N, Precision p, Layout layout, const PlanContext& ctx)
    : layer_(l), N_(N), layout_(layout), sp_(spec_of(p)), ep_{l.bias, l.relu} {
    if (l.pool == Pool::max3x3s2) probe_pooling(handle_.get(), l, layout, sp_);  // before the search's seconds
    const Selection sel = select(ctx);
    // The execution plan at the layer's shape: the chosen configuration, else the next accurate one
    // that finalizes within the workspace limit.
    auto built = build_plan(handle_.get(), l, layout, sp_, Shape{N, 16, 16, 16}, sel.ranking, ctx.workspace_limit, ep_);
    if (!built)
        throw cs::Skip("cuDNN chain layer '" + l.name + "': no accurate engine configuration of the " + ep_.text() +
                       " graph finalizes again at N=" + std::to_string(N) + " within the workspace limit " +
                       mb(ctx.workspace_limit));
    plan_ = std::move(*built);
    const std::size_t rank = plan_.rank;
    ws_ = Buffer(MemKind::device, plan_.exec.ws);
    detail_ = ep_.text() + " graph: " + sel.detail;
    if (rank != 0) detail_ += "; runs on " + recipe_text(sel.ranking[rank].recipe) + " (the choice did not finalize)";
    if (l.pool == Pool::max3x3s2) {
        pooling_ = make_pooling(l, N, layout, sp_.data);
        detail_ += "; then cudnnPoolingForward (legacy API): max 3x3 stride 2, NaN propagated";
    }
}

void ChainLayer::run(const void* in, const void* w, const void* bias, void* conv_out, void* pooled, cudaStream_t s) {
    if (!ep_.bias) bias = nullptr;
    if (!in || !w || !conv_out || (ep_.bias && !bias) || (pooling_ && !pooled))
        throw cs::Error("cuDNN chain layer '" + layer_.name + "': a tensor the layer needs is null");
    for (const void* ptr : {in, w, bias, static_cast<const void*>(conv_out)})
        if (ptr && alignment_of(reinterpret_cast<std::uintptr_t>(ptr)) < 16)
            throw cs::Error("cuDNN chain layer '" + layer_.name + "': its plan takes 16-byte aligned tensors");
    CS_CUDNN_CHECK(cudnnSetStream(handle_.get(), s));
    const auto key = std::make_tuple(in, w, bias, static_cast<const void*>(conv_out));
    auto it = packs_.find(key);
    if (it == packs_.end()) {
        if (packs_.size() >= 256) packs_.clear();
        it = packs_.emplace(key, variant_pack(in, w, conv_out, ws_.get(), bias)).first;
    }
    CS_CUDNN_CHECK(cudnnBackendExecute(handle_.get(), plan_.exec.plan.get(), it->second.get()));
    if (pooling_) {
        const float alpha = 1.0f, beta = 0.0f;  // float scaling for float, half and bfloat16 data
        CS_CUDNN_CHECK(cudnnPoolingForward(handle_.get(), pooling_->pool.get(), &alpha, pooling_->x.get(), conv_out,
                                           &beta, pooling_->y.get(), pooled));
    }
}

}  // namespace
}  // namespace variants

std::unique_ptr<CudnnChainLayer> make_cudnn_chain_layer(const Layer& layer, std::int64_t N, Precision precision,
                                                        Layout layout, const PlanContext& ctx) {
    variants::check_args(layer, N, precision);
    return std::make_unique<variants::ChainLayer>(layer, N, precision, layout, ctx);
}

}  // namespace cs::gpu
