// The auto-<class> rungs' choice without a GPU (bench/auto_choice.hpp, kernels/hopper/ws_model.hpp):
// on a generated grid of shapes no one tuned for, the heuristic gives a runnable, supported
// configuration of the class for every shape, in both layouts, at N = 1 to 128, on an sm_90
// device description and on another GPU; the model behaves as a model should (split-K where the
// tiles leave SMs idle, never faster than the sustained MMA rate, more work never cheaper); the
// tuned path takes this card's choice, warns about other cards and versions, falls back where the
// choice cannot run; and the heuristic's and the model's sources hold no layer's name or shape.
#include "catch.hpp"
#include "measured_rows.hpp"
#include "test_util.hpp"

#include "auto_choice.hpp"
#include "csv_table.hpp"
#include "layer.hpp"
#include "tuning.hpp"
#include "variant.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace cs;
using namespace cs::gpu;
using cs::test::h200_prop;
using cs::test::hopper_prop;
using cs::test::column;
using cs::test::make_layer;
using cs::test::measured_problem;
using cs::test::problem;

namespace {

// Shapes drawn from ranges, not from any network: channels 1-1024, sizes 1-160, filters 1-11
// (odd and even), strides 1-4, any padding below the filter, filters 1-1024.
std::vector<Layer> generated_shapes(int count, unsigned seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    std::vector<Layer> out;
    while (int(out.size()) < count) {
        const int R = pick(1, 11), S = pick(1, 3) == 1 ? pick(1, 11) : R;
        const int stride = pick(1, 4), pad = pick(0, (std::min(R, S) - 1));
        const int H = pick(std::max(1, R - 2 * pad), 160), W = pick(std::max(1, S - 2 * pad), 160);
        Layer l = make_layer("generated", pick(1, 1024), H, W, pick(1, 1024), R, S, stride, pad);
        if (l.E() < 1 || l.F() < 1) continue;
        out.push_back(l);
    }
    return out;
}

const std::vector<Precision> kClasses = {Precision::fp16, Precision::bf16, Precision::tf32, Precision::fp32};

// The first pick is a row of the class that is ours, declares the layout and supports the
// problem with the pick's axis values, which are the row's.
void check_runnable(const AutoPick& a, Precision cls, const Problem& p, const cudaDeviceProp& prop) {
    REQUIRE(a.variant != nullptr);
    INFO(pick_label(a));
    CHECK(a.variant->precision == cls);
    CHECK_FALSE(a.variant->library);
    CHECK_FALSE(a.variant->delegates);
    CHECK(std::find(a.variant->layouts.begin(), a.variant->layouts.end(), p.layout) != a.variant->layouts.end());
    Problem q = p;
    q.axes = a.axes;
    CHECK_FALSE(a.variant->supports(q, prop));
    CHECK_FALSE(axes_error(*a.variant, a.axes));
}

// An auto-* row of a committed sweep (its config: path=...;row=ROW;<ROW's config>) repriced by
// ROW's model at the configuration it ran; no estimate where ROW has no model.
struct PricedAuto {
    std::string path;
    const Variant* row = nullptr;
    std::optional<Estimate> e;
};
PricedAuto price_auto_row(const cs::cli::CsvTable& t, const std::vector<std::string>& r, const cudaDeviceProp& prop) {
    Config cfg = Config::parse(r[column(t, "config")]);
    const auto row = std::find_if(cfg.set.begin(), cfg.set.end(), [](const auto& kv) { return kv.first == "row"; });
    REQUIRE(row != cfg.set.end());
    PricedAuto out{cfg.get("path"), find_variant(row->second).variant, std::nullopt};
    REQUIRE(out.row != nullptr);
    cfg.set.erase(cfg.set.begin(), std::next(row));  // path=...;row=... lead the row's own
    if (!out.row->estimate) return out;
    Problem p = measured_problem(t, r);
    p.axes = axis_values(*out.row, cfg);
    out.e = out.row->estimate(p, prop);
    return out;
}

// A committed sweep of our rows, each repriced by its row's model at the configuration it ran
// (the CSV's config): per group of rows (`key`), the measured fastest and the measured time of
// the model's cheapest (the model's regret is their ratio); per row |log(predicted/measured)|.
// `which` picks the rows (their variants); every one picked must have a model.
struct Repriced {
    struct Group {
        double best = INFINITY, predicted = INFINITY, measured_of_predicted = 0;
        std::string chosen;  // the model's cheapest configuration
    };
    std::map<std::string, Group> groups;
    std::vector<double> log_ratio;
};
using RowKey = std::function<std::string(const cs::cli::CsvTable&, const std::vector<std::string>&, const Variant&)>;
Repriced reprice(const std::string& file, const RowKey& key,
                 const std::function<bool(const Variant&)>& which = [](const Variant&) { return true; }) {
    const cudaDeviceProp prop = h200_prop();
    const auto t = cs::cli::read_csv_table(std::string(CS_SOURCE_DIR) + "/" + file);
    auto col = [&](const char* n) { return column(t, n); };
    Repriced out;
    for (const auto& r : t.rows) {
        if (r[col("status")] != "PASS") continue;
        const Variant* v = find_variant(r[col("variant")]).variant;
        REQUIRE(v != nullptr);
        if (!which(*v)) continue;
        REQUIRE(v->estimate);
        const Config cfg = Config::parse(r[col("config")]);
        REQUIRE(cfg.str() == r[col("config")]);  // every pair NAME=VALUE
        Problem p = measured_problem(t, r);
        p.axes = axis_values(*v, cfg);
        const auto e = v->estimate(p, prop);
        INFO(file << ": " << v->name << " " << r[col("layer")] << " N=" << p.N << " " << r[col("config")]);
        REQUIRE(e);  // every configuration the plan ran, the model prices
        const double ms = std::stod(r[col("kernel_ms")]);
        out.log_ratio.push_back(std::abs(std::log(e->ms / ms)));
        auto& g = out.groups[key(t, r, *v)];
        g.best = std::min(g.best, ms);
        if (e->ms < g.predicted) g.predicted = e->ms, g.measured_of_predicted = ms, g.chosen = r[col("config")];
    }
    return out;
}

}  // namespace

