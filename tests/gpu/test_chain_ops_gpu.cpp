// The chain's network ops on the GPU (bench/chain_ops.hpp) against their CPU definitions, bit
// for bit. bias + ReLU: the stored value plus the stored bias summed in float, ReLU as the
// reference's epilogue (-0 and NaN give +0), rounded once to the element type (the expectation
// rounds with chain_emulation's round_store, not with the GPU's conversions). The max-pool:
// maxpool3x3s2_ref of the stored values, which is exact in any format.
//
// Odd shapes (N = 2, C = 5, 6, 16, 96, planes 13, 27 and 37 square) in f32, f16 and bf16 and
// both layouts, so that every pack width of the kernels, the channel walk across plane ends and
// the scalar tails run; each tensor once at the start of its allocation and once an element
// past it (one-element accesses). The data holds +0 and -0 (the pool keeps the first of equal
// values, as the reference does) and, for the pool's NaN case, NaNs. Tensors go to the device
// and back through bench/convert.hpp and bench/layout.hpp, as a chain's do.
#include "buffers.hpp"
#include "chain_emulation.hpp"
#include "chain_ops.hpp"
#include "convert.hpp"
#include "error.hpp"
#include "gpu_test_util.hpp"
#include "layout.hpp"
#include "network_ref.hpp"

#include "catch.hpp"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace cs;
using namespace cs::gpu;

namespace {

emu::Store store_of(DType d) {
    switch (d) {
        case DType::f32: return emu::Store::f32;
        case DType::f16: return emu::Store::f16;
        case DType::bf16: return emu::Store::bf16;
    }
    return emu::Store::f32;
}

float stored(DType d, float v) { return emu::round_store(store_of(d), v); }

// n values uniform in [-scale, scale), every 13th +0 and every 17th -0, rounded to d.
std::vector<float> make_data(std::size_t n, float scale, DType d, std::uint32_t seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-scale, scale);
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        v[i] = stored(d, dist(gen));
        if (i % 13 == 5) v[i] = 0.0f;
        if (i % 17 == 3) v[i] = -0.0f;
    }
    return v;
}

bool same_bits(float a, float b) {
    if (std::isnan(a) && std::isnan(b)) return true;
    return std::memcmp(&a, &b, sizeof a) == 0;
}

// Every element bit-equal (NaN equal to NaN); the first difference in the message.
void check_equal(const std::vector<float>& got, const std::vector<float>& want) {
    REQUIRE(got.size() == want.size());
    std::size_t bad = 0, first = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
        if (!same_bits(got[i], want[i]) && bad++ == 0) first = i;
    INFO(bad << " of " << got.size() << " differ; first at " << first << ": got " << (bad ? got[first] : 0.0f)
              << ", expected " << (bad ? want[first] : 0.0f));
    CHECK(bad == 0);
}

// A device tensor of t's type and layout `offset` elements past a 256-byte aligned allocation.
struct DeviceTensor {
    ChainTensor4 t;
    std::size_t offset = 0;
    Buffer buf;
    DeviceTensor(const ChainTensor4& shape, std::size_t off)
        : t(shape), offset(off), buf(MemKind::device, std::size_t(t.elems() + 1 + off) * dtype_bytes(t.type)) {}
    void* get() const { return static_cast<char*>(buf.get()) + offset * dtype_bytes(t.type); }
};

