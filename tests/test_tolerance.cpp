// Error metrics and thresholds (host code, no GPU needed).
#include "catch.hpp"

#include "tolerance.hpp"

#include <cmath>
#include <limits>
#include <vector>

using namespace cs::gpu;

TEST_CASE("compare measures max abs, max rel and relative L2 errors", "[tolerance]") {
    const std::vector<float> golden = {1.0f, -4.0f, 2.0f, 0.5f};
    std::vector<float> out = golden;
    auto e = compare(out.data(), golden.data(), 4);
    CHECK(e.max_abs_err == 0);
    CHECK(e.max_rel_err == 0);
    CHECK(e.rel_l2_err == 0);
    CHECK(e.max_abs_golden == 4.0);
    CHECK(e.nonfinite == 0);
    CHECK(e.compared == 4);

    out[2] = 2.5f;
    e = compare(out.data(), golden.data(), 4);
    CHECK(e.max_abs_err == Approx(0.5));
    CHECK(e.max_rel_err == Approx(0.125));
    CHECK(e.worst_index == 2);
    CHECK(e.rel_l2_err == Approx(0.5 / std::sqrt(1 + 16 + 4 + 0.25)));
}

TEST_CASE("a NaN or Inf output fails whatever the other numbers", "[tolerance]") {
    const std::vector<float> golden = {1.0f, 2.0f, 3.0f};
    std::vector<float> out = golden;
    out[1] = std::numeric_limits<float>::quiet_NaN();
    auto e = compare(out.data(), golden.data(), 3);
    CHECK(e.nonfinite == 1);
    CHECK(e.worst_index == 1);
    CHECK_FALSE(passes(e, Precision::fp16acc));
    out[1] = std::numeric_limits<float>::infinity();
    e = compare(out.data(), golden.data(), 3);
    CHECK(e.nonfinite == 1);
    CHECK_FALSE(passes(e, Precision::fp32));
}

TEST_CASE("thresholds grow with the precision class", "[tolerance]") {
    CHECK(threshold(Precision::fp32) < threshold(Precision::tf32));
    CHECK(threshold(Precision::tf32) <= threshold(Precision::fp16));
    CHECK(threshold(Precision::fp16) < threshold(Precision::fp16acc));
    ErrorStats e;
    e.max_rel_err = 2e-4;
    CHECK_FALSE(passes(e, Precision::fp32));
    CHECK(passes(e, Precision::tf32));
}

TEST_CASE("sampled comparison uses the given indices", "[tolerance]") {
    const std::vector<float> out = {0, 1, 2, 3, 4, 5};
    const std::vector<std::int64_t> idx = {1, 4};
    const std::vector<double> val = {1.0, 4.25};
    auto e = compare_sampled(out.data(), idx.data(), val.data(), 2, 5.0);
    CHECK(e.max_abs_err == Approx(0.25));
    CHECK(e.max_rel_err == Approx(0.05));
    CHECK(e.worst_index == 4);
    CHECK(e.compared == 2);
}
