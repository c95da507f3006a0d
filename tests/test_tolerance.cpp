// Error metrics and the pass rule (host code, no GPU needed). The injected-bug tests that
// justify the numbers are in test_injected_errors.cpp.
#include "catch.hpp"

#include "tolerance.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

using namespace cs::gpu;

namespace {
const Precision kAll[] = {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16, Precision::fp16acc};
}

TEST_CASE("compare measures max abs, max rel and relative L2 errors", "[tolerance]") {
    const std::vector<float> golden = {1.0f, -4.0f, 2.0f, 0.5f};
    std::vector<float> out = golden;
    auto e = compare(out.data(), golden.data(), 4, nullptr, Precision::fp32);
    CHECK(e.max_abs_err == 0);
    CHECK(e.max_rel_err == 0);
    CHECK(e.rel_l2_err == 0);
    CHECK(e.max_abs_golden == 4.0);
    CHECK(e.nonfinite == 0);
    CHECK(e.compared == 4);
    CHECK_FALSE(e.bound_checked);

    out[2] = 2.5f;
    e = compare(out.data(), golden.data(), 4, nullptr, Precision::fp32);
    CHECK(e.max_abs_err == Approx(0.5));
    CHECK(e.max_rel_err == Approx(0.125));
    CHECK(e.worst_index == 2);
    CHECK(e.rel_l2_err == Approx(0.5 / std::sqrt(1 + 16 + 4 + 0.25)));
}

TEST_CASE("a NaN or Inf output fails whatever the other numbers", "[tolerance]") {
    const std::vector<float> golden = {1.0f, 2.0f, 3.0f};
    const std::vector<float> bound = {10.0f, 10.0f, 10.0f};
    std::vector<float> out = golden;
    out[1] = std::numeric_limits<float>::quiet_NaN();
    auto e = compare(out.data(), golden.data(), 3, nullptr, Precision::fp16acc);
    CHECK(e.nonfinite == 1);
    CHECK(e.worst_index == 1);
    CHECK_FALSE(passes(e, Precision::fp16acc));
    CHECK(failure_reason(e, Precision::fp16acc).find("NaN/Inf") != std::string::npos);
    out[1] = std::numeric_limits<float>::infinity();
    e = compare(out.data(), golden.data(), 3, bound.data(), Precision::fp32);
    CHECK(e.nonfinite == 1);
    CHECK(std::isinf(e.max_bound_ratio));
    CHECK_FALSE(passes(e, Precision::fp32));
}

TEST_CASE("thresholds and bound factors grow with the precision class", "[tolerance]") {
    CHECK(threshold(Precision::fp32) < threshold(Precision::tf32));
    CHECK(threshold(Precision::tf32) <= threshold(Precision::fp16));
    CHECK(threshold(Precision::fp16) < threshold(Precision::bf16));
    CHECK(threshold(Precision::bf16) < threshold(Precision::fp16acc));
    CHECK(bound_factor(Precision::fp16) < bound_factor(Precision::bf16));
    CHECK(bound_factor(Precision::tf32) < bound_factor(Precision::bf16));
    CHECK(bound_factor(Precision::bf16) < bound_factor(Precision::fp16acc));
    CHECK(output_roundoff(Precision::fp32) == 0);
    CHECK(output_roundoff(Precision::tf32) == 0);
    CHECK(output_roundoff(Precision::fp16) == std::ldexp(1.0, -11));
    CHECK(output_roundoff(Precision::fp16acc) == std::ldexp(1.0, -11));
    CHECK(output_roundoff(Precision::bf16) == std::ldexp(1.0, -8));
    for (Precision p : kAll) {
        INFO(to_string(p));
        CHECK(threshold(p) > 0);
        CHECK(bound_factor(p) > 0);
        CHECK(std::string(threshold_reason(p)).size() > 20);
    }
    ErrorStats e;
    e.max_rel_err = 2e-4;
    CHECK_FALSE(passes(e, Precision::fp32));
    CHECK(passes(e, Precision::tf32));
    CHECK(failure_reason(e, Precision::tf32).empty());
    CHECK(failure_reason(e, Precision::fp32).find("max_rel_err") != std::string::npos);
}

