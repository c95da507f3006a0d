// A plan's steps as command lines (`convstudy plan steps`, the runner scripts/device.sh and
// scripts/main.sh read them), `sweep --plan`'s sweep steps, and the `plan` command. Reading and
// validating a plan file: plan.cpp.
#include "plan.hpp"

#include "error.hpp"
#include "join.hpp"
#include "profile.hpp"
#include "shell_quote.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <map>
#include <cstdio>
#include <sstream>

namespace cs::cli {

namespace fs = std::filesystem;
using plan_detail::join_batches;
using plan_detail::to_string;

std::vector<SweepStep> sweep_steps(const Plan& plan, const fs::path& out_dir) {
    std::vector<SweepStep> out;
    for (const auto& s : plan.steps)
        if (const auto* sw = std::get_if<SweepStep>(&s.body)) {
            if (sw->gpus > 1)
                throw Error(plan.file.string() + ": sweep step '" + sw->csv + "' deals its rows over " +
                            std::to_string(sw->gpus) + " GPUs (gpus), which the runner starts as processes of their "
                            "own: run the plan with scripts/device.sh, not sweep --plan");
            out.push_back(*sw);
            out.back().out_dir = out_dir;
        }
    return out;
}

std::vector<std::string> sweep_command_line(const SweepStep& s) {
    std::vector<std::string> v{"sweep", "--variants", join(s.variants, ",")};
    if (!s.table.path.empty()) v.insert(v.end(), {"--table", s.table.path});
    if (!s.layers.empty()) v.insert(v.end(), {"--layers", join(s.layers, ",")});
    v.insert(v.end(), {"--batch", join_batches(s.batches)});
    const std::string layouts = join(s.layouts, ",", [](gpu::Layout l) { return gpu::to_string(l); });
    v.insert(v.end(), {"--layout", layouts.empty() ? "all" : layouts});
    std::string memory;
    for (auto m : s.memory) memory += (memory.empty() ? "" : ",") + std::string(gpu::to_string(m));
    v.insert(v.end(), {"--memory", memory});
    for (const auto& [axis, values] : s.axes) v.insert(v.end(), {"--axis", axis + "=" + join(values, ",")});
    v.insert(v.end(), {"--check", to_string(s.check)});
    if (s.samples) v.insert(v.end(), {"--samples", std::to_string(*s.samples)});
    if (s.scales != DataScales{})
        v.insert(v.end(), {"--input-scale", data_scale_string(s.scales.input), "--weight-scale",
                           data_scale_string(s.scales.weights)});
    v.insert(v.end(), {"--warmup", std::to_string(s.warmup), "--repeats", std::to_string(s.repeats)});
    if (s.host_repeats) v.insert(v.end(), {"--host-repeats", std::to_string(*s.host_repeats)});
    v.insert(v.end(), s.flags.begin(), s.flags.end());
    if (!s.kernels_csv.empty()) v.insert(v.end(), {"--kernels-csv", (s.out_dir / s.kernels_csv).string()});
    v.insert(v.end(), {"--csv", (s.out_dir / s.csv).string(), "--quiet"});
    return v;
}

namespace {

const char* to_string(SanitizeTool t) {
    switch (t) {
    case SanitizeTool::memcheck: return "memcheck";
    case SanitizeTool::racecheck: return "racecheck";
    case SanitizeTool::initcheck: return "initcheck";
    case SanitizeTool::synccheck: return "synccheck";
    }
    return "?";
}

std::vector<std::string> run_row_args(const ProfileStep& p) {
    std::vector<std::string> v{"--variant", p.variant, "--layer", p.layer, "--batch", std::to_string(p.batch),
                               "--layout", std::string(gpu::to_string(p.layout)), "--memory",
                               std::string(gpu::to_string(p.memory))};
    if (!p.table.path.empty()) v.insert(v.end(), {"--table", p.table.path});
    for (const auto& [a, val] : p.axes) v.insert(v.end(), {"--axis", a + "=" + val});
    v.insert(v.end(), {"--check", to_string(p.check)});
    if (p.check != CheckMode::golden) v.push_back("--no-cpu-timing");
    v.insert(v.end(), {"--warmup", std::to_string(p.warmup), "--repeats", std::to_string(p.repeats)});
    return v;
}

std::string substitute_out(std::string s, const std::string& out) {
    for (std::size_t pos = 0; (pos = s.find("{out}", pos)) != std::string::npos; pos += out.size())
        s.replace(pos, 5, out);
    return s;
}

}  // namespace

bool sweeps_in_one_process(const Plan& plan) {
    std::vector<std::size_t> at;
    for (std::size_t i = 0; i < plan.steps.size(); ++i)
        if (const auto* sw = std::get_if<SweepStep>(&plan.steps[i].body)) {
            if (sw->gpus > 1) return false;  // its shards are processes of their own
            at.push_back(i);
        }
    return at.size() >= 2 && at.back() - at.front() + 1 == at.size();
}

namespace {

using Commands = std::vector<std::vector<std::string>>;

Commands build_commands(const BuildStep& bs, const std::string& B) {
    std::vector<std::string> conf{"cmake", "--preset", bs.preset, "-B", B};
    conf.insert(conf.end(), bs.cmake_args.begin(), bs.cmake_args.end());
    std::vector<std::string> build{"cmake", "--build", B, "--parallel"};
    if (!bs.targets.empty()) {
        build.push_back("--target");
        build.insert(build.end(), bs.targets.begin(), bs.targets.end());
    }
    return {conf, build};
}

Commands gpu_tests_commands(const GpuTestsStep& gt, int timeout_s, const fs::path& build_dir) {
    if (!gt.filter.empty()) {
        std::vector<std::string> cmd{"env", "CONVSTUDY_REQUIRE_GPU=1", (build_dir / "tests" / "convstudy_gpu_tests").string()};
        cmd.insert(cmd.end(), gt.filter.begin(), gt.filter.end());
        return {cmd};
    }
    std::vector<std::string> cmd{"env", "CONVSTUDY_REQUIRE_GPU=1", "ctest", "--test-dir", build_dir.string(), "-L", gt.label,
                                 "-V"};
    if (!gt.regex.empty()) cmd.insert(cmd.end(), {"-R", gt.regex});
    if (timeout_s) cmd.insert(cmd.end(), {"--timeout", std::to_string(timeout_s)});
    return {cmd};
}

Commands golden_commands(const GoldenStep& gd, const std::string& exe) {
    std::vector<std::string> cmd{exe, "generate", "--batch", join_batches(gd.batches)};
    if (gd.chain) cmd.push_back("--chain");
    if (!gd.table.path.empty()) cmd.insert(cmd.end(), {"--table", gd.table.path});
    if (!gd.layers.empty()) cmd.insert(cmd.end(), {"--only", join(gd.layers, ",")});
    cmd.insert(cmd.end(), {"--out", "golden"});
    if (gd.scales != DataScales{})
        cmd.insert(cmd.end(), {"--input-scale", data_scale_string(gd.scales.input), "--weight-scale",
                               data_scale_string(gd.scales.weights)});
    if (!gd.cpu_timing) cmd.push_back("--no-cpu-timing");
    if (!gd.onednn) cmd.push_back("--no-onednn");
    cmd.push_back("--quiet");
    return {cmd};
}

template <typename Out>
Commands profile_commands(const ProfileStep& pr, const std::string& exe, const Out& out) {
    if (pr.mode == ProfileMode::convstudy) {
        std::vector<std::string> cmd{exe, "profile"};
        const auto row = run_row_args(pr);
        cmd.insert(cmd.end(), row.begin(), row.end());
        cmd.insert(cmd.end(), {"--metrics", pr.metrics, "--csv", out(pr.output)});
        if (!pr.kernels_csv.empty()) cmd.insert(cmd.end(), {"--kernels-csv", out(pr.kernels_csv)});
        return {cmd};
    }
    if (pr.mode == ProfileMode::timeline) {
        std::vector<std::string> cmd{exe, "run"};
        const auto row = run_row_args(pr);
        cmd.insert(cmd.end(), row.begin(), row.end());
        cmd.insert(cmd.end(), {"--timeline", out(pr.output)});
        return {cmd};
    }
    std::vector<std::string> cmd{"ncu"};
    cmd.insert(cmd.end(), pr.ncu_args.begin(), pr.ncu_args.end());
    cmd.insert(cmd.end(), {"--log-file", out(pr.output), exe, "run"});
    const auto row = run_row_args(pr);
    cmd.insert(cmd.end(), row.begin(), row.end());
    cmd.push_back("--profile-target");
    return {cmd};
}

// scripts/sanitize.sh with the step's settings in its environment; `scratch`: its work folder.
Commands sanitize_commands(const SanitizeStep& sa, const std::string& B, const std::string& summary,
                           const std::string& scratch) {
    const std::string tools = join(sa.tools, " ", [](auto t) { return to_string(t); });
    std::string targets;
    for (auto t : sa.targets) targets += (targets.empty() ? "" : " ") + std::string(name_of(kSanitizeTargetNames, t));
    std::string memory;
    for (auto m : sa.memory) memory += (memory.empty() ? "" : ",") + std::string(gpu::to_string(m));
    std::string axes;
    for (const auto& [a, vals] : sa.axes) axes += (axes.empty() ? "" : " ") + ("--axis " + a + "=" + join(vals, ","));
    std::vector<std::string> cmd{"env", "SANITIZE_TOOLS=" + tools, "SANITIZE_TARGETS=" + targets,
                                 "SANITIZE_SPLIT=" + std::string(sa.split == SanitizeSplit::variant ? "variant" : "family"),
                                 "SANITIZE_MEMORY=" + memory, "SANITIZE_SECONDS=" + std::to_string(sa.job_seconds)};
    if (!sa.variants.empty()) cmd.push_back("SANITIZE_VARIANTS=" + join(sa.variants, ","));
    if (!axes.empty()) cmd.push_back("SANITIZE_AXES=" + axes);
    if (sa.deadline_s) cmd.push_back("SANITIZE_DEADLINE=" + std::to_string(sa.deadline_s));
    if (sa.jobs) cmd.push_back("SANITIZE_JOBS=" + std::to_string(sa.jobs));
    if (sa.shard.count > 1)
        cmd.push_back("SANITIZE_SHARD=" + std::to_string(sa.shard.index) + "/" + std::to_string(sa.shard.count));
    std::ostringstream gib;
    gib << sa.workspace_gib;
    cmd.push_back("SANITIZE_WORKSPACE_GIB=" + gib.str());
    cmd.insert(cmd.end(), {"scripts/sanitize.sh", B, summary, scratch});
    return {cmd};
}

// tuning: the tuning file's path as the command sees it (empty: none given).
std::vector<std::string> chain_command(const ChainStep& c, const std::string& exe, const std::string& csv,
                                       const std::string& tuning) {
    std::vector<std::string> v{exe, "chain"};
    if (!c.table.path.empty()) v.insert(v.end(), {"--table", c.table.path});
    const std::string layouts = join(c.layouts, ",", [](gpu::Layout l) { return gpu::to_string(l); });
    v.insert(v.end(), {"--batch", join_batches(c.batches), "--classes", join(c.classes, ","), "--layout", layouts,
                       "--choice", c.choice, "--sides", join(c.sides, ","), "--golden", "golden", "--warmup",
                       std::to_string(c.warmup), "--repeats", std::to_string(c.repeats), "--layer-repeats",
                       std::to_string(c.layer_repeats), "--csv", csv});
    if (c.tail_repeats) v.insert(v.end(), {"--tail-repeats", std::to_string(*c.tail_repeats)});
    if (!c.pdl) v.push_back("--no-pdl");
    if (!tuning.empty()) v.insert(v.end(), {"--tuning", tuning});
    if (std::find(c.sides.begin(), c.sides.end(), "megakernel") != c.sides.end())
        v.insert(v.end(), {"--megakernel-ctas", std::to_string(c.mega_ctas)});
    return v;
}

std::vector<std::string> tune_command(const TuneStep& t, const std::string& exe, const std::string& output) {
    std::vector<std::string> v{exe, "tune"};
    if (!t.table.path.empty()) v.insert(v.end(), {"--table", t.table.path});
    if (!t.layers.empty()) v.insert(v.end(), {"--layers", join(t.layers, ",")});
    const std::string layouts = join(t.layouts, ",", [](gpu::Layout l) { return gpu::to_string(l); });
    std::ostringstream budget;
    budget << t.budget_s;
    v.insert(v.end(), {"--batch", join_batches(t.batches), "--classes", join(t.classes, ","), "--layout", layouts,
                       "--budget", budget.str(), "--warmup", std::to_string(t.warmup), "--repeats",
                       std::to_string(t.repeats)});
    if (t.shard.count > 1)
        v.insert(v.end(), {"--shard", std::to_string(t.shard.index) + "/" + std::to_string(t.shard.count)});
    v.insert(v.end(), {"-o", output});
    return v;
}

// A step's `gpus` shards at once: shard k (1-based) of `gpus` on GPU k-1, in the background
// (kGpuParallel), each writing its part (`part(k)`); then kGpuWait, then `join` of the parts.
// `command(k)`: shard k's command line without the GPU.
template <class Command, class Part, class Join>
Commands gpu_shards(int gpus, Command command, Part part, Join join) {
    Commands cmds;
    std::vector<std::string> parts;
    for (int k = 1; k <= gpus; ++k) {
        std::vector<std::string> c{kGpuParallel, "env", "CUDA_VISIBLE_DEVICES=" + std::to_string(k - 1)};
        const auto args = command(k);
        c.insert(c.end(), args.begin(), args.end());
        cmds.push_back(std::move(c));
        parts.push_back(part(k));
    }
    cmds.push_back({kGpuWait});
    cmds.push_back(join(parts));
    return cmds;
}

// "x.csv" -> "x.gpu2.csv": shard 2's part of output x.csv.
std::string part_name(const std::string& file, int k) {
    const auto dot = file.rfind('.');
    return file.substr(0, dot) + ".gpu" + std::to_string(k) + file.substr(dot);
}

Commands tune_commands(const TuneStep& t, const std::string& exe, const std::string& output) {
    if (t.gpus <= 1) return {tune_command(t, exe, output)};
    return gpu_shards(
        t.gpus,
        [&](int k) {
            TuneStep s = t;
            s.shard = Shard{k, t.gpus};
            return tune_command(s, exe, part_name(output, k));
        },
        [&](int k) { return part_name(output, k); },
        [&](const std::vector<std::string>& parts) {
            std::vector<std::string> m{exe, "tune", "merge"};
            m.insert(m.end(), parts.begin(), parts.end());
            m.insert(m.end(), {"-o", output});
            return m;
        });
}

Commands sweep_commands(const SweepStep& sw, const std::string& exe) {
    auto line = [&](const SweepStep& s) {
        auto args = sweep_command_line(s);
        args.insert(args.begin(), exe);
        return args;
    };
    if (sw.gpus <= 1) return {line(sw)};
    return gpu_shards(
        sw.gpus,
        [&](int k) {
            SweepStep s = sw;
            s.csv = part_name(sw.csv, k);
            s.flags.insert(s.flags.end(), {"--shard", std::to_string(k) + "/" + std::to_string(sw.gpus)});
            return line(s);
        },
        [&](int k) { return (sw.out_dir / part_name(sw.csv, k)).string(); },
        [&](const std::vector<std::string>& parts) {
            std::vector<std::string> m{exe, "merge"};
            m.insert(m.end(), parts.begin(), parts.end());
            m.insert(m.end(), {"-o", (sw.out_dir / sw.csv).string()});
            return m;
        });
}

// Before, after, before, after per (layer, N), each a sweep process of its own, their parts in
// <stem>.parts/; each side's parts merged by its own program; then compare's A/B rule.
Commands ab_commands(const AbStep& ab, const std::string& exe, const fs::path& out_dir) {
    const std::string stem = ab.sweep.csv.substr(0, ab.sweep.csv.size() - 4);
    const fs::path parts = out_dir / (stem + ".parts");
    Commands cmds{{"sh", "-c",
                   "test -x \"$1\" || { echo \"ab: no program '$1' to time as before (carry it to the GPU machine)\" >&2; "
                   "exit 2; }",
                   "ab", ab.before},
                  {"mkdir", "-p", parts.string()}};
    const char* runs[] = {"before1", "after1", "before2", "after2"};
    std::map<std::string, std::vector<std::string>> made;  // run -> its parts
    const auto layers = ab.sweep.layers.empty() ? ab.sweep.table.table.names() : ab.sweep.layers;
    for (const auto& layer : layers)
        for (auto N : ab.sweep.batches)
            for (const char* run : runs) {
                SweepStep sw = ab.sweep;
                sw.layers = {layer};
                sw.batches = {N};
                sw.out_dir = parts;
                sw.csv = std::string(run) + "_" + layer + "_n" + std::to_string(N) + ".csv";
                auto args = sweep_command_line(sw);
                args.insert(args.begin(), run[0] == 'b' ? ab.before : exe);
                cmds.push_back(args);
                made[run].push_back((parts / sw.csv).string());
            }
    auto run_csv = [&](const char* run) { return (out_dir / (stem + "." + run + ".csv")).string(); };
    for (const char* run : runs) {
        std::vector<std::string> merge{run[0] == 'b' ? ab.before : exe, "merge"};
        merge.insert(merge.end(), made[run].begin(), made[run].end());
        if (made[run].size() == 1) merge = {"cp", made[run][0]};  // merge joins two or more
        else merge.push_back("-o");
        merge.push_back(run_csv(run));
        cmds.push_back(merge);
    }
    cmds.push_back({exe, "compare", run_csv("before1"), run_csv("after1"), "--again", run_csv("before2"),
                    run_csv("after2"), "--csv", (out_dir / ab.sweep.csv).string()});
    return cmds;
}

}  // namespace

std::vector<StepCommands> step_commands(const Plan& plan, const fs::path& out_dir, const fs::path& build_dir,
                                        const std::vector<std::size_t>& selected) {
    auto chosen = [&](std::size_t i) {
        return selected.empty() || std::find(selected.begin(), selected.end(), i) != selected.end();
    };
    const std::string exe = (build_dir / "convstudy").string();
    const bool one_process = sweeps_in_one_process(plan);
    bool first_sweep = true;
    const std::string B = build_dir.string();
    auto out = [&](const std::string& name) { return (out_dir / name).string(); };
    std::vector<StepCommands> all;
    for (std::size_t i = 0; i < plan.steps.size(); ++i) {
        const Step& st = plan.steps[i];
        StepCommands c;
        c.index = i;
        c.kind = st.kind;
        c.log = st.log;
        c.timeout_s = st.timeout_s;
        if (const auto* bs = std::get_if<BuildStep>(&st.body)) {
            c.commands = build_commands(*bs, B);
        } else if (const auto* gt = std::get_if<GpuTestsStep>(&st.body)) {
            c.commands = gpu_tests_commands(*gt, st.timeout_s, build_dir);
        } else if (const auto* gd = std::get_if<GoldenStep>(&st.body)) {
            c.commands = golden_commands(*gd, exe);
        } else if (const auto* sw0 = std::get_if<SweepStep>(&st.body)) {
            if (one_process) {
                // every (selected) sweep step in the first selected one's `sweep --plan` process; the
                // others have no command
                if (first_sweep && chosen(i)) {
                    c.commands = {{exe, "sweep", "--plan", plan.file.string(), "--out", out_dir.string()}};
                    std::vector<std::string> picked;
                    int limit = 0;
                    for (std::size_t j = 0; j < plan.steps.size(); ++j) {
                        const Step& other = plan.steps[j];
                        if (other.kind != StepKind::sweep || !chosen(j)) continue;
                        picked.push_back(std::to_string(j));
                        limit = (limit < 0 || !other.timeout_s) ? -1 : limit + other.timeout_s;
                    }
                    auto& cmd = c.commands.front();
                    if (!selected.empty()) cmd.insert(cmd.end(), {"--steps", join(picked, ",")});
                    c.timeout_s = std::max(limit, 0);
                    first_sweep = false;
                }
            } else {
                SweepStep sw = *sw0;
                sw.out_dir = out_dir;
                c.commands = sweep_commands(sw, exe);
            }
        } else if (const auto* pr = std::get_if<ProfileStep>(&st.body)) {
            c.commands = profile_commands(*pr, exe, out);
        } else if (const auto* sa = std::get_if<SanitizeStep>(&st.body)) {
            c.commands = sanitize_commands(
                *sa, B, out(sa->summary),
                (fs::temp_directory_path() / ("convstudy-sanitize-" + plan.name + "-" + std::to_string(i))).string());
        } else if (const auto* py = std::get_if<PythonStep>(&st.body)) {
            std::vector<std::string> cmd{"env", "PYTHONUNBUFFERED=1", "python3", "scripts/" + py->script};
            for (const auto& a : py->args) cmd.push_back(substitute_out(a, out_dir.string()));
            c.commands = {cmd};
        } else if (const auto* mg = std::get_if<MergeStep>(&st.body)) {
            std::vector<std::string> cmd{exe, "merge"};
            for (const auto& in : mg->inputs) cmd.push_back(out(in));
            cmd.insert(cmd.end(), {"-o", out(mg->output)});
            c.commands = {cmd};
        } else if (const auto* cp = std::get_if<CompareStep>(&st.body)) {
            std::vector<std::string> cmd{exe, "compare", cp->baseline, out(cp->csv)};
            cmd.insert(cmd.end(), cp->flags.begin(), cp->flags.end());
            if (!cp->output.empty()) cmd.insert(cmd.end(), {"--csv", out(cp->output)});
            c.commands = {cmd};
        } else if (const auto* tu = std::get_if<TuneStep>(&st.body)) {
            c.commands = tune_commands(*tu, exe, out(tu->output));
        } else if (const auto* ch = std::get_if<ChainStep>(&st.body)) {
            const std::string tuning = ch->tuning.empty() ? "" : ch->tuning_is_output ? out(ch->tuning) : ch->tuning;
            c.commands = {chain_command(*ch, exe, out(ch->csv), tuning)};
        } else if (const auto* ab = std::get_if<AbStep>(&st.body)) {
            c.commands = ab_commands(*ab, exe, out_dir);
        }
        all.push_back(std::move(c));
    }
    return all;
}

std::string plan_summary(const Plan& plan) {
    const std::string kinds = join(plan.steps, ", ", [](const auto& s) { return to_string(s.kind); });
    return plan.name + ": " + std::to_string(plan.steps.size()) + " step" + (plan.steps.size() == 1 ? "" : "s") +
           " (" + kinds + "): " + plan.purpose;
}

CLI::App* add_plan_command(CLI::App& app, PlanArgs& a) {
    auto* p = app.add_subcommand("plan", "read plan files (plans/*.json: the GPU machine's jobs, scripts/device.sh)");
    p->require_subcommand(1);
    a.check = p->add_subcommand("check", "validate plans: one line per plan; exit 2 naming the file, step and field "
                                         "of the first error");
    a.check->add_option("plans", a.files, "plan files")->required()->expected(1, -1);
    a.check->add_option("--root", a.root, "the repository the plans' paths are relative to (default: the folder "
                                          "above the plan that holds CMakePresets.json)");
    a.steps = p->add_subcommand("steps", "print the commands scripts/device.sh runs for a plan: one shell-quoted line "
                                         "per command, INDEX KIND LOG TIMEOUT_S ARGV...");
    a.steps->add_option("plan", a.plan_file, "plan file")->required();
    a.steps->add_option("--out", a.out, "the output folder the steps write to");
    a.steps->add_option("--build-dir", a.build_dir, "the build folder (convstudy is <build-dir>/convstudy)");
    a.steps->add_option("--root", a.root, "as for check");
    a.steps->add_option("--steps", a.selected,
                        "the steps the runner will run (its STEPS; default: all): a plan's sweeps that run in one "
                        "process run the selected ones only")
        ->delimiter(',');
    return p;
}

int cmd_plan(const PlanArgs& a) {
    if (a.steps && *a.steps) {
        const Plan plan = load_plan(a.plan_file, a.root);
        for (const auto& sc : step_commands(plan, a.out, a.build_dir, a.selected))
            for (const auto& cmd : sc.commands) {
                std::string line = std::to_string(sc.index) + " " + std::string(to_string(sc.kind)) + " " +
                                   shell_quote(sc.log) + " " + std::to_string(sc.timeout_s);
                for (const auto& w : cmd) line += " " + shell_quote(w);
                std::printf("%s\n", line.c_str());
            }
        return 0;
    }
    int rc = 0;
    for (const auto& f : a.files) {
        try {
            const Plan plan = load_plan(f, a.root);
            std::printf("%s: %s\n", f.c_str(), plan_summary(plan).c_str());
        } catch (const Error& e) {
            std::fprintf(stderr, "error: %s\n", e.what());
            rc = 2;
        }
    }
    return rc;
}

}  // namespace cs::cli
