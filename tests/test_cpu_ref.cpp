// The CPU reference convolution: against the naive loops on awkward shapes, bit-identical
// for any thread count, the single-element path, and oneDNN when it is built in.
// The hidden case [.bench] times the five AlexNet layers at N=32 (ours float/double, oneDNN).
#include "catch.hpp"

#include "conv_ref.hpp"
#include "cpu_anchor.hpp"
#include "datagen.hpp"
#include "layer.hpp"
#include "test_util.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

using cs::test::make_layer;

// Shapes chosen so nothing is a multiple of anything: M not a multiple of MR (6 or 8),
// E*F not a multiple of NR, K both below and above the K block (256), 1x1 and non-square
// filters, strides 1..4, pads 0..2 (including pad wider than a 1x1 filter's reach), more
// columns than one column block and more rows than one L2 row block.
std::vector<cs::Layer> odd_layers() {
    return {
        make_layer("odd_3x5_s1p1", 3, 17, 19, 7, 3, 5, 1, 1),
        make_layer("odd_4x3_s2p2", 3, 23, 21, 13, 4, 3, 2, 2),
        make_layer("odd_5x5_s3p0", 5, 20, 26, 10, 5, 5, 3, 0),
        make_layer("odd_11x11_s4p1", 3, 35, 31, 9, 11, 11, 4, 1),
        make_layer("odd_1x1_s1p0", 17, 9, 11, 25, 1, 1, 1, 0),
        make_layer("odd_1x1_s2p2", 3, 10, 7, 5, 1, 1, 2, 2),
        make_layer("odd_2x7_s1p2", 3, 7, 40, 6, 2, 7, 1, 2),
        make_layer("odd_bigK_360", 40, 12, 10, 14, 3, 3, 1, 1),
        make_layer("odd_bigK_625", 25, 9, 8, 11, 5, 5, 1, 2),
        make_layer("odd_manyM", 4, 6, 6, 101, 3, 3, 1, 1),
        make_layer("odd_manycols", 3, 30, 31, 8, 3, 3, 1, 1),
        make_layer("odd_3x3_s2p1", 3, 13, 13, 11, 3, 3, 2, 1),
    };
}

struct Data {
    std::vector<float> in, w;
};

Data make_data(const cs::Layer& l, std::int64_t N) {
    Data d;
    d.in.resize(std::size_t(l.input_elems(N)));
    d.w.resize(std::size_t(l.weight_elems()));
    cs::make_input(l, N, cs::kDefaultSeed, d.in.data());
    cs::make_weights(l, cs::kDefaultSeed, d.w.data());
    return d;
}

// sum_k |x_k| |w_k| per output element: the scale of the float rounding error.
std::vector<double> abs_conv(const cs::Layer& l, std::int64_t N, const Data& d) {
    Data a = d;
    for (auto& v : a.in) v = std::fabs(v);
    for (auto& v : a.w) v = std::fabs(v);
    std::vector<double> out(std::size_t(l.output_elems(N)));
    cs::conv2d_naive(l, N, a.in.data(), a.w.data(), out.data());
    return out;
}

// The same from conv2d_ref<double> (checked bit-exact against the naive loops above),
// rounded to float and nudged up by one float ulp, for the larger AlexNet shapes.
std::vector<double> abs_conv_fast(const cs::Layer& l, std::int64_t N, const Data& d) {
    Data a = d;
    for (auto& v : a.in) v = std::fabs(v);
    for (auto& v : a.w) v = std::fabs(v);
    std::vector<float> out(std::size_t(l.output_elems(N)));
    cs::conv2d_ref<double>(l, N, a.in.data(), a.w.data(), out.data());
    std::vector<double> r(out.size());
    for (std::size_t i = 0; i < out.size(); ++i) r[i] = double(out[i]) * (1.0 + 0x1p-23);
    return r;
}

