// The command line's shared pieces (internal to cli/): the option groups several commands
// take, the helpers `run` and `sweep` both use (defined in commands.cpp), and the commands with
// a file of their own: list.cpp, generate.cpp, run.cpp, sweep.cpp. main(), schema and verify's
// wiring are in commands.cpp; compare, merge, plan and profile have their own headers.
#pragma once

#include "device.hpp"
#include "engine_choice.hpp"
#include "error.hpp"
#include "harness.hpp"
#include "join.hpp"
#include "layer.hpp"
#include "problem_data.hpp"
#include "profile.hpp"
#include "progress.hpp"
#include "results.hpp"
#include "tuning.hpp"
#include "shard.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cs::cli::detail {

constexpr int kExitFail = 1;
constexpr int kExitInput = 2;
constexpr int kExitSkipped = 3;
constexpr int kExitNoDevice = 4;
constexpr std::int64_t kMaxBatch = 1 << 20;

// --table ARG: a built-in table's name (exactly as `convstudy list` shows it) selects that
// table; anything else is a JSON file's path. Empty: the built-in AlexNet table.
struct TableOpt {
    std::string path;  // as given
    LayerTable load() const;
};

struct TimingOpts {
    int warmup = 3;
    int repeats = 20;
    bool no_flush = false;
    double workspace_limit_gib = 0;
    int streams = 4;
    int chunks = 0;
    int host_repeats = -1;       // -1: every timed repeat times the host copies too
    bool no_recheck = false;
    bool no_cudnn_rtc = false;
    bool no_retime = false;
    bool reuse_engines = false;
    bool build_engines_only = false;
    std::uint64_t order_seed = gpu::RunOptions{}.order_seed;
    std::string engine_choices;  // "" = <golden>/engine_choices.json, "none", or a path
    std::string tuning;          // --tuning: a tuning file ("" = CONVSTUDY_TUNING, else the built-in tables)
    // The run's options; `engines` (the command's engine memory, loaded from its file) gets
    // the runtime-compiled, reuse and build-only switches and reaches every plan through them,
    // as `tuning_table` does (load_tuning; null: the built-in tables).
    gpu::RunOptions to_run_options(gpu::EngineChoices& engines, const gpu::Tuning* tuning_table) const {
        gpu::RunOptions o;
        o.warmup = warmup;
        o.repeats = repeats;
        o.host_repeats = host_repeats < 0 ? -1 : std::min(host_repeats, repeats);
        o.check_every_run = !no_recheck;
        o.order_seed = order_seed;
        engines.set_mode({.reuse_only = reuse_engines, .build_only = build_engines_only,
                          .runtime_compiled = !no_cudnn_rtc});
        o.engines = &engines;
        o.tuning = tuning_table;
        o.flush_l2 = !no_flush;
        o.workspace_limit = std::size_t(workspace_limit_gib * double(1ull << 30));
        o.streams = streams;
        o.chunks = chunks;
        return o;
    }
};

struct CheckOpts {
    std::string mode = "golden";
    std::int64_t samples = kDefaultSamples;
    std::uint64_t seed = kDefaultSeed;
    std::string input_scale = "1", weight_scale = "1";
    bool no_cpu_timing = false;
    // The data scales asked for: they pick the golden sets (whose manifest must record
    // them) or scale the sampled check's data.
    DataScales scales() const {
        return {parse_data_scale(input_scale, "--input-scale"), parse_data_scale(weight_scale, "--weight-scale")};
    }
    CheckMode parse() const {
        if (mode == "golden") return CheckMode::golden;
        if (mode == "sampled") return CheckMode::sampled;
        if (mode == "auto") return CheckMode::automatic;
        throw Error("unknown check mode '" + mode + "'; valid modes: golden, sampled, auto");
    }
};

void add_timing_options(CLI::App* c, TimingOpts& t);
void add_check_options(CLI::App* c, CheckOpts& o);
void check_batches(const std::vector<std::int64_t>& batches);
const Layer& find_layer(const LayerTable& t, const std::string& name);
gpu::VariantRef find_variant_or_throw(const std::string& name);
gpu::MemoryMode parse_mode_or_throw(const std::string& s);
gpu::Layout parse_layout_or_throw(const std::string& s);
// The values a list option names, each through `parse`; "all" among them: `all`.
template <class T, class Parse>
std::vector<T> values_or_all(const std::vector<std::string>& names, std::vector<T> all, Parse parse) {
    std::vector<T> out;
    for (const auto& s : names) {
        if (s == "all") return all;
        out.push_back(parse(s));
    }
    return out;
}
std::unique_ptr<gpu::DeviceContext> open_device();
RunMeta make_meta(gpu::DeviceContext& ctx, const gpu::RunOptions& o, bool ceilings, std::uint64_t seed,
                  const DataScales& scales);
