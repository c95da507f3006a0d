#include "profile.hpp"

#include "atomic_file.hpp"
#include "csv_table.hpp"
#include "join.hpp"
#include "nvtx.hpp"
#include "process.hpp"

#include <CLI/CLI.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

namespace cs::cli {

namespace {

namespace fs = std::filesystem;

// Metric names (Nsight Compute, sm_70 and later).
// The tensor pipe: on sm_90 warpgroup MMA (wgmma, SASS HGMMA) runs on the HMMA sub-pipe, so
// sm__pipe_tensor_op_hmma_cycles_active counts the cycles of mma.sync and wgmma alike; sm_90
// has no gmma cycles counter (an H100's ncu listed no sm__pipe_tensor_op_gmma_cycles_active,
// while the wgmma-only ws_kernel read the same busy share in the HMMA sub-pipe and the whole pipe:
// the H100 profile of stop 23, now plots/h100/kernels_hopper_ladder_n128.csv). What tells wgmma apart is its own instruction counter,
// sm__inst_executed_pipe_tensor_op_gmma (aggregate() splits the cycles by it).
constexpr const char* kDuration = "gpu__time_duration.sum";
constexpr const char* kTensor = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active";
constexpr const char* kHmma = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active";
constexpr const char* kGmmaInst = "sm__inst_executed_pipe_tensor_op_gmma.sum";  // wgmma warp instructions
constexpr const char* kFma = "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active";
constexpr const char* kSm = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
constexpr const char* kDramRead = "dram__bytes_read.sum";
constexpr const char* kDramWrite = "dram__bytes_write.sum";
constexpr const char* kL2Hit = "lts__t_sector_hit_rate.pct";
constexpr const char* kL2Sectors = "lts__t_sectors.sum";
constexpr const char* kOccupancy = "sm__warps_active.avg.pct_of_peak_sustained_active";
constexpr const char* kRegisters = "launch__registers_per_thread";
constexpr const char* kSmemDynamic = "launch__shared_mem_per_block_dynamic";
constexpr const char* kSmemStatic = "launch__shared_mem_per_block_static";
constexpr const char* kDramPct = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
constexpr const char* kL1Hit = "l1tex__t_sector_hit_rate.pct";
constexpr const char* kL1Sectors = "l1tex__t_sectors.sum";
constexpr const char* kWaves = "launch__waves_per_multiprocessor";

const std::map<std::string, std::vector<std::string>>& sets() {
    static const std::map<std::string, std::vector<std::string>> s = [] {
        std::vector<std::string> d = {kDuration, kTensor,   kHmma,      kGmmaInst,   kFma,        kSm,
                                      kDramRead, kDramWrite, kL2Hit,    kL2Sectors,  kOccupancy,  kRegisters,
                                      kSmemDynamic, kSmemStatic};
        std::vector<std::string> full = d;
        for (const char* m : {kDramPct, kL1Hit, kL1Sectors, kWaves}) full.push_back(m);
        return std::map<std::string, std::vector<std::string>>{{"default", d}, {"detailed", full}};
    }();
    return s;
}

std::string trim(std::string s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return "";
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}

// Multiplier from `unit` to base units (byte, nanosecond); 1 for %, counts and unknown units.
double unit_scale(const std::string& unit) {
    static const std::map<std::string, double> scale = {
        {"byte", 1},        {"Kbyte", 1e3},     {"Mbyte", 1e6},    {"Gbyte", 1e9},   {"Tbyte", 1e12},
        {"KB", 1e3},        {"MB", 1e6},        {"GB", 1e9},       {"KiB", 1024.0},  {"MiB", 1048576.0},
        {"GiB", 1073741824.0}, {"nsecond", 1}, {"ns", 1},         {"usecond", 1e3}, {"us", 1e3},
        {"msecond", 1e6},   {"ms", 1e6},        {"second", 1e9},   {"s", 1e9}};
    std::string u = trim(unit);
    const auto slash = u.find('/');  // "byte/block", "Kbyte/block": the numerator's scale
    if (slash != std::string::npos) u = u.substr(0, slash);
    auto it = scale.find(u);
    return it == scale.end() ? 1.0 : it->second;
}

// A metric value: thousands separators dropped; "n/a" and empty give nullopt.
std::optional<double> parse_value(const std::string& raw) {
    std::string s;
    for (char c : trim(raw))
        if (c != ',') s += c;
    if (s.empty()) return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || *end != '\0' || !std::isfinite(v)) return std::nullopt;
    return v;
}


std::string tail(const std::string& s, std::size_t lines) {
    std::size_t pos = s.size(), n = 0;
    while (pos > 0 && n <= lines) {
        pos = s.rfind('\n', pos - 1);
        if (pos == std::string::npos) return s;
        ++n;
    }
    return s.substr(pos + 1);
}

std::string read_text(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

bool executable(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

const char* const kInstallHint =
    "Nsight Compute ships with the CUDA toolkit (e.g. /usr/local/cuda/bin/ncu; on Debian/Ubuntu also the "
    "package nsight-compute): put its bin directory on PATH, pass --ncu PATH, or set CONVSTUDY_NCU";

const char* const kPermissionHint =
    "ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM): run as root (sudo), or let every user "
    "read them: echo 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' | sudo tee "
    "/etc/modprobe.d/nvidia-profiling.conf, then reload the nvidia module or reboot; in a container, start it "
    "with --cap-add=SYS_ADMIN. See https://developer.nvidia.com/ERR_NVGPUCTRPERM";

// The metric names the device's ncu knows (ncu --query-metrics), cached per ncu; empty when
// the query failed (then every metric is asked for and unknown ones are dropped on retry).
std::set<std::string> known_metrics(const std::string& ncu) {
    static std::map<std::string, std::set<std::string>> cache;
    if (auto it = cache.find(ncu); it != cache.end()) return it->second;
    std::set<std::string> names;
    TempDir tmp;
    const fs::path out = tmp.path() / "query.txt";
    try {
        const auto r = run_process({ncu, "--query-metrics"}, out, 120);
        if (r.status == 0) {
            std::istringstream in(read_text(out));
            std::string tok;
            while (in >> tok)
                if (tok.find("__") != std::string::npos) names.insert(tok);
        }
    } catch (const Error&) {
        names.clear();
    }
    if (names.size() < 20) names.clear();  // not a metric listing
    cache[ncu] = names;
    return names;
}

std::string base_name(const std::string& metric) { return metric.substr(0, metric.find('.')); }

}  // namespace

void add_profile_options(CLI::App* c, ProfileOptions& o) {
    c->add_option("--metrics", o.metrics,
                  "Nsight Compute metric set: default (tensor and FMA pipes, SM throughput, DRAM bytes, L2 hit "
                  "rate, occupancy, registers, shared memory) or detailed (also DRAM throughput, L1 hit rate, "
                  "waves)");
    c->add_option("--ncu", o.ncu, "the ncu program (default: $CONVSTUDY_NCU, ncu on PATH, the CUDA toolkit's)");
    c->add_option("--kernels-csv", o.kernels_csv, "also write one row per profiled kernel to this CSV");
    c->add_option("--profile-timeout", o.timeout_s, "seconds one row may take under ncu")->check(CLI::Range(10, 86400));
}

const std::vector<std::string>& metric_set(const std::string& name) {
    auto it = sets().find(name);
    if (it == sets().end())
        throw Error("unknown metric set '" + name + "'; valid sets: " + metric_set_names());
    return it->second;
}

std::string metric_set_names() {
    return join(sets(), ", ", [](const auto& kv) -> const std::string& { return kv.first; });
}

std::string find_ncu(const std::string& option) {
    if (!option.empty()) {
        if (!executable(option)) throw ProfileUnavailable("--ncu " + option + ": no such executable. " + kInstallHint);
        return option;
    }
    if (const char* env = std::getenv("CONVSTUDY_NCU"); env && *env) {
        if (!executable(env))
            throw ProfileUnavailable(std::string("CONVSTUDY_NCU=") + env + ": no such executable. " + kInstallHint);
        return env;
    }
    if (const char* path = std::getenv("PATH")) {
        std::istringstream in(path);
        std::string dir;
        while (std::getline(in, dir, ':'))
            if (!dir.empty() && executable(fs::path(dir) / "ncu")) return (fs::path(dir) / "ncu").string();
    }
    for (const char* p : {"/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/ncu"})
        if (executable(p)) return p;
    throw ProfileUnavailable(std::string("Nsight Compute (ncu) was not found on PATH. ") + kInstallHint);
}

std::vector<KernelMetrics> parse_ncu_csv(const std::string& text, const std::string& where) {
    // Keep the CSV block: from the header line on, without ncu's own ==...== lines.
    std::string csv;
    bool in = false;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.rfind("==", 0) == 0) continue;
        if (!in && line.rfind("\"ID\",", 0) == 0) in = true;
        if (in) csv += line + "\n";
    }
    if (!in) throw Error(where + ": no Nsight Compute CSV in the output (no header line starting with \"ID\")");
    const auto recs = parse_csv_records(csv, where);
    const auto& h = recs.front();
    auto col = [&](const std::string& n) {
        for (std::size_t i = 0; i < h.size(); ++i)
            if (h[i] == n) return int(i);
        return -1;
    };
    const int cid = col("ID"), cname = col("Kernel Name");
    if (cid < 0 || cname < 0) throw Error(where + ": the ncu CSV has no \"ID\" or \"Kernel Name\" column");
    std::vector<KernelMetrics> out;
    std::map<int, std::size_t> index;
    auto kernel = [&](const std::vector<std::string>& r, std::size_t rec) -> KernelMetrics& {
        int id = -1;
        try {
            id = std::stoi(r[std::size_t(cid)]);
        } catch (const std::exception&) {
            throw Error(where + ": record " + std::to_string(rec + 1) + ": bad kernel ID '" + r[std::size_t(cid)] + "'");
        }
        auto [it, fresh] = index.emplace(id, out.size());
        if (fresh) out.push_back(KernelMetrics{id, r[std::size_t(cname)], {}});
        return out[it->second];
    };
    const int cmetric = col("Metric Name"), cunit = col("Metric Unit"), cvalue = col("Metric Value");
    if (cmetric >= 0 && cvalue >= 0) {  // details layout: one line per kernel and metric
        for (std::size_t i = 1; i < recs.size(); ++i) {
            const auto& r = recs[i];
            if (r.size() != h.size())
                throw Error(where + ": record " + std::to_string(i + 1) + " has " + std::to_string(r.size()) +
                            " fields, the header has " + std::to_string(h.size()));
            KernelMetrics& k = kernel(r, i);
            const std::string& name = r[std::size_t(cmetric)];
            if (name.empty()) continue;
            if (auto v = parse_value(r[std::size_t(cvalue)]))
                k.values[name] = *v * unit_scale(cunit >= 0 ? r[std::size_t(cunit)] : "");
        }
        return out;
    }
    // raw page: one column per metric; the line under the header holds the units
    std::size_t first = 1;
    std::vector<std::string> units(h.size());
    if (recs.size() > 1 && recs[1].size() == h.size() && trim(recs[1][std::size_t(cid)]).empty()) {
        units = recs[1];
        first = 2;
    }
    for (std::size_t i = first; i < recs.size(); ++i) {
        const auto& r = recs[i];
        if (r.size() != h.size())
            throw Error(where + ": record " + std::to_string(i + 1) + " has " + std::to_string(r.size()) +
                        " fields, the header has " + std::to_string(h.size()));
        KernelMetrics& k = kernel(r, i);
        for (std::size_t c = 0; c < h.size(); ++c) {
            if (h[c].find("__") == std::string::npos) continue;  // ID, Kernel Name, Device, ...
            if (auto v = parse_value(r[c])) k.values[h[c]] = *v * unit_scale(units[c]);
        }
    }
    return out;
}

