// The convstudy commands. Exit codes (docs/cli.md): 0 success (every row PASS or SKIP),
// 1 a row FAILed or hit a CUDA error (`verify`: a golden set failed; `compare --fail-slower`:
// a row slower than allowed), 2 bad input (options, files), 3 `run` skipped the variant (its
// reason is printed), 4 no CUDA device for a GPU command, 5 `profile` or `sweep --profile`
// cannot profile (no ncu, or no permission to read the GPU's counters).
// `run` and `sweep` check their options, paths and golden files before they ask for a device.
#include "commands.hpp"
#include "command_common.hpp"

#include "ceilings.hpp"
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
}

std::string join(const std::vector<std::string>& v, const char* sep) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
    return s;
}

// "a,b,c": a list as one command-line argument.
std::string join_commas(const std::vector<std::string>& v) { return join(v, ","); }

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
                    "; built-in tables: " + join(names));
    }
    return load_layer_table(path);
}

const Layer& find_layer(const LayerTable& t, const std::string& name) {
    const Layer* l = t.find(name);
    if (!l)
        throw Error("unknown layer '" + name + "' in " + t.source + did_you_mean(name, t.names()) +
                    "; valid layers: " + join(t.names()));
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
std::optional<double> im2col_gemm_reference(gpu::DeviceContext& ctx, const std::string& precision, const Layer& l,
                                   std::int64_t N) {
    const auto p = gpu::parse_precision(precision);
    if (!p) return std::nullopt;
    try {
        const double ms = gpu::im2col_gemm_ms(ctx, gpu::ceiling_class(*p), l.M, N * l.E() * l.F(), l.C * l.R * l.S);
        if (std::isfinite(ms) && ms > 0) return ms;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "warning: no cuBLAS im2col GEMM reference for %s N=%lld %s: %s\n", l.name.c_str(),
                     static_cast<long long>(N), precision.c_str(), e.what());
        (void)cudaGetLastError();
    }
    return std::nullopt;
}

