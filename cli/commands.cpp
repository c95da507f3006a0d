// The convstudy commands. Exit codes (docs/cli.md): 0 success (every row PASS or SKIP),
// 1 a row FAILed or hit a CUDA error (`verify`: a golden set failed; `compare --fail-slower`:
// a row slower than allowed), 2 bad input (options, files), 3 `run` skipped the variant (its
// reason is printed), 4 no CUDA device for a GPU command, 5 `profile` or `sweep --profile`
// cannot profile (no ncu, or no permission to read the GPU's counters).
// `run` and `sweep` check their options, paths and golden files before they ask for a device.
#include "commands.hpp"
#include "command_common.hpp"

#include "ceilings.hpp"
#include "chain.hpp"
#include "compare.hpp"
#include "cpu_anchor.hpp"
#include "device.hpp"
#include "error.hpp"
#include "engine_choice.hpp"
#include "engine_choices_file.hpp"
#include "golden.hpp"
#include "golden_chain.hpp"
#include "golden_manifest.hpp"
#include "harness.hpp"
#include "help_format.hpp"
#include "merge.hpp"
#include "nvtx.hpp"
#include "plan.hpp"
#include "tune.hpp"
#include "problem_data.hpp"
#include "process.hpp"
#include "profile.hpp"
#include "shard.hpp"
#include "progress.hpp"
#include "time_split.hpp"
#include "results.hpp"
#include "tolerance.hpp"
#include "verify.hpp"
#include "version.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <vector>

