// The multi-kernel family, beyond what test_variants_gpu.cpp checks for every
// variant: the workspace policy (chunks of images, channel groups, SKIP when even one
// image cannot fit), the atomic variant's run-to-run spread, the shared-input decision on
// conv1's 227x227 plane, mk's sums in global memory giving the same bits as mk-sw-mt's in
// registers, and the atomic variant's coverage (a counting pass: it zeroes its output, so
// the harness's NaN poison cannot show an element it leaves unwritten).
#include "catch.hpp"
#include "gpu_test_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using namespace cs;
using namespace cs::gpu;
using cs::test::device;
using cs::test::make_layer;
using cs::test::odd_layer;
using cs::test::make_ref_problem;
using cs::test::RefProblem;

namespace {

std::vector<const Variant*> family() { return cs::test::family_variants("multi-kernel"); }

bool has_workspace(const Variant& v) { return v.deterministic; }  // the atomic variant has none

// Bytes of one image's workspace with G channels per group: ceil(C/G) planes of M x EFp
// elements (EFp = E*F rounded up to 4), float or half as the variant's data.
std::size_t per_image_bytes(const Variant& v, const Layer& l, int G) {
    const std::size_t efp = (std::size_t(l.E()) * std::size_t(l.F()) + 3) / 4 * 4;
    const std::size_t groups = std::size_t((l.C + G - 1) / G);
    return groups * std::size_t(l.M) * efp * (v.io == DType::f16 ? 2 : 4);
}

RunResult run_with(const Variant& v, const RefProblem& rp, MemoryMode mode, std::size_t limit, int repeats = 1,
                   bool keep = false) {
    RunOptions opt = cs::test::test_options(repeats, keep);
    opt.workspace_limit = limit;
    return cs::test::run_checked(device(), v, mode, rp, opt);
}

std::string describe(const Variant& v, const RefProblem& rp, std::size_t limit, const RunResult& r) {
    return v.name + " on " + rp.problem.layer.name + " (" + rp.problem.layer.shape_string() +
           ") N=" + std::to_string(rp.problem.N) + " limit=" + std::to_string(limit) + ": " +
           std::string(to_string(r.status)) + " " + r.reason + " [" + r.detail + "] workspace=" +
           std::to_string(r.workspace_bytes) + " max_rel_err=" + std::to_string(r.err.max_rel_err);
}

void require_pass_within(const Variant& v, const RefProblem& rp, std::size_t limit, const RunResult& r) {
    INFO(describe(v, rp, limit, r));
    REQUIRE(r.status == Status::pass);
    REQUIRE(r.check == "golden");
    REQUIRE(r.err.nonfinite == 0);
    REQUIRE(r.err.max_rel_err <= r.threshold);
    REQUIRE(r.workspace_bytes <= limit);
    if (!has_workspace(v)) REQUIRE(r.workspace_bytes == 0);
}

}  // namespace

