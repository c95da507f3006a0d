// `convstudy tune`'s search without a GPU (bench/tuner.hpp): tasks, shards and budgets; the rows
// that may answer a task; the search on made-up measurements and a made-up clock; and the tuning
// file's "choices" (bench/tuning.hpp): written, read back, refused when wrong, merged.
#include "catch.hpp"
#include "test_util.hpp"

#include "error.hpp"
#include "tuner.hpp"
#include "tuning.hpp"

#include <map>
#include <set>

using namespace cs;
using namespace cs::gpu;
using cs::test::error_message;
using cs::test::hopper_prop;

namespace {

const Layer& conv(int i) { return default_layer_table().layers.at(std::size_t(i - 1)); }

const Variant& variant(const char* name) {
    const Variant* v = find_variant(name).variant;
    REQUIRE(v);
    return *v;
}

Timing timing(double med) { return Timing{med, med * 0.99, med * 1.01, med * 0.995, med * 1.005}; }

// A made-up GPU: each configuration's time (ms) by its text "<variant>[;axis=value...]"; unknown
// configurations take `other_ms`; a configuration listed in `fails` does not PASS.
struct FakeGpu {
    std::map<std::string, double> ms;
    double other_ms = 1.0;
    std::set<std::string> fails;
    std::vector<std::string> asked;
    TuneMeasurement operator()(const TuneTask&, const TuneCandidate& c) {
        const std::string set = axis_config(*c.variant, c.axes).str();
        const std::string key = c.variant->name + (set.empty() ? "" : ";" + set);
        asked.push_back(key);
        if (fails.count(key)) return {false, "FAIL: made up", {}};
        const auto it = ms.find(key);
        return {true, "", timing(it == ms.end() ? other_ms : it->second)};
    }
};

}  // namespace

TEST_CASE("tune: tasks nest N, layer, class and layout, shards deal them out, the budget follows FLOPs x count",
          "[tune]") {
    const std::vector<Layer> layers{conv(2), conv(3)};
    const auto tasks = tune_tasks(layers, {1, 32}, {Precision::fp16, Precision::tf32}, {Layout::nhwc, Layout::nchw});
    REQUIRE(tasks.size() == 16);
    CHECK(tasks[0].label() == "conv2 N=1 fp16 nhwc");
    CHECK(tasks[1].label() == "conv2 N=1 fp16 nchw");
    CHECK(tasks[2].label() == "conv2 N=1 tf32 nhwc");
    CHECK(tasks[4].label() == "conv3 N=1 fp16 nhwc");
    CHECK(tasks[8].label() == "conv2 N=32 fp16 nhwc");
    // three shards: disjoint, together every task, sizes within one
    std::multiset<std::string> seen;
    for (int k = 1; k <= 3; ++k) {
        const auto part = shard_tasks(tasks, k, 3);
        CHECK(part.size() >= 5);
        CHECK(part.size() <= 6);
        for (const auto& t : part) seen.insert(t.label());
    }
    CHECK(seen.size() == tasks.size());
    CHECK(std::set<std::string>(seen.begin(), seen.end()).size() == tasks.size());
    // weight: FLOPs x count
    Layer twice = conv(3);
    twice.count = 2;
    const TuneTask a{conv(3), 32, Precision::fp16, Layout::nhwc}, b{twice, 32, Precision::fp16, Layout::nhwc};
    CHECK(b.weight() == Approx(2 * a.weight()));
    CHECK(a.weight() == Approx(conv(3).flops(32)));
    // the running account: 90 s over weights 1, 2: the first gets 30 s; if it used 40, the second 50
    CHECK(task_budget(90, 1, 3) == Approx(30));
    CHECK(task_budget(50, 2, 2) == Approx(50));
    CHECK(task_budget(-5, 2, 2) == 0);
}

