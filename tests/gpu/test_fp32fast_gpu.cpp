// The exact-fp32 fast family (kernels/fp32fast/fp32fast_family.cpp) on the shapes its development
// harness checked that the shared odd shapes (gpu_test_util.hpp) do not have, beyond what
// test_variants_gpu.cpp checks for every variant: a 3x3 filter with pad 2 and a non-square
// plane, filters past one block (M = 70), a 5x5 filter at pad 1 on a non-square plane, a 5x5
// filter at stride 2 (Winograd must refuse it, the GEMMs run it), and a small 3x3 layer with
// 7 filters. On each: every row PASS where its supports() accepts the problem (else the SKIP
// it announced), and the deterministic rows bit-identical when run twice.
#include "catch.hpp"
#include "gpu_test_util.hpp"

#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace cs;
using namespace cs::gpu;
using cs::test::device;
using cs::test::family_variants;
using cs::test::has;
using cs::test::make_layer;
using cs::test::make_ref_problem;
using cs::test::run_checked;

namespace {

struct Shape {
    Layer layer;
    std::int64_t N;
};

std::vector<Shape> shapes() {
    return {
        {make_layer("ff_c5_m7_3x3", 5, 11, 11, 7, 3, 3, 1, 1), 3},
        {make_layer("ff_pad2_m70_3x3", 19, 9, 14, 70, 3, 3, 1, 2), 5},
        {make_layer("ff_s2_5x5", 6, 20, 20, 9, 5, 5, 2, 1), 2},
        {make_layer("ff_pad1_m40_5x5", 19, 14, 10, 40, 5, 5, 1, 1), 2},
    };
}

}  // namespace

TEST_CASE("the fp32-fast family passes the odd shapes of its development harness", "[gpu][fp32-fast]") {
    auto& ctx = device();
    const auto family = family_variants("fp32-fast");
    REQUIRE(family.size() >= 11);
    std::map<std::string, int> passes;
    for (const auto& s : shapes()) {
        const auto rp = make_ref_problem(s.layer, s.N);
        for (const Variant* v : family) {
            const auto why = v->supports(rp.problem, ctx.prop());
            const auto a = run_checked(ctx, *v, MemoryMode::pageable, rp, test::test_options(0, true));
            INFO(v->name << " on " << s.layer.name << " (" << s.layer.shape_string() << ") N=" << s.N << ": "
                         << to_string(a.status) << " " << a.reason << " [" << a.detail
                         << "] max_rel_err=" << a.err.max_rel_err);
            if (why) {
                // Winograd on a filter or stride it is not for, or a Hopper rung off sm_90.
                REQUIRE(a.status == Status::skip);
                CHECK((has(*why, "filter at stride 1") || has(*why, "needs sm_90")));
                continue;
            }
            REQUIRE(a.status == Status::pass);
            REQUIRE(a.check == "golden");
            REQUIRE(a.err.nonfinite == 0);
            REQUIRE(a.err.max_rel_err <= a.threshold);
            ++passes[v->name];
            if (!v->deterministic) continue;
            const auto b = run_checked(ctx, *v, MemoryMode::pageable, rp, test::test_options(0, true));
            REQUIRE(b.status == Status::pass);
            REQUIRE(a.output.size() == b.output.size());
            REQUIRE(std::memcmp(a.output.data(), b.output.data(), a.output.size() * sizeof(float)) == 0);
        }
    }
    // The GEMM rungs run every shape; each Winograd rung at least the shapes of its filter size
    // (the tensor-core ones only on sm_90).
    const bool sm90 = ctx.prop().major == 9 && ctx.prop().minor == 0;
    for (const Variant* v : family) {
        INFO(v->name);
        if (v->algo == "gemm")
            CHECK(passes[v->name] == int(shapes().size()));
        else if (sm90 || !has(v->name, "wgmma"))
            CHECK(passes[v->name] >= 1);
    }
}

// simt-gemm's axes (what the harness's tile probes did): every tile and several forced K-part
// counts pass on a shape with few output tiles (split-K's case) and on the 5x5 one.
TEST_CASE("simt-gemm passes with every tile and forced K parts", "[gpu][fp32-fast]") {
    auto& ctx = device();
    const Variant& v = cs::test::variant("simt-gemm");
    const Axis* tile = nullptr;
    for (const auto& a : v.axes)
        if (a.name == "tile") tile = &a;
    REQUIRE(tile != nullptr);
    for (const auto& s : {shapes()[1], shapes()[3]}) {
        auto rp = make_ref_problem(s.layer, s.N);
        for (const auto& t : tile->values)
            for (const char* split : {"", "1", "3", "16"}) {
                Config c{{{"tile", t}}};
                if (*split) c.set.emplace_back("split", split);
                REQUIRE(!config_error(v, c));
                rp.problem.axes = axis_values(v, c);
                const auto r = run_checked(ctx, v, MemoryMode::pageable, rp);
                INFO("simt-gemm " << c.str() << " on " << s.layer.name << ": " << to_string(r.status)
                                  << " " << r.reason << " [" << r.detail << "] max_rel_err=" << r.err.max_rel_err);
                REQUIRE(r.status == Status::pass);
                REQUIRE(r.err.max_rel_err <= r.threshold);
                if (std::string(split) == "1") CHECK(!has(r.detail, "split-K"));
            }
    }
}