// A row's identity and CPU side, before it runs.
Row make_row(const gpu::Variant& v, gpu::MemoryMode mode, gpu::Layout layout, const ProblemData& d) {
    Row row;
    row.layer = d.layer;
    row.N = d.N;
    row.variant = v.name;
    row.family = v.family;
    row.precision = std::string(gpu::to_string(v.precision));
    row.io_dtype = std::string(gpu::to_string(v.io));
    row.memory = std::string(gpu::to_string(mode));
    row.layout = std::string(gpu::to_string(layout));
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
    row.result = gpu::run_variant(ctx, v, mode, gpu::Problem{d.layer, d.N, layout, config}, d.host(), opt);
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

// ---- list ------------------------------------------------------------------------------

// One row of the built-in tables: what --table NAME gives.
nlohmann::json table_json(const LayerTable& t) {
    const auto chain = chain_error(t);
    return {{"name", t.name},
            {"source", t.source},
            {"builtin", t.builtin},
            {"description", t.description},
            {"layers", t.layers.size()},
            {"convs", t.conv_count()},
            {"gflop_per_image", t.network_flops(1) * 1e-9},
            {"chain", !chain},
            {"chain_error", chain ? nlohmann::json(*chain) : nlohmann::json(nullptr)}};
}

// "bias+relu, pool max3x3s2", or "-" when the layer has no ops.
std::string ops_string(const Layer& l) {
    std::string s = l.bias ? "bias" : "";
    if (l.relu) s += std::string(s.empty() ? "" : "+") + "relu";
    if (l.pool != Pool::none) s += (s.empty() ? "" : ", ") + std::string("pool ") + to_string(l.pool);
    return s.empty() ? "-" : s;
}

int cmd_list(const TableOpt& topt, bool json) {
    const LayerTable table = topt.load();
    constexpr std::array kClasses = {gpu::Precision::fp32, gpu::Precision::tf32, gpu::Precision::fp16,
                                     gpu::Precision::bf16, gpu::Precision::fp16acc};
    if (json) {
        nlohmann::json j;
        for (const auto& v : gpu::registry()) {
            nlohmann::json a = nlohmann::json::array();
            for (const auto& al : v.aliases) a.push_back({{"name", al.name}, {"memory", al.memory}});
            j["variants"].push_back({{"name", v.name},
                                     {"aliases", a},
                                     {"family", v.family},
                                     {"precision", gpu::to_string(v.precision)},
                                     {"io_dtype", gpu::to_string(v.io)},
                                     {"deterministic", v.deterministic},
                                     {"algo", v.algo},
                                     {"layouts", [&] {
                                          nlohmann::json ls = nlohmann::json::array();
                                          for (auto l : v.layouts) ls.push_back(gpu::to_string(l));
                                          return ls;
                                      }()},
                                     {"axes", [&] {
                                          // each axis a run or sweep may set (--axis NAME=VALUE)
                                          nlohmann::json ax = nlohmann::json::array();
                                          for (const auto& axis : v.axes)
                                              ax.push_back({{"name", axis.name}, {"values", axis.values}, {"help", axis.help}});
                                          return ax;
                                      }()},
                                     {"idea", v.idea}});
        }
        for (auto m : gpu::all_memory_modes()) j["memory_modes"].push_back(gpu::to_string(m));
        for (const auto& t : builtin_layer_tables()) j["tables"].push_back(table_json(t));
        j["table"] = table_json(table);
        // The pass rule of each precision class (gpu/tolerance.hpp): max_rel_err at most
        // `max_rel_err`, and each element within tau * sum|w*x| + output_roundoff * |golden|.
        j["thresholds"] = nlohmann::json::array();
        for (auto p : kClasses)
            j["thresholds"].push_back({{"class", gpu::to_string(p)},
                                       {"max_rel_err", gpu::threshold(p)},
                                       {"tau", gpu::bound_factor(p)},
                                       {"output_roundoff", gpu::output_roundoff(p)},
                                       {"reason", gpu::threshold_reason(p)}});
        for (const auto& l : table.layers)
            j["layers"].push_back({{"name", l.name}, {"C", l.C}, {"H", l.H}, {"W", l.W}, {"M", l.M}, {"R", l.R},
                                   {"S", l.S}, {"stride", l.stride}, {"pad", l.pad}, {"E", l.E()}, {"F", l.F()},
                                   {"count", l.count}, {"bias", l.bias}, {"relu", l.relu},
                                   {"pool", to_string(l.pool)}, {"gflop_per_image", l.flops(1) * 1e-9},
                                   {"shape", l.shape_string()}});
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    // Columns as wide as their longest cell; the idea, free text, last.
    std::vector<std::array<std::string, 8>> cells{{"name", "aliases", "family", "precision", "io", "layouts", "algo", "idea"}};
    for (const auto& v : gpu::registry()) {
        std::string al, ls;
        for (const auto& a : v.aliases) al += (al.empty() ? "" : ",") + a.name;
        for (auto l : v.layouts) ls += (ls.empty() ? "" : ",") + std::string(gpu::to_string(l));
        cells.push_back({v.name, al, v.family, std::string(gpu::to_string(v.precision)),
                         std::string(gpu::to_string(v.io)), ls, v.algo,
                         v.idea + (v.deterministic ? "" : " [order-dependent]")});
    }
    std::array<std::size_t, 8> width{};
    for (const auto& row : cells)
        for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    std::printf("Variants (%zu):\n", gpu::registry().size());
    for (const auto& row : cells) {
        std::string line = " ";
        for (std::size_t c = 0; c + 1 < row.size(); ++c)
            line += " " + row[c] + std::string(width[c] - row[c].size(), ' ');
        std::printf("%s %s\n", line.c_str(), row.back().c_str());
    }
    std::printf("\nMemory modes: %s\n", gpu::memory_mode_names().c_str());
    std::printf("Layouts: nchw (the golden files'), nhwc (input NHWC, weights KRSC, output NHWC)\n");
    std::printf("\nPass thresholds on max_rel_err = max|out - golden| / max|golden|:\n");
    for (auto p : kClasses)
        std::printf("  %-8s %.0e  %s\n", std::string(gpu::to_string(p)).c_str(), gpu::threshold(p),
                    gpu::threshold_reason(p));
    std::printf("\nLayer tables built in (--table NAME; --table PATH loads a JSON file):\n");
    std::size_t tname_w = 0;
    for (const auto& t : builtin_layer_tables()) tname_w = std::max(tname_w, t.name.size());
    for (const auto& t : builtin_layer_tables()) {
        const auto chain = chain_error(t);
        std::printf("  %-*s  %2zu shapes, %2lld convolutions, %7.3f GFLOP/image, %s\n", int(tname_w), t.name.c_str(),
                    t.layers.size(), static_cast<long long>(t.conv_count()), t.network_flops(1) * 1e-9,
                    chain ? "not a chain" : "a chain");
    }
    std::printf("\nLayers of %s (%s):\n", table.name.empty() ? "the table" : table.name.c_str(), table.source.c_str());
    std::size_t name_w = 0, shape_w = 0;
    for (const auto& l : table.layers) {
        name_w = std::max(name_w, l.name.size());
        shape_w = std::max(shape_w, l.shape_string().size());
    }
    for (const auto& l : table.layers)
        std::printf("  %-*s  %-*s  x%-3d %8.3f GFLOP/image  %s\n", int(name_w), l.name.c_str(), int(shape_w),
                    l.shape_string().c_str(), l.count, l.flops(1) * 1e-9, ops_string(l).c_str());
    std::printf("  %lld convolutions, %.3f GFLOP/image in all (each layer's times its count)\n",
                static_cast<long long>(table.conv_count()), table.network_flops(1) * 1e-9);
    return 0;
}

// ---- generate --------------------------------------------------------------------------

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

// The options both kinds of generation take, as the command line gives them.
void set_run_options(GoldenRunOptions& o, const GenerateArgs& a) {
    o.batches = a.batches;
    o.root = a.out;
    o.seed = a.seed;
    o.quiet = a.quiet;
    o.time_cpu = !a.no_cpu_timing;
}

// generate --chain: the chain golden files of a chain table (golden_chain.hpp).
int cmd_generate_chain(const GenerateArgs& a, const LayerTable& table) {
    if (!a.only.empty()) throw Error("generate --chain: --only does not apply (a chain holds every layer)");
    if (a.input_scale != "1" || a.weight_scale != "1")
        throw Error("generate --chain: --input-scale and --weight-scale are not offered for chains");
    ChainGenerateOptions o;
    set_run_options(o, a);
    generate_chain_golden(table, o);
    if (!a.quiet)
        std::fprintf(stderr, "chain golden files written under %s\n", golden_chain_dir(o.root, table).string().c_str());
    return 0;
}

int cmd_generate(const GenerateArgs& a) {
    check_batches(a.batches);
    const LayerTable table = a.table.load();
    if (a.chain) return cmd_generate_chain(a, table);
    for (const auto& n : a.only) find_layer(table, n);
    GenerateOptions o;
    set_run_options(o, a);
    o.time_onednn = !a.no_onednn;
    o.layers = a.only;
    o.scales = {parse_data_scale(a.input_scale, "--input-scale"), parse_data_scale(a.weight_scale, "--weight-scale")};
    generate_golden(table, o);
    if (!a.quiet)
        std::fprintf(stderr, "golden files written under %s\n",
                     golden_table_dir(o.root, table, o.scales).string().c_str());
    return 0;
}

// ---- run -------------------------------------------------------------------------------

// The axes of the registry's variants for --help, grouped by variants with the same axes:
// "hopper-wgmma-fp16, ...: tile = m128n96k128B-s7, ...".
std::string axes_help() {
    std::vector<std::pair<std::string, const gpu::Variant*>> seen;  // names -> a variant with those axes
    auto sig = [](const gpu::Variant& v) {
        std::string k;
        for (const auto& a : v.axes) {
            k += a.name + "=";
            for (const auto& x : a.values) k += x + ",";
            k += ";";
        }
        return k;
    };
    for (const auto& v : gpu::registry()) {
        if (v.axes.empty()) continue;
        auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return sig(*s.second) == sig(v); });
        if (it == seen.end())
            seen.emplace_back(v.name, &v);
        else
            it->first += ", " + v.name;
    }
    std::string s;
    for (const auto& [names, v] : seen) {
        s += "\n  " + names + ":";
        for (const auto& ax : v->axes) {
            s += "\n    " + ax.name + " = ";
            for (std::size_t i = 0; i < ax.values.size(); ++i) s += (i ? ", " : "") + ax.values[i];
            s += "\n      (" + ax.help + ")";
        }
    }
    return s.empty() ? std::string("\n  (no variant has axes)") : s;
}

