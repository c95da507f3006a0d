// `convstudy verify`: checks a golden set without a GPU. Every (layer, N) the manifest lists
// is loaded with every check of load_golden (manifest entry, .npy header, dtype, shape,
// size, SHA-256); with --recompute K, the inputs and weights are also compared with what
// the generator makes for the manifest's seed, and K output elements per set (and their
// bounds) are recomputed on the CPU in double. Leftovers of interrupted runs (a staging
// directory, .npy files the manifest does not list) are reported, not failed.
//
// Exit codes: 0 every set verified; 1 a set failed (each failure names its file);
// 2 bad options, or no readable manifest.
#pragma once

#include "datagen.hpp"
#include "layer.hpp"

#include <cstdint>
#include <filesystem>

namespace cs::cli {

inline constexpr std::int64_t kMaxRecompute = 1 << 20;

// Prints one line per set to stdout and a summary; returns the exit code (0 or 1). Throws
// cs::Error for a missing or unreadable manifest. `scales` picks the sets of those data
// scales (their own directory, golden.hpp); --recompute regenerates the data at the scales
// the manifest records.
int verify_golden(const std::filesystem::path& root, const LayerTable& table, std::int64_t recompute,
                  const DataScales& scales = {});

// `verify --chain`: the same for the chain golden files of a chain table (golden_chain.hpp):
// every batch the chain manifest lists is loaded with every check of load_chain_golden; with
// --recompute K, the input, weights and biases are compared with what the generator makes
// for the manifest's seed, and K post-op output elements per layer (conv + bias + ReLU +
// pool in double, from the layer's stored input: the previous layer's output file) are
// recomputed. A staging directory left by an interrupted run is reported, not failed.
// cs::Error for a table that is not a chain or a missing or unreadable manifest.
int verify_chain_golden(const std::filesystem::path& root, const LayerTable& table, std::int64_t recompute);

}  // namespace cs::cli
