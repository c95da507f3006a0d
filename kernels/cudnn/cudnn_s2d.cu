// cudnn-fp32-s2d, cudnn-tf32-s2d, cudnn-fp16-s2d, cudnn-bf16-s2d — cuDNN as a user who
// rewrites a strided layer by space-to-depth would run it: conv1's honest anchor.
//
// What: each run() transforms the input (and the weights: the harness passes them each run,
// so they may change) by space-to-depth (space_to_depth.hpp: stride b, C channels -> b*b*C
// channels, a stride-1 R'xS' filter without padding), then runs the cudnn-<class> graph-API
// plan (cudnn_graph.cu) on the rewritten problem: the same engine search, accuracy screening
// and workspace limit as the other cuDNN rows, in the problem's layout, writing the layer's
// own E x F output. The transform is inside kernel_ms. conv1: 3 x 227 x 227, 11x11 stride 4
// -> 48 x 57 x 57, 3x3 stride 1, the same 55 x 55 output.
//
// Why: cuDNN has no fast kernel for conv1's C=3 input, while on the rewritten problem it is
// several times faster (PyTorch, scripts/pytorch_anchors.py; docs/findings.md, "The
// anchors"); a conv1 of ours is only worth its speed against the latter. The
// rows are family "cudnn", so fill_ours_over_cudnn (cli/results.cpp) takes the faster of
// cudnn-<class> and cudnn-<class>-s2d as the anchor.
//
// Memory: the plan holds w' and the rewritten input of a chunk of images; the rest of the
// workspace limit goes to cuDNN. Where the whole batch's input does not fit, the plan runs
// the batch in chunks of k images (k divides the harness's chunk, so cuDNN's execution plans
// for every chunk's alignment are built at plan time); where one image does not fit, SKIP.
//
// Expected: PyTorch's cuDNN time on the rewritten problem plus the transform's (space_to_depth.cu),
// well below cudnn-<class> on conv1 as it is (the first estimate: git show
// 3ab0d79:gpu/variants/cudnn_s2d.cu; measured: docs/findings.md, "The anchors").
//
// Here the plan (cudnn_s2d_plan, declared in cudnn_rungs.hpp); supports() and the rung in the
// family spec are host code, cudnn_family.cpp.
#include "buffers.hpp"
#include "cudnn_rungs.hpp"
#include "error.hpp"
#include "space_to_depth.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

namespace cs::gpu::variants {

namespace {

std::string mb(double bytes) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f MB", bytes / 1e6);
    return b;
}

std::size_t round_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

class S2dPlan final : public Plan {
public:
    S2dPlan(const PrecisionRow& row, const Problem& p, const PlanContext& ctx);
    void run(const DeviceIO& io, cudaStream_t stream) override;
    std::size_t workspace_bytes() const override { return ws_in_.bytes() + ws_w_.bytes() + inner_->workspace_bytes(); }
    std::string detail() const override { return detail_; }
    std::string algo() const override { return inner_->algo(); }

private:
    s2d::Geom g_;
    bool nchw_ = true;
    int eb_ = 4;
    std::int64_t img_in_ = 0, img_out_ = 0;  // elements per image of in and out
    std::int64_t k_ = 1;                     // images per transform + cuDNN call
    Buffer ws_in_, ws_w_;
    std::unique_ptr<Plan> inner_;
    std::string detail_;
};

S2dPlan::S2dPlan(const PrecisionRow& row, const Problem& p, const PlanContext& ctx)
    : g_(s2d::geom(p.layer)), nchw_(p.layout == Layout::nchw), eb_(int(dtype_bytes(row.io))) {
    const Layer& l = p.layer;
    const Layer lr = s2d::rewritten(l);
    img_in_ = l.input_elems(1);
    img_out_ = l.output_elems(1);
    const std::int64_t nmax = ctx.max_chunk_N > 0 ? std::max<std::int64_t>(1, std::min(ctx.max_chunk_N, p.N)) : p.N;
    const std::size_t w_bytes = round_up(std::size_t(lr.weight_elems()) * std::size_t(eb_), 256);
    const std::size_t img_bytes = std::size_t(lr.input_elems(1)) * std::size_t(eb_);
    // k: the largest divisor of the harness's chunk whose rewritten input fits beside w'.
    k_ = 0;
    for (std::int64_t k = nmax; k >= 1; --k)
        if (nmax % k == 0 && w_bytes + round_up(std::size_t(k) * img_bytes, 256) <= ctx.workspace_limit) {
            k_ = k;
            break;
        }
    if (k_ == 0)
        throw cs::Skip("space-to-depth needs " + mb(double(w_bytes + img_bytes)) +
                       " of workspace for one image's rewritten input and weights; the limit is " +
                       mb(double(ctx.workspace_limit)));
    ws_w_ = Buffer(MemKind::device, w_bytes);
    ws_in_ = Buffer(MemKind::device, round_up(std::size_t(k_) * img_bytes, 256));

    Problem pr;
    pr.layer = lr;
    pr.N = p.N;
    pr.layout = p.layout;
    PlanContext inner_ctx = ctx;
    inner_ctx.workspace_limit = ctx.workspace_limit - ws_w_.bytes() - ws_in_.bytes();
    inner_ctx.max_chunk_N = k_;
    inner_ = cudnn_graph_plan_for(row.precision, pr, inner_ctx, true);

    char geo[256];
    std::snprintf(geo, sizeof geo, "space-to-depth b=%d: %dx%dx%d, %dx%d stride 1 pad 0", g_.b, g_.Cp, g_.Hp, g_.Wp,
                  g_.Rp, g_.Sp);
    detail_ = inner_->detail() + "; " + geo + " (" + s2d::input_kernel_name(g_, nchw_, eb_) +
              " transform, w' each run, " + mb(double(ws_in_.bytes() + ws_w_.bytes())) + " for them";
    if (k_ < p.N) detail_ += ", chunks of " + std::to_string(k_) + " images";
    detail_ += ")";
}

void S2dPlan::run(const DeviceIO& io, cudaStream_t stream) {
    const auto* in = static_cast<const unsigned char*>(io.in);
    auto* out = static_cast<unsigned char*>(io.out);
    for (std::int64_t first = 0; first < io.N; first += k_) {
        const std::int64_t cnt = std::min(k_, io.N - first);
        s2d::launch(g_, eb_, in + std::size_t(first * img_in_) * std::size_t(eb_), nchw_, ws_in_.get(), nchw_, cnt,
                    first == 0 ? io.w : nullptr, nchw_, ws_w_.get(), stream);
        inner_->run(DeviceIO{ws_in_.get(), ws_w_.get(), out + std::size_t(first * img_out_) * std::size_t(eb_), cnt},
                    stream);
    }
}

}  // namespace

std::unique_ptr<Plan> cudnn_s2d_plan(const PrecisionRow& row, const Problem& p, const PlanContext& ctx) {
    return std::make_unique<S2dPlan>(row, p, ctx);
}

}  // namespace cs::gpu::variants