// Float accumulation over K terms in any order: |computed - exact| <= gamma_K * sum|x w|,
// gamma_K = K u / (1 - K u), u = 2^-24. We allow (K + 2) u * sum|x w|: gamma_K for
// K u << 1 plus the (negligible, ~K 2^-53) error of the double naive sum.
double float_bound(const cs::Layer& l, double abs_sum) { return double(l.K() + 2) * 0x1p-24 * abs_sum; }

bool bit_equal(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Restores the OpenMP thread count when a test ends, however it ends.
struct ThreadsGuard {
    int saved = omp_get_max_threads();
    ~ThreadsGuard() { omp_set_num_threads(saved); }
};

}  // namespace

TEST_CASE("conv2d_ref<double> equals the naive loops exactly on odd shapes", "[cpu_ref]") {
    // Each product of two floats is exact in double, so an fma chain over k in order is the
    // same operation sequence as naive `sum += x * w`: bit-identical, stricter than 1e-12.
    for (const auto& l : odd_layers()) {
        for (const std::int64_t N : {1, 3}) {
            INFO(l.name << " " << l.shape_string() << " N=" << N);
            const Data d = make_data(l, N);
            std::vector<double> naive(std::size_t(l.output_elems(N)));
            cs::conv2d_naive(l, N, d.in.data(), d.w.data(), naive.data());
            std::vector<float> out(naive.size(), std::nanf(""));
            cs::conv2d_ref<double>(l, N, d.in.data(), d.w.data(), out.data());
            std::size_t bad = 0;
            double worst = 0;
            for (std::size_t i = 0; i < out.size(); ++i) {
                if (out[i] != float(naive[i])) ++bad;
                if (std::isfinite(out[i]))
                    worst = std::max(worst, std::fabs(double(out[i]) - naive[i]) / std::max(1e-30, std::fabs(naive[i])));
                else
                    worst = INFINITY;
            }
            CHECK(bad == 0);
            CHECK(worst <= 0x1p-24);  // only the final rounding to float
        }
    }
}

TEST_CASE("conv2d_ref<float> is within the K*eps bound of the naive loops on odd shapes", "[cpu_ref]") {
    for (const auto& l : odd_layers()) {
        for (const std::int64_t N : {1, 3}) {
            INFO(l.name << " " << l.shape_string() << " N=" << N);
            const Data d = make_data(l, N);
            std::vector<double> naive(std::size_t(l.output_elems(N)));
            cs::conv2d_naive(l, N, d.in.data(), d.w.data(), naive.data());
            const auto absn = abs_conv(l, N, d);
            std::vector<float> out(naive.size(), std::nanf(""));
            cs::conv2d_ref<float>(l, N, d.in.data(), d.w.data(), out.data());
            std::size_t bad = 0;
            double worst_ratio = 0;  // |error| / bound
            for (std::size_t i = 0; i < out.size(); ++i) {
                const double err = std::fabs(double(out[i]) - naive[i]);
                const double bound = float_bound(l, absn[i]);
                if (!(err <= bound)) ++bad;
                if (bound > 0) worst_ratio = std::max(worst_ratio, err / bound);
            }
            CHECK(bad == 0);
            CHECK(worst_ratio <= 1.0);
        }
    }
}

TEST_CASE("conv2d_ref is bit-identical whatever the thread count", "[cpu_ref]") {
    ThreadsGuard guard;
    const int all = guard.saved;
    // conv3-like with N=2 (few columns: M is split across threads) and an odd shape with
    // several K blocks and column blocks.
    std::vector<cs::Layer> layers = {make_layer("det_conv3", 256, 13, 13, 384, 3, 3, 1, 1),
                                     make_layer("det_odd", 29, 21, 23, 37, 3, 4, 2, 1)};
    for (const auto& l : layers) {
        const std::int64_t N = 2;
        const Data d = make_data(l, N);
        const auto run = [&](int threads, bool dbl) {
            omp_set_num_threads(threads);
            std::vector<float> out(std::size_t(l.output_elems(N)), std::nanf(""));
            if (dbl)
                cs::conv2d_ref<double>(l, N, d.in.data(), d.w.data(), out.data());
            else
                cs::conv2d_ref<float>(l, N, d.in.data(), d.w.data(), out.data());
            return out;
        };
        for (const bool dbl : {false, true}) {
            INFO(l.name << (dbl ? " double" : " float"));
            const auto one = run(1, dbl);
            CHECK(bit_equal(one, run(all, dbl)));
            CHECK(bit_equal(one, run(3, dbl)));  // odd counts give other work splits
            CHECK(bit_equal(one, run(7, dbl)));
        }
    }
}

