// The counter-based data generator: range and exactness, independence from the thread
// count and the batch size, distinct streams per layer and kind, the weight scale, and
// pinned values (golden files depend on them: changing the generator is a new version).
#include "catch.hpp"

#include "datagen.hpp"
#include "layer.hpp"

#include <omp.h>

#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace {

struct ThreadsGuard {
    int saved = omp_get_max_threads();
    ~ThreadsGuard() { omp_set_num_threads(saved); }
};

bool bit_equal(const float* a, const float* b, std::size_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

}  // namespace

TEST_CASE("generator values lie in -1 <= v < 1 on the 2^-23 grid", "[datagen]") {
    const std::int64_t n = 1 << 20;
    std::vector<float> v(n);
    cs::fill_uniform(v.data(), n, cs::kDefaultSeed, cs::tensor_id("conv2", cs::TensorKind::input), 0, 1.0f);
    std::size_t out_of_range = 0, off_grid = 0;
    float lo = 2, hi = -2;
    double sum = 0, sum2 = 0;
    for (const float x : v) {
        if (!(x >= -1.0f && x < 1.0f)) ++out_of_range;
        const double k = double(x) * 0x1p23;
        if (k != std::floor(k)) ++off_grid;
        lo = std::min(lo, x);
        hi = std::max(hi, x);
        sum += x;
        sum2 += double(x) * x;
    }
    CHECK(out_of_range == 0);
    CHECK(off_grid == 0);
    CHECK(lo < -0.999f);
    CHECK(hi > 0.999f);
    const double mean = sum / double(n), var = sum2 / double(n) - mean * mean;
    CHECK(std::fabs(mean) < 0.005);              // uniform on [-1, 1): mean 0
    CHECK(std::fabs(var - 1.0 / 3.0) < 0.005);   // variance 1/3
}

TEST_CASE("fill_uniform is bit-identical for any thread count and matches uniform_element", "[datagen]") {
    ThreadsGuard guard;
    const std::int64_t n = 300001;
    const std::uint64_t id = cs::tensor_id("conv4", cs::TensorKind::weights);
    std::vector<float> one(n), many(n), three(n);
    omp_set_num_threads(1);
    cs::fill_uniform(one.data(), n, 7, id, 11, 0.25f);
    omp_set_num_threads(guard.saved);
    cs::fill_uniform(many.data(), n, 7, id, 11, 0.25f);
    omp_set_num_threads(3);
    cs::fill_uniform(three.data(), n, 7, id, 11, 0.25f);
    CHECK(bit_equal(one.data(), many.data(), n));
    CHECK(bit_equal(one.data(), three.data(), n));
    std::size_t bad = 0;
    for (std::int64_t i = 0; i < n; i += 997)
        if (one[i] != cs::uniform_element(7, id, 11 + std::uint64_t(i)) * 0.25f) ++bad;
    CHECK(bad == 0);
    // A window of the stream equals the same slice of a longer fill.
    std::vector<float> window(1000);
    cs::fill_uniform(window.data(), 1000, 7, id, 11 + 5000, 0.25f);
    CHECK(bit_equal(window.data(), one.data() + 5000, 1000));
}

TEST_CASE("image n of a batch does not depend on the batch size", "[datagen]") {
    for (const auto& l : cs::default_layer_table().layers) {
        INFO(l.name);
        std::vector<float> b1(std::size_t(l.input_elems(1))), b3(std::size_t(l.input_elems(3)));
        cs::make_input(l, 1, cs::kDefaultSeed, b1.data());
        cs::make_input(l, 3, cs::kDefaultSeed, b3.data());
        CHECK(bit_equal(b1.data(), b3.data(), b1.size()));
        // and images 1, 2 are not copies of image 0
        CHECK(!bit_equal(b3.data(), b3.data() + b1.size(), b1.size()));
    }
}

