// The space-to-depth index map (gpu/variants/space_to_depth.hpp), on the CPU: the rewritten
// problem (input and weights through the map, a stride-1 unpadded convolution) gives the
// layer's own output, on shapes where nothing divides anything (C=3, strides 2-4, padding
// 0-2, filters not a multiple of the stride, non-square) and on AlexNet's conv1; the map
// reads NCHW and NHWC sources (KCRS and KRSC filters) alike. The GPU kernels are checked
// against this map in tests/gpu/test_cudnn_s2d_gpu.cu.
#include "catch.hpp"

#include "conv_ref.hpp"
#include "datagen.hpp"
#include "layer.hpp"
#include "variants/space_to_depth.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

using cs::Layer;
namespace s2d = cs::gpu::s2d;

namespace {

Layer make_layer(const char* name, int C, int H, int W, int M, int R, int S, int stride, int pad) {
    Layer l;
    l.name = name;
    l.C = C, l.H = H, l.W = W, l.M = M, l.R = R, l.S = S, l.stride = stride, l.pad = pad;
    return l;
}

// NCHW (KCRS) -> NHWC (KRSC).
std::vector<float> to_nhwc(const std::vector<float>& a, std::int64_t N, int C, int H, int W) {
    std::vector<float> o(a.size());
    for (std::int64_t n = 0; n < N; ++n)
        for (int c = 0; c < C; ++c)
            for (int y = 0; y < H; ++y)
                for (int x = 0; x < W; ++x)
                    o[std::size_t(s2d::offset(false, n, c, y, x, C, H, W))] =
                        a[std::size_t(s2d::offset(true, n, c, y, x, C, H, W))];
    return o;
}

// in' in NCHW order, from a source in either layout.
// reads[i]: how often the map reads source element i; *outside: offsets past the source.
std::vector<float> rewrite_input(const s2d::Geom& g, const std::vector<float>& src, bool src_nchw, std::int64_t N,
                                 std::vector<int>& reads, int* outside) {
    std::vector<float> o(std::size_t(N) * g.Cp * g.Hp * g.Wp);
    reads.assign(src.size(), 0);
    for (std::int64_t n = 0; n < N; ++n)
        for (int cp = 0; cp < g.Cp; ++cp)
            for (int Y = 0; Y < g.Hp; ++Y)
                for (int X = 0; X < g.Wp; ++X) {
                    const std::int64_t i = s2d::input_source(g, src_nchw, n, cp, Y, X);
                    const bool in = i >= 0 && std::size_t(i) < src.size();
                    if (i >= 0 && !in) ++*outside;
                    if (in) ++reads[std::size_t(i)];
                    o[std::size_t(s2d::offset(true, n, cp, Y, X, g.Cp, g.Hp, g.Wp))] = in ? src[std::size_t(i)] : 0.0f;
                }
    return o;
}

// w' in KCRS order, from filters in either layout.
std::vector<float> rewrite_weights(const s2d::Geom& g, const std::vector<float>& src, bool kcrs, int* outside) {
    std::vector<float> o(std::size_t(g.M) * g.Cp * g.Rp * g.Sp);
    for (int m = 0; m < g.M; ++m)
        for (int cp = 0; cp < g.Cp; ++cp)
            for (int rp = 0; rp < g.Rp; ++rp)
                for (int sp = 0; sp < g.Sp; ++sp) {
                    const std::int64_t i = s2d::weight_source(g, kcrs, m, cp, rp, sp);
                    const bool in = i >= 0 && std::size_t(i) < src.size();
                    if (i >= 0 && !in) ++*outside;
                    o[std::size_t(s2d::offset(true, m, cp, rp, sp, g.Cp, g.Rp, g.Sp))] = in ? src[std::size_t(i)] : 0.0f;
                }
    return o;
}

void check_layer(const Layer& l, std::int64_t N) {
    INFO(l.name << " (" << l.shape_string() << ") N=" << N);
    const s2d::Geom g = s2d::geom(l);
    const Layer lr = s2d::rewritten(l);
    REQUIRE_NOTHROW(cs::validate_layer(lr, "test"));
    REQUIRE(lr.stride == 1);
    REQUIRE(lr.pad == 0);
    REQUIRE(lr.C == l.C * l.stride * l.stride);
    REQUIRE(lr.E() == l.E());
    REQUIRE(lr.F() == l.F());

    std::vector<float> in(std::size_t(l.input_elems(N))), w(std::size_t(l.weight_elems()));
    cs::make_input(l, N, 11, in.data());
    cs::make_weights(l, 11, w.data());

    std::vector<int> reads, reads_nhwc;
    int outside = 0;
    const auto in_p = rewrite_input(g, in, true, N, reads, &outside);
    const auto w_p = rewrite_weights(g, w, true, &outside);
    // The map reads an NHWC source (KRSC filters) to the same rewritten tensors.
    CHECK(rewrite_input(g, to_nhwc(in, N, l.C, l.H, l.W), false, N, reads_nhwc, &outside) == in_p);
    CHECK(rewrite_weights(g, to_nhwc(w, l.M, l.C, l.R, l.S), false, &outside) == w_p);
    CHECK(outside == 0);
    // Each source element in the first b*H' - pad rows and b*W' - pad columns is read exactly
    // once (those hold every element the layer's taps reach), every other one never.
    const int yread = g.b * g.Hp - l.pad, xread = g.b * g.Wp - l.pad;
    CHECK(yread >= std::min(l.H, (l.E() - 1) * l.stride + l.R - l.pad));
    CHECK(xread >= std::min(l.W, (l.F() - 1) * l.stride + l.S - l.pad));
    int wrong = 0;
    for (std::int64_t n = 0; n < N; ++n)
        for (int c = 0; c < l.C; ++c)
            for (int y = 0; y < l.H; ++y)
                for (int x = 0; x < l.W; ++x)
                    wrong += reads[std::size_t(s2d::offset(true, n, c, y, x, l.C, l.H, l.W))] !=
                             (y < yread && x < xread ? 1 : 0);
    CHECK(wrong == 0);

    std::vector<double> ref(std::size_t(l.output_elems(N))), got(ref.size());
    cs::conv2d_naive(l, N, in.data(), w.data(), ref.data());
    cs::conv2d_naive(lr, N, in_p.data(), w_p.data(), got.data());
    std::vector<float> bound(ref.size());
    cs::conv2d_bound(l, N, in.data(), w.data(), bound.data());
    double worst = 0.0;
    for (std::size_t i = 0; i < ref.size(); ++i)
        worst = std::max(worst, std::abs(got[i] - ref[i]) / std::max(1e-30, double(bound[i])));
    INFO("max |rewritten - layer| / sum|w*x| = " << worst);
    // The same exact products summed in another order in double.
    CHECK(worst <= 1e-13);
}

}  // namespace