TEST_CASE("tune: the rows that may answer a task are ours, of the class, in the layout, supported", "[tune]") {
    const TuneTask t{conv(2), 128, Precision::fp16, Layout::nhwc};
    const auto rows = tune_rows(t, hopper_prop());
    REQUIRE_FALSE(rows.empty());
    std::set<std::string> names;
    for (const Variant* v : rows) {
        INFO(v->name);
        names.insert(v->name);
        CHECK_FALSE(v->library);
        CHECK(v->precision == Precision::fp16);
        CHECK(std::find(v->layouts.begin(), v->layouts.end(), Layout::nhwc) != v->layouts.end());
        CHECK_FALSE(v->supports(Problem{t.layer, t.N, t.layout, {}}, hopper_prop()));
    }
    CHECK(names.count("hopper-ws-fp16") == 1);
    CHECK(names.count("cudnn-fp16") == 0);         // a library's
    CHECK(names.count("wmma-fp16") == 0);          // NCHW only
    CHECK(names.count("hopper-ws-bf16") == 0);     // another class
    // NCHW brings the NCHW rows in
    const auto nchw = tune_rows({conv(2), 128, Precision::fp16, Layout::nchw}, hopper_prop());
    CHECK(std::any_of(nchw.begin(), nchw.end(), [](const Variant* v) { return v->name == "wmma-fp16"; }));
}

TEST_CASE("tune: every row at its rules, then the fastest row's axes, a challenger must be faster beyond noise",
          "[tune]") {
    const TuneTask t{conv(2), 128, Precision::fp16, Layout::nhwc};
    const Variant& ws = variant("hopper-ws-fp16");
    const Variant& pp = variant("hopper-pp-fp16");
    const std::vector<const Variant*> rows{&pp, &ws};
    REQUIRE_FALSE(ws.axes.empty());
    const Axis& first = ws.axes.front();
    REQUIRE(first.values.size() >= 3);
    FakeGpu gpu;
    gpu.ms = {{"hopper-pp-fp16", 0.30}, {"hopper-ws-fp16", 0.20}};
    gpu.other_ms = 0.25;  // every other configuration: slower than hopper-ws-fp16's rules
    const std::string faster = first.name + "=" + first.values[1];
    const std::string tie = first.name + "=" + first.values[2];
    gpu.ms["hopper-ws-fp16;" + faster] = 0.15;
    gpu.ms["hopper-ws-fp16;" + tie] = 0.1499;  // within the noise of 0.15: keeps the incumbent
    gpu.fails = {"hopper-ws-fp16;" + first.name + "=" + first.values[0]};
    double now = 0;
    const TuneResult r = tune_task(t, rows, {}, std::ref(gpu), [&] { return now; }, 1e9);
    REQUIRE(r.found);
    CHECK(r.complete);
    CHECK(r.best.variant == &ws);
    CHECK(axis_config(ws, r.best.axes).str() == faster);
    CHECK(r.time.med == Approx(0.15));
    // step 1 in registry order as given, then hopper-ws-fp16 (the faster row) before hopper-pp-fp16
    REQUIRE(gpu.asked.size() >= 3);
    CHECK(gpu.asked[0] == "hopper-pp-fp16");
    CHECK(gpu.asked[1] == "hopper-ws-fp16");
    CHECK(gpu.asked[2].rfind("hopper-ws-fp16;", 0) == 0);
    CHECK(r.tried == int(gpu.asked.size()));
    REQUIRE(r.failures.size() == 1);
    CHECK(r.failures[0] == "hopper-ws-fp16 [" + first.name + "=" + first.values[0] + "]: FAIL: made up");
    // each row's axes are walked around that row's best: the second axis with the first set
    if (ws.axes.size() >= 2) {
        const std::string second = ws.axes[1].name + "=";
        CHECK(std::any_of(gpu.asked.begin(), gpu.asked.end(), [&](const std::string& k) {
            return k.rfind("hopper-ws-fp16;" + faster + ";" + second, 0) == 0;
        }));
    }
}