// "NAME=VALUE" options of `run` as a Config; throws cs::Error (exit 2) for a malformed one or
// one the variant does not have.
gpu::Config parse_run_axes(const std::vector<std::string>& args, const gpu::Variant& v) {
    gpu::Config c;
    for (const auto& a : args) {
        auto [name, values] = gpu::parse_axis_arg(a);
        if (values.size() != 1 || values[0] == "all")
            throw Error("run --axis " + a + ": one value per axis (sweep walks several)");
        c.set.emplace_back(name, values[0]);
    }
    if (auto why = gpu::config_error(v, c)) throw Error("--axis: " + *why);
    return c;
}

struct RunArgs {
    TableOpt table;
    std::vector<std::string> axes;  // --axis NAME=VALUE
    std::string variant, layer, memory, layout, csv, golden = "golden";
    std::int64_t batch = 0;
    TimingOpts timing;
    CheckOpts check;
    bool profile_target = false;  // run under ncu by `profile`: the engine choices stay as they are
    ProfileOptions prof;          // `profile` only
};

// The data, check and timing options a child `convstudy run` or `sweep` repeats, with
// `repeats` timed repeats (profile_target's one, a re-time's or a cuDNN process's all).
std::vector<std::string> child_options(const CheckOpts& c, const TimingOpts& t, const std::filesystem::path& choices,
                                       int repeats) {
    std::vector<std::string> v = {"--check", c.mode, "--samples", std::to_string(c.samples), "--seed",
                                  std::to_string(c.seed), "--input-scale", c.input_scale, "--weight-scale",
                                  c.weight_scale, "--no-cpu-timing", "--warmup", std::to_string(t.warmup),
                                  "--repeats", std::to_string(repeats), "--streams", std::to_string(t.streams),
                                  "--chunks", std::to_string(t.chunks), "--engine-choices",
                                  choices.empty() ? "none" : choices.string()};
    if (t.no_flush) v.push_back("--no-flush");
    if (t.workspace_limit_gib > 0) v.insert(v.end(), {"--workspace-limit", csv_number(t.workspace_limit_gib)});
    return v;
}

