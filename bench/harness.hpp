// The harness: runs one variant on one problem under one memory mode — it owns the
// memory modes, the copies, the NaN-poisoned checked run and the timing — and returns
// what the CSV row needs.
//
// Memory modes (the study's names in brackets):
//   pageable          cudaMemcpy from ordinary host memory ("Mcpy")
//   pinned            cudaMemcpyAsync from cudaMallocHost memory
//   managed           cudaMallocManaged; pages migrate on first touch inside the kernel
//                     ("UM"); between repeats the pages are sent back to the host, so
//                     kernel_ms includes the migration the study measured
//   managed-prefetch  managed, with cudaMemPrefetchAsync to the device first (h2d_ms)
//   streams           pinned, the batch cut into chunks over several streams so copies
//                     of one chunk overlap the kernels of another
//
// Layouts (Problem::layout): the host data and the golden output are NCHW; for `nhwc` the
// harness permutes input and weights on the host in set-up and the output back before
// checking (untimed). A variant runs only the layouts its registry row lists.
//
// Element types: the host always holds float data. For a variant whose tensors are half
// or bf16 (Variant::io) the copies carry float, and GPU kernels convert input and weights
// after the copy in and the output before the copy out: that is convert_ms.
//
// Timing: CUDA events on the run's stream; warm-ups, then repeats; median, min, max.
// L2 is flushed before each timed interval unless RunOptions::flush_l2 is false (the
// flush itself is never inside an interval). kernel_ms covers every kernel of the variant
// (it is one Plan::run). h2d_ms / d2h_ms are the copies the memory mode makes (managed:
// the prefetch back to the host for d2h, none for h2d). total_ms = h2d + convert + kernel
// + d2h, except in `streams`, where it is the overlapped wall time of the whole pipeline
// (its parts are the same chunks timed one after another on one stream, so the overlap
// is their sum / total). Allocation and plan set-up are timed apart (setup_ms). In the
// pageable and pinned modes the host copies may be timed over the first host_repeats timed
// repeats only (the rest, and the warm-ups, run the kernels alone on the inputs already on
// the device).
//
// Round-robin: run_group keeps every row of a timing group planned at once and runs each
// warm-up and timed repeat of every row once per round, in an order shuffled per round from
// a recorded seed, so that no row is timed in a block of its own.
//
// Every run checked: before each warm-up and timed repeat the output is poisoned again
// (outside the interval), and after it the output is scanned on the device (output_check.hpp):
// no NaN or Inf, and the checked run's bits exactly (deterministic variants) or the
// tile-covering sample at the class threshold (the others). A later run that differs FAILs,
// naming the run. A row whose output nothing checked is UNCHECKED, never PASS.
//
// Status: SKIP only when the variant refused (supports(), the layout, planning) or the
// tensors cannot be allocated, before any kernel ran; any failure after the first kernel
// was enqueued is ERROR.
#pragma once

#include "device.hpp"
#include "tolerance.hpp"
#include "variant.hpp"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cs::gpu {

enum class MemoryMode { pageable, pinned, managed, managed_prefetch, streams };
std::string_view to_string(MemoryMode m);
std::optional<MemoryMode> parse_memory_mode(std::string_view s);
const std::vector<MemoryMode>& all_memory_modes();
std::string memory_mode_names();  // "pageable, pinned, managed, managed-prefetch, streams"

// How a row is run; the PlanState part (engine memory, split mutation, tuning table) is passed to
// every plan in its PlanContext.
struct RunOptions : PlanState {
    int warmup = 3;
    int repeats = 20;
    bool flush_l2 = true;
    // Workspace limit for plans: 0 means workspace_fraction of the device memory free
    // after the tensors are allocated.
    std::size_t workspace_limit = 0;
    double workspace_fraction = 0.5;
    int streams = 4;   // streams mode: number of streams
    int chunks = 0;    // streams mode: number of chunks (0: 2 per stream, at most N)
    bool keep_output = false;  // RunResult::output gets the (float) output of the checked run
    // Timed repeats that also time the host copies and conversions (h2d, convert, d2h, total) in
    // the pageable and pinned modes; the others (and every warm-up) run the kernels alone on
    // the inputs already on the device. -1: every repeat. The managed and streams modes always
    // time the whole path (what they measure is the migration or the overlap).
    int host_repeats = -1;
    // Every warm-up and timed repeat checked after it runs (output_check.hpp): a NaN scan, and the
    // checked run's bits (deterministic variants) or the tile-covering sample (the others).
    bool check_every_run = true;
    // Seed of the tile-covering sample the later runs of a golden-checked row are held to.
    std::uint64_t sample_seed = 20261123;
    // Seed of the round-robin order (order_seed_of derives each timing group's).
    std::uint64_t order_seed = 20261128;
};

