// The GEMM family, beyond what test_variants_gpu.cpp checks for every variant:
// im2col-gemm's chunking of its col buffer under a tiny workspace limit (and SKIP when one
// image cannot fit), the WMMA kernels on shapes whose M, P and K are multiples of no
// fragment and on conv3 at N=1 (the small-tile path), the implicit GEMM with and without
// index reuse against each other, and the family in the streams memory mode (calls with
// fewer images than the plan was made for, tensors at offsets).
#include "catch.hpp"
#include "gpu_test_util.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace cs;
using namespace cs::gpu;
using cs::test::device;
using cs::test::odd_layer;
using cs::test::make_layer;
using cs::test::variant;
using cs::test::make_ref_problem;
using cs::test::RefProblem;

namespace {

RunResult run_with(const Variant& v, const RefProblem& rp, MemoryMode mode, std::size_t limit = 0,
                   bool keep = false) {
    RunOptions opt = cs::test::test_options(1, keep);
    opt.workspace_limit = limit;
    return cs::test::run_checked(device(), v, mode, rp, opt);
}

std::string describe(const Variant& v, const RefProblem& rp, const RunResult& r) {
    return v.name + " on " + rp.problem.layer.name + " (" + rp.problem.layer.shape_string() +
           ") N=" + std::to_string(rp.problem.N) + ": " + std::string(to_string(r.status)) + " " + r.reason + " [" +
           r.detail + "] workspace=" + std::to_string(r.workspace_bytes) +
           " max_rel_err=" + std::to_string(r.err.max_rel_err);
}

void require_pass(const Variant& v, const RefProblem& rp, const RunResult& r) {
    INFO(describe(v, rp, r));
    REQUIRE(r.status == Status::pass);
    REQUIRE(r.check == "golden");
    REQUIRE(r.err.nonfinite == 0);
    REQUIRE(r.err.max_rel_err <= r.threshold);
}

}  // namespace

TEST_CASE("im2col-gemm chunks its col buffer to fit a 64 KB workspace limit", "[gpu][gemm][workspace]") {
    const Variant& v = variant("im2col-gemm");
    const std::size_t limit = 64 * 1024;
    // odd_c3_s2: K = 3*5*3 = 45, E*F = 9*12 = 108 -> 19440 B per image: chunks of 3 images.
    // odd_s4_c3: K = 3*11*11 = 363, E*F = 7*6 = 42 -> 60984 B per image: one image per chunk.
    struct Case {
        const char* layer;
        const char* chunk_note;
    };
    for (const Case c : {Case{"odd_c3_s2", "3 image(s) per chunk"}, Case{"odd_s4_c3", "1 image(s) per chunk"}}) {
        const auto rp = make_ref_problem(odd_layer(c.layer), 5);
        const auto r = run_with(v, rp, MemoryMode::pageable, limit);
        require_pass(v, rp, r);
        INFO(describe(v, rp, r));
        REQUIRE(r.workspace_bytes > 0);
        REQUIRE(r.workspace_bytes <= limit);
        REQUIRE(r.detail.find(c.chunk_note) != std::string::npos);
    }
}

TEST_CASE("im2col-gemm is skipped, with its reason, when one image's col matrix exceeds the limit",
          "[gpu][gemm][workspace]") {
    const Variant& v = variant("im2col-gemm");
    // odd_c33_5x5: K = 825, E*F = 143 -> 471900 B for one image.
    const auto rp = make_ref_problem(odd_layer("odd_c33_5x5"), 2);
    const auto r = run_with(v, rp, MemoryMode::pageable, 64 * 1024);
    INFO(describe(v, rp, r));
    REQUIRE(r.status == Status::skip);
    REQUIRE(r.reason.find("workspace limit") != std::string::npos);
}

TEST_CASE("the WMMA variants pass shapes whose M, P and K are multiples of no fragment", "[gpu][gemm][wmma]") {
    const std::vector<Layer> layers = {
        // M = 19, K = 5*3*3 = 45, E*F = 11*13 = 143: P = 429 at N=3.
        make_layer("wmma_m19_k45", 5, 11, 13, 19, 3, 3, 1, 1),
        // conv1-like: K = 363, M = 7, stride 4, E*F = 7*6 = 42.
        odd_layer("odd_s4_c3"),
        // M = 9, K = 825, E*F = 143.
        odd_layer("odd_c33_5x5"),
    };
    for (const char* name : {"wmma-fp16", "wmma-tf32"}) {
        const Variant& v = variant(name);
        for (const auto& l : layers) {
            for (std::int64_t N : {1, 3}) {
                const auto rp = make_ref_problem(l, N);
                require_pass(v, rp, run_with(v, rp, MemoryMode::pageable));
            }
        }
    }
}

TEST_CASE("the WMMA variants take the small tile on conv3 at N=1 and pass", "[gpu][gemm][wmma][alexnet]") {
    const Layer* conv3 = default_layer_table().find("conv3");
    REQUIRE(conv3 != nullptr);
    const auto rp = make_ref_problem(*conv3, 1);
    for (const char* name : {"wmma-fp16", "wmma-tf32"}) {
        const Variant& v = variant(name);
        const auto r = run_with(v, rp, MemoryMode::pageable);
        require_pass(v, rp, r);
        INFO(describe(v, rp, r));
        // M = 384, P = 169: the 128x128 tile gives 6 blocks, 64x64 18, 32x32 72 (gemm_wmma.cuh).
        REQUIRE(r.detail.find("block tile 32x32x32") != std::string::npos);
    }
}

TEST_CASE("implicit-gemm and implicit-gemm-idx agree within the fp32 threshold", "[gpu][gemm]") {
    const Variant& naive = variant("implicit-gemm");
    const Variant& idx = variant("implicit-gemm-idx");
    std::vector<Layer> layers = test::odd_layers();
    layers.push_back(*default_layer_table().find("conv1"));
    for (const auto& l : layers) {
        const std::int64_t N = l.name == "conv1" ? 1 : 3;
        const auto rp = make_ref_problem(l, N);
        const auto a = run_with(naive, rp, MemoryMode::pageable, 0, true);
        const auto b = run_with(idx, rp, MemoryMode::pageable, 0, true);
        require_pass(naive, rp, a);
        require_pass(idx, rp, b);
        REQUIRE(a.output.size() == b.output.size());
        double max_diff = 0, max_ref = 0;
        for (std::size_t i = 0; i < a.output.size(); ++i) {
            max_diff = std::max(max_diff, double(std::fabs(a.output[i] - b.output[i])));
            max_ref = std::max(max_ref, double(std::fabs(a.output[i])));
        }
        // Same tiles, same summation order: expected bit-identical; the contract is the
        // fp32 threshold.
        INFO(l.name << ": max |naive - idx| = " << max_diff << ", max |naive| = " << max_ref);
        REQUIRE(max_ref > 0);
        REQUIRE(max_diff / max_ref <= threshold(Precision::fp32));
    }
}

TEST_CASE("the GEMM family passes in the streams memory mode", "[gpu][gemm][memory]") {
    // N=5 over the default 4 streams x 2 chunks: chunks of 1 image, each run() call gets
    // tensors at an image offset and fewer images than a whole batch.
    const auto rp = make_ref_problem(odd_layer("odd_c7_p1"), 5);
    for (const auto& v : registry()) {
        if (v.family != "gemm") continue;
        const auto r = run_with(v, rp, MemoryMode::streams);
        require_pass(v, rp, r);
    }
}