// The `run` command line that repeats `row` under ncu for `profile` (cli/profile.hpp):
// the same data, check, options and engine choices, with one timed repeat.
ProfileTarget profile_target(const Row& row, const TableOpt& table, const std::string& golden, const CheckOpts& c,
                             const TimingOpts& t, const std::filesystem::path& choices) {
    ProfileTarget p;
    p.label = gpu::nvtx::row_name(row.layer.name, static_cast<long long>(row.N), row.variant, row.layout, row.memory);
    p.detail = row.result.detail;
    auto& v = p.run_args;
    v = {"run", "--variant", row.variant, "--layer", row.layer.name, "--batch", std::to_string(row.N), "--memory",
         row.memory, "--layout", row.layout, "--golden", golden};
    const auto options = child_options(c, t, choices, 1);
    v.insert(v.end(), options.begin(), options.end());
    v.push_back("--profile-target");
    if (!table.path.empty()) v.insert(v.end(), {"--table", table.path});
    for (std::string rest = row.result.axes; !rest.empty();) {  // "a=x;b=y": one --axis each
        const auto semi = rest.find(';');
        v.insert(v.end(), {"--axis", rest.substr(0, semi)});
        rest = semi == std::string::npos ? "" : rest.substr(semi + 1);
    }
    return p;
}

void print_profile(const ProfileSummary& s) {
    auto f = [](double v, const char* unit, double scale = 1) {
        if (!std::isfinite(v)) return std::string("-");
        char b[48];
        std::snprintf(b, sizeof b, "%.3g%s", v * scale, unit);
        return std::string(b);
    };
    std::printf("  ncu (%d kernel%s, longest %s): tensor pipe %s, FMA pipe %s, SM throughput %s, DRAM read %s, "
                "written %s, L2 hit %s, occupancy %s, %s registers/thread, %s shared/block\n",
                s.kernels, s.kernels == 1 ? "" : "s", s.main_kernel.substr(0, 60).c_str(), f(s.tensor_pct, "%").c_str(),
                f(s.fma_pct, "%").c_str(), f(s.sm_pct, "%").c_str(), f(s.dram_read_bytes, " MB", 1e-6).c_str(),
                f(s.dram_write_bytes, " MB", 1e-6).c_str(), f(s.l2_hit_pct, "%").c_str(),
                f(s.occupancy_pct, "%").c_str(), f(s.registers, "").c_str(), f(s.smem_bytes, " B").c_str());
    if (!s.note.empty()) std::printf("  ncu note: %s\n", s.note.c_str());
}