// The problem's host data (float32) and what to check against.
struct HostData {
    const float* in = nullptr;       // N*C*H*W
    const float* w = nullptr;        // M*C*R*S
    const float* golden = nullptr;   // N*M*E*F, or null to use the sample below
    // B = sum|w*x| of each golden element (N*M*E*F, the golden set's bound file), for the
    // per-element rule of tolerance.hpp; null: that rule is not applied.
    const float* bound = nullptr;
    // Sampled check (batches without golden files): out[sample_index[i]] vs sample_value[i].
    const std::int64_t* sample_index = nullptr;
    const double* sample_value = nullptr;
    const double* sample_bound = nullptr;  // B of each sample, or null
    std::int64_t sample_count = 0;
    double sample_max_abs = 0;       // max|golden| estimate for max_rel_err
};

// UNCHECKED: ran (and was timed) but nothing checked its output; never PASS.
enum class Status { pass, fail, skip, error, unchecked };
std::string_view to_string(Status s);

// median, min, max and the 10th / 90th percentiles (linear interpolation between the
// sorted repeats, numpy's default): the robust spread `compare` judges on, which one outlier
// repeat does not move when there are 11 or more repeats (the default is 20). p99: the tail a
// latency run reports (a chain at N=1 over 200 repeats); with few repeats it is near the max.
struct Stat {
    double median = NAN, min = NAN, max = NAN, p10 = NAN, p90 = NAN, p99 = NAN;
    int count = 0;
    static Stat of(std::vector<double> v);
};

struct RunResult {
    Status status = Status::error;
    std::string reason;         // why SKIP / FAIL / ERROR
    std::string check;          // "golden", "sampled(K)" or "none"
    ErrorStats err;
    double threshold = 0;       // on max_rel_err, for the variant's precision class
    Stat kernel, h2d, d2h, total;
    Stat convert;               // float <-> half/bf16 kernels (0 for float variants)
    std::string algo;           // how it computed: the plan's choice, else the registry's
    double setup_ms = NAN;      // allocation + plan set-up (host clock)
    std::size_t workspace_bytes = 0;
    std::size_t device_bytes = 0;  // tensors + workspace on the device
    double search_ms = NAN;        // the plan's engine search's median for its configuration (Plan::search_ms)
    std::string detail;            // the plan's description
    AxisValues axes;               // the axis values the row set, typed (Problem::axes; empty: defaults)
    std::string config;            // every axis value it ran with (the plan's, defaults resolved)
    int streams = 0, chunks = 0;   // streams mode
    std::vector<float> output;     // with RunOptions::keep_output
    bool fatal = false;            // the CUDA context is unusable after this (sticky error)
    int checked_runs = 0;          // runs whose output was checked (the checked run and every later one)
    double recheck_ms = 0;         // host wall time of the checks after the checked run (what they add)
    double check_ms = 0;           // host wall time of the checked run and its comparison
    double loop_ms = 0;            // host wall time of its warm-ups and timed repeats (their checks included)
    int host_repeats = 0;          // timed repeats in h2d, convert, d2h and total
    std::uint64_t order_seed = 0;  // the seed of its timing group's round-robin order
    // SM clock (MHz) and board power (W) before its first and after its last timed repeat (NVML).
    double sm_clock_mhz_start = NAN, sm_clock_mhz_end = NAN, power_w_start = NAN, power_w_end = NAN;
};

// One row of a timing group: the rows of a group share the problem's data (layer, N and the
// host tensors) and are timed round-robin.
struct GroupRow {
    const Variant* variant = nullptr;
    MemoryMode mode = MemoryMode::pageable;
    Problem problem;
};

// Runs, checks and times a group of rows: each is planned and checked first (SKIP / FAIL /
// ERROR leave it out), then every warm-up and timed repeat runs each remaining row once, in an
// order shuffled per round by a generator seeded with `order_seed` (recorded in each result),
// so that no row is timed in a block of its own while the clocks or the L2 drift. Each row's
// statistics are over its own repeats. Rows whose tensors do not fit in half the free device
// memory together are split into rotations run one after another. Never throws for a problem of
// a variant; after a sticky CUDA error the remaining rows are ERROR and marked fatal.
std::vector<RunResult> run_group(DeviceContext& ctx, const std::vector<GroupRow>& rows, const HostData& data,
                                 const RunOptions& opt, std::uint64_t order_seed);
// The order seed of the group_index-th group of a sweep (from RunOptions::order_seed).
std::uint64_t order_seed_of(const RunOptions& opt, std::size_t group_index);

// Runs and checks one (variant, memory mode, problem): a group of one. Never throws for a problem
// of the variant (CUDA errors, unsupported shapes, memory): those become ERROR / SKIP results.
RunResult run_variant(DeviceContext& ctx, const Variant& v, MemoryMode mode, const Problem& p,
                      const HostData& data, const RunOptions& opt);

}  // namespace cs::gpu