TEST_CASE("auto: the heuristic gives a runnable, supported choice of the class for every generated shape",
          "[auto][heuristic]") {
    const cudaDeviceProp prop = hopper_prop();
    const auto shapes = generated_shapes(120, 20261129u);
    int priced = 0, total = 0, tied = 0;
    for (const Layer& l : shapes)
        for (const std::int64_t N : {1, 8, 32, 128})
            for (const Layout layout : all_layouts())
                for (const Precision cls : kClasses) {
                    INFO(l.shape_string() << " N=" << N << " " << to_string(layout) << " " << to_string(cls));
                    const Problem p = problem(l, N, layout);
                    const auto picks = heuristic_picks(cls, p, prop);
                    REQUIRE_FALSE(picks.empty());
                    check_runnable(picks.front(), cls, p, prop);
                    ++total;
                    if (std::isfinite(picks.front().ms)) {
                        ++priced;
                        CHECK(picks.front().ms > 0);
                        for (std::size_t i = 1; i < picks.size(); ++i) {
                            if (!std::isfinite(picks[i].ms)) continue;
                            CHECK(picks[i - 1].ms <= picks[i].ms);
                            // configurations the DRAM floor ties: the one furthest under it first
                            if (picks[i - 1].ms == picks[i].ms) {
                                ++tied;
                                CHECK(picks[i - 1].compute_ms <= picks[i].compute_ms);
                                CHECK(picks[i].compute_ms <= picks[i].ms);
                            }
                        }
                    }
                }
    // On sm_90 the persistent rungs price nearly every shape (the rest: their TMA limits).
    CHECK(priced * 10 >= total * 9);
    CHECK(tied > 0);  // the grid has DRAM-bound shapes whose configurations the floor ties
}

TEST_CASE("auto: on a GPU without a cost model the heuristic takes the class's last supported rung",
          "[auto][heuristic]") {
    cudaDeviceProp ampere = hopper_prop();
    ampere.major = 8;
    const Layer l = make_layer("generated", 64, 56, 56, 64, 3, 3, 1, 1);
    for (const Precision cls : kClasses)
        for (const Layout layout : all_layouts()) {
            const Problem p = problem(l, 8, layout);
            const auto picks = heuristic_picks(cls, p, ampere);
            INFO(to_string(cls) << " " << to_string(layout));
            if (picks.empty()) {  // only where no row of the class declares the layout and runs here
                for (const Variant& v : registry())
                    if (!v.library && !v.delegates && v.precision == cls &&
                        std::find(v.layouts.begin(), v.layouts.end(), layout) != v.layouts.end())
                        CHECK(v.supports(p, ampere).has_value());
                continue;
            }
            check_runnable(picks.front(), cls, p, ampere);
            CHECK(std::isnan(picks.front().ms));
            CHECK_HAS(picks.front().how, "no cost model");
        }
}

