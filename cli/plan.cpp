#include "plan.hpp"

#include "error.hpp"
#include "join.hpp"
#include "plan_fields.hpp"
#include "plan_readers.hpp"
#include "profile.hpp"
#include "variant.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace cs::cli {

namespace plan_detail {

std::string join_batches(const std::vector<std::int64_t>& v) {
    return join(v, ",", [](std::int64_t n) { return std::to_string(n); });
}

const char* to_string(CheckMode m) {
    return m == CheckMode::golden ? "golden" : m == CheckMode::sampled ? "sampled" : "auto";
}

}  // namespace plan_detail

namespace plan_detail {

using json = nlohmann::json;
namespace fs = std::filesystem;

struct KindName {
    StepKind kind;
    const char* name;
};
constexpr KindName kKinds[] = {
    {StepKind::build, "build"},     {StepKind::gpu_tests, "gpu-tests"}, {StepKind::golden, "golden"},
    {StepKind::sweep, "sweep"},     {StepKind::profile, "profile"},     {StepKind::sanitize, "sanitize"},
    {StepKind::python, "python"},   {StepKind::merge, "merge"},         {StepKind::compare, "compare"},
    {StepKind::ab, "ab"},           {StepKind::tune, "tune"},           {StepKind::chain, "chain"},
};

std::string kind_list() {
    return join(kKinds, ", ", [](const auto& k) { return std::string_view(k.name); });
}


std::string join_names(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "'" : ", '") + x + "'";
    return out;
}

TableRef read_table(const Fields& f, const fs::path& root) {
    TableRef t;
    const std::string spec = f.str("table", default_layer_table().name);
    if (const LayerTable* b = find_builtin_layer_table(spec)) {
        t.table = *b;
        if (spec != default_layer_table().name) t.path = spec;  // --table NAME selects it again
        return t;
    }
    if (spec.find('/') == std::string::npos && spec.find(".json") == std::string::npos)
        f.where().fail("table", "'" + spec + "' is neither a built-in table (" + join_names(builtin_layer_table_names()) +
                                    ") nor a JSON file (a path from the repository root)");
    const fs::path p = root / spec;
    if (!fs::is_regular_file(p)) f.where().fail("table", "no file '" + spec + "' under " + root.string());
    try {
        t.table = load_layer_table(p);
    } catch (const Error& e) {
        f.where().fail("table", e.what());
    }
    t.path = spec;
    return t;
}

std::vector<std::string> read_layers(const Fields& f, const TableRef& t) {
    auto layers = f.strings("layers", {});
    for (const auto& l : layers)
        if (!t.table.find(l))
            f.where().fail("layers", "no layer '" + l + "' in the table '" + t.table.name + "' (its layers: " +
                                         join(t.table.names(), ", ") + ")");
    return layers;
}

DataScales read_scales(const Fields& f) {
    DataScales s;
    try {
        s.input = parse_data_scale(f.str("input_scale", "1"), "input_scale");
    } catch (const Error& e) {
        f.where().fail("input_scale", e.what());
    }
    try {
        s.weights = parse_data_scale(f.str("weight_scale", "1"), "weight_scale");
    } catch (const Error& e) {
        f.where().fail("weight_scale", e.what());
    }
    return s;
}

std::vector<gpu::Layout> read_layouts(const Fields& f) {
    std::vector<gpu::Layout> out;
    for (const auto& s : f.strings("layouts", {"all"})) {
        if (s == "all") return {};
        auto l = gpu::parse_layout(s);
        if (!l) f.where().fail("layouts", "unknown layout '" + s + "' (valid: nchw, nhwc, all)");
        out.push_back(*l);
    }
    return out;
}

std::vector<gpu::MemoryMode> read_memory(const Fields& f, std::vector<gpu::MemoryMode> def) {
    if (!f.has("memory")) return def;
    std::vector<gpu::MemoryMode> out;
    for (const auto& s : f.strings("memory", {})) {
        if (s == "all") return gpu::all_memory_modes();
        auto m = gpu::parse_memory_mode(s);
        if (!m) f.where().fail("memory", "unknown memory mode '" + s + "' (valid: " + gpu::memory_mode_names() + ", all)");
        out.push_back(*m);
    }
    return out;
}