TEST_CASE("multi-kernel variants chunk and group to fit a small workspace limit", "[gpu][multi-kernel]") {
    const auto fam = family();
    REQUIRE(fam.size() == 6);
    const std::vector<Layer> layers = {
        odd_layer("odd_c33_5x5"),
        odd_layer("odd_s4_c3"),
        odd_layer("odd_tile2"),
        // One image at G = 1 needs 37*19*444*4 = 1.19 MiB: above 1 MiB, so it must group.
        make_layer("mk_c37_group", 37, 21, 21, 19, 3, 3, 1, 1),
    };
    constexpr std::int64_t N = 5;
    for (const auto& l : layers) {
        const auto rp = make_ref_problem(l, N);
        for (const Variant* v : fam) {
            // The brief's 1 MiB.
            const std::size_t mib = std::size_t(1) << 20;
            require_pass_within(*v, rp, mib, run_with(*v, rp, MemoryMode::pageable, mib));
            if (!has_workspace(*v)) continue;
            const std::size_t one = per_image_bytes(*v, l, 1);
            // Room for 2.5 images at G = 1: chunks of 2 images (2 + 2 + 1), the study's G = 1.
            const std::size_t two = one * 5 / 2;
            const auto r2 = run_with(*v, rp, MemoryMode::pageable, two);
            require_pass_within(*v, rp, two, r2);
            {
                INFO(describe(*v, rp, two, r2));
                CHECK(r2.detail.find("chunks of 2 images, 1 channel(s) per group") != std::string::npos);
                CHECK(r2.workspace_bytes == 2 * one);
            }
            // Room for half an image at G = 1: channels grouped (G >= 2), one image a chunk.
            if (l.C >= 2) {
                const std::size_t half = std::max(one / 2, per_image_bytes(*v, l, l.C));
                const auto rh = run_with(*v, rp, MemoryMode::pageable, half);
                require_pass_within(*v, rp, half, rh);
                INFO(describe(*v, rp, half, rh));
                CHECK(rh.detail.find("chunks of 1 images") != std::string::npos);
                CHECK(rh.detail.find(" 1 channel(s) per group") == std::string::npos);
            }
            // The smallest limit that can work: one image with every channel in one group.
            const std::size_t min_limit = per_image_bytes(*v, l, l.C);
            require_pass_within(*v, rp, min_limit, run_with(*v, rp, MemoryMode::pageable, min_limit));
        }
    }
}

TEST_CASE("multi-kernel variants keep each stream's workspace under the limit", "[gpu][multi-kernel][memory]") {
    const auto rp = make_ref_problem(odd_layer("odd_c33_5x5"), 5);
    const std::size_t limit = std::size_t(1) << 20;
    for (const Variant* v : family()) {
        for (MemoryMode m : {MemoryMode::streams, MemoryMode::managed}) {
            const auto r = run_with(*v, rp, m, limit);
            require_pass_within(*v, rp, limit, r);
        }
    }
}

TEST_CASE("a workspace limit too small for one image is a SKIP with its reason", "[gpu][multi-kernel]") {
    const Layer l = odd_layer("odd_c33_5x5");
    const auto rp = make_ref_problem(l, 5);
    for (const Variant* v : family()) {
        const std::size_t limit = per_image_bytes(*v, l, l.C) - 1;
        const auto r = run_with(*v, rp, MemoryMode::pageable, limit);
        INFO(describe(*v, rp, limit, r));
        if (has_workspace(*v)) {
            REQUIRE(r.status == Status::skip);
            REQUIRE(!r.reason.empty());
            REQUIRE(r.reason.find("workspace") != std::string::npos);
        } else {
            REQUIRE(r.status == Status::pass);  // no workspace: any limit will do
            REQUIRE(r.workspace_bytes == 0);
        }
    }
}

TEST_CASE("the atomic variant's run-to-run spread stays within the fp32 threshold on conv3", "[gpu][multi-kernel]") {
    const Variant* v = find_variant("exp-Mk-sw-mt-si-c-vec").variant;
    REQUIRE(v != nullptr);
    REQUIRE(!v->deterministic);
    REQUIRE(v->precision == Precision::fp32);
    const Layer* l = default_layer_table().find("conv3");
    REQUIRE(l != nullptr);
    const auto rp = make_ref_problem(*l, 1);
    const auto a = run_with(*v, rp, MemoryMode::pageable, 0, 0, true);
    const auto b = run_with(*v, rp, MemoryMode::pageable, 0, 0, true);
    require_pass_within(*v, rp, std::size_t(-1), a);
    require_pass_within(*v, rp, std::size_t(-1), b);
    REQUIRE(a.output.size() == b.output.size());
    double spread = 0, max_golden = 0;
    std::size_t differ = 0;
    for (std::size_t i = 0; i < a.output.size(); ++i) {
        const double d = std::fabs(double(a.output[i]) - double(b.output[i]));
        spread = std::max(spread, d);
        differ += d != 0;
        max_golden = std::max(max_golden, std::fabs(double(rp.golden[i])));
    }
    const double rel = spread / max_golden;
    std::printf("exp-mk-sw-mt-si-c-vec on conv3 N=1: two runs differ by max %.3g (%.3g of max|golden|) in %zu of %zu "
                "outputs; errors vs golden %.3g and %.3g; fp32 threshold %.3g\n",
                spread, rel, differ, a.output.size(), a.err.max_rel_err, b.err.max_rel_err, threshold(Precision::fp32));
    REQUIRE(rel <= threshold(Precision::fp32));
}

