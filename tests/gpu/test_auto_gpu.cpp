// The auto-<class> rows on the GPU (kernels/auto/auto_family.cpp): the heuristic's choice runs and
// PASSes, says so in its config and detail; a tuned choice of this card runs instead where there
// is one, and path=heuristic ignores it; a tuned choice of another card is ignored.
#include "gpu_test_util.hpp"

#include "auto_choice.hpp"
#include "tuning.hpp"

using namespace cs;
using namespace cs::gpu;

namespace {

RunResult run_auto(DeviceContext& ctx, const char* name, const Layer& l, std::int64_t N, const HostData& data,
                   RunOptions opt, const Tuning* tuning, const AxisValues& axes = {}) {
    const Variant* v = find_variant(name).variant;
    REQUIRE(v != nullptr);
    opt.tuning = tuning;
    return run_variant(ctx, *v, MemoryMode::pageable, Problem{l, N, Layout::nhwc, axes}, data, opt);
}

}  // namespace

TEST_CASE("on the GPU, auto-* runs the heuristic's choice, or this card's tuned one, and PASSes", "[gpu][auto]") {
    DeviceContext& ctx = test::device();
    const Layer& conv3 = default_layer_table().layers.at(2);
    const test::RefProblem rp = test::make_ref_problem(conv3, 2);
    const HostData data{rp.in.data(), rp.w.data(), rp.golden.data(), rp.bound.data()};
    const RunOptions opt = test::test_options(3);
    const Tuning none;

    for (const char* name : {"auto-fp16", "auto-bf16", "auto-tf32", "auto-fp32"}) {
        INFO(name);
        const RunResult r = run_auto(ctx, name, conv3, 2, data, opt, &none);
        INFO(r.reason << " " << r.detail);
        CHECK(r.status == Status::pass);
        CHECK(r.config.rfind("path=heuristic;row=hopper-", 0) == 0);
        CHECK(r.detail.find("heuristic: predicted") != std::string::npos);
    }

    // this card's tuned choice runs first; path=heuristic ignores it
    const Variant* pp = find_variant("hopper-pp-fp16").variant;
    REQUIRE(pp != nullptr);
    TuningCard card = test::device_card(ctx, "test card");
    TunedChoice ch;
    ch.cls = Precision::fp16, ch.shape = tuned_shape(conv3), ch.N = 2, ch.layout = Layout::nhwc, ch.variant = pp;
    ch.kernel_ms = 0.01, ch.tried = 1;
    card.choices.push_back(ch);
    const Tuning tuned{{card}};
    const RunResult t = run_auto(ctx, "auto-fp16", conv3, 2, data, opt, &tuned);
    INFO(t.reason << " " << t.detail);
    CHECK(t.status == Status::pass);
    CHECK(t.config.rfind("path=tuned;row=hopper-pp-fp16", 0) == 0);
    const Variant* autofp16 = find_variant("auto-fp16").variant;
    const RunResult h = run_auto(ctx, "auto-fp16", conv3, 2, data, opt, &tuned,
                                 axis_values(*autofp16, Config{{{"path", "heuristic"}}}));
    CHECK(h.status == Status::pass);
    CHECK(h.config.rfind("path=heuristic", 0) == 0);

    // another card's file: ignored with a warning in the detail
    TuningCard other = card;
    other.device = "another GPU";
    const Tuning others{{other}};
    const RunResult o = run_auto(ctx, "auto-fp16", conv3, 2, data, opt, &others);
    CHECK(o.status == Status::pass);
    CHECK(o.config.rfind("path=heuristic", 0) == 0);
    CHECK(o.detail.find("choices are all of other cards") != std::string::npos);
}
