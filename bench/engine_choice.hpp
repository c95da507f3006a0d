// Choosing a library engine from timed candidates, and remembering the choice.
//
// A library anchor (cuDNN through its graph API) times every accurate engine configuration
// and keeps the fastest. Two engines often run within a few percent of each other, and which
// one measures faster moves with the process (on the H200 the time ratio of two engines of
// the same row varied between sweeps, and a few anchor rows changed engine between two
// back-to-back sweeps when each chose afresh: git show 3ab0d79:gpu/engine_choice.hpp). An
// anchor that flips between
// engines of equal speed makes two sweeps disagree on what "cuDNN" ran, so the choice has
// hysteresis: the engine chosen before (same device, library version, layer, batch, layout,
// precision) is kept while it measures within kKeepBand of the fastest in the new timing;
// any engine faster than that takes its place. Every candidate is still timed every time:
// the memory decides only between engines the measurement cannot tell apart, and the cost
// is bounded — the kept engine is at most 3% slower than the fastest measured, which the
// row's detail states.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace cs::gpu {

// One timed configuration: its engine id and its samples (ms). Configurations of one
// engine differ in knobs only; an engine is as fast as its fastest configuration.
struct TimedConfig {
    std::int64_t engine = -1;
    std::vector<float> samples;
};

struct EngineChoice {
    std::size_t chosen = 0;   // index into the timed configurations
    std::size_t fastest = 0;  // the configuration with the lowest median
    double chosen_ms = 0;
    double fastest_ms = 0;
    bool kept_previous = false;  // chosen because it was the remembered engine
};

inline constexpr double kKeepBand = 1.03;

double median_ms(std::vector<float> samples);

// The fastest configuration by median (the earlier one on equal medians), unless `previous`
// names an engine whose fastest configuration is within keep_band of it: then that one.
// Throws std::invalid_argument when nothing was timed or a configuration has no samples.
EngineChoice choose_engine(const std::vector<TimedConfig>& timed, std::optional<std::int64_t> previous,
                           double keep_band = kKeepBand);

// The engines chosen before, by row key (what choose_engine's `previous` comes from).
// Thread-safe. The command owns one, loads it from a file before a run and saves it after
// (cli/: --engine-choices); it reaches the plans through RunOptions and PlanContext.
struct RememberedEngine {
    std::int64_t engine = -1;
    double ms = 0;  // the median it was chosen with
    // The chosen configuration's knob choices (knob type, value), sorted; nullopt from a file
    // written before they were kept. Reuse mode builds that configuration alone.
    std::optional<std::vector<std::pair<int, std::int64_t>>> knobs;
};

// How a run's library searches go (the command line's switches, set before any plan is built).
struct SearchMode {
    // Reuse mode (`--reuse-engines`: the child processes of `sweep --cudnn-processes`, which
    // re-time rows whose engine the first process chose): a row with a remembered engine times
    // that engine's configurations only, not every engine's; a row without one searches all.
    bool reuse_only = false;
    // Build-only mode (`--build-engines-only`: the warm-up processes of sweep): a cuDNN row builds
    // every candidate configuration (the runtime-compiled ones compile into the driver's JIT
    // cache, which later processes share) and stops there, a SKIP: nothing runs on the GPU.
    bool build_only = false;
    // Runtime-compiled engines in the search (default; off: `--no-cudnn-rtc`).
    bool runtime_compiled = true;
};

class EngineChoices {
public:
    std::optional<RememberedEngine> get(const std::string& key) const;
    void set(const std::string& key, RememberedEngine e);
    std::map<std::string, RememberedEngine> all() const;
    void replace(std::map<std::string, RememberedEngine> m);  // also clears changed()
    bool changed() const;
    void mark_saved();  // what is in memory is now on file: changed() is false until the next set()
    void set_mode(SearchMode m);
    SearchMode mode() const;
    // Searches already made while this memory lives, by a library's own key: the cuDNN graph
    // rows keep their whole ranking, so that the plans of one row (the streams mode's, a
    // re-plan's) search once. Opaque here: the library casts its own type back. Never saved.
    std::shared_ptr<const void> search(const std::string& key) const;
    void keep_search(const std::string& key, std::shared_ptr<const void> s);

private:
    mutable std::mutex m_;
    std::map<std::string, RememberedEngine> map_;
    std::map<std::string, std::shared_ptr<const void>> searches_;
    bool changed_ = false;
    SearchMode mode_;
};

}  // namespace cs::gpu
