// The single-kernel family, beyond what test_variants_gpu.cpp checks for every
// variant: coalesced / uncoalesced twins on planes with several outputs per thread, a
// filter above the 48 KB shared-memory default (opt-in) and above the device's opt-in
// limit (SKIP), and the filter loaders agreeing with each other on every loader path.
#include "catch.hpp"
#include "conv_shape.hpp"
#include "gpu_test_util.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace cs;
using namespace cs::gpu;
using cs::test::device;
using cs::test::make_ref_problem;
using cs::test::run_checked;
using cs::test::make_layer;
using cs::test::odd_layer;
using cs::test::alexnet;

namespace {

// A pointer, not a reference: gcc 13 warns (-Wdangling-reference) about a reference
// returned from a call that was given a temporary string.
const Variant* variant(const std::string& name) {
    const Variant* v = find_variant(name).variant;
    INFO("variant " << name);
    REQUIRE(v != nullptr);
    return v;
}

// The coalesced (default) variants of the family; each has a `-uncoalesced` twin.
std::vector<const Variant*> coalesced_family() {
    std::vector<const Variant*> out;
    for (const auto& v : registry())
        if (v.family == "single-kernel" && !v.name.ends_with("-uncoalesced")) out.push_back(&v);
    return out;
}

double max_abs(const std::vector<float>& x) {
    double m = 0;
    for (float v : x) m = std::max(m, double(std::fabs(v)));
    return m;
}

// max |a - b| / max|golden|: the same measure as the pass threshold.
double rel_diff(const std::vector<float>& a, const std::vector<float>& b, double max_golden) {
    REQUIRE(a.size() == b.size());
    double m = 0;
    for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - double(b[i])));
    return m / max_golden;
}

std::string describe(const Variant& v, const Layer& l, const RunResult& r) {
    return v.name + " on " + l.name + " (" + l.shape_string() + "): " + std::string(to_string(r.status)) + " " +
           r.reason + " [" + r.detail + "] max_rel_err=" + std::to_string(r.err.max_rel_err);
}

void require_pass(const Variant& v, const Layer& l, const RunResult& r) {
    INFO(describe(v, l, r));
    REQUIRE(r.status == Status::pass);
    REQUIRE(r.err.nonfinite == 0);
    REQUIRE(r.err.max_rel_err <= r.threshold);
}

}  // namespace

TEST_CASE("coalesced and uncoalesced twins both pass and agree where a thread computes several outputs",
          "[gpu][single-kernel][coalescing]") {
    auto& ctx = device();
    struct Case {
        Layer layer;
        int t;  // outputs per thread in each dimension
    };
    const std::vector<Case> cases = {
        {alexnet("conv1"), 2},         // 55x55 -> 28x28 threads, the study's Table 8
        {odd_layer("odd_tile2"), 2},   // 37x34, odd edges in both dimensions
        {odd_layer("odd_tile3"), 3},   // 70x70 -> 24x24 threads
    };
    const auto family = coalesced_family();
    REQUIRE(family.size() >= 5);
    for (const auto& c : cases) {
        const PlaneTiling tl = plane_tiling(c.layer.E(), c.layer.F(), ctx.prop().maxThreadsPerBlock);
        INFO(c.layer.name << ": " << tl.t << " outputs per thread per dimension");
        REQUIRE(tl.t == c.t);  // otherwise this case no longer tests what it says
        const auto rp = make_ref_problem(c.layer, 1);
        const double gmax = max_abs(rp.golden);
        for (const Variant* v : family) {
            const Variant& twin = *variant(v->name + "-uncoalesced");
            const auto a = run_checked(ctx, *v, MemoryMode::pageable, rp, 0, true);
            const auto b = run_checked(ctx, twin, MemoryMode::pageable, rp, 0, true);
            require_pass(*v, c.layer, a);
            require_pass(twin, c.layer, b);
            INFO(describe(*v, c.layer, a) << " | " << describe(twin, c.layer, b));
            CHECK(a.detail.find("(coalesced)") != std::string::npos);
            CHECK(b.detail.find("(uncoalesced)") != std::string::npos);
            // Each output is the same sum in the same order under both mappings.
            REQUIRE(rel_diff(a.output, b.output, gmax) <= threshold(v->precision));
        }
    }
}

TEST_CASE("on planes that fit a block the uncoalesced twin runs and gives the same result",
          "[gpu][single-kernel][coalescing]") {
    auto& ctx = device();
    const Layer l = odd_layer("odd_c33_5x5");  // 11x13 outputs: t = 1
    REQUIRE(plane_tiling(l.E(), l.F(), ctx.prop().maxThreadsPerBlock).t == 1);
    const auto rp = make_ref_problem(l, 2);
    const double gmax = max_abs(rp.golden);
    for (const Variant* v : coalesced_family()) {
        const Variant& twin = *variant(v->name + "-uncoalesced");
        const auto a = run_checked(ctx, *v, MemoryMode::pageable, rp, 0, true);
        const auto b = run_checked(ctx, twin, MemoryMode::pageable, rp, 0, true);
        require_pass(*v, l, a);
        require_pass(twin, l, b);
        CHECK(b.detail.find("mappings identical") != std::string::npos);
        REQUIRE(rel_diff(a.output, b.output, gmax) <= threshold(v->precision));
    }
}

