// The fp32-class split variants: range safety and a check that tells two products
// from three.
//   [split-mutation]  each split variant with a mutated split (split_mutation.hpp: the input's
//                     low parts zeroed; the weights' low parts zeroed over half of K, one of the
//                     three products dropped there) must FAIL on every AlexNet layer it runs at
//                     N=1 (the first by at least 3x its allowance), and PASS unmutated in the
//                     same test — the fp32 class's tau (7e-6, bench/tolerance.hpp) is what makes
//                     them fail.
//   [split-range]     the same variants on golden data at other scales (2^-24, 2^20, mixed):
//                     PASS, or an ERROR naming the representable range, never NaN or a FAIL;
//                     and data that cannot be represented (an inf input, max|x| max|w| K past
//                     2^127): the range ERROR for the scaled splits.
#include "catch.hpp"
#include "gpu_test_util.hpp"
#include "split_mutation.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

using namespace cs;
using namespace cs::gpu;
using cs::test::alexnet;
using cs::test::device;
using cs::test::has;
using cs::test::make_ref_problem;
using cs::test::RefProblem;
using cs::test::run_checked;
using cs::test::test_options;
using cs::test::variant;

namespace {

// Every split variant of the fp32 class. scaled: it finds a range scale on the device and
// reports data out of range as an ERROR (split-tf32 needs no scale: split_tf32.cu says why).
struct SplitVariant {
    const char* name;
    bool scaled;
};
const SplitVariant kSplits[] = {
    {"hopper-ws-3xfp16", true},
    {"hopper-ws-3xtf32", true},
    {"winograd-3xfp16-f3x3-5x5", true},
    {"winograd-3xfp16-wgmma-f3x3-5x5", true},
    {"winograd-3xfp16-wgmma-ws-f3x3-5x5", true},
    {"split-tf32", false},
};

const char* const kAlexNet[] = {"conv1", "conv2", "conv3", "conv4", "conv5"};

// The reference problem with its data times exact powers of two: the golden output and the
// bound scale by s_in * s_w exactly (reference/datagen.hpp: what `generate --input-scale
// --weight-scale` writes).
RefProblem scaled(const RefProblem& r, double s_in, double s_w) {
    RefProblem s = r;
    for (auto& v : s.in) v = float(double(v) * s_in);
    for (auto& v : s.w) v = float(double(v) * s_w);
    for (auto& v : s.golden) v = float(double(v) * s_in * s_w);
    for (auto& v : s.bound) v = float(double(v) * s_in * s_w);
    return s;
}

bool skipped_for_shape(const RunResult& r) {
    return r.status == Status::skip && !has(r.reason, "needs sm_90");
}

std::string describe(const Variant& v, const Layer& l, const RunResult& r) {
    return v.name + " on " + l.name + ": " + std::string(to_string(r.status)) + " " + r.reason +
           " [max_rel_err " + std::to_string(r.err.max_rel_err) + ", max_bound_ratio " +
           std::to_string(r.err.max_bound_ratio) + "; " + r.detail + "]";
}

}  // namespace

TEST_CASE("a split with a dropped product fails the fp32 class and the whole split passes",
          "[gpu][split-mutation]") {
    for (const char* layer : kAlexNet) {
        const Layer l = alexnet(layer);
        const RefProblem rp = make_ref_problem(l, 1);
        for (const auto& sv : kSplits) {
            const Variant& v = variant(sv.name);
            const RunResult ok = run_checked(device(), v, MemoryMode::pageable, rp, 0);
            INFO(describe(v, l, ok));
            if (ok.status == Status::skip) {
                // Shapes the variant does not take (the Winograd rungs: 5x5 stride 1 only), or
                // not an sm_90 device for the Hopper rungs.
                REQUIRE((skipped_for_shape(ok) || has(ok.reason, "needs sm_90")));
                continue;
            }
            REQUIRE(ok.status == Status::pass);
            for (const SplitMutation m : {SplitMutation::zero_input_lo, SplitMutation::drop_product_half_k}) {
                RunOptions opt = test_options(0, false);
                opt.split_mutation = m;  // reaches the plan through PlanContext
                const RunResult bad = run_checked(device(), v, MemoryMode::pageable, rp, opt);
                INFO("mutated: " << describe(v, l, bad));
                std::printf("[split-mutation] %s %s %s: %s, max_rel_err %.3g, max_bound_ratio %.3g\n", sv.name, layer,
                            m == SplitMutation::zero_input_lo ? "input-lo-zeroed" : "product-dropped-half-K",
                            std::string(to_string(bad.status)).c_str(), bad.err.max_rel_err, bad.err.max_bound_ratio);
                REQUIRE(has(bad.detail, "TEST MUTATION"));
                REQUIRE(bad.status == Status::fail);
                REQUIRE(bad.err.nonfinite == 0);
                REQUIRE(bad.err.max_bound_ratio > 1.0);
                // The whole input's low part gone (two products instead of three): what fp32's
                // tau was set for, a FAIL by at least 3x its per-element allowance (bench/tolerance.hpp).
                if (m == SplitMutation::zero_input_lo) CHECK(bad.err.max_bound_ratio >= 3.0);
            }
        }
    }
}

