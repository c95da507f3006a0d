// `convstudy profile` and `sweep --profile`: Nsight Compute's counters beside a row's timing.
//
// The row is first run, checked and timed as `run` does (no profiler attached, so its times
// are the ordinary ones). Then the program runs itself again under ncu, as
//
//   ncu --csv --print-units base --clock-control none --nvtx --nvtx-include "convstudy@timed kernels/"
//       --metrics ... --log-file TMP  <this program> run ... --warmup W --repeats 1 --profile-target
//
// so that exactly the kernels of one timed repeat (the interval kernel_ms measures, see
// bench/nvtx.hpp) are profiled, after the same set-up, check and warm-ups. ncu's CSV is parsed
// (parse_ncu_csv) and aggregated over the row's kernels (aggregate): bytes are summed,
// percentages are weighted by each kernel's duration (the L2 hit rate by its L2 sectors),
// and registers and shared memory are the longest kernel's. The clocks are left alone
// (--clock-control none): the counters describe the card as the timings saw it.
#pragma once

#include "error.hpp"

#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace cs::cli {

inline constexpr int kExitNoProfiler = 5;

// ncu is missing, or may not read the counters: the message says how to fix it (exit 5).
class ProfileUnavailable : public Error {
public:
    using Error::Error;
};

struct ProfileOptions {
    std::string metrics = "default";  // a metric set: default or detailed
    std::string ncu;                  // path of ncu; "" = $CONVSTUDY_NCU, PATH, the CUDA toolkit
    std::string kernels_csv;          // optional: one row per profiled kernel
    int timeout_s = 900;              // per profiled row
};
void add_profile_options(CLI::App* c, ProfileOptions& o);

// The metric sets; throws cs::Error for an unknown name.
const std::vector<std::string>& metric_set(const std::string& name);
std::string metric_set_names();  // "default, detailed"

// The ncu executable: `option`, else $CONVSTUDY_NCU, else `ncu` on PATH, else the CUDA
// toolkit's bin/ncu. Throws ProfileUnavailable (with how to install or point at it).
std::string find_ncu(const std::string& option);

// One profiled kernel: ncu's ID, its name and its metrics in base units (bytes, ns, %).
struct KernelMetrics {
    int id = -1;
    std::string name;
    std::map<std::string, double> values;
    double get(const std::string& metric) const {
        auto it = values.find(metric);
        return it == values.end() ? NAN : it->second;
    }
};

// Parses ncu --csv output: the details layout (one line per kernel and metric: "ID", ...,
// "Kernel Name", ..., "Metric Name", "Metric Unit", "Metric Value") or the raw page
// (--page raw: one line per kernel, one column per metric, a units line under the header).
// Lines ncu prints around it (==PROF==, ==WARNING==) are skipped; values are converted to
// base units (byte, nanosecond) from their unit and may carry thousands separators.
// Throws cs::Error naming `where` when there is no ncu header.
std::vector<KernelMetrics> parse_ncu_csv(const std::string& text, const std::string& where);

// The row's counters, aggregated over its kernels (NaN where ncu gave no value).
struct ProfileSummary {
    std::string set;
    int kernels = 0;
    std::string main_kernel;  // the longest one
    double time_ms = NAN;     // sum of the kernels' durations under ncu
    double tensor_pct = NAN, hmma_pct = NAN, gmma_pct = NAN, fma_pct = NAN, sm_pct = NAN;
    double dram_read_bytes = NAN, dram_write_bytes = NAN, l2_hit_pct = NAN, occupancy_pct = NAN;
    double registers = NAN, smem_bytes = NAN;
    double dram_pct = NAN, l1_hit_pct = NAN, waves = NAN;  // the detailed set
    std::string note;  // metrics this device lacks, a plan that differed, ...
    std::vector<KernelMetrics> per_kernel;
};
ProfileSummary aggregate(const std::vector<KernelMetrics>& kernels, const std::string& set);

// CSV columns (after the result columns) and their fields; an absent summary: empty fields.
const std::vector<std::string>& profile_columns();
std::vector<std::string> profile_fields(const std::optional<ProfileSummary>& s);

// What identifies the row to profile, and the arguments of `run` that reproduce it.
struct ProfileTarget {
    std::string label;                // e.g. "conv2 N=128 hopper-ws-fp16 nhwc pageable"
    std::vector<std::string> run_args;  // after the program name: run --variant ... --profile-target
    std::string detail;               // the plan's description in the timed run (to compare)
};

// Runs ncu on the target; throws ProfileUnavailable (no ncu, no permission to read the
// counters) or cs::Error (ncu failed: the tail of its output is in the message).
ProfileSummary profile_row(const ProfileOptions& o, const std::string& ncu, const ProfileTarget& t);

// One row per profiled kernel (label, kernel, duration and every metric by ncu's name).
void write_kernels_csv(const std::filesystem::path& path,
                       const std::vector<std::pair<std::string, ProfileSummary>>& rows);

}  // namespace cs::cli