TEST_CASE("a filter above 48 KB of shared memory runs with the opt-in limit, above the opt-in limit it is skipped",
          "[gpu][single-kernel][shared-memory]") {
    auto& ctx = device();
    const cudaDeviceProp& prop = ctx.prop();
    std::vector<const Variant*> staged;  // the variants that stage the filter in shared memory
    for (const auto& v : registry())
        if (v.family == "single-kernel" && v.name.starts_with("shared-weights")) staged.push_back(&v);
    REQUIRE(staged.size() == 6);

    SECTION("52 KB filter: above the default, within the opt-in limit of current GPUs") {
        const Layer l = make_layer("filter_52k", 520, 7, 7, 3, 5, 5, 1, 2);  // K = 13000 floats
        REQUIRE(l.K() * 4 > std::int64_t(prop.sharedMemPerBlock));
        const auto rp = make_ref_problem(l, 2);
        for (const Variant* v : staged) {
            const auto r = run_checked(ctx, *v, MemoryMode::pageable, rp, 1);
            INFO(describe(*v, l, r));
            REQUIRE((r.status == Status::pass || r.status == Status::skip));
            if (r.status == Status::skip) {
                REQUIRE(r.reason.find("shared memory") != std::string::npos);
            } else {
                REQUIRE(r.err.max_rel_err <= r.threshold);
                CHECK(r.detail.find("(opt-in)") != std::string::npos);
            }
            // Any Hopper or Ampere GPU opts in to far more than 53 KB: there it must run.
            if (prop.sharedMemPerBlockOptin >= 64 * 1024) REQUIRE(r.status == Status::pass);
        }
    }

    SECTION("a filter larger than the opt-in limit: SKIP with the reason, from supports()") {
        const int C = int(prop.sharedMemPerBlockOptin / (4 * 9)) + 1;  // K*4 just above the limit
        const Layer l = make_layer("filter_over_optin", C, 3, 3, 2, 3, 3, 1, 1);
        REQUIRE(l.K() * 4 > std::int64_t(prop.sharedMemPerBlockOptin));
        const auto rp = make_ref_problem(l, 1);
        for (const Variant* v : staged) {
            const auto why = v->supports(rp.problem, prop);
            REQUIRE(why.has_value());
            CHECK(why->find("shared memory") != std::string::npos);
            const auto r = run_checked(ctx, *v, MemoryMode::pageable, rp, 1);
            INFO(describe(*v, l, r));
            REQUIRE(r.status == Status::skip);
            REQUIRE(r.reason.find("shared memory") != std::string::npos);
        }
        // The register-sum variant needs no shared memory and still runs it.
        const Variant& rla = *variant("rla2m");
        REQUIRE_FALSE(rla.supports(rp.problem, prop).has_value());
        require_pass(rla, l, run_checked(ctx, rla, MemoryMode::pageable, rp, 0));
    }
}

TEST_CASE("one loader, many loaders and shared sums agree on every loader path", "[gpu][single-kernel][loaders]") {
    auto& ctx = device();
    struct Case {
        Layer layer;
        const char* many_path;  // what shared-weights-many-loaders must choose
    };
    const char* per_element = "1 element each";
    const char* per_tap = "1 tap x C channels each";
    const std::vector<Case> cases = {
        {alexnet("conv1"), per_element},       // K = 363 <= 784 threads
        {alexnet("conv3"), per_tap},           // K = 2304 > 169 threads; 9 taps
        {odd_layer("odd_1x1"), per_element},   // K = 5 <= 42 threads
        {odd_layer("odd_c33_5x5"), per_tap},   // K = 825 > 143 threads; 25 taps
        // 3x3 outputs: 9 threads for 49 taps, so each thread copies several taps.
        {make_layer("odd_taps_gt_threads", 2, 9, 9, 3, 7, 7, 1, 0), per_tap},
    };
    const Variant& one = *variant("rswbdl2m");
    const Variant& many = *variant("rswmtla2m");
    const Variant& swso = *variant("swso");
    for (const auto& c : cases) {
        const auto rp = make_ref_problem(c.layer, 2);
        const double gmax = max_abs(rp.golden);
        const auto a = run_checked(ctx, one, MemoryMode::pageable, rp, 0, true);
        const auto b = run_checked(ctx, many, MemoryMode::pageable, rp, 0, true);
        const auto s = run_checked(ctx, swso, MemoryMode::pageable, rp, 0, true);
        require_pass(one, c.layer, a);
        require_pass(many, c.layer, b);
        require_pass(swso, c.layer, s);
        INFO(describe(many, c.layer, b));
        REQUIRE(b.detail.find(c.many_path) != std::string::npos);
        CHECK(a.detail.find("staged by 1 thread") != std::string::npos);
        REQUIRE(rel_diff(a.output, b.output, gmax) <= threshold(Precision::fp32));
        REQUIRE(rel_diff(a.output, s.output, gmax) <= threshold(Precision::fp32));
    }
}
