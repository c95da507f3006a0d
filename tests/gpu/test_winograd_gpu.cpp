// The 5x5 Winograd variants (fp32 class) on the paths the odd shapes and AlexNet do not take,
// beyond what test_variants_gpu.cpp checks for every variant:
//   - a position spread over several pipeline stages: the tensor-core rungs stage 3 chunks of
//     32 channels (96: conv2's C, and more than every odd shape's), so C = 130 (Cp = 160, 5
//     chunks) takes two stages per position, the second with a chunk past Cp (zero-filled by
//     TMA / the copies) — the MMA loop's wait<1> branch and its refills;
//   - filters past the block (M = 70: 64-filter blocks with 58 padding rows, 32-filter blocks
//     with 26);
//   - the batch cut into passes by a small workspace limit (V holds one image at a time).
#include "catch.hpp"
#include "gpu_test_util.hpp"

#include <string>
#include <vector>

using namespace cs;
using namespace cs::gpu;
using cs::test::device;
using cs::test::has;
using cs::test::make_layer;
using cs::test::make_ref_problem;
using cs::test::run_checked;
using cs::test::variant;

namespace {

const std::vector<std::string> kWinograd5x5 = {"winograd-f2x2-5x5", "winograd-f3x3-5x5", "winograd-3xfp16-f3x3-5x5",
                                               "winograd-3xfp16-wgmma-f3x3-5x5",
                                               "winograd-3xfp16-wgmma-ws-f3x3-5x5"};

// PASS; SKIP only for the Hopper rungs on a device that is not sm_90 (their announced reason).
void require_pass(const Variant& v, const Layer& l, std::int64_t N, const RunResult& r) {
    INFO(v.name << " on " << l.name << " (" << l.shape_string() << ") N=" << N << ": " << to_string(r.status) << " "
                << r.reason << " [" << r.detail << "] max_rel_err=" << r.err.max_rel_err);
    if (r.status == Status::skip && has(v.name, "wgmma")) {
        REQUIRE(has(r.reason, "needs sm_90"));
        return;
    }
    REQUIRE(r.status == Status::pass);
    REQUIRE(r.check == "golden");
    REQUIRE(r.err.nonfinite == 0);
    REQUIRE(r.err.max_rel_err <= r.threshold);
}

}  // namespace

TEST_CASE("the 5x5 Winograd variants pass with a position over two pipeline stages and padded filters",
          "[gpu][winograd]") {
    const Layer l = make_layer("wino5_c130_m70", 130, 9, 11, 70, 5, 5, 1, 2);
    const auto rp = make_ref_problem(l, 2);
    for (const auto& name : kWinograd5x5) {
        const Variant& v = variant(name);
        require_pass(v, l, 2, run_checked(device(), v, MemoryMode::pageable, rp));
    }
}

TEST_CASE("the tensor-core 5x5 Winograd variants pass with the batch cut into passes of one image",
          "[gpu][winograd]") {
    // conv2's channels and plane, 64 filters, N = 3. The workspace: U (49 positions x 64
    // filters x 192 halves) + V of one image (49 x 81 tiles x 192) + one block's rows of
    // padding (49 x 64 x 192), 2 bytes each: ~3.9 MB, so 4.5 MB holds one image per pass.
    const Layer l = make_layer("wino5_chunks", 96, 27, 27, 64, 5, 5, 1, 2);
    const auto rp = make_ref_problem(l, 3);
    auto opt = test::test_options();
    opt.workspace_limit = std::size_t(4.5 * (1 << 20));
    for (const auto& name : {"winograd-3xfp16-f3x3-5x5", "winograd-3xfp16-wgmma-f3x3-5x5",
                             "winograd-3xfp16-wgmma-ws-f3x3-5x5"}) {
        const Variant& v = variant(name);
        const auto r = run_checked(device(), v, MemoryMode::pageable, rp, opt);
        require_pass(v, l, 3, r);
        if (r.status == Status::pass) {
            INFO(r.detail);
            CHECK(has(r.detail, " 1 images per pass"));
        }
    }
}