TEST_CASE("tune: the seeds run first, a seed faster than its row's rules starts that row's descent, a seed of "
          "another row is not measured",
          "[tune]") {
    const TuneTask t{conv(2), 128, Precision::fp16, Layout::nhwc};
    const Variant& ws = variant("hopper-ws-fp16");
    const Variant& pp = variant("hopper-pp-fp16");
    const Variant& other = variant("hopper-sk-fp16");
    REQUIRE(ws.axes.size() >= 2);
    const Axis& first = ws.axes.front();
    REQUIRE(first.values.size() >= 2);
    const TuneCandidate seed{&ws, AxisValues{{{first.name, first.id(1)}}}};
    const std::string seed_key = "hopper-ws-fp16;" + first.name + "=" + first.values[1];
    FakeGpu gpu;
    gpu.ms = {{"hopper-pp-fp16", 0.30}, {"hopper-ws-fp16", 0.20}, {seed_key, 0.12}};
    gpu.other_ms = 0.25;
    double now = 0;
    const TuneResult r =
        tune_task(t, {&pp, &ws}, {seed, {&other, {}}}, std::ref(gpu), [&] { return now; }, 1e9);
    REQUIRE(r.found);
    CHECK(r.best.variant == &ws);
    CHECK(axis_config(ws, r.best.axes).str() == first.name + "=" + first.values[1]);
    CHECK(r.time.med == Approx(0.12));
    REQUIRE(gpu.asked.size() >= 4);
    CHECK(gpu.asked[0] == seed_key);
    CHECK(gpu.asked[1] == "hopper-pp-fp16");
    CHECK(gpu.asked[2] == "hopper-ws-fp16");
    CHECK(std::none_of(gpu.asked.begin(), gpu.asked.end(),
                       [](const std::string& k) { return k.rfind("hopper-sk-fp16", 0) == 0; }));
    // hopper-ws-fp16's descent walks its second axis with the seed's first axis set
    const std::string second = ws.axes[1].name + "=";
    CHECK(std::any_of(gpu.asked.begin(), gpu.asked.end(), [&](const std::string& k) {
        return k.rfind(seed_key + ";" + second, 0) == 0;
    }));
    // a seed that is slower than its row's rules leaves the rules the row's best
    FakeGpu slow = gpu;
    slow.asked.clear();
    slow.ms[seed_key] = 0.40;
    const TuneResult s = tune_task(t, {&pp, &ws}, {seed}, std::ref(slow), [&] { return now; }, 1e9);
    REQUIRE(s.found);
    CHECK(s.best.variant == &ws);
    CHECK(axis_config(ws, s.best.axes).str().empty());
    CHECK(s.time.med == Approx(0.20));
}

TEST_CASE("tune: the budget ends the search once something PASSed: the seeds always run, the rows until a PASS",
          "[tune]") {
    const TuneTask t{conv(3), 32, Precision::fp16, Layout::nhwc};
    const Variant& pp = variant("hopper-pp-fp16");
    const Variant& ws = variant("hopper-ws-fp16");
    const Variant& tm = variant("hopper-tmastore-fp16");
    const std::vector<const Variant*> rows{&pp, &ws, &tm};
    FakeGpu gpu;
    double now = 0;
    auto measure = [&](const TuneTask& task, const TuneCandidate& c) {
        now += 1;  // each measurement takes a second
        return gpu(task, c);
    };
    auto clock = [&] { return now; };
    // no budget: the first row PASSes, nothing more
    const TuneResult none = tune_task(t, rows, {}, measure, clock, 0);
    CHECK(none.tried == 1);
    CHECK(none.found);
    CHECK(none.best.variant == &pp);
    CHECK_FALSE(none.complete);
    // no budget, two seeds: both run (the answer is never slower than the heuristic's), no row
    now = 0;
    gpu.asked.clear();
    gpu.ms = {{"hopper-ws-fp16", 0.5}, {"hopper-tmastore-fp16", 0.4}};
    const TuneResult seeded = tune_task(t, rows, {{&ws, {}}, {&tm, {}}}, measure, clock, 0);
    CHECK(seeded.tried == 2);
    CHECK(gpu.asked == std::vector<std::string>{"hopper-ws-fp16", "hopper-tmastore-fp16"});
    CHECK(seeded.best.variant == &tm);
    // a budget of five measurements: the rows in the given order, then the fastest row's axes
    now = 0;
    gpu.asked.clear();
    const TuneResult some = tune_task(t, rows, {}, measure, clock, 5);
    CHECK(some.tried == 5);
    REQUIRE(gpu.asked.size() == 5);
    CHECK(gpu.asked[0] == "hopper-pp-fp16");
    CHECK(gpu.asked[1] == "hopper-ws-fp16");
    CHECK(gpu.asked[2] == "hopper-tmastore-fp16");
    CHECK(gpu.asked[3].rfind("hopper-tmastore-fp16;", 0) == 0);  // the fastest row's descent
    CHECK_FALSE(some.complete);
    // the seed and the first rows FAIL: the rows go on past the budget until one PASSes, then stop
    now = 0;
    gpu.asked.clear();
    gpu.fails = {"hopper-pp-fp16", "hopper-ws-fp16"};
    const TuneResult late = tune_task(t, rows, {{&ws, {}}}, measure, clock, 0);
    CHECK(late.found);
    CHECK(late.best.variant == &tm);
    CHECK(late.tried == 3);  // the seed, pp, tm: ws at its rules is the seed, measured once
    CHECK(late.failures.size() == 2);
    // nothing PASSes: no answer, every failure named, every row tried
    gpu.fails = {"hopper-pp-fp16", "hopper-ws-fp16", "hopper-tmastore-fp16"};
    const TuneResult failed = tune_task(t, rows, {}, measure, clock, 100);
    CHECK_FALSE(failed.found);
    CHECK(failed.failures.size() == 3);
    CHECK(failed.complete);
}