TEST_CASE("space-to-depth: the rewritten problem gives the layer's output", "[s2d]") {
    const std::vector<Layer> layers = {
        make_layer("s2_p1_5x3", 3, 19, 23, 5, 5, 3, 2, 1),     // R, S not multiples of 2
        make_layer("s3_p2_7x7", 3, 20, 17, 4, 7, 7, 3, 2),     // pad 2, R = 2*3 + 1
        make_layer("s4_p0_11", 3, 35, 31, 7, 11, 11, 4, 0),    // conv1-like
        make_layer("s4_p1_5x9", 3, 26, 29, 3, 5, 9, 4, 1),     // R < 2b, S > 2b
        make_layer("s2_p0_1x1", 5, 9, 8, 4, 1, 1, 2, 0),       // R' = 1, columns never read
        make_layer("s3_p1_3x3", 2, 16, 16, 6, 3, 3, 3, 1),     // R = b
    };
    for (const Layer& l : layers) check_layer(l, 2);
}

TEST_CASE("space-to-depth: AlexNet conv1 becomes 48 x 57 x 57, 3x3 stride 1", "[s2d][alexnet]") {
    const Layer* conv1 = cs::default_layer_table().find("conv1");
    REQUIRE(conv1 != nullptr);
    const Layer r = s2d::rewritten(*conv1);
    CHECK(r.name == "conv1-s2d");
    CHECK(r.C == 48);
    CHECK(r.H == 57);
    CHECK(r.W == 57);
    CHECK(r.R == 3);
    CHECK(r.S == 3);
    CHECK(r.E() == 55);
    CHECK(r.F() == 55);
    check_layer(*conv1, 1);
}