TEST_CASE("layers, kinds and seeds give different streams", "[datagen]") {
    std::set<std::uint64_t> ids;
    const auto& layers = cs::default_layer_table().layers;
    for (const auto& l : layers)
        for (const auto kind : {cs::TensorKind::input, cs::TensorKind::weights}) ids.insert(cs::tensor_id(l.name, kind));
    CHECK(ids.size() == 2 * layers.size());
    CHECK(cs::tensor_id("conv1", cs::TensorKind::input) == cs::tensor_id(std::string("conv1"), cs::TensorKind::input));

    const auto count_equal = [](std::uint64_t s1, std::uint64_t id1, std::uint64_t s2, std::uint64_t id2) {
        int same = 0;
        for (std::uint64_t i = 0; i < 4096; ++i) same += cs::uniform_element(s1, id1, i) == cs::uniform_element(s2, id2, i);
        return same;
    };
    const auto in1 = cs::tensor_id("conv1", cs::TensorKind::input);
    const auto w1 = cs::tensor_id("conv1", cs::TensorKind::weights);
    const auto in2 = cs::tensor_id("conv2", cs::TensorKind::input);
    // 4096 draws from 2^24 values: a chance collision or two at most.
    CHECK(count_equal(cs::kDefaultSeed, in1, cs::kDefaultSeed, w1) < 4);
    CHECK(count_equal(cs::kDefaultSeed, in1, cs::kDefaultSeed, in2) < 4);
    CHECK(count_equal(cs::kDefaultSeed, in1, cs::kDefaultSeed + 1, in1) < 4);
    CHECK(count_equal(cs::kDefaultSeed, in1, cs::kDefaultSeed, in1) == 4096);
}

TEST_CASE("weights are uniform values scaled by sqrt(3/K)", "[datagen]") {
    for (const auto& l : cs::default_layer_table().layers) {
        INFO(l.name);
        const float scale = cs::weight_scale(l);
        CHECK(scale == float(std::sqrt(3.0 / double(l.K()))));
        std::vector<float> w(std::size_t(l.weight_elems()));
        cs::make_weights(l, cs::kDefaultSeed, w.data());
        const auto id = cs::tensor_id(l.name, cs::TensorKind::weights);
        std::size_t bad = 0, out_of_range = 0;
        double sum2 = 0;
        for (std::size_t i = 0; i < w.size(); ++i) {
            if (w[i] != cs::uniform_element(cs::kDefaultSeed, id, i) * scale) ++bad;
            if (!(std::fabs(w[i]) <= scale)) ++out_of_range;
            sum2 += double(w[i]) * w[i];
        }
        CHECK(bad == 0);
        CHECK(out_of_range == 0);
        // Var(w) = scale^2 / 3 = 1/K, so K * Var(w) ~ 1 (the outputs are O(1)).
        CHECK(std::fabs(sum2 / double(w.size()) * double(l.K()) - 1.0) < 0.05);
    }
}

TEST_CASE("generator values are pinned", "[datagen]") {
    // Golden files were made from these streams: if this fails, the generator changed and
    // kGeneratorName must get a new version (and golden files be regenerated).
    CHECK(cs::tensor_id("conv1", cs::TensorKind::input) == 0x50607e8a4c2c0b81ull);
    CHECK(cs::tensor_id("conv1", cs::TensorKind::weights) == 0x11f48c57f35e51aeull);
    const auto id = cs::tensor_id("conv1", cs::TensorKind::input);
    CHECK(cs::uniform_element(cs::kDefaultSeed, id, 0) == 0x1.964248p-1f);
    CHECK(cs::uniform_element(cs::kDefaultSeed, id, 1) == -0x1.e7a188p-2f);
    CHECK(cs::uniform_element(cs::kDefaultSeed, id, 123456789) == 0x1.7131p-1f);
    CHECK(std::string(cs::kGeneratorName) == "splitmix64-counter-v1");
    CHECK(cs::generator_description().find(cs::kGeneratorName) == 0);
}
