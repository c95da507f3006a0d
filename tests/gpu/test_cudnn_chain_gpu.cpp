// cuDNN's side of a chain run (kernels/cudnn/cudnn_chain.hpp) against the CPU reference of the
// network ops (reference/network_ref.hpp, double accumulation): per layer the fused graph's
// output relu?(conv + bias) and, for a layer that pools, cuDNN's 3x3 stride-2 max-pool of it, each
// within the class threshold (tolerance.hpp, max_rel_err; the per-element rule needs a bound the
// network ops do not have). Odd small layers (C = 3, odd planes, a strided non-square filter, a
// layer with ReLU and no bias) and one whose channel counts are multiples of 8 (where the search
// lets runtime-compiled fusion engines in, NHWC), N = 2, in both layouts, fp32 and fp16 (bf16 on
// the first layer). The generator's data (datagen.hpp) go to the device as a chain's do
// (bench/layout.hpp, bench/convert.hpp). A case cuDNN has no engine for is a SKIP of that case
// (cs::Skip), reported; every layer must run in at least one (class, layout). The layer's run()
// is also captured into a CUDA graph and replayed: the same bits. Bad arguments: cs::Error.
#include "buffers.hpp"
#include "convert.hpp"
#include "cuda_check.hpp"
#include "datagen.hpp"
#include "error.hpp"
#include "gpu_test_util.hpp"
#include "layout.hpp"
#include "network_ref.hpp"
#include "tolerance.hpp"

#if defined(CONVSTUDY_HAVE_CUDNN)
#include "cudnn_chain.hpp"
#endif

#include "catch.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#if defined(CONVSTUDY_HAVE_CUDNN)

using namespace cs;
using namespace cs::gpu;

