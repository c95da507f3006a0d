// `convstudy tune`'s search, apart from the GPU: what to tune (tasks and their budgets), which rows
// may answer a task, and the search over them and their axes. The timing is a function the caller
// gives (cli/tune.cpp: the harness, as sweep times; the CPU tests: made-up measurements), and so is
// the clock the budget is kept by.
//
// A task is one (layer shape, N, precision class, layout). Its answer is the fastest configuration
// (a registry row of the class and its axis values) that PASSed the sampled check there, kept in
// the tuning file's "choices" (tuning.hpp). The search:
//   1. the seeds (the caller's: cli/tune.cpp gives the heuristic's cheapest configurations, what
//      auto-<class> would run without a tuning file), always, then the candidate rows at their own
//      rules (no axis set) in the caller's order (cli/tune.cpp: rank_rows, the heuristic's cheapest
//      first) until the budget is spent once something PASSed: a task always ends with an answer
//      when any row PASSes, and the answer is never slower beyond noise than the seeds;
//   2. then, fastest row first, each axis of the row one value at a time around the row's best so
//      far, a seed where it beat the row's rules (coordinate descent: a value that beats it
//      becomes the row's best), until the task's budget is spent.
// A challenger replaces the incumbent only when it PASSes and is faster beyond noise by
// compare's rule (core/noise.hpp: its median outside the incumbent's [p10, p90] and the other
// way round); a tie keeps the incumbent, the earlier and simpler configuration.
//
// The budget (seconds of search) is split over the tasks in proportion to their FLOPs x count, as
// they run: each task gets the remaining budget times its share of the remaining weight, so that
// a task that overran (its data's making and its seeds always run, and so do rows until one
// PASSes) takes its excess from the later ones.
#pragma once

#include "harness.hpp"
#include "noise.hpp"
#include "variant.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cs::gpu {

struct TuneTask {
    Layer layer;  // its count weighs its budget
    std::int64_t N = 1;
    Precision cls = Precision::fp16;
    Layout layout = Layout::nhwc;
    double weight() const { return layer.flops(N) * double(layer.count); }
    std::string label() const;  // "conv2 N=128 fp16 nhwc"
};

// Every (layer, N, class, layout) in that nesting order: N outermost, then the layers, classes and
// layouts, as given.
std::vector<TuneTask> tune_tasks(const std::vector<Layer>& layers, const std::vector<std::int64_t>& batches,
                                 const std::vector<Precision>& classes, const std::vector<Layout>& layouts);
// Shard K of N (1-based): every N-th task from the K-th, as sweep --shard deals its rows.
std::vector<TuneTask> shard_tasks(const std::vector<TuneTask>& tasks, int index, int count);
// The budget of the next task: `remaining_s` times its weight over the weight of it and the tasks
// after it.
double task_budget(double remaining_s, double weight, double remaining_weight);

// The rows that may answer a task: ours (not a library's, nor an auto-* row, which runs
// another's), of the class, declaring the layout, supported on this problem and device; in
// registry order.
std::vector<const Variant*> tune_rows(const TuneTask& t, const cudaDeviceProp& prop);
// `rows` reordered: those in `ranked` first, in its order (each once), then the rest in their
// order. cli/tune.cpp ranks by the heuristic's picks, so that a small budget measures the rows
// the cost model prices cheapest.
std::vector<const Variant*> rank_rows(const std::vector<const Variant*>& rows,
                                      const std::vector<const Variant*>& ranked);

struct TuneCandidate {
    const Variant* variant = nullptr;
    AxisValues axes;  // the values set (empty: the variant's own rules)
};

struct TuneMeasurement {
    bool pass = false;
    std::string reason;  // why not, when it did not PASS
    Timing kernel;       // median and spread of the timed repeats (ms)
};

using TuneMeasure = std::function<TuneMeasurement(const TuneTask&, const TuneCandidate&)>;
using TuneClock = std::function<double()>;  // seconds

struct TuneResult {
    bool found = false;      // a candidate PASSed
    TuneCandidate best;
    Timing time;
    int tried = 0;           // configurations measured
    bool complete = false;   // every step ran (else the budget ended it)
    std::vector<std::string> failures;  // "<variant> [axes]: reason" of the candidates that did not PASS
};

// The search of one task within `budget_s` (the seeds always run, the rows until one PASSes). A
// seed whose row is not among `rows` is not measured.
TuneResult tune_task(const TuneTask& t, const std::vector<const Variant*>& rows,
                     const std::vector<TuneCandidate>& seeds, const TuneMeasure& measure, const TuneClock& clock,
                     double budget_s);

// The measurement on a GPU: the harness runs the candidate as `sweep` runs a row (pageable memory,
// checked against `data`, timed with `opt`), on the task's layer, N and layout. `data` is read at
// each measurement, so the caller may set it to each task's data as the task starts (TuneHooks::
// rows); it must outlive the function. A CUDA error that leaves the device unusable is a
// cs::Error (the tune cannot go on).
TuneMeasure harness_measure(DeviceContext& ctx, const HostData& data, const RunOptions& opt);

struct TuningCard;  // tuning.hpp

// What `tune` does with its tasks, apart from the GPU: each task without a choice in `card` (a
// resumed file's are skipped: `say` names them) is searched with its share of what is left of
// `budget_s`, its answer appended to card.choices and `save(card)` called, so that a killed tune
// keeps every task it finished. `rows` gives a task's candidate rows (tune_rows on a device). Returns
// the number of tasks where nothing PASSed; `say` gets one line per task.
struct TuneHooks {
    // A task's candidate rows, asked once as the task starts (before its measurements: the place
    // to ready the task's data)
    std::function<std::vector<const Variant*>(const TuneTask&)> rows;
    // The task's seeds, measured first (tune_task's step 1; empty or unset: none), asked after rows
    std::function<std::vector<TuneCandidate>(const TuneTask&)> seeds;
    TuneMeasure measure;
    TuneClock clock;
    std::function<void(const TuningCard&)> save;
    std::function<void(const std::string&)> say;
    std::string git_rev;  // the build's revision, recorded with each choice
};
int tune_all(const std::vector<TuneTask>& tasks, TuningCard& card, double budget_s, const TuneHooks& hooks);

}  // namespace cs::gpu
