// The sweep axes on the GPU: every value of every axis of every variant that has axes (one
// axis at a time, the others at the variant's defaults) against the CPU reference, on the odd
// shapes and on a shape large enough for stream-K's mix of whole tiles and cut ones (a value none
// of them takes, on the row-halo's odd shape); and the stream-K fix-up's determinism over repeated launches (its flags hold a launch epoch).
#include "catch.hpp"
#include "gpu_test_util.hpp"

#include "auto_choice.hpp"
#include "tuning.hpp"

#include <cstring>
#include <map>
#include <vector>

using namespace cs;
using namespace cs::gpu;
using cs::test::device;
using cs::test::make_ref_problem;
using cs::test::run_checked;

namespace {

RunResult run_with(DeviceContext& ctx, const Variant& v, const test::RefProblem& rp, Layout layout, const Config& c,
                   const RunOptions& opt) {
    test::RefProblem q = rp;
    q.problem.axes = axis_values(v, c);
    return run_checked(ctx, v, MemoryMode::pageable, q, opt, layout);
}

// A tuning file of this card with a choice for every problem, layout and class of the auto rows
// (a Hopper rung of the class), so that their path=tuned runs on the odd shapes too.
Tuning tuning_for(DeviceContext& ctx, const std::vector<test::RefProblem>& problems) {
    TuningCard card = test::device_card(ctx, "test_axes_gpu");
    const std::pair<Precision, const char*> rows[] = {{Precision::fp16, "hopper-pp-fp16"},
                                                      {Precision::bf16, "hopper-pp-bf16"},
                                                      {Precision::tf32, "hopper-pp-tf32"},
                                                      {Precision::fp32, "hopper-ws-3xfp16"}};
    for (const auto& rp : problems)
        for (Layout layout : {Layout::nhwc, Layout::nchw})
            for (const auto& [cls, name] : rows) {
                TunedChoice ch;
                ch.cls = cls, ch.shape = tuned_shape(rp.problem.layer), ch.N = rp.problem.N, ch.layout = layout;
                ch.variant = find_variant(name).variant;
                REQUIRE(ch.variant != nullptr);
                ch.kernel_ms = 0.01, ch.tried = 1;
                card.choices.push_back(ch);
            }
    return Tuning{{card}};
}

std::string describe(const Variant& v, const test::RefProblem& rp, Layout layout, const Config& c, const RunResult& r) {
    return v.name + " [" + c.str() + "] on " + rp.problem.layer.name + " N=" + std::to_string(rp.problem.N) + " " +
           std::string(to_string(layout)) + ": " + std::string(to_string(r.status)) + " " + r.reason +
           " max_rel_err=" + std::to_string(r.err.max_rel_err) + " config=" + r.config +
           (r.detail.empty() ? "" : " [plan: " + r.detail + "]");
}

}  // namespace

TEST_CASE("every axis value of every variant matches the CPU reference", "[gpu][axes]") {
    auto& ctx = device();
    std::vector<test::RefProblem> problems;
    for (const char* n : {"odd_c7_p1", "odd_s4_c3", "odd_c33_5x5"}) problems.push_back(make_ref_problem(test::odd_layer(n), 3));
    // 400 tiles of 128x128 on 132 SMs: stream-K runs 264 whole, cuts the other 136's k-slices.
    problems.push_back(make_ref_problem(test::make_layer("sk_mix", 64, 20, 20, 256, 3, 3, 1, 1), 64));
    const Tuning tuned = tuning_for(ctx, problems);  // the auto rows' path=tuned
    // Rungs of narrow range (the row-halo's 64-channel 64-filter 3x3) take none of the shapes
    // above: an axis value that passed nowhere runs again on these.
    std::vector<test::RefProblem> narrow{make_ref_problem(test::odd_layer("odd_c64_rows"), 3)};
    std::map<std::string, int> passes;  // family axis=value -> PASS count (a value may not apply to every rung)
    int dependent = 0;                  // NCHW rows of the persistent rungs (programmatic launch)
    auto run_value = [&](const Variant& v, const Axis& ax, const std::string& val,
                         const std::vector<test::RefProblem>& over) {
        Config c;
        c.set.emplace_back(ax.name, val);
        for (const auto& rp : over)
            for (Layout layout : v.layouts) {
                if (layout == Layout::nchw && rp.problem.layer.name == "sk_mix") continue;  // NHWC is enough
                RunOptions opt = test::test_options(2);
                if (v.family == "auto") opt.tuning = &tuned;
                const auto r = run_with(ctx, v, rp, layout, c, opt);
                INFO(describe(v, rp, layout, c, r));
                REQUIRE(r.status != Status::fail);
                REQUIRE(r.status != Status::error);
                if (r.status == Status::skip) {
                    REQUIRE(!r.reason.empty());
                    continue;
                }
                REQUIRE(r.err.max_rel_err <= r.threshold);
                // The persistent rungs' NCHW rows transform the input first; launch=pdl
                // makes the GEMM the transform's programmatic dependent (the check above
                // covers the early start: the producer's wait before its first load).
                if (layout == Layout::nchw && test::has(r.detail, "TMA producer warpgroup")) {
                    const bool pdl = test::has(r.config, "launch=pdl");
                    REQUIRE(pdl == test::has(r.detail, "the GEMM launched as the input transform's programmatic dependent"));
                    if (val == "pdl") REQUIRE(pdl);
                    if (val == "plain") REQUIRE(!pdl);
                    dependent += pdl ? 1 : 0;
                }
                // The plan ran what was asked ("auto" resolves to a scheduler by name).
                if (val != "auto") REQUIRE(test::has(r.config, ax.name + "=" + val));
                ++passes[v.family + " " + ax.name + "=" + val];
            }
    };
    for (const auto& v : registry())
        for (const auto& ax : v.axes)
            for (const auto& val : ax.values) run_value(v, ax, val, problems);
    for (const auto& v : registry())
        for (const auto& ax : v.axes)
            for (const auto& val : ax.values)
                if (passes[v.family + " " + ax.name + "=" + val] == 0) run_value(v, ax, val, narrow);
    CHECK(dependent > 0);
    // Each axis value of each variant runs somewhere (a value that skips everywhere is untested).
    for (const auto& v : registry())
        for (const auto& ax : v.axes)
            for (const auto& val : ax.values) {
                INFO(v.family << " " << ax.name << "=" << val << " passed on no shape and no rung");
                CHECK(passes[v.family + " " + ax.name + "=" + val] > 0);
            }
}