TEST_CASE("auto: the model splits K where the tiles leave SMs idle, and never beats the MMA rate", "[auto][model]") {
    const cudaDeviceProp prop = hopper_prop();
    // a deep layer with a small output: at N=1 a few tiles for 132 SMs
    const Layer deep = make_layer("generated", 512, 7, 7, 512, 3, 3, 1, 1);
    const auto n1 = heuristic_picks(Precision::fp16, problem(deep, 1, Layout::nhwc), prop);
    REQUIRE_FALSE(n1.empty());
    INFO(n1.front().how);
    CHECK(n1.front().how.find("split-k") != std::string::npos);
    const auto n128 = heuristic_picks(Precision::fp16, problem(deep, 128, Layout::nhwc), prop);
    REQUIRE_FALSE(n128.empty());
    CHECK(n128.front().how.find("split-k x") == std::string::npos);
    // more images never cost less at the heuristic's best (one configuration alone may: a
    // stream-K grid shares fewer tiles among more CTAs at N=1)
    double previous = 0;
    for (const std::int64_t N : {1, 8, 32, 128, 512}) {
        const auto picks = heuristic_picks(Precision::fp16, problem(deep, N, Layout::nhwc), prop);
        REQUIRE_FALSE(picks.empty());
        CHECK(picks.front().ms >= previous);
        previous = picks.front().ms;
    }
    // the prediction never exceeds the sustained fp16 MMA rate (about 770 TFLOP/s on 132 SMs)
    const Layer big = make_layer("generated", 256, 56, 56, 256, 3, 3, 1, 1);
    const auto b = heuristic_picks(Precision::fp16, problem(big, 128, Layout::nhwc), prop);
    REQUIRE_FALSE(b.empty());
    const double tflops = big.flops(128) / (b.front().ms * 1e-3) / 1e12;
    INFO(b.front().how << " " << tflops << " TFLOP/s");
    CHECK(tflops < 800);
    CHECK(tflops > 300);  // a large GEMM-like layer is priced near the rate, not far below
    // tf32 runs half the rate of fp16 on the same shape
    const auto t = heuristic_picks(Precision::tf32, problem(big, 128, Layout::nhwc), prop);
    REQUIRE_FALSE(t.empty());
    CHECK(t.front().ms > 1.5 * b.front().ms);
}

namespace {

TuningCard card_with(const std::string& device, int sms, const std::string& variant, const Layer& l, std::int64_t N,
                     const AxisValues& axes = {}) {
    TuningCard c;
    c.device = device;
    c.sms = sms;
    c.cuda_runtime = "13.0";
    c.driver = "13.0";
    c.origin = "test card";
    TunedChoice ch;
    ch.cls = Precision::fp16;
    ch.shape = tuned_shape(l);
    ch.N = N;
    ch.layout = Layout::nhwc;
    ch.variant = find_variant(variant).variant;
    ch.axes = axes;
    ch.kernel_ms = 0.05;
    ch.tried = 7;
    c.choices.push_back(ch);
    return c;
}

}  // namespace