std::optional<double> im2col_gemm_reference(gpu::DeviceContext& ctx, gpu::Precision precision, const Layer& l,
                                            std::int64_t N);
Row make_row(const gpu::Variant& v, gpu::MemoryMode mode, gpu::Layout layout, const ProblemData& d);
// Runs and checks one row (a group of one, gpu::run_variant).
Row run_one(gpu::DeviceContext& ctx, const gpu::Variant& v, gpu::MemoryMode mode, gpu::Layout layout,
            const ProblemData& d, const gpu::RunOptions& opt, const gpu::Config& config);
// Whether v's registry row declares layout l.
bool declares(const gpu::Variant& v, gpu::Layout l);
bool have_golden(const std::string& root, const LayerTable& table, const Layer& l, std::int64_t N,
                 const DataScales& scales);
ProblemData load_problem(const std::string& root, const LayerTable& table, const Layer& l, std::int64_t N,
                         const CheckOpts& c);
std::vector<std::string> child_options(const CheckOpts& c, const TimingOpts& t, const std::filesystem::path& choices,
                                       int repeats);
// The tuning table a command's plans take: --tuning FILE, else the file CONVSTUDY_TUNING names,
// else nothing (the built-in per-card tables). Read before the device is asked for, so that a bad
// file is reported on any machine (cs::Error naming the file and the entry).
std::optional<gpu::Tuning> load_tuning(const TimingOpts& t);
ProfileTarget profile_target(const Row& row, const TableOpt& table, const std::string& golden, const CheckOpts& c,
                             const TimingOpts& t, const std::filesystem::path& choices);
void retime_strays(std::vector<Row>& rows, const TableOpt& table, const std::string& golden, const CheckOpts& c,
                   const TimingOpts& t, const std::filesystem::path& choices, Progress& progress);
std::vector<std::string> repeat_options(const CheckOpts& c, const TimingOpts& t, const std::filesystem::path& choices);
double own_cudnn_ms(const Row& row);
// The --axis help: every swept variant's axes and values.
std::string axes_help();

// ---- list, generate, run (cli/list.cpp, generate.cpp, run.cpp) -----------------------------

int cmd_list(const TableOpt& topt, bool json, bool markdown);
// The registry as docs/variants.md's table (`list --markdown`): one row per variant with its
// family, ladder, rung, class, layouts, axes and idea.
std::string variants_markdown();

struct GenerateArgs {
    TableOpt table;
    std::vector<std::int64_t> batches{1, 32, 128};
    std::string out = "golden";
    std::uint64_t seed = kDefaultSeed;
    std::string input_scale = "1", weight_scale = "1";
    std::vector<std::string> only;
    bool quiet = false, no_cpu_timing = false, no_onednn = false;
    bool chain = false;
};

int cmd_generate(const GenerateArgs& a);

struct RunArgs {
    TableOpt table;
    std::vector<std::string> axes;  // --axis NAME=VALUE
    std::string variant, layer, memory, layout, csv, golden = "golden";
    std::int64_t batch = 0;
    TimingOpts timing;
    CheckOpts check;
    bool profile_target = false;  // run under ncu by `profile`: the engine choices stay as they are
    ProfileOptions prof;          // `profile` only
    std::string timeline;         // `run` only: the device's timeline of the run's timed intervals (CSV)
};

// `run`, or with profiling `profile` (run under Nsight Compute).
int cmd_run(RunArgs a, bool profiling = false);

// ---- sweep (cli/sweep.cpp) ----------------------------------------------------------------

struct SweepArgs {
    TableOpt table;
    std::vector<std::string> variants{"all"}, layers, memory{"pageable"}, layouts{"all"};
    std::vector<std::int64_t> batches{1, 32, 128};
    std::string csv, golden = "golden";
    bool quiet = false;
    TimingOpts timing;
    CheckOpts check;
    std::string shard = "1/1";  // K/N: this process's share of the rows (shard.hpp)
    std::vector<std::string> axes;  // --axis NAME=VALUES
    bool profile = false;       // ncu counters of every PASS row (slow)
    int cudnn_processes = 1;    // processes the cuDNN rows' times are the median over
    int engine_build_processes = -1;  // processes that build cuDNN's engines before timing; -1: default
    ProfileOptions prof;
    std::string plan, out = "out";  // --plan: every sweep step of a plan, this process
    std::vector<std::size_t> plan_steps;  // --steps: only these steps of the plan (indices; empty: all)
};

// The options of `sweep` (also parsed for each step of `sweep --plan`).
void add_sweep_options(CLI::App* s, SweepArgs& sw, const std::string& table_help, const std::string& golden_help,
                       const char* golden_env);
int cmd_sweep(const SweepArgs& a);
int cmd_sweep_plan(const SweepArgs& top, const std::string& table_help, const std::string& golden_help,
                   const char* golden_env);

}  // namespace cs::cli::detail
