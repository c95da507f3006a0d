// `convstudy tune` and `convstudy tune merge` (tune.hpp).
#include "tune.hpp"

#include "atomic_file.hpp"
#include "auto_choice.hpp"
#include "error.hpp"
#include "join.hpp"
#include "shard.hpp"
#include "tuner.hpp"
#include "tuning.hpp"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>

namespace cs::cli {

namespace fs = std::filesystem;
using namespace detail;

CLI::App* add_tune_command(CLI::App& app, TuneArgs& a) {
    auto* t = app.add_subcommand(
        "tune", "find each layer's fastest configuration of our rows and their axes on this GPU, per N, class and "
                "layout, into a tuning file (resumed where it stops; --shard K/N and `tune merge` spread it)");
    t->add_option("--table", a.table.path, "the layer table: a built-in name (alexnet, vgg16, resnet50) or a JSON file");
    t->add_option("--layers", a.layers, "layers of the table, comma separated (default: all)")->delimiter(',');
    t->add_option("--batch", a.batches, "batch sizes, comma separated")->delimiter(',')->expected(1, -1);
    t->add_option("--classes", a.classes, "precision classes, comma separated")->delimiter(',')->expected(1, -1);
    t->add_option("--layout", a.layouts, "layouts, comma separated (nhwc, nchw)")->delimiter(',')->expected(1, -1);
    t->add_option("--budget", a.budget_s,
                  "seconds of search over all the tasks, split by FLOPs x count (each task measures the "
                  "heuristic's three cheapest configurations, whatever its share)")
        ->check(CLI::PositiveNumber);
    t->add_option("-o,--output", a.output, "the tuning file (JSON; an existing one of this card is resumed)");
    t->add_option("--shard", a.shard, "K/N: tune every N-th task from the K-th (join the files with tune merge)");
    t->add_option("--warmup", a.warmup, "untimed runs before timing")->check(CLI::Range(0, 1000));
    t->add_option("--repeats", a.repeats, "timed repeats per configuration (the median and spread; at least 10)")
        ->check(CLI::Range(10, 100000));
    t->add_option("--seed", a.seed, "generator seed of the inputs");
    t->add_option("--samples", a.samples, "sampled check: output elements compared")->check(CLI::Range(16, 1 << 24));
    t->add_option("--source", a.source, "the file's \"source\" text (default: the command line's settings)");
    a.merge = t->add_subcommand("merge", "join tuning files of one card (the shards of a tune): the faster of two "
                                         "choices of one key stays");
    a.merge->add_option("inputs", a.inputs, "tuning files")->required()->expected(2, -1);
    a.merge->add_option("-o,--output", a.output, "the joined file")->required();
    a.merge->add_flag("--later-wins", a.later_wins,
                      "of two choices of one key the later file's stays, whatever their medians (a re-tune "
                      "replacing choices timed by an older build)");
    return t;
}

namespace {

// How many of the heuristic's configurations seed each task (cheapest first): the model's
// first choice and the two nearest it, which are often a tile apart; more cost every task a
// measurement each, whatever its budget.
constexpr std::size_t kTuneSeeds = 3;

int cmd_tune_merge(const TuneArgs& a) {
    std::vector<gpu::TuningCard> cards;
    for (const auto& in : a.inputs) cards.push_back(gpu::read_tuning(in).cards.front());
    std::vector<std::string> notes;
    const gpu::TuningCard m = gpu::merge_tuning_cards(cards, notes, a.later_wins);
    for (const auto& n : notes) std::fprintf(stderr, "tune merge: %s\n", n.c_str());
    write_file_atomic(a.output, gpu::tuning_json(m));
    std::printf("tune merge: %zu choices and %zu tile entries of %s into %s\n", m.choices.size(), m.entries.size(),
                m.device.c_str(), a.output.c_str());
    return 0;
}

std::vector<gpu::Precision> parse_classes(const std::vector<std::string>& names) {
    std::vector<gpu::Precision> out;
    for (const auto& n : names) {
        const auto p = gpu::parse_precision(n);
        if (!p) throw Error("tune: --classes: unknown precision class '" + n + "'");
        out.push_back(*p);
    }
    return out;
}

}  // namespace

int cmd_tune(const TuneArgs& a) {
    if (a.merge && *a.merge) return cmd_tune_merge(a);
    if (a.output.empty()) throw Error("tune: -o/--output FILE is required");
    check_batches(a.batches);
    const LayerTable table = a.table.load();
    std::vector<Layer> layers;
    for (const auto& name : a.layers.empty() ? table.names() : a.layers) layers.push_back(find_layer(table, name));
    std::vector<gpu::Layout> layouts;
    for (const auto& l : a.layouts) layouts.push_back(parse_layout_or_throw(l));
    auto tasks = gpu::tune_tasks(layers, a.batches, parse_classes(a.classes), layouts);
    if (!a.shard.empty()) {
        const Shard s = parse_shard(a.shard);
        tasks = gpu::shard_tasks(tasks, s.index, s.count);
    }
    std::optional<gpu::TuningCard> resumed;
    if (fs::exists(a.output)) resumed = gpu::read_tuning(a.output).cards.front();
    check_writable(a.output, "--output");

    auto ctx = open_device();
    gpu::EngineChoices engines;
    gpu::RunOptions opt;
    opt.warmup = a.warmup;
    opt.repeats = a.repeats;
    opt.engines = &engines;
    // The first (checked) run of each configuration must PASS the tile-covering check; checking every
    // later run too, as sweep does by default, costs the search wall time and changes no timing.
    opt.check_every_run = false;
    const RunMeta meta = make_meta(*ctx, opt, false, a.seed, DataScales{});
    gpu::TuningCard card;
    if (resumed) {
        if (resumed->device != meta.device || resumed->sms != meta.sms)
            throw Error("tune: " + a.output + " was tuned on " + resumed->device + " (" + std::to_string(resumed->sms) +
                        " SMs), this is " + meta.device + " (" + std::to_string(meta.sms) +
                        " SMs): give another --output");
        card = *resumed;
    } else {
        card.device = meta.device, card.sms = meta.sms;
        card.cuda_runtime = meta.cuda_runtime, card.driver = meta.driver;
        card.source = !a.source.empty() ? a.source
                                         : "convstudy tune " + meta.tool_version + " (" + meta.git_rev + "): table " +
                                               table.name + ", " + std::to_string(a.warmup) + " warm-ups, " +
                                               std::to_string(a.repeats) + " repeats, budget " +
                                               std::to_string(int(a.budget_s)) + " s";
    }

    const auto clock = [] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    };
    const double start = clock();
    ProblemData d;       // the current task's inputs and sampled reference
    gpu::HostData host;  // d as the harness reads it
    gpu::TuneHooks hooks;
    std::vector<gpu::AutoPick> picks;  // the current task's, cheapest first
    // The rows in the order of the heuristic's price, so that a budget spent before every row ran
    // has measured the likeliest ones.
    hooks.rows = [&](const gpu::TuneTask& t) {
        d = make_sampled(t.layer, t.N, a.seed, a.samples, false);
        host = d.host();
        picks = gpu::heuristic_picks(t.cls, gpu::Problem{t.layer, t.N, t.layout, {}}, ctx->prop());
        std::vector<const gpu::Variant*> ranked;
        for (const gpu::AutoPick& p : picks) ranked.push_back(p.variant);
        return gpu::rank_rows(gpu::tune_rows(t, ctx->prop()), ranked);
    };
    // The heuristic's cheapest configurations first: an answer is then never slower beyond noise
    // than what auto-<class> runs without a tuning file, and the descent starts from them.
    hooks.seeds = [&](const gpu::TuneTask&) {
        std::vector<gpu::TuneCandidate> seeds;
        for (const gpu::AutoPick& p : picks) {
            if (seeds.size() == kTuneSeeds) break;
            seeds.push_back({p.variant, p.axes});
        }
        return seeds;
    };
    hooks.measure = gpu::harness_measure(*ctx, host, opt);
    hooks.clock = clock;
    hooks.save = [&](const gpu::TuningCard& c) { write_file_atomic(a.output, gpu::tuning_json(c)); };
    hooks.git_rev = meta.git_rev;
    hooks.say = [](const std::string& line) {
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
    };
    const int nothing_passed = gpu::tune_all(tasks, card, a.budget_s, hooks);
    std::printf("tune: %zu choices in %s (%.0f s)\n", card.choices.size(), a.output.c_str(), clock() - start);
    return nothing_passed ? 1 : 0;
}

}  // namespace cs::cli
