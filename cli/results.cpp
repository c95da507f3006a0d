#include "results.hpp"

#include "atomic_file.hpp"
#include "csv_table.hpp"
#include "error.hpp"
#include "join.hpp"
#include "tolerance.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace cs::cli {

namespace {



}  // namespace

// The values a row's columns are made of, computed once per row.
struct CsvCell {
    const RunMeta& m;
    const Row& row;
    const gpu::RunResult& r;
    const Layer& l;
    bool pass, checked;
    double gflop, kernel, total, tflops, overlap, peak;
    gpu::Config ran;  // the config column's axis values (the plan's choices)
};

namespace {

std::string opt(const std::optional<double>& v) { return v ? format_number(*v) : ""; }
std::string pos(long long v) { return v ? std::to_string(v) : ""; }  // 0: not recorded

}  // namespace

namespace {
// A shape column: empty on a chain row (its layers have shapes of their own).
std::string shape(const CsvCell& c, long long v) { return c.row.scope == Scope::chain ? "" : std::to_string(v); }

// The schema's fixed columns, in CSV order (csv_schema adds the axis columns).
std::vector<CsvColumn> fixed_columns() {
    using C = const CsvCell&;
    return {
        {"timestamp", "text", "", "where and what ran; schema_version: the version of this column list, raised when a column is added, removed, renamed or changes meaning", [](C c) { return c.m.timestamp; }},
        {"device", "text", "", nullptr, [](C c) { return c.m.device; }},
        {"cc", "text", "", nullptr, [](C c) { return c.m.cc; }},
        {"sms", "int", "", nullptr, [](C c) { return std::to_string(c.m.sms); }},
        {"cuda_runtime", "text", "", nullptr, [](C c) { return c.m.cuda_runtime; }},
        {"driver", "text", "", nullptr, [](C c) { return c.m.driver; }},
        {"git_rev", "text", "", nullptr, [](C c) { return c.m.git_rev; }},
        {"tool_version", "text", "", nullptr, [](C c) { return c.m.tool_version; }},
        {"schema_version", "int", "", nullptr, [](C) { return std::to_string(kCsvSchemaVersion); }},
        {"scope", "text", "", "what the row times: `conv` one convolution alone (`sweep`, `run`), `chain` a whole chain table run as a network (`convstudy chain`: convolutions, bias, ReLU and pools in one CUDA graph; its layer is `chain` and the shape columns are empty), `layer` one layer's part of a chain replayed alone (its convolution, epilogue and pool; the layers' sum is not the chain's time); then the problem", [](C c) { return std::string(to_string(c.row.scope)); }},
        {"layer", "text", "", nullptr, [](C c) { return c.l.name; }},
        {"C", "int", "", nullptr, [](C c) { return shape(c, c.l.C); }},
        {"H", "int", "", nullptr, [](C c) { return shape(c, c.l.H); }},
        {"W", "int", "", nullptr, [](C c) { return shape(c, c.l.W); }},
        {"M", "int", "", nullptr, [](C c) { return shape(c, c.l.M); }},
        {"R", "int", "", nullptr, [](C c) { return shape(c, c.l.R); }},
        {"S", "int", "", nullptr, [](C c) { return shape(c, c.l.S); }},
        {"stride", "int", "", nullptr, [](C c) { return shape(c, c.l.stride); }},
        {"pad", "int", "", nullptr, [](C c) { return shape(c, c.l.pad); }},
        {"E", "int", "", nullptr, [](C c) { return shape(c, c.l.E()); }},
        {"F", "int", "", nullptr, [](C c) { return shape(c, c.l.F()); }},
        {"N", "int", "", nullptr, [](C c) { return std::to_string(c.row.N); }},
        {"table", "text", "", "the layer table the layer is from (`--table`: a built-in's name, or the file's `name` field), and how many times the network runs the layer's shape (the table's `count`: a network's totals weigh each layer by it)", [](C c) { return c.m.table; }},
        {"count", "int", "", nullptr, [](C c) { return shape(c, c.l.count); }},
        {"variant", "text", "", "what ran: registry name, family, rung (the name without the precision), ladder (the family, or the one of its ladders the rung stands on), precision class (fp32, tf32, fp16, bf16, fp16acc)", [](C c) { return c.row.variant->name; }},
        {"family", "text", "", nullptr, [](C c) { return c.row.variant->family; }},
        {"rung", "text", "", nullptr, [](C c) { return c.row.variant->rung; }},
        {"ladder", "text", "", nullptr, [](C c) { return c.row.variant->ladder; }},
        {"precision", "text", "", nullptr, [](C c) { return std::string(gpu::to_string(c.row.precision())); }},
        {"anchor_class", "text", "", "what the precision class counts as (bench/tolerance.hpp, the one place): the cuDNN class ours_over_cudnn compares with, and the cuBLAS class pct_peak divides by (fp16acc: fp16; every other class itself)", [](C c) { return std::string(gpu::to_string(gpu::anchor_class(c.row.precision()))); }},
        {"ceiling_class", "text", "", nullptr, [](C c) { return std::string(gpu::to_string(gpu::ceiling_class(c.row.precision()))); }},
        {"io_dtype", "text", "", "the element type of the variant's device tensors (f32, f16, bf16), memory mode, layout (nchw, nhwc), the axis values the row set (`--axis`; empty: the variant's defaults) and every axis value the plan ran with (its tile, schedule, tile scheduler and epilogue for the Hopper family), and how it computes (direct, gemm, winograd, fft, or library where the library chose an engine the detail names)", [](C c) { return std::string(gpu::to_string(c.row.variant->io)); }},
        {"memory", "text", "", nullptr, [](C c) { return c.row.scope == Scope::conv ? std::string(gpu::to_string(c.row.memory)) : std::string("device"); }},
        {"layout", "text", "", nullptr, [](C c) { return std::string(gpu::to_string(c.row.layout)); }},
        {"axes", "text", "", nullptr, [](C c) { return axes_text(c.row); }},
        {"config", "text", "", nullptr, [](C c) { return c.r.config; }},
        {"algo", "text", "", nullptr, [](C c) { return c.r.algo; }},
        {"status", "text", "", "PASS, FAIL, SKIP, ERROR or UNCHECKED, and why (SKIP: the variant's own reason; FAIL names the run that differed: the checked run is run 1, every warm-up and timed repeat after it is checked too; UNCHECKED: it ran but no reference checked its output, never PASS)", [](C c) { return std::string(gpu::to_string(c.r.status)); }},
        {"reason", "text", "", nullptr, [](C c) { return c.r.reason; }},
        {"check", "text", "", "what the output was compared with: `golden` (whole tensor) or `sampled(K)`", [](C c) { return c.r.check; }},
        {"max_abs_err", "real", "", "max\\|out−golden\\| (the study's max epsilon), that over max\\|golden\\|, relative L2; the pass threshold on max_rel_err for this precision class", [](C c) { return c.checked ? format_number(c.r.err.max_abs_err) : ""; }},
        {"max_rel_err", "real", "", nullptr, [](C c) { return c.checked ? format_number(c.r.err.max_rel_err) : ""; }},
        {"rel_l2_err", "real", "", nullptr, [](C c) { return c.checked ? format_number(c.r.err.rel_l2_err) : ""; }},
        {"threshold", "real", "", nullptr, [](C c) { return format_number(c.r.threshold); }},
        {"max_bound_ratio", "real", "", "the per-element rule: the largest \\|out−golden\\| / (tau·Σ\\|w·x\\| + u_out·\\|golden\\|) over the output (PASS needs ≤ 1; tau per class, u_out the output type's rounding), and tau", [](C c) { return c.checked && c.r.err.bound_checked ? format_number(c.r.err.max_bound_ratio) : ""; }},
        {"bound_tau", "real", "", nullptr, [](C c) { return c.r.err.bound_checked ? format_number(c.r.err.bound_tau) : ""; }},
        {"kernel_ms", "real", "ms", "all of the variant's kernels: median, min, max, 10th and 90th percentile (the spread `compare` judges on) over `repeats` timed runs after `warmup`", [](C c) { return format_number(c.kernel); }},
        {"kernel_min_ms", "real", "ms", nullptr, [](C c) { return c.pass ? format_number(c.r.kernel.min) : ""; }},
        {"kernel_max_ms", "real", "ms", nullptr, [](C c) { return c.pass ? format_number(c.r.kernel.max) : ""; }},
        {"kernel_p10_ms", "real", "ms", nullptr, [](C c) { return c.pass ? format_number(c.r.kernel.p10) : ""; }},
        {"kernel_p90_ms", "real", "ms", nullptr, [](C c) { return c.pass ? format_number(c.r.kernel.p90) : ""; }},
        {"kernel_p99_ms", "real", "ms", "the 99th percentile of the timed runs, where there are at least 100 (a chain at N=1 runs 200)", [](C c) { return c.pass && c.r.kernel.count >= 100 ? format_number(c.r.kernel.p99) : ""; }},
        {"search_ms", "real", "ms", "a library engine search's own median kernel time (L2 flushed) for the configuration the row runs: the cuDNN graph rows (cudnn-<class>), when that configuration runs the whole batch in one call; empty otherwise (no search, the streams mode's chunks, a chunk on another engine, the legacy API's single Find timing, the s2d rows whose time includes the transform). kernel_ms well above it says the row's timing or data differ from the search's, not the engine", [](C c) { return format_number(c.r.search_ms); }},
        {"repeats", "int", "", "the timed runs behind kernel_ms and the warm-ups before them; whether L2 was flushed before each timed run (1); the generator seed of the inputs; the data scales of the inputs and weights (exact powers of two, 2^-24 to 2^20, written as decimals: `5.9604644775390625e-08` is 2^-24), from `--input-scale` and `--weight-scale`, which the golden manifest must record (docs/cli.md)", [](C c) { return c.pass ? std::to_string(c.r.kernel.count) : ""; }},
        {"warmup", "int", "", nullptr, [](C c) { return std::to_string(c.m.warmup); }},
        {"l2_flush", "flag", "", nullptr, [](C c) { return std::string(c.m.l2_flush ? "1" : "0"); }},
        {"seed", "int", "", nullptr, [](C c) { return c.m.seed ? std::to_string(*c.m.seed) : ""; }},
        {"input_scale", "real", "", nullptr, [](C c) { return c.m.scales ? format_number(c.m.scales->input, "%.17g") : ""; }},
        {"weight_scale", "real", "", nullptr, [](C c) { return c.m.scales ? format_number(c.m.scales->weights, "%.17g") : ""; }},
        {"h2d_ms", "real", "ms", "copies as the memory mode makes them (always float data: the host holds float); convert_ms the GPU kernels that turn float into half/bf16 after the copy in and back before the copy out (0 for float variants); total = h2d + convert + kernel + d2h (streams: the overlapped wall time)", [](C c) { return c.pass ? format_number(c.r.h2d.median) : ""; }},
        {"convert_ms", "real", "ms", nullptr, [](C c) { return c.pass ? format_number(c.r.convert.median) : ""; }},
        {"d2h_ms", "real", "ms", nullptr, [](C c) { return c.pass ? format_number(c.r.d2h.median) : ""; }},
        {"total_ms", "real", "ms", nullptr, [](C c) { return format_number(c.total); }},
        {"total_min_ms", "real", "ms", nullptr, [](C c) { return c.pass ? format_number(c.r.total.min) : ""; }},
        {"total_max_ms", "real", "ms", nullptr, [](C c) { return c.pass ? format_number(c.r.total.max) : ""; }},
        {"total_p10_ms", "real", "ms", nullptr, [](C c) { return c.pass ? format_number(c.r.total.p10) : ""; }},
        {"total_p90_ms", "real", "ms", nullptr, [](C c) { return c.pass ? format_number(c.r.total.p90) : ""; }},
        {"setup_ms", "real", "ms", "allocation and plan set-up, never inside the timings", [](C c) { return format_number(c.r.setup_ms); }},
        {"streams", "int", "", "streams mode: streams, chunks, and (h2d + kernel + d2h) / total", [](C c) { return pos(c.r.streams); }},
        {"chunks", "int", "", nullptr, [](C c) { return pos(c.r.chunks); }},
        {"overlap", "real", "", nullptr, [](C c) { return format_number(c.overlap); }},
        {"cpu_ms", "real", "ms", "the float32 CPU reference time from the manifest (and oneDNN's)", [](C c) { return format_number(c.row.cpu_ms); }},
        {"cpu_threads", "int", "", nullptr, [](C c) { return pos(c.row.cpu_threads); }},
        {"cpu_model", "text", "", nullptr, [](C c) { return c.row.cpu_model; }},
        {"cpu_onednn_ms", "real", "ms", nullptr, [](C c) { return format_number(c.row.cpu_onednn_ms); }},
        {"speedup_kernel", "real", "", "cpu_ms / kernel_ms, cpu_ms / total_ms", [](C c) { return c.pass ? format_number(c.row.cpu_ms / c.kernel) : ""; }},
        {"speedup_total", "real", "", nullptr, [](C c) { return c.pass ? format_number(c.row.cpu_ms / c.total) : ""; }},
        {"ours_over_cudnn", "real", "", "the row's kernel_ms over the fastest cuDNN row's (ours / cuDNN: below 1 = faster than cuDNN; cudnn-<class>, or on a strided layer cudnn-<class>-s2d: our space-to-depth transform + cuDNN on the stride-1 problem), same sweep, (layer, N, memory mode) and precision class (fp16acc rows against fp16): in the row's own layout, and in either layout. Before 0.2.0 these columns were `vs_cudnn` and `vs_cudnn_best` and divided the other way (cuDNN / ours)", [](C c) { return c.pass ? opt(c.row.ours_over_cudnn) : ""; }},
        {"ours_over_cudnn_any_layout", "real", "", nullptr, [](C c) { return c.pass ? opt(c.row.ours_over_cudnn_any_layout) : ""; }},
        {"gflop", "real", "GFLOP", "direct-convolution work, achieved TFLOP/s (for winograd and fft rows an *effective* rate: the direct FLOPs over the time), % of the ceiling of the row's own precision class, and that ceiling (cuBLAS GEMM in fp32, tf32, fp16, bf16, measured at the start of the run; fp32 takes the higher of SGEMM and a register-only FMA kernel)", [](C c) { return format_number(c.gflop); }},
        {"tflops", "real", "TFLOP/s", nullptr, [](C c) { return format_number(c.tflops); }},
        {"pct_peak", "real", "%", nullptr, [](C c) { return c.pass && c.peak > 0 ? format_number(100.0 * c.tflops / c.peak) : ""; }},
        {"peak_tflops", "real", "TFLOP/s", nullptr, [](C c) { return c.peak > 0 ? format_number(c.peak) : ""; }},
        {"im2col_gemm_ms", "real", "ms", "the cuBLAS GEMM of this layer's im2col shape (M x C·R·S by C·R·S x N·E·F) in the row's class, timed in the same run: cuBLAS on the explicit im2col GEMM, a reference and not a ceiling (it streams the im2col matrix, which an implicit GEMM never builds; before 0.2.0 the column was gemm_ceiling_ms); the device-to-device copy bandwidth (GB/s, read + write)", [](C c) { return opt(c.row.im2col_gemm_ms); }},
        {"copy_gbs", "real", "GB/s", nullptr, [](C c) { return c.m.copy_gbs > 0 ? format_number(c.m.copy_gbs) : ""; }},
        {"workspace_bytes", "int", "bytes", "workspace and total device memory used", [](C c) { return std::to_string(c.r.workspace_bytes); }},
        {"device_bytes", "int", "bytes", nullptr, [](C c) { return std::to_string(c.r.device_bytes); }},
        {"checked_runs", "int", "", "runs whose output was checked: the checked run and every warm-up and timed repeat after it (a device-side NaN scan, and the checked run's bits for a deterministic variant or the tile-covering sample for the others; `--no-recheck`: 1)", [](C c) { return pos(c.r.checked_runs); }},
        {"recheck_ms", "real", "ms", "host wall time the checks of the runs after the checked one took (what every-run checking adds to the sweep)", [](C c) { return c.r.checked_runs > 1 ? format_number(c.r.recheck_ms) : ""; }},
        {"host_repeats", "int", "", "timed repeats behind h2d_ms, convert_ms, d2h_ms and total_ms (`--host-repeats`; the others time the kernels alone); kernel_ms is over `repeats`", [](C c) { return c.r.kernel.count ? std::to_string(c.r.host_repeats) : ""; }},
        {"timing_order_seed", "int", "", "the seed of the round-robin order of the row's timing group (its layer, N, layout and precision class: every warm-up and timed repeat runs each row of the group once, in an order shuffled per round)", [](C c) { return c.r.order_seed ? std::to_string(c.r.order_seed) : ""; }},
        {"sm_clock_mhz_start", "real", "MHz", "the SM clock and board power (NVML) before the row's first and after its last timed repeat; empty where NVML is unavailable", [](C c) { return format_number(c.r.sm_clock_mhz_start); }},
        {"sm_clock_mhz_end", "real", "MHz", nullptr, [](C c) { return format_number(c.r.sm_clock_mhz_end); }},
        {"power_w_start", "real", "W", nullptr, [](C c) { return format_number(c.r.power_w_start); }},
        {"power_w_end", "real", "W", nullptr, [](C c) { return format_number(c.r.power_w_end); }},
        {"cudnn_version", "text", "", "the cuDNN library the process ran; `compare` refuses to judge two CSVs of different cuDNN versions silently (a header difference)", [](C c) { return c.m.cudnn_version; }},
        {"cudnn_retime_ms", "real", "ms", "cuDNN rows whose median strayed from their own engine search's median by more than a tenth of it (`kStrayFraction` in cli/sweep.cpp): the median of a re-time in a fresh process", [](C c) { return opt(c.row.cudnn_retime_ms); }},
        {"cudnn_processes", "int", "", "cuDNN (family `cudnn`) rows of a sweep run with `--cudnn-processes K` (the reference plan: 3): the row is timed again in K - 1 fresh `convstudy sweep` processes of the cuDNN rows alone; the number of processes in which it PASSed, and the median, min and max of its medians over them (this process's is the faster of kernel_ms and cudnn_retime_ms). The headline's cuDNN cells use cudnn_process_ms", [](C c) { return pos(c.row.cudnn_processes); }},
        {"cudnn_process_ms", "real", "ms", nullptr, [](C c) { return opt(c.row.cudnn_process_ms); }},
        {"cudnn_process_min_ms", "real", "ms", nullptr, [](C c) { return opt(c.row.cudnn_process_min_ms); }},
        {"cudnn_process_max_ms", "real", "ms", nullptr, [](C c) { return opt(c.row.cudnn_process_max_ms); }},
        {"detail", "text", "", "the plan's launch geometry and choices (a library row: the engine or algorithm and its search)", [](C c) { return c.r.detail; }},
    };
}

// The fixed columns, then after `algo` one column per axis the registry's variants have, in
// the order the registry first shows them: axis_<name>, the value the plan ran with.
std::vector<CsvColumn> with_axis_columns(std::vector<CsvColumn> cols) {
    std::vector<std::string> axes;
    for (const auto& v : gpu::registry())
        for (const auto& a : v.axes)
            if (std::find(axes.begin(), axes.end(), a.name) == axes.end()) axes.push_back(a.name);
    std::vector<CsvColumn> axis_cols;
    for (const auto& a : axes)
        axis_cols.push_back({"axis_" + a, "text", "",
                             axis_cols.empty() ? "one column per axis of the registry (`convstudy list --json` lists "
                                                 "them): the value the plan ran with (the `config` column's), empty "
                                                 "where the variant has no such axis"
                                               : nullptr,
                             [a](const CsvCell& c) {
                                 return c.ran.get(a);
                             }});
    const auto at = std::find_if(cols.begin(), cols.end(), [](const CsvColumn& c) { return c.name == "algo"; });
    cols.insert(at + 1, axis_cols.begin(), axis_cols.end());
    return cols;
}
}  // namespace

