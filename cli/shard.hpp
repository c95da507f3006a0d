// The rows of a sweep, in the order it runs them, and `--shard K/N`: a deterministic 1/N of
// them, so that N processes (one per GPU, or the tasks of a SLURM array) run a sweep
// together and `convstudy merge` joins their CSVs.
//
// Rows are enumerated over batch size, layer, variant (registry rows, each tile or axis
// value its own row), memory mode and layout, exactly as `sweep` runs them; row i belongs
// to shard (i mod N) + 1. Dealing the rows out in turn gives every shard a share of each
// (layer, N), so the shards take about the same time.
#pragma once

#include "harness.hpp"
#include "layer.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cs::cli {

struct Shard {
    int index = 1;  // K, 1-based
    int count = 1;  // N
};
// "K/N" with 1 <= K <= N; throws cs::Error naming --shard otherwise.
Shard parse_shard(const std::string& s);

struct SweepItem {
    std::int64_t N = 0;
    const Layer* layer = nullptr;
    const gpu::Variant* variant = nullptr;
    gpu::MemoryMode mode = gpu::MemoryMode::pageable;
    gpu::Layout layout = gpu::Layout::nchw;
    gpu::Config config;  // axis values set for this row (empty: the variant's defaults)
};

// `--axis NAME=VALUES` requests: each axis and the values asked ("all" for every value).
using AxisRequests = std::vector<std::pair<std::string, std::vector<std::string>>>;

// (variant, the memory modes it runs in), in the order `--variants` gave them.
using SweepPlan = std::vector<std::pair<const gpu::Variant*, std::vector<gpu::MemoryMode>>>;

// `--axis NAME=V1,V2|all` options of `sweep` (and a plan's sweep axes) as requests; throws
// cs::Error when an axis or a value belongs to none of the plan's variants.
AxisRequests parse_sweep_axes(const std::vector<std::string>& args, const SweepPlan& plan);

// Every row of the sweep in run order; a variant runs only the requested layouts it declares.
// A variant with some of the requested axes runs once per combination of their values (the
// others at their defaults); a variant with none of them runs once, at its defaults.
std::vector<SweepItem> sweep_items(const std::vector<std::int64_t>& batches, const std::vector<const Layer*>& layers,
                                   const SweepPlan& plan, const std::vector<gpu::Layout>& layouts,
                                   const AxisRequests& axes = {});
// The configurations `axes` asks of variant v, in order (one empty Config when none applies).
std::vector<gpu::Config> configs_of(const gpu::Variant& v, const AxisRequests& axes);

// The rows of shard `s` (all of them for 1/1), in run order.
std::vector<SweepItem> select_shard(const std::vector<SweepItem>& items, Shard s);

}  // namespace cs::cli