TEST_CASE("the per-element rule: |out - golden| <= tau * B + u_out * |golden|", "[tolerance]") {
    // Two elements, B = 100 and 8: the same absolute error passes the first and fails
    // the second, although max_rel_err is far under every threshold.
    const std::vector<float> golden = {1000.0f, 1.0f};
    const std::vector<float> bound = {100.0f, 8.0f};
    for (Precision p : kAll) {
        INFO(to_string(p));
        const double tau = bound_factor(p), u = output_roundoff(p);
        // Twice the second element's allowance, on the float grid of 1.0 (2^-23) so that
        // 1.0f + d holds it exactly (fp32: 2 * 8 * tau is ~940 grid steps, so d is within
        // 0.1% of twice the allowance).
        const float d = float(std::ldexp(std::round(std::ldexp(2.0 * (tau * 8.0 + u * 1.0), 23)), -23));
        const double want = double(d) / (tau * 8.0 + u * 1.0);  // ~2
        std::vector<float> out = golden;
        out[0] += d;  // within the first element's allowance (tau*100 + u*1000)
        auto e = compare(out.data(), golden.data(), 2, bound.data(), p);
        CHECK(e.bound_checked);
        CHECK(e.max_rel_err < threshold(p));
        CHECK(e.max_bound_ratio < 1);
        CHECK(passes(e, p));
        out[1] += d;
        e = compare(out.data(), golden.data(), 2, bound.data(), p);
        CHECK(e.max_rel_err < threshold(p));
        CHECK(want == Approx(2.0).epsilon(3e-3));
        CHECK(e.max_bound_ratio == Approx(want).epsilon(1e-6));
        CHECK(e.bound_worst_index == 1);
        CHECK_FALSE(passes(e, p));
        CHECK(failure_reason(e, p).find("bound") != std::string::npos);
        // Without the bound the same output passes: the rule is what catches it.
        CHECK(passes(compare(out.data(), golden.data(), 2, nullptr, p), p));
    }
}

TEST_CASE("an element whose products are all zero must be exact, a NaN bound fails", "[tolerance]") {
    const std::vector<float> golden = {0.0f, 1.0f};
    std::vector<float> bound = {0.0f, 1.0f};
    std::vector<float> out = golden;
    auto e = compare(out.data(), golden.data(), 2, bound.data(), Precision::fp16acc);
    CHECK(e.max_bound_ratio == 0);
    CHECK(passes(e, Precision::fp16acc));
    out[0] = 1e-30f;
    e = compare(out.data(), golden.data(), 2, bound.data(), Precision::fp16acc);
    CHECK(std::isinf(e.max_bound_ratio));
    CHECK_FALSE(passes(e, Precision::fp16acc));
    out[0] = 0.0f;
    bound[1] = std::numeric_limits<float>::quiet_NaN();
    e = compare(out.data(), golden.data(), 2, bound.data(), Precision::fp16acc);
    CHECK_FALSE(passes(e, Precision::fp16acc));
}

TEST_CASE("sampled comparison uses the given indices and bounds", "[tolerance]") {
    const std::vector<float> out = {0, 1, 2, 3, 4, 5};
    const std::vector<std::int64_t> idx = {1, 4};
    const std::vector<double> val = {1.0, 4.25};
    auto e = compare_sampled(out.data(), idx.data(), val.data(), nullptr, 2, 5.0, Precision::fp32);
    CHECK(e.max_abs_err == Approx(0.25));
    CHECK(e.max_rel_err == Approx(0.05));
    CHECK(e.worst_index == 4);
    CHECK(e.compared == 2);
    CHECK_FALSE(e.bound_checked);
    const std::vector<double> bnd = {10.0, 1000.0};
    e = compare_sampled(out.data(), idx.data(), val.data(), bnd.data(), 2, 5.0, Precision::fp16acc);
    CHECK(e.bound_checked);
    CHECK(e.max_bound_ratio == Approx(0.25 / (6e-3 * 1000.0 + std::ldexp(4.25, -11))));
    CHECK(e.bound_worst_index == 4);
}