TEST_CASE("auto: the tuned path takes this card's choice, warns on other cards and versions, falls back",
          "[auto][tuned]") {
    cudaDeviceProp prop = hopper_prop();
    std::snprintf(prop.name, sizeof prop.name, "%s", "NVIDIA H200");
    const Layer l = make_layer("generated", 160, 40, 40, 320, 3, 3, 1, 1);
    const RuntimeVersions here{"13.0", "13.0"};
    const Problem p = problem(l, 64, Layout::nhwc);

    SECTION("this card's choice first, the heuristic's after; N=64 takes N=32 within 4x") {
        const Tuning t{{card_with("NVIDIA H200", 132, "hopper-pp-fp16", l, 32)}};
        const AutoDecision d = auto_decide(Precision::fp16, p, prop, t, std::nullopt, here);
        REQUIRE(d.picks.size() > 1);
        CHECK(d.picks.front().path == AutoPath::tuned);
        CHECK(d.picks.front().variant->name == "hopper-pp-fp16");
        CHECK_HAS(d.picks.front().how, "tuned at N=32: ");  // no revision recorded: none said
        CHECK(d.picks[1].path == AutoPath::heuristic);
        CHECK(d.notes.empty());
        // a choice that records the build that measured it names it
        TuningCard with_rev = card_with("NVIDIA H200", 132, "hopper-pp-fp16", l, 32);
        with_rev.choices[0].git_rev = "5dbf66ee2a84";
        const AutoDecision r = auto_decide(Precision::fp16, p, prop, Tuning{{with_rev}}, std::nullopt, here);
        CHECK_HAS(r.picks.front().how, "tuned at N=32 by 5dbf66ee2a84: ");
        // path=heuristic ignores the file; path=tuned takes only the choice
        const AutoDecision h = auto_decide(Precision::fp16, p, prop, t, AutoPath::heuristic, here);
        CHECK(h.picks.front().path == AutoPath::heuristic);
        const AutoDecision only = auto_decide(Precision::fp16, p, prop, t, AutoPath::tuned, here);
        CHECK(only.picks.size() == 1);
        // N=1 is beyond 4x of 32: heuristic only, and path=tuned gets nothing and says why
        const AutoDecision far = auto_decide(Precision::fp16, problem(l, 1, Layout::nhwc), prop, t, std::nullopt, here);
        CHECK(far.picks.front().path == AutoPath::heuristic);
        const AutoDecision none = auto_decide(Precision::fp16, problem(l, 1, Layout::nhwc), prop, t, AutoPath::tuned, here);
        CHECK(none.picks.empty());
        REQUIRE(none.notes.size() == 1);
        CHECK_HAS(none.notes.front(), "no tuned choice");
    }
    SECTION("a file of other cards only is ignored with a warning") {
        const Tuning t{{card_with("NVIDIA H100 80GB HBM3", 132, "hopper-pp-fp16", l, 64)}};
        const AutoDecision d = auto_decide(Precision::fp16, p, prop, t, std::nullopt, here);
        REQUIRE_FALSE(d.picks.empty());
        CHECK(d.picks.front().path == AutoPath::heuristic);
        REQUIRE(d.notes.size() == 1);
        CHECK_HAS(d.notes.front(), "warning: the tuning file's choices are all of other cards");
        // the same name with another SM count is another card
        const Tuning fewer{{card_with("NVIDIA H200", 114, "hopper-pp-fp16", l, 64)}};
        CHECK(auto_decide(Precision::fp16, p, prop, fewer, std::nullopt, here).picks.front().path == AutoPath::heuristic);
    }
    SECTION("other CUDA or driver versions only warn") {
        const Tuning t{{card_with("NVIDIA H200", 132, "hopper-pp-fp16", l, 64)}};
        const AutoDecision d = auto_decide(Precision::fp16, p, prop, t, std::nullopt, {"13.1", "13.1"});
        CHECK(d.picks.front().path == AutoPath::tuned);
        REQUIRE(d.notes.size() == 1);
        CHECK_HAS(d.notes.front(), "warning: the tuning file test card was made under CUDA 13.0");
    }
    SECTION("a choice whose row does not support the problem falls back to the heuristic and says so") {
        // a card of the same name and SM count but another compute capability: every Hopper row
        // refuses it
        cudaDeviceProp other = prop;
        other.major = 8;
        const Tuning t{{card_with("NVIDIA H200", 132, "hopper-pp-fp16", l, 64)}};
        const AutoDecision d = auto_decide(Precision::fp16, p, other, t, std::nullopt, here);
        REQUIRE(d.notes.size() == 1);
        CHECK_HAS(d.notes.front(), "does not run here");
        CHECK_HAS(d.notes.front(), "the heuristic's instead");
        for (const AutoPick& a : d.picks) CHECK(a.path == AutoPath::heuristic);
    }
}

