// The harness's layout axis, element-type conversion and status rules, tested with
// test-local variants (not in the registry): a plain direct convolution written for NHWC
// tensors (KRSC weights) in float, half and bf16, so that the permutes, the GPU
// conversions, convert_ms and the NaN poison are checked independently of any family.
#include "catch.hpp"
#include "conv_shape.hpp"
#include "elements.cuh"
#include "gpu_test_util.hpp"
#include "simple_plan.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <stdexcept>

using namespace cs;
using namespace cs::gpu;
using cs::test::device;
using cs::test::make_ref_problem;
using cs::test::run_checked;

namespace {

// One thread per output element, NHWC input, KRSC weights, NHWC output.
template <typename T>
__global__ void nhwc_direct(const T* in, const T* w, T* out, long long N, ConvShape s) {
    const long long total = N * s.E * s.F * s.M;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int m = int(i % s.M);
        const long long p = i / s.M;
        const int f = int(p % s.F), e = int(p / s.F % s.E);
        const long long n = p / ((long long)s.E * s.F);
        float acc = 0;
        for (int r = 0; r < s.R; ++r)
            for (int q = 0; q < s.S; ++q) {
                const int h = e * s.stride - s.pad + r, x = f * s.stride - s.pad + q;
                if (h < 0 || h >= s.H || x < 0 || x >= s.W) continue;
                for (int c = 0; c < s.C; ++c)
                    acc += to_float(in[((n * s.H + h) * s.W + x) * s.C + c]) *
                           to_float(w[((long long)(m * s.R + r) * s.S + q) * s.C + c]);
            }
        out[i] = from_float<T>(acc);
    }
}

template <typename T>
Variant nhwc_variant(const char* name, Precision prec, DType io) {
    Variant v;
    v.name = name;
    v.family = "test";
    v.precision = prec;
    v.io = io;
    v.layouts = {Layout::nhwc};
    v.supports = [](const Problem&, const cudaDeviceProp&) -> std::optional<std::string> { return std::nullopt; };
    v.make_plan = [](const Problem& p, const PlanContext&) -> std::unique_ptr<Plan> {
        const ConvShape s = conv_shape(p.layer);
        return make_simple_plan(
            [s](const DeviceIO& io, cudaStream_t st) {
                nhwc_direct<T><<<256, 256, 0, st>>>(static_cast<const T*>(io.in), static_cast<const T*>(io.w),
                                                    static_cast<T*>(io.out), io.N, s);
            },
            "test nhwc direct");
    };
    return v;
}

}  // namespace

TEST_CASE("an NHWC variant passes through the harness's permutes in every memory mode", "[gpu][layout]") {
    auto& ctx = device();
    const Variant v = nhwc_variant<float>("test-nhwc-f32", Precision::fp32, DType::f32);
    for (const auto& l : {test::odd_layer("odd_c3_s2"), test::odd_layer("odd_c33_5x5")}) {
        const auto rp = make_ref_problem(l, 5);
        for (MemoryMode m : all_memory_modes()) {
            const auto r = run_checked(ctx, v, m, rp, test::test_options(2), Layout::nhwc);
            INFO(l.name << " " << to_string(m) << ": " << to_string(r.status) << " " << r.reason);
            REQUIRE(r.status == Status::pass);
            CHECK(r.err.max_rel_err <= 1e-5);
            CHECK(r.convert.median == 0.0);  // float: nothing to convert
        }
    }
}

TEST_CASE("a layout a variant does not declare is a SKIP with the reason", "[gpu][layout]") {
    auto& ctx = device();
    const Variant v = nhwc_variant<float>("test-nhwc-f32", Precision::fp32, DType::f32);
    const auto rp = make_ref_problem(test::odd_layer("odd_c7_p1"), 1);
    const auto r = run_checked(ctx, v, MemoryMode::pageable, rp, test::test_options(), Layout::nchw);
    REQUIRE(r.status == Status::skip);
    CHECK(r.reason.find("layout") != std::string::npos);
    // And an NCHW-only registry variant refuses nhwc the same way.
    const auto r2 = run_checked(ctx, test::variant("baseline"), MemoryMode::pageable, rp, test::test_options(),
                                Layout::nhwc);
    REQUIRE(r2.status == Status::skip);
}