namespace cs::cli {

namespace detail {

class NoDevice : public Error {
public:
    using Error::Error;
};



void add_timing_options(CLI::App* c, TimingOpts& t) {
    c->add_option("--warmup", t.warmup, "untimed runs before timing")->check(CLI::Range(0, 1000));
    c->add_option("--repeats", t.repeats,
                  "timed runs (median, min, max reported); 0: check only, no timing and no ceilings (for the "
                  "sanitizers)")
        ->check(CLI::Range(0, 100000));
    c->add_option("--host-repeats", t.host_repeats,
                  "pageable and pinned modes: the timed repeats that also time the host copies (h2d, convert, "
                  "d2h, total; column host_repeats); the others time the kernels alone (default: all)")
        ->check(CLI::Range(0, 100000));
    c->add_flag("--no-recheck", t.no_recheck,
                "check only the first run, not every warm-up and timed repeat (column checked_runs says which)");
    c->add_option("--order-seed", t.order_seed,
                  "seed of the round-robin order in which a timing group's rows run each repeat (column "
                  "timing_order_seed)");
    c->add_flag("--no-cudnn-rtc", t.no_cudnn_rtc,
                "leave cuDNN's runtime-compiled engines out of its engine search (they are in by default; "
                "each takes seconds to compile, in the row's set-up)");
    c->add_flag("--no-retime", t.no_retime,
                "sweep: do not re-time, in a fresh process, a cuDNN row whose median strays over 10% from its engine "
                "search's (column cudnn_retime_ms)");
    c->add_flag("--reuse-engines", t.reuse_engines,
                "cuDNN rows the engine-choices file remembers time the configuration chosen before alone (an "
                "older file: that engine's configurations), no search (sweep --cudnn-processes, re-times)");
    c->add_flag("--build-engines-only", t.build_engines_only,
                "cuDNN rows build every candidate engine configuration and stop (SKIP), nothing timed: the "
                "runtime-compiled ones compile into the driver's JIT cache (what sweep's engine-build processes do)");
    c->add_flag("--no-flush", t.no_flush, "do not flush L2 before each timed interval");
    c->add_option("--workspace-limit", t.workspace_limit_gib,
                  "largest workspace a variant may allocate, GiB (default: half the free device memory)")
        ->check(CLI::NonNegativeNumber)
        ->default_str("");  // 0 stands for the default above
    c->add_option("--streams", t.streams, "streams memory mode: number of streams")->check(CLI::Range(1, 64));
    c->add_option("--chunks", t.chunks, "streams memory mode: chunks of the batch (default 2 per stream)")
        ->check(CLI::Range(0, 1 << 20))
        ->default_str("");  // 0 stands for the default above
    c->add_option("--engine-choices", t.engine_choices,
                  "file of the cuDNN engines chosen before, kept while within 3% of the fastest (default: "
                  "<golden>/engine_choices.json; none: choose afresh)");
    c->add_option("--tuning", t.tuning,
                  "tuning file the plans take their measured choices from (the Hopper rungs' tiles; format: "
                  "docs/usage.md; default: the file CONVSTUDY_TUNING names, else the built-in per-card tables)");
}

void check_batches(const std::vector<std::int64_t>& batches) {
    if (batches.empty()) throw Error("--batch: give at least one batch size");
    for (auto n : batches)
        if (n < 1 || n > kMaxBatch)
            throw Error("--batch: " + std::to_string(n) + " is not a valid batch size (1 to " +
                        std::to_string(kMaxBatch) + ")");
}

// Edit distance (insertions, deletions, substitutions), case-insensitive.
std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                              std::tolower(static_cast<unsigned char>(b[j - 1]));
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

// " (did you mean 'a' or 'b'?)": up to three names within a third of the name's length (at
// least 2 edits) of `name`, or that contain it; empty when none is close.
std::string did_you_mean(const std::string& name, const std::vector<std::string>& names) {
    std::vector<std::pair<std::size_t, std::string>> close;
    const std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
    std::string lower = name;
    for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
    for (const auto& n : names) {
        std::string ln = n;
        for (char& c : ln) c = char(std::tolower(static_cast<unsigned char>(c)));
        const std::size_t d = edit_distance(name, n);
        if (d <= limit || (lower.size() >= 3 && ln.find(lower) != std::string::npos)) close.emplace_back(d, n);
    }
    std::stable_sort(close.begin(), close.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    if (close.size() > 3) close.resize(3);
    if (close.empty()) return "";
    std::string s = " (did you mean ";
    for (std::size_t i = 0; i < close.size(); ++i)
        s += (i == 0 ? "" : i + 1 == close.size() ? " or " : ", ") + ("'" + close[i].second + "'");
    return s + "?)";
}

LayerTable TableOpt::load() const {
    if (path.empty()) return default_layer_table();
    std::error_code ec;
    if (const LayerTable* b = find_builtin_layer_table(path)) {
        if (std::filesystem::exists(path, ec))
            std::fprintf(stderr, "note: --table %s selects the built-in table; give ./%s for the file of that name\n",
                         path.c_str(), path.c_str());
        return *b;
    }
    if (!std::filesystem::exists(path, ec)) {
        const auto names = builtin_layer_table_names();
        std::string hint = did_you_mean(path, names);
        if (hint.empty()) hint = did_you_mean(std::filesystem::path(path).stem().string(), names);
        throw Error("--table " + path + ": no such file, and not the name of a built-in table" + hint +
                    "; built-in tables: " + join(names, ", "));
    }
    return load_layer_table(path);
}

const Layer& find_layer(const LayerTable& t, const std::string& name) {
    const Layer* l = t.find(name);
    if (!l)
        throw Error("unknown layer '" + name + "' in " + t.source + did_you_mean(name, t.names()) +
                    "; valid layers: " + join(t.names(), ", "));
    return *l;
}

gpu::VariantRef find_variant_or_throw(const std::string& name) {
    auto ref = gpu::find_variant(name);
    if (!ref.variant) {
        std::vector<std::string> names;
        for (const auto& v : gpu::registry()) {
            names.push_back(v.name);
            for (const auto& a : v.aliases) names.push_back(a.name);
        }
        std::string why = "unknown variant '" + name + "'" + did_you_mean(name, names) + "; `convstudy list` shows all " +
                          std::to_string(gpu::registry().size()) + " variants and their aliases";
#ifndef CONVSTUDY_HAVE_CUDNN
        if (name.rfind("cudnn", 0) == 0) why += " (the cuDNN variants are not in this build: cuDNN was not found)";
#endif
        throw Error(why);
    }
    return ref;
}

gpu::MemoryMode parse_mode_or_throw(const std::string& s) {
    auto m = gpu::parse_memory_mode(s);
    if (!m) throw Error("unknown memory mode '" + s + "'; valid modes: " + gpu::memory_mode_names());
    return *m;
}

// The device for `run` and `sweep`; exit 4 (NoDevice) when there is none, or when this build
// has no kernels to run on it (CONVSTUDY_KERNELS=OFF: the host-only build of the CPU tests).
// The device is asked first, so that a machine without a GPU gets the same answer from every build.
std::unique_ptr<gpu::DeviceContext> open_device() {
    std::unique_ptr<gpu::DeviceContext> ctx;
    try {
        ctx = std::make_unique<gpu::DeviceContext>(0);
    } catch (const gpu::CudaError& e) {
        throw NoDevice(e.what());
    } catch (const Error& e) {
        throw NoDevice(e.what());
    }
    if (!gpu::kernels_built()) throw NoDevice(gpu::kernels_absent_reason());
    return ctx;
}

// `ceilings`: measure the per-class ceilings (a second or two of cuBLAS GEMMs and a large
// copy) for pct_peak and peak_tflops; only the CSV shows them.
RunMeta make_meta(gpu::DeviceContext& ctx, const gpu::RunOptions& o, bool ceilings, std::uint64_t seed,
                  const DataScales& scales) {
    RunMeta m;
    m.seed = seed;
    m.scales = scales;
    m.timestamp = golden_detail::utc_now();  // the golden manifests' format
    const auto& i = ctx.info();
    m.device = i.name;
    m.cc = i.compute_capability();
    m.sms = i.sms;
    m.cuda_runtime = gpu::DeviceInfo::version_string(i.runtime_version);
    m.driver = gpu::DeviceInfo::version_string(i.driver_version);
    // Ceilings of every precision class, measured now on this device (cuBLAS GEMMs and a
    // device-to-device copy); fp32's is the higher of cuBLAS SGEMM and the register-only
    // FMA kernel, the hardware's FMA rate, so no FMA row can pass 100%.
    if (ceilings) {
        const gpu::Ceilings c = gpu::measure_ceilings(ctx);
        m.peak_fp32 = std::max(c.fp32, ctx.fp32_peak_tflops());
        m.peak_tf32 = c.tf32;
        m.peak_fp16 = c.fp16;
        m.peak_bf16 = c.bf16;
        m.copy_gbs = c.copy_gbs;
    }
    m.git_rev = kGitRevision;
    m.tool_version = kToolVersion;
    m.cudnn_version = gpu::cudnn_version();
    m.l2_flush = o.flush_l2;
    m.warmup = o.warmup;
    m.repeats = o.repeats;
    return m;
}

gpu::Layout parse_layout_or_throw(const std::string& s) {
    auto l = gpu::parse_layout(s);
    if (!l) throw Error("unknown layout '" + s + "'; valid layouts: nchw, nhwc");
    return *l;
}


bool declares(const gpu::Variant& v, gpu::Layout l) {
    return std::find(v.layouts.begin(), v.layouts.end(), l) != v.layouts.end();
}

// cuBLAS on the explicit im2col GEMM of the layer (M x K by K x N*E*F) in a precision class: a
// reference, not a ceiling (it streams the im2col matrix, which an implicit GEMM never builds),
// measured in the same run. Empty when it cannot run.
std::optional<double> im2col_gemm_reference(gpu::DeviceContext& ctx, gpu::Precision precision, const Layer& l,
                                   std::int64_t N) {
    try {
        const double ms = gpu::im2col_gemm_ms(ctx, gpu::ceiling_class(precision), l.M, N * l.E() * l.F(), l.C * l.R * l.S);
        if (std::isfinite(ms) && ms > 0) return ms;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "warning: no cuBLAS im2col GEMM reference for %s N=%lld %s: %s\n", l.name.c_str(),
                     static_cast<long long>(N), std::string(gpu::to_string(precision)).c_str(), e.what());
        (void)cudaGetLastError();
    }
    return std::nullopt;
}

// A row's identity and CPU side, before it runs.
Row make_row(const gpu::Variant& v, gpu::MemoryMode mode, gpu::Layout layout, const ProblemData& d) {
    Row row;
    row.layer = d.layer;
    row.N = d.N;
    row.variant = &v;
    row.memory = mode;
    row.layout = layout;
    if (d.cpu.repeats > 0) {
        row.cpu_ms = d.cpu.ms;
        row.cpu_threads = d.cpu.threads;
    }
    row.cpu_model = d.cpu_model;
    if (d.onednn) row.cpu_onednn_ms = d.onednn->ms;
    return row;
}

Row run_one(gpu::DeviceContext& ctx, const gpu::Variant& v, gpu::MemoryMode mode, gpu::Layout layout,
            const ProblemData& d, const gpu::RunOptions& opt, const gpu::Config& config) {
    Row row = make_row(v, mode, layout, d);
    row.result = gpu::run_variant(ctx, v, mode, gpu::Problem{d.layer, d.N, layout, gpu::axis_values(v, config)}, d.host(), opt);
    return row;
}


void add_check_options(CLI::App* c, CheckOpts& o) {
    c->add_option("--check", o.mode,
                  "golden: compare every element with the golden files (default); sampled: generate the inputs "
                  "and compare --samples elements computed on the CPU (plus a NaN scan of every element), for "
                  "batches without golden files; auto: golden where the files exist, else sampled");
    c->add_option("--samples", o.samples, "sampled check: output elements compared")->check(CLI::Range(16, 1 << 24));
    c->add_option("--seed", o.seed, "generator seed (must match the golden files')");
    c->add_option("--input-scale", o.input_scale,
                  "data scale of the inputs, an exact power of two from 2^-24 to 2^20 (e.g. 2^-12, 0.25, 4096; "
                  "default 1): the golden sets generated with it, or the sampled check's inputs times it");
    c->add_option("--weight-scale", o.weight_scale,
                  "data scale of the weights, as --input-scale (default 1)");
    c->add_flag("--no-cpu-timing", o.no_cpu_timing, "sampled check: do not time the CPU reference (no speedups)");
}

bool have_golden(const std::string& root, const LayerTable& table, const Layer& l, std::int64_t N,
                 const DataScales& scales) {
    const auto have = golden_batches(root, table, l, scales);
    return std::find(have.begin(), have.end(), N) != have.end();
}

ProblemData load_problem(const std::string& root, const LayerTable& table, const Layer& l, std::int64_t N,
                         const CheckOpts& c) {
    const CheckMode m = c.parse();
    const DataScales scales = c.scales();
    if (m == CheckMode::golden || (m == CheckMode::automatic && have_golden(root, table, l, N, scales)))
        return from_golden(load_golden(root, table, l, N, c.seed, scales));
    return make_sampled(l, N, c.seed, c.samples, !c.no_cpu_timing, scales);
}

// ---- schema ----------------------------------------------------------------------------


// `schema`: the results CSV's schema (results.hpp, csv_schema): docs/csv-columns.md's table,
// or every column as JSON with the meaning of its group.
int cmd_schema(bool json) {
    if (!json) {
        std::fputs(schema_markdown().c_str(), stdout);
        return 0;
    }
    nlohmann::json cols = nlohmann::json::array();
    const char* meaning = "";
    for (const auto& c : csv_schema()) {
        if (c.meaning) meaning = c.meaning;
        cols.push_back({{"name", c.name}, {"type", c.type}, {"unit", c.unit}, {"meaning", meaning}});
    }
    nlohmann::json j = {{"schema_version", kCsvSchemaVersion}, {"columns", cols}};
    std::printf("%s\n", j.dump(1).c_str());
    return 0;
}

}  // namespace detail

using namespace detail;

namespace {

// The golden files' root: --golden (generate: --out), else $CONVSTUDY_GOLDEN, else golden/.
constexpr const char* kGoldenEnv = "CONVSTUDY_GOLDEN";
const std::string& golden_help() {
    static const std::string h = "root directory of the golden files (default: $CONVSTUDY_GOLDEN, else golden)";
    return h;
}
const std::string& table_help() {
    static const std::string h = "layer table: a built-in table's name (" + join(builtin_layer_table_names(), ", ") +
                                 ") or a JSON file's path; default: alexnet";
    return h;
}

CLI::App* add_generate_command(CLI::App& app, GenerateArgs& gen) {
    auto* g = app.add_subcommand("generate", "compute the golden outputs on the CPU and store them (.npy)");
    g->add_option("--batch", gen.batches, "batch sizes, comma separated")->delimiter(',')->expected(1, -1);
    g->add_option("--layers,--table", gen.table.path, table_help());
    g->add_option("--only", gen.only, "only these layers of the table, comma separated")->delimiter(',');
    g->add_option("--out", gen.out, golden_help())->envname(kGoldenEnv);
    g->add_option("--seed", gen.seed, "generator seed");
    g->add_option("--input-scale", gen.input_scale,
                  "multiply the inputs by this exact power of two, 2^-24 to 2^20 (e.g. 2^-24, 0.25, 4096; default "
                  "1); sets of other scales than 1 and 1 go to <out>/<table>/x<in>_w<w>/");
    g->add_option("--weight-scale", gen.weight_scale, "multiply the weights by this exact power of two, as --input-scale");
    g->add_flag("--quiet", gen.quiet, "no progress on stderr");
    g->add_flag("--no-cpu-timing", gen.no_cpu_timing, "do not time the float32 CPU reference");
    g->add_flag("--no-onednn", gen.no_onednn, "do not time oneDNN");
    g->add_flag("--chain", gen.chain,
                "the chain golden files of a chain table instead (every layer's post-op output after bias, ReLU "
                "and pool, the input, weights and biases) in <out>/<table>/chain/; refuses a table that is not a "
                "chain");
    return g;
}

// The options `run` and `profile` share.
void add_run_options(CLI::App* c, RunArgs& ra) {
    c->add_option("--variant", ra.variant, "variant name or study abbreviation (see `list`)")->required();
    c->add_option("--layer", ra.layer, "layer name (see `list`)")->required();
    c->add_option("--batch", ra.batch, "batch size N")->required();
    c->add_option("--memory", ra.memory, "memory mode: " + gpu::memory_mode_names() + " (default pageable)");
    c->add_option("--layout", ra.layout,
                  "tensor layout: nchw or nhwc (default nchw, or the variant's own where it runs only nhwc)");
    c->add_option("--csv", ra.csv, "write the result row to this CSV file");
    c->add_option("--golden", ra.golden, golden_help())->envname(kGoldenEnv);
    c->add_option("--table", ra.table.path, table_help());
    c->add_option("--axis", ra.axes,
                  "NAME=VALUE: one value of one of the variant's axes (repeatable; default: the variant's own "
                  "choice per problem). Axes:" + axes_help());
    add_timing_options(c, ra.timing);
    add_check_options(c, ra.check);
}

struct VerifyArgs {
    std::string golden_dir = "golden";
    TableOpt table;
    std::int64_t recompute = 0;
    std::string input_scale = "1", weight_scale = "1";
    bool chain = false;
};

CLI::App* add_verify_command(CLI::App& app, VerifyArgs& a) {
    auto* vf = app.add_subcommand("verify",
                                  "check golden files without a GPU: manifest, SHA-256, .npy headers and shapes; "
                                  "exit 0 when every set is intact, 1 naming each damaged file");
    vf->add_option("--golden", a.golden_dir, golden_help())->envname(kGoldenEnv);
    vf->add_option("--table", a.table.path, "the layer table the files were made for: " + table_help());
    vf->add_option("--recompute", a.recompute,
                   "also regenerate the inputs and weights from the seed and recompute this many output elements "
                   "per set on the CPU (0: none)")
        ->check(CLI::Range(std::int64_t(0), kMaxRecompute));
    vf->add_option("--input-scale", a.input_scale,
                   "verify the sets generated with this input scale (their own directory; default 1)");
    vf->add_option("--weight-scale", a.weight_scale, "verify the sets generated with this weight scale (default 1)");
    vf->add_flag("--chain", a.chain, "verify the chain golden files of the table (<golden>/<table>/chain/)");
    return vf;
}

int cmd_verify(const VerifyArgs& a) {
    if (a.chain) {
        if (a.input_scale != "1" || a.weight_scale != "1")
            throw Error("verify --chain: chains have no --input-scale or --weight-scale");
        return verify_chain_golden(a.golden_dir, a.table.load(), a.recompute);
    }
    return verify_golden(a.golden_dir, a.table.load(), a.recompute,
                         {parse_data_scale(a.input_scale, "--input-scale"),
                          parse_data_scale(a.weight_scale, "--weight-scale")});
}

// A mistyped command gets the names it is close to (CLI11 alone says only that the argument was
// not expected); true when argv names no command. Only --help and --version may come before it.
bool refuse_unknown_command(CLI::App& app, int argc, char** argv) {
    if (argc < 2 || argv[1][0] == '-') return false;
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) != names.end()) return false;
    std::fprintf(stderr, "error: unknown command '%s'%s; the commands are %s (`convstudy --help`)\n", argv[1],
                 did_you_mean(argv[1], names).c_str(), join(names, ", ").c_str());
    return true;
}