namespace {

constexpr std::int64_t kN = 2;

Layer chain_layer(const char* name, int C, int H, int W, int M, int R, int S, int stride, int pad, bool bias,
                  bool relu, Pool pool) {
    Layer l = cs::test::make_layer(name, C, H, W, M, R, S, stride, pad);
    l.bias = bias, l.relu = relu, l.pool = pool;
    return l;
}

// The context a chain gives its layers: the test process's engine memory, half the free memory
// as the workspace limit, batches of N.
PlanContext plan_context(std::int64_t N) {
    PlanState state;
    state.engines = &cs::test::test_engines();
    return PlanContext{state, cs::test::device().prop(), 0, cs::test::device().free_bytes() / 2, N};
}

// NCHW float host data -> the device in `layout` and type d (n x c x h x w; weights: n = M).
Buffer upload(const std::vector<float>& nchw, std::int64_t n, int c, int h, int w, Layout layout, DType d,
              cudaStream_t s) {
    std::vector<float> host = nchw;
    if (layout == Layout::nhwc) nchw_to_nhwc(nchw.data(), host.data(), n, c, h, w);
    Buffer f32(MemKind::device, host.size() * sizeof(float));
    Buffer out(MemKind::device, host.size() * dtype_bytes(d));
    CS_CUDA_CHECK(cudaMemcpy(f32.get(), host.data(), f32.bytes(), cudaMemcpyHostToDevice));
    convert_from_float(f32.as<float>(), out.get(), d, std::int64_t(host.size()), s);
    CS_CUDA_CHECK(cudaStreamSynchronize(s));
    return out;
}

// The device tensor (type d, `layout`, n x c x h x w) as NCHW float on the host.
std::vector<float> download(const Buffer& t, std::int64_t n, int c, int h, int w, Layout layout, DType d,
                            cudaStream_t s) {
    const std::size_t count = std::size_t(n) * c * h * w;
    Buffer f32(MemKind::device, count * sizeof(float));
    convert_to_float(t.get(), d, f32.as<float>(), std::int64_t(count), s);
    CS_CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<float> host(count), nchw(count);
    CS_CUDA_CHECK(cudaMemcpy(host.data(), f32.get(), count * sizeof(float), cudaMemcpyDeviceToHost));
    if (layout == Layout::nchw) return host;
    nhwc_to_nchw(host.data(), nchw.data(), n, c, h, w);
    return nchw;
}

// A layer's data and its reference: conv_ref = relu?(conv + bias), pooled_ref = the pool of it
// (layer_ops_ref; empty for a layer without pool).
struct LayerData {
    std::vector<float> in, w, bias, conv_ref, pooled_ref;
};

LayerData make_layer_data(const Layer& l) {
    LayerData d;
    d.in.resize(std::size_t(l.input_elems(kN)));
    d.w.resize(std::size_t(l.weight_elems()));
    make_input(l, kN, 11, d.in.data());
    make_weights(l, 11, d.w.data());
    if (l.bias) {
        d.bias.resize(std::size_t(l.M));
        make_bias(l, 11, d.bias.data());
    }
    const float* bias = l.bias ? d.bias.data() : nullptr;
    d.conv_ref.resize(std::size_t(l.output_elems(kN)));
    conv2d_bias_relu_ref<double>(l, kN, d.in.data(), d.w.data(), bias, l.relu, d.conv_ref.data());
    if (l.pool != Pool::none) {
        d.pooled_ref.resize(std::size_t(post_op_elems(l, kN)));
        layer_ops_ref<double>(l, kN, d.in.data(), d.w.data(), bias, d.pooled_ref.data());
    }
    return d;
}

void check_close(const char* what, const std::vector<float>& got, const std::vector<float>& ref, Precision p) {
    REQUIRE(got.size() == ref.size());
    const ErrorStats e = compare(got.data(), ref.data(), std::int64_t(got.size()), nullptr, p);
    INFO(what << ": max_rel_err " << e.max_rel_err << " (threshold " << threshold(p) << "), max_abs_err "
              << e.max_abs_err << ", " << e.nonfinite << " non-finite, worst at " << e.worst_index);
    CHECK(e.nonfinite == 0);
    CHECK(e.max_rel_err <= threshold(p));
}

// One layer in one class and layout: planned, run on a stream, checked; then captured and replayed
// into zeroed outputs, which must come back the same bits. False when cuDNN skips it (WARN says why).
bool run_case(const Layer& l, const LayerData& d, Precision p, Layout layout) {
    const DType t = facts(p).operands;
    INFO(l.name << " (" << l.shape_string() << ", bias " << l.bias << ", relu " << l.relu << ", pool "
                << to_string(l.pool) << ") N=" << kN << " " << to_string(p) << " " << to_string(layout));
    Stream stream;
    const cudaStream_t s = stream.get();
    std::unique_ptr<CudnnChainLayer> layer;
    const PlanContext pc = plan_context(kN);
    try {
        layer = make_cudnn_chain_layer(l, kN, p, layout, pc);
    } catch (const cs::Skip& e) {
        WARN("SKIP " << l.name << " " << to_string(p) << " " << to_string(layout) << ": " << e.what());
        return false;
    }
    std::printf("cudnn chain %s %s %s: %s\n", l.name.c_str(), std::string(to_string(p)).c_str(),
                std::string(to_string(layout)).c_str(), layer->detail().c_str());
    CHECK(layer->workspace_bytes() <= pc.workspace_limit);

    const Buffer in = upload(d.in, kN, l.C, l.H, l.W, layout, t, s);
    const Buffer w = upload(d.w, l.M, l.C, l.R, l.S, layout, t, s);
    const Buffer bias = l.bias ? upload(d.bias, 1, l.M, 1, 1, Layout::nchw, t, s) : Buffer();
    Buffer conv(MemKind::device, std::size_t(l.output_elems(kN)) * dtype_bytes(t));
    Buffer pooled = l.pool != Pool::none ? Buffer(MemKind::device, std::size_t(post_op_elems(l, kN)) * dtype_bytes(t))
                                         : Buffer();
    CS_CUDA_CHECK(cudaMemset(conv.get(), 0xff, conv.bytes()));  // NaN poison: an unwritten element fails
    if (pooled.get()) CS_CUDA_CHECK(cudaMemset(pooled.get(), 0xff, pooled.bytes()));

    layer->run(in.get(), w.get(), bias.get(), conv.get(), pooled.get(), s);
    CS_CUDA_CHECK(cudaStreamSynchronize(s));
    const auto conv_out = download(conv, kN, l.M, l.E(), l.F(), layout, t, s);
    check_close("conv_out", conv_out, d.conv_ref, p);
    std::vector<float> pool_out;
    if (pooled.get()) {
        pool_out = download(pooled, kN, l.M, l.pooled_E(), l.pooled_F(), layout, t, s);
        check_close("pooled", pool_out, d.pooled_ref, p);
    }

    // The chain captures every layer's run() into one CUDA graph (bench/chain_run.cpp).
    CS_CUDA_CHECK(cudaMemset(conv.get(), 0, conv.bytes()));
    if (pooled.get()) CS_CUDA_CHECK(cudaMemset(pooled.get(), 0, pooled.bytes()));
    test::capture_and_replay(s, cudaStreamCaptureModeThreadLocal,
                       [&] { layer->run(in.get(), w.get(), bias.get(), conv.get(), pooled.get(), s); });
    const auto replayed = download(conv, kN, l.M, l.E(), l.F(), layout, t, s);
    CHECK(std::memcmp(replayed.data(), conv_out.data(), replayed.size() * sizeof(float)) == 0);
    if (pooled.get()) {
        const auto replayed_pool = download(pooled, kN, l.M, l.pooled_E(), l.pooled_F(), layout, t, s);
        CHECK(std::memcmp(replayed_pool.data(), pool_out.data(), replayed_pool.size() * sizeof(float)) == 0);
    }
    return true;
}

}  // namespace