TEST_CASE("tune: rank_rows puts the ranked rows first in their order, once each, then the rest in theirs", "[tune]") {
    const Variant& pp = variant("hopper-pp-fp16");
    const Variant& ws = variant("hopper-ws-fp16");
    const Variant& tm = variant("hopper-tmastore-fp16");
    const Variant& other = variant("hopper-ws-bf16");
    const std::vector<const Variant*> rows{&pp, &ws, &tm};
    // a ranked variant that is not a row (another class) is left out; a repeated one counts once
    const auto r = rank_rows(rows, {&tm, &other, &tm, &ws});
    CHECK(r == std::vector<const Variant*>{&tm, &ws, &pp});
    CHECK(rank_rows(rows, {}) == rows);
    CHECK(rank_rows({}, {&tm}).empty());
}

namespace {

TuningCard card_with_choice() {
    TuningCard c;
    c.device = "NVIDIA H200";
    c.sms = 132;
    c.cuda_runtime = "13.0";
    c.driver = "580.159.04";
    c.source = "test";
    TunedChoice ch;
    ch.cls = Precision::fp16;
    ch.shape = tuned_shape(conv(2));
    ch.N = 128;
    ch.layout = Layout::nhwc;
    ch.variant = &variant("hopper-ws-fp16");
    const Axis& ax = ch.variant->axes.front();
    ch.axes.set.emplace_back(ax.name, ax.id(1));
    ch.kernel_ms = 0.18, ch.p10_ms = 0.179, ch.p90_ms = 0.181;
    ch.tried = 41;
    ch.complete = false;
    c.choices.push_back(ch);
    return c;
}

}  // namespace

