// `convstudy tune`'s search on the GPU (bench/tuner.hpp with the harness's measurement): one small
// task, seeded by the heuristic's choice, answered by one of our rows of its class that PASSes,
// saved, and skipped when resumed.
#include "gpu_test_util.hpp"

#include "auto_choice.hpp"
#include "tuner.hpp"
#include "tuning.hpp"

#include <chrono>

using namespace cs;
using namespace cs::gpu;

TEST_CASE("on the GPU, tune answers a task with a row of ours that PASSes, in its budget, and resumes", "[gpu][tune]") {
    DeviceContext* ctx = &test::device();
    const Layer& conv3 = default_layer_table().layers.at(2);
    const test::RefProblem rp = test::make_ref_problem(conv3, 1);
    const HostData data{rp.in.data(), rp.w.data(), rp.golden.data(), rp.bound.data()};
    RunOptions opt = test::test_options(10);
    opt.warmup = 1;
    const TuneTask task{conv3, 1, Precision::fp16, Layout::nhwc};
    const auto clock = [] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    };
    TuningCard card;
    card.device = ctx->prop().name, card.sms = ctx->prop().multiProcessorCount;
    int saves = 0;
    std::vector<std::string> said;
    TuneHooks h;
    h.rows = [&](const TuneTask& t) { return tune_rows(t, ctx->prop()); };
    // the heuristic's first choice seeds the search, as cli/tune.cpp seeds it
    const auto picks = heuristic_picks(Precision::fp16, Problem{conv3, 1, Layout::nhwc, {}}, ctx->prop());
    REQUIRE_FALSE(picks.empty());
    h.seeds = [&](const TuneTask&) { return std::vector<TuneCandidate>{{picks.front().variant, picks.front().axes}}; };
    h.measure = harness_measure(*ctx, data, opt);
    h.clock = clock;
    h.save = [&](const TuningCard&) { ++saves; };
    h.say = [&](const std::string& line) { said.push_back(line); };
    const auto rows = tune_rows(task, ctx->prop());
    REQUIRE(rows.size() >= 2);
    const double t0 = clock();
    CHECK(tune_all({task}, card, 4.0, h) == 0);
    const double took = clock() - t0;
    REQUIRE(card.choices.size() == 1);
    const TunedChoice& ch = card.choices[0];
    INFO(said.front());
    CHECK(saves == 1);
    CHECK(ch.variant->precision == Precision::fp16);
    CHECK_FALSE(ch.variant->library);
    CHECK(ch.kernel_ms > 0);
    CHECK(ch.p10_ms <= ch.kernel_ms);
    CHECK(ch.kernel_ms <= ch.p90_ms);
    CHECK(ch.tried >= int(rows.size()) + 1);  // the seed and every row at its rules
    // every row at its rules always runs; past that the 4 s budget ends the search
    CHECK(took < 4.0 + 10.0);
    // the answer runs again and PASSes
    const RunResult again = run_variant(*ctx, *ch.variant, MemoryMode::pageable,
                                        Problem{conv3, 1, Layout::nhwc, ch.axes}, data, opt);
    CHECK(again.status == Status::pass);
    // the card round-trips through the file format, and a resumed tune measures nothing
    const TuningCard back = parse_tuning_card(tuning_json(card), "t.json");
    REQUIRE(back.choices.size() == 1);
    CHECK(back.choices[0].variant == ch.variant);
    said.clear();
    TuningCard resumed = back;
    CHECK(tune_all({task}, resumed, 4.0, h) == 0);
    CHECK(saves == 1);
    REQUIRE(said.size() == 1);
    CHECK(said[0] == "[1/1] conv3 N=1 fp16 nhwc: tuned already");
}
