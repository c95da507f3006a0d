// Golden files: the inputs, weights and double-accumulated reference outputs of each layer
// for a few batch sizes, stored as NumPy .npy (float32, C order) with a manifest, and the
// verified loading that every check against them goes through.
//
// Layout (table = LayerTable::name, or the stem of its source file when the name is empty):
//
//   <root>/<table>/manifest.json
//   <root>/<table>/n<N>/<layer>.input.npy     (N, C, H, W)
//   <root>/<table>/n<N>/<layer>.weights.npy   (M, C, R, S)   the same bytes for every N,
//   <root>/<table>/n<N>/<layer>.output.npy    (N, M, E, F)   stored in each n<N> directory so
//                                                            one directory is a complete set
//   <root>/<table>/n<N>/<layer>.bound.npy     (N, M, E, F)   B = sum |w*x| of each output, in
//                                                            double, rounded to float: the
//                                                            scale of the per-element check
//                                                            (bench/tolerance.hpp)
//
// Data scales (DataScales, datagen.hpp): sets made with other scales than 1 and 1 live in a
// directory of their own inside the table's, with their own manifest, so sets of several
// scales coexist and the default layout above is unchanged:
//
//   <root>/<table>/x<input scale>_w<weight scale>/manifest.json, .../n<N>/...
//   e.g. golden/alexnet/x2^-24_w2^20/n32/conv1.input.npy      (scales as data_scale_string)
//
// manifest.json (format_version 2; version 1 had no bound files) records the tool (name,
// version, git revision), when it was created and last updated, the generator (name,
// description, seed, input_scale, weight_scale: numbers; a manifest without them was made
// with 1 and 1), the layer table (name, source, every layer's shape), every file (path
// relative to the manifest's directory, layer, N, tensor, shape, dtype, bytes, sha256) and
// the CPU timings of each
// (layer, N) under "cpu": {"<layer>/n<N>": {float32_ms, ..., onednn_max_abs_diff}} with
// null where a value was not measured.
//
// Every file and the manifest are written atomically (temporary + rename). Each (layer, N)
// set is written to <root>/<table>/.partial-<pid>/, read back and verified, and only then
// moved into n<N>/ with the manifest rewritten in the same step (golden_generate.cpp): a
// failed or interrupted run leaves the previous sets listed and usable and removes its
// partial files. Generating more batches later merges into the manifest when the
// generator, seed and shared layer shapes agree; otherwise a new manifest replaces the old
// one when the first new set is in place.
#pragma once

#include "conv_ref.hpp"
#include "cpu_anchor.hpp"
#include "datagen.hpp"
#include "layer.hpp"
#include "names.hpp"
#include "npy.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cs {

inline constexpr int kGoldenFormatVersion = 2;

enum class GoldenTensor { input, weights, output, bound };
inline constexpr NameTable<GoldenTensor, 4> kGoldenTensorNames{{{GoldenTensor::input, "input"},
                                                                {GoldenTensor::weights, "weights"},
                                                                {GoldenTensor::output, "output"},
                                                                {GoldenTensor::bound, "bound"}}};
// Its file name's part: "input", "weights", "output", "bound" (a literal: null-terminated).
inline const char* golden_tensor_name(GoldenTensor t) { return name_of(kGoldenTensorNames, t).data(); }

// What every generation takes: the per-layer sets' (GenerateOptions) and the chain's
// (ChainGenerateOptions, golden_chain.hpp).
struct GoldenRunOptions {
    std::vector<std::int64_t> batches{1, 32, 128};
    std::filesystem::path root{"golden"};
    std::uint64_t seed = kDefaultSeed;
    bool quiet = false;        // no progress on stderr
    bool time_cpu = true;      // time the float32 reference (conv2d_ref<float> per layer, chain_ref<float> for a chain)
};

struct GenerateOptions : GoldenRunOptions {
    bool time_onednn = true;   // time oneDNN too, when it was built in
    std::vector<std::string> layers;  // names of the layers to generate; empty: all of the table
    DataScales scales;         // input and weight scales (exact powers of two; see datagen.hpp)
};

// The directory name of a table: its name, or its source file's stem; characters other
// than letters, digits, '_', '-' and '.' become '_'.
std::string golden_table_name(const LayerTable& table);
// "x2^-24_w2^20": the directory of the sets of these scales inside the table's; empty for the
// default scales (their sets are in the table's directory itself).
std::string golden_scale_dir_name(const DataScales& scales);
// The directory holding manifest.json and n<N>/ for these scales (see the layout above).
std::filesystem::path golden_table_dir(const std::filesystem::path& root, const LayerTable& table,
                                       const DataScales& scales = {});