TEST_CASE("tuning file: choices are written, read back and checked, version 1 files still read", "[tune][tuning]") {
    const TuningCard c = card_with_choice();
    const std::string text = tuning_json(c);
    CHECK(text.find("\"version\": 2") != std::string::npos);
    const TuningCard back = parse_tuning_card(text, "t.json");
    REQUIRE(back.choices.size() == 1);
    const TunedChoice& ch = back.choices[0];
    CHECK(ch.variant == c.choices[0].variant);
    CHECK(ch.axes.set == c.choices[0].axes.set);
    CHECK(ch.shape == c.choices[0].shape);
    CHECK(ch.kernel_ms == Approx(0.18));
    CHECK(ch.tried == 41);
    CHECK_FALSE(ch.complete);
    CHECK(tuning_json(back) == text);
    CHECK(back.choice(c.choices[0]) == &back.choices[0]);
    // a card without choices is written as version 1, as the committed files are
    TuningCard plain = c;
    plain.choices.clear();
    CHECK(tuning_json(plain).find("\"version\": 1") != std::string::npos);

    auto refused = [&](const std::string& from, const std::string& to) {
        std::string t = text;
        const auto at = t.find(from);
        REQUIRE(at != std::string::npos);
        t.replace(at, from.size(), to);
        return error_message([&] { parse_tuning_card(t, "t.json"); });
    };
    CHECK(refused("\"variant\":\"hopper-ws-fp16\"", "\"variant\":\"hopper-zz-fp16\"")
              .find("tuning file t.json: choice 0: field 'variant' is 'hopper-zz-fp16'") != std::string::npos);
    CHECK(refused("\"variant\":\"hopper-ws-fp16\"", "\"variant\":\"hopper-ws-bf16\"")
              .find("variant 'hopper-ws-bf16' is not one of ours in class fp16") != std::string::npos);
    CHECK(refused("\"variant\":\"hopper-ws-fp16\"", "\"variant\":\"cudnn-fp16\"")
              .find("not one of ours in class fp16") != std::string::npos);
    CHECK(refused("\"class\":\"fp16\"", "\"class\":\"fp8\"").find("field 'class' is 'fp8'") != std::string::npos);
    CHECK(refused("\"version\": 2", "\"version\": 1").find("field 'choices' needs version 2") != std::string::npos);
    CHECK(refused("\"tried\":41", "\"tried\":0").find("field 'tried'") != std::string::npos);
    const Axis& ax = c.choices[0].variant->axes.front();
    CHECK(refused("\"" + ax.values[1] + "\"", "\"no-such-value\"").find("choice 0: ") != std::string::npos);
    CHECK(refused("\"p10_ms\":0.179", "\"p10_ms\":0.2").find("p10_ms <= kernel_ms <= p90_ms") != std::string::npos);
    // the measuring build's revision: optional, written where known, read back, checked
    CHECK(text.find("git_rev") == std::string::npos);
    CHECK(back.choices[0].git_rev.empty());
    TuningCard rev = c;
    rev.choices[0].git_rev = "5dbf66ee2a84-dirty";
    const std::string rev_text = tuning_json(rev);
    CHECK(rev_text.find("\"git_rev\":\"5dbf66ee2a84-dirty\"") != std::string::npos);
    CHECK(parse_tuning_card(rev_text, "t.json").choices[0].git_rev == "5dbf66ee2a84-dirty");
    CHECK(error_message([&] {
              std::string t = rev_text;
              t.replace(t.find("5dbf66ee2a84-dirty"), 18, "a b");
              parse_tuning_card(t, "t.json");
          }).find("field 'git_rev' must be a revision") != std::string::npos);
}