// NCHW float data into the tensor: permuted to its layout here, converted on the device.
void upload(const std::vector<float>& nchw, const DeviceTensor& d, cudaStream_t s) {
    const ChainTensor4& t = d.t;
    std::vector<float> host = nchw;
    if (t.layout == Layout::nhwc) nchw_to_nhwc(nchw.data(), host.data(), t.N, t.C, t.H, t.W);
    Buffer scratch(MemKind::device, host.size() * sizeof(float));
    CS_CUDA_CHECK(cudaMemcpyAsync(scratch.get(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice, s));
    convert_from_float(scratch.as<float>(), d.get(), t.type, t.elems(), s);
    CS_CUDA_CHECK(cudaStreamSynchronize(s));
}

// The tensor back as NCHW float data.
std::vector<float> download(const DeviceTensor& d, cudaStream_t s) {
    const ChainTensor4& t = d.t;
    std::vector<float> host(std::size_t(t.elems())), nchw(host.size());
    Buffer scratch(MemKind::device, host.size() * sizeof(float));
    convert_to_float(d.get(), t.type, scratch.as<float>(), t.elems(), s);
    CS_CUDA_CHECK(cudaMemcpyAsync(host.data(), scratch.get(), host.size() * sizeof(float), cudaMemcpyDeviceToHost, s));
    CS_CUDA_CHECK(cudaStreamSynchronize(s));
    if (t.layout == Layout::nchw) return host;
    nhwc_to_nchw(host.data(), nchw.data(), t.N, t.C, t.H, t.W);
    return nchw;
}

// What bias_relu makes of NCHW data y (bias: C values, or empty for none).
std::vector<float> bias_relu_expected(const std::vector<float>& y, const ChainTensor4& t,
                                      const std::vector<float>& bias, bool relu) {
    std::vector<float> out(y.size());
    const std::int64_t hw = std::int64_t(t.H) * t.W;
    for (std::size_t i = 0; i < y.size(); ++i) {
        float v = y[i];
        if (!bias.empty()) v += bias[std::size_t(std::int64_t(i) / hw % t.C)];  // in float: one rounding below
        if (relu && !(v > 0.0f)) v = 0.0f;
        out[i] = stored(t.type, v);
    }
    return out;
}

std::vector<float> maxpool_expected(const std::vector<float>& in, const ChainTensor4& t) {
    const int E = maxpool3x3s2_size(t.H), F = maxpool3x3s2_size(t.W);
    std::vector<float> out(std::size_t(t.N * t.C * E * F));
    maxpool3x3s2_ref(t.N * t.C, t.H, t.W, in.data(), out.data());
    return out;
}

ChainTensor4 pooled(const ChainTensor4& t) {
    ChainTensor4 o = t;
    o.H = maxpool3x3s2_size(t.H);
    o.W = maxpool3x3s2_size(t.W);
    return o;
}

// Every shape, type, layout and offset the tests run.
template <typename F>
void for_each_case(F&& f) {
    for (DType type : {DType::f32, DType::f16, DType::bf16})
        for (Layout layout : {Layout::nchw, Layout::nhwc})
            for (int C : {5, 6, 16, 96})
                for (int H : {13, 27, 37})
                    for (std::size_t offset : {std::size_t(0), std::size_t(1)}) {
                        ChainTensor4 t;
                        t.type = type, t.layout = layout, t.N = 2, t.C = C, t.H = H, t.W = H;
                        INFO(to_string(type) << " " << to_string(layout) << " N=2 C=" << C << " H=W=" << H
                                             << " offset " << offset);
                        f(t, offset);
                    }
}

// The channels' bias on the device, then f(bias or null, relu) for each of the four epilogues.
template <typename F>
void for_each_op(const std::vector<float>& bias, const ChainTensor4& t, std::size_t offset, cudaStream_t s, F&& f) {
    DeviceTensor b(ChainTensor4{t.type, Layout::nchw, 1, t.C, 1, 1}, offset);
    upload(bias, b, s);
    for (const bool with_bias : {true, false})
        for (const bool relu : {true, false}) {
            INFO("bias " << with_bias << " relu " << relu);
            f(with_bias ? static_cast<const void*>(b.get()) : nullptr, relu);
        }
}

// Runs maxpool3x3s2 on NCHW data `in` of shape t and checks it against the reference.
void check_pool(const std::vector<float>& in, const ChainTensor4& t, std::size_t offset, cudaStream_t s) {
    DeviceTensor x(t, offset), y(pooled(t), offset);
    upload(in, x, s);
    maxpool3x3s2(x.get(), t, y.get(), s);
    check_equal(download(y, s), maxpool_expected(in, t));
}

}  // namespace

TEST_CASE("bias_relu is the float sum rounded once, ReLU as the reference's, in every type and layout",
          "[gpu][chain]") {
    Stream stream;
    const cudaStream_t s = stream.get();
    std::uint32_t seed = 1;
    for_each_case([&](const ChainTensor4& t, std::size_t offset) {
        const auto y = make_data(std::size_t(t.elems()), 2.0f, t.type, seed++);
        const auto bias = make_data(std::size_t(t.C), 1.0f, t.type, seed++);
        for_each_op(bias, t, offset, s, [&](const void* b, bool relu) {
            DeviceTensor d(t, offset);
            upload(y, d, s);
            bias_relu(d.get(), t, b, relu, s);
            // No bias and no ReLU: nothing is enqueued, the data is unchanged.
            const std::vector<float> none;
            const auto want = b || relu ? bias_relu_expected(y, t, b ? bias : none, relu) : y;
            check_equal(download(d, s), want);
        });
    });
}

TEST_CASE("maxpool3x3s2 is maxpool3x3s2_ref in every type and layout", "[gpu][chain]") {
    Stream stream;
    std::uint32_t seed = 1000;
    for_each_case([&](const ChainTensor4& t, std::size_t offset) {
        check_pool(make_data(std::size_t(t.elems()), 1.0f, t.type, seed++), t, offset, stream.get());
    });
}

