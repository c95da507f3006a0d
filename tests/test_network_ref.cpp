// The CPU reference of the network ops (reference/network_ref.hpp): conv + bias + ReLU and the
// 3x3 stride-2 max-pool against plain nested loops on odd shapes, one layer with its ops,
// the chain of tests/data/chain_small.json (C=3, 37x37 input, 5, 7 and 9 filters, pools
// after layers 1 and 3), bit-identical results for any thread count, and the bias data.
#include "catch.hpp"

#include "conv_ref.hpp"
#include "datagen.hpp"
#include "layer.hpp"
#include "network_ref.hpp"
#include "test_util.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

using cs::test::make_layer;

cs::LayerTable small_chain() { return cs::load_layer_table(std::string(CS_SOURCE_DIR) + "/tests/data/chain_small.json"); }

bool bit_equal(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct ThreadsGuard {
    int saved = omp_get_max_threads();
    ~ThreadsGuard() { omp_set_num_threads(saved); }
};

struct Data {
    std::vector<float> in, w, bias;
};

Data make_data(const cs::Layer& l, std::int64_t N) {
    Data d;
    d.in.resize(std::size_t(l.input_elems(N)));
    d.w.resize(std::size_t(l.weight_elems()));
    d.bias.resize(std::size_t(l.M));
    cs::make_input(l, N, cs::kDefaultSeed, d.in.data());
    cs::make_weights(l, cs::kDefaultSeed, d.w.data());
    cs::make_bias(l, cs::kDefaultSeed, d.bias.data());
    return d;
}

// Odd shapes (M not a multiple of the register block, E*F not a multiple of the column
// block, K below and above the K block, padding, strides), the chain test's sizes among them.
std::vector<cs::Layer> odd_layers() {
    return {
        make_layer("odd_c3_37_5x5", 3, 37, 37, 5, 5, 5, 2, 1), make_layer("odd_c5_8_5x5", 5, 8, 8, 7, 5, 5, 1, 2),
        make_layer("odd_c7_8_3x3", 7, 8, 8, 9, 3, 3, 1, 1),    make_layer("odd_11x11_s4p1", 3, 35, 31, 9, 11, 11, 4, 1),
        make_layer("odd_bigK", 40, 12, 10, 14, 3, 3, 1, 1),    make_layer("odd_manyM", 4, 6, 6, 101, 3, 3, 1, 1),
        make_layer("odd_manycols", 3, 30, 31, 8, 3, 3, 1, 1),
    };
}

}  // namespace

TEST_CASE("conv + bias + ReLU in double equals the plain loops bit for bit on odd shapes", "[network_ref]") {
    for (const auto& base : odd_layers()) {
        for (const bool bias : {false, true})
            for (const bool relu : {false, true}) {
                cs::Layer l = base;
                l.bias = bias;
                l.relu = relu;
                for (const std::int64_t N : {1, 3}) {
                    INFO(l.name << " bias=" << bias << " relu=" << relu << " N=" << N);
                    const Data d = make_data(l, N);
                    const auto naive = cs::layer_ops_naive(l, N, d.in.data(), d.w.data(), d.bias.data());
                    std::vector<float> out(naive.size(), std::nanf(""));
                    cs::conv2d_bias_relu_ref<double>(l, N, d.in.data(), d.w.data(), bias ? d.bias.data() : nullptr,
                                                     relu, out.data());
                    CHECK(bit_equal(out, naive));
                    if (relu) {
                        CHECK(std::all_of(out.begin(), out.end(), [](float v) { return v >= 0.0f && !std::signbit(v); }));
                        CHECK(std::count(out.begin(), out.end(), 0.0f) > 0);  // ReLU did cut something
                    }
                    if (!bias && !relu) {  // the plain convolution is unchanged
                        std::vector<float> plain(out.size());
                        cs::conv2d_ref<double>(l, N, d.in.data(), d.w.data(), plain.data());
                        CHECK(bit_equal(out, plain));
                    }
                }
            }
    }
}

