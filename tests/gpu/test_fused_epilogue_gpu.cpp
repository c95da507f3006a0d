// The fused epilogue on the GPU (DeviceIO::bias and relu, Plan::fuses_post_ops; OutOps in
// kernels/common/sm90/hopper_store.cuh): every plan that says it fuses gives relu(conv + bias)
// where its plain run gives conv, bit for bit.
//
// Exact by construction: inputs and weights are small integers (-1, 0, 1), so the convolution
// is an integer that every accumulation order, split and output type holds exactly, and the
// bias is a multiple of 1/4, so y + b is exact as well while |y| stays below the type's limit
// (checked on the data, not assumed). The fused output must then equal the stored relu(y + b)
// of the same plan's plain output y, whatever the tile, scheduler or epilogue store.
//
// Covered: every Hopper row's default; in fp16 every value of the `scheduler` axis (split-K with
// its reduction kernel, the fused split-K, stream-K, split-tail, the cluster splits) and of the
// `epilogue` axis (direct, TMA store); the halo mainloop (conv1's shape); auto-* (its plan
// forwards to the chosen row's). Shapes with M off every tile width (40, 200) clip columns,
// so a filter past M must read no bias. Both layouts, NaN-poisoned output before each run.
#include "buffers.hpp"
#include "convert.hpp"
#include "error.hpp"
#include "gpu_test_util.hpp"
#include "layout.hpp"

#include "catch.hpp"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace cs;
using namespace cs::gpu;