// A command's exit code: its own, or the one its exception means (the footer's list).
template <class F>
int exit_code_of(F&& command) {
    try {
        return command();
    } catch (const ProfileUnavailable& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return kExitNoProfiler;
    } catch (const NoDevice& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return kExitNoDevice;
    } catch (const Error& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return kExitInput;
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "error: out of host memory\n");
        return kExitInput;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return kExitFail;
    }
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"convstudy: AlexNet's convolution layers on the GPU, one optimisation at a time.\n"
                 "Generate golden files once, run a variant per layer, sweep everything, plot."};
    app.set_version_flag("--version", std::string("convstudy ") + kToolVersion + " (" + kGitRevision + ")");
    app.require_subcommand(1);
    // Every option's default is shown in --help (subcommands inherit this); an option whose
    // unset value means "choose" (0, empty) has its default_str cleared and says the real
    // default in its description. Lines are wrapped at 100 columns (help_format.hpp).
    app.option_defaults()->always_capture_default();
    app.formatter(std::make_shared<HelpFormatter>());
    app.footer("Exit codes: 0 success; 1 a check FAILed or a CUDA error (verify: a golden set failed; compare "
               "--fail-slower: a row slower than allowed); 2 bad input (options, files); 3 run skipped the variant; "
               "4 no CUDA device (no NVIDIA driver, or no GPU); 5 profile cannot profile (no ncu, or no access to the "
               "GPU's counters). Without a GPU: list, "
               "generate, verify, compare, merge, plan. The golden files' folder: --golden (--out for generate), else "
               "$CONVSTUDY_GOLDEN, else golden/. Details: docs/cli.md");

    bool list_json = false;
    TableOpt list_table;
    auto* list = app.add_subcommand("list", "list the variants, memory modes, thresholds, the built-in layer tables and a table's layers");
    list->add_flag("--json", list_json, "machine-readable output");
    bool list_markdown = false;
    list->add_flag("--markdown", list_markdown, "the variants as docs/variants.md's table (family, ladder, rung, class, idea)");
    bool schema_json = false;
    auto* schema = app.add_subcommand(
        "schema", "the results CSV's columns: the markdown table of docs/csv-columns.md, or (--json) each column's "
                  "name, type, unit and meaning");
    schema->add_flag("--json", schema_json, "one JSON object per column, in CSV order");
    list->add_option("--table", list_table.path, table_help());

    GenerateArgs gen;
    auto* g = add_generate_command(app, gen);

    RunArgs run;
    auto* r = app.add_subcommand("run", "check and time one variant on one layer and batch");
    add_run_options(r, run);
    // `profile` runs `run` under ncu with this flag: the engine choices file is only read
    r->add_flag("--profile-target", run.profile_target)->group("");
    r->add_option("--timeline", run.timeline,
                  "write the device's own timeline of each timed interval to this CSV (CUPTI: the time from the "
                  "interval's start event to its first kernel, the kernels' span, the last kernel's end to the end "
                  "event) and print their medians; the host copies are not timed (--host-repeats 0)");

    RunArgs prof;
    auto* pr = app.add_subcommand("profile",
                                  "run one variant as `run` does, then its kernels of one timed repeat under Nsight "
                                  "Compute (ncu): tensor pipe, DRAM bytes, L2 hit rate, occupancy beside the timing");
    add_run_options(pr, prof);
    add_profile_options(pr, prof.prof);

    SweepArgs sw;
    auto* s = app.add_subcommand("sweep", "check and time many variants, layers, batches and memory modes");
    add_sweep_options(s, sw, table_help(), golden_help(), kGoldenEnv);
    s->add_option("--plan", sw.plan,
                  "run every sweep step of this plan (plans/*.json) in this one process, each step's CSV in --out "
                  "(instead of --csv and the row options)")
        ->excludes("--csv");
    s->add_option("--out", sw.out, "--plan: the folder of the steps' CSVs")->needs("--plan");
    s->add_option("--steps", sw.plan_steps,
                  "--plan: only these of its steps (indices, comma separated; the runner's STEPS)")
        ->delimiter(',')
        ->needs("--plan");

    MergeArgs mg;
    auto* mgc = add_merge_command(app, mg);
    VerifyArgs va;
    auto* vf = add_verify_command(app, va);
    CompareArgs cmp;
    auto* cm = add_compare_command(app, cmp);
    PlanArgs plan_args;
    auto* plc = add_plan_command(app, plan_args);
    TuneArgs tune_args;
    auto* tu = add_tune_command(app, tune_args);
    ChainArgs chain_args;
    auto* ch = add_chain_command(app, chain_args);

    if (refuse_unknown_command(app, argc, argv)) return kExitInput;
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return kExitInput;
    }

    const int rc = exit_code_of([&] {
        if (*list) return cmd_list(list_table, list_json, list_markdown);
        if (*schema) return cmd_schema(schema_json);
        if (*g) return cmd_generate(gen);
        if (*r) return cmd_run(run);
        if (*pr) return cmd_run(prof, true);
        if (*s) {
            if (!sw.plan.empty()) return cmd_sweep_plan(sw, table_help(), golden_help(), kGoldenEnv);
            if (sw.csv.empty()) throw Error("sweep: --csv is required (or --plan PLAN)");
            return cmd_sweep(sw);
        }
        if (*vf) return cmd_verify(va);
        if (*cm) return cmd_compare(cmp);
        if (*mgc) return cmd_merge(mg);
        if (*plc) return cmd_plan(plan_args);
        if (*tu) return cmd_tune(tune_args);
        if (*ch) return cmd_chain(chain_args);
        return kExitInput;
    });
    gpu::release_ceilings();  // the ceilings' cuBLAS handles, before the CUDA context goes
    return rc;
}

}  // namespace cs::cli