TEST_CASE("tune merge: one card's files joined, the faster of two choices kept (or the later), another card refused",
          "[tune][tuning]") {
    TuningCard a = card_with_choice(), b = card_with_choice();
    a.origin = "a.json", b.origin = "b.json";
    b.choices[0].kernel_ms = 0.17, b.choices[0].p10_ms = 0.169, b.choices[0].p90_ms = 0.171;
    TunedChoice other = b.choices[0];
    other.N = 32;
    b.choices.push_back(other);
    std::vector<std::string> notes;
    const TuningCard m = merge_tuning_cards({a, b}, notes);
    REQUIRE(m.choices.size() == 2);
    CHECK(m.choices[0].kernel_ms == Approx(0.17));
    CHECK(m.choices[1].N == 32);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].find("in two files: kept the faster, hopper-ws-fp16 of b.json") != std::string::npos);
    // the sources: one named once where the files share it (a tune's shards), else each in order
    CHECK(m.source == a.source);
    b.source = "convstudy tune: table resnet50";
    CHECK(merge_tuning_cards({a, b}, notes).source == a.source + "; convstudy tune: table resnet50");
    notes.clear();
    // another CUDA or driver version only warns, once per file
    b.cuda_runtime = "13.1", b.driver = "590.1";
    notes.clear();
    merge_tuning_cards({a, b}, notes);
    REQUIRE(notes.size() == 2);
    CHECK(notes[0] == "b.json ran CUDA 13.1, driver 590.1; kept 13.0, 580.159.04");
    // a re-tune replaces: the later file's choice stays though the earlier one's median was lower
    b.cuda_runtime = a.cuda_runtime, b.driver = a.driver;
    b.choices[0].kernel_ms = 0.19, b.choices[0].p10_ms = 0.189, b.choices[0].p90_ms = 0.191;
    b.choices[0].variant = &variant("hopper-tail-fp16");
    notes.clear();
    const TuningCard kept = merge_tuning_cards({a, b}, notes);
    CHECK(kept.choices[0].variant == a.choices[0].variant);  // the faster, by default
    notes.clear();
    const TuningCard later = merge_tuning_cards({a, b}, notes, true);
    REQUIRE(later.choices.size() == 2);
    CHECK(later.choices[0].variant == b.choices[0].variant);
    CHECK(later.choices[0].kernel_ms == Approx(0.19));
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].find("in two files: kept the later, hopper-tail-fp16 of b.json") != std::string::npos);
    TuningCard h100 = card_with_choice();
    h100.device = "NVIDIA H100 80GB HBM3", h100.origin = "h100.json";
    const std::string e = error_message([&] { merge_tuning_cards({a, h100}, notes); });
    CHECK(e.find("h100.json was tuned on NVIDIA H100 80GB HBM3") != std::string::npos);
    CHECK(e.find("tuning files of one card only") != std::string::npos);
}

TEST_CASE("tune: every task answered and saved as it finishes, a killed tune resumes where it stopped, shards add up",
          "[tune]") {
    const std::vector<Layer> layers{conv(3), conv(4)};
    const auto tasks = tune_tasks(layers, {1, 32}, {Precision::fp16}, {Layout::nhwc});
    REQUIRE(tasks.size() == 4);
    FakeGpu gpu;
    double now = 0;
    std::vector<std::size_t> saved;  // choices in the card at each save
    std::vector<std::string> said;
    TuneHooks h;
    h.rows = [](const TuneTask&) { return std::vector<const Variant*>{&variant("hopper-ws-fp16")}; };
    h.measure = [&](const TuneTask& t, const TuneCandidate& c) {
        now += 1;
        return gpu(t, c);
    };
    h.clock = [&] { return now; };
    h.save = [&](const TuningCard& c) {
        saved.push_back(c.choices.size());
        if (saved.size() == 2) throw Error("killed");  // the process dies after the second task's save
    };
    h.say = [&](const std::string& line) { said.push_back(line); };
    h.git_rev = "abc1234";
    TuningCard card;
    CHECK_THROWS_AS(tune_all(tasks, card, 1000, h), Error);
    REQUIRE(card.choices.size() == 2);  // what the file held when it died
    CHECK(card.choices[0].git_rev == "abc1234");  // each choice names the build that measured it
    CHECK(card.choices[0].N == 1);
    CHECK(card.choices[0].shape == tuned_shape(conv(3)));
    CHECK(card.choices[1].shape == tuned_shape(conv(4)));
    // resumed: the two finished tasks are not measured again
    h.save = [&](const TuningCard& c) { saved.push_back(c.choices.size()); };
    gpu.asked.clear();
    said.clear();
    CHECK(tune_all(tasks, card, 1000, h) == 0);
    REQUIRE(card.choices.size() == 4);
    CHECK(saved.back() == 4);
    REQUIRE(said.size() == 4);
    CHECK(said[0] == "[1/4] conv3 N=1 fp16 nhwc: tuned already");
    CHECK(said[1] == "[2/4] conv4 N=1 fp16 nhwc: tuned already");
    CHECK(said[2].rfind("[3/4] conv3 N=32 fp16 nhwc: hopper-ws-fp16", 0) == 0);
    // the line says where the task's time went: its data (none here) and a second a configuration
    CHECK(said[2].find(": data 0.0 s, 1.00 s a configuration)") != std::string::npos);
    const std::size_t asked_for_two = gpu.asked.size();
    // once more: nothing left to do, nothing measured
    gpu.asked.clear();
    CHECK(tune_all(tasks, card, 1000, h) == 0);
    CHECK(gpu.asked.empty());
    CHECK(asked_for_two > 0);
    // two shards tuned apart and merged hold what one tune holds, each task once
    TuningCard one, two;
    one.device = two.device = "NVIDIA H200", one.sms = two.sms = 132;
    tune_all(shard_tasks(tasks, 1, 2), one, 1000, h);
    tune_all(shard_tasks(tasks, 2, 2), two, 1000, h);
    CHECK(one.choices.size() == 2);
    CHECK(two.choices.size() == 2);
    std::vector<std::string> notes;
    const TuningCard merged = merge_tuning_cards({one, two}, notes);
    CHECK(notes.empty());
    REQUIRE(merged.choices.size() == 4);
    for (const auto& t : tasks) {
        TunedChoice key;
        key.cls = t.cls, key.shape = tuned_shape(t.layer), key.N = t.N, key.layout = t.layout;
        CHECK(merged.choice(key));
    }
    // a task where nothing PASSes is counted and named
    gpu.fails = {"hopper-ws-fp16"};
    TuningCard none;
    said.clear();
    CHECK(tune_all({tasks[0]}, none, 1000, h) == 1);
    CHECK(none.choices.empty());
    REQUIRE(said.size() == 1);
    CHECK(said[0] == "[1/1] conv3 N=1 fp16 nhwc: nothing PASSed of 1 tried (hopper-ws-fp16: FAIL: made up)");
}