namespace {

// The largest |conv| for which conv + a quarter is exact in the type (significand bits - 2): the
// fused output is then the float relu(y + b) itself, no rounding to model.
double exact_limit(DType d) {
    switch (d) {
        case DType::f16: return 512.0;   // 11 bits
        case DType::bf16: return 64.0;   // 8 bits
        case DType::f32: return 1 << 21; // tf32 operands are exact integers too; fp32 output
    }
    return 0;
}

// n integers in {-1, 0, 1}; `zero_weight` more zeros than either sign keeps |conv| small.
std::vector<float> ints(std::size_t n, int zero_weight, std::uint32_t seed) {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> d(0, 1 + zero_weight);
    std::vector<float> v(n);
    for (auto& x : v) {
        const int k = d(gen);
        x = k == 0 ? -1.0f : k == 1 ? 1.0f : 0.0f;
    }
    return v;
}

struct Device4 {
    DType type;
    std::int64_t elems;
    Buffer buf;
    Device4(DType t, std::int64_t n) : type(t), elems(n), buf(MemKind::device, std::size_t(n) * dtype_bytes(t)) {}
};

// Float data to the device in the type (any order: the check below is element-wise).
void upload(const std::vector<float>& host, Device4& d, cudaStream_t s) {
    Buffer scratch(MemKind::device, host.size() * sizeof(float));
    CS_CUDA_CHECK(cudaMemcpyAsync(scratch.get(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice, s));
    convert_from_float(scratch.as<float>(), d.buf.get(), d.type, d.elems, s);
    CS_CUDA_CHECK(cudaStreamSynchronize(s));
}

std::vector<float> download(const Device4& d, cudaStream_t s) {
    std::vector<float> host(std::size_t(d.elems));
    Buffer scratch(MemKind::device, host.size() * sizeof(float));
    convert_to_float(d.buf.get(), d.type, scratch.as<float>(), d.elems, s);
    CS_CUDA_CHECK(cudaMemcpyAsync(host.data(), scratch.get(), host.size() * sizeof(float), cudaMemcpyDeviceToHost, s));
    CS_CUDA_CHECK(cudaStreamSynchronize(s));
    return host;
}

void poison(Device4& d, cudaStream_t s) {
    CS_CUDA_CHECK(cudaMemsetAsync(d.buf.get(), 0xff, std::size_t(d.elems) * dtype_bytes(d.type), s));  // NaN
}

struct Case {
    Layer layer;
    std::int64_t N;
};

// What one fused check ran, for the coverage checks at the end.
struct Tally {
    std::map<std::string, int> fused;    // "variant [config]" -> layouts and shapes checked
    std::set<std::string> plain;         // variants whose plans store the plain convolution
    std::set<std::string> values;        // "axis=value" checked fused (fp16)
    int skipped = 0;
};

// Runs v's plan for the case plain, then fused with bias (and ReLU), and checks the fused output
// against relu(plain + bias) bit for bit.
void check_fused(const Variant& v, const Config& c, const Case& k, Layout layout, Tally& tally, std::uint32_t seed) {
    auto& dev = test::device();
    const Layer& l = k.layer;
    Problem p{l, k.N, layout, axis_values(v, c)};
    INFO(v.name << " [" << c.str() << "] on " << l.name << " N=" << k.N << " " << to_string(layout));
    if (v.supports(p, dev.prop())) {
        ++tally.skipped;
        return;
    }
    PlanState st;
    st.engines = &test::test_engines();
    const PlanContext pc{st, dev.prop(), dev.info().device, std::size_t(double(dev.free_bytes()) * 0.5), k.N};
    std::unique_ptr<Plan> plan;
    try {
        plan = v.make_plan(p, pc);
    } catch (const Skip&) {
        ++tally.skipped;
        return;
    }
    if (!plan->fuses_post_ops()) {
        tally.plain.insert(v.name);
        return;
    }
    Stream stream;
    const cudaStream_t s = stream.get();
    const DType t = v.io;
    Device4 in(t, l.input_elems(k.N)), w(t, l.weight_elems()), out(t, l.output_elems(k.N)), b(t, l.M);
    upload(ints(std::size_t(in.elems), t == DType::bf16 ? 6 : 3, seed), in, s);
    upload(ints(std::size_t(w.elems), 1, seed + 1), w, s);
    std::vector<float> bias(std::size_t(l.M));
    std::mt19937 gen(seed + 2);
    std::uniform_int_distribution<int> q(-12, 12);
    for (auto& x : bias) x = float(q(gen)) / 4.0f;
    upload(bias, b, s);

    poison(out, s);
    plan->run(DeviceIO{in.buf.get(), w.buf.get(), out.buf.get(), k.N}, s);
    CS_CUDA_CHECK(cudaStreamSynchronize(s));
    const std::vector<float> y = download(out, s);
    double ymax = 0;
    for (float x : y) {
        REQUIRE(std::isfinite(x));
        REQUIRE(x == std::nearbyint(x));  // the premise: an exact integer convolution
        ymax = std::max(ymax, double(std::fabs(x)));
    }
    REQUIRE(ymax + 4.0 < exact_limit(t));
    const std::int64_t EF = std::int64_t(l.E()) * l.F();
    for (const bool relu : {true, false}) {
        INFO("relu " << relu);
        poison(out, s);
        plan->run(DeviceIO{in.buf.get(), w.buf.get(), out.buf.get(), k.N, b.buf.get(), relu}, s);
        CS_CUDA_CHECK(cudaStreamSynchronize(s));
        const std::vector<float> z = download(out, s);
        std::size_t bad = 0, first = 0;
        float want_first = 0;
        for (std::size_t i = 0; i < z.size(); ++i) {
            const std::int64_t m = layout == Layout::nchw ? std::int64_t(i) / EF % l.M : std::int64_t(i) % l.M;
            float want = y[i] + bias[std::size_t(m)];
            if (relu && !(want > 0.0f)) want = 0.0f;
            if (std::memcmp(&z[i], &want, sizeof want) != 0 && bad++ == 0) first = i, want_first = want;
        }
        INFO(bad << " of " << z.size() << " differ; first at " << first << ": got " << (bad ? z[first] : 0.0f)
                  << ", expected " << want_first);
        REQUIRE(bad == 0);
    }
    ++tally.fused[v.name + " [" + c.str() + "]"];
    if (t == DType::f16)
        for (const auto& [axis, value] : c.set) tally.values.insert(axis + "=" + value);
}

std::vector<Case> cases(DType t) {
    std::vector<Case> v{{test::make_layer("fe_small", 7, 13, 11, 40, 3, 3, 1, 1), 2},
                        {test::make_layer("fe_wide_m", 16, 9, 9, 200, 3, 3, 1, 1), 3},
                        {test::make_layer("fe_conv1", 3, 227, 227, 96, 11, 11, 4, 0), 1}};
    // Enough tiles for stream-K's mix of whole and cut tiles (bf16's 8 bits leave it out).
    if (t != DType::bf16) v.push_back({test::make_layer("fe_sk_mix", 64, 20, 20, 256, 3, 3, 1, 1), 16});
    return v;
}

const Axis* find_axis(const Variant& v, const std::string& name) {
    for (const auto& a : v.axes)
        if (a.name == name) return &a;
    return nullptr;
}

}  // namespace

TEST_CASE("a plan that fuses bias and ReLU gives relu(conv + bias) exactly, every scheduler and store",
          "[gpu][chain][fused]") {
    Tally tally;
    std::uint32_t seed = 11;
    for (const auto& v : registry()) {
        if (v.library || (v.family != "hopper" && !v.delegates)) continue;
        std::vector<Config> configs{Config{}};
        if (v.io == DType::f16 && !v.delegates)
            for (const char* axis : {"scheduler", "epilogue"})
                if (const Axis* a = find_axis(v, axis))
                    for (const auto& val : a->values) {
                        Config c;
                        c.set.emplace_back(axis, val);
                        configs.push_back(c);
                    }
        for (const auto& c : configs)
            for (const auto& k : cases(v.io))
                for (Layout layout : v.layouts) check_fused(v, c, k, layout, tally, seed += 3);
    }
    std::string fused;
    for (const auto& [name, n] : tally.fused) fused += name + " x" + std::to_string(n) + "\n";
    std::string plain;
    for (const auto& name : tally.plain) plain += name + " ";
    INFO("fused:\n" << fused << "plain: " << plain << "\nskipped: " << tally.skipped);
    // The persistent rungs fuse in every scheduler and store, and so do the halo mainloop and
    // auto's forwarding plan.
    for (const char* value : {"scheduler=data-parallel", "scheduler=split-k", "scheduler=stream-k",
                              "scheduler=split-tail", "scheduler=split-k-fused", "epilogue=direct",
                              "epilogue=tma-store"})
        CHECK(tally.values.count(value) == 1);
    for (const char* row : {"hopper-halo-fp16 []", "hopper-halo-bf16 []", "hopper-ws-fp16 []", "hopper-ws-bf16 []",
                            "hopper-ws-tf32 []", "hopper-tmastore-fp16 []", "auto-fp16 []"})
        CHECK(tally.fused.count(row) == 1);
    // Rungs 1 and 2 (cp.async, TMA) store the plain convolution and say so.
    CHECK(tally.plain.count("hopper-wgmma-fp16") == 1);
    WARN(fused);
}

// Plan::hold_weights (the chain's weights, transformed once at plan time): a plan that holds
// its weights gives, bit for bit, what a plan that transforms them in every run gives; a run
// given other weights transforms those (and drops the held copy, which they overwrite), so a
// later run given the held weights again transforms them again rather than reading the others'.
TEST_CASE("a plan that holds its weights transforms them once, and a run given other weights is not stale",
          "[gpu][chain][fused]") {
    auto& dev = test::device();
    const Layer l = test::make_layer("hw_conv1", 3, 227, 227, 96, 11, 11, 4, 0);  // space-to-depth: weights transformed
    const std::int64_t N = 1;
    int held_rows = 0;
    for (const char* name : {"hopper-halo-fp16", "hopper-ws-fp16", "auto-fp16", "hopper-halo-bf16"}) {
        const Variant& v = test::variant(name);
        INFO(name);
        PlanState st;
        st.engines = &test::test_engines();
        const PlanContext pc{st, dev.prop(), dev.info().device, std::size_t(double(dev.free_bytes()) * 0.25), N};
        const Problem p{l, N, Layout::nhwc, {}};
        REQUIRE_FALSE(v.supports(p, dev.prop()));
        std::unique_ptr<Plan> held = v.make_plan(p, pc), fresh = v.make_plan(p, pc);
        Stream stream;
        const cudaStream_t s = stream.get();
        const DType t = v.io;
        Device4 in(t, l.input_elems(N)), w1(t, l.weight_elems()), w2(t, l.weight_elems()), out(t, l.output_elems(N));
        upload(ints(std::size_t(in.elems), 3, 101), in, s);
        upload(ints(std::size_t(w1.elems), 1, 102), w1, s);
        upload(ints(std::size_t(w2.elems), 1, 103), w2, s);
        auto run = [&](Plan& plan, const Device4& w) {
            poison(out, s);
            plan.run(DeviceIO{in.buf.get(), w.buf.get(), out.buf.get(), N}, s);
            CS_CUDA_CHECK(cudaStreamSynchronize(s));
            return download(out, s);
        };
        const bool did = held->hold_weights(w1.buf.get(), s);
        CS_CUDA_CHECK(cudaStreamSynchronize(s));
        held_rows += did ? 1 : 0;
        const std::vector<float> want1 = run(*fresh, w1), want2 = run(*fresh, w2);
        REQUIRE(want1 != want2);  // the premise: the two weight sets give different outputs
        CHECK(run(*held, w1) == want1);
        CHECK(run(*held, w1) == want1);
        CHECK(run(*held, w2) == want2);
        CHECK(run(*held, w1) == want1);
    }
    // conv1's space-to-depth rows transform their weights, so they hold them (auto forwards).
    CHECK(held_rows == 4);
}
