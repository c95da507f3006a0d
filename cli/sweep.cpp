// `convstudy sweep`: every requested row, timed round-robin per (layer, N, layout, class)
// group, checked, written to the CSV after each (layer, N); the cuDNN engines built ahead, the
// re-times and the extra cuDNN processes; `sweep --plan`. The shared option groups and helpers
// are in command_common.hpp (defined in commands.cpp).
#include "command_common.hpp"

#include "ceilings.hpp"
#include "compare.hpp"
#include "engine_choices_file.hpp"
#include "golden.hpp"
#include "golden_manifest.hpp"
#include "plan.hpp"
#include "process.hpp"
#include "progress.hpp"
#include "time_split.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <future>
#include <map>
#include <thread>

namespace cs::cli::detail {

// A cuDNN row whose timed median strays more than this from its own engine search's median
// is re-timed in a fresh process (a glitch of one process's clocks or of the library's state
// should not decide a headline cell).
constexpr double kStrayFraction = 0.10;

bool strayed(const Row& row) {
    const auto& r = row.result;
    return row.is_cudnn() && r.status == gpu::Status::pass && std::isfinite(r.search_ms) && r.search_ms > 0 &&
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
        // the engine configuration this process chose, alone (no second search); only its kernel
        // median is read back, so no repeat times the host copies
        v.insert(v.end(), {"--csv", csv.string(), "--order-seed", std::to_string(t.order_seed), "--reuse-engines",
                           "--host-repeats", "0"});
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

// The options a child `convstudy sweep` needs to repeat this one's kernel timings: child_options
// and the sweep's own timing switches (the round-robin seed is the caller's). Only the child's
// kernel medians are read back, so none of its repeats times the host copies.
std::vector<std::string> repeat_options(const CheckOpts& c, const TimingOpts& t, const std::filesystem::path& choices) {
    std::vector<std::string> v = child_options(c, t, choices, t.repeats);
    v.insert(v.end(), {"--host-repeats", "0"});
    if (t.no_recheck) v.push_back("--no-recheck");
    return v;
}

// A cuDNN row's time in this process: the faster of its median and its re-time, where it was
// re-timed (both are this sweep's measurements of the same row).
double own_cudnn_ms(const Row& row) {
    const double t = row.result.kernel.median;
    return row.cudnn_retime_ms ? std::min(t, *row.cudnn_retime_ms) : t;
}
// A timing group's share of the sweep's time split: its rows' plan set-up (cuDNN's engine
// searches apart), checked runs, timing loops and the checks within them, and what run_group
// spent beyond those (allocation and release, the group's bookkeeping).
void add_harness_split(TimeSplit& split, const std::vector<gpu::GroupRow>& rows,
                       const std::vector<gpu::RunResult>& results, double group_ms) {
    double covered = 0;
    for (std::size_t k = 0; k < results.size(); ++k) {
        const auto& r = results[k];
        const double setup = std::isfinite(r.setup_ms) ? r.setup_ms : 0.0;
        const bool cudnn = rows[k].variant->family.rfind("cudnn", 0) == 0;
        split.add(cudnn ? "plan set-up (cuDNN)" : "plan set-up (others)", setup);
        split.add("checked runs", r.check_ms);
        split.add("timing loops", r.loop_ms - r.recheck_ms);
        split.add("checks of later runs", r.recheck_ms);
        covered += setup + r.check_ms + r.loop_ms;
    }
    split.add("harness other", group_ms - covered);
}

// The options of `sweep` (also parsed for each step of `sweep --plan`).
void add_sweep_options(CLI::App* s, SweepArgs& sw, const std::string& table_help, const std::string& golden_help,
                       const char* golden_env) {
    s->add_option("--variants", sw.variants, "variants, comma separated, or all")->delimiter(',');
    s->add_option("--layers", sw.layers, "layer names, comma separated (default: every layer)")->delimiter(',');
    s->add_option("--batch", sw.batches, "batch sizes, comma separated")->delimiter(',');
    s->add_option("--memory", sw.memory, "memory modes, comma separated, or all")->delimiter(',');
    s->add_option("--layout", sw.layouts,
                  "layouts, comma separated: nchw, nhwc or all (default); each variant runs the ones it declares")
        ->delimiter(',');
    s->add_option("--csv", sw.csv, "results CSV (written atomically, after each layer and batch; required but with --plan)");
    s->add_option("--golden", sw.golden, golden_help)->envname(golden_env);
    s->add_option("--table", sw.table.path, table_help);
    s->add_flag("--quiet", sw.quiet, "no progress on stderr; one line per result on stdout");
    s->add_option("--axis", sw.axes,
                  "NAME=V1,V2,... or NAME=all (repeatable): walk an axis; each variant that has it runs once per "
                  "value (and per combination of several axes), recorded in the CSV's `axes` and `config` columns; "
                  "`default` is the variant's own choice. Axes:" + axes_help());
    s->add_option("--shard", sw.shard,
                  "K/N: run only the K-th of N equal, disjoint shares of the rows (one process per GPU or SLURM "
                  "task; join the CSVs with `convstudy merge`)");
    s->add_option("--engine-build-processes", sw.engine_build_processes,
                  "processes that build cuDNN's candidate engine configurations before anything is timed, so that "
                  "the runtime-compiled ones are in the driver's JIT cache; 0: none (default: CPU threads, at most 16)")
        ->check(CLI::Range(0, 64))
        ->default_str("");  // -1 stands for the default above
    s->add_option("--cudnn-processes", sw.cudnn_processes,
                  "time the cuDNN rows again in this many processes in all (fresh `convstudy sweep` processes): "
                  "columns cudnn_process_ms (the median over them), _min_ms, _max_ms")
        ->check(CLI::Range(1, 9));
    s->add_flag("--profile", sw.profile,
                "also run every PASS row under Nsight Compute (ncu columns, as `profile`; slow: one ncu process "
                "per row)");
    add_timing_options(s, sw.timing);
    add_check_options(s, sw.check);
    add_profile_options(s, sw.prof);
}

// Appends x to v unless v holds it already (lists of names in first-seen order).
void add_unique(std::vector<std::string>& v, const std::string& x) {
    if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

// The CPU's hardware threads, at most 16: the default of sweep --engine-build-processes.
int default_engine_build_processes() {
    return std::clamp(int(std::thread::hardware_concurrency()), 1, 16);
}

// The command line of a child `convstudy sweep` of this one: `names` over `layers` (all of the
// table's when empty), `batches` and `layouts`, in this sweep's memory modes, golden folder and
// table, into `csv`, quiet and with no re-times of its own; the caller adds what it is for.
std::vector<std::string> child_sweep(const std::filesystem::path& self, const SweepArgs& a,
                                     const std::vector<std::string>& names, const std::vector<std::string>& layers,
                                     const std::string& batches, const std::string& layouts,
                                     const std::filesystem::path& csv) {
    std::vector<std::string> argv = {self.string(), "sweep", "--variants", join(names, ","), "--batch", batches,
                                     "--layout", layouts, "--memory", join(a.memory, ","), "--csv", csv.string(),
                                     "--golden", a.golden, "--quiet", "--no-retime"};
    if (!layers.empty()) argv.insert(argv.end(), {"--layers", join(layers, ",")});
    if (!a.table.path.empty()) argv.insert(argv.end(), {"--table", a.table.path});
    return argv;
}

// Before anything is timed: the cuDNN rows in NHWC (where runtime-compiled engines are searched)
// build every candidate engine configuration in `processes` fresh `convstudy sweep
// --build-engines-only` processes at once, one shard each. Nothing runs on the GPU there; the
// runtime-compiled engines compile into the driver's JIT cache, which this process then reads
// instead of compiling them itself, one at a time, inside its rows' set-up. Compilation is
// serialized within a process and scales only across processes. A failed process costs time,
// not results: this process compiles what is missing.
void build_cudnn_engines_ahead(const std::vector<SweepItem>& items, const SweepArgs& a, int processes,
                               Progress& progress) {
    std::vector<std::string> names, layers, batches;
    std::size_t rows = 0;
    for (const auto& it : items) {
        if (it.variant->family != "cudnn" || it.layout != gpu::Layout::nhwc) continue;
        add_unique(names, it.variant->name);
        add_unique(layers, it.layer->name);
        add_unique(batches, std::to_string(it.N));
        ++rows;
    }
    processes = int(std::min<std::size_t>(std::size_t(std::max(processes, 0)), rows));
    if (processes == 0) return;
    progress.message("building cuDNN's engine configurations for " + std::to_string(rows) + " rows in " +
                     std::to_string(processes) + " processes before timing");
    TempDir tmp;
    // One future per process: a run_process that throws (no fork) fails its process, not the sweep.
    std::vector<std::future<ProcResult>> running;
    const auto self = self_path("to build cuDNN's engines ahead");
    for (int k = 1; k <= processes; ++k) {
        std::vector<std::string> argv = child_sweep(self, a, names, layers, join(batches, ","), "nhwc",
                                                    tmp.path() / ("build" + std::to_string(k) + ".csv"));
        argv.insert(argv.end(), {"--build-engines-only", "--shard", std::to_string(k) + "/" + std::to_string(processes)});
        const auto more = child_options(a.check, a.timing, {}, 0);
        argv.insert(argv.end(), more.begin(), more.end());
        const auto out = tmp.path() / ("build" + std::to_string(k) + ".txt");
        running.push_back(std::async(std::launch::async, [argv, out] { return run_process(argv, out, 1800); }));
    }
    int failed = 0;
    for (auto& f : running) {
        try {
            const ProcResult r = f.get();
            if (r.timed_out || (r.status != 0 && r.status != kExitFail)) ++failed;
        } catch (const std::exception&) {
            ++failed;
        }
    }
    if (failed)
        progress.message(std::to_string(failed) + " of the " + std::to_string(processes) +
                         " engine-building processes failed: the rows compile what they miss in their own set-up");
}

// --cudnn-processes K > 1: the headline's cuDNN cells rest on K processes, not one. The
// sweep's family-"cudnn" rows run again in K - 1 fresh `convstudy sweep` processes of their own
// (the same layers, batches, layouts, memory modes, data, check and options; round-robin seed
// order_seed + k; --reuse-engines: each row times the configuration (else the engine) this
// process chose, as saved in the engine-choices file, not every engine again), and each PASS
// row records the median, min and max over the processes in which it PASSed (cudnn_processes,
// cudnn_process_ms, ..._min_ms, ..._max_ms). A child that fails costs its processes, not the
// sweep: the rows say how many processes they rest on.
void cudnn_process_medians(std::vector<Row>& rows, const SweepArgs& a, const std::filesystem::path& choices,
                           Progress& progress) {
    std::vector<std::string> names;
    for (const auto& r : rows)
        if (r.is_cudnn()) add_unique(names, r.variant->name);
    if (names.empty() || a.cudnn_processes < 2) return;
    std::map<std::string, std::vector<double>> times;  // row key -> its medians, one per process
    auto key = [](const std::string& layer, std::int64_t N, const std::string& variant, const std::string& layout,
                  const std::string& memory, const std::string& axes) {
        return layer + "|" + std::to_string(N) + "|" + variant + "|" + layout + "|" + memory + "|" + axes;
    };
    auto row_key = [&key](const Row& r) {  // a row of this process, spelled as the children's CSV spells it
        return key(r.layer.name, r.N, r.variant->name, std::string(gpu::to_string(r.layout)),
                   std::string(gpu::to_string(r.memory)), axes_text(r));
    };
    for (const auto& r : rows)
        if (r.is_cudnn() && r.result.status == gpu::Status::pass) times[row_key(r)].push_back(own_cudnn_ms(r));
    for (int k = 1; k < a.cudnn_processes; ++k) {
        TempDir tmp;
        const auto csv = tmp.path() / "cudnn.csv";
        std::vector<std::string> argv =
            child_sweep(self_path("to time the cuDNN rows in another process"), a, names, a.layers,
                        plan_detail::join_batches(a.batches), join(a.layouts, ","), csv);
        argv.insert(argv.end(), {"--reuse-engines", "--order-seed", std::to_string(a.timing.order_seed + std::uint64_t(k))});
        const auto more = repeat_options(a.check, a.timing, choices);
        argv.insert(argv.end(), more.begin(), more.end());
        progress.message("timing the " + std::to_string(names.size()) + " cuDNN variants again in process " +
                         std::to_string(k + 1) + " of " + std::to_string(a.cudnn_processes));
        const ProcResult pr = run_process(argv, tmp.path() / "output.txt", 3600);
        try {
            // exit 1 (a row FAILed) still leaves the PASS rows' times
            if (pr.timed_out || (pr.status != 0 && pr.status != kExitFail))
                throw Error(pr.timed_out ? "timed out" : "exit status " + std::to_string(pr.status));
            for (const auto& r : compare::read_results(csv.string()).rows) {
                if (r.status != "PASS" || !std::isfinite(r.kernel.med)) continue;
                auto it = times.find(key(r.layer, r.N, r.variant, r.layout, r.memory, r.axes));
                if (it != times.end()) it->second.push_back(r.kernel.med);
            }
        } catch (const Error& e) {
            progress.message("cuDNN process " + std::to_string(k + 1) + " failed (" + e.what() +
                             "); the rows rest on the processes that ran");
        }
    }
    for (auto& r : rows) {
        if (!r.is_cudnn() || r.result.status != gpu::Status::pass) continue;
        set_cudnn_processes(r, times[row_key(r)]);
    }
}

// The (variant, memory modes) pairs of a sweep's --variants ("all": every registry row): an
// alias that implies a mode (UM) brings only that mode.
SweepPlan sweep_plan_of(const std::vector<std::string>& names, const std::vector<gpu::MemoryMode>& modes) {
    SweepPlan plan;
    for (const auto& name : names) {
        if (name == "all") {
            for (const auto& v : gpu::registry()) plan.push_back({&v, modes});
            continue;
        }
        const auto ref = find_variant_or_throw(name);
        if (!ref.memory.empty())
            plan.push_back({ref.variant, {*gpu::parse_memory_mode(ref.memory)}});
        else
            plan.push_back({ref.variant, modes});
    }
    return plan;
}

// Before hours of work start: every golden set the sweep's rows need is there (--check golden),
// and every set it may read is verified (manifest entry, seed, headers, sizes, SHA-256), so that
// a damaged set is reported on any machine, before the device is opened.
void check_golden_sets(const SweepArgs& a, const LayerTable& table, const std::vector<const Layer*>& layers,
                       const std::vector<SweepItem>& items) {
    const CheckMode check = a.check.parse();
    const DataScales scales = a.check.scales();
    auto in_shard = [&](std::int64_t N, const Layer* l) {
        return std::any_of(items.begin(), items.end(), [&](const SweepItem& it) { return it.N == N && it.layer == l; });
    };
    for (auto N : a.batches)
        for (const Layer* l : layers) {
            if (check != CheckMode::golden) break;
            if (!in_shard(N, l)) continue;
            if (!have_golden(a.golden, table, *l, N, scales))
                throw Error("no golden set for " + l->name + " at N=" + std::to_string(N) + " under " +
                            golden_table_dir(a.golden, table, scales).string() +
                            "; generate it with: " + regenerate_command(a.golden, table, N, a.check.seed, scales));
        }
    for (auto N : a.batches)
        for (const Layer* l : layers)
            if (check == CheckMode::golden ||
                (check == CheckMode::automatic && have_golden(a.golden, table, *l, N, scales)))
                check_golden(a.golden, table, *l, N, a.check.seed, scales);
}

// The timing groups of items [gi, ge) (one layer and N): the rows of one layout and precision
// class (anchor_class: fp16acc with fp16) are timed round-robin (gpu::run_group), cuDNN's among
// ours; each group lists its items in the sweep's order, and the CSV keeps that order.
std::vector<std::vector<std::size_t>> timing_groups(const std::vector<SweepItem>& items, std::size_t gi, std::size_t ge) {
    std::vector<std::vector<std::size_t>> groups;
    std::map<std::pair<gpu::Layout, gpu::Precision>, std::size_t> group_of;
    for (std::size_t i = gi; i < ge; ++i) {
        const auto key = std::make_pair(items[i].layout, gpu::anchor_class(items[i].variant->precision));
        auto [it, fresh] = group_of.emplace(key, groups.size());
        if (fresh) groups.emplace_back();
        groups[it->second].push_back(i);
    }
    return groups;
}

// The cuBLAS im2col GEMM reference of each precision class that PASSed on this (layer, N), into
// its rows from first_row on: measured once per class.
void fill_im2col_references(std::vector<Row>& rows, std::size_t first_row, gpu::DeviceContext& ctx, const Layer& l,
                            std::int64_t N) {
    std::map<gpu::Precision, std::optional<double>> reference;
    for (std::size_t i = first_row; i < rows.size(); ++i) {
        auto& row = rows[i];
        if (row.result.status != gpu::Status::pass) continue;
        auto it = reference.find(row.precision());
        if (it == reference.end())
            it = reference.emplace(row.precision(), im2col_gemm_reference(ctx, row.precision(), l, N)).first;
        row.im2col_gemm_ms = it->second;
    }
}

// "P passed, F failed, S skipped[, U unchecked]" over rows (ERROR counts as failed).
std::string status_counts(const std::vector<Row>& rows) {
    std::size_t npass = 0, nfail = 0, nskip = 0, nunchecked = 0;
    for (const auto& r : rows) {
        if (r.result.status == gpu::Status::pass) ++npass;
        else if (r.result.status == gpu::Status::skip) ++nskip;
        else if (r.result.status == gpu::Status::unchecked) ++nunchecked;
        else ++nfail;
    }
    return std::to_string(npass) + " passed, " + std::to_string(nfail) + " failed, " + std::to_string(nskip) +
           " skipped" + (nunchecked ? ", " + std::to_string(nunchecked) + " unchecked" : "");
}

// --profile: each PASS row of rows[first_row..] again under ncu (a process of its own per row):
// its ncu columns into fields, its kernels into kernels. A row ncu could not profile keeps a note
// saying why; ncu unusable altogether: save() what there is and rethrow.
void profile_rows(const SweepArgs& a, const std::string& ncu, const std::filesystem::path& choices,
                  const std::vector<Row>& rows, std::size_t first_row, std::vector<std::vector<std::string>>& fields,
                  std::vector<std::pair<std::string, ProfileSummary>>& kernels, Progress& progress, double done,
                  const std::function<void()>& save) {
    for (std::size_t i = first_row; i < rows.size(); ++i) {
        if (rows[i].result.status != gpu::Status::pass) continue;
        const ProfileTarget t = profile_target(rows[i], a.table, a.golden, a.check, a.timing, choices);
        progress.update(done, "ncu: " + t.label);
        try {
            const ProfileSummary s = profile_row(a.prof, ncu, t);
            fields[i] = profile_fields(s);
            kernels.emplace_back(t.label, s);
        } catch (const ProfileUnavailable&) {
            save();
            throw;
        } catch (const Error& e) {
            // one row that ncu could not profile does not stop the sweep: its note says why
            ProfileSummary failed;
            failed.set = a.prof.metrics;
            failed.note = std::string("profiling failed: ") + e.what();
            fields[i] = profile_fields(failed);
            progress.message("ncu failed on " + t.label + ": " + e.what());
        }
    }
}

// --shard, which the extra cuDNN processes cannot split.
Shard sweep_shard(const SweepArgs& a) {
    const Shard shard = parse_shard(a.shard);
    if (shard.count > 1 && a.cudnn_processes > 1)
        throw Error("--cudnn-processes " + std::to_string(a.cudnn_processes) + " with --shard " + a.shard +
                    ": a shard's cuDNN rows cannot be repeated alone; time them over several processes in an "
                    "unsharded sweep");
    return shard;
}

// The table's layers a sweep runs: --layers, else every one.
std::vector<const Layer*> sweep_layers(const SweepArgs& a, const LayerTable& table) {
    std::vector<const Layer*> layers;
    if (a.layers.empty())
        for (const auto& l : table.layers) layers.push_back(&l);
    else
        for (const auto& n : a.layers) layers.push_back(&find_layer(table, n));
    return layers;
}

// --profile: the metric set checked, the kernels CSV writable; the ncu to run.
std::string profile_setup(const SweepArgs& a) {
    metric_set(a.prof.metrics);
    if (!a.prof.kernels_csv.empty()) check_writable(a.prof.kernels_csv, "--kernels-csv");
    return find_ncu(a.prof.ncu);
}

// The cuDNN rows' second looks after the main pass: the strayed ones re-timed (unless
// --no-retime), then every one in the extra processes of --cudnn-processes.
void time_cudnn_again(std::vector<Row>& rows, const SweepArgs& a, const std::filesystem::path& choices, TimeSplit& split,
                      Progress& progress) {
    if (!a.timing.no_retime) {
        const auto s = split.scope("cuDNN re-times");
        retime_strays(rows, a.table, a.golden, a.check, a.timing, choices, progress);
    }
    const auto s = split.scope("extra cuDNN processes");
    cudnn_process_medians(rows, a, choices, progress);
}

// The sweep's device line: the card and the ceilings measured now.
void print_device_line(const RunMeta& meta) {
    std::fprintf(stderr,
                 "device: %s (cc %s, %d SMs); ceilings measured now, TFLOP/s: fp32 %.1f, tf32 %.0f, fp16 %.0f, "
                 "bf16 %.0f; device copy %.0f GB/s\n",
                 meta.device.c_str(), meta.cc.c_str(), meta.sms, meta.peak_fp32, meta.peak_tf32, meta.peak_fp16,
                 meta.peak_bf16, meta.copy_gbs);
}

// The timing groups of one (layer, N), each run round-robin (gpu::run_group), their results into
// the rows (`first_row` is the row of item `gi`), the sweep's progress, split and counters
// updated as they come.
struct GroupRunner {
    bool quiet;
    gpu::DeviceContext& ctx;
    const gpu::RunOptions& opt;
    TimeSplit& split;
    Progress& progress;
    std::vector<Row>& rows;
    double& done;
    bool& any_fail;
    std::size_t& group_index;

    // True when a result lost the CUDA context (its reason in `fatal_reason`); the groups after
    // it do not run.
    bool run(const std::vector<SweepItem>& items, std::size_t gi, const std::vector<std::vector<std::size_t>>& groups,
             const ProblemData& g, std::size_t first_row, std::string& fatal_reason) {
        const Layer* l = items[gi].layer;
        const std::int64_t N = items[gi].N;
        bool fatal = false;
        for (const auto& grp : groups) {
            if (fatal) break;
            const auto& head = items[grp.front()];
            progress.update(done, l->name + " N=" + std::to_string(N) + ": " + std::to_string(grp.size()) +
                                      " rows of " + std::string(gpu::to_string(gpu::anchor_class(head.variant->precision))) +
                                      " " + std::string(gpu::to_string(head.layout)) + ", round-robin");
            std::vector<gpu::GroupRow> grows;
            for (std::size_t i : grp)
                grows.push_back({items[i].variant, items[i].mode,
                                 gpu::Problem{g.layer, g.N, items[i].layout,
                                              gpu::axis_values(*items[i].variant, items[i].config)}});
            const auto group_t0 = std::chrono::steady_clock::now();
            const auto results = gpu::run_group(ctx, grows, g.host(), opt, gpu::order_seed_of(opt, group_index++));
            add_harness_split(split, grows, results,
                              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - group_t0).count());
            for (std::size_t k = 0; k < grp.size(); ++k) {
                Row& row = rows[first_row + (grp[k] - gi)];
                row.result = results[k];
                progress.message(summary_line(row));
                if (quiet) std::printf("%s\n", summary_line(row).c_str());
                done += l->flops(N);
                const auto st = row.result.status;
                if (st == gpu::Status::fail || st == gpu::Status::error) any_fail = true;
                if (row.result.fatal && !fatal) {
                    fatal = true;
                    fatal_reason = row.result.reason;
                }
            }
        }
        return fatal;
    }
};

// After a lost CUDA context: the rows of the (layer, N) whose group never ran say so.
void mark_not_run(std::vector<Row>& rows, std::size_t first_row) {
    for (std::size_t i = first_row; i < rows.size(); ++i)
        if (rows[i].result.status == gpu::Status::error && rows[i].result.reason.empty()) {
            rows[i].result.reason = "not run: the CUDA context was lost";
            rows[i].result.fatal = true;
        }
}

int cmd_sweep(const SweepArgs& a) {
    const Shard shard = sweep_shard(a);
    check_batches(a.batches);
    const LayerTable table = a.table.load();
    const std::vector<const Layer*> layers = sweep_layers(a, table);
    const std::vector<gpu::MemoryMode> modes = values_or_all(a.memory, gpu::all_memory_modes(), parse_mode_or_throw);
    const std::vector<gpu::Layout> layouts = values_or_all(a.layouts, gpu::all_layouts(), parse_layout_or_throw);
    const SweepPlan plan = sweep_plan_of(a.variants, modes);
    check_writable(a.csv);
    const std::string ncu = a.profile ? profile_setup(a) : "";
    const auto choices = engine_choices_path(a.timing.engine_choices, a.golden);
    if (!choices.empty()) check_writable(choices, "--engine-choices");
    gpu::EngineChoices engines;  // this sweep's engine memory: every plan gets it (PlanContext)
    load_engine_choices(choices, engines);
    const std::optional<gpu::Tuning> tuning = load_tuning(a.timing);
    // This process's rows: every row of the sweep, or its shard's.
    const AxisRequests axes = parse_sweep_axes(a.axes, plan);
    const std::vector<SweepItem> items = select_shard(sweep_items(a.batches, layers, plan, layouts, axes), shard);
    const DataScales scales = a.check.scales();
    // Where the sweep's time goes (the closing line; README "Time").
    const auto sweep_t0 = std::chrono::steady_clock::now();
    TimeSplit split;
    auto split_text = [&] {
        return split.text(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sweep_t0).count());
    };
    {
        const auto s = split.scope("golden check");
        check_golden_sets(a, table, layers, items);
    }

    auto device_scope = std::make_optional(split.scope("device and ceilings"));
    auto ctx = open_device();
    const auto opt = a.timing.to_run_options(engines, tuning ? &*tuning : nullptr);
    // A check-only sweep (--repeats 0) has no times to hold against the ceilings.
    const bool timed = opt.repeats > 0;
    RunMeta meta = make_meta(*ctx, opt, timed, a.check.seed, scales);
    meta.table = table.name;
    device_scope.reset();
    if (!a.quiet && timed) print_device_line(meta);
    if (shard.count > 1 && !a.quiet)
        std::fprintf(stderr, "shard %d/%d: %zu rows of the sweep\n", shard.index, shard.count, items.size());
    // A variant runs in each requested layout its registry row declares (others are not
    // rows of the sweep: `convstudy list` shows each variant's layouts); sweep_items
    // lists exactly those rows.
    double total_work = 0;
    for (const auto& it : items) total_work += it.layer->flops(it.N);
    Progress progress("sweep", total_work, a.quiet);
    if (timed && !a.timing.reuse_engines && !a.timing.no_cudnn_rtc && !a.timing.build_engines_only) {
        const auto s = split.scope("cuDNN engines built ahead");
        build_cudnn_engines_ahead(items, a,
                                  a.engine_build_processes >= 0 ? a.engine_build_processes
                                                                : default_engine_build_processes(),
                                  progress);
    }
    double done = 0;
    std::vector<Row> rows;
    std::vector<std::vector<std::string>> prof_fields;  // --profile: the ncu columns of each row
    std::vector<std::pair<std::string, ProfileSummary>> prof_kernels;
    auto save = [&] {
        const auto csv_scope = split.scope("CSV writes");
        fill_ours_over_cudnn(rows);
        prof_fields.resize(rows.size(), profile_fields(std::nullopt));
        ExtraColumns extra{profile_columns(), prof_fields};
        write_csv(a.csv, meta, rows, a.profile ? &extra : nullptr);
        if (!a.prof.kernels_csv.empty() && a.profile) write_kernels_csv(a.prof.kernels_csv, prof_kernels);
    };
    bool any_fail = false;
    std::size_t group_index = 0;
    std::string fatal_reason;
    for (std::size_t gi = 0; gi < items.size();) {
        const std::int64_t N = items[gi].N;
        const Layer* l = items[gi].layer;
        std::size_t ge = gi;
        while (ge < items.size() && items[ge].N == N && items[ge].layer == l) ++ge;
        {
            progress.update(done, l->name + " N=" + std::to_string(N) + ": loading the reference data");
            const ProblemData g = [&] {
                const auto s = split.scope("reference data");
                return load_problem(a.golden, table, *l, N, a.check);
            }();
            const std::size_t first_row = rows.size();
            const auto groups = timing_groups(items, gi, ge);
            for (std::size_t i = gi; i < ge; ++i)
                rows.push_back(make_row(*items[i].variant, items[i].mode, items[i].layout, g));
            GroupRunner runner{a.quiet, *ctx, opt, split, progress, rows, done, any_fail, group_index};
            const bool fatal = runner.run(items, gi, groups, g, first_row, fatal_reason);
            gi = ge;
            if (fatal) {
                mark_not_run(rows, first_row);
                save_engine_choices(choices, engines);
                save();
                progress.finish("stopped");
                std::fprintf(stderr, "sweep time %s\n", split_text().c_str());
                std::fprintf(stderr,
                             "error: %s\nthe CUDA context is unusable after this error; the sweep stopped "
                             "and %s holds the %zu rows run so far\n",
                             fatal_reason.c_str(), a.csv.c_str(), rows.size());
                return kExitFail;
            }
            if (timed) {
                const auto s = split.scope("im2col GEMM references");
                fill_im2col_references(rows, first_row, *ctx, *l, N);
            }
            save_engine_choices(choices, engines);
            prof_fields.resize(rows.size(), profile_fields(std::nullopt));
            if (a.profile) profile_rows(a, ncu, choices, rows, first_row, prof_fields, prof_kernels, progress, done, save);
            // Rewritten (atomically) after each (layer, N): an interrupted sweep keeps its rows.
            save();
            progress.message("time so far " + split_text());
        }
    }
    if (timed) time_cudnn_again(rows, a, choices, split, progress);
    save();
    if (timed)  // also with --quiet: the main job's log keeps where its time went
        std::fprintf(stderr, "sweep time %s\n", split_text().c_str());
    const std::string counts = status_counts(rows);
    progress.finish(counts);
    std::printf("%s; results in %s\n", counts.c_str(), a.csv.c_str());
    return any_fail ? kExitFail : 0;
}

// `sweep --plan FILE`: the plan's sweep steps, in order, in this one process (one CUDA
// context, one engine-choices memory, one set of clocks), each step's command line parsed by
// the same options as `sweep`'s own. Every step is parsed before the first runs, so a bad step
// costs no GPU time. Exit code: the worst step's (1 when a row FAILed); bad input throws (2).
int cmd_sweep_plan(const SweepArgs& top, const std::string& table_help, const std::string& golden_help,
                   const char* golden_env) {
    const Plan plan = load_plan(top.plan);
    const std::vector<SweepStep> all = sweep_steps(plan, top.out);
    std::vector<SweepStep> steps;
    for (std::size_t i = 0, k = 0; i < plan.steps.size(); ++i) {
        if (plan.steps[i].kind != StepKind::sweep) continue;
        const SweepStep& s = all.at(k++);
        if (top.plan_steps.empty() ||
            std::find(top.plan_steps.begin(), top.plan_steps.end(), i) != top.plan_steps.end())
            steps.push_back(s);
    }
    for (const std::size_t i : top.plan_steps)
        if (i >= plan.steps.size() || plan.steps[i].kind != StepKind::sweep)
            throw Error(top.plan + ": --steps " + std::to_string(i) + " is not a sweep step of the plan");
    if (steps.empty()) throw Error(top.plan + ": the plan has no sweep step");
    std::vector<SweepArgs> args(steps.size());
    for (std::size_t i = 0; i < steps.size(); ++i) {
        CLI::App one{"sweep"};
        add_sweep_options(&one, args[i], table_help, golden_help, golden_env);
        std::vector<std::string> argv = sweep_command_line(steps[i]);
        argv.erase(argv.begin());  // "sweep"
        std::reverse(argv.begin(), argv.end());  // CLI11 takes them last first
        try {
            one.parse(argv);
        } catch (const CLI::ParseError& e) {
            throw Error(top.plan + ": sweep step " + std::to_string(i + 1) + ": " + e.what());
        }
        if (args[i].csv.empty()) throw Error(top.plan + ": sweep step " + std::to_string(i + 1) + " names no CSV");
    }
    std::filesystem::create_directories(top.out);
    int rc = 0;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::fprintf(stderr, "sweep --plan %s: step %zu of %zu -> %s\n", top.plan.c_str(), i + 1, args.size(),
                     args[i].csv.c_str());
        rc = std::max(rc, cmd_sweep(args[i]));
    }
    return rc;
}

}  // namespace cs::cli::detail
