// A chain run (`convstudy chain`, issue 52): a whole chain table run as a network on the GPU,
// every layer's convolution, bias, ReLU and pooling in the table's order, the activations kept
// on the device in the run's layout and element type between layers, all of a side's launches
// captured in one CUDA graph. Two sides, planned in one process and timed round-robin:
//
//   ours   per layer the chosen variant's plan (a registry row, e.g. auto-fp16: the tuned or
//          heuristic choice of each layer). Where the plan fuses them (Plan::fuses_post_ops: the
//          persistent Hopper rungs and the halo mainloop), bias + ReLU run in its epilogue and
//          the 3x3 stride-2 max-pool after it; else they run after it (chain_ops.hpp: one pass
//          of bias + ReLU, or of both with the pool; one rounding more than the fused epilogue).
//          The layer's detail says which.
//   megakernel  ours as ONE persistent kernel (kernels/chain/megakernel.hpp): every layer's
//          convolution, epilogue and pool in one cooperative launch with a grid barrier between
//          the phases (the batch-1 latency design; f16 and bf16, NHWC); captured in the graph
//          like the others. No layer replay (its layers are not kernels of their own).
//   cudnn  per layer one cuDNN graph of convolution + bias + ReLU and cuDNN's pooling
//          (kernels/cudnn/cudnn_chain.hpp), searched as the per-layer anchors are
//
// Weights and biases are converted and laid out once, at plan time, as a network loads its
// weights; the input is staged in the run's layout and element type before timing, so each
// side takes its input and returns its output in the row's layout and nothing else runs inside
// the timed graph.
//
// Checked: every layer's post-op output of the checked run, and again of the last timed run,
// against the chain golden files (goldenio/golden_chain.hpp) by the chain rule
// (chain_tolerance.hpp: no NaN or Inf, max_rel_err <= chain_threshold(class) per layer). Before
// the checked run every activation buffer is NaN-poisoned, so a layer that writes nothing FAILs.
//
// Timed: per repeat the L2 flushed (the device context's flush buffer, the same for every side),
// the hold, then events around the graph's launch; warm-ups first. `repeats` timed runs give the
// median, p10, p90 and min; with `tail_repeats` > repeats (the N=1 latency case) the p99 is over
// that many. Then the layer replay: each layer's part of the chain (its convolution, epilogue
// and pool) captured in a graph of its own and timed alone the same way; their sum is not the
// chain's time (each starts with a flushed L2 and pays its own launch).
#pragma once

#include "chain_tolerance.hpp"
#include "device.hpp"
#include "harness.hpp"
#include "layer.hpp"
#include "variant.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cs::gpu {

// The chain's host data, float NCHW, as the chain golden set holds them (ChainData in
// reference/network_ref.hpp, which cs_gpu does not link): the network input (N x C x H x W of
// the first layer), each layer's weights (M x C x R x S) and bias (M values; empty without).
struct ChainHostData {
    std::int64_t N = 0;
    const std::vector<float>* input = nullptr;
    const std::vector<std::vector<float>>* weights = nullptr;
    const std::vector<std::vector<float>>* bias = nullptr;
};

enum class ChainSide { ours, megakernel, cudnn };
std::string_view to_string(ChainSide s);
std::optional<ChainSide> parse_chain_side(std::string_view s);  // as to_string writes it

struct ChainOptions {
    int warmup = 3;
    int repeats = 20;
    // The timed runs behind the p99 (the chain only): max(repeats, tail_repeats); 0: no p99.
    int tail_repeats = 0;
    bool flush_l2 = true;
    // The layer replay's timed runs per layer (0: no replay).
    int layer_repeats = 20;
    // Ours: each kernel after the first launched as the programmatic dependent of the one before
    // it (PDL), where the plan can (Plan::launches_dependent) and the chain ops always; false: every
    // kernel after the one before has completed (the A/B of what PDL buys).
    bool pdl = true;
    PlanState state;  // the plans' engine memory and tuning table
    // The megakernel's CTAs per SM (1 to 4; fewer where they do not fit: 3 at its 155 registers, the
    // fastest of 1 to 4 measured, mega_alexnet_n1*.csv.gz).
    int mega_ctas_per_sm = 3;
    // Where the order of the sides is shuffled per round from.
    std::uint64_t order_seed = RunOptions{}.order_seed;
};

// One side to run: `ours` with a registry row (its make_plan runs each layer's convolution),
// `megakernel` (the row names the class's auto-<class>: the megakernel is our batch-1 choice), or
// `cudnn` (the row is the class's cudnn-<class> anchor, named in the CSV).
struct ChainSideSpec {
    ChainSide side = ChainSide::ours;
    const Variant* variant = nullptr;
};

struct ChainLayerResult {
    std::string layer;
    ErrorStats err;           // of the checked run's post-op output
    ErrorStats err_last;      // of the last timed run's
    std::string config;       // the convolution plan's axis values (ours), "" for cuDNN
    std::string detail;       // the plan's or the cuDNN graph's description
    Stat replay;              // the layer replay (ms): conv + epilogue + pool alone
};

struct ChainResult {
    ChainSideSpec spec;
    Status status = Status::error;
    std::string reason;
    std::string detail;                   // the side's own description (the megakernel's), or ""
    double threshold = 0;                 // chain_threshold(class)
    Stat chain;                           // the whole graph (ms)
    double p99_ms = NAN;                  // with tail_repeats
    int tail_count = 0;
    bool graph = true;                    // launched as one CUDA graph (else: stream launches)
    bool pdl = false;                     // ours with programmatic dependent launches (ChainOptions::pdl)
    double setup_ms = NAN;                // plans, weight transforms, allocation, capture
    std::size_t workspace_bytes = 0, device_bytes = 0;
    std::vector<ChainLayerResult> layers;
    std::uint64_t order_seed = 0;
};

// Runs each side over the chain: planned, checked, then timed round-robin (every warm-up and
// timed repeat runs each side once, in an order shuffled per round), then each side's layer
// replay. `golden` holds the chain golden set of `table` at N (its data are the inputs). Never
// throws for a side's failure: that side's result is SKIP (it could not be planned) or
// FAIL/ERROR, with the reason. cs::Error when the table is not a chain or the set does not fit.
std::vector<ChainResult> run_chain(DeviceContext& ctx, const LayerTable& table, const ChainHostData& data,
                                   const std::vector<std::vector<float>>& golden, Precision p, Layout layout,
                                   const std::vector<ChainSideSpec>& sides, const ChainOptions& opt);

}  // namespace cs::gpu
