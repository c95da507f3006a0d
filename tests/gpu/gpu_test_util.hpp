// Shared pieces of the GPU tests: a problem with its CPU reference (double accumulation)
// and a one-call runner.
#pragma once

#include "conv_ref.hpp"
#include "datagen.hpp"
#include "cuda_check.hpp"
#include "engine_choice.hpp"
#include "harness.hpp"
#include "layer.hpp"
#include "tuning.hpp"

#include "catch.hpp"

#include <string>
#include <string_view>

#include <vector>

namespace cs::test {

struct RefProblem {
    gpu::Problem problem;
    std::vector<float> in, w, golden;
    std::vector<float> bound;  // sum |w*x| per output: the per-element rule (empty: not checked)
};

inline RefProblem make_ref_problem(const Layer& l, std::int64_t N, std::uint64_t seed = 7) {
    RefProblem r;
    r.problem = gpu::Problem{l, N, gpu::Layout::nchw, {}};
    r.in.resize(std::size_t(l.input_elems(N)));
    r.w.resize(std::size_t(l.weight_elems()));
    r.golden.resize(std::size_t(l.output_elems(N)));
    make_input(l, N, seed, r.in.data());
    make_weights(l, seed, r.w.data());
    conv2d_ref<double>(l, N, r.in.data(), r.w.data(), r.golden.data());
    r.bound.resize(r.golden.size());
    conv2d_bound(l, N, r.in.data(), r.w.data(), r.bound.data());
    return r;
}

// The GPU tests' engine memory, one for the test process as `sweep` has one for its run: a
// library row searched once is reused by the later tests of the same row.
inline gpu::EngineChoices& test_engines() {
    static gpu::EngineChoices memory;
    return memory;
}

// Run options for tests: no warm-up, `repeats` timed runs.
inline gpu::RunOptions test_options(int repeats = 1, bool keep_output = false) {
    gpu::RunOptions opt;
    opt.warmup = 0;
    opt.repeats = repeats;
    opt.keep_output = keep_output;
    opt.engines = &test_engines();
    return opt;
}

// Runs v on the problem with its inputs (in `layout`: the harness permutes the NCHW
// reference data) and checks the output against the reference.
inline gpu::RunResult run_checked(gpu::DeviceContext& ctx, const gpu::Variant& v, gpu::MemoryMode mode,
                                  const RefProblem& rp, const gpu::RunOptions& opt,
                                  gpu::Layout layout = gpu::Layout::nchw) {
    gpu::HostData data;
    data.in = rp.in.data();
    data.w = rp.w.data();
    data.golden = rp.golden.data();
    data.bound = rp.bound.empty() ? nullptr : rp.bound.data();
    gpu::Problem p = rp.problem;
    p.layout = layout;
    return gpu::run_variant(ctx, v, mode, p, data, opt);
}

inline gpu::RunResult run_checked(gpu::DeviceContext& ctx, const gpu::Variant& v, gpu::MemoryMode mode,
                                  const RefProblem& rp, int repeats = 1, bool keep_output = false) {
    return run_checked(ctx, v, mode, rp, test_options(repeats, keep_output));
}

// The registered variants of one family, in registry order.
inline std::vector<const gpu::Variant*> family_variants(std::string_view family) {
    std::vector<const gpu::Variant*> out;
    for (const auto& v : gpu::registry())
        if (v.family == family) out.push_back(&v);
    return out;
}

// An empty tuning card of the context's device (its name, SM count, CUDA and driver versions), as
// `convstudy tune` writes one; `origin` says where it came from.
inline gpu::TuningCard device_card(gpu::DeviceContext& ctx, const std::string& origin) {
    gpu::TuningCard card;
    card.device = ctx.prop().name, card.sms = ctx.prop().multiProcessorCount;
    card.origin = origin;
    card.cuda_runtime = gpu::DeviceInfo::version_string(ctx.info().runtime_version);
    card.driver = gpu::DeviceInfo::version_string(ctx.info().driver_version);
    return card;
}

inline gpu::DeviceContext& device() {
    static gpu::DeviceContext ctx(0);
    return ctx;
}

// Small shapes that are multiples of nothing: C=3, strides, padding, non-square filters,
// planes that need several outputs per thread.
inline std::vector<Layer> odd_layers() {
    auto L = [](const char* n, int C, int H, int W, int M, int R, int S, int st, int pad) {
        Layer l;
        l.name = n;
        l.C = C, l.H = H, l.W = W, l.M = M, l.R = R, l.S = S, l.stride = st, l.pad = pad;
        return l;
    };
    return {
        L("odd_c3_s2", 3, 19, 23, 5, 5, 3, 2, 1),
        L("odd_c7_p1", 7, 9, 9, 4, 3, 3, 1, 1),
        L("odd_tile2", 2, 40, 37, 3, 4, 4, 1, 0),   // 37x34 outputs: 2 per thread per dim
        L("odd_1x1", 5, 6, 7, 6, 1, 1, 1, 0),
        L("odd_tile3", 1, 70, 70, 2, 3, 3, 1, 1),   // 70x70 outputs: 3 per thread per dim
        L("odd_s4_c3", 3, 35, 31, 7, 11, 11, 4, 0), // conv1-like: C=3, 11x11, stride 4
        L("odd_c33_5x5", 33, 11, 13, 9, 5, 5, 1, 2),
        L("odd_c64_rows", 64, 11, 61, 64, 3, 3, 1, 1),  // the row-halo mainloop's: 61-pixel rows in 112
        L("odd_1x1_c24", 24, 9, 11, 20, 1, 1, 2, 0),    // whole 16-byte channel runs: NCHW's 1x1 filters read in place
    };
}

// Whether `text` (a plan's detail, a SKIP reason) contains `part`.
// Captures what `enqueue` puts on stream s into a CUDA graph (`mode`: global makes an allocation or
// a synchronisation inside it fail the capture), launches the graph once and waits for it: what
// a chain does with every layer's work (bench/chain_run.cpp).
template <class Enqueue>
void capture_and_replay(cudaStream_t s, cudaStreamCaptureMode mode, Enqueue&& enqueue) {
    cudaGraph_t graph = nullptr;
    CS_CUDA_CHECK(cudaStreamBeginCapture(s, mode));
    enqueue();
    CS_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    cudaGraphExec_t exec = nullptr;
    CS_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CS_CUDA_CHECK(cudaGraphLaunch(exec, s));
    CS_CUDA_CHECK(cudaStreamSynchronize(s));
    CS_CUDA_CHECK(cudaGraphExecDestroy(exec));
    CS_CUDA_CHECK(cudaGraphDestroy(graph));
}

inline bool has(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// A layer of any shape, for tests that need one the tables do not have.
inline Layer make_layer(const char* name, int C, int H, int W, int M, int R, int S, int stride, int pad) {
    Layer l;
    l.name = name;
    l.C = C, l.H = H, l.W = W, l.M = M, l.R = R, l.S = S, l.stride = stride, l.pad = pad;
    return l;
}

inline Layer odd_layer(const std::string& name) {
    for (const auto& l : odd_layers())
        if (l.name == name) return l;
    FAIL("no odd layer named " << name);
    return {};
}

inline Layer alexnet(const char* name) {
    const Layer* l = default_layer_table().find(name);
    REQUIRE(l != nullptr);
    return *l;
}

// The registered variant of that name (or alias). Takes a string_view by value so that a
// call with a literal binds no temporary to a reference (gcc 13 -Wdangling-reference).
inline const gpu::Variant& variant(std::string_view name) {
    const gpu::Variant* v = gpu::find_variant(name).variant;
    INFO("variant " << name);
    REQUIRE(v != nullptr);
    return *v;
}

}  // namespace cs::test
