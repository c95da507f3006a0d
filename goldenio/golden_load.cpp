// Golden files: loading one set with every check (load_golden), checking one without
// reading its data (check_golden), and the batches a manifest records (golden_batches).
#include "golden.hpp"

#include "error.hpp"
#include "golden_manifest.hpp"
#include "join.hpp"

#include <map>
#include <set>

namespace cs {

using namespace golden_detail;
namespace fs = std::filesystem;

namespace {

CpuTiming timing_from(const Json& j, const char* ms, const char* min_ms, const char* repeats, const char* threads) {
    CpuTiming t;
    auto num = [&](const char* k) { return j.contains(k) && j[k].is_number() ? j[k].get<double>() : 0.0; };
    t.ms = num(ms);
    t.min_ms = num(min_ms);
    // Counts outside int's range (only a damaged manifest has them) read as unknown, 0.
    auto count = [&](const char* k) {
        const double v = num(k);
        return v >= 0 && v <= double(std::numeric_limits<int>::max()) ? int(v) : 0;
    };
    t.repeats = repeats ? count(repeats) : 0;
    t.threads = count(threads);
    return t;
}

// load_golden (read_data) or check_golden (the same checks, the data hashed as it streams by).
GoldenSet inspect_golden(const fs::path& root, const LayerTable& table, const Layer& layer, std::int64_t N,
                         std::optional<std::uint64_t> expected_seed, const DataScales& scales, bool read_data) {
    const fs::path table_dir = golden_table_dir(root, table, scales);
    const fs::path manifest_path = table_dir / "manifest.json";
    std::uint64_t seed_for_command = expected_seed.value_or(kDefaultSeed);
    auto suffix = [&] { return "; regenerate with: " + regenerate_command(root, table, N, seed_for_command, scales); };
    auto fail = [&](const fs::path& file, const std::string& what) -> Error {
        return Error(file.string() + ": " + what + suffix());
    };

    std::error_code ec;
    if (!fs::is_directory(root, ec))
        throw Error("golden directory " + root.string() + " does not exist" + suffix());
    const auto m = read_manifest(manifest_path, suffix());
    if (!m)
        throw fail(manifest_path, "no golden manifest (no golden files were generated for table '" +
                                      golden_table_name(table) + "' under " + root.string() + ")");

    GoldenSet gs;
    gs.layer = layer;
    gs.N = N;
    gs.dir = golden_batch_dir(root, table, N, scales);
    std::map<GoldenTensor, Json> file_entries;
    Json cpu_entry;
    try {
        const auto& mj = *m;
        if (const auto e = manifest_format_error(mj); !e.empty()) throw fail(manifest_path, e);
        const auto gen_error = manifest_generator_error(mj, expected_seed, "golden files", gs.seed);
        if (!expected_seed) seed_for_command = gs.seed;
        if (!gen_error.empty()) throw fail(manifest_path, gen_error);
        const auto& g = mj.at("generator");
        gs.scales = scales_from_json(g);
        if (gs.scales != scales)
            throw fail(manifest_path, "the golden files were generated with input scale " +
                                          data_scale_string(gs.scales.input) + " and weight scale " +
                                          data_scale_string(gs.scales.weights) + ", expected input scale " +
                                          data_scale_string(scales.input) + " and weight scale " +
                                          data_scale_string(scales.weights));

        // The recorded shape of this layer must be the requested one.
        const Json* recorded = nullptr;
        for (const auto& lj : mj.at("layer_table").at("layers"))
            if (lj.at("name").get<std::string>() == layer.name) recorded = &lj;
        if (!recorded) throw fail(manifest_path, "no golden files for layer '" + layer.name + "'");
        const Layer old = layer_from_json(*recorded);
        if (!same_shape(old, layer))
            throw fail(manifest_path, "the golden files of layer '" + layer.name + "' were made for shape " +
                                          old.shape_string() + ", but the requested layer has shape " +
                                          layer.shape_string());

        std::set<std::int64_t> generated;
        for (const auto& f : mj.at("files")) {
            if (f.at("layer").get<std::string>() != layer.name) continue;
            const auto n = json_int<std::int64_t>(f.at("N"));
            generated.insert(n);
            if (n != N) continue;
            const std::string t = f.at("tensor").get<std::string>();
            for (auto kt : kTensors)
                if (t == golden_tensor_name(kt)) file_entries[kt] = f;
        }
        if (!generated.count(N)) {
            const std::string have = join(generated, ", ", [](std::int64_t n) { return std::to_string(n); });
            throw fail(manifest_path, "no golden files for " + layer.name + " at N=" + std::to_string(N) +
                                          (have.empty() ? std::string(" (none for this layer)")
                                                        : " (generated for N=" + have + ")"));
        }
        for (auto kt : kTensors)
            if (!file_entries.count(kt))
                throw fail(manifest_path, std::string("no '") + golden_tensor_name(kt) + "' file recorded for " +
                                              layer.name + " at N=" + std::to_string(N));
        const auto& cpu = mj.at("cpu");
        if (cpu.contains(batch_key(layer.name, N))) cpu_entry = cpu[batch_key(layer.name, N)];
    } catch (const Json::exception& e) {
        throw fail(manifest_path, std::string("malformed golden manifest (") + e.what() + ")");
    }

    for (auto kt : kTensors) {
        const Json& e = file_entries[kt];
        const std::string rel = relative_file(layer.name, N, kt);
        const fs::path file = table_dir / rel;
        const NpyShape shape = golden_shape(layer, N, kt);
        std::vector<float> data =
            verified_file(e, rel, file, shape, read_data, manifest_path, suffix, [&](const Json& entry) {
                if (entry.at("path").get<std::string>() != rel)
                    throw fail(manifest_path, "records path '" + entry.at("path").get<std::string>() + "' for " + rel);
            });
        (kt == GoldenTensor::input     ? gs.input
         : kt == GoldenTensor::weights ? gs.weights
         : kt == GoldenTensor::output  ? gs.output
                                       : gs.bound) = std::move(data);
    }

    if (cpu_entry.is_object()) {
        gs.cpu = timing_from(cpu_entry, "float32_ms", "float32_min_ms", "repeats", "threads");
        if (cpu_entry.contains("cpu_model") && cpu_entry["cpu_model"].is_string())
            gs.cpu_model = cpu_entry["cpu_model"].get<std::string>();
        if (cpu_entry.contains("onednn_ms") && cpu_entry["onednn_ms"].is_number()) {
            gs.onednn = timing_from(cpu_entry, "onednn_ms", "onednn_min_ms", nullptr, "onednn_threads");
            if (cpu_entry.contains("onednn_max_abs_diff") && cpu_entry["onednn_max_abs_diff"].is_number())
                gs.onednn_max_abs_diff = cpu_entry["onednn_max_abs_diff"].get<double>();
        }
    }
    return gs;
}

}  // namespace

GoldenSet load_golden(const fs::path& root, const LayerTable& table, const Layer& layer, std::int64_t N,
                      std::optional<std::uint64_t> expected_seed, const DataScales& scales) {
    return inspect_golden(root, table, layer, N, expected_seed, scales, true);
}

void check_golden(const fs::path& root, const LayerTable& table, const Layer& layer, std::int64_t N,
                  std::optional<std::uint64_t> expected_seed, const DataScales& scales) {
    (void)inspect_golden(root, table, layer, N, expected_seed, scales, false);
}

std::vector<std::int64_t> golden_batches(const fs::path& root, const LayerTable& table, const Layer& layer,
                                         const DataScales& scales) {
    const fs::path manifest_path = golden_manifest_path(root, table, scales);
    // What to do about a manifest that cannot be read: the command, without --batch.
    std::string hint = regenerate_command(root, table, 1, kDefaultSeed, scales);
    hint.erase(hint.find(" --batch 1"), 10);
    hint = "; regenerate the golden files with: " + hint + " --batch <sizes>";
    const auto m = read_manifest(manifest_path, hint);
    if (!m) return {};
    std::set<std::int64_t> out;
    try {
        if (json_int<int>(m->at("format_version")) != kGoldenFormatVersion) return {};
        if (scales_from_json(m->at("generator")) != scales) return {};
        bool shape_ok = false;
        for (const auto& lj : m->at("layer_table").at("layers"))
            if (lj.at("name").get<std::string>() == layer.name) shape_ok = same_shape(layer_from_json(lj), layer);
        if (!shape_ok) return {};
        std::map<std::int64_t, int> count;
        for (const auto& f : m->at("files"))
            if (f.at("layer").get<std::string>() == layer.name) ++count[json_int<std::int64_t>(f.at("N"))];
        for (const auto& [n, c] : count)
            if (c == int(std::size(kTensors))) out.insert(n);
    } catch (const Json::exception& e) {
        throw Error(manifest_path.string() + ": malformed golden manifest (" + e.what() + ")" + hint);
    }
    return {out.begin(), out.end()};
}

GoldenListing list_golden_sets(const fs::path& root, const LayerTable& table, const DataScales& scales) {
    GoldenListing out;
    out.manifest = golden_manifest_path(root, table, scales);
    std::string hint = regenerate_command(root, table, 1, kDefaultSeed, scales);
    hint.erase(hint.find(" --batch 1"), 10);
    hint = "; generate the golden files with: " + hint + " --batch <sizes>";
    const auto m = read_manifest(out.manifest, hint);
    if (!m) throw Error(out.manifest.string() + ": no golden manifest" + hint);
    try {
        out.seed = json_int<std::uint64_t>(m->at("generator").at("seed"));
        out.scales = scales_from_json(m->at("generator"));
        std::map<std::string, Layer> layers;
        std::vector<std::string> order;
        for (const auto& lj : m->at("layer_table").at("layers")) {
            const Layer l = layer_from_json(lj);
            if (layers.emplace(l.name, l).second) order.push_back(l.name);
        }
        std::map<std::string, std::set<std::int64_t>> batches;
        for (const auto& f : m->at("files")) {
            const std::string layer = f.at("layer").get<std::string>();
            const auto N = json_int<std::int64_t>(f.at("N"));
            if (!layers.count(layer)) {
                out.problems.push_back("the manifest lists " + f.at("path").get<std::string>() + " of layer '" +
                                       layer + "', which its layer_table does not have");
                continue;
            }
            batches[layer].insert(N);
        }
        std::set<std::int64_t> all_n;
        for (const auto& [name, ns] : batches) all_n.insert(ns.begin(), ns.end());
        for (auto N : all_n)
            for (const auto& name : order)
                if (batches[name].count(N)) out.sets.emplace_back(layers.at(name), N);
    } catch (const Json::exception& e) {
        throw Error(out.manifest.string() + ": malformed golden manifest (" + e.what() + ")" + hint);
    }
    return out;
}

}  // namespace cs