TEST_CASE("conv2d_element equals the naive loops", "[cpu_ref]") {
    for (const auto& l : odd_layers()) {
        const std::int64_t N = 3;
        INFO(l.name << " " << l.shape_string());
        const Data d = make_data(l, N);
        std::vector<double> naive(std::size_t(l.output_elems(N)));
        cs::conv2d_naive(l, N, d.in.data(), d.w.data(), naive.data());
        std::size_t bad = 0;
        for (std::int64_t n = 0; n < N; ++n)
            for (int m = 0; m < l.M; ++m)
                for (int e = 0; e < l.E(); ++e)
                    for (int f = 0; f < l.F(); ++f) {
                        const double v = cs::conv2d_element(l, d.in.data(), d.w.data(), n, m, e, f);
                        if (v != naive[std::size_t(((n * l.M + m) * l.E() + e) * l.F() + f)]) ++bad;
                    }
        CHECK(bad == 0);
    }
}

TEST_CASE("conv2d_naive on a hand-checked case", "[cpu_ref]") {
    // 1 channel 3x3 input 1..9, one 2x2 filter [[1,0],[0,-1]], pad 1, stride 2 -> 2x2 output.
    const cs::Layer l = make_layer("hand", 1, 3, 3, 1, 2, 2, 2, 1);
    REQUIRE(l.E() == 2);
    REQUIRE(l.F() == 2);
    const std::vector<float> in = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const std::vector<float> w = {1, 0, 0, -1};
    // out[e][f] = in[2e-1][2f-1] - in[2e][2f]
    const std::vector<double> expect = {0 - 1, 0 - 3, 0 - 7, 5 - 9};
    std::vector<double> out(4);
    cs::conv2d_naive(l, 1, in.data(), w.data(), out.data());
    CHECK(out == expect);
    std::vector<float> ref(4);
    cs::conv2d_ref<float>(l, 1, in.data(), w.data(), ref.data());
    CHECK(ref == std::vector<float>{-1, -3, -7, -4});
}

TEST_CASE("oneDNN anchor matches the reference when built in", "[cpu_ref][onednn]") {
#ifdef CONVSTUDY_HAVE_DNNL
    constexpr bool have_dnnl = true;
#else
    constexpr bool have_dnnl = false;
#endif
    REQUIRE(cs::onednn_available() == have_dnnl);
    REQUIRE(cs::onednn_version().empty() == !have_dnnl);

    const cs::LayerTable& table = cs::default_layer_table();
    std::vector<cs::Layer> layers = {*table.find("conv1"), *table.find("conv3"), odd_layers()[1], odd_layers()[3]};
    for (const auto& l : layers) {
        const std::int64_t N = l.name == "conv1" ? 1 : 2;
        INFO(l.name << " " << l.shape_string() << " N=" << N);
        const Data d = make_data(l, N);
        std::vector<float> golden(std::size_t(l.output_elems(N)));
        cs::conv2d_ref<double>(l, N, d.in.data(), d.w.data(), golden.data());
        std::vector<float> out(golden.size(), std::nanf(""));
        const auto t = cs::time_onednn(l, N, d.in.data(), d.w.data(), out.data(), 0.0, 1);
        REQUIRE(t.has_value() == have_dnnl);
        if (!have_dnnl) continue;
        CHECK(t->repeats == 1);
        CHECK(t->ms > 0);
        const auto absn = abs_conv_fast(l, N, d);
        std::size_t bad = 0;
        for (std::size_t i = 0; i < out.size(); ++i) {
            // golden is itself rounded to float: add half an ulp of it.
            const double bound = float_bound(l, absn[i]) + 0x1p-24 * std::fabs(double(golden[i]));
            if (!(std::fabs(double(out[i]) - double(golden[i])) <= bound)) ++bad;
        }
        CHECK(bad == 0);
    }
}