// The one schema of the results CSV: each column's name, type, unit, meaning (shared with the
// columns after it that give none) and value, in CSV order. It writes the header and the rows,
// and docs/csv-columns.md is generated from it (`convstudy schema`).
const std::vector<CsvColumn>& csv_schema() {
    static const std::vector<CsvColumn> cols = with_axis_columns(fixed_columns());
    return cols;
}


const std::vector<std::string>& csv_columns() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const auto& c : csv_schema()) v.push_back(c.name);
        return v;
    }();
    return names;
}

std::vector<std::string> csv_fields(const RunMeta& m, const Row& row) {
    if (!row.variant) throw Error("a results row without its variant (a bug in the caller)");
    const auto& r = row.result;
    const auto& l = row.layer;
    const bool pass = r.status == gpu::Status::pass;
    const bool checked = r.check == "golden" || r.check.rfind("sampled", 0) == 0;
    const double gflop = (row.scope == Scope::chain ? row.chain_flops : l.flops(row.N)) * 1e-9;
    const double kernel = pass ? r.kernel.median : NAN;
    const double total = pass ? r.total.median : NAN;
    const double tflops = pass ? gflop / kernel : NAN;  // GFLOP / ms = TFLOP/s
    const bool streams = row.memory == gpu::MemoryMode::streams;
    const double overlap =
        pass && streams ? (r.h2d.median + r.convert.median + r.kernel.median + r.d2h.median) / total : NAN;
    CsvCell cell{m, row, r, l, pass, checked, gflop, kernel, total, tflops, overlap, m.peak_for(row.precision()),
                 gpu::Config::parse(r.config)};
    std::vector<std::string> f;
    for (const auto& c : csv_schema()) f.push_back(c.value(cell));
    return f;
}