TEST_CASE("conv + bias + ReLU in float is within float rounding of the plain loops", "[network_ref]") {
    for (cs::Layer l : odd_layers()) {
        l.bias = true;
        l.relu = true;
        const std::int64_t N = 2;
        INFO(l.name);
        const Data d = make_data(l, N);
        const auto exact = cs::layer_ops_naive(l, N, d.in.data(), d.w.data(), d.bias.data());
        // |x| and |w| through the same loops give sum|x*w| + |bias| per output (ReLU of a
        // non-negative value changes nothing).
        Data a = d;
        for (auto* v : {&a.in, &a.w, &a.bias})
            for (auto& x : *v) x = std::fabs(x);
        const auto abs_sum = cs::layer_ops_naive(l, N, a.in.data(), a.w.data(), a.bias.data());
        std::vector<float> out(exact.size());
        cs::conv2d_bias_relu_ref<float>(l, N, d.in.data(), d.w.data(), d.bias.data(), true, out.data());
        double worst = 0;
        for (std::size_t i = 0; i < out.size(); ++i) {
            // float sum of K terms plus the bias: (K + 3) u of the absolute sum, plus the
            // rounding of the exact value to float that `exact` carries.
            const double bound = double(l.K() + 3) * 0x1p-24 * double(abs_sum[i]) * (1 + 0x1p-22) + 1e-38;
            worst = std::max(worst, std::fabs(double(out[i]) - double(exact[i])) / bound);
        }
        CHECK(worst <= 1.0);
        CHECK(std::all_of(out.begin(), out.end(), [](float v) { return v >= 0.0f; }));
    }
}

TEST_CASE("max-pool 3x3 stride 2 equals the plain loops, floor size, no padding", "[network_ref]") {
    CHECK(cs::maxpool3x3s2_size(3) == 1);
    CHECK(cs::maxpool3x3s2_size(4) == 1);
    CHECK(cs::maxpool3x3s2_size(5) == 2);
    CHECK(cs::maxpool3x3s2_size(55) == 27);
    CHECK(cs::maxpool3x3s2_size(27) == 13);
    CHECK(cs::maxpool3x3s2_size(13) == 6);
    CHECK(cs::maxpool3x3s2_size(2) == 0);
    for (const auto& [H, W] : {std::pair{3, 3}, {4, 4}, {37, 37}, {8, 5}, {18, 18}, {55, 55}}) {
        INFO(H << "x" << W);
        const std::int64_t planes = 7;
        std::vector<float> in(std::size_t(planes * H * W));
        cs::fill_uniform(in.data(), std::int64_t(in.size()), cs::kDefaultSeed, 99, 0, 1.0f);
        const int E = cs::maxpool3x3s2_size(H), F = cs::maxpool3x3s2_size(W);
        std::vector<float> out(std::size_t(planes * E * F), std::nanf(""));
        cs::maxpool3x3s2_ref(planes, H, W, in.data(), out.data());
        std::size_t bad = 0;
        for (std::int64_t p = 0; p < planes; ++p)
            for (int i = 0; i < E; ++i)
                for (int j = 0; j < F; ++j) {
                    float m = -INFINITY;
                    for (int a = 0; a < 3; ++a)
                        for (int b = 0; b < 3; ++b) m = std::max(m, in[std::size_t((p * H + 2 * i + a) * W + 2 * j + b)]);
                    if (out[std::size_t((p * E + i) * F + j)] != m) ++bad;
                }
        CHECK(bad == 0);
    }
    // A NaN in a window is the window's result, wherever it is in the window.
    std::vector<float> in(9, 1.0f), out(1);
    for (int at = 0; at < 9; ++at) {
        std::fill(in.begin(), in.end(), 1.0f);
        in[std::size_t(at)] = std::nanf("");
        cs::maxpool3x3s2_ref(1, 3, 3, in.data(), out.data());
        CHECK(std::isnan(out[0]));
    }
}

TEST_CASE("the small chain table is a chain with pools after layers 1 and 3", "[network_ref]") {
    const auto t = small_chain();
    REQUIRE(t.layers.size() == 3);
    CHECK_FALSE(cs::chain_error(t).has_value());
    CHECK(t.layers[0].C == 3);
    CHECK(t.layers[0].H == 37);
    CHECK(t.layers[0].W == 37);
    CHECK(t.layers[0].M == 5);
    CHECK(t.layers[1].M == 7);
    CHECK(t.layers[2].M == 9);
    CHECK(t.layers[0].pool == cs::Pool::max3x3s2);
    CHECK(t.layers[1].pool == cs::Pool::none);
    CHECK(t.layers[2].pool == cs::Pool::max3x3s2);
    for (const auto& l : t.layers) {
        CHECK(l.bias);
        CHECK(l.relu);
    }
    // Both pools floor (an odd number of rows left over): 18 -> 8 and 8 -> 3.
    CHECK(t.layers[0].E() == 18);
    CHECK(t.layers[0].pooled_E() == 8);
    CHECK(t.layers[2].pooled_E() == 3);
    CHECK(cs::post_op_elems(t.layers[2], 2) == 2 * 9 * 3 * 3);
    // And the built-in AlexNet table: 55 -> 27, 27 -> 13, 13 -> 6.
    const auto& alex = cs::default_layer_table();
    CHECK_FALSE(cs::chain_error(alex).has_value());
    CHECK(alex.layers[0].pooled_E() == 27);
    CHECK(alex.layers[1].pooled_E() == 13);
    CHECK(alex.layers[4].pooled_E() == 6);
}

