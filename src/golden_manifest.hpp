// The golden manifest (manifest.json) as JSON: the file names and keys it uses, reading it,
// checking that a new run may merge into it, and writing it readably and atomically. Shared
// by generation (golden_generate.cpp) and loading (golden_load.cpp); not a public API.
#pragma once

#include "golden.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <utility>

namespace cs::golden_detail {

using Json = nlohmann::ordered_json;

inline constexpr GoldenTensor kTensors[] = {GoldenTensor::input, GoldenTensor::weights, GoldenTensor::output,
                                            GoldenTensor::bound};
inline constexpr const char* kDtype = "<f4";

// "2024-01-31T12:00:00Z"
std::string utc_now();
// "n128"
std::string batch_dir_name(std::int64_t N);
// "conv3/n128": the key of a set in the manifest's "cpu" object.
std::string batch_key(const std::string& layer, std::int64_t N);
// "n128/conv3.output.npy": a file's path relative to the manifest's directory.
std::string relative_file(const std::string& layer, std::int64_t N, GoldenTensor t);

Json layer_json(const Layer& l);

// A manifest value that is not what it must be (see json_int); a Json::exception, so it
// is reported wherever nlohmann's own type errors are.
class BadManifestValue : public Json::exception {
public:
    explicit BadManifestValue(const std::string& what) : Json::exception(302, what.c_str()) {}
};

// An integer of type T. nlohmann's get<int>() converts a floating-point number, and one out
// of range (1e300) is undefined behaviour: every integer of a manifest is read through here.
template <class T>
T json_int(const Json& j) {
    if (j.is_number_unsigned()) {
        if (const auto v = j.get<std::uint64_t>(); std::in_range<T>(v)) return T(v);
    } else if (j.is_number_integer()) {
        if (const auto v = j.get<std::int64_t>(); std::in_range<T>(v)) return T(v);
    }
    throw BadManifestValue("expected an integer from " + std::to_string(std::numeric_limits<T>::min()) + " to " +
                           std::to_string(std::numeric_limits<T>::max()) + ", got " + j.dump());
}

// The shape fields of a manifest layer entry; throws Json exceptions when malformed or when
// the shape is impossible (a stride of 0 would divide by zero in E()).
Layer layer_from_json(const Json& j);
bool same_shape(const Layer& a, const Layer& b);

// The data scales a manifest's "generator" object records: 1 and 1 when it has none (made
// before scales existed). BadManifestValue when a recorded one is not a valid data scale.
DataScales scales_from_json(const Json& generator);

// Reads manifest.json; nullopt when it does not exist. Throws cs::Error (with `suffix`)
// when it cannot be read or is not a JSON object.
std::optional<Json> read_manifest(const std::filesystem::path& path, const std::string& suffix);

// Why an existing manifest cannot be merged into; empty when it can.
std::string merge_conflict(const Json& m, const LayerTable& table, std::uint64_t seed, const DataScales& scales);

// Writes the manifest atomically with "updated" set to now, its files sorted by N, then the
// table's layer order, then tensor; readable (one line per file entry).
void save_manifest(const std::filesystem::path& manifest_path, Json& manifest);

}  // namespace cs::golden_detail