CheckMode read_check(const Fields& f, CheckMode def) {
    if (!f.has("check")) return def;
    const auto s = f.str("check", "");
    if (s == "golden") return CheckMode::golden;
    if (s == "sampled") return CheckMode::sampled;
    if (s == "auto") return CheckMode::automatic;
    f.where().fail("check", "unknown check mode '" + s + "' (valid: golden, sampled, auto)");
}


#ifdef CONVSTUDY_HAVE_CUDNN
constexpr bool kHaveCudnn = true;
#else
constexpr bool kHaveCudnn = false;
#endif

// The named variants as the sweep resolves them (an alias that implies a memory mode brings
// that mode only); "all" alone is every registered variant. Without cuDNN in this build the
// cudnn-* names cannot be looked up and are let through (the GPU machine's build has cuDNN).
SweepPlan read_variants(const Fields& f, const std::string& key, std::vector<std::string>& names,
                        const std::vector<gpu::MemoryMode>& modes, bool allow_all) {
    SweepPlan plan;
    for (const auto& n : names) {
        if (n == "all") {
            if (!allow_all) f.where().fail(key, "'all' is not allowed here: name the variants");
            if (names.size() != 1) f.where().fail(key, "'all' must be the only entry");
            for (const auto& v : gpu::registry()) plan.push_back({&v, modes});
            continue;
        }
        const auto ref = gpu::find_variant(n);
        if (!ref.variant) {
            if (!kHaveCudnn && n.rfind("cudnn", 0) == 0) continue;
            f.where().fail(key, "unknown variant '" + n + "' (`convstudy list` shows all " +
                                    std::to_string(gpu::registry().size()) + " variants and their aliases)");
        }
        if (!ref.memory.empty())
            plan.push_back({ref.variant, {*gpu::parse_memory_mode(ref.memory)}});
        else
            plan.push_back({ref.variant, modes});
    }
    return plan;
}

AxisRequests read_axes(const Fields& f, const SweepPlan& plan) {
    const auto args = f.strings("axes", {});
    if (args.empty()) return {};
    try {
        return parse_sweep_axes(args, plan);
    } catch (const Error& e) {
        f.where().fail("axes", e.what());
    }
}

// Extra options of a command, checked against what it takes: flag -> takes a value.
void check_flags(const Fields& f, const std::string& key, const std::vector<std::string>& flags,
                 const std::map<std::string, bool>& allowed, const std::map<std::string, std::string>& typed) {
    for (std::size_t i = 0; i < flags.size(); ++i) {
        std::string flag = flags[i];
        std::string inline_value;
        const auto eq = flag.find('=');
        if (eq != std::string::npos) {
            inline_value = flag.substr(eq + 1);
            flag = flag.substr(0, eq);
        }
        if (flag.rfind("--", 0) != 0) f.where().fail(key, "'" + flags[i] + "' is not an option (options start with --)");
        if (auto t = typed.find(flag); t != typed.end())
            f.where().fail(key, "'" + flag + "' is the field '" + t->second + "': set that field instead");
        auto a = allowed.find(flag);
        if (a == allowed.end()) {
            const std::string names = join(allowed, ", ", [](const auto& nv) -> const std::string& { return nv.first; });
            f.where().fail(key, "'" + flag + "' is not an option here (valid: " + names + ")");
        }
        if (a->second && eq == std::string::npos) {
            if (i + 1 == flags.size() || flags[i + 1].rfind("--", 0) == 0)
                f.where().fail(key, "'" + flag + "' takes a value: give it as the next element");
            ++i;
        } else if (!a->second && eq != std::string::npos) {
            f.where().fail(key, "'" + flag + "' takes no value");
        }
    }
}