// `profile` (profiling = true) is `run` plus Nsight Compute's counters of one timed repeat.
// A cuDNN row whose timed median strays more than this from its own engine search's median
// is re-timed in a fresh process (a glitch of one process's clocks or of the library's state
// should not decide a headline cell).
constexpr double kStrayFraction = 0.10;

bool strayed(const Row& row) {
    const auto& r = row.result;
    return row.family == "cudnn" && r.status == gpu::Status::pass && std::isfinite(r.search_ms) && r.search_ms > 0 &&
           std::fabs(r.kernel.median / r.search_ms - 1.0) > kStrayFraction;
}

// Re-times each strayed cuDNN row in a fresh `convstudy run` of its own (the same data, check,
// options and engine memory, which --profile-target leaves unchanged; --reuse-engines: the
// configuration this process chose, without a second search), and records that median
// as cudnn_retime_ms; both stay in the CSV.
void retime_strays(std::vector<Row>& rows, const TableOpt& table, const std::string& golden, const CheckOpts& c,
                   const TimingOpts& t, const std::filesystem::path& choices, Progress& progress) {
    for (auto& row : rows) {
        if (!strayed(row)) continue;
        ProfileTarget target = profile_target(row, table, golden, c, t, choices);
        auto& v = target.run_args;
        for (std::size_t i = 0; i + 1 < v.size(); ++i)
            if (v[i] == "--repeats") v[i + 1] = std::to_string(t.repeats);
        TempDir tmp;
        const auto csv = tmp.path() / "retime.csv";
        // the engine configuration this process chose, alone (no second search)
        v.insert(v.end(), {"--csv", csv.string(), "--order-seed", std::to_string(t.order_seed), "--reuse-engines"});
        std::vector<std::string> argv = {self_path("to re-time a cuDNN row").string()};
        argv.insert(argv.end(), v.begin(), v.end());
        progress.message("re-timing " + target.label + " in a fresh process (its median " +
                         csv_number(row.result.kernel.median) + " ms, its search's " + csv_number(row.result.search_ms) +
                         " ms)");
        const ProcResult pr = run_process(argv, tmp.path() / "output.txt", 900);
        try {
            if (pr.status != 0) throw Error("exit status " + std::to_string(pr.status));
            const compare::Results res = compare::read_results(csv.string());
            if (res.rows.size() == 1 && res.rows.front().status == "PASS")
                row.cudnn_retime_ms = res.rows.front().kernel.med;
        } catch (const Error& e) {
            progress.message("the re-time of " + target.label + " failed (" + e.what() + "); the row keeps its own time");
        }
    }
}

// The options a child `convstudy sweep` needs to repeat this one's rows: child_options and the
// sweep's own timing switches (the round-robin seed is the caller's).
std::vector<std::string> repeat_options(const CheckOpts& c, const TimingOpts& t, const std::filesystem::path& choices) {
    std::vector<std::string> v = child_options(c, t, choices, t.repeats);
    if (t.host_repeats >= 0) v.insert(v.end(), {"--host-repeats", std::to_string(t.host_repeats)});
    if (t.no_recheck) v.push_back("--no-recheck");
    if (t.no_cudnn_rtc) v.push_back("--no-cudnn-rtc");
    return v;
}

// A cuDNN row's time in this process: the faster of its median and its re-time, where it was
// re-timed (both are this sweep's measurements of the same row).
double own_cudnn_ms(const Row& row) {
    const double t = row.result.kernel.median;
    return row.cudnn_retime_ms ? std::min(t, *row.cudnn_retime_ms) : t;
}

