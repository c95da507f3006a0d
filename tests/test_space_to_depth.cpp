// The space-to-depth index map (kernels/common/space_to_depth.hpp), on the CPU: the rewritten
// problem (input and weights through the map, a stride-1 unpadded convolution) gives the
// layer's own output, on shapes where nothing divides anything (C=3, strides 2-4, padding
// 0-2, filters not a multiple of the stride, non-square) and on AlexNet's conv1; the map
// reads NCHW and NHWC sources (KCRS and KRSC filters) alike. Then the kernels' block steps
// (space_to_depth_block.hpp), emulated thread by thread on the host, against the map in every
// layout pair, for 2- and 4-byte elements, from inputs at any element alignment: every
// element right, every 16-byte access aligned, nothing read outside the input tensor. tests/gpu/test_cudnn_s2d_gpu.cpp runs the
// same comparison on the GPU.
#include "catch.hpp"

#include "conv_ref.hpp"
#include "datagen.hpp"
#include "layer.hpp"
#include "test_util.hpp"
#include "space_to_depth.hpp"
#include "space_to_depth_block.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

using cs::Layer;
namespace s2d = cs::gpu::s2d;

namespace {

using cs::test::make_layer;

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

namespace {

// A 16-byte aligned host buffer of `count` elements starting `skew` elements in.
template <class E>
struct Aligned {
    std::vector<uint4> raw;
    E* p = nullptr;
    Aligned(std::size_t count, int skew, unsigned char fill) : raw((count + std::size_t(skew)) * sizeof(E) / 16 + 1) {
        std::memset(raw.data(), fill, raw.size() * 16);
        p = reinterpret_cast<E*>(raw.data()) + skew;
    }
};

// One launch of the tiled kernel, emulated: each block's steps, every thread of a step
// before the next (the kernel's __syncthreads).
template <class E, int P>
void emulate_tiled(const s2d::Geom& g, const s2d::Tile& t, const E* in, bool src_nchw, E* out, bool dst_nchw,
                   std::int64_t n_img) {
    using B = s2d::Block<E>;
    for (int n = 0; n < n_img; ++n)
        for (int Y = 0; Y < g.Hp; ++Y) {
            Aligned<unsigned char> smem(std::size_t(t.bytes), 0, 0xab);  // garbage where nothing is loaded
            auto* table = reinterpret_cast<int4*>(smem.p);
            E* tile = reinterpret_cast<E*>(smem.p + t.table_bytes);
            for (int tid = 0; tid < s2d::kThreads; ++tid) B::load(in, tile, g, t, src_nchw, n, Y, tid, s2d::kThreads);
            for (int tid = 0; tid < s2d::kThreads; ++tid) B::table(in, table, g, t, src_nchw, n, Y, tid, s2d::kThreads);
            for (int tid = 0; tid < s2d::kThreads; ++tid)
                B::template write<P>(tile, table, out, g, src_nchw, dst_nchw, n, Y, tid, s2d::kThreads);
        }
}

template <class E>
void check_block_steps(const Layer& l, std::int64_t N, bool src_nchw, bool dst_nchw, int skew) {
    const s2d::Geom g = s2d::geom(l);
    const s2d::Tile t = s2d::tile_of(g, src_nchw, int(sizeof(E)));
    const int P = dst_nchw ? 1 : s2d::pack_of(g, int(sizeof(E)));
    INFO(l.name << " N=" << N << ", " << sizeof(E) << "-byte elements, " << (src_nchw ? "nchw" : "nhwc") << " -> "
                << (dst_nchw ? "nchw" : "nhwc") << ", input skewed by " << skew << ", P=" << P
                << ", tile bytes " << t.bytes);
    const std::size_t in_elems = std::size_t(l.input_elems(N));
    const std::size_t out_elems = std::size_t(N) * g.Cp * g.Hp * g.Wp;
    Aligned<E> in(in_elems, skew, 0), out(out_elems, 0, 0xcd);
    for (std::size_t i = 0; i < in_elems; ++i) in.p[i] = E(1 + i % 60000);  // nonzero, mostly distinct
    s2d::Block<E>::misaligned = 0;
    s2d::Block<E>::outside = 0;
    s2d::Block<E>::bound_lo = in.p;  // nothing outside the tensor is read
    s2d::Block<E>::bound_hi = in.p + in_elems;
    const bool tiled = t.bytes >= 0;
    if (tiled) {
        if (P == 8) emulate_tiled<E, (sizeof(E) == 2 ? 8 : 4)>(g, t, in.p, src_nchw, out.p, dst_nchw, N);
        else if (P == 4) emulate_tiled<E, 4>(g, t, in.p, src_nchw, out.p, dst_nchw, N);
        else if (P == 2) emulate_tiled<E, 2>(g, t, in.p, src_nchw, out.p, dst_nchw, N);
        else emulate_tiled<E, 1>(g, t, in.p, src_nchw, out.p, dst_nchw, N);
    } else {
        for (std::size_t i = 0; i < out_elems; ++i)
            out.p[i] = s2d::Block<E>::gather(in.p, g, src_nchw, dst_nchw, std::int64_t(i));
    }
    s2d::Block<E>::bound_lo = s2d::Block<E>::bound_hi = nullptr;
    CHECK(s2d::Block<E>::misaligned == 0);
    CHECK(s2d::Block<E>::outside == 0);
    std::int64_t wrong = 0, first = -1;
    for (std::int64_t n = 0; n < N; ++n)
        for (int cp = 0; cp < g.Cp; ++cp)
            for (int Y = 0; Y < g.Hp; ++Y)
                for (int X = 0; X < g.Wp; ++X) {
                    const std::int64_t src = s2d::input_source(g, src_nchw, n, cp, Y, X);
                    const std::int64_t o = s2d::offset(dst_nchw, n, cp, Y, X, g.Cp, g.Hp, g.Wp);
                    if (out.p[o] != (src >= 0 ? in.p[src] : E(0))) {
                        if (first < 0) first = o;
                        ++wrong;
                    }
                }
    INFO((tiled ? "tiled" : "gather") << ": " << wrong << " of " << out_elems << " wrong, the first at " << first);
    CHECK(wrong == 0);

    // The weights' decode: w' in w's layout.
    const std::size_t wn = std::size_t(l.weight_elems()), wpn = std::size_t(g.M) * g.Cp * g.Rp * g.Sp;
    std::vector<E> w(wn);
    for (std::size_t i = 0; i < wn; ++i) w[i] = E(3 + i % 50000);
    std::int64_t wwrong = 0;
    for (std::size_t i = 0; i < wpn; ++i) {
        std::int64_t q = std::int64_t(i);
        int m, cp, rp, sp;
        if (src_nchw) {
            sp = int(q % g.Sp), q /= g.Sp, rp = int(q % g.Rp), q /= g.Rp, cp = int(q % g.Cp), m = int(q / g.Cp);
        } else {
            cp = int(q % g.Cp), q /= g.Cp, sp = int(q % g.Sp), q /= g.Sp, rp = int(q % g.Rp), m = int(q / g.Rp);
        }
        const std::int64_t src = s2d::weight_source(g, src_nchw, m, cp, rp, sp);
        wwrong += s2d::Block<E>::weight(w.data(), g, src_nchw, std::int64_t(i)) != (src >= 0 ? w[std::size_t(src)] : E(0));
    }
    CHECK(wwrong == 0);
}

void check_block_steps_all(const Layer& l, std::int64_t N) {
    for (bool src_nchw : {true, false})
        for (bool dst_nchw : {true, false})
            for (int skew : {0, 1, 3, 6}) {
                check_block_steps<std::uint16_t>(l, N, src_nchw, dst_nchw, skew);
                check_block_steps<std::uint32_t>(l, N, src_nchw, dst_nchw, skew);
            }
}

}  // namespace

TEST_CASE("space-to-depth kernels' block steps, emulated, match the map", "[s2d][kernel]") {
    const std::vector<Layer> layers = {
        make_layer("s2_p1_5x3", 3, 19, 23, 5, 5, 3, 2, 1),
        make_layer("s3_p2_7x7", 3, 20, 17, 4, 7, 7, 3, 2),
        make_layer("s4_p0_11", 3, 35, 31, 7, 11, 11, 4, 0),
        make_layer("s4_p1_5x9", 3, 26, 29, 3, 5, 9, 4, 1),
        make_layer("s2_p0_1x1", 5, 9, 8, 4, 1, 1, 2, 0),
        make_layer("s2_c6_p1", 6, 11, 13, 4, 3, 3, 2, 1),  // C' = 24: 8 halves but 4 floats a store
        make_layer("s3_c29", 29, 12, 10, 3, 3, 3, 3, 1),   // C' = 261: 1 a store, more groups than threads
    };
    for (const Layer& l : layers) check_block_steps_all(l, 2);
    check_block_steps_all(*cs::default_layer_table().find("conv1"), 1);
}

TEST_CASE("space-to-depth: the tile's budget picks the kernel", "[s2d][kernel]") {
    const s2d::Geom conv1 = s2d::geom(*cs::default_layer_table().find("conv1"));
    for (bool src_nchw : {true, false})
        for (int eb : {2, 4}) {
            INFO("src " << (src_nchw ? "nchw" : "nhwc") << ", " << eb << "-byte elements");
            const s2d::Tile t = s2d::tile_of(conv1, src_nchw, eb);
            // NHWC to NHWC with 16-byte pixels (48 channels of 2 or 4 bytes): the full-width copy
            // of s2d_vec.cuh; NCHW: the tiled kernel
            CHECK(std::string(s2d::input_kernel_name(conv1, src_nchw, eb)) ==
                  (src_nchw ? "tiled" : "full-width (NHWC, if 16-byte aligned)"));
            CHECK(t.bytes <= (eb == 2 ? 7 * 1024 : 13 * 1024));  // 8 blocks of 256 threads an SM
            CHECK(t.pitch % (16 / eb) == 0);
            CHECK(t.pitch >= t.len + 16 / eb - 1);  // a run at any phase fits its slot
        }
    CHECK(s2d::pack_of(conv1, 2) == 8);
    CHECK(s2d::pack_of(conv1, 4) == 4);
    // 96 channels x 131 columns, stride 2: past 48 KB in every case, so the gather kernel.
    const Layer wide = make_layer("s2d_wide", 96, 9, 131, 4, 3, 3, 2, 1);
    for (bool src_nchw : {true, false})
        for (int eb : {2, 4}) CHECK(std::string(s2d::input_kernel_name(s2d::geom(wide), src_nchw, eb)) == "gather");
    check_block_steps_all(wide, 1);
}