ProfileSummary aggregate(const std::vector<KernelMetrics>& ks, const std::string& set) {
    ProfileSummary s;
    s.set = set;
    s.kernels = int(ks.size());
    s.per_kernel = ks;
    if (ks.empty()) return s;
    double total_ns = 0;
    const KernelMetrics* main = nullptr;
    for (const auto& k : ks) {
        const double d = k.get(kDuration);
        if (std::isfinite(d)) {
            total_ns += d;
            if (!main || d > main->get(kDuration)) main = &k;
        }
    }
    if (!main) main = &ks.front();
    s.main_kernel = main->name;
    s.time_ms = total_ns > 0 ? total_ns * 1e-6 : NAN;
    // Weighted mean of `value(k)` over the kernels that have it, by `weight(k)` (duration).
    auto weighted = [&](auto value, auto weight) {
        double num = 0, den = 0;
        for (const auto& k : ks) {
            const double v = value(k), w = weight(k);
            if (std::isfinite(v) && std::isfinite(w) && w > 0) {
                num += v * w;
                den += w;
            }
        }
        if (den > 0) return num / den;
        // no weights: a plain mean of the values there are
        double sum = 0;
        int n = 0;
        for (const auto& k : ks)
            if (std::isfinite(value(k))) {
                sum += value(k);
                ++n;
            }
        return n ? sum / n : NAN;
    };
    auto by_time = [](const KernelMetrics& k) { return k.get(kDuration); };
    auto metric = [](const char* m) { return [m](const KernelMetrics& k) { return k.get(m); }; };
    auto sum = [&](const char* m) {
        double t = 0;
        bool any = false;
        for (const auto& k : ks)
            if (std::isfinite(k.get(m))) {
                t += k.get(m);
                any = true;
            }
        return any ? t : NAN;
    };
    // The tensor pipe's active cycles: the whole pipe's counter or the HMMA sub-pipe's,
    // whichever is higher (on sm_90 both include wgmma).
    auto tensor = [](const KernelMetrics& k) {
        double v = NAN;
        for (const char* m : {kTensor, kHmma})
            if (std::isfinite(k.get(m))) v = std::isfinite(v) ? std::max(v, k.get(m)) : k.get(m);
        return v;
    };
    // Split by the instruction that kept the pipe busy: a kernel that issued wgmma counts as
    // warpgroup MMA (gmma), one that issued none as mma.sync (hmma); a kernel uses one of
    // them (ours and cuDNN's do). Without the wgmma counter (before sm_90) gmma stays empty.
    auto wgmma = [](const KernelMetrics& k) { return k.get(kGmmaInst) > 0; };
    auto gmma = [&](const KernelMetrics& k) {
        return std::isfinite(k.get(kGmmaInst)) ? (wgmma(k) ? tensor(k) : 0.0) : NAN;
    };
    auto hmma = [&](const KernelMetrics& k) { return wgmma(k) ? 0.0 : k.get(kHmma); };
    s.tensor_pct = weighted(tensor, by_time);
    s.hmma_pct = weighted(hmma, by_time);
    s.gmma_pct = weighted(gmma, by_time);
    s.fma_pct = weighted(metric(kFma), by_time);
    s.sm_pct = weighted(metric(kSm), by_time);
    s.occupancy_pct = weighted(metric(kOccupancy), by_time);
    s.dram_pct = weighted(metric(kDramPct), by_time);
    s.dram_read_bytes = sum(kDramRead);
    s.dram_write_bytes = sum(kDramWrite);
    s.l2_hit_pct = weighted(metric(kL2Hit), [](const KernelMetrics& k) { return k.get(kL2Sectors); });
    s.l1_hit_pct = weighted(metric(kL1Hit), [](const KernelMetrics& k) { return k.get(kL1Sectors); });
    s.registers = main->get(kRegisters);
    const double dyn = main->get(kSmemDynamic), st = main->get(kSmemStatic);
    s.smem_bytes = std::isfinite(dyn) || std::isfinite(st) ? (std::isfinite(dyn) ? dyn : 0) + (std::isfinite(st) ? st : 0)
                                                           : NAN;
    s.waves = main->get(kWaves);
    return s;
}