TEST_CASE("bias_relu_maxpool3x3s2 is bias_relu then maxpool3x3s2, bit for bit, NaN included", "[gpu][chain]") {
    Stream stream;
    const cudaStream_t s = stream.get();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::uint32_t seed = 3000;
    for_each_case([&](const ChainTensor4& t, std::size_t offset) {
        auto y = make_data(std::size_t(t.elems()), 2.0f, t.type, seed++);
        if (t.H == 27) y[std::size_t(2 * t.W + 2)] = nan;  // a NaN the ReLU maps to zero, as bias_relu does
        const auto bias = make_data(std::size_t(t.C), 1.0f, t.type, seed++);
        for_each_op(bias, t, offset, s, [&](const void* b, bool relu) {
            DeviceTensor x(t, offset), p(pooled(t), offset);
            upload(y, x, s);
            bias_relu_maxpool3x3s2(x.get(), t, b, relu, p.get(), s);
            // the same through the two passes, on the GPU and on the CPU
            DeviceTensor x2(t, offset), p2(pooled(t), offset);
            upload(y, x2, s);
            bias_relu(x2.get(), t, b, relu, s);
            maxpool3x3s2(x2.get(), t, p2.get(), s);
            const auto fused = download(p, s);
            check_equal(fused, download(p2, s));
            const std::vector<float> none;
            const auto act = b || relu ? bias_relu_expected(y, t, b ? bias : none, relu) : y;
            check_equal(fused, maxpool_expected(act, t));
            check_equal(download(x, s), y);  // the input is left as it was
        });
    });
}

TEST_CASE("a NaN in a max-pool window is the window's result", "[gpu][chain]") {
    Stream stream;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::uint32_t seed = 2000;
    for_each_case([&](const ChainTensor4& t, std::size_t offset) {
        if (t.H != 27) return;
        auto in = make_data(std::size_t(t.elems()), 1.0f, t.type, seed++);
        // NaNs at a window's first element, its last, a shared edge and a plane's last element.
        const std::int64_t hw = std::int64_t(t.H) * t.W;
        const std::int64_t W = t.W;
        for (const std::int64_t at : {std::int64_t(0), 2 * W + 2, hw + 4 * W + 2, 3 * hw - 1, t.elems() - 1})
            in[std::size_t(at)] = nan;
        const auto want = maxpool_expected(in, t);
        std::size_t nans = 0;
        for (float v : want) nans += std::isnan(v) ? 1 : 0;
        REQUIRE(nans >= 5);  // the positions above reach at least one window each
        check_pool(in, t, offset, stream.get());
    });
}

TEST_CASE("bias_relu and maxpool3x3s2 are captured into a CUDA graph", "[gpu][chain]") {
    Stream stream;
    const cudaStream_t s = stream.get();
    const ChainTensor4 t{DType::f16, Layout::nhwc, 2, 16, 27, 27};
    const auto y = make_data(std::size_t(t.elems()), 2.0f, t.type, 7);
    const auto bias = make_data(std::size_t(t.C), 1.0f, t.type, 8);
    DeviceTensor d(t, 0), b(ChainTensor4{t.type, Layout::nchw, 1, t.C, 1, 1}, 0), p(pooled(t), 0);
    upload(y, d, s);
    upload(bias, b, s);
    // Global capture mode: an allocation or a synchronisation inside either call fails the capture.
    test::capture_and_replay(s, cudaStreamCaptureModeGlobal, [&] {
        bias_relu(d.get(), t, b.get(), true, s);
        maxpool3x3s2(d.get(), t, p.get(), s);
    });
    const auto activated = bias_relu_expected(y, t, bias, true);
    check_equal(download(d, s), activated);
    check_equal(download(p, s), maxpool_expected(activated, t));
}

TEST_CASE("maxpool3x3s2 refuses planes smaller than its window and empty tensors", "[gpu][chain]") {
    Stream stream;
    const cudaStream_t s = stream.get();
    Buffer in(MemKind::device, 4096), out(MemKind::device, 4096);
    const auto shape = [](int N, int C, int H, int W) { return ChainTensor4{DType::f32, Layout::nchw, N, C, H, W}; };
    for (Layout layout : {Layout::nchw, Layout::nhwc})
        for (const ChainTensor4& bad : {shape(1, 4, 2, 9), shape(1, 4, 9, 2), shape(1, 4, 0, 0), shape(0, 4, 9, 9),
                                        shape(1, 0, 9, 9), shape(1, -4, 9, 9)}) {
            ChainTensor4 t = bad;
            t.layout = layout;
            INFO(to_string(layout) << " " << t.N << "x" << t.C << "x" << t.H << "x" << t.W);
            CHECK_THROWS_AS(maxpool3x3s2(in.get(), t, out.get(), s), cs::Error);
        }
    // A 3x3 plane is the smallest that pools (one output per plane).
    CHECK_NOTHROW(maxpool3x3s2(in.get(), shape(1, 4, 3, 3), out.get(), s));
    // bias_relu with neither op enqueues nothing and looks at nothing, not even the tensor.
    CHECK_NOTHROW(bias_relu(nullptr, shape(1, 4, 9, 9), nullptr, false, s));
    CHECK_THROWS_AS(bias_relu(in.get(), shape(1, -4, 9, 9), nullptr, true, s), cs::Error);
    CS_CUDA_CHECK(cudaStreamSynchronize(s));
}
