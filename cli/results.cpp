#include "results.hpp"

#include "atomic_file.hpp"
#include "csv_table.hpp"
#include "error.hpp"
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

const std::vector<std::string>& csv_columns() {
    static const std::vector<std::string> cols = {
        "timestamp", "device", "cc", "sms", "cuda_runtime", "driver", "git_rev", "tool_version",
        "layer", "C", "H", "W", "M", "R", "S", "stride", "pad", "E", "F", "N",
        "variant", "family", "precision", "anchor_class", "ceiling_class", "io_dtype", "memory", "layout", "axes", "config", "algo", "status", "reason", "check",
        "max_abs_err", "max_rel_err", "rel_l2_err", "threshold", "max_bound_ratio", "bound_tau",
        "kernel_ms", "kernel_min_ms", "kernel_max_ms", "kernel_p10_ms", "kernel_p90_ms", "search_ms", "repeats", "warmup",
        "l2_flush", "seed", "input_scale", "weight_scale", "h2d_ms", "convert_ms", "d2h_ms", "total_ms", "total_min_ms", "total_max_ms",
        "total_p10_ms", "total_p90_ms", "setup_ms",
        "streams", "chunks", "overlap",
        "cpu_ms", "cpu_threads", "cpu_model", "cpu_onednn_ms",
        "speedup_kernel", "speedup_total", "ours_over_cudnn", "ours_over_cudnn_any_layout",
        "gflop", "tflops", "pct_peak", "peak_tflops", "im2col_gemm_ms", "copy_gbs",
        "workspace_bytes", "device_bytes",
        "checked_runs", "recheck_ms", "host_repeats", "timing_order_seed", "sm_clock_mhz_start", "sm_clock_mhz_end", "power_w_start",
        "power_w_end", "cudnn_version", "cudnn_retime_ms", "cudnn_processes", "cudnn_process_ms",
        "cudnn_process_min_ms", "cudnn_process_max_ms", "detail"};
    return cols;
}

namespace {

std::string num(double v, int prec = 6) {
    if (!std::isfinite(v)) return "";
    char b[64];
    std::snprintf(b, sizeof b, "%.*g", prec, v);
    return b;
}


}  // namespace

std::vector<std::string> csv_fields(const RunMeta& m, const Row& row) {
    const auto& r = row.result;
    const auto& l = row.layer;
    const bool pass = r.status == gpu::Status::pass;
    const bool checked = r.check == "golden" || r.check.rfind("sampled", 0) == 0;
    const double gflop = l.flops(row.N) * 1e-9;
    const double kernel = pass ? r.kernel.median : NAN;
    const double total = pass ? r.total.median : NAN;
    const double tflops = pass ? gflop / kernel : NAN;  // GFLOP / ms = TFLOP/s
    const bool streams = row.memory == "streams";
    const double overlap =
        pass && streams ? (r.h2d.median + r.convert.median + r.kernel.median + r.d2h.median) / total : NAN;
    const double peak = m.peak_for(row.precision);
    std::vector<std::string> f = {
        m.timestamp, m.device, m.cc, std::to_string(m.sms), m.cuda_runtime, m.driver, m.git_rev, m.tool_version,
        l.name, std::to_string(l.C), std::to_string(l.H), std::to_string(l.W), std::to_string(l.M),
        std::to_string(l.R), std::to_string(l.S), std::to_string(l.stride), std::to_string(l.pad),
        std::to_string(l.E()), std::to_string(l.F()), std::to_string(row.N),
        row.variant, row.family, row.precision, anchor_class(row.precision), ceiling_class(row.precision), row.io_dtype, row.memory, row.layout, r.axes, r.config, r.algo,
        std::string(gpu::to_string(r.status)), r.reason, r.check,
        checked ? num(r.err.max_abs_err) : "", checked ? num(r.err.max_rel_err) : "",
        checked ? num(r.err.rel_l2_err) : "", num(r.threshold),
        checked && r.err.bound_checked ? num(r.err.max_bound_ratio) : "",
        r.err.bound_checked ? num(r.err.bound_tau) : "",
        num(kernel), pass ? num(r.kernel.min) : "", pass ? num(r.kernel.max) : "",
        pass ? num(r.kernel.p10) : "", pass ? num(r.kernel.p90) : "", num(r.search_ms),
        pass ? std::to_string(r.kernel.count) : "", std::to_string(m.warmup), m.l2_flush ? "1" : "0",
        m.seed ? std::to_string(*m.seed) : "",
        m.scales ? num(m.scales->input, 17) : "", m.scales ? num(m.scales->weights, 17) : "",
        pass ? num(r.h2d.median) : "", pass ? num(r.convert.median) : "", pass ? num(r.d2h.median) : "", num(total),
        pass ? num(r.total.min) : "", pass ? num(r.total.max) : "", pass ? num(r.total.p10) : "",
        pass ? num(r.total.p90) : "", num(r.setup_ms),
        r.streams ? std::to_string(r.streams) : "", r.chunks ? std::to_string(r.chunks) : "", num(overlap),
        num(row.cpu_ms), row.cpu_threads ? std::to_string(row.cpu_threads) : "", row.cpu_model,
        num(row.cpu_onednn_ms),
        pass ? num(row.cpu_ms / kernel) : "", pass ? num(row.cpu_ms / total) : "",
        row.ours_over_cudnn && pass ? num(*row.ours_over_cudnn) : "", row.ours_over_cudnn_any_layout && pass ? num(*row.ours_over_cudnn_any_layout) : "",
        num(gflop), num(tflops), pass && peak > 0 ? num(100.0 * tflops / peak) : "", peak > 0 ? num(peak) : "",
        row.im2col_gemm_ms ? num(*row.im2col_gemm_ms) : "", m.copy_gbs > 0 ? num(m.copy_gbs) : "",
        std::to_string(r.workspace_bytes), std::to_string(r.device_bytes),
        r.checked_runs ? std::to_string(r.checked_runs) : "", r.checked_runs > 1 ? num(r.recheck_ms) : "", r.kernel.count ? std::to_string(r.host_repeats) : "",
        r.order_seed ? std::to_string(r.order_seed) : "", num(r.sm_clock_mhz_start), num(r.sm_clock_mhz_end),
        num(r.power_w_start), num(r.power_w_end), m.cudnn_version,
        row.cudnn_retime_ms ? num(*row.cudnn_retime_ms) : "",
        row.cudnn_processes ? std::to_string(row.cudnn_processes) : "",
        row.cudnn_process_ms ? num(*row.cudnn_process_ms) : "", row.cudnn_process_min_ms ? num(*row.cudnn_process_min_ms) : "",
        row.cudnn_process_max_ms ? num(*row.cudnn_process_max_ms) : "", r.detail};
    return f;
}