TEST_CASE("cuDNN's chain layer: conv + bias + ReLU fused, then cuDNN's max-pool, against the CPU reference",
          "[gpu][chain][cudnn]") {
    struct Case {
        Layer layer;
        std::vector<Precision> classes;
    };
    const std::vector<Case> cases = {
        {chain_layer("chain_c3_pool", 3, 37, 37, 5, 3, 3, 1, 1, true, true, Pool::max3x3s2),
         {Precision::fp32, Precision::fp16, Precision::bf16}},
        {chain_layer("chain_c3_s2_nopool", 3, 19, 23, 5, 5, 3, 2, 1, true, true, Pool::none),
         {Precision::fp32, Precision::fp16}},
        // ReLU without bias: cuDNN 9.14 has no precompiled engine for that graph (8 to 13 seen, all
        // needing runtime compilation, which the search admits only in NHWC with C and M multiples
        // of 8), so this layer has such channel counts and runs in NHWC.
        {chain_layer("chain_relu_only_pool", 8, 12, 13, 16, 3, 3, 1, 0, false, true, Pool::max3x3s2),
         {Precision::fp32, Precision::fp16}},
        {chain_layer("chain_c8_m16_pool", 8, 15, 15, 16, 3, 3, 1, 1, true, true, Pool::max3x3s2),
         {Precision::fp32, Precision::fp16}},
    };
    for (const Case& c : cases) {
        const LayerData d = make_layer_data(c.layer);
        int ran = 0;
        for (Precision p : c.classes)
            for (Layout layout : {Layout::nchw, Layout::nhwc}) ran += run_case(c.layer, d, p, layout) ? 1 : 0;
        INFO(c.layer.name << ": no (class, layout) found a cuDNN engine for its fused graph");
        CHECK(ran > 0);
    }
}

TEST_CASE("cuDNN's chain layer refuses bad arguments", "[gpu][chain][cudnn]") {
    const Layer ok = chain_layer("chain_ok", 3, 9, 9, 4, 3, 3, 1, 1, true, true, Pool::max3x3s2);
    const PlanContext pc = plan_context(1);
    CHECK_THROWS_AS(make_cudnn_chain_layer(ok, 1, Precision::fp16acc, Layout::nchw, pc), cs::Error);
    CHECK_THROWS_AS(make_cudnn_chain_layer(ok, 0, Precision::fp32, Layout::nchw, pc), cs::Error);
    // A conv output of 2x2 cannot be pooled by a 3x3 window.
    const Layer small = chain_layer("chain_small", 3, 4, 4, 4, 3, 3, 1, 0, true, true, Pool::max3x3s2);
    CHECK_THROWS_AS(make_cudnn_chain_layer(small, 1, Precision::fp32, Layout::nhwc, pc), cs::Error);
}

#endif  // CONVSTUDY_HAVE_CUDNN
