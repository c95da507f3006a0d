// `convstudy tune`: for each (layer, N, class, layout) of a table, the fastest configuration of our
// rows of the class and their axes on this GPU (bench/tuner.hpp's search, timed by the harness as
// `sweep` times: L2 flushed, the hold, the median of the repeats, the sampled tile-covering check),
// written to a tuning file's "choices" (bench/tuning.hpp) after every task, atomically: a killed
// tune keeps what it finished, and the same command resumes it. `--shard K/N` tunes every N-th task
// from the K-th; `convstudy tune merge` joins the shards' files.
#pragma once

#include "command_common.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace cs::cli {

struct TuneArgs {
    detail::TableOpt table;
    std::vector<std::string> layers;       // empty: every layer of the table
    std::vector<std::int64_t> batches{1, 32, 128};
    std::vector<std::string> classes{"fp16", "bf16", "tf32"};
    std::vector<std::string> layouts{"nhwc", "nchw"};
    double budget_s = 600;
    std::string output;
    std::string shard;                     // "K/N", empty: all
    int warmup = 3;
    int repeats = 10;
    std::uint64_t seed = kDefaultSeed;
    std::int64_t samples = kDefaultSamples;
    std::string source;                    // the file's "source" text
    // tune merge
    std::vector<std::string> inputs;
    bool later_wins = false;
    CLI::App* merge = nullptr;
};

CLI::App* add_tune_command(CLI::App& app, TuneArgs& a);
// 0: every task has a choice (or had one); 1: a task where nothing PASSed; throws cs::Error for
// bad input (exit 2).
int cmd_tune(const TuneArgs& a);

}  // namespace cs::cli