TEST_CASE("time_cpu_reference times and writes the output", "[cpu_ref]") {
    const cs::Layer l = odd_layers()[0];
    const Data d = make_data(l, 1);
    std::vector<float> out(std::size_t(l.output_elems(1)), std::nanf("")), ref(out.size());
    const auto t = cs::time_cpu_reference(l, 1, d.in.data(), d.w.data(), out.data(), 0.0, 3);
    CHECK(t.repeats == 1);  // min_seconds = 0: stops after the first timed call
    CHECK(t.ms >= 0);
    CHECK(t.min_ms <= t.ms);
    CHECK(t.threads == omp_get_max_threads());
    cs::conv2d_ref<float>(l, 1, d.in.data(), d.w.data(), ref.data());
    CHECK(bit_equal(out, ref));
    const auto t3 = cs::time_cpu_reference(l, 1, d.in.data(), d.w.data(), out.data(), 100.0, 3);
    CHECK(t3.repeats == 3);
    CHECK(!cs::cpu_model().empty());
    CHECK(cs::cpu_threads() >= 1);
}

TEST_CASE("CPU reference and oneDNN on the AlexNet layers at N=32", "[.bench]") {
    const std::int64_t N = 32;
    std::printf("CPU: %s, %d threads; %s\n", cs::cpu_model().c_str(), cs::cpu_threads(),
                cs::onednn_available() ? cs::onednn_version().c_str() : "oneDNN not built in");
    std::printf("%-6s %10s %10s %10s %10s %10s %10s %10s\n", "layer", "GFLOP", "float ms", "GFLOP/s",
                "double ms", "GFLOP/s", "oneDNN ms", "GFLOP/s");
    double sum_f = 0, sum_d = 0, sum_o = 0;
    for (const auto& l : cs::default_layer_table().layers) {
        const Data d = make_data(l, N);
        std::vector<float> out(std::size_t(l.output_elems(N))), out_dnnl(out.size());
        const double gf = l.flops(N) * 1e-9;
        const auto tf = cs::time_cpu_reference(l, N, d.in.data(), d.w.data(), out.data(), 1.0, 5);
        const auto t0 = std::chrono::steady_clock::now();
        cs::conv2d_ref<double>(l, N, d.in.data(), d.w.data(), out.data());
        const double dms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        const auto to = cs::time_onednn(l, N, d.in.data(), d.w.data(), out_dnnl.data(), 1.0, 5);
        const double oms = to ? to->ms : 0.0;
        sum_f += tf.ms;
        sum_d += dms;
        sum_o += oms;
        std::printf("%-6s %10.2f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f\n", l.name.c_str(), gf, tf.ms,
                    gf / tf.ms * 1e3, dms, gf / dms * 1e3, oms, to ? gf / oms * 1e3 : 0.0);
        if (to) {
            double worst = 0;
            for (std::size_t i = 0; i < out.size(); ++i)
                worst = std::max(worst, double(std::fabs(out[i] - out_dnnl[i])));
            CHECK(worst < 1e-3);
        }
    }
    std::printf("%-6s %10s %10.1f %10s %10.1f %10s %10.1f   ours/oneDNN = %.2f\n", "total", "", sum_f, "", sum_d,
                "", sum_o, sum_o > 0 ? sum_f / sum_o : 0.0);
    SUCCEED();
}