TEST_CASE("the split variants pass on golden data scaled from 2^-24 to 2^20, or name the range",
          "[gpu][split-range]") {
    struct Scales {
        double in, w;
    };
    const Scales kScales[] = {{0x1p-24, 0x1p-24}, {0x1p20, 0x1p20}, {0x1p-24, 0x1p20}, {0x1p20, 0x1p-24},
                              {0x1p-12, 1.0},     {1.0, 0x1p12}};
    for (const char* layer : {"conv1", "conv2"}) {
        const Layer l = alexnet(layer);
        const RefProblem base = make_ref_problem(l, 1);
        for (const auto& sc : kScales) {
            const RefProblem rp = scaled(base, sc.in, sc.w);
            for (const auto& sv : kSplits) {
                const Variant& v = variant(sv.name);
                const RunResult r = run_checked(device(), v, MemoryMode::pageable, rp, 0);
                INFO("scales in " << sc.in << " w " << sc.w << ": " << describe(v, l, r));
                std::printf("[split-range] %s %s in=%g w=%g: %s, max_rel_err %.3g, max_bound_ratio %.3g\n", sv.name,
                            layer, sc.in, sc.w, std::string(to_string(r.status)).c_str(), r.err.max_rel_err,
                            r.err.max_bound_ratio);
                if (r.status == Status::skip) {
                    REQUIRE((skipped_for_shape(r) || has(r.reason, "needs sm_90")));
                    continue;
                }
                if (r.status == Status::error) {  // allowed only as the range's own message
                    REQUIRE(sv.scaled);
                    REQUIRE(has(r.reason, "represents finite inputs and weights"));
                    continue;
                }
                REQUIRE(r.err.nonfinite == 0);
                REQUIRE(r.status == Status::pass);
            }
        }
    }
}

TEST_CASE("data the split variants cannot represent is an ERROR naming the range, never NaN",
          "[gpu][split-range]") {
    const Layer l = alexnet("conv2");  // every split variant runs it
    const RefProblem base = make_ref_problem(l, 1);
    RefProblem inf_in = base;
    inf_in.in[inf_in.in.size() / 2] = std::numeric_limits<float>::infinity();
    RefProblem nan_w = base;
    nan_w.w[7] = std::numeric_limits<float>::quiet_NaN();
    // max|x| max|w| K >= 2^127: 2^110 * 2^14 * 2400 (every product and sum of this data is
    // finite in double, but an output may leave fp32's range).
    const RefProblem huge = scaled(base, 0x1p110, 0x1p14);
    struct Case {
        const char* what;
        const RefProblem* rp;
        const char* names;
    };
    const Case kCases[] = {{"an inf input", &inf_in, "input out of range"},
                           {"a NaN weight", &nan_w, "weights out of range"},
                           {"max|x| max|w| K past 2^127", &huge, "data out of range"}};
    for (const auto& c : kCases) {
        for (const auto& sv : kSplits) {
            if (!sv.scaled) continue;
            const Variant& v = variant(sv.name);
            const RunResult r = run_checked(device(), v, MemoryMode::pageable, *c.rp, 0);
            INFO(c.what << ": " << describe(v, l, r));
            std::printf("[split-range] %s %s: %s %s\n", sv.name, c.what, std::string(to_string(r.status)).c_str(),
                        r.reason.c_str());
            if (r.status == Status::skip) {
                REQUIRE(has(r.reason, "needs sm_90"));
                continue;
            }
            REQUIRE(r.status == Status::error);
            REQUIRE(has(r.reason, c.names));
            REQUIRE(has(r.reason, "represents finite inputs and weights with max|x| * max|w| * K < 2^127"));
        }
    }
}
