// Golden files: names, paths and shapes, and the regenerate command. Generation is in
// golden_generate.cpp, loading and checking in golden_load.cpp, the manifest's JSON in
// golden_manifest.cpp.
#include "golden.hpp"

#include "golden_manifest.hpp"
#include "shell_quote.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace cs {

using namespace golden_detail;
namespace fs = std::filesystem;

std::string golden_table_name(const LayerTable& table) {
    std::string name = table.name;
    if (name.empty()) name = fs::path(table.source).stem().string();
    for (char& c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) c = '_';
    if (name.empty() || name == "." || name == "..") name = "table";
    return name;
}

std::string golden_scale_dir_name(const DataScales& scales) {
    if (scales.is_default()) return {};
    return "x" + data_scale_string(scales.input) + "_w" + data_scale_string(scales.weights);
}

fs::path golden_table_dir(const fs::path& root, const LayerTable& table, const DataScales& scales) {
    const fs::path dir = root / golden_table_name(table);
    return scales.is_default() ? dir : dir / golden_scale_dir_name(scales);
}
fs::path golden_manifest_path(const fs::path& root, const LayerTable& table, const DataScales& scales) {
    return golden_table_dir(root, table, scales) / "manifest.json";
}
fs::path golden_batch_dir(const fs::path& root, const LayerTable& table, std::int64_t N, const DataScales& scales) {
    return golden_table_dir(root, table, scales) / batch_dir_name(N);
}
fs::path golden_file_path(const fs::path& root, const LayerTable& table, const std::string& layer, std::int64_t N,
                          GoldenTensor t, const DataScales& scales) {
    return golden_table_dir(root, table, scales) / relative_file(layer, N, t);
}

NpyShape golden_shape(const Layer& l, std::int64_t N, GoldenTensor t) {
    switch (t) {
        case GoldenTensor::input: return {N, l.C, l.H, l.W};
        case GoldenTensor::weights: return {l.M, l.C, l.R, l.S};
        case GoldenTensor::output:
        case GoldenTensor::bound: return {N, l.M, l.E(), l.F()};
    }
    return {};
}

std::string regenerate_command(const fs::path& root, const LayerTable& table, std::int64_t N, std::uint64_t seed,
                               const DataScales& scales) {
    std::string cmd = "convstudy generate --batch " + std::to_string(N) + " --out " + shell_quote(root.string());
    if (!table.builtin || table.name != default_layer_table().name)
        cmd += (table.builtin ? " --table " : " --layers ") + shell_quote(table_argument(table));
    if (seed != kDefaultSeed) cmd += " --seed " + std::to_string(seed);
    if (!scales.is_default())
        cmd += " --input-scale " + data_scale_string(scales.input) + " --weight-scale " +
               data_scale_string(scales.weights);
    return cmd;
}

}  // namespace cs