std::string schema_markdown() {
    std::string out = "| column | meaning |\n| --- | --- |\n";
    const auto& cols = csv_schema();
    for (std::size_t i = 0; i < cols.size();) {
        std::string names = cols[i].name;
        const std::string meaning = cols[i].meaning;
        std::size_t j = i + 1;
        for (; j < cols.size() && !cols[j].meaning; ++j) names += std::string(", ") + cols[j].name;
        out += "| " + names + " | " + meaning + " |\n";
        i = j;
    }
    return out;
}

std::string csv_number(double v) { return format_number(v); }


std::string axes_text(const Row& row) { return gpu::axis_config(*row.variant, row.result.axes).str(); }

void set_cudnn_processes(Row& row, std::vector<double> v) {
    if (v.empty()) return;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    row.cudnn_processes = int(n);
    row.cudnn_process_ms = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    row.cudnn_process_min_ms = v.front();
    row.cudnn_process_max_ms = v.back();
}

std::string summary_line(const Row& row) {
    const auto& r = row.result;
    const std::string memory(gpu::to_string(row.memory)), layout(gpu::to_string(row.layout));
    char b[512];
    if (r.status == gpu::Status::pass) {
        std::snprintf(b, sizeof b,
                      "%-6s N=%-5lld %-24s %-16s %-4s PASS  kernel %9.4f ms (min %.4f, max %.4f)  total %9.3f ms  "
                      "max_rel_err %.2e",
                      row.layer.name.c_str(), static_cast<long long>(row.N), row.variant->name.c_str(), memory.c_str(),
                      layout.c_str(), r.kernel.median, r.kernel.min, r.kernel.max, r.total.median,
                      r.err.max_rel_err);
        std::string line = b;
        // the CPU's time is unknown under --no-cpu-timing: no speedup rather than "nanx"
        if (std::isfinite(row.cpu_ms) && row.cpu_ms > 0) {
            std::snprintf(b, sizeof b, "  speedup %.1fx", row.cpu_ms / r.kernel.median);
            line += b;
        }
        if (!r.axes.empty()) line += "  [" + axes_text(row) + "]";  // rows of an axis sweep tell themselves apart
        return line;
    } else {
        std::snprintf(b, sizeof b, "%-6s N=%-5lld %-24s %-16s %-4s %-5s %s", row.layer.name.c_str(),
                      static_cast<long long>(row.N), row.variant->name.c_str(), memory.c_str(), layout.c_str(),
                      std::string(gpu::to_string(r.status)).c_str(), r.reason.c_str());
    }
    return b;
}

