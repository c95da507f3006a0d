// Chain golden files: for a chain table (layers::chain_error says none), the
// network input, every layer's weights and bias, and every layer's post-op output (after
// bias, ReLU and pool where the table has them) computed by chain_ref<double>
// (reference/network_ref.hpp), for a few batch sizes. The per-layer golden files (golden.hpp)
// are unchanged; the chain's live in a directory of their own, which no per-layer set's
// name can take (those are n<N>/ and x<in>_w<w>/):
//
//   <root>/<table>/chain/manifest.json
//   <root>/<table>/chain/n<N>/input.npy             (N, C, H, W) of the first layer
//   <root>/<table>/chain/n<N>/<layer>.weights.npy   (M, C, R, S)    the same bytes for every N
//   <root>/<table>/chain/n<N>/<layer>.bias.npy      (M,)            only for a layer with bias
//   <root>/<table>/chain/n<N>/<layer>.output.npy    (N, M, E', F')  post-op: E', F' after the pool
//
// Layer i+1's input is layer i's output file. The manifest has the per-layer manifest's
// fields (format_version, tool, generator with name, description and seed, layer_table,
// files with path, layer, N, tensor, shape, dtype, bytes, sha256, and cpu) plus
// "kind": "chain"; its layer_table records every layer's ops (bias, relu, pool) and pooled
// size, and "cpu" holds, per "n<N>", the timing of chain_ref<float> over the whole chain
// and each layer's largest difference of the float chain from the golden one.
//
// Each batch's set is written to <chain>/.partial-<pid>/n<N>/, read back and checked
// against the SHA-256 computed while writing, and then put in place as a whole directory
// with the manifest rewritten in the same step, under the same interrupt guard as the
// per-layer sets (golden_manifest.hpp): a failed or interrupted run leaves the previous sets
// listed and usable. Data scales other than 1 and 1 are not offered for chains.
#pragma once

#include "datagen.hpp"
#include "golden.hpp"
#include "layer.hpp"
#include "network_ref.hpp"
#include "npy.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cs {

inline constexpr const char* kChainDirName = "chain";

enum class ChainTensor { input, weights, bias, output };
inline constexpr NameTable<ChainTensor, 4> kChainTensorNames{{{ChainTensor::input, "input"},
                                                              {ChainTensor::weights, "weights"},
                                                              {ChainTensor::bias, "bias"},
                                                              {ChainTensor::output, "output"}}};
// Its file name's part: "input", "weights", "bias", "output" (a literal: null-terminated).
inline const char* chain_tensor_name(ChainTensor t) { return name_of(kChainTensorNames, t).data(); }

// Data scales other than 1 and 1 are not offered for chains: the run options alone.
struct ChainGenerateOptions : GoldenRunOptions {};

// <root>/<table>/chain
std::filesystem::path golden_chain_dir(const std::filesystem::path& root, const LayerTable& table);
std::filesystem::path golden_chain_manifest_path(const std::filesystem::path& root, const LayerTable& table);
// "n<N>/input.npy" (t = input; layer ignored) or "n<N>/<layer>.<tensor>.npy".
std::string chain_relative_file(const std::string& layer, std::int64_t N, ChainTensor t);
// The shape of layer's file (input: the layer's input; output: post-op).
NpyShape chain_shape(const Layer& layer, std::int64_t N, ChainTensor t);

// Generates, writes and records the chain's golden sets, one per batch size, with progress
// on stderr. cs::Error for a table that is not a chain (naming why), bad batches, too little
// memory or disk space, or a directory that cannot be written.
void generate_chain_golden(const LayerTable& table, const ChainGenerateOptions& options);

struct ChainGoldenSet {
    std::int64_t N = 0;
    std::uint64_t seed = 0;
    ChainData data;                              // input, weights, bias (empty without bias)
    std::vector<std::vector<float>> outputs;     // post-op output of each layer
    double float32_ms = 0;                       // chain_ref<float>, median; 0 when not timed
    std::filesystem::path dir;                   // <root>/<table>/chain/n<N>
};

// Loads and verifies one batch's chain set: the manifest exists, parses, is a chain manifest
// of format_version 2 and the current generator; the seed equals expected_seed when given;
// the recorded table has the same layers (names, shapes and ops, in order) as `table`;
// every file of the set is recorded, exists, and its header, dtype, shape, size and SHA-256
// match. Every failure is a cs::Error naming the file and ending with "; regenerate with:
// <chain_regenerate_command(...)>". `read_data` false checks the same without keeping the
// data (the returned set's tensors are empty).
ChainGoldenSet load_chain_golden(const std::filesystem::path& root, const LayerTable& table, std::int64_t N,
                                 std::optional<std::uint64_t> expected_seed = std::nullopt, bool read_data = true);

// The batch sizes a chain manifest lists, ascending, with its seed; cs::Error when there is
// no manifest or it cannot be read.
struct ChainListing {
    std::filesystem::path manifest;
    std::uint64_t seed = 0;
    std::vector<std::int64_t> batches;
};
ChainListing list_chain_golden(const std::filesystem::path& root, const LayerTable& table);

// "convstudy generate --chain --batch 1 --out golden", plus "--table FILE" when the table is
// not the built-in one and "--seed S" when seed is not kDefaultSeed; paths shell-quoted.
std::string chain_regenerate_command(const std::filesystem::path& root, const LayerTable& table, std::int64_t N,
                                     std::uint64_t seed = kDefaultSeed);

}  // namespace cs
