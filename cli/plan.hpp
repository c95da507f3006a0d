// Plans: experiments as data. A plan (JSON under plans/) names a job for the GPU machine — a
// build, GPU tests, golden files, sweeps, profiles, sanitizer jobs, Python anchors, merges and
// comparisons — as ordered, typed steps; scripts/device.sh runs it. docs/cli.md describes the
// format; `convstudy plan check FILE...` validates plans and `convstudy plan steps FILE` prints
// the commands the runner executes.
//
// Strings live only at the edge: load_plan() turns every field into its type (enums, batch
// sizes, layouts, memory modes, axis requests, data scales) and checks names against the
// registry, the layer tables, CMakePresets.json and scripts/, so a plan that loads is one whose
// steps can be started. An error names the file, the step (index and kind) and the field.
#pragma once

#include "chain_run.hpp"
#include "datagen.hpp"
#include "harness.hpp"
#include "join.hpp"
#include "layer.hpp"
#include "names.hpp"
#include "problem_data.hpp"
#include "shard.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace CLI {
class App;
}

namespace cs::cli {

enum class StepKind { build, gpu_tests, golden, sweep, profile, sanitize, python, merge, compare, ab, tune, chain };

// A sweep's or tune's `gpus`: at most this many shards at once, one per GPU of the machine.
inline constexpr int kMaxPlanGpus = 8;
// In `plan steps`, a command whose first word is kGpuParallel runs in the background (the rest
// of the line is the command) beside the others of its step, and one that is kGpuWait waits for
// them all and fails when one failed: the runner starts a step's shards at once.
inline constexpr const char* kGpuParallel = "&";
inline constexpr const char* kGpuWait = "wait";
std::string_view to_string(StepKind k);  // "build", "gpu-tests", ... (the JSON spelling)
std::optional<StepKind> parse_step_kind(std::string_view s);

// A layer table: the built-in one (by its name, "alexnet") or a JSON file (a path relative to
// the repository root, as the runner's convstudy sees it: it runs in the root).
struct TableRef {
    std::string path;  // empty: built in; else as written in the plan
    LayerTable table;  // loaded: its name and layers
};

// `cmake --preset PRESET -B <build dir> CMAKE_ARGS...`, then the targets (none: all).
struct BuildStep {
    std::string preset = "device";  // a configure preset of CMakePresets.json
    std::vector<std::string> cmake_args;
    std::vector<std::string> targets;
};

// The GPU tests with CONVSTUDY_REQUIRE_GPU=1 (a missing device fails): ctest's label and
// regex, or (filter given) the test program with these Catch2 test specs.
struct GpuTestsStep {
    std::string label = "gpu";
    std::string regex;                // ctest -R; empty: none
    std::vector<std::string> filter;  // Catch2 specs ("[axes]"); non-empty: run the program directly
};

// `convstudy generate`: golden files for these batches and layers (empty: every layer).
struct GoldenStep {
    TableRef table;
    std::vector<std::int64_t> batches;
    std::vector<std::string> layers;
    DataScales scales;
    bool cpu_timing = true;  // false: --no-cpu-timing
    bool onednn = true;      // false: --no-onednn
    bool chain = false;      // the chain golden files of a chain table (generate --chain; no layers, no scales)
};

// One `convstudy sweep` command line, typed and validated. `csv` is a file name in the output
// folder `out_dir` (sweep_steps sets it).
struct SweepStep {
    std::string csv;
    std::filesystem::path out_dir = "out";
    TableRef table;
    std::vector<std::string> variants{"all"};  // "all", or names and aliases the registry knows
    std::vector<std::string> layers;           // empty: every layer of the table
    std::vector<std::int64_t> batches{1, 32, 128};
    std::vector<gpu::Layout> layouts;          // empty: all (each variant runs those it declares)
    std::vector<gpu::MemoryMode> memory{gpu::MemoryMode::pageable};
    AxisRequests axes;                         // --axis NAME=V1,V2 each
    CheckMode check = CheckMode::golden;
    std::optional<std::int64_t> samples;       // --samples (sampled check)
    DataScales scales;                         // --input-scale, --weight-scale (default 1 and 1)
    int warmup = 3;
    int repeats = 20;
    std::optional<int> host_repeats;      // --host-repeats: h2d/d2h/total over fewer repeats
    std::string kernels_csv;                   // --kernels-csv (with --profile among the flags); a file name
    std::vector<std::string> flags;            // further sweep options, checked against an allow-list
    // GPUs of the machine the rows are dealt over: shard k of `gpus` runs on GPU k-1 (CUDA_VISIBLE_DEVICES), all at
    // once, and their CSVs are merged into `csv` (plan steps: kGpuParallel below).
    int gpus = 1;
};

// Nsight Compute on one row: `convstudy profile` (its metric set, CSV and kernels CSV), or ncu
// itself (ncu_args, its log file) around `convstudy run --profile-target` of the row; or the
// device's own timeline of the row's timed intervals, `convstudy run --timeline` (its CSV).
enum class ProfileMode { convstudy, ncu, timeline };
struct ProfileStep {
    ProfileMode mode = ProfileMode::convstudy;
    TableRef table;
    std::string variant, layer;
    std::int64_t batch = 128;
    gpu::Layout layout = gpu::Layout::nhwc;
    gpu::MemoryMode memory = gpu::MemoryMode::pageable;
    std::vector<std::pair<std::string, std::string>> axes;  // NAME=VALUE, one value each
    CheckMode check = CheckMode::sampled;
    int warmup = 2;
    int repeats = 1;
    std::string metrics = "default";      // convstudy mode
    std::string output;                   // file name: the row's CSV (convstudy), ncu's --log-file (ncu) or the
                                          // timeline's CSV (timeline)
    std::string kernels_csv;              // convstudy mode: --kernels-csv file name
    std::vector<std::string> ncu_args;    // ncu mode
};

// scripts/sanitize.sh with its SANITIZE_* settings; the summary is a file in the output folder.
enum class SanitizeTool { memcheck, racecheck, initcheck, synccheck };
// The built-in tables at N=1 (alexnet, vgg16, resnet50) or the GPU tests' odd shapes at N=1 and 3.
// chain: `convstudy chain` on AlexNet at N=1 (scripts/sanitize.sh), which needs its chain golden set.
enum class SanitizeTarget { alexnet, odd, vgg16, resnet50, chain };
inline constexpr NameTable<SanitizeTarget, 5> kSanitizeTargetNames{{{SanitizeTarget::alexnet, "alexnet"},
                                                                    {SanitizeTarget::odd, "odd"},
                                                                    {SanitizeTarget::vgg16, "vgg16"},
                                                                    {SanitizeTarget::resnet50, "resnet50"},
                                                                    {SanitizeTarget::chain, "chain"}}};
enum class SanitizeSplit { family, variant };
struct SanitizeStep {
    std::vector<SanitizeTool> tools{SanitizeTool::memcheck, SanitizeTool::racecheck, SanitizeTool::initcheck,
                                    SanitizeTool::synccheck};
    std::vector<std::string> variants;  // empty: every hand-written variant
    SanitizeSplit split = SanitizeSplit::family;
    std::vector<SanitizeTarget> targets{SanitizeTarget::alexnet, SanitizeTarget::odd};
    std::vector<gpu::MemoryMode> memory{gpu::MemoryMode::pageable};
    AxisRequests axes;
    int job_seconds = 540;
    int deadline_s = 0;  // 0: none
    int jobs = 0;        // 0: sanitize.sh's default (the cores)
    double workspace_gib = 4;
    // K/N: every N-th job from the K-th (scripts/sanitize.sh's job order), so that N calls of
    // the GPU machine run a plan whose jobs do not fit one; 1/1: all of them.
    Shard shard;
    std::string summary = "sanitizer.log";
};

// python3 scripts/SCRIPT ARGS; "{out}" in an argument is the output folder.
struct PythonStep {
    std::string script;  // a file of scripts/
    std::vector<std::string> args;
};

// `convstudy merge`: earlier steps' CSVs (file names in the output folder) into one.
struct MergeStep {
    std::vector<std::string> inputs;
    std::string output;
};

// `convstudy compare BASELINE CSV`: a committed CSV (a path in the repository) against an
// earlier step's CSV; `output` (optional) gets compare's per-row CSV.
struct CompareStep {
    std::string baseline;
    std::string csv;
    std::string output;
    std::vector<std::string> flags;  // --markdown, --only-changed, --metric M, --fail-slower F
};

// Two programs timed against each other (a change that must not move a number): the sweep
// run by `before` (a program carried to the machine, its path from the repository root) and by
// this build, per (layer, N) in the order before, after, before, after, each in a process of
// its own; each side's parts merged by its own program; then `compare A B --again A2 B2` judges
// by the A/B rule (compare_ab.hpp). sweep.csv is compare's per-row CSV; the four runs are
// <stem>.before1.csv, .after1, .before2, .after2 beside it, their parts in <stem>.parts/.
struct AbStep {
    std::string before;
    SweepStep sweep;
};

// `convstudy tune`: the table's (layer, N, class, layout) tasks searched within the budget, the
// tuning file `output` (in the output folder) written after every task.
struct TuneStep {
    TableRef table;
    std::vector<std::string> layers;   // empty: every layer of the table
    std::vector<std::int64_t> batches{1, 32, 128};
    std::vector<std::string> classes{"fp16", "bf16", "tf32"};  // precision classes as spelled
    std::vector<gpu::Layout> layouts;  // all when the plan names none
    double budget_s = 600;
    int warmup = 3;
    int repeats = 10;
    Shard shard;
    int gpus = 1;  // as SweepStep::gpus: shard k of the tasks on GPU k-1 at once, the files merged into `output`
    std::string output;
};

// `convstudy chain`: a chain table run as a network (cli/chain.hpp), ours and cuDNN's chain; its
// golden sets come from an earlier golden step with chain true. `csv` a file name in the output folder.
struct ChainStep {
    TableRef table;
    std::vector<std::int64_t> batches{1};
    std::vector<std::string> classes{"fp16"};
    std::vector<gpu::Layout> layouts{gpu::Layout::nhwc};
    std::string choice = "auto";
    std::vector<std::string> sides{"ours", "cudnn"};
    std::string csv;
    int warmup = 3, repeats = 20, layer_repeats = 20;
    std::optional<int> tail_repeats;  // unset: the command's default (200 at N=1)
    bool pdl = true;                  // false: --no-pdl
    int mega_ctas = gpu::ChainOptions{}.mega_ctas_per_sm;  // the megakernel's CTAs per SM (--megakernel-ctas)
    // The tuning file auto-<class> takes (--tuning): empty, the built-in; else a tune step's output
    // (`tuning_is_output`: in the output folder) or a file of the tree.
    std::string tuning;
    bool tuning_is_output = false;
};

struct Step {
    StepKind kind = StepKind::build;
    std::string log;          // the runner writes the step's output here (a file name)
    int timeout_s = 0;        // 0: none
    std::variant<BuildStep, GpuTestsStep, GoldenStep, SweepStep, ProfileStep, SanitizeStep, PythonStep, MergeStep,
                 CompareStep, AbStep, TuneStep, ChainStep>
        body;
};

struct Plan {
    std::filesystem::path file;  // as given to load_plan
    std::filesystem::path root;  // the repository root its paths are relative to
    std::string name;
    std::string purpose;
    std::vector<Step> steps;
};

// Reads and validates a plan; throws cs::Error "<file>: step <i> (<kind>): '<field>': <why>"
// (or "<file>: '<field>': ..." for a top-level field). `root` empty: the nearest folder above
// the file that holds CMakePresets.json (a plan in plans/ of a checkout: the checkout).
Plan load_plan(const std::filesystem::path& path, const std::filesystem::path& root = {});
// The same from JSON text; `source` names it in errors.
Plan parse_plan(std::string_view json_text, const std::string& source, const std::filesystem::path& root);

// The plan's sweep steps in order, their CSVs in `out_dir`.
std::vector<SweepStep> sweep_steps(const Plan& plan, const std::filesystem::path& out_dir = "out");
// The `convstudy` arguments (from "sweep" on) of one sweep step.
std::vector<std::string> sweep_command_line(const SweepStep& s);

// Whether the plan's sweep steps run in one `convstudy sweep --plan` process: two or more of
// them, one after the other with no other step between (a golden step between two sweeps
// makes the later one's golden sets, so that sweep must wait for it: then each sweep step is a
// process of its own).
bool sweeps_in_one_process(const Plan& plan);
// What the runner executes for each step: one or more commands (argv), the log file, the time
// limit. `build_dir` is where the build step builds (convstudy is build_dir/convstudy).
// Sweep steps: with sweeps_in_one_process, the first is `convstudy sweep --plan FILE --out DIR`
// (time limit: the sum of theirs, none if one has none) and the others have no command; else
// each is its own `convstudy sweep` (sweep_command_line). `selected` (the runner's STEPS; empty:
// every step): the one process is then the first selected sweep step's, `--steps` naming the
// selected sweeps, so that STEPS can pick sweep steps of such a plan. scripts/device.sh runs
// whatever this returns.
struct StepCommands {
    std::size_t index = 0;
    StepKind kind = StepKind::build;
    std::string log;
    int timeout_s = 0;
    std::vector<std::vector<std::string>> commands;
};
std::vector<StepCommands> step_commands(const Plan& plan, const std::filesystem::path& out_dir,
                                        const std::filesystem::path& build_dir,
                                        const std::vector<std::size_t>& selected = {});
// "reference: 4 steps (build, golden, sweep, python): <purpose>"
std::string plan_summary(const Plan& plan);

// `convstudy plan check FILE...` and `convstudy plan steps FILE --out DIR --build-dir DIR`.
struct PlanArgs {
    std::vector<std::string> files;  // check
    std::string plan_file;           // steps
    std::string root;
    std::string out = "out";
    std::string build_dir = "build-device";
    CLI::App* check = nullptr;
    CLI::App* steps = nullptr;
    std::vector<std::size_t> selected;  // steps --steps: the runner's STEPS (empty: every step)
};
CLI::App* add_plan_command(CLI::App& app, PlanArgs& a);
int cmd_plan(const PlanArgs& a);

// Shared by plan.cpp (reading a plan) and plan_steps.cpp (its command lines).
namespace plan_detail {
std::string join_batches(const std::vector<std::int64_t>& v);                // "1,32,128"
const char* to_string(CheckMode m);                                          // golden, sampled, auto
}  // namespace plan_detail

}  // namespace cs::cli