TEST_CASE("half and bf16 variants get GPU-converted tensors and pay convert_ms", "[gpu][convert]") {
    auto& ctx = device();
    const Variant h = nhwc_variant<__half>("test-nhwc-f16", Precision::fp16, DType::f16);
    const Variant b = nhwc_variant<__nv_bfloat16>("test-nhwc-bf16", Precision::bf16, DType::bf16);
    const auto rp = make_ref_problem(test::odd_layer("odd_c33_5x5"), 3);
    for (const Variant* v : {&h, &b})
        for (MemoryMode m : all_memory_modes()) {
            const auto r = run_checked(ctx, *v, m, rp, test::test_options(2), Layout::nhwc);
            INFO(v->name << " " << to_string(m) << ": " << to_string(r.status) << " " << r.reason
                         << " err=" << r.err.max_rel_err);
            REQUIRE(r.status == Status::pass);
            CHECK(r.convert.median > 0.0);
            if (m != MemoryMode::streams)
                CHECK(r.total.median == Approx(r.h2d.median + r.convert.median + r.kernel.median + r.d2h.median)
                                            .epsilon(0.05));
            // The conversion really rounds: a half/bf16 result is not float-exact.
            CHECK(r.err.max_rel_err > 1e-6);
        }
}

TEST_CASE("an unwritten element of a half variant fails through the poison", "[gpu][convert][poison]") {
    auto& ctx = device();
    Variant v = nhwc_variant<__half>("test-nhwc-f16-short", Precision::fp16, DType::f16);
    auto real = v.make_plan;
    v.make_plan = [real](const Problem& p, const PlanContext& pc) -> std::unique_ptr<Plan> {
        std::shared_ptr<Plan> inner = real(p, pc);
        return make_simple_plan(
            [inner](const DeviceIO& io, cudaStream_t s) {
                DeviceIO fewer = io;
                fewer.N = io.N - 1;
                inner->run(fewer, s);
            },
            "skips the last image");
    };
    const auto rp = make_ref_problem(test::odd_layer("odd_c7_p1"), 2);
    for (MemoryMode m : all_memory_modes()) {
        const auto r = run_checked(ctx, v, m, rp, test::test_options(), Layout::nhwc);
        INFO(to_string(m));
        REQUIRE(r.status == Status::fail);
        // Each call leaves its last image unwritten: one call, or one per chunk (streams).
        const std::int64_t calls = m == MemoryMode::streams ? r.chunks : 1;
        CHECK(r.err.nonfinite == calls * rp.problem.layer.output_elems(1));
    }
}

TEST_CASE("a refusal after the first kernel ran is an ERROR, not a SKIP", "[gpu][status]") {
    auto& ctx = device();
    Variant v = nhwc_variant<float>("test-late-refusal", Precision::fp32, DType::f32);
    v.make_plan = [](const Problem&, const PlanContext&) -> std::unique_ptr<Plan> {
        return make_simple_plan([](const DeviceIO&, cudaStream_t) { throw Skip("refused while running"); },
                                "throws at run time");
    };
    const auto rp = make_ref_problem(test::odd_layer("odd_c7_p1"), 1);
    const auto r = run_checked(ctx, v, MemoryMode::pageable, rp, test::test_options(), Layout::nhwc);
    REQUIRE(r.status == Status::error);
    CHECK(r.reason.find("refused while running") != std::string::npos);
    // The same refusal while planning is a SKIP.
    Variant w = v;
    w.make_plan = [](const Problem&, const PlanContext&) -> std::unique_ptr<Plan> { throw Skip("cannot plan"); };
    const auto r2 = run_checked(ctx, w, MemoryMode::pageable, rp, test::test_options(), Layout::nhwc);
    REQUIRE(r2.status == Status::skip);
}