bool has_flag(const std::vector<std::string>& flags, const std::string& flag) {
    return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

SweepStep read_sweep(const Fields& f, const fs::path& root, const GoldenMade& golden, Outputs& outs) {
    SweepStep s;
    s.csv = out_name(f, "csv", "", true, {".csv"});
    s.table = read_table(f, root);
    s.memory = read_memory(f, s.memory);
    s.variants = f.strings("variants", s.variants);
    const SweepPlan plan = read_variants(f, "variants", s.variants, s.memory, true);
    s.layers = read_layers(f, s.table);
    s.batches = f.batches("batches", s.batches, false);
    s.layouts = read_layouts(f);
    s.axes = read_axes(f, plan);
    s.check = read_check(f, s.check);
    s.samples = f.opt_integer("samples", 16, 1 << 24);
    if (s.samples && s.check == CheckMode::golden)
        f.where().fail("samples", "a golden check compares every element: samples needs check sampled or auto");
    s.scales = read_scales(f);
    s.warmup = int(f.integer("warmup", s.warmup, 0, 1000));
    s.repeats = int(f.integer("repeats", s.repeats, 0, 100000));
    if (auto h = f.opt_integer("host_repeats", 0, 100000)) {
        if (*h > s.repeats)
            f.where().fail("host_repeats", std::to_string(*h) + " is more than repeats (" +
                                                    std::to_string(s.repeats) + ")");
        s.host_repeats = int(*h);
    }
    s.flags = f.strings("flags", {}, false, true);
    static const std::map<std::string, bool> allowed = {
        {"--no-cpu-timing", false}, {"--no-flush", false},      {"--profile", false},    {"--metrics", true},
        {"--ncu", true},            {"--profile-timeout", true}, {"--workspace-limit", true},
        {"--streams", true},        {"--chunks", true},          {"--engine-choices", true}, {"--tuning", true},
        {"--seed", true},           {"--golden", true},
        {"--shard", true},          {"--no-recheck", false},     {"--no-cudnn-rtc", false},
        {"--no-retime", false},     {"--order-seed", true},      {"--cudnn-processes", true},
        {"--reuse-engines", false}, {"--engine-build-processes", true},
    };
    static const std::map<std::string, std::string> typed = {
        {"--variants", "variants"}, {"--layers", "layers"}, {"--batch", "batches"},     {"--layout", "layouts"},
        {"--memory", "memory"},     {"--axis", "axes"},     {"--check", "check"},       {"--samples", "samples"},
        {"--warmup", "warmup"},     {"--repeats", "repeats"}, {"--csv", "csv"},         {"--table", "table"},
        {"--host-repeats", "host_repeats"},       {"--kernels-csv", "kernels_csv"}, {"--quiet", "(always on)"},
        {"--input-scale", "input_scale"},                   {"--weight-scale", "weight_scale"},
    };
    check_flags(f, "flags", s.flags, allowed, typed);
    s.kernels_csv = out_name(f, "kernels_csv", "", false, {".csv"});
    s.gpus = int(f.integer("gpus", 1, 1, kMaxPlanGpus));
    if (s.gpus > 1)
        for (const char* flag : {"--shard", "--profile"})
            if (has_flag(s.flags, flag))
                f.where().fail("gpus", std::string("deals the rows over the GPUs as shards: leave out ") + flag);
    if (!s.kernels_csv.empty() && !has_flag(s.flags, "--profile"))
        f.where().fail("kernels_csv", "needs \"--profile\" among the flags");
    // A golden check needs its sets: an earlier golden step of this plan must make them (the
    // runner starts from a fresh machine), unless the flags point at another golden folder.
    if (s.check == CheckMode::golden && !has_flag(s.flags, "--golden")) {
        const auto it = golden.sets.find(GoldenMade::key(s.table, s.scales));
        for (auto N : s.batches)
            for (const auto& l : s.layers.empty() ? s.table.table.names() : s.layers)
                if (it == golden.sets.end() || !it->second.count({l, N}))
                    f.where().fail("check", "golden, but no earlier golden step makes " + l + " at N=" +
                                                std::to_string(N) + " (table '" + s.table.table.name +
                                                "', input scale " + data_scale_string(s.scales.input) +
                                                ", weight scale " + data_scale_string(s.scales.weights) +
                                                "): add one, or check sampled");
    }
    outs.add(f, "csv", s.csv);
    outs.add(f, "kernels_csv", s.kernels_csv);
    return s;
}

GoldenStep read_golden(const Fields& f, const fs::path& root, GoldenMade& made) {
    GoldenStep g;
    g.table = read_table(f, root);
    g.batches = f.batches("batches", {}, true);
    g.layers = read_layers(f, g.table);
    g.scales = read_scales(f);
    g.cpu_timing = f.boolean("cpu_timing", true);
    g.onednn = f.boolean("onednn", true);
    g.chain = f.boolean("chain", false);
    if (g.chain) {
        if (auto why = chain_error(g.table.table)) f.where().fail("chain", "table '" + g.table.table.name + "' is not a chain: " + *why);
        if (!g.layers.empty()) f.where().fail("layers", "a chain's golden set holds every layer: leave out layers");
        if (g.scales != DataScales{}) f.where().fail("input_scale", "chains have no data scales");
        for (auto N : g.batches) made.chains[GoldenMade::chain_key(g.table)].insert(N);
        return g;
    }
    auto& set = made.sets[GoldenMade::key(g.table, g.scales)];
    for (auto N : g.batches)
        for (const auto& l : g.layers.empty() ? g.table.table.names() : g.layers) set.insert({l, N});
    return g;
}

// CMakePresets.json's configure presets.
std::vector<std::string> configure_presets(const fs::path& root) {
    std::ifstream in(root / "CMakePresets.json");
    if (!in) return {};
    std::vector<std::string> out;
    try {
        const json j = json::parse(in);
        for (const auto& p : j.at("configurePresets")) out.push_back(p.at("name").get<std::string>());
    } catch (const std::exception&) {
        return {};
    }
    return out;
}

BuildStep read_build(const Fields& f, const fs::path& root) {
    BuildStep b;
    b.preset = f.str("preset", b.preset);
    const auto presets = configure_presets(root);
    if (std::find(presets.begin(), presets.end(), b.preset) == presets.end())
        f.where().fail("preset", "no configure preset '" + b.preset + "' in " + (root / "CMakePresets.json").string() +
                                     (presets.empty() ? "" : " (its presets: " + join(presets, ", ") + ")"));
    b.cmake_args = f.strings("cmake_args", {}, false, true);
    for (const auto& a : b.cmake_args)
        if (a.rfind("-D", 0) != 0 || a.find('=') == std::string::npos)
            f.where().fail("cmake_args", "'" + a + "' is not a cache setting -DNAME=VALUE");
    b.targets = f.strings("targets", {}, false, true);
    return b;
}

GpuTestsStep read_gpu_tests(const Fields& f) {
    GpuTestsStep g;
    g.label = f.str("label", g.label);
    g.regex = f.str("regex", "");
    g.filter = f.strings("filter", {});
    if (!g.filter.empty() && (f.has("label") || f.has("regex")))
        f.where().fail("filter", "runs the test program directly: leave out ctest's label and regex");
    return g;
}

PythonStep read_python(const Fields& f, const fs::path& root) {
    PythonStep p;
    p.script = f.str("script", "", true);
    if (p.script.find('/') != std::string::npos || p.script.size() < 4 ||
        p.script.compare(p.script.size() - 3, 3, ".py") != 0)
        f.where().fail("script", "'" + p.script + "' must be the file name of a Python script in scripts/");
    if (!fs::is_regular_file(root / "scripts" / p.script))
        f.where().fail("script", "no file scripts/" + p.script + " under " + root.string());
    p.args = f.strings("args", {}, false, true);
    return p;
}

MergeStep read_merge(const Fields& f, Outputs& outs) {
    MergeStep m;
    m.inputs = f.strings("inputs", {}, true);
    if (m.inputs.size() < 2) f.where().fail("inputs", "merge joins two CSVs or more");
    for (const auto& in : m.inputs)
        if (!outs.names.count(in))
            f.where().fail("inputs", "'" + in + "' is written by no earlier step (" +
                                         (outs.names.empty() ? std::string("none writes a file")
                                                             : "they write: " + join(outs.names, ", ")) +
                                         ")");
    m.output = out_name(f, "output", "", true, {".csv"});
    outs.add(f, "output", m.output);
    return m;
}

CompareStep read_compare(const Fields& f, const fs::path& root, Outputs& outs) {
    CompareStep c;
    c.baseline = f.str("baseline", "", true);
    if (!fs::is_regular_file(root / c.baseline))
        f.where().fail("baseline", "no file '" + c.baseline + "' under " + root.string() + " (a committed CSV)");
    c.csv = f.str("csv", "", true);
    if (!outs.names.count(c.csv)) f.where().fail("csv", "'" + c.csv + "' is written by no earlier step");
    c.output = out_name(f, "output", "", false, {".csv"});
    c.flags = f.strings("flags", {}, false, true);
    static const std::map<std::string, bool> allowed = {
        {"--markdown", false}, {"--only-changed", false}, {"--metric", true}, {"--fail-slower", true}};
    check_flags(f, "flags", c.flags, allowed, {{"--csv", "output"}});
    outs.add(f, "output", c.output);
    return c;
}

// A sweep's fields and `before`; the four runs' CSVs are its outputs too.
AbStep read_ab(const Fields& f, const fs::path& root, const GoldenMade& golden, Outputs& outs) {
    AbStep a;
    a.before = f.str("before", "", true);
    if (fs::path(a.before).is_absolute() || a.before.find("..") != std::string::npos ||
        a.before.find_first_of(" \t\n'\"$`") != std::string::npos)
        f.where().fail("before", "'" + a.before + "' must be a path inside the repository, without spaces or quotes "
                                                   "(the program carried to the GPU machine, e.g. .ab/convstudy)");
    a.sweep = read_sweep(f, root, golden, outs);
    for (const char* flag : {"--shard", "--profile"})
        if (has_flag(a.sweep.flags, flag))
            f.where().fail("flags", std::string(flag) + " does not go with an A/B: each side's (layer, N) is one whole process");
    const std::string stem = a.sweep.csv.substr(0, a.sweep.csv.size() - 4);
    for (const char* run : {"before1", "after1", "before2", "after2"}) outs.add(f, "csv", stem + "." + run + ".csv");
    return a;
}

fs::path find_root(const fs::path& plan_file) {
    fs::path dir = fs::absolute(plan_file).parent_path();
    for (fs::path d = dir; !d.empty(); d = d.parent_path()) {
        if (fs::exists(d / "CMakePresets.json")) return d;
        if (d == d.parent_path()) break;
    }
    return fs::current_path();
}

std::string default_log(std::size_t index, StepKind k) {
    char buf[24];  // any size_t
    std::snprintf(buf, sizeof buf, "%02zu", index);
    std::string name(to_string(k));
    return std::string("step") + buf + "-" + name + ".log";
}

}  // namespace plan_detail