TEST_CASE("clusters of two: an odd count of tile rows, a filter tail, a phantom filter tile, split-K, ping-pong",
          "[gpu][axes][cluster]") {
    auto& ctx = device();
    // P = 3 * 9 * 11 = 297 pixels: 3 rows of 128, so the last cluster's rank 1 has a tile past
    // the output; M = 200: a partial last filter tile (its B halves partly zero fill).
    const auto rpb = make_ref_problem(test::make_layer("mc_odd", 96, 9, 11, 200, 3, 3, 1, 1), 3);
    // Along the filters (hopper-mca): M = 300 is 3 filter tiles of 128, padded to 2 pairs by a
    // phantom tile past M (zero-fill B, clipped stores).
    const auto rpa = make_ref_problem(test::make_layer("mca_odd", 96, 9, 11, 300, 3, 3, 1, 1), 3);
    for (const char* name : {"hopper-mc-fp16", "hopper-mc-bf16", "hopper-mc-tf32", "hopper-mca-fp16", "hopper-mca-bf16",
                             "hopper-mca-tf32"}) {
        const Variant& v = test::variant(name);
        const bool along_filters = std::strstr(name, "mca") != nullptr;
        const auto& rp = along_filters ? rpa : rpb;
        for (const char* schedule : {"cooperative", "pingpong"})
            for (const char* sched : {"data-parallel", "split-k"})
                for (Layout layout : {Layout::nhwc, Layout::nchw}) {
                    Config c;
                    c.set.emplace_back("scheduler", sched);
                    c.set.emplace_back("schedule", schedule);
                    const auto r = run_with(ctx, v, rp, layout, c, test::test_options(2));
                    INFO(describe(v, rp, layout, c, r));
                    if (r.status == Status::skip && ctx.prop().major != 9) {
                        WARN("the Hopper rungs need sm_90: " << r.reason);
                        return;
                    }
                    REQUIRE(r.status == Status::pass);
                    REQUIRE(test::has(r.config, along_filters ? "cluster=1x2" : "cluster=2"));
                    if (along_filters) REQUIRE(test::has(r.detail, "pairs of filter tiles"));
                    REQUIRE(test::has(r.config, std::string("scheduler=") + sched));
                    REQUIRE(test::has(r.config, std::string("schedule=") + schedule));
                    REQUIRE(test::has(r.detail, std::strcmp(schedule, "pingpong") == 0 ? "ping-pong" : "cooperative"));
                }
    }
}

TEST_CASE("stream-K and split-tail give the same bits on every launch, in both schedules", "[gpu][axes][streamk]") {
    auto& ctx = device();
    const auto sk = make_ref_problem(test::make_layer("sk_det", 48, 17, 19, 200, 3, 3, 1, 1), 24);
    // 14 tiles of 128x128 and 36 k-slices (C=256 in fp16): split-tail cuts each into 8 parts,
    // 7 fp32 slots fixed up per tile (the plan's detail says so).
    const auto st = make_ref_problem(test::make_layer("st_det", 256, 9, 11, 200, 3, 3, 1, 1), 8);
    for (const char* name : {"hopper-sk-fp16", "hopper-sk-tf32", "hopper-tail-fp16", "hopper-tail-tf32"}) {
        const Variant& v = test::variant(name);
        const bool tail = std::strstr(name, "tail") != nullptr;
        const auto& rp = tail ? st : sk;
        // ping-pong: each warpgroup a whole tile, its cut tiles' slots and flags its own
        for (const char* schedule : {"cooperative", "pingpong"}) {
            Config c;
            c.set.emplace_back("schedule", schedule);
            std::vector<float> first;
            for (int run = 0; run < 3; ++run) {
                const auto r = run_with(ctx, v, rp, Layout::nhwc, c, test::test_options(3, true));
                INFO(describe(v, rp, Layout::nhwc, c, r));
                if (r.status == Status::skip && ctx.prop().major != 9) {
                    WARN("the Hopper rungs need sm_90: " << r.reason);
                    return;
                }
                REQUIRE(r.status == Status::pass);
                REQUIRE(test::has(r.config, tail ? "scheduler=split-tail" : "scheduler=stream-k"));
                REQUIRE(test::has(r.config, std::string("schedule=") + schedule));
                if (tail && std::strstr(name, "fp16")) REQUIRE(test::has(r.detail, "in 8 k-parts each"));
                REQUIRE(!r.output.empty());
                if (run == 0)
                    first = r.output;
                else
                    REQUIRE(std::memcmp(first.data(), r.output.data(), first.size() * sizeof(float)) == 0);
            }
        }
    }
}