TEST_CASE("the chain in double equals the plain loops layer after layer, bit for bit", "[network_ref]") {
    const auto t = small_chain();
    for (const std::int64_t N : {1, 3}) {
        INFO("N=" << N);
        const cs::ChainData d = cs::make_chain_data(t, N, cs::kDefaultSeed);
        const auto chain = cs::chain_ref<double>(t, d);
        REQUIRE(chain.size() == t.layers.size());
        std::vector<float> in = d.input;
        for (std::size_t i = 0; i < t.layers.size(); ++i) {
            const cs::Layer& l = t.layers[i];
            INFO(l.name);
            const auto naive = cs::layer_ops_naive(l, N, in.data(), d.weights[i].data(), d.bias[i].data());
            REQUIRE(std::int64_t(naive.size()) == cs::post_op_elems(l, N));
            CHECK(bit_equal(chain[i], naive));
            // Not degenerate: ReLU leaves positive values and cuts some.
            CHECK(*std::max_element(chain[i].begin(), chain[i].end()) > 0.1f);
            in = naive;
        }
        // The float chain is the same computation with float sums: close, not equal.
        const auto fchain = cs::chain_ref<float>(t, d);
        for (std::size_t i = 0; i < t.layers.size(); ++i) {
            double max_abs = 0, max_g = 0;
            for (std::size_t j = 0; j < chain[i].size(); ++j) {
                max_abs = std::max(max_abs, std::fabs(double(fchain[i][j]) - double(chain[i][j])));
                max_g = std::max(max_g, std::fabs(double(chain[i][j])));
            }
            CHECK(max_abs / max_g < 1e-5);
        }
    }
}

TEST_CASE("a chain's image n is the same whatever the batch size", "[network_ref]") {
    const auto t = small_chain();
    const auto one = cs::chain_ref<double>(t, cs::make_chain_data(t, 1, cs::kDefaultSeed));
    const auto three = cs::chain_ref<double>(t, cs::make_chain_data(t, 3, cs::kDefaultSeed));
    for (std::size_t i = 0; i < t.layers.size(); ++i) {
        REQUIRE(three[i].size() == 3 * one[i].size());
        CHECK(std::memcmp(one[i].data(), three[i].data(), one[i].size() * sizeof(float)) == 0);
    }
}

TEST_CASE("the chain is bit-identical whatever the thread count", "[network_ref]") {
    ThreadsGuard guard;
    cs::LayerTable t = small_chain();
    const cs::ChainData d = cs::make_chain_data(t, 4, cs::kDefaultSeed);
    omp_set_num_threads(1);
    const auto ref_d = cs::chain_ref<double>(t, d);
    const auto ref_f = cs::chain_ref<float>(t, d);
    const auto data1 = cs::make_chain_data(t, 4, cs::kDefaultSeed);
    for (const int threads : {2, 3, 5}) {
        INFO(threads << " threads");
        omp_set_num_threads(threads);
        const auto dd = cs::chain_ref<double>(t, d);
        const auto ff = cs::chain_ref<float>(t, d);
        const auto data = cs::make_chain_data(t, 4, cs::kDefaultSeed);
        for (std::size_t i = 0; i < t.layers.size(); ++i) {
            CHECK(bit_equal(dd[i], ref_d[i]));
            CHECK(bit_equal(ff[i], ref_f[i]));
            CHECK(bit_equal(data.bias[i], data1.bias[i]));
        }
        CHECK(bit_equal(data.input, data1.input));
    }
}

TEST_CASE("one post-op element in double matches the chain's stored output", "[network_ref]") {
    const auto t = small_chain();
    const std::int64_t N = 2;
    const cs::ChainData d = cs::make_chain_data(t, N, cs::kDefaultSeed);
    const auto chain = cs::chain_ref<double>(t, d);
    for (std::size_t li = 0; li < t.layers.size(); ++li) {
        const cs::Layer& l = t.layers[li];
        const float* in = li == 0 ? d.input.data() : chain[li - 1].data();
        const int PE = l.pooled_E(), PF = l.pooled_F();
        std::size_t bad = 0;
        for (std::int64_t n = 0; n < N; ++n)
            for (int m = 0; m < l.M; ++m)
                for (int i = 0; i < PE; ++i)
                    for (int j = 0; j < PF; ++j) {
                        const double v = cs::layer_ops_element(l, in, d.weights[li].data(), d.bias[li].data(), n, m, i, j);
                        if (float(v) != chain[li][std::size_t(((n * l.M + m) * PE + i) * PF + j)]) ++bad;
                    }
        INFO(l.name);
        CHECK(bad == 0);
    }
}