TEST_CASE("compare and compare_sampled over every index give the same statistics", "[tolerance]") {
    // Enough elements for several OpenMP threads in compare; the largest error (index 7777)
    // and the largest bound ratio (index 1234, a tight bound) in different places.
    const std::int64_t n = 20000;
    std::vector<float> golden(n), out(n), bound(n);
    for (std::int64_t i = 0; i < n; ++i) {
        golden[i] = float(std::sin(0.01 * double(i)) * 3.0);
        bound[i] = 100.0f;
        out[i] = golden[i] + float(i % 7) * 1e-6f;
    }
    out[7777] = golden[7777] + 1e-3f;
    bound[1234] = 0.01f;
    out[1234] = golden[1234] + 1e-4f;
    std::vector<std::int64_t> idx(n);
    std::vector<double> gval(n), bval(n);
    double max_g = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        idx[i] = i;
        gval[i] = golden[i];
        bval[i] = bound[i];
        max_g = std::max(max_g, std::fabs(gval[i]));
    }
    for (auto p : kAll) {
        INFO(to_string(p));
        const ErrorStats a = compare(out.data(), golden.data(), n, bound.data(), p, 363);
        const ErrorStats b = compare_sampled(out.data(), idx.data(), gval.data(), bval.data(), n, max_g, p, 363);
        CHECK(a.max_abs_golden == b.max_abs_golden);
        CHECK(a.max_abs_err == b.max_abs_err);
        CHECK(a.max_rel_err == b.max_rel_err);
        CHECK(a.rel_l2_err == Approx(b.rel_l2_err).epsilon(1e-12));  // the threads' sums add in another order
        CHECK(a.worst_index == 7777);
        CHECK(b.worst_index == 7777);
        CHECK(a.bound_checked);
        CHECK(b.bound_checked);
        CHECK(a.bound_tau == b.bound_tau);
        CHECK(a.max_bound_ratio == b.max_bound_ratio);
        CHECK(a.bound_worst_index == 1234);
        CHECK(b.bound_worst_index == 1234);
        CHECK(a.nonfinite == 0);
        CHECK(b.nonfinite == 0);
        CHECK(a.compared == n);
        CHECK(b.compared == n);
    }
    // NaN outputs: counted by both, the first one where nothing else is worse, and the
    // error and the bound ratio infinite.
    out.assign(golden.begin(), golden.end());
    out[5] = std::numeric_limits<float>::quiet_NaN();
    out[15000] = std::numeric_limits<float>::infinity();
    const ErrorStats a = compare(out.data(), golden.data(), n, bound.data(), Precision::fp32, 363);
    const ErrorStats b =
        compare_sampled(out.data(), idx.data(), gval.data(), bval.data(), n, max_g, Precision::fp32, 363);
    CHECK(a.nonfinite == 2);
    CHECK(b.nonfinite == 2);
    CHECK(std::isinf(a.max_abs_err));
    CHECK(std::isinf(b.max_abs_err));
    CHECK(std::isinf(a.max_bound_ratio));
    CHECK(std::isinf(b.max_bound_ratio));
    CHECK(b.worst_index == 5);
    CHECK((a.worst_index == 5 || a.worst_index == 15000));  // the first of the thread merged first
}

TEST_CASE("tau grows for short sums, capped at the rigorous dot-product bound", "[tolerance]") {
    using cs::gpu::bound_factor;
    for (auto p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16, Precision::fp16acc}) {
        INFO(cs::gpu::to_string(p));
        // Long sums (every AlexNet output sums >= 363 products): the calibrated value.
        CHECK(bound_factor(p, 363) == bound_factor(p));
        CHECK(bound_factor(p, 3456) == bound_factor(p));
        // Shorter sums never get a tighter allowance, and it grows as they shorten.
        CHECK(bound_factor(p, 45) >= bound_factor(p, 100));
        CHECK(bound_factor(p, 100) >= bound_factor(p));
    }
    // bf16 with 5 products: 2 * 2^-8 + 5 * 2^-24 (the rigorous bound), not 2e-3.
    CHECK(bound_factor(Precision::bf16, 5) == Approx(2 * 0x1p-8 + 5 * 0x1p-24));
    CHECK(bound_factor(Precision::fp16, 1) == Approx(2 * 0x1p-11 + 0x1p-24));
}

TEST_CASE("min_terms counts the products of the most-padded output", "[tolerance]") {
    cs::Layer l;
    l.C = 7, l.H = 9, l.W = 9, l.M = 4, l.R = 3, l.S = 3, l.stride = 1, l.pad = 1;
    CHECK(cs::gpu::min_terms(l) == 7 * 2 * 2);  // a corner sees 2x2 of the 3x3 taps
    l.pad = 0;
    CHECK(cs::gpu::min_terms(l) == 7 * 9);
    const cs::Layer* conv2 = cs::default_layer_table().find("conv2");
    REQUIRE(conv2 != nullptr);
    CHECK(cs::gpu::min_terms(*conv2) == 96 * 3 * 3);  // 5x5, pad 2: a corner sees 3x3
}