void write_csv(const std::filesystem::path& path, const RunMeta& meta, const std::vector<Row>& rows,
               const ExtraColumns* extra) {
    write_file_atomic(path, [&](std::ostream& os) {
        const auto& cols = csv_columns();
        os << join(cols, ",");
        if (extra)
            for (const auto& c : extra->names) os << ',' << c;
        os << '\n';
        for (std::size_t r = 0; r < rows.size(); ++r) {
            const auto f = csv_fields(meta, rows[r]);
            os << join(f, ",", csv_quote);
            if (extra)
                for (std::size_t i = 0; i < extra->names.size(); ++i)
                    os << ',' << (r < extra->fields.size() && i < extra->fields[r].size() ? csv_quote(extra->fields[r][i]) : "");
            os << '\n';
        }
    });
}

void check_writable(const std::filesystem::path& path, const std::string& option) {
    namespace fs = std::filesystem;
    const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
    std::error_code ec;
    const std::string hint = "; choose another " + option + " path";
    if (!fs::exists(dir, ec))
        throw Error("cannot write " + path.string() + ": directory " + dir.string() + " does not exist (create it" +
                    " first)" + hint);
    if (!fs::is_directory(dir, ec))
        throw Error("cannot write " + path.string() + ": " + dir.string() + " is not a directory" + hint);
    if (fs::is_directory(path, ec)) throw Error("cannot write " + path.string() + ": it is a directory" + hint);
    // access() says yes to root for any directory; only a real file creation tells (a
    // read-only mount, /proc, a full disk). The probe is removed at once.
    const fs::path probe = dir / (".convstudy-write-probe." + std::to_string(::getpid()));
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        throw Error("cannot write " + path.string() + ": directory " + dir.string() + " is not writable (" +
                    std::strerror(errno) + ")" + hint);
    ::close(fd);
    ::unlink(probe.c_str());
}