TEST_CASE("auto: the heuristic's and the model's sources hold no layer's name or shape", "[auto][heuristic]") {
    // Every number in their code (comments and strings aside) other than 0, 1 and 2 is a named
    // constexpr constant, and no network's or layer's name appears.
    for (const char* file : {"bench/auto_choice.cpp", "bench/auto_choice.hpp", "kernels/hopper/ws_model.cpp"}) {
        INFO(file);
        std::ifstream f(std::string(CS_SOURCE_DIR) + "/" + file);
        REQUIRE(f);
        std::ostringstream all;
        all << f.rdbuf();
        // comments and string literals out
        const std::string code = std::regex_replace(
            std::regex_replace(all.str(), std::regex(R"(//[^\n]*)"), ""), std::regex(R"("([^"\\]|\\.)*")"), "\"\"");
        std::istringstream lines(code);
        std::string line;
        int n = 0;
        while (std::getline(lines, line)) {
            ++n;
            INFO("line " << n << ": " << line);
            for (const char* name : {"alexnet", "vgg", "resnet", "conv1", "conv2", "conv3", "conv4", "conv5"})
                CHECK(line.find(name) == std::string::npos);
            if (line.find("constexpr") != std::string::npos) continue;
            const std::regex number(R"((^|[^A-Za-z0-9_.])([0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?)[uUlLfF]*)");
            for (auto it = std::sregex_iterator(line.begin(), line.end(), number); it != std::sregex_iterator(); ++it) {
                const std::string lit = (*it)[2];
                const double value = std::stod(lit);
                INFO(lit);
                CHECK((value == 0 || value == 1 || value == 2));
            }
        }
    }
}

TEST_CASE("auto: the model against the committed H200 measurements of the persistent rungs", "[auto][model]") {
    // results/h200/ab_typed_core/persistent.after1.csv.gz: the 26 persistent rows on AlexNet's
    // layers at N=1, 32 and 128 in both layouts, each at its rung's own configuration (the CSV's
    // config). For each (layer, N, layout, class) the model's cheapest of the measured
    // configurations against the measured fastest (its regret), and the model's time against the
    // measurement. The bounds are the model's as committed (ws_model.cpp); a change that makes it
    // worse fails here.
    auto [groups, log_ratio] =
        reprice("results/h200/ab_typed_core/persistent.after1.csv.gz",
                [](const cs::cli::CsvTable& t, const std::vector<std::string>& r, const Variant& v) {
                    return r[column(t, "layer")] + " N=" + r[column(t, "N")] + " " + r[column(t, "layout")] + " " +
                           std::string(to_string(v.precision));
                });
    REQUIRE(log_ratio.size() >= 700);
    std::vector<double> regret;
    for (const auto& [k, g] : groups) regret.push_back(g.measured_of_predicted / g.best);
    std::sort(regret.begin(), regret.end());
    std::sort(log_ratio.begin(), log_ratio.end());
    INFO("regret: median " << regret[regret.size() / 2] << ", p90 " << regret[regret.size() * 9 / 10] << ", max "
                           << regret.back() << "; |log(predicted/measured)| median " << log_ratio[log_ratio.size() / 2]);
    CHECK(regret.size() == 120);
    CHECK(regret[regret.size() / 2] <= 1.01);
    CHECK(regret[regret.size() * 9 / 10] <= 1.06);
    CHECK(regret.back() <= 1.30);
    CHECK(log_ratio[log_ratio.size() / 2] <= std::log(1.2));  // half the rows within 20%
}

TEST_CASE("auto: the model against the committed network sweeps, shapes it was not fitted to", "[auto][model]") {
    // results/h200/networks/: the auto-<class> rows of vgg16 and resnet50 at N=32, NHWC (the
    // sweeps of plans/networks.json), each at the heuristic's choice (the CSV's config:
    // path=...;row=ROW;<ROW's config>), repriced here against its measured kernel_ms. The model
    // was fitted to AlexNet (the test above); these are its error on networks. The bounds are
    // the model's on these files as committed; a change that makes it worse fails here. They
    // moved with the files (the stem now packed, the 64-filter tile, resnet50's last layers) and
    // with the model: since the packing kernel is priced at its own rate (it was the worst row,
    // the stem at 3.15x), the worst are the multicast rung on a 1x1 layer of few k-slices and the
    // stem packed in tf32. Since the launch and the prologue are paid on top of the DRAM floor
    // (ws_model.cpp), 90% of the rows are within 1.23x (they were within 1.41x: ResNet's 1x1
    // layers at the floor, priced without them). Since the im2col loads of A are priced at their
    // own rate (kIm2colBytesPerClk), the worst row is 1.71x (it was 1.74x). Since stream-K's cut
    // slices load at the scattered rate and a one-wave grid's MMAs at the clock's headroom, half
    // the rows are within 1.070x (1.079x) and 90% within 1.198x (1.222x). Since the ring's first
    // loads are paid by the grid's share of the SMs (kPrologueFillUs), 90% within 1.167x.
    const cudaDeviceProp prop = h200_prop();
    std::vector<double> log_ratio;
    for (const char* file : {"auto_vgg16_n32.csv.gz", "auto_resnet50_n32.csv.gz"}) {
        const auto t = cs::cli::read_csv_table(std::string(CS_SOURCE_DIR) + "/results/h200/networks/" + file);
        auto col = [&](const char* n) { return column(t, n); };
        for (const auto& r : t.rows) {
            if (r[col("status")] != "PASS" || r[col("variant")].rfind("auto-", 0) != 0) continue;
            const PricedAuto a = price_auto_row(t, r, prop);
            INFO(file << " " << r[col("layer")] << " " << r[col("config")]);
            REQUIRE(a.row->estimate);
            REQUIRE(a.e);
            log_ratio.push_back(std::abs(std::log(a.e->ms / std::stod(r[col("kernel_ms")]))));
        }
    }
    REQUIRE(log_ratio.size() >= 96);
    std::sort(log_ratio.begin(), log_ratio.end());
    const double median = std::exp(log_ratio[log_ratio.size() / 2]), p90 = std::exp(log_ratio[log_ratio.size() * 9 / 10]);
    INFO("rows " << log_ratio.size() << "; predicted/measured off by at most x" << median << " for half, x" << p90
                 << " for 90%, x" << std::exp(log_ratio.back()) << " for all");
    CHECK(median <= 1.070);
    CHECK(p90 <= 1.167);
    CHECK(std::exp(log_ratio.back()) <= 1.71);
}

TEST_CASE("auto: the model takes the measured schedulers' fastest where every tile is cut or a wave is partial",
          "[auto][model]") {
    // results/h200/networks/sk_l2_profile.csv.gz: the TMA-store rung on one tile (m128n128) under
    // stream-K, split-tail and data-parallel, in one process, on ResNet's l4_proj, l4_1x1a and
    // l3_3x3 at N=32 in tf32 and fp16 (52 to 208 tiles on 132 SMs). Data-parallel was fastest on
    // l4_proj and l3_3x3 and split-tail on l4_1x1a in both classes; the model had taken stream-K
    // on two groups, at up to 1.38x the fastest. The model's cheapest configuration of each group
    // is now the fastest on five and within 1.13x on the sixth. Measured again at b03eae4, where
    // split-tail no longer cuts l4_proj and l3_3x3 over several rounds (tile_scheduler.cuh,
    // tail_parts): split-tail within 1.06x data-parallel there, and 1% ahead on l4_proj in tf32.
    auto [groups, log_ratio] = reprice("results/h200/networks/sk_l2_profile.csv.gz",
                                       [](const cs::cli::CsvTable& t, const std::vector<std::string>& r,
                                          const Variant& v) { return r[column(t, "layer")] + " " + v.name; },
                                       [](const Variant& v) { return v.family == "hopper"; });
    REQUIRE(groups.size() == 6);
    int fastest = 0;
    for (const auto& [k, g] : groups) {
        INFO(k << ": the model's choice " << g.chosen << " measured " << g.measured_of_predicted / g.best
                << "x the fastest");
        CHECK(g.measured_of_predicted / g.best <= 1.14);
        fastest += g.measured_of_predicted == g.best;
    }
    CHECK(fastest >= 5);
}

TEST_CASE("auto: the model takes the measured fastest of the deep layers' schedulers and tiles", "[auto][model]") {
    // The TMA-store rungs under data-parallel, split-tail and stream-K on m128n128 and m128n256
    // (results/h200/networks/deep_layers_*.csv.gz: ResNet's l4_3x3 and l4_1x1a at N=128, VGG's
    // conv5_1-3 at N=32), split-tail's parts over one round and over several (split_tail_turn_*,
    // split_tail_rounds_*), and AlexNet's conv5 at N=32 on the wide tiles in one round of parts
    // (results/h200/chain/conv5_n32_tiles.csv.gz), each group (layer, N, class) timed in one
    // process. The model's cheapest of each group's measured configurations is the measured
    // fastest in every group, though its times there are off (data-parallel and split-tail
    // priced over their time, stream-K under it): a change of the model that loses one fails.
    auto key = [](const cs::cli::CsvTable& t, const std::vector<std::string>& r, const Variant& v) {
        return r[column(t, "layer")] + " N=" + r[column(t, "N")] + " " + std::string(to_string(v.precision));
    };
    auto ours = [](const Variant& v) { return v.family == "hopper"; };
    int groups = 0;
    for (const char* file :
         {"results/h200/networks/deep_layers_resnet50.csv.gz", "results/h200/networks/deep_layers_vgg16.csv.gz",
          "results/h200/networks/split_tail_turn_resnet50.csv.gz", "results/h200/networks/split_tail_turn_alexnet.csv.gz",
          "results/h200/networks/split_tail_rounds_alexnet.csv.gz", "results/h200/networks/split_tail_rounds_vgg16.csv.gz",
          "results/h200/chain/conv5_n32_tiles.csv.gz"}) {
        for (const auto& [k, g] : reprice(file, key, ours).groups) {
            INFO(file << " " << k << ": the model chose " << g.chosen << ", measured " << g.measured_of_predicted
                      << " ms, the fastest " << g.best << " ms");
            CHECK(g.measured_of_predicted == g.best);
            ++groups;
        }
    }
    CHECK(groups == 18);
}

TEST_CASE("auto: the model against the N=1 scheduler grid, where split-K across a cluster had won the model and "
          "lost the GPU",
          "[auto][model]") {
    // results/h200/networks/n1_schedulers_resnet50.csv.gz (plans/n1-schedulers.json):
    // hopper-tmastore-fp16 under each tile scheduler at four tiles on seven ResNet 1x1 layers at
    // N=1, NHWC. For each layer the model's cheapest of the measured configurations against the
    // measured fastest (its regret). Before the in-kernel split-K's reduction was priced
    // (ws_model.cpp: kSplitReduceUs, kSplitReduceBytesPerClk, fitted here) the model chose
    // split-K across a cluster on every layer, at up to 2.2x the fastest's time. The bound is the
    // model's as committed: the worst is l4_1x1a_b1, fused split-K at 1.16x data-parallel's time.
    const auto groups = reprice("results/h200/networks/n1_schedulers_resnet50.csv.gz",
                                [](const cs::cli::CsvTable& t, const std::vector<std::string>& r, const Variant&) {
                                    return r[column(t, "layer")];
                                }).groups;
    REQUIRE(groups.size() == 7);
    double worst = 0;
    std::ostringstream choices;  // every layer's, reported with the check below
    for (const auto& [layer, g] : groups) {
        choices << layer << ": the model chose " << g.chosen << ", measured " << g.measured_of_predicted
                << " ms, the fastest " << g.best << " ms\n";
        worst = std::max(worst, g.measured_of_predicted / g.best);
    }
    INFO(choices.str());
    CHECK(worst <= 1.17);
}

TEST_CASE("auto: the model of hopper-wgmma (cp.async, a CTA a tile) against its committed H200 rows", "[auto][model]") {
    // results/h200/sweep_all_variants.csv.gz: hopper-wgmma-fp16/bf16/tf32 on AlexNet's layers at
    // N=1, 32 and 128 in both layouts, each at its default tile (the CSV's config), which the
    // model's two constants of that rung were fitted to (ws_model.cpp: kCpAsyncBytesPerClk,
    // kCpAsyncLatencyClk; with the first wave's start and the idle SMs' faster copies fitted at
    // N=1, the geometric mean 1.158 -> 1.141). The bounds are the model's as committed; a change
    // that makes it worse fails here.
    const auto rows = reprice("results/h200/sweep_all_variants.csv.gz",
                              [](const cs::cli::CsvTable& t, const std::vector<std::string>& r, const Variant&) {
                                  return r[column(t, "layer")] + " N=" + r[column(t, "N")] + " " + r[column(t, "layout")];
                              },
                              [](const Variant& v) { return v.name.rfind("hopper-wgmma-", 0) == 0; })
                          .log_ratio;
    REQUIRE(rows.size() == 90);
    double sum = 0, worst = 0;
    for (double x : rows) sum += x, worst = std::max(worst, x);
    INFO("predicted/measured off by x" << std::exp(sum / double(rows.size())) << " (geometric mean), x"
                                       << std::exp(worst) << " at worst");
    CHECK(std::exp(sum / double(rows.size())) <= 1.142);
    CHECK(std::exp(worst) <= 1.73);
}

TEST_CASE("auto: the model's choice between the tuned and the heuristic configuration, timed in one process",
          "[auto][model]") {
    // results/h200/networks/tuned_*.csv.gz (plans/tuned-*.json): per layer, N and class, auto-*'s
    // tuned choice and the heuristic's (as the heuristic then chose) timed side by side in one
    // process. Each pair repriced by today's model: where it prefers the other configuration than
    // the measured faster one, the pair's regret is their ratio; summed over the layers (counts
    // weighted) it is the time the model's choice between the two would lose. Before the packing
    // kernel was priced at its own rate and rung 1's turnover between waves (ws_model.cpp), the model
    // kept ResNet's stem on the packed path, 2.0-2.2x the measured faster, and lost 2.40 ms of 45.5
    // (62 pairs more than 3% slower); since, 1.32 ms (58 pairs); with a cluster's coupling at each
    // k-slice priced (kClusterSliceClk), 0.80 ms (30 pairs); with stream-K's fix-up handshake
    // (kStreamKFixupClk), 0.43 ms (12 pairs); with the N=1 refit of the persistent prologue and of
    // rung 1's start (n1_small_tiles.csv.gz), 0.33 ms. The bounds are the model's on these files as
    // committed, so that a change that makes it worse fails here.
    const cudaDeviceProp prop = h200_prop();
    struct Side {
        double ms = 0, predicted = 0, compute = 0;
        int count = 1;
        bool before(const Side& o) const {  // in the heuristic's order (a tie: this one)
            return !cheaper(o.predicted, o.compute, predicted, compute);
        }
    };
    std::map<std::string, std::map<std::string, Side>> pairs;  // table layer N class -> path -> side
    for (const auto& entry : std::filesystem::directory_iterator(std::string(CS_SOURCE_DIR) + "/results/h200/networks")) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("tuned_", 0) != 0) continue;
        const auto t = cs::cli::read_csv_table(entry.path().string());
        auto col = [&](const char* n) { return column(t, n); };
        for (const auto& r : t.rows) {
            if (r[col("status")] != "PASS" || r[col("variant")].rfind("auto-", 0) != 0) continue;
            const PricedAuto a = price_auto_row(t, r, prop);
            if (!a.row->estimate) continue;  // a tuned row the model does not price (none in these files)
            INFO(name << " " << r[col("layer")] << " " << r[col("config")]);
            REQUIRE(a.e);
            pairs[r[col("table")] + " " + r[col("layer")] + " N=" + r[col("N")] + " " + r[col("anchor_class")]][a.path] =
                Side{std::stod(r[col("kernel_ms")]), a.e->ms, a.e->compute_ms, std::stoi(r[col("count")])};
        }
    }
    double lost = 0, faster = 0;
    int both = 0, wrong = 0;
    for (const auto& [key, sides] : pairs) {
        if (sides.size() != 2) continue;
        const Side &a = sides.at("tuned"), &b = sides.at("heuristic");
        ++both;
        const Side& chosen = a.before(b) ? a : b;
        const double best = std::min(a.ms, b.ms);
        faster += best * a.count;
        lost += (chosen.ms - best) * a.count;
        if (chosen.ms > best * 1.03) ++wrong;
        INFO(key << ": tuned " << a.ms << " ms (predicted " << a.predicted << "), heuristic " << b.ms << " ("
                  << b.predicted << ")");
        CHECK(chosen.ms <= 1.5 * best);
    }
    INFO(both << " pairs; the model's choice loses " << lost << " ms of " << faster << " (the faster's sum), " << wrong
              << " pairs more than 3% slower than the faster");
    REQUIRE(both >= 100);
    CHECK(lost / faster <= 0.0074);
    CHECK(wrong <= 12);
}

