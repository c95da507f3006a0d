#include "chain_run.hpp"

#include "buffers.hpp"
#include "chain_ops.hpp"
#include "convert.hpp"
#include "cuda_check.hpp"
#include "error.hpp"
#include "layout.hpp"
#include "tolerance.hpp"

#if defined(CONVSTUDY_HAVE_KERNELS) && defined(CONVSTUDY_HAVE_CUDNN)
#include "cudnn_chain.hpp"
#endif
#if defined(CONVSTUDY_HAVE_KERNELS)
#include "megakernel.hpp"
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <utility>

namespace cs::gpu {

std::string_view to_string(ChainSide s) {
    switch (s) {
        case ChainSide::ours: return "ours";
        case ChainSide::megakernel: return "megakernel";
        case ChainSide::cudnn: break;
    }
    return "cudnn";
}

std::optional<ChainSide> parse_chain_side(std::string_view s) {
    for (const ChainSide c : {ChainSide::ours, ChainSide::megakernel, ChainSide::cudnn})
        if (s == to_string(c)) return c;
    return std::nullopt;
}

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// The tensor a layer's convolution writes (before the pool) and its post-op output.
ChainTensor4 conv_tensor(const Layer& l, std::int64_t N, DType t, Layout layout) {
    return {t, layout, N, l.M, l.E(), l.F()};
}
ChainTensor4 post_tensor(const Layer& l, std::int64_t N, DType t, Layout layout) {
    return {t, layout, N, l.M, l.pooled_E(), l.pooled_F()};
}

// The data every side reads, staged once: the network input, each layer's weights and bias in
// the run's layout and element type (a network's weights, converted as it loads them).
struct Shared {
    Buffer input;
    std::vector<Buffer> w, b;
};

// A float NCHW host tensor of n x c x h x w, laid out and converted onto the device.
Buffer stage(const float* host, std::int64_t n, int c, int h, int w, DType t, Layout layout, cudaStream_t s) {
    const std::int64_t count = n * c * std::int64_t(h) * w;
    std::vector<float> perm;
    const float* src = host;
    if (layout == Layout::nhwc) {
        perm.resize(std::size_t(count));
        nchw_to_nhwc(host, perm.data(), n, c, h, w);
        src = perm.data();
    }
    Buffer f(MemKind::device, std::size_t(count) * 4);
    CS_CUDA_CHECK(cudaMemcpyAsync(f.get(), src, f.bytes(), cudaMemcpyHostToDevice, s));
    Buffer out(MemKind::device, std::size_t(count) * dtype_bytes(t));
    convert_from_float(f.as<float>(), out.get(), t, count, s);
    CS_CUDA_CHECK(cudaStreamSynchronize(s));  // `perm` and `f` go out of scope
    return out;
}

// What `enqueue` puts on `st`, captured and instantiated as a CUDA graph (the graph itself freed:
// the executable graph does not need it), or null with the reason in `why` when the capture fails
// (a plan that synchronises, say); the stream is out of capture mode either way. An
// instantiation that fails after a good capture throws (CudaError).
cudaGraphExec_t capture_graph(cudaStream_t st, const std::function<void()>& enqueue, std::string& why) {
    CS_CUDA_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    try {
        enqueue();
    } catch (const std::exception& e) {
        why = e.what();
    }
    cudaGraph_t g = nullptr;
    const cudaError_t end = cudaStreamEndCapture(st, &g);
    cudaGraphExec_t x = nullptr;
    if (why.empty() && end == cudaSuccess && g) {
        const cudaError_t inst = cudaGraphInstantiate(&x, g, 0);
        (void)cudaGraphDestroy(g);
        if (inst != cudaSuccess) throw_cuda_error(inst, "cudaGraphInstantiate", __FILE__, __LINE__);
        return x;
    }
    if (g) (void)cudaGraphDestroy(g);
    if (why.empty()) why = cudaGetErrorString(end);
    (void)cudaGetLastError();  // a failed capture's error is not sticky
    return nullptr;
}

// One side's state: its plans, activations and graphs.
struct Side {
    ChainSideSpec spec;
    ChainResult* r = nullptr;
    std::vector<std::unique_ptr<Plan>> plans;  // ours: one convolution plan a layer
#if defined(CONVSTUDY_HAVE_KERNELS)
    std::unique_ptr<ChainMegakernel> mega;     // megakernel: the one kernel of the whole chain
#endif
#if defined(CONVSTUDY_HAVE_KERNELS) && defined(CONVSTUDY_HAVE_CUDNN)
    std::vector<std::unique_ptr<CudnnChainLayer>> cudnn;
#endif
    std::vector<Buffer> conv, pooled;  // per layer; pooled empty for a layer without pool
    cudaGraphExec_t exec = nullptr;
    bool live = false;  // planned and not failed
    std::vector<double> times;
    Side() = default;
    Side(const Side&) = delete;
    Side& operator=(const Side&) = delete;
    ~Side() {
        if (exec) (void)cudaGraphExecDestroy(exec);
    }
    const void* output(std::size_t i) const { return pooled[i].get() ? pooled[i].get() : conv[i].get(); }
};

class ChainRunner {
public:
    ChainRunner(DeviceContext& ctx, const LayerTable& table, const ChainHostData& data,
                const std::vector<std::vector<float>>& golden, Precision p, Layout layout, const ChainOptions& opt)
        : ctx_(ctx), t_(table), data_(data), golden_(golden), p_(p), layout_(layout), opt_(opt),
          dtype_(facts(p).operands) {}

