// Step readers apart from plan.cpp: profile, sanitize and tune (plan_readers.hpp).
#include "plan_readers.hpp"

#include "chain_run.hpp"
#include "error.hpp"
#include "join.hpp"
#include "profile.hpp"
#include "variant.hpp"

#include <algorithm>

namespace cs::cli::plan_detail {

namespace fs = std::filesystem;

ProfileStep read_profile(const Fields& f, const fs::path& root, Outputs& outs) {
    ProfileStep p;
    const auto mode = f.str("mode", "convstudy");
    if (mode == "convstudy")
        p.mode = ProfileMode::convstudy;
    else if (mode == "ncu")
        p.mode = ProfileMode::ncu;
    else if (mode == "timeline")
        p.mode = ProfileMode::timeline;
    else
        f.where().fail("mode", "unknown mode '" + mode + "' (valid: convstudy, ncu, timeline)");
    p.table = read_table(f, root);
    p.variant = f.str("variant", "", true);
    std::vector<std::string> names{p.variant};
    const SweepPlan plan = read_variants(f, "variant", names, {gpu::MemoryMode::pageable}, false);
    p.layer = f.str("layer", "", true);
    if (!p.table.table.find(p.layer))
        f.where().fail("layer", "no layer '" + p.layer + "' in the table '" + p.table.table.name + "' (its layers: " +
                                    join(p.table.table.names(), ", ") + ")");
    p.batch = f.integer("batch", p.batch, 1, kMaxPlanBatch);
    if (f.has("layout")) {
        const auto s = f.str("layout", "");
        auto l = gpu::parse_layout(s);
        if (!l) f.where().fail("layout", "unknown layout '" + s + "' (valid: nchw, nhwc)");
        p.layout = *l;
    }
    if (f.has("memory")) {
        const auto s = f.str("memory", "");
        auto m = gpu::parse_memory_mode(s);
        if (!m) f.where().fail("memory", "unknown memory mode '" + s + "' (valid: " + gpu::memory_mode_names() + ")");
        p.memory = *m;
    }
    gpu::Config config;
    for (const auto& a : f.strings("axes", {})) {
        try {
            auto [name, values] = gpu::parse_axis_arg(a);
            if (values.size() != 1 || values[0] == "all") throw Error("'" + a + "': one value per axis (one row)");
            config.set.emplace_back(name, values[0]);
        } catch (const Error& e) {
            f.where().fail("axes", e.what());
        }
    }
    if (!plan.empty())
        if (auto why = gpu::config_error(*plan.front().first, config)) f.where().fail("axes", *why);
    p.axes = config.set;
    p.check = read_check(f, p.check);
    p.warmup = int(f.integer("warmup", p.warmup, 0, 1000));
    p.repeats = int(f.integer("repeats", p.repeats, 1, 100000));
    if (p.mode == ProfileMode::convstudy) {
        if (f.has("ncu_args")) f.where().fail("ncu_args", "only for mode ncu");
        p.metrics = f.str("metrics", p.metrics);
        try {
            metric_set(p.metrics);
        } catch (const Error& e) {
            f.where().fail("metrics", e.what());
        }
        p.output = out_name(f, "output", "", true, {".csv"});
        p.kernels_csv = out_name(f, "kernels_csv", "", false, {".csv"});
    } else if (p.mode == ProfileMode::timeline) {
        for (const char* k : {"ncu_args", "metrics", "kernels_csv"})
            if (f.has(k)) f.where().fail(k, "not for mode timeline (its output is the timeline's CSV)");
        p.output = out_name(f, "output", "", true, {".csv"});
    } else {
        if (f.has("metrics")) f.where().fail("metrics", "only for mode convstudy (give ncu its options in ncu_args)");
        if (f.has("kernels_csv")) f.where().fail("kernels_csv", "only for mode convstudy");
        p.ncu_args = f.strings("ncu_args", {}, true);
        for (const auto& a : p.ncu_args)
            if (a == "--log-file" || a == "-o" || a == "--export")
                f.where().fail("ncu_args", "'" + a + "': the step's output field names ncu's log file");
        p.output = out_name(f, "output", "", true, {".csv", ".txt"});
    }
    outs.add(f, "output", p.output);
    outs.add(f, "kernels_csv", p.kernels_csv);
    return p;
}

// The runner starts from a fresh machine: an earlier golden step with chain true must make table
// t's chain set at every N, else `field` fails (its message after `lead`).
static void require_chain_sets(const Fields& f, const char* field, const char* lead, const GoldenMade& golden,
                               const TableRef& t, const std::vector<std::int64_t>& batches) {
    const auto it = golden.chains.find(GoldenMade::chain_key(t));
    for (auto N : batches)
        if (it == golden.chains.end() || !it->second.count(N))
            f.where().fail(field, std::string(lead) + "no earlier golden step with chain true makes " +
                                      t.table.name + "'s chain at N=" + std::to_string(N));
}

SanitizeStep read_sanitize(const Fields& f, const GoldenMade& golden, Outputs& outs) {
    SanitizeStep s;
    if (f.has("tools")) {
        s.tools.clear();
        for (const auto& t : f.strings("tools", {})) {
            if (t == "memcheck") s.tools.push_back(SanitizeTool::memcheck);
            else if (t == "racecheck") s.tools.push_back(SanitizeTool::racecheck);
            else if (t == "initcheck") s.tools.push_back(SanitizeTool::initcheck);
            else if (t == "synccheck") s.tools.push_back(SanitizeTool::synccheck);
            else f.where().fail("tools", "unknown tool '" + t + "' (valid: memcheck, racecheck, initcheck, synccheck)");
        }
    }
    s.memory = read_memory(f, s.memory);
    s.variants = f.strings("variants", {});
    SweepPlan plan;
    if (s.variants.empty()) {  // every hand-written variant: the axes must belong to some of them
        for (const auto& v : gpu::registry()) plan.push_back({&v, s.memory});
    } else {
        // the library anchors are not ours to check (Variant::library; a cudnn-* name without cuDNN in
        // this build cannot be looked up, and is one of them)
        for (const auto& n : s.variants)
            if (n.rfind("cudnn", 0) == 0 && !gpu::find_variant(n).variant)
                f.where().fail("variants", "'" + n + "' is a library anchor: the sanitizer checks only our kernels");
        plan = read_variants(f, "variants", s.variants, s.memory, false);
        for (const auto& [v, modes] : plan)
            if (v->library)
                f.where().fail("variants", "'" + v->name + "' is a library anchor: the sanitizer checks only our kernels");
    }
    if (f.has("split")) {
        const auto sp = f.str("split", "");
        if (sp == "family") s.split = SanitizeSplit::family;
        else if (sp == "variant") s.split = SanitizeSplit::variant;
        else f.where().fail("split", "unknown split '" + sp + "' (valid: family, variant)");
    }
    if (f.has("targets")) {
        s.targets.clear();
        for (const auto& t : f.strings("targets", {})) {
            const auto v = value_named(kSanitizeTargetNames, t);
            if (!v)
                f.where().fail("targets", "unknown target '" + t + "' (valid: " + join(names_of(kSanitizeTargetNames), ", ") + ")");
            s.targets.push_back(*v);
        }
    }
    // The chain target runs AlexNet's chain at N=1 against its golden set: an earlier step makes it.
    if (std::find(s.targets.begin(), s.targets.end(), SanitizeTarget::chain) != s.targets.end()) {
        TableRef alexnet;
        alexnet.table.name = "alexnet";
        require_chain_sets(f, "targets", "chain, but ", golden, alexnet, {1});
    }
    s.axes = read_axes(f, plan);
    s.job_seconds = int(f.integer("job_seconds", s.job_seconds, 1, 86400));
    s.deadline_s = int(f.integer("deadline_s", s.deadline_s, 0, 86400));
    s.jobs = int(f.integer("jobs", s.jobs, 0, 1024));
    s.workspace_gib = f.number("workspace_gib", s.workspace_gib, 0.0625, 1024);
    if (f.has("shard")) {
        try {
            s.shard = parse_shard(f.str("shard", ""));
        } catch (const Error& e) {
            f.where().fail("shard", e.what());
        }
    }
    s.summary = out_name(f, "summary", s.summary, false, {".log", ".txt"});
    outs.add(f, "summary", s.summary);
    return s;
}

TuneStep read_tune(const Fields& f, const fs::path& root, Outputs& outs) {
    TuneStep t;
    t.table = read_table(f, root);
    t.layers = read_layers(f, t.table);
    t.batches = f.batches("batches", t.batches, false);
    t.classes = f.strings("classes", t.classes);
    for (const auto& c : t.classes)
        if (!gpu::parse_precision(c)) f.where().fail("classes", "unknown precision class '" + c + "'");
    t.layouts = read_layouts(f);
    if (t.layouts.empty()) t.layouts = gpu::all_layouts();
    t.budget_s = f.number("budget_s", t.budget_s, 1, 86400);
    t.warmup = int(f.integer("warmup", t.warmup, 0, 1000));
    t.repeats = int(f.integer("repeats", t.repeats, 10, 100000));
    if (f.has("shard")) {
        try {
            t.shard = parse_shard(f.str("shard", ""));
        } catch (const Error& e) {
            f.where().fail("shard", e.what());
        }
    }
    t.gpus = int(f.integer("gpus", 1, 1, kMaxPlanGpus));
    if (t.gpus > 1 && t.shard.count > 1) f.where().fail("gpus", "deals the tasks over the GPUs as shards: leave out shard");
    t.output = out_name(f, "output", "", true, {".json"});
    outs.add(f, "output", t.output);
    return t;
}

ChainStep read_chain(const Fields& f, const fs::path& root, const GoldenMade& golden, Outputs& outs) {
    ChainStep c;
    c.table = read_table(f, root);
    if (auto why = chain_error(c.table.table))
        f.where().fail("table", "'" + c.table.table.name + "' is not a chain: " + *why);
    c.batches = f.batches("batches", c.batches, false);
    require_chain_sets(f, "batches", "", golden, c.table, c.batches);
    c.classes = f.strings("classes", c.classes);
    for (const auto& s : c.classes) {
        const auto p = gpu::parse_precision(s);
        if (!p || *p == gpu::Precision::fp16acc) f.where().fail("classes", "'" + s + "' is not fp16, bf16, tf32 or fp32");
    }
    if (f.has("layouts")) c.layouts = read_layouts(f);
    c.choice = f.str("choice", c.choice);
    if (c.choice != "auto" && !gpu::find_variant(c.choice).variant)
        f.where().fail("choice", "'" + c.choice + "' is neither auto nor a variant");
    c.sides = f.strings("sides", c.sides);
    for (const auto& s : c.sides)
        if (!gpu::parse_chain_side(s)) f.where().fail("sides", "'" + s + "' is not ours, megakernel or cudnn");
    c.mega_ctas = int(f.integer("megakernel_ctas", c.mega_ctas, 1, 4));
    c.warmup = int(f.integer("warmup", c.warmup, 0, 1000));
    c.repeats = int(f.integer("repeats", c.repeats, 20, 100000));
    if (f.has("tail_repeats")) c.tail_repeats = int(f.integer("tail_repeats", 0, 0, 100000));
    c.layer_repeats = int(f.integer("layer_repeats", c.layer_repeats, 0, 100000));
    c.pdl = f.boolean("pdl", c.pdl);
    if (f.has("tuning")) {
        c.tuning = f.str("tuning", "");
        c.tuning_is_output = outs.names.count(c.tuning) > 0;
        if (!c.tuning_is_output && !fs::is_regular_file(root / c.tuning))
            f.where().fail("tuning", "'" + c.tuning + "' is neither an earlier step's output nor a file of the tree");
    }
    c.csv = out_name(f, "csv", "", true, {".csv"});
    outs.add(f, "csv", c.csv);
    return c;
}

}  // namespace cs::cli::plan_detail