std::filesystem::path golden_manifest_path(const std::filesystem::path& root, const LayerTable& table,
                                           const DataScales& scales = {});
std::filesystem::path golden_batch_dir(const std::filesystem::path& root, const LayerTable& table, std::int64_t N,
                                       const DataScales& scales = {});
std::filesystem::path golden_file_path(const std::filesystem::path& root, const LayerTable& table,
                                       const std::string& layer, std::int64_t N, GoldenTensor t,
                                       const DataScales& scales = {});
// (N, C, H, W), (M, C, R, S) or (N, M, E, F) (output and bound).
NpyShape golden_shape(const Layer& layer, std::int64_t N, GoldenTensor t);

// Generates, writes and records the golden sets of every (batch, layer), with progress on
// stderr. Throws cs::Error for bad options (no batches, N < 1, an unknown layer), too little
// free disk space, or a directory that cannot be written.
void generate_golden(const LayerTable& table, const GenerateOptions& options);

struct GoldenSet {
    Layer layer;
    std::int64_t N = 0;
    std::uint64_t seed = 0;
    DataScales scales;              // as the manifest records them
    std::vector<float> input, weights, output;  // NCHW, MCRS, NMEF
    std::vector<float> bound;       // NMEF: sum |w*x| of each output
    CpuTiming cpu;                  // the float32 reference; all zero when it was not timed
    std::optional<CpuTiming> onednn;  // nullopt when oneDNN was not timed
    double onednn_max_abs_diff = 0;   // oneDNN's largest |difference| from the golden output
    std::string cpu_model;
    std::filesystem::path dir;      // <root>/<table>/n<N>
};

// Loads and verifies one golden set: the manifest exists, parses and has format_version 2
// and the current generator; the seed equals expected_seed when one is given; the data
// scales it records (1 and 1 when it records none) equal `scales`, whose directory it reads;
// (layer, N) is
// recorded; the recorded layer shape equals `layer` (a set made from another table or shape
// is refused); each of its four files exists and its header, dtype, shape, size and SHA-256 match the
// manifest. Every failure is a cs::Error that names the file and ends with
// "; regenerate with: <regenerate_command(...)>".
GoldenSet load_golden(const std::filesystem::path& root, const LayerTable& table, const Layer& layer,
                      std::int64_t N, std::optional<std::uint64_t> expected_seed = std::nullopt,
                      const DataScales& scales = {});

// Every check of load_golden (manifest, seed, each file's header, shape, size and SHA-256)
// without keeping the data in memory: for a sweep to refuse a missing or damaged set before
// it asks for a device.
void check_golden(const std::filesystem::path& root, const LayerTable& table, const Layer& layer, std::int64_t N,
                  std::optional<std::uint64_t> expected_seed = std::nullopt, const DataScales& scales = {});

// The batch sizes the manifest records for this layer with this exact shape, ascending
// (files are not verified). Empty when there is no manifest; cs::Error when it is corrupt.
std::vector<std::int64_t> golden_batches(const std::filesystem::path& root, const LayerTable& table,
                                         const Layer& layer, const DataScales& scales = {});

// What a manifest lists: every (layer, N) that has files, with the layer's shape as the
// manifest records it, in the manifest's order; and what belongs to no set (a file entry of
// a layer the manifest's table does not have). Files are not opened. cs::Error when there is
// no manifest or it cannot be read or parsed.
struct GoldenListing {
    std::filesystem::path manifest;
    std::uint64_t seed = 0;
    DataScales scales;  // as recorded (1 and 1 when not recorded)
    std::vector<std::pair<Layer, std::int64_t>> sets;
    std::vector<std::string> problems;
};
// `scales` picks the directory (see the layout above).
GoldenListing list_golden_sets(const std::filesystem::path& root, const LayerTable& table,
                               const DataScales& scales = {});

// "convstudy generate --batch 128 --out golden", plus "--layers FILE" when the table is not
// the built-in one, "--seed S" when seed is not kDefaultSeed and "--input-scale A
// --weight-scale B" when the scales are not 1 and 1; paths shell-quoted.
std::string regenerate_command(const std::filesystem::path& root, const LayerTable& table, std::int64_t N,
                               std::uint64_t seed = kDefaultSeed, const DataScales& scales = {});

}  // namespace cs