std::string csv_number(double v) { return num(v); }

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
    char b[512];
    if (r.status == gpu::Status::pass) {
        std::snprintf(b, sizeof b,
                      "%-6s N=%-5lld %-24s %-16s %-4s PASS  kernel %9.4f ms (min %.4f, max %.4f)  total %9.3f ms  "
                      "max_rel_err %.2e",
                      row.layer.name.c_str(), static_cast<long long>(row.N), row.variant.c_str(), row.memory.c_str(),
                      row.layout.c_str(), r.kernel.median, r.kernel.min, r.kernel.max, r.total.median,
                      r.err.max_rel_err);
        std::string line = b;
        // the CPU's time is unknown under --no-cpu-timing: no speedup rather than "nanx"
        if (std::isfinite(row.cpu_ms) && row.cpu_ms > 0) {
            std::snprintf(b, sizeof b, "  speedup %.1fx", row.cpu_ms / r.kernel.median);
            line += b;
        }
        if (!r.axes.empty()) line += "  [" + r.axes + "]";  // rows of an axis sweep tell themselves apart
        return line;
    } else {
        std::snprintf(b, sizeof b, "%-6s N=%-5lld %-24s %-16s %-4s %-5s %s", row.layer.name.c_str(),
                      static_cast<long long>(row.N), row.variant.c_str(), row.memory.c_str(), row.layout.c_str(),
                      std::string(gpu::to_string(r.status)).c_str(), r.reason.c_str());
    }
    return b;
}

void write_csv(const std::filesystem::path& path, const RunMeta& meta, const std::vector<Row>& rows,
               const ExtraColumns* extra) {
    write_file_atomic(path, [&](std::ostream& os) {
        const auto& cols = csv_columns();
        for (std::size_t i = 0; i < cols.size(); ++i) os << (i ? "," : "") << cols[i];
        if (extra)
            for (const auto& c : extra->names) os << ',' << c;
        os << '\n';
        for (std::size_t r = 0; r < rows.size(); ++r) {
            const auto f = csv_fields(meta, rows[r]);
            for (std::size_t i = 0; i < f.size(); ++i) os << (i ? "," : "") << csv_quote(f[i]);
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

double RunMeta::peak_for(const std::string& precision) const {
    const std::string c = ceiling_class(precision);
    if (c == "fp32") return peak_fp32;
    if (c == "tf32") return peak_tf32;
    if (c == "fp16") return peak_fp16;
    if (c == "bf16") return peak_bf16;
    return 0;
}

std::string anchor_class(const std::string& precision) {
    const auto p = gpu::parse_precision(precision);
    return p ? std::string(gpu::to_string(gpu::anchor_class(*p))) : precision;
}

std::string ceiling_class(const std::string& precision) {
    const auto p = gpu::parse_precision(precision);
    return p ? std::string(gpu::to_string(gpu::ceiling_class(*p))) : precision;
}

void fill_ours_over_cudnn(std::vector<Row>& rows) {
    // (layer, N, memory, class[, layout]) -> fastest cuDNN kernel_ms
    std::map<std::string, double> same_layout, any_layout;
    auto key = [](const Row& r) {
        return r.layer.name + "|" + std::to_string(r.N) + "|" + r.memory + "|" + anchor_class(r.precision);
    };
    auto keep_min = [](std::map<std::string, double>& m, const std::string& k, double v) {
        auto [it, fresh] = m.emplace(k, v);
        if (!fresh && v < it->second) it->second = v;
    };
    for (const auto& r : rows)
        if (r.family == "cudnn" && r.result.status == gpu::Status::pass) {
            keep_min(same_layout, key(r) + "|" + r.layout, r.result.kernel.median);
            keep_min(any_layout, key(r), r.result.kernel.median);
        }
    for (auto& r : rows) {
        r.ours_over_cudnn.reset();
        r.ours_over_cudnn_any_layout.reset();
        if (r.result.status != gpu::Status::pass) continue;
        if (auto it = same_layout.find(key(r) + "|" + r.layout); it != same_layout.end())
            r.ours_over_cudnn = r.result.kernel.median / it->second;
        if (auto it = any_layout.find(key(r)); it != any_layout.end())
            r.ours_over_cudnn_any_layout = r.result.kernel.median / it->second;
    }
}

}  // namespace cs::cli