TEST_CASE("split-K summed in the kernel: fused gives the reduction kernel's bits, cluster the same bits on every "
          "launch, in both layouts and tile heights",
          "[gpu][axes][splitk]") {
    auto& ctx = device();
    // One image of a conv3-like layer (C=256, 3x3: 36 k-slices of 64 halves, 72 of 32 floats):
    // 2 x 2 tiles of 128 x 128 on 132 SMs; split-K and its fused form in 9 parts, the cluster
    // form in clusters of 8 CTAs of 4-5 (9) slices and of 16 of 2-3 (4-5); a tile height of 256 pixels (both halves of a part's partial written before its flag, two
    // accumulators per warpgroup into the cluster form's ring) and of 64 (3 x 2 tiles, each
    // warpgroup's accumulator on half the filters, placed beside the other's in the ring);
    // odd P and M.
    const auto rp = make_ref_problem(test::make_layer("fk_odd", 256, 13, 11, 200, 3, 3, 1, 1), 1);
    for (const char* name : {"hopper-ws-fp16", "hopper-ws-bf16", "hopper-ws-tf32", "hopper-ws-3xfp16"})
        for (const char* tile : {"", "m256n128k128B-s4", "m64n128k128B-s8"})
            for (Layout layout : {Layout::nhwc, Layout::nchw}) {
                const Variant& v = test::variant(name);
                // Each group of schedulers gives one set of bits: the reduction kernel's order
                // (split-k, fused), and the cluster's rank order over three launches. auto joins
                // the group it resolves to (TileSched::prefer_cluster_split): the cluster sum on
                // 128-pixel tiles (4-5 slices a part against the reduction's 4, 9 against 4 in
                // tf32) but 3xFP16's NHWC (14 against 4); the reduction kernel on 256-pixel tiles.
                // On 64-pixel tiles (6 of them) the same: 4-5 against 4, 9 against 4 in tf32,
                // 3xFP16's NHWC 14 against 6.
                const bool auto_cluster = std::strcmp(tile, "m256n128k128B-s4") != 0 &&
                                          (layout == Layout::nchw || std::strcmp(name, "hopper-ws-3xfp16") != 0);
                std::vector<std::vector<const char*>> groups{
                    {"split-k", "split-k-fused", "split-k-fused"},
                    {"split-k-cluster", "split-k-cluster", "split-k-cluster"},
                    {"split-k-cluster16", "split-k-cluster16", "split-k-cluster16"}};
                groups[auto_cluster ? 1 : 0].push_back("auto");
                for (const auto& group : groups) {
                    std::vector<float> ref;
                    for (const char* sched : group) {
                        Config c;
                        c.set.emplace_back("scheduler", sched);
                        if (*tile) c.set.emplace_back("tile", tile);
                        const auto r = run_with(ctx, v, rp, layout, c, test::test_options(3, true));
                        INFO(describe(v, rp, layout, c, r));
                        if (r.status == Status::skip && ctx.prop().major != 9) {
                            WARN("the Hopper rungs need sm_90: " << r.reason);
                            return;
                        }
                        REQUIRE(r.status == Status::pass);
                        const bool is_auto = std::strcmp(sched, "auto") == 0;
                        REQUIRE(test::has(r.config, std::string("scheduler=") +
                                                        (is_auto ? (auto_cluster ? "split-k-cluster" : "split-k") : sched)));
                        if (std::strcmp(sched, "split-k-cluster") == 0 || (is_auto && auto_cluster))
                            REQUIRE(test::has(r.detail, "over clusters of 8 CTAs"));
                        if (std::strcmp(sched, "split-k-cluster16") == 0)
                            REQUIRE(test::has(r.detail, "over clusters of 16 CTAs"));
                        REQUIRE(!r.output.empty());
                        if (ref.empty())
                            ref = r.output;
                        else
                            REQUIRE(std::memcmp(ref.data(), r.output.data(), ref.size() * sizeof(float)) == 0);
                    }
                }
            }
}