TEST_CASE("the shared-input variants pass conv1 and say which input path they took", "[gpu][multi-kernel]") {
    const Layer* l = default_layer_table().find("conv1");
    REQUIRE(l != nullptr);
    const auto rp = make_ref_problem(*l, 1);
    const std::size_t optin = device().prop().sharedMemPerBlockOptin;
    const std::size_t plane = std::size_t(l->H + 2 * l->pad) * std::size_t(l->W + 2 * l->pad) * 4;
    for (const Variant* v : family()) {
        if (v->name.find("-si-") == std::string::npos) continue;
        const auto r = run_with(*v, rp, MemoryMode::pageable, 0);
        INFO(describe(*v, rp, 0, r));
        std::printf("%s on conv1 N=1 (opt-in %zu bytes): %s [%s]\n", v->name.c_str(), optin,
                    std::string(to_string(r.status)).c_str(), r.detail.c_str());
        REQUIRE(r.status == Status::pass);
        const bool shared = r.detail.find("input plane in shared memory") != std::string::npos;
        const bool global = r.detail.find("input read from global memory") != std::string::npos;
        REQUIRE(shared != global);
        // The plane plus a filter slice (and, for float4 rows, one padded column) must fit
        // the device's opt-in limit: well under it, shared; over it, global.
        if (optin >= plane + 8192) CHECK(shared);
        if (optin < plane) CHECK(global);
    }
}

TEST_CASE("the shared-input variants read global memory when a plane exceeds the opt-in limit",
          "[gpu][multi-kernel]") {
    // Planes of 250-264 KB, above the 227 KB an H100/H200 block can opt in to: the global-
    // input kernels of si-c, -half, -vec and exp, with 2x2 (11x11 filter, stride 4) and one
    // (5x5 and 3x3 filters, stride 8-9) outputs per thread.
    const std::vector<Layer> layers = {
        make_layer("mk_big_s4_11x11", 2, 250, 250, 3, 11, 11, 4, 0),  // 60x60 outputs: 2x2 each
        make_layer("mk_big_s9_5x5", 2, 260, 260, 3, 5, 5, 9, 1),      // 29x29
        make_layer("mk_big_s8_3x3", 2, 256, 256, 3, 3, 3, 8, 0),      // 32x32
    };
    const std::size_t optin = device().prop().sharedMemPerBlockOptin;
    for (const auto& l : layers) {
        const auto rp = make_ref_problem(l, 2);
        const std::size_t plane = std::size_t(l.H + 2 * l.pad) * std::size_t(l.W + 2 * l.pad) * 4;
        for (const Variant* v : family()) {
            if (v->name.find("-si-") == std::string::npos) continue;
            const auto r = run_with(*v, rp, MemoryMode::pageable, 0);
            INFO(describe(*v, rp, 0, r));
            REQUIRE(r.status == Status::pass);
            REQUIRE(r.err.max_rel_err <= r.threshold);
            if (plane > optin) CHECK(r.detail.find("input read from global memory") != std::string::npos);
        }
    }
}