using namespace plan_detail;
namespace fs = std::filesystem;
using json = nlohmann::json;

std::string_view to_string(StepKind k) {
    for (const auto& n : kKinds)
        if (n.kind == k) return n.name;
    return "?";
}

std::optional<StepKind> parse_step_kind(std::string_view s) {
    for (const auto& n : kKinds)
        if (s == n.name) return n.kind;
    return std::nullopt;
}

Plan parse_plan(std::string_view text, const std::string& source, const fs::path& root) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        throw Error(source + ": not valid JSON: " + e.what());
    }
    const Where top{source, -1, ""};
    if (!j.is_object()) top.fail("", std::string("a plan is a JSON object, not ") + type_name(j));
    const Fields f(j, top, {"name", "purpose", "steps"});
    Plan plan;
    plan.file = source;
    plan.root = root;
    plan.name = f.str("name", "", true);
    if (plan.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_") != std::string::npos)
        top.fail("name", "'" + plan.name + "' must be lower-case letters, digits, '-' and '_'");
    plan.purpose = f.str("purpose", "", true);
    if (plan.purpose.find('\n') != std::string::npos) top.fail("purpose", "must be one line");
    if (!j.contains("steps")) top.fail("steps", "missing (a list of steps)");
    const json& steps = j.at("steps");
    if (!steps.is_array() || steps.empty()) top.fail("steps", "must be a non-empty list of steps");

    Outputs outs;
    GoldenMade golden;
    std::set<std::string> logs;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        Where w{source, int(i), ""};
        const json& s = steps[i];
        if (!s.is_object()) w.fail("", std::string("a step is a JSON object, not ") + type_name(s));
        if (!s.contains("kind")) w.fail("kind", "missing (one of " + kind_list() + ")");
        if (!s.at("kind").is_string()) w.fail("kind", std::string("must be a string, not ") + type_name(s.at("kind")));
        const auto kind_text = s.at("kind").get<std::string>();
        w.kind = kind_text;
        const auto kind = parse_step_kind(kind_text);
        if (!kind) w.fail("kind", "unknown step kind '" + kind_text + "' (valid: " + kind_list() + ")");

        std::vector<std::string> keys{"kind", "log", "timeout_s"};
        auto with = [&](std::initializer_list<const char*> more) {
            for (const char* k : more) keys.emplace_back(k);
            return Fields(s, w, keys);
        };
        Step step;
        step.kind = *kind;
        // The runner builds first and reads the rest of the plan with the convstudy it built.
        if (i == 0 && *kind != StepKind::build) w.fail("kind", "the first step must be a build step (not " + kind_text + ")");
        if (i != 0 && *kind == StepKind::build) w.fail("kind", "a plan has one build step, the first");
        switch (*kind) {
        case StepKind::build: {
            const auto fb = with({"preset", "cmake_args", "targets"});
            step.body = read_build(fb, root);
            break;
        }
        case StepKind::gpu_tests: step.body = read_gpu_tests(with({"label", "regex", "filter"})); break;
        case StepKind::golden:
            step.body = read_golden(with({"table", "batches", "layers", "input_scale", "weight_scale", "cpu_timing",
                                          "onednn", "chain"}),
                                    root, golden);
            break;
        case StepKind::sweep:
            step.body = read_sweep(with({"csv", "table", "variants", "layers", "batches", "layouts", "memory", "axes",
                                         "check", "samples", "input_scale", "weight_scale", "warmup", "repeats",
                                         "host_repeats", "kernels_csv", "flags", "gpus"}),
                                   root, golden, outs);
            break;
        case StepKind::profile:
            step.body = read_profile(with({"mode", "table", "variant", "layer", "batch", "layout", "memory", "axes",
                                           "check", "warmup", "repeats", "metrics", "output", "kernels_csv",
                                           "ncu_args"}),
                                     root, outs);
            break;
        case StepKind::sanitize:
            step.body = read_sanitize(with({"tools", "variants", "split", "targets", "memory", "axes", "job_seconds",
                                            "deadline_s", "jobs", "workspace_gib", "shard", "summary"}),
                                      golden, outs);
            break;
        case StepKind::python: step.body = read_python(with({"script", "args"}), root); break;
        case StepKind::merge: step.body = read_merge(with({"inputs", "output"}), outs); break;
        case StepKind::compare: step.body = read_compare(with({"baseline", "csv", "output", "flags"}), root, outs); break;
        case StepKind::tune:
            step.body = read_tune(with({"table", "layers", "batches", "classes", "layouts", "budget_s", "warmup",
                                        "repeats", "shard", "gpus", "output"}),
                                  root, outs);
            break;
        case StepKind::chain:
            step.body = read_chain(with({"table", "batches", "classes", "layouts", "choice", "sides", "csv", "warmup",
                                         "repeats", "tail_repeats", "layer_repeats", "pdl", "megakernel_ctas", "tuning"}),
                                   root, golden, outs);
            break;
        case StepKind::ab:
            step.body = read_ab(with({"before", "csv", "table", "variants", "layers", "batches", "layouts", "memory",
                                      "axes", "check", "samples", "input_scale", "weight_scale", "warmup", "repeats",
                                      "host_repeats", "flags"}),
                                root, golden, outs);
            break;
        }
        const Fields common(s, w, keys);
        step.log = out_name(common, "log", *kind == StepKind::build       ? "build.log"
                                           : *kind == StepKind::gpu_tests ? "gpu_tests.log"
                                                                          : default_log(i, *kind),
                            false, {".log", ".txt"});
        if (!logs.insert(step.log).second || outs.names.count(step.log))
            w.fail("log", "'" + step.log + "' is another step's file too");
        step.timeout_s = int(common.integer("timeout_s", 0, 1, 86400));
        plan.steps.push_back(std::move(step));
    }
    for (const auto& l : logs)
        if (outs.names.count(l)) top.fail("steps", "'" + l + "' is both a step's log and a step's output");
    return plan;
}

Plan load_plan(const fs::path& path, const fs::path& root) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path.string() + ": cannot read the plan");
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_plan(ss.str(), path.string(), root.empty() ? find_root(path) : root);
}

}  // namespace cs::cli