const std::vector<std::string>& profile_columns() {
    static const std::vector<std::string> c = {
        "ncu_set",         "ncu_kernels",          "ncu_main_kernel",     "ncu_time_ms",   "ncu_tensor_pct",
        "ncu_hmma_pct",    "ncu_gmma_pct",         "ncu_fma_pct",         "ncu_sm_pct",    "ncu_dram_read_bytes",
        "ncu_dram_write_bytes", "ncu_l2_hit_pct",  "ncu_occupancy_pct",   "ncu_registers", "ncu_smem_bytes",
        "ncu_dram_pct",    "ncu_l1_hit_pct",       "ncu_waves",           "ncu_note"};
    return c;
}

std::vector<std::string> profile_fields(const std::optional<ProfileSummary>& o) {
    if (!o) return std::vector<std::string>(profile_columns().size());
    const auto& s = *o;
    return {s.set,
            std::to_string(s.kernels),
            s.main_kernel,
            format_number(s.time_ms),
            format_number(s.tensor_pct, "%.4g"),
            format_number(s.hmma_pct, "%.4g"),
            format_number(s.gmma_pct, "%.4g"),
            format_number(s.fma_pct, "%.4g"),
            format_number(s.sm_pct, "%.4g"),
            format_number(s.dram_read_bytes, "%.0f"),
            format_number(s.dram_write_bytes, "%.0f"),
            format_number(s.l2_hit_pct, "%.4g"),
            format_number(s.occupancy_pct, "%.4g"),
            format_number(s.registers, "%.0f"),
            format_number(s.smem_bytes, "%.0f"),
            format_number(s.dram_pct, "%.4g"),
            format_number(s.l1_hit_pct, "%.4g"),
            format_number(s.waves, "%.4g"),
            s.note};
}

