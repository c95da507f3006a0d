// The direct-convolution course-project ideas, beyond what test_variants_gpu.cpp
// checks for every variant: const-weights' chunking of the filters over the 64 KB
// constant bank (several chunks, one chunk, and the streams mode, whose concurrent plans
// share the bank); restrict-unroll's choice of instance (unrolled, unrolled with runtime
// stride, generic); tiled-input on strides 2, 3 and 4 with padding at every border,
// several tiles, stages and filter groups, and a stage above the 48 KB default.
#include "catch.hpp"
#include "gpu_test_util.hpp"

#include <cmath>
#include <string>
#include <vector>

using namespace cs;
using namespace cs::gpu;
using cs::test::device;
using cs::test::has;
using cs::test::make_ref_problem;
using cs::test::run_checked;
using cs::test::make_layer;
using cs::test::odd_layer;
using cs::test::alexnet;
using cs::test::variant;

namespace {

std::string describe(const Variant& v, const Layer& l, std::int64_t N, const RunResult& r) {
    return v.name + " on " + l.name + " (" + l.shape_string() + ") N=" + std::to_string(N) + ": " +
           std::string(to_string(r.status)) + " " + r.reason + " [" + r.detail +
           "] max_rel_err=" + std::to_string(r.err.max_rel_err);
}

void require_pass(const Variant& v, const Layer& l, std::int64_t N, const RunResult& r) {
    INFO(describe(v, l, N, r));
    REQUIRE(r.status == Status::pass);
    REQUIRE(r.check == "golden");
    REQUIRE(r.err.nonfinite == 0);
    REQUIRE(r.err.max_rel_err <= r.threshold);
}

// Runs `name` on `l` at N images (pageable), requires PASS, returns the result.
RunResult pass(const std::string& name, const Layer& l, std::int64_t N, bool keep_output = false) {
    const auto rp = make_ref_problem(l, N);
    const Variant& v = variant(name);
    auto r = run_checked(device(), v, MemoryMode::pageable, rp, 0, keep_output);
    require_pass(v, l, N, r);
    return r;
}

}  // namespace

TEST_CASE("const-weights passes with the filters cut into several chunks and in one chunk",
          "[gpu][direct][const-weights]") {
    // conv1: K = 363 floats = 1452 B per filter, the 64 KB bank holds 45: 96 filters in
    // 3 chunks of 32. odd_chunks: K = 825 (3300 B), 19 per bank: 40 filters in 3 chunks.
    // odd_c3_s2: K = 45, all 5 filters in one chunk.
    struct Case {
        Layer layer;
        std::int64_t N;
        std::string chunks;
    };
    const std::vector<Case> cases = {
        {alexnet("conv1"), 1, "3 chunks of <= 32 filters"},
        {make_layer("odd_chunks", 33, 11, 13, 40, 5, 5, 1, 2), 3, "3 chunks of <= 14 filters"},
        {odd_layer("odd_c3_s2"), 3, "1 chunk of <= 5 filters"},
    };
    for (const auto& c : cases) {
        const auto r = pass("const-weights", c.layer, c.N);
        INFO(r.detail);
        CHECK(has(r.detail, c.chunks));
    }
}

TEST_CASE("const-weights shares its one constant bank safely between the streams of the streams mode",
          "[gpu][direct][const-weights][memory]") {
    // Several plans (one per stream) each copy their chunks into the same bank; without
    // the cross-stream ordering one stream's copy would overwrite the filters another
    // stream's kernel is reading.
    const Layer l = make_layer("odd_chunks", 33, 11, 13, 40, 5, 5, 1, 2);
    const auto rp = make_ref_problem(l, 8);
    const Variant& v = variant("const-weights");
    const auto r = run_checked(device(), v, MemoryMode::streams, rp, 2);
    require_pass(v, l, 8, r);
    CHECK(r.streams >= 2);
    CHECK(r.chunks >= 2);
}

TEST_CASE("restrict-unroll runs the unrolled instance on AlexNet's sizes and the generic one elsewhere",
          "[gpu][direct][restrict-unroll]") {
    SECTION("conv2 (5x5, stride 1): unrolled, stride compile-time") {
        const auto r = pass("restrict-unroll", alexnet("conv2"), 1);
        INFO(r.detail);
        CHECK(has(r.detail, "instance: unrolled 5x5, stride 1 (compile-time)"));
    }
    SECTION("conv1 (11x11, stride 4): unrolled, stride compile-time") {
        const auto r = pass("restrict-unroll", alexnet("conv1"), 1);
        INFO(r.detail);
        CHECK(has(r.detail, "instance: unrolled 11x11, stride 4 (compile-time)"));
    }
    SECTION("11x11 with stride 2 and padding: unrolled, stride at run time") {
        const auto r = pass("restrict-unroll", make_layer("odd_11x11_s2", 2, 31, 29, 3, 11, 11, 2, 1), 2);
        INFO(r.detail);
        CHECK(has(r.detail, "instance: unrolled 11x11, stride 2 (runtime)"));
    }
    SECTION("4x4 odd shape: generic") {
        const auto r = pass("restrict-unroll", odd_layer("odd_tile2"), 1);
        INFO(r.detail);
        CHECK(has(r.detail, "instance: generic (runtime 4x4, stride 1)"));
    }
}