double RunMeta::peak_for(gpu::Precision precision) const {
    switch (gpu::ceiling_class(precision)) {
    case gpu::Precision::fp32: return peak_fp32;
    case gpu::Precision::tf32: return peak_tf32;
    case gpu::Precision::fp16: return peak_fp16;
    case gpu::Precision::bf16: return peak_bf16;
    case gpu::Precision::fp16acc: break;
    }
    return 0;
}

std::string anchor_class(const std::string& precision) {
    const auto p = gpu::parse_precision(precision);
    return p ? std::string(gpu::to_string(gpu::anchor_class(*p))) : precision;
}

RatioRow RatioRow::of(const std::string& layer, std::int64_t N, std::string_view memory, std::string_view anchor_class,
                      std::string_view layout, std::string_view family, double kernel_ms) {
    return {layer + "|" + std::to_string(N) + "|" + std::string(memory) + "|" + std::string(anchor_class),
            std::string(layout), is_anchor_family(family), kernel_ms};
}

std::vector<Ratios> ours_over_cudnn(const std::vector<RatioRow>& rows) {
    // group[, layout] -> fastest PASS cuDNN kernel_ms
    std::map<std::string, double> same_layout, any_layout;
    auto keep_min = [](std::map<std::string, double>& m, const std::string& k, double v) {
        auto [it, fresh] = m.emplace(k, v);
        if (!fresh && v < it->second) it->second = v;
    };
    for (const auto& r : rows)
        if (r.cudnn && std::isfinite(r.kernel_ms)) {
            keep_min(same_layout, r.group + "|" + r.layout, r.kernel_ms);
            keep_min(any_layout, r.group, r.kernel_ms);
        }
    std::vector<Ratios> out(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& r = rows[i];
        if (!std::isfinite(r.kernel_ms)) continue;
        if (auto it = same_layout.find(r.group + "|" + r.layout); it != same_layout.end())
            out[i].same_layout = r.kernel_ms / it->second;
        if (auto it = any_layout.find(r.group); it != any_layout.end()) out[i].any_layout = r.kernel_ms / it->second;
    }
    return out;
}

void fill_ours_over_cudnn(std::vector<Row>& rows) {
    std::vector<RatioRow> in;
    in.reserve(rows.size());
    for (const auto& r : rows)
        in.push_back(RatioRow::of(r.layer.name, r.N, gpu::to_string(r.memory),
                                  gpu::to_string(gpu::anchor_class(r.precision())), gpu::to_string(r.layout),
                                  r.variant->family,
                                  r.result.status == gpu::Status::pass ? r.result.kernel.median : NAN));
    const auto out = ours_over_cudnn(in);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        rows[i].ours_over_cudnn = out[i].same_layout;
        rows[i].ours_over_cudnn_any_layout = out[i].any_layout;
    }
}

}  // namespace cs::cli
