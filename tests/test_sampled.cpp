// The sampled check's reference data (batches without golden files).
#include "catch.hpp"

#include "conv_ref.hpp"
#include "datagen.hpp"
#include "problem_data.hpp"

#include <set>

using namespace cs;

TEST_CASE("sampled reference values equal the full CPU reference at those elements", "[sampled]") {
    const auto table = parse_layer_table(
        R"({"layers": [{"name": "s", "C": 5, "H": 13, "W": 11, "M": 6, "R": 3, "S": 5, "stride": 2, "pad": 2}]})",
        "test");
    const Layer& l = table.layers[0];
    const std::int64_t N = 3;
    const auto d = cli::make_sampled(l, N, kDefaultSeed, 200, true);
    REQUIRE(d.golden.empty());
    REQUIRE(d.sample_index.size() == d.sample_value.size());
    REQUIRE(d.sample_index.size() >= 150);
    REQUIRE(d.cpu.repeats == 1);
    std::vector<float> full(std::size_t(l.output_elems(N)));
    conv2d_ref<double>(l, N, d.input.data(), d.weights.data(), full.data());
    double max_abs = 0;
    for (std::size_t i = 0; i < d.sample_index.size(); ++i) {
        CHECK(float(d.sample_value[i]) == full[std::size_t(d.sample_index[i])]);
        max_abs = std::max(max_abs, std::abs(d.sample_value[i]));
    }
    CHECK(d.sample_max_abs == max_abs);
    // The corners of the first and last image are always sampled.
    std::set<std::int64_t> s(d.sample_index.begin(), d.sample_index.end());
    CHECK(s.count(0));
    CHECK(s.count(l.output_elems(N) - 1));
    const auto h = d.host();
    CHECK(h.golden == nullptr);
    CHECK(h.sample_count == std::int64_t(d.sample_index.size()));
}

TEST_CASE("sample indices are deterministic, sorted, unique and in range", "[sampled]") {
    Layer l;
    l.name = "x";
    l.C = 2, l.H = 9, l.W = 9, l.M = 4, l.R = 3, l.S = 3;
    const auto a = cli::sample_indices(l, 5, 100, 1);
    const auto b = cli::sample_indices(l, 5, 100, 1);
    CHECK(a == b);
    for (std::size_t i = 1; i < a.size(); ++i) CHECK(a[i - 1] < a[i]);
    CHECK(a.front() >= 0);
    CHECK(a.back() < l.output_elems(5));
    // Asking for more samples than elements gives every element once.
    const auto all = cli::sample_indices(l, 1, 1 << 20, 1);
    CHECK(std::int64_t(all.size()) == l.output_elems(1));
}