TEST_CASE("tune and tune merge on the command line: bad input exit 2, merge joins one card's files", "[tune][cli]") {
    cs::test::TempDir tmp;
    CHECK(cs::test::cli("tune --classes fp9 -o " + (tmp.path / "t.json").string()).code == 2);
    CHECK(cs::test::cli("tune --table nosuchtable -o " + (tmp.path / "t.json").string()).code == 2);
    CHECK(cs::test::cli("tune --layers conv9 -o " + (tmp.path / "t.json").string()).code == 2);
    CHECK(cs::test::cli("tune --repeats 5 -o " + (tmp.path / "t.json").string()).code == 2);
    const auto no_out = cs::test::cli("tune");
    CHECK(no_out.code == 2);
    CHECK(no_out.out.find("-o/--output FILE is required") != std::string::npos);
    // a file that is not a tuning file: named before any device is asked for
    cs::test::spit(tmp.path / "bad.json", "{\"format\": \"x\"}");
    const auto bad = cs::test::cli("tune -o " + (tmp.path / "bad.json").string());
    CHECK(bad.code == 2);
    CHECK(bad.out.find("bad.json") != std::string::npos);

    TuningCard a = card_with_choice(), b = card_with_choice();
    b.choices[0].N = 32;
    cs::test::spit(tmp.path / "a.json", tuning_json(a));
    cs::test::spit(tmp.path / "b.json", tuning_json(b));
    const auto out = tmp.path / "ab.json";
    const auto m = cs::test::cli("tune merge " + (tmp.path / "a.json").string() + " " + (tmp.path / "b.json").string() +
                                 " -o " + out.string());
    CHECK(m.code == 0);
    const TuningCard joined = read_tuning(out.string()).cards.front();
    CHECK(joined.choices.size() == 2);
    // --later-wins: the later file's choice of a key though slower (a re-tune replacing an old one)
    TuningCard slower = card_with_choice();
    slower.choices[0].kernel_ms = 0.19, slower.choices[0].p10_ms = 0.189, slower.choices[0].p90_ms = 0.191;
    cs::test::spit(tmp.path / "slower.json", tuning_json(slower));
    const auto later = tmp.path / "later.json";
    const auto lw = cs::test::cli("tune merge " + (tmp.path / "a.json").string() + " " +
                                  (tmp.path / "slower.json").string() + " --later-wins -o " + later.string());
    CHECK(lw.code == 0);
    CHECK(lw.out.find("kept the later") != std::string::npos);
    const TuningCard replaced = read_tuning(later.string()).cards.front();
    REQUIRE(replaced.choices.size() == 1);
    CHECK(replaced.choices[0].kernel_ms == Approx(0.19));
    TuningCard h100 = card_with_choice();
    h100.device = "NVIDIA H100 80GB HBM3";
    cs::test::spit(tmp.path / "h100.json", tuning_json(h100));
    const auto refused = cs::test::cli("tune merge " + (tmp.path / "a.json").string() + " " +
                                       (tmp.path / "h100.json").string() + " -o " + (tmp.path / "x.json").string());
    CHECK(refused.code == 2);
    CHECK(refused.out.find("tuning files of one card only") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(tmp.path / "x.json"));
}