TEST_CASE("exp-mk-sw-mt-si-c-vec adds every channel into every output exactly once (counting pass)",
          "[gpu][multi-kernel]") {
    // The harness NaN-poisons the output before the checked run, so a variant that leaves
    // an element unwritten fails. This one cannot be checked that way: its run() zeroes the
    // output first (its blocks atomicAdd into it), so an element no block adds to reads 0,
    // and with random data only the value check could notice (it does unless the element's
    // golden value is tiny). The counting pass checks coverage directly: inputs and weights
    // all 1, so each output is the number of its in-bounds taps over all channels, an
    // integer <= C*R*S, exact in float whatever order the atomics land in. Every element
    // must equal it exactly: an unwritten element (0), a channel that never added (short by
    // its taps) or one added twice (over) is a mismatch. Every count is >= 1, so 0 always
    // means unwritten.
    const Variant& v = cs::test::variant("exp-mk-sw-mt-si-c-vec");
    REQUIRE(!v.deterministic);
    std::vector<Layer> layers = cs::test::odd_layers();
    for (const char* name : {"conv1", "conv2", "conv3", "conv4", "conv5"}) layers.push_back(cs::test::alexnet(name));
    for (const auto& l : layers) {
        const std::int64_t N = l.C <= 3 ? 3 : 2;
        RefProblem rp;
        rp.problem = Problem{l, N, gpu::Layout::nchw, {}};
        rp.in.assign(std::size_t(l.input_elems(N)), 1.0f);
        rp.w.assign(std::size_t(l.weight_elems()), 1.0f);
        rp.golden.resize(std::size_t(l.output_elems(N)));
        conv2d_ref<double>(l, N, rp.in.data(), rp.w.data(), rp.golden.data());
        REQUIRE(*std::min_element(rp.golden.begin(), rp.golden.end()) >= 1.0f);
        for (MemoryMode mode : {MemoryMode::pageable, MemoryMode::streams}) {
            const auto r = run_with(v, rp, mode, 0, 0, true);
            INFO(describe(v, rp, 0, r) << " mode " << to_string(mode));
            REQUIRE(r.status == Status::pass);
            REQUIRE(r.output.size() == rp.golden.size());
            std::size_t mismatches = 0, unwritten = 0, first = 0;
            for (std::size_t i = 0; i < r.output.size(); ++i)
                if (r.output[i] != rp.golden[i]) {
                    if (mismatches++ == 0) first = i;
                    unwritten += r.output[i] == 0.0f;
                }
            INFO(mismatches << " outputs differ from their tap count (" << unwritten << " of them 0), first at "
                            << first);
            CHECK(mismatches == 0);
        }
    }
}

TEST_CASE("mk's running sums in global memory give mk-sw-mt's bits (same products, same order)",
          "[gpu][multi-kernel]") {
    // mk loads, adds to and stores its workspace slot for every tap; mk-sw-mt keeps the sum
    // in a register and stores it once. Both take each output's products in the order
    // c, r, s with one fmaf each, so the outputs must be equal bit for bit; only the time
    // differs (what the study's Mk -> Mk-sw-mt step measures, with the shared filter).
    const Variant& mk = cs::test::variant("mk");
    const Variant& swmt = cs::test::variant("mk-sw-mt");
    std::vector<Layer> layers = {odd_layer("odd_c33_5x5"), odd_layer("odd_s4_c3"), odd_layer("odd_tile3"),
                                 cs::test::alexnet("conv2"), cs::test::alexnet("conv4")};
    for (const auto& l : layers) {
        const auto rp = make_ref_problem(l, 2);
        // A small workspace limit as well: G > 1 channels per group accumulate in one slot.
        for (std::size_t limit : {std::size_t(0), per_image_bytes(mk, l, l.C)}) {
            const auto a = run_with(mk, rp, MemoryMode::pageable, limit, 0, true);
            const auto b = run_with(swmt, rp, MemoryMode::pageable, limit, 0, true);
            INFO(describe(mk, rp, limit, a));
            INFO(describe(swmt, rp, limit, b));
            REQUIRE(a.status == Status::pass);
            REQUIRE(b.status == Status::pass);
            REQUIRE(a.output.size() == b.output.size());
            std::size_t differ = 0;
            for (std::size_t i = 0; i < a.output.size(); ++i) differ += a.output[i] != b.output[i];
            CHECK(differ == 0);
        }
    }
}