TEST_CASE("auto: the model against the small-tile grids at N=1 and 32, persistent and rung 1 side by side",
          "[auto][model]") {
    // results/h200/networks/n1_small_tiles.csv.gz (plans/n1-small-tiles.json): ResNet's thirteen
    // 1x1 layers at N=1, NHWC, fp16: hopper-tmastore under data-parallel, split-tail and split-K
    // across a cluster at m128n64, m64n128 and m64n64, and rung 1 (hopper-wgmma, m128n64), in one
    // process. Per layer the model's cheapest of the measured configurations against the measured
    // fastest. With the persistent prologue all fixed (4 us) the model took rung 1 or split-tail
    // on nine layers, the sum of its choices 1.094x the fastest's, at worst 1.21x; since the
    // ring's first loads are paid by the grid's share of the SMs (kPrologueFillUs) and rung 1's
    // first wave its start (kCpAsyncStartClk, kCpAsyncIdleGain), 1.022x, at worst 1.18x (rung 1 on
    // l1_1x1b, 1 k-slice on 100 CTAs, still priced under its time). The bounds are the model's as
    // committed.
    auto layer_key = [](const cs::cli::CsvTable& t, const std::vector<std::string>& r, const Variant&) {
        return r[column(t, "layer")];
    };
    auto ours = [](const Variant& v) { return v.family == "hopper"; };
    const auto n1 = reprice("results/h200/networks/n1_small_tiles.csv.gz", layer_key, ours).groups;
    REQUIRE(n1.size() == 13);
    double worst = 0, chosen = 0, best = 0;
    std::ostringstream choices;  // every layer's, reported with the checks below
    for (const auto& [layer, g] : n1) {
        choices << layer << ": the model chose " << g.chosen << ", measured " << g.measured_of_predicted
                << " ms, the fastest " << g.best << " ms\n";
        worst = std::max(worst, g.measured_of_predicted / g.best);
        chosen += g.measured_of_predicted, best += g.best;
    }
    INFO(choices.str());
    INFO("N=1: the model's choices sum to " << chosen / best << "x the fastest's, at worst " << worst << "x");
    CHECK(chosen / best <= 1.023);
    CHECK(worst <= 1.182);
    // results/h200/networks/n32_small_tiles.csv.gz: four of the layers at N=32 on m128n128, m64n128
    // and m64n64 (data-parallel), where the 64 x 64 tile ran 1.3-2.1x the fastest: the model
    // takes the fastest on every layer.
    const auto n32 = reprice("results/h200/networks/n32_small_tiles.csv.gz", layer_key, ours).groups;
    REQUIRE(n32.size() == 4);
    for (const auto& [layer, g] : n32) {
        INFO(layer << " N=32: the model chose " << g.chosen << ", measured " << g.measured_of_predicted
                   << " ms, the fastest " << g.best << " ms");
        CHECK(g.measured_of_predicted == g.best);
    }
}