TEST_CASE("tuning file: the choice for a problem is this card's, of its class, shape and layout, at the nearest N "
          "within a factor of 4",
          "[tune][tuning]") {
    TuningCard c = card_with_choice();  // fp16, conv2, N=128, nhwc
    TunedChoice n32 = c.choices[0];
    n32.N = 32;
    n32.kernel_ms = 0.05, n32.p10_ms = 0.049, n32.p90_ms = 0.051;
    c.choices.push_back(n32);
    const Tuning t{{c}};
    const TunedShape conv2 = tuned_shape(conv(2));
    auto n_of = [&](std::int64_t n) {
        const TunedChoice* ch = t.choice("NVIDIA H200", 132, Precision::fp16, conv2, Layout::nhwc, n);
        return ch ? ch->N : std::int64_t(0);
    };
    CHECK(n_of(128) == 128);
    CHECK(n_of(32) == 32);
    CHECK(n_of(64) == 32);    // 2x either way: the smaller N
    CHECK(n_of(100) == 128);
    CHECK(n_of(512) == 128);  // 4x: within reach
    CHECK(n_of(513) == 0);
    CHECK(n_of(8) == 32);
    CHECK(n_of(7) == 0);
    CHECK_FALSE(t.choice("NVIDIA H200", 132, Precision::bf16, conv2, Layout::nhwc, 128));  // another class
    CHECK_FALSE(t.choice("NVIDIA H200", 132, Precision::fp16, conv2, Layout::nchw, 128));  // another layout
    CHECK_FALSE(t.choice("NVIDIA H200", 132, Precision::fp16, tuned_shape(conv(3)), Layout::nhwc, 128));
    CHECK_FALSE(t.choice("NVIDIA H100 80GB HBM3", 132, Precision::fp16, conv2, Layout::nhwc, 128));  // another GPU
    CHECK_FALSE(t.choice("NVIDIA H200", 114, Precision::fp16, conv2, Layout::nhwc, 128));  // other SM count
    CHECK(t.choices_of_other_cards_only("NVIDIA H100 80GB HBM3", 132));
    CHECK_FALSE(t.choices_of_other_cards_only("NVIDIA H200", 132));
    CHECK_FALSE(Tuning{}.choices_of_other_cards_only("NVIDIA H200", 132));
}

TEST_CASE("the committed tuning files name only shapes of the built-in tables", "[tune][tuning]") {
    // a tuned entry for a shape no built-in table has would be tuned to a shape no one runs by name
    std::vector<TunedShape> shapes;
    for (const LayerTable& t : builtin_layer_tables())
        for (const Layer& l : t.layers) shapes.push_back(tuned_shape(l));
    auto known = [&](const TunedShape& s) { return std::find(shapes.begin(), shapes.end(), s) != shapes.end(); };
    std::size_t checked = 0;
    for (const TuningCard& c : builtin_tuning().cards) {
        INFO(c.origin);
        for (const TunedEntry& e : c.entries) {
            CHECK(known(e.shape));
            ++checked;
        }
        for (const TunedChoice& ch : c.choices) {
            CHECK(known(ch.shape));
            ++checked;
        }
    }
    CHECK(checked > 0);
}
