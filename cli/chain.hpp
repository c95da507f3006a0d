// `convstudy chain`: a chain table run as a network (bench/chain_run.hpp), ours and cuDNN's
// chain in one process, round-robin, checked against the chain golden files at every layer's
// post-op output, one CSV row a side with scope=chain and, from the layer replay, one a layer
// with scope=layer.
#pragma once

#include "chain_run.hpp"
#include "command_common.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace cs::cli {

struct ChainArgs {
    detail::TableOpt table;
    std::vector<std::int64_t> batches{1};
    std::vector<std::string> classes{"fp16"};
    std::vector<std::string> layouts{"nhwc"};
    std::string choice = "auto";                  // "auto" (auto-<class>) or one variant for every layer
    std::vector<std::string> sides{"ours", "cudnn"};
    int mega_ctas_per_sm = gpu::ChainOptions{}.mega_ctas_per_sm;
    std::string csv, golden = "golden", tuning;
    int warmup = 3, repeats = 20, layer_repeats = 20;
    int tail_repeats = -1;                        // -1: 200 at N=1, else none
    bool no_flush = false, quiet = false;
    bool no_pdl = false;                          // ours without programmatic dependent launches
    bool no_ceilings = false;                     // no cuBLAS ceilings: pct_peak and peak_tflops empty
};

CLI::App* add_chain_command(CLI::App& app, ChainArgs& a);
// 0: every side that ran PASSed; 1: one FAILed or hit an error; throws cs::Error for bad input.
int cmd_chain(const ChainArgs& a);

}  // namespace cs::cli