int cmd_run(RunArgs a, bool profiling = false) {
    check_batches({a.batch});
    const LayerTable table = a.table.load();
    const Layer& layer = find_layer(table, a.layer);
    const auto ref = find_variant_or_throw(a.variant);
    std::string mode_name = a.memory.empty() ? (ref.memory.empty() ? "pageable" : ref.memory) : a.memory;
    const gpu::MemoryMode mode = parse_mode_or_throw(mode_name);
    // Default layout: nchw where the variant runs it, else the first it declares.
    const gpu::Layout layout = !a.layout.empty()                               ? parse_layout_or_throw(a.layout)
                               : declares(*ref.variant, gpu::Layout::nchw) ? gpu::Layout::nchw
                                                                           : ref.variant->layouts.front();
    const CheckMode check = a.check.parse();
    const DataScales scales = a.check.scales();
    const gpu::Config config = parse_run_axes(a.axes, *ref.variant);
    if (!a.csv.empty()) check_writable(a.csv);
    std::string ncu;
    if (profiling) {
        metric_set(a.prof.metrics);
        if (!a.prof.kernels_csv.empty()) check_writable(a.prof.kernels_csv, "--kernels-csv");
        ncu = find_ncu(a.prof.ncu);
    }
    const auto choices = engine_choices_path(a.timing.engine_choices, a.golden);
    if (!choices.empty() && !a.profile_target) check_writable(choices, "--engine-choices");
    load_engine_choices(choices);
    // The golden set is loaded and verified before the device is asked for, so a missing
    // or damaged set is reported (exit 2) on any machine; a sampled check's CPU work waits
    // until a device is there to use it.
    std::optional<ProblemData> golden;
    if (check == CheckMode::golden ||
        (check == CheckMode::automatic && have_golden(a.golden, table, layer, a.batch, scales)))
        golden = from_golden(load_golden(a.golden, table, layer, a.batch, a.check.seed, scales));
    auto ctx = open_device();
    const ProblemData d = golden ? std::move(*golden) : load_problem(a.golden, table, layer, a.batch, a.check);
    const auto opt = a.timing.to_run_options();
    // The ceilings and the GEMM of the layer's shape appear only in the CSV, beside times.
    const bool ceilings = !a.csv.empty() && opt.repeats > 0;
    const RunMeta meta = make_meta(*ctx, opt, ceilings, a.check.seed, d.scales);
    Row row = run_one(*ctx, *ref.variant, mode, layout, d, opt, config);
    if (!a.profile_target) save_engine_choices(choices);
    if (ceilings && row.result.status == gpu::Status::pass)
        row.im2col_gemm_ms = im2col_gemm_reference(*ctx, row.precision, layer, a.batch);
    std::printf("%s\n", summary_line(row).c_str());
    if (!row.result.detail.empty()) std::printf("  plan: %s\n", row.result.detail.c_str());
    std::optional<ProfileSummary> prof;
    if (profiling && row.result.status == gpu::Status::pass) {
        prof = profile_row(a.prof, ncu, profile_target(row, a.table, a.golden, a.check, a.timing, choices));
        print_profile(*prof);
        if (!a.prof.kernels_csv.empty())
            write_kernels_csv(a.prof.kernels_csv, {{profile_target(row, a.table, a.golden, a.check, a.timing, choices).label,
                                                    *prof}});
    }
    if (!a.csv.empty()) {
        ExtraColumns extra{profile_columns(), {profile_fields(prof)}};
        write_csv(a.csv, meta, {row}, profiling ? &extra : nullptr);
    }
    switch (row.result.status) {
        case gpu::Status::pass: return 0;
        case gpu::Status::skip: return kExitSkipped;
        default: return kExitFail;
    }
}

// ---- sweep -----------------------------------------------------------------------------


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
    static const std::string h = "layer table: a built-in table's name (" + join(builtin_layer_table_names()) +
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
                 did_you_mean(argv[1], names).c_str(), join(names).c_str());
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

    MergeArgs mg;
    auto* mgc = add_merge_command(app, mg);
    VerifyArgs va;
    auto* vf = add_verify_command(app, va);
    CompareArgs cmp;
    auto* cm = add_compare_command(app, cmp);
    PlanArgs plan_args;
    auto* plc = add_plan_command(app, plan_args);

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

    return exit_code_of([&] {
        if (*list) return cmd_list(list_table, list_json);
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
        return kExitInput;
    });
}

}  // namespace cs::cli