// Every class has exactly one row in the precision table (bench/precision.hpp), named uniquely,
// and what the table says is what the functions answer (the values tolerance.hpp derives).
TEST_CASE("the precision table has one row per class, and the functions read it", "[tolerance]") {
    using cs::gpu::Precision;
    const std::vector<Precision> all = {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16,
                                        Precision::fp16acc};
    REQUIRE(std::size(cs::gpu::kPrecisions) == all.size());
    for (Precision p : all) {
        const auto& f = cs::gpu::facts(p);
        INFO(f.name);
        CHECK(f.id == p);
        CHECK(cs::gpu::parse_precision(f.name) == p);
        CHECK(cs::gpu::to_string(p) == f.name);
        CHECK(cs::gpu::threshold(p) == f.max_rel_err);
        CHECK(cs::gpu::bound_factor(p) == f.tau);
        CHECK(cs::gpu::output_roundoff(p) == f.u_out);
        CHECK(std::string(cs::gpu::threshold_reason(p)) == std::string(f.reason));
    }
    CHECK_FALSE(cs::gpu::parse_precision("fp8"));
    // The values the pass rule was derived with (tolerance.hpp), pinned: moving them is a decision.
    CHECK(cs::gpu::threshold(Precision::fp32) == 1e-4);
    CHECK(cs::gpu::bound_factor(Precision::tf32) == 6e-4);
    // A 5-product sum of fp16 operands: the rigorous bound 2*u_in + 5*u_acc, above the calibrated tau.
    CHECK(cs::gpu::bound_factor(Precision::fp16, 5) == Approx(2 * 0x1p-11 + 5 * 0x1p-24));
    CHECK(cs::gpu::output_roundoff(Precision::bf16) == 0x1p-8);
    CHECK(cs::gpu::anchor_class(Precision::fp16acc) == Precision::fp16);
    CHECK(cs::gpu::ceiling_class(Precision::fp16acc) == Precision::fp16);
    CHECK(cs::gpu::anchor_class(Precision::bf16) == Precision::bf16);
}

// A precision class added in a test, as CONTRIBUTING's "Add a precision class" walks through:
// one row of facts (here 8-bit float operands, e4m3: unit roundoff 2^-4, float accumulation and
// output) is all the pass rule needs; the class's kernels and conversion are the rest.
TEST_CASE("a test-only precision class is one row of facts, and the pass rule runs on it", "[tolerance]") {
    using cs::gpu::DType;
    using cs::gpu::Precision;
    constexpr cs::gpu::PrecisionFacts kE4m3{Precision(100), "e4m3-test", DType::f16, Precision::fp16, Precision::fp16,
                                            /*max_rel_err*/ 0.15, /*tau*/ 0.06, /*u_in*/ 0x1p-4, /*u_acc*/ 0x1p-24,
                                            /*u_out*/ 0, "test only: e4m3 operands", "#000000"};
    // 64 outputs of golden 5 and B = sum|w*x| = 10, each off by 0.5: max_rel_err 0.1, and each
    // error 0.5 within tau * B = 0.6.
    std::vector<float> golden(64, 5.0f), out(64, 5.5f), bound(64, 10.0f);
    auto e = cs::gpu::compare(out.data(), golden.data(), 64, bound.data(), kE4m3);
    CHECK(e.max_rel_err == Approx(0.1));
    CHECK(e.max_bound_ratio == Approx(0.5 / 0.6));
    CHECK(cs::gpu::passes(e, kE4m3));
    CHECK(cs::gpu::failure_reason(e, kE4m3).empty());
    // fp16's row refuses the same output: the row is what decides.
    const auto e16 = cs::gpu::compare(out.data(), golden.data(), 64, bound.data(), Precision::fp16);
    CHECK_FALSE(cs::gpu::passes(e16, Precision::fp16));
    // A dropped tap (one output off by 2): past the class's threshold, and the reason says so.
    out[7] = 7.0f;
    e = cs::gpu::compare(out.data(), golden.data(), 64, bound.data(), kE4m3);
    CHECK_FALSE(cs::gpu::passes(e, kE4m3));
    CHECK(cs::gpu::failure_reason(e, kE4m3).find("> threshold 0.15") != std::string::npos);
    // A short sum gets the rigorous bound from the row's roundoffs: 2 * 2^-4 + 5 * 2^-24.
    CHECK(cs::gpu::bound_factor(kE4m3, 5) == Approx(2 * 0x1p-4 + 5 * 0x1p-24));
    CHECK(cs::gpu::bound_factor(kE4m3) == 0.06);
}