TEST_CASE("restrict-unroll and tiled-input sum in register-acc's order: the same outputs",
          "[gpu][direct][order]") {
    // Both keep the (c, r, s) order of every product; a zero-padded tap in tiled-input
    // adds fmaf(0, w, sum) == sum. So the outputs equal register-acc's, not just within
    // the threshold.
    for (const Layer& l : {alexnet("conv2"), odd_layer("odd_c33_5x5"), odd_layer("odd_c3_s2")}) {
        const auto ref = pass("register-acc", l, 1, true);
        for (const char* name : {"restrict-unroll", "tiled-input"}) {
            const auto r = pass(name, l, 1, true);
            REQUIRE(r.output.size() == ref.output.size());
            std::size_t differ = 0;
            for (std::size_t i = 0; i < r.output.size(); ++i) differ += r.output[i] != ref.output[i];
            INFO(name << " on " << l.name << ": " << differ << " outputs differ from register-acc");
            CHECK(differ == 0);
        }
    }
}

TEST_CASE("tiled-input passes odd shapes with strides 2, 3 and 4 and padding at every border",
          "[gpu][direct][tiled-input]") {
    struct Case {
        Layer layer;
        std::int64_t N;
        const char* instance;
    };
    const std::vector<Case> cases = {
        // stride 2, pad 2: the first and last output rows and columns read the padding
        // (E = 11: last window rows 18..22 of 21; F = 13: columns 22..26 of 25).
        {make_layer("ti_s2_pad", 5, 21, 25, 11, 5, 5, 2, 2), 2, "stride 2 (compile-time)"},
        // stride 4, pad 3, 7x7: E = 10 (last window rows 33..39 of 37), F = 11 (37..43 of 41).
        {make_layer("ti_s4_pad", 3, 37, 41, 10, 7, 7, 4, 3), 2, "stride 4 (compile-time)"},
        // stride 3 (the runtime-stride instance), non-square filter, pad 1.
        {make_layer("ti_s3_pad", 4, 20, 22, 9, 4, 3, 3, 1), 3, "stride 3 (runtime)"},
        // the conv1-like odd shape of the common list: C = 3, 11x11, stride 4, no padding
        {odd_layer("odd_s4_c3"), 2, "stride 4 (compile-time)"},
        {odd_layer("odd_c3_s2"), 3, "stride 2 (compile-time)"},
    };
    for (const auto& c : cases) {
        const auto r = pass("tiled-input", c.layer, c.N);
        INFO(r.detail);
        CHECK(has(r.detail, c.instance));
    }
}

TEST_CASE("tiled-input with several tiles per plane, several channel stages and a partial filter group",
          "[gpu][direct][tiled-input]") {
    // E = 70, F = 45: 2 column tiles of 23 and 4 row tiles of 18 (72 rows: 2 past E);
    // C = 40: several stages; M = 21: the last filter group is partial.
    const auto r = pass("tiled-input", make_layer("ti_multi", 40, 70, 45, 21, 3, 3, 1, 1), 2);
    INFO(r.detail);
    CHECK(has(r.detail, "grid N x 8 tiles"));
    CHECK(!has(r.detail, " 1 stage,"));
    // AlexNet conv1 at N=1: its 63x119 patch per channel, 3 stages of one channel.
    const auto r1 = pass("tiled-input", alexnet("conv1"), 1);
    INFO(r1.detail);
    CHECK(has(r1.detail, "3 stages"));
}

TEST_CASE("tiled-input raises the shared-memory limit when one stage needs more than 48 KB",
          "[gpu][direct][tiled-input]") {
    // 41x41 filters: one channel's slice of 8 filters is 41*41*8*4 = 53.8 KB, above the
    // 48 KB default: the plan opts in (every sm_70+ device allows more).
    const auto r = pass("tiled-input", make_layer("ti_optin", 1, 64, 60, 8, 41, 41, 1, 0), 1);
    INFO(r.detail);
    CHECK(has(r.detail, "(opt-in)"));
}
