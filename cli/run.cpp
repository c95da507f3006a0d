// `convstudy run` (and `profile`, which is `run` under Nsight Compute): one variant on one
// layer and batch, checked and timed; the child command lines that re-run a row (a re-time,
// a cuDNN process, a profile). Shared option groups: command_common.hpp.
#include "command_common.hpp"

#include "ceilings.hpp"
#include "engine_choices_file.hpp"
#include "golden.hpp"
#include "join.hpp"
#include "nvtx.hpp"
#include "results.hpp"
#include "timeline.hpp"
#include "version.hpp"

#include "atomic_file.hpp"
#include "csv_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

namespace cs::cli::detail {

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
            s += join(ax.values, ", ");
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
    if (t.no_cudnn_rtc) v.push_back("--no-cudnn-rtc");
    if (t.workspace_limit_gib > 0) v.insert(v.end(), {"--workspace-limit", csv_number(t.workspace_limit_gib)});
    if (!t.tuning.empty()) v.insert(v.end(), {"--tuning", t.tuning});
    return v;
}

std::optional<gpu::Tuning> load_tuning(const TimingOpts& t) {
    std::string path = t.tuning;
    if (const char* e = std::getenv("CONVSTUDY_TUNING"); path.empty() && e && *e) path = e;
    if (path.empty()) return std::nullopt;
    return gpu::read_tuning(path);
}

// The `run` command line that repeats `row` under ncu for `profile` (cli/profile.hpp):
// the same data, check, options and engine choices, with one timed repeat.
ProfileTarget profile_target(const Row& row, const TableOpt& table, const std::string& golden, const CheckOpts& c,
                             const TimingOpts& t, const std::filesystem::path& choices) {
    ProfileTarget p;
    const std::string memory(gpu::to_string(row.memory)), layout(gpu::to_string(row.layout));
    p.label = gpu::nvtx::row_name(row.layer.name, static_cast<long long>(row.N), row.variant->name, layout, memory);
    p.detail = row.result.detail;
    auto& v = p.run_args;
    v = {"run", "--variant", row.variant->name, "--layer", row.layer.name, "--batch", std::to_string(row.N), "--memory",
         memory, "--layout", layout, "--golden", golden};
    const auto options = child_options(c, t, choices, 1);
    v.insert(v.end(), options.begin(), options.end());
    v.push_back("--profile-target");
    if (!table.path.empty()) v.insert(v.end(), {"--table", table.path});
    for (const auto& [axis, value] : gpu::axis_config(*row.variant, row.result.axes).set)  // one --axis each
        v.insert(v.end(), {"--axis", axis + "=" + value});
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

// `run --timeline`: the intervals of the device's timeline (bench/timeline.hpp), a CSV row each,
// and their medians on stdout.
void write_timeline(const std::string& path, std::vector<gpu::TimelineRecord> records, const Row& row) {
    const auto intervals = gpu::timeline_intervals(std::move(records), "hold_kernel");
    const auto s = gpu::summarize(intervals);
    char post[96] = "unknown";
    const double est = gpu::post_from_event_median(s, row.result.kernel.median * 1e3);
    if (s.post_us >= 0) std::snprintf(post, sizeof post, "%.2f us", s.post_us);
    else if (std::isfinite(est)) std::snprintf(post, sizeof post, "about %.2f us (the events' median less pre and kernels)", est);
    std::printf("  timeline: %d interval(s), %d on their events: medians pre %.2f us, kernels %.2f us, post %s\n",
                s.intervals, s.event_anchored, s.pre_us, s.body_us, post);
    const std::string label = row.variant->name + " " + row.layer.name + " N=" + std::to_string(row.N);
    write_file_atomic(path, [&](std::ostream& o) {
        o << "row,interval,anchor,pre_us,body_us,post_us,kernels,first_kernel,smem_config,hold_smem_config\n";
        for (std::size_t i = 0; i < intervals.size(); ++i) {
            const auto& t = intervals[i];
            o << csv_quote(label) << ',' << i << ',' << (t.event_anchored ? "events" : "hold") << ',' << t.pre_us
              << ',' << t.body_us << ',';
            if (t.post_us >= 0) o << t.post_us;
            o << ',' << t.kernels << ',' << csv_quote(t.first_kernel) << ',' << t.smem_config << ','
              << t.hold_smem_config << '\n';
        }
    });
}

// `profile` (profiling = true) is `run` plus Nsight Compute's counters of one timed repeat.
int cmd_run(RunArgs a, bool profiling) {
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
    // --timeline: every iteration the row's kernels alone (a host-timed one also converts the input
    // between two holds, an interval that is not the row's)
    if (!a.timeline.empty()) {
        check_writable(a.timeline, "--timeline");
        a.timing.host_repeats = 0;
    }
    std::string ncu;
    if (profiling) {
        metric_set(a.prof.metrics);
        if (!a.prof.kernels_csv.empty()) check_writable(a.prof.kernels_csv, "--kernels-csv");
        ncu = find_ncu(a.prof.ncu);
    }
    const auto choices = engine_choices_path(a.timing.engine_choices, a.golden);
    if (!choices.empty() && !a.profile_target) check_writable(choices, "--engine-choices");
    gpu::EngineChoices engines;  // this run's engine memory: every plan gets it (PlanContext)
    load_engine_choices(choices, engines);
    const std::optional<gpu::Tuning> tuning = load_tuning(a.timing);
    // The golden set is loaded and verified before the device is asked for, so a missing
    // or damaged set is reported (exit 2) on any machine; a sampled check's CPU work waits
    // until a device is there to use it.
    std::optional<ProblemData> golden;
    if (check == CheckMode::golden ||
        (check == CheckMode::automatic && have_golden(a.golden, table, layer, a.batch, scales)))
        golden = from_golden(load_golden(a.golden, table, layer, a.batch, a.check.seed, scales));
    auto ctx = open_device();
    const ProblemData d = golden ? std::move(*golden) : load_problem(a.golden, table, layer, a.batch, a.check);
    const auto opt = a.timing.to_run_options(engines, tuning ? &*tuning : nullptr);
    // The ceilings and the GEMM of the layer's shape appear only in the CSV, beside times.
    const bool ceilings = !a.csv.empty() && opt.repeats > 0;
    RunMeta meta = make_meta(*ctx, opt, ceilings, a.check.seed, d.scales);
    meta.table = table.name;
    std::optional<gpu::TimelineCapture> timeline;
    if (!a.timeline.empty()) timeline.emplace();
    Row row = run_one(*ctx, *ref.variant, mode, layout, d, opt, config);
    if (timeline) write_timeline(a.timeline, timeline->finish(), row);
    if (!a.profile_target) save_engine_choices(choices, engines);
    if (ceilings && row.result.status == gpu::Status::pass)
        row.im2col_gemm_ms = im2col_gemm_reference(*ctx, row.precision(), layer, a.batch);
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

}  // namespace cs::cli::detail