    std::vector<ChainResult> run(const std::vector<ChainSideSpec>& specs);

private:
    void stage_shared();
    void plan(Side& s);
    void enqueue_layer(Side& s, std::size_t i, cudaStream_t st);
    void enqueue_chain(Side& s, cudaStream_t st) {
#if defined(CONVSTUDY_HAVE_KERNELS)
        if (s.mega) return s.mega->run(st);
#endif
        for (std::size_t i = 0; i < t_.layers.size(); ++i) enqueue_layer(s, i, st);
    }
    void plan_layers(Side& s);
    void plan_megakernel(Side& s);
    void capture(Side& s);
    void launch(Side& s, cudaStream_t st) {
        if (s.exec)
            CS_CUDA_CHECK(cudaGraphLaunch(s.exec, st));
        else
            enqueue_chain(s, st);
    }
    void poison(Side& s, cudaStream_t st);
    // Every layer's output against the golden set; false (and r.status FAIL) when one fails.
    bool check(Side& s, bool last);
    double time_once(const std::function<void(cudaStream_t)>& work);
    void replay(Side& s);
    void fail(Side& s, Status st, const std::string& why) {
        s.live = false;
        s.r->status = st;
        s.r->reason = why;
    }

    DeviceContext& ctx_;
    const LayerTable& t_;
    const ChainHostData& data_;
    const std::vector<std::vector<float>>& golden_;
    Precision p_;
    Layout layout_;
    const ChainOptions& opt_;
    DType dtype_;
    Stream stream_;
    Shared shared_;
    Event e0_, e1_;
};

void ChainRunner::stage_shared() {
    const cudaStream_t s = stream_.get();
    const Layer& l0 = t_.layers.front();
    shared_.input = stage(data_.input->data(), data_.N, l0.C, l0.H, l0.W, dtype_, layout_, s);
    for (std::size_t i = 0; i < t_.layers.size(); ++i) {
        const Layer& l = t_.layers[i];
        // Weights M x C x R x S (KCRS), or M x R x S x C for NHWC: the same permute (n = M).
        shared_.w.push_back(stage((*data_.weights)[i].data(), l.M, l.C, l.R, l.S, dtype_, layout_, s));
        shared_.b.push_back(l.bias ? stage((*data_.bias)[i].data(), 1, l.M, 1, 1, dtype_, Layout::nchw, s) : Buffer());
    }
}

void ChainRunner::plan(Side& s) {
    const auto t0 = Clock::now();
    const std::int64_t N = data_.N;
    auto bytes = [&](const ChainTensor4& t) { return std::size_t(t.elems()) * dtype_bytes(dtype_); };
    for (const Layer& l : t_.layers) {
        s.conv.emplace_back(MemKind::device, bytes(conv_tensor(l, N, dtype_, layout_)));
        const std::size_t pooled = l.pool == Pool::none ? 0 : bytes(post_tensor(l, N, dtype_, layout_));
        s.pooled.emplace_back(pooled ? Buffer(MemKind::device, pooled) : Buffer());
    }
    if (s.spec.side == ChainSide::megakernel)
        plan_megakernel(s);
    else
        plan_layers(s);
    for (std::size_t i = 0; i < t_.layers.size(); ++i)
        s.r->device_bytes += s.conv[i].bytes() + s.pooled[i].bytes();
    s.r->device_bytes += s.r->workspace_bytes;
    capture(s);
    s.r->setup_ms = ms_since(t0);
    s.live = true;
}

// Ours or cuDNN's: one plan a layer, on the activations plan() allocated.
void ChainRunner::plan_layers(Side& s) {
    const std::int64_t N = data_.N;
    for (const Layer& l : t_.layers) {
        // Each layer's plan may take half the memory free when it is planned: the layers' plans
        // live at once, so a limit fixed before the first would let them overcommit together.
        const PlanContext pc{opt_.state, ctx_.prop(), ctx_.info().device,
                             std::size_t(double(ctx_.free_bytes()) * 0.5), N};
        ChainLayerResult lr;
        lr.layer = l.name;
        if (s.spec.side == ChainSide::ours) {
            const Variant& v = *s.spec.variant;
            Problem pr{l, N, layout_, {}};
            if (std::find(v.layouts.begin(), v.layouts.end(), layout_) == v.layouts.end())
                throw Skip(v.name + " does not run layout " + std::string(to_string(layout_)));
            if (auto why = v.supports(pr, ctx_.prop())) throw Skip(l.name + ": " + *why);
            s.plans.push_back(v.make_plan(pr, pc));
            s.r->workspace_bytes += s.plans.back()->workspace_bytes();
            Plan& pl = *s.plans.back();
            const std::size_t i = s.plans.size() - 1;
            // A plan that transforms its weights does it here, once, as a network loads them.
            const bool held = pl.hold_weights(shared_.w[i].get(), stream_.get());
            lr.detail = pl.detail() + (held ? "; its weight transform run once at plan time" : "") +
                        (pl.fuses_post_ops() ? "; bias and ReLU fused into the convolution's epilogue"
                                             : "; bias and ReLU a pass of their own (or the pool's)") +
                        (opt_.pdl && pl.launches_dependent()
                             ? "; the convolution launched as the previous kernel's programmatic dependent"
                             : "");
            lr.config = s.plans.back()->config();
        } else {
#if defined(CONVSTUDY_HAVE_KERNELS) && defined(CONVSTUDY_HAVE_CUDNN)
            s.cudnn.push_back(make_cudnn_chain_layer(l, N, p_, layout_, pc));
            s.r->workspace_bytes += s.cudnn.back()->workspace_bytes();
            lr.detail = s.cudnn.back()->detail();
#else
            throw Skip("cuDNN's chain needs a build with the kernels and cuDNN");
#endif
        }
        s.r->layers.push_back(std::move(lr));
    }
}

// The megakernel on the activations plan() allocated: one kernel for the whole chain.
void ChainRunner::plan_megakernel(Side& s) {
#if defined(CONVSTUDY_HAVE_KERNELS)
    std::vector<MegaLayer> ml;
    MegaTensors ten;
    ten.input = shared_.input.get();
    for (std::size_t i = 0; i < t_.layers.size(); ++i) {
        const Layer& l = t_.layers[i];
        ml.push_back({l.C, l.H, l.W, l.M, l.R, l.S, l.stride, l.pad, l.bias, l.relu, l.pool != Pool::none});
        ten.w.push_back(shared_.w[i].get());
        ten.bias.push_back(l.bias ? shared_.b[i].get() : nullptr);
        ten.conv.push_back(s.conv[i].get());
        ten.pooled.push_back(s.pooled[i].get());
    }
    s.mega = make_chain_megakernel(ml, data_.N, dtype_, layout_, ctx_.prop(), ten, opt_.mega_ctas_per_sm);
    s.r->workspace_bytes = s.mega->workspace_bytes();
    for (std::size_t i = 0; i < t_.layers.size(); ++i) {
        ChainLayerResult lr;
        lr.layer = t_.layers[i].name;
        lr.detail = "a phase of the megakernel";
        s.r->layers.push_back(std::move(lr));
    }
    s.r->detail = s.mega->detail();
#else
    (void)s;
    throw Skip("the megakernel needs a build with the kernels");
#endif
}

void ChainRunner::enqueue_layer(Side& s, std::size_t i, cudaStream_t st) {
    const Layer& l = t_.layers[i];
    const void* in = i == 0 ? shared_.input.get() : s.output(i - 1);
    const void* bias = l.bias ? shared_.b[i].get() : nullptr;
    if (s.spec.side == ChainSide::ours) {
        const ChainTensor4 t = conv_tensor(l, data_.N, dtype_, layout_);
        Plan& plan = *s.plans[i];
        const bool dep = opt_.pdl;  // the ops always can; the convolution where its plan can
        // Bias and ReLU in the convolution's epilogue where the plan fuses them, else in the
        // pool's one pass or a pass of their own (none left: the plain pool, or nothing).
        const bool fused = plan.fuses_post_ops();
        DeviceIO io{in, shared_.w[i].get(), s.conv[i].get(), data_.N};
        io.dependent = dep && plan.launches_dependent();
        if (fused) io.bias = bias, io.relu = l.relu;
        plan.run(io, st);
        const void* rest_bias = fused ? nullptr : bias;
        const bool rest_relu = !fused && l.relu;
        if (l.pool != Pool::none)
            bias_relu_maxpool3x3s2(s.conv[i].get(), t, rest_bias, rest_relu, s.pooled[i].get(), st, dep);
        else
            bias_relu(s.conv[i].get(), t, rest_bias, rest_relu, st, dep);
        return;
    }
#if defined(CONVSTUDY_HAVE_KERNELS) && defined(CONVSTUDY_HAVE_CUDNN)
    s.cudnn[i]->run(in, shared_.w[i].get(), bias, s.conv[i].get(), s.pooled[i].get(), st);
#endif
}

// One CUDA graph of the side's whole chain. A plan that cannot be captured (a library engine
// that synchronises, say) leaves the side on stream launches, which the result says.
void ChainRunner::capture(Side& s) {
    const cudaStream_t st = stream_.get();
    std::string why;
    s.exec = capture_graph(st, [&] { enqueue_chain(s, st); }, why);
    if (s.exec) return;
    s.r->graph = false;
    s.r->reason = "not captured in a CUDA graph (" + why + "): stream launches";
}

void ChainRunner::poison(Side& s, cudaStream_t st) {
    for (std::size_t i = 0; i < s.conv.size(); ++i) {
        CS_CUDA_CHECK(cudaMemsetAsync(s.conv[i].get(), 0xFF, s.conv[i].bytes(), st));  // NaN in f32, f16, bf16
        if (s.pooled[i].get()) CS_CUDA_CHECK(cudaMemsetAsync(s.pooled[i].get(), 0xFF, s.pooled[i].bytes(), st));
    }
}

bool ChainRunner::check(Side& s, bool last) {
    const cudaStream_t st = stream_.get();
    bool ok = true;
    const double limit = chain_threshold(p_);
    for (std::size_t i = 0; i < t_.layers.size(); ++i) {
        const Layer& l = t_.layers[i];
        const ChainTensor4 t = post_tensor(l, data_.N, dtype_, layout_);
        const std::int64_t n = t.elems();
        Buffer f(MemKind::device, std::size_t(n) * 4);
        convert_to_float(s.output(i), dtype_, f.as<float>(), n, st);
        std::vector<float> host(static_cast<std::size_t>(n)), nchw;
        CS_CUDA_CHECK(cudaMemcpyAsync(host.data(), f.get(), f.bytes(), cudaMemcpyDeviceToHost, st));
        CS_CUDA_CHECK(cudaStreamSynchronize(st));
        if (layout_ == Layout::nhwc) {
            nchw.resize(host.size());
            nhwc_to_nchw(host.data(), nchw.data(), data_.N, t.C, t.H, t.W);
            host.swap(nchw);
        }
        if (golden_[i].size() != host.size())
            throw Error("chain: the golden output of " + l.name + " holds " + std::to_string(golden_[i].size()) +
                        " values, the run " + std::to_string(host.size()));
        const ErrorStats e = compare(host.data(), golden_[i].data(), n, nullptr, p_);
        (last ? s.r->layers[i].err_last : s.r->layers[i].err) = e;
        if (!ok) continue;
        if (e.nonfinite > 0 || !(e.max_rel_err <= limit)) {
            char buf[256];
            std::snprintf(buf, sizeof buf, "%s run: layer %s: %lld NaN/Inf, max_rel_err %.3g over the chain limit %.3g",
                          last ? "last timed" : "checked", l.name.c_str(), static_cast<long long>(e.nonfinite),
                          e.max_rel_err, limit);
            fail(s, Status::fail, buf);
            ok = false;
        }
    }
    return ok;
}

// The L2 flushed (outside the interval), the hold, then events around `work`.
double ChainRunner::time_once(const std::function<void(cudaStream_t)>& work) {
    const cudaStream_t st = stream_.get();
    if (opt_.flush_l2) ctx_.flush_l2(st);
    ctx_.hold(st);
    e0_.record(st);
    work(st);
    e1_.record(st);
    CS_CUDA_CHECK(cudaEventSynchronize(e1_.get()));
    return double(elapsed_ms(e0_, e1_));
}

// Each layer's part of the chain alone, in a graph of its own, on the activations the chain
// left (the input of layer i is layer i-1's output of the last run).
void ChainRunner::replay(Side& s) {
    if (opt_.layer_repeats <= 0 || s.spec.side == ChainSide::megakernel) return;
    const cudaStream_t st = stream_.get();
    for (std::size_t i = 0; i < t_.layers.size(); ++i) {
        cudaGraphExec_t x = nullptr;
        if (s.r->graph) {  // the layer's part captured as the whole chain was
            std::string why;
            x = capture_graph(st, [&] { enqueue_layer(s, i, st); }, why);
            if (!x) throw Error("layer " + t_.layers[i].name + " not captured in a CUDA graph: " + why);
        }
        auto work = [&](cudaStream_t w) {
            if (x)
                CS_CUDA_CHECK(cudaGraphLaunch(x, w));
            else
                enqueue_layer(s, i, w);
        };
        std::vector<double> v;
        for (int k = 0; k < opt_.warmup + opt_.layer_repeats; ++k) {
            const double ms = time_once(work);
            if (k >= opt_.warmup) v.push_back(ms);
        }
        if (x) (void)cudaGraphExecDestroy(x);
        s.r->layers[i].replay = Stat::of(std::move(v));
    }
}

std::vector<ChainResult> ChainRunner::run(const std::vector<ChainSideSpec>& specs) {
    std::vector<ChainResult> results(specs.size());
    std::vector<std::unique_ptr<Side>> sides;
    for (std::size_t k = 0; k < specs.size(); ++k) {
        results[k].spec = specs[k];
        results[k].threshold = chain_threshold(p_);
        results[k].order_seed = opt_.order_seed;
        results[k].pdl = opt_.pdl && specs[k].side == ChainSide::ours;
        auto s = std::make_unique<Side>();
        s->spec = specs[k];
        s->r = &results[k];
        sides.push_back(std::move(s));
    }
    stage_shared();
    const cudaStream_t st = stream_.get();
    for (auto& s : sides) {
        try {
            plan(*s);
        } catch (const Skip& e) {
            fail(*s, Status::skip, e.what());
        } catch (const std::exception& e) {
            fail(*s, Status::error, std::string("planning: ") + e.what());
        }
        if (!s->live) continue;
        try {
            poison(*s, st);
            launch(*s, st);
            CS_CUDA_CHECK(cudaStreamSynchronize(st));
            if (!check(*s, false)) continue;
        } catch (const std::exception& e) {
            fail(*s, Status::error, std::string("checked run: ") + e.what());
        }
    }
    // Round-robin: each round runs every live side once, in an order shuffled per round.
    const int timed = std::max(opt_.repeats, opt_.tail_repeats);
    std::mt19937_64 rng(opt_.order_seed);
    std::vector<std::size_t> order(sides.size());
    std::iota(order.begin(), order.end(), 0);
    for (int it = 0; it < opt_.warmup + timed; ++it) {
        std::shuffle(order.begin(), order.end(), rng);
        for (const std::size_t k : order) {
            Side& s = *sides[k];
            if (!s.live) continue;
            try {
                const double ms = time_once([&](cudaStream_t w) { launch(s, w); });
                if (it >= opt_.warmup) s.times.push_back(ms);
            } catch (const std::exception& e) {
                fail(s, Status::error, std::string("timed run: ") + e.what());
            }
        }
    }
    for (auto& s : sides) {
        if (!s->live) continue;
        try {
            if (!check(*s, true)) continue;
#if defined(CONVSTUDY_HAVE_KERNELS)
            if (s->mega) s->r->detail += "; " + s->mega->phases(st);
#endif
            s->r->chain = Stat::of(s->times);
            if (opt_.tail_repeats > 0) {
                s->r->p99_ms = s->r->chain.p99;
                s->r->tail_count = int(s->times.size());
            }
            replay(*s);
            s->r->status = Status::pass;
        } catch (const std::exception& e) {
            fail(*s, Status::error, std::string("after timing: ") + e.what());
        }
    }
    return results;
}

}  // namespace

std::vector<ChainResult> run_chain(DeviceContext& ctx, const LayerTable& table, const ChainHostData& data,
                                   const std::vector<std::vector<float>>& golden, Precision p, Layout layout,
                                   const std::vector<ChainSideSpec>& sides, const ChainOptions& opt) {
    if (auto why = chain_error(table)) throw Error("chain: table " + table.name + " is not a chain: " + *why);
    if (!data.input || !data.weights || !data.bias)
        throw Error("chain: the host data name no input, weights or biases (a bug)");
    if (data.weights->size() != table.layers.size() || data.bias->size() != table.layers.size() ||
        golden.size() != table.layers.size())
        throw Error("chain: the data hold " + std::to_string(data.weights->size()) + " layers' weights and " +
                    std::to_string(golden.size()) + " outputs for a table of " + std::to_string(table.layers.size()) +
                    " layers");
    for (const auto& s : sides)
        if (s.side != ChainSide::cudnn && !s.variant) throw Error("chain: our side names no variant (a bug)");
    ChainRunner r(ctx, table, data, golden, p, layout, opt);
    return r.run(sides);
}

}  // namespace cs::gpu