ProfileSummary profile_row(const ProfileOptions& o, const std::string& ncu, const ProfileTarget& t) {
    std::vector<std::string> metrics = metric_set(o.metrics);
    std::vector<std::string> unavailable;
    if (const auto known = known_metrics(ncu); !known.empty()) {
        std::vector<std::string> keep;
        // `ncu --query-metrics` lists hardware counters only: the launch statistics
        // (launch__registers_per_thread, ...) are kept and left to the retry below, which drops
        // what ncu refuses by name (measured on an H100: the query's filter lost them).
        for (const auto& m : metrics)
            (known.count(base_name(m)) || m.rfind("launch__", 0) == 0 ? keep : unavailable).push_back(m);
        metrics = keep;
    }
    const fs::path self = self_path("to run it under ncu");
    TempDir tmp;
    const fs::path log = tmp.path() / "ncu.csv", out = tmp.path() / "output.txt";
    for (int attempt = 0; attempt < 2; ++attempt) {
        const std::string list = join(metrics, ",");
        std::vector<std::string> argv = {ncu,           "--csv",          "--print-units",
                                         "base",        "--clock-control", "none",
                                         "--nvtx",      "--nvtx-include", gpu::nvtx::timed_kernels_filter(),
                                         "--metrics",   list,             "--log-file",
                                         log.string(),  self.string()};
        argv.insert(argv.end(), t.run_args.begin(), t.run_args.end());
        std::error_code rm;
        fs::remove(log, rm);
        const ProcResult r = run_process(argv, out, o.timeout_s);
        const std::string text = read_text(log), printed = read_text(out);
        const std::string all = text + "\n" + printed;
        if (all.find("ERR_NVGPUCTRPERM") != std::string::npos) throw ProfileUnavailable(kPermissionHint);
        if (r.timed_out)
            throw Error("ncu on " + t.label + " took longer than " + std::to_string(o.timeout_s) +
                        " s (--profile-timeout) and was stopped");
        std::vector<KernelMetrics> ks;
        std::string parse_error;
        try {
            ks = parse_ncu_csv(text, "ncu's output for " + t.label);
        } catch (const Error& e) {
            parse_error = e.what();
        }
        if (!ks.empty() && r.status == 0) {
            ProfileSummary s = aggregate(ks, o.metrics);
            if (!unavailable.empty()) {
                s.note = "not on this device: " + join(unavailable, " ", base_name);
            }
            // The child prints the plan it ran ("  plan: ..."); it must be the timed run's.
            const auto p = printed.find("  plan: ");
            if (p != std::string::npos && !t.detail.empty()) {
                const std::string plan = trim(printed.substr(p + 8, printed.find('\n', p) - p - 8));
                if (plan != t.detail)
                    s.note += std::string(s.note.empty() ? "" : "; ") + "the profiled run planned differently: " + plan;
            }
            return s;
        }
        // A metric this ncu does not know: drop the ones its errors name and try once more.
        std::vector<std::string> keep, dropped;
        for (const auto& m : metrics) {
            bool named = false;
            std::istringstream ls(all);
            std::string l;
            while (std::getline(ls, l))
                if (l.find("==ERROR==") != std::string::npos && l.find(base_name(m)) != std::string::npos) named = true;
            (named ? dropped : keep).push_back(m);
        }
        if (attempt == 0 && !dropped.empty() && !keep.empty()) {
            metrics = keep;
            unavailable.insert(unavailable.end(), dropped.begin(), dropped.end());
            continue;
        }
        std::string why = ks.empty() && parse_error.empty() ? "ncu profiled no kernel in the NVTX range \"" +
                                                                  gpu::nvtx::timed_kernels_filter() + "\""
                          : !parse_error.empty() ? parse_error
                                                 : "the profiled run exited with status " + std::to_string(r.status);
        throw Error("profiling " + t.label + " failed: " + why + "\n--- ncu's last lines:\n" + tail(all, 25));
    }
    throw Error("profiling " + t.label + " failed");
}

void write_kernels_csv(const fs::path& path, const std::vector<std::pair<std::string, ProfileSummary>>& rows) {
    std::set<std::string> names;
    for (const auto& [label, s] : rows)
        for (const auto& k : s.per_kernel)
            for (const auto& [m, v] : k.values) names.insert(m);
    const auto& q = csv_quote;
    write_file_atomic(path, [&](std::ostream& os) {
        os << "row,kernel_id,kernel";
        for (const auto& m : names) os << ',' << m;
        os << '\n';
        for (const auto& [label, s] : rows)
            for (const auto& k : s.per_kernel) {
                os << q(label) << ',' << k.id << ',' << q(k.name);
                for (const auto& m : names) os << ',' << format_number(k.get(m), "%.9g");
                os << '\n';
            }
    });
}

}  // namespace cs::cli