TEST_CASE("bias data: uniform from -0.5 (included) to 0.5 (excluded) times the output scale 1/sqrt(3), its own stream", "[network_ref][datagen]") {
    CHECK(cs::kOutputScale == Approx(1 / std::sqrt(3.0)).epsilon(1e-15));
    CHECK(cs::bias_scale() == float(0.5 / std::sqrt(3.0)));
    // The output scale is the standard deviation of a conv output (all taps inside) for the
    // generator's data: measured over conv3's interior outputs at N=1.
    {
        const cs::Layer& l = cs::default_layer_table().layers[2];
        const Data d = make_data(l, 1);
        std::vector<float> out(std::size_t(l.output_elems(1)));
        cs::conv2d_ref<double>(l, 1, d.in.data(), d.w.data(), out.data());
        double sq = 0;
        std::int64_t n = 0;
        for (int m = 0; m < l.M; ++m)
            for (int e = 1; e + 1 < l.E(); ++e)
                for (int f = 1; f + 1 < l.F(); ++f, ++n) sq += double(out[std::size_t((m * l.E() + e) * l.F() + f)]) *
                                                               double(out[std::size_t((m * l.E() + e) * l.F() + f)]);
        CHECK(std::sqrt(sq / double(n)) == Approx(cs::kOutputScale).epsilon(0.02));
    }
    cs::Layer l = make_layer("wide", 3, 8, 8, 4096, 3, 3, 1, 1);
    std::vector<float> b(std::size_t(l.M)), b2(b.size()), w(b.size());
    cs::make_bias(l, cs::kDefaultSeed, b.data());
    cs::make_bias(l, cs::kDefaultSeed, b2.data());
    CHECK(bit_equal(b, b2));
    const float lim = 0.5f * float(cs::kOutputScale);
    CHECK(*std::min_element(b.begin(), b.end()) >= -lim);
    CHECK(*std::max_element(b.begin(), b.end()) < lim);
    CHECK(*std::min_element(b.begin(), b.end()) < -0.9f * lim);  // it spans the range
    CHECK(*std::max_element(b.begin(), b.end()) > 0.9f * lim);
    double mean = 0;
    for (float v : b) mean += v;
    CHECK(std::fabs(mean / double(b.size())) < 0.02);
    // Element m is the generator's element m of the layer's bias stream, times the scale.
    for (int m : {0, 1, 4095})
        CHECK(b[std::size_t(m)] ==
              cs::uniform_element(cs::kDefaultSeed, cs::tensor_id("wide", cs::TensorKind::bias), std::uint64_t(m)) *
                  cs::bias_scale());
    // Its own stream: not the first M weights, and another layer name or seed gives others.
    for (std::size_t i = 0; i < w.size(); ++i)
        w[i] = cs::uniform_element(cs::kDefaultSeed, cs::tensor_id("wide", cs::TensorKind::weights), i) * cs::bias_scale();
    CHECK_FALSE(bit_equal(b, w));
    l.name = "wide2";
    cs::make_bias(l, cs::kDefaultSeed, b2.data());
    CHECK_FALSE(bit_equal(b, b2));
    l.name = "wide";
    cs::make_bias(l, cs::kDefaultSeed + 1, b2.data());
    CHECK_FALSE(bit_equal(b, b2));
}

TEST_CASE("the chain reference refuses a table that is not a chain, and data that does not fit", "[network_ref]") {
    cs::LayerTable t = small_chain();
    t.layers[1].C = 6;
    std::string msg = cs::test::error_message([&] { (void)cs::make_chain_data(t, 1, cs::kDefaultSeed); });
    CHECK_HAS(msg, "is not a chain");
    CHECK_HAS(msg, "c2");
    cs::LayerTable good = small_chain();
    cs::ChainData d = cs::make_chain_data(good, 1, cs::kDefaultSeed);
    msg = cs::test::error_message([&] { (void)cs::chain_ref<double>(t, d); });
    CHECK_HAS(msg, "is not a chain");
    d.bias[1].pop_back();
    msg = cs::test::error_message([&] { (void)cs::chain_ref<double>(good, d); });
    CHECK_HAS(msg, "c2");
    cs::Layer l = good.layers[0];
    msg = cs::test::error_message(
        [&] { cs::layer_ops_ref<double>(l, 1, d.input.data(), d.weights[0].data(), nullptr, d.input.data()); });
    CHECK_HAS(msg, "bias");
}
