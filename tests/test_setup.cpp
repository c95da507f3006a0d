// What the Hopper rungs transform before their GEMM (make_setup, kernels/common/sm90/geometry.hpp):
// the input where the GEMM cannot read it in place (NCHW, channels to pad, the fp32-class
// splits), and the filters only where their layout or channels change: a 1x1 layer's KCRS is its
// KRSC.
#include "catch.hpp"
#include "geometry.hpp"
#include "test_util.hpp"

using namespace cs;
using namespace cs::gpu;
using cs::gpu::variants::hopper::make_setup;

namespace {
Problem problem(const Layer& l, Layout layout) { return Problem{l, 1, layout, {}}; }
}  // namespace

TEST_CASE("make_setup: the filters are copied only where their layout or channels change", "[hopper][setup]") {
    const Layer one = test::make_layer("1x1", 64, 14, 14, 128, 1, 1, 1, 0);
    const Layer one_s2 = test::make_layer("1x1 stride 2", 256, 14, 14, 512, 1, 1, 2, 0);
    const Layer three = test::make_layer("3x3", 64, 14, 14, 128, 3, 3, 1, 1);
    const Layer one_c5 = test::make_layer("1x1, 5 channels", 5, 6, 7, 6, 1, 1, 1, 0);
    // NHWC with whole 16-byte channel runs: both read in place
    for (const Layer& l : {one, one_s2, three}) {
        const auto u = make_setup(problem(l, Layout::nhwc));
        INFO(l.name);
        CHECK_FALSE(u.tin);
        CHECK_FALSE(u.tw);
    }
    // NCHW: the input transposed; a 1x1 layer's filters read in place, a 3x3 layer's reordered
    for (const Layer& l : {one, one_s2}) {
        const auto u = make_setup(problem(l, Layout::nchw));
        INFO(l.name);
        CHECK(u.tin);
        CHECK_FALSE(u.tw);
        CHECK(u.g.C == l.C);
    }
    CHECK(make_setup(problem(three, Layout::nchw)).tw);
    // channels padded (either layout) or split into parts: the filters copied too
    for (Layout layout : {Layout::nhwc, Layout::nchw}) {
        const auto u = make_setup(problem(one_c5, layout));
        CHECK(u.tin);
        CHECK(u.tw);
        CHECK(u.g.C > one_c5.C);
    }
    const auto split = make_setup(problem(one, Layout::nchw), 3);
    CHECK(split.tin);
    CHECK(split.tw);
}
