// Chain golden files: generation, loading and listing (see golden_chain.hpp). The manifest's
// JSON helpers, the staging directory and the interrupt guard are the per-layer sets' own
// (golden_manifest.hpp).
#include "golden_chain.hpp"

#include "cpu_anchor.hpp"
#include "error.hpp"
#include "golden.hpp"
#include "golden_manifest.hpp"
#include "join.hpp"
#include "progress.hpp"
#include "shell_quote.hpp"
#include "version.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <map>
#include <set>

namespace cs {

using namespace golden_detail;
namespace fs = std::filesystem;

fs::path golden_chain_dir(const fs::path& root, const LayerTable& table) {
    return root / golden_table_name(table) / kChainDirName;
}
fs::path golden_chain_manifest_path(const fs::path& root, const LayerTable& table) {
    return golden_chain_dir(root, table) / "manifest.json";
}

std::string chain_relative_file(const std::string& layer, std::int64_t N, ChainTensor t) {
    if (t == ChainTensor::input) return batch_dir_name(N) + "/input.npy";
    return batch_dir_name(N) + "/" + layer + "." + chain_tensor_name(t) + ".npy";
}

NpyShape chain_shape(const Layer& l, std::int64_t N, ChainTensor t) {
    switch (t) {
        case ChainTensor::input: return {N, l.C, l.H, l.W};
        case ChainTensor::weights: return {l.M, l.C, l.R, l.S};
        case ChainTensor::bias: return {l.M};
        case ChainTensor::output: return {N, l.M, l.pooled_E(), l.pooled_F()};
    }
    return {};
}

std::string chain_regenerate_command(const fs::path& root, const LayerTable& table, std::int64_t N,
                                     std::uint64_t seed) {
    std::string cmd = "convstudy generate --chain --batch " + std::to_string(N) + " --out " + shell_quote(root.string());
    if (table.source != default_layer_table().source) cmd += " --table " + shell_quote(table.source);
    if (seed != kDefaultSeed) cmd += " --seed " + std::to_string(seed);
    return cmd;
}

namespace {

constexpr const char* kChainKind = "chain";

// The files of one batch's set, in order: the input, then per layer weights, bias (when it
// has one) and output.
struct ChainFile {
    std::size_t layer = 0;  // index in the table (the first layer for the input)
    ChainTensor tensor = ChainTensor::input;
};
std::vector<ChainFile> chain_files(const LayerTable& table) {
    std::vector<ChainFile> out{{0, ChainTensor::input}};
    for (std::size_t i = 0; i < table.layers.size(); ++i) {
        out.push_back({i, ChainTensor::weights});
        if (table.layers[i].bias) out.push_back({i, ChainTensor::bias});
        out.push_back({i, ChainTensor::output});
    }
    return out;
}

void require_chain(const LayerTable& table, const std::string& what) {
    if (table.layers.empty()) throw Error(what + ": " + table.source + " has no layers");
    if (const auto why = chain_error(table))
        throw Error(what + ": table '" + golden_table_name(table) + "' (" + table.source +
                    ") is not a chain, so it has no chain golden files: " + *why);
}

// A layer's manifest entry: the shape (as per-layer manifests write it) and the ops.
Json chain_layer_json(const Layer& l) {
    Json j = layer_json(l);
    j["bias"] = l.bias;
    j["relu"] = l.relu;
    j["pool"] = to_string(l.pool);
    j["pooled_E"] = l.pooled_E();
    j["pooled_F"] = l.pooled_F();
    return j;
}

Json chain_table_json(const LayerTable& table) {
    Json layers = Json::array();
    for (const auto& l : table.layers) layers.push_back(chain_layer_json(l));
    return Json{{"name", table.name}, {"source", table.source}, {"layers", layers}};
}

// Why the recorded table is not `table` (names, shapes, ops, order); empty when it is.
std::string table_difference(const Json& recorded, const LayerTable& table) {
    const auto& layers = recorded.at("layers");
    if (layers.size() != table.layers.size())
        return "records " + std::to_string(layers.size()) + " layers, the table has " +
               std::to_string(table.layers.size());
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const Layer old = layer_from_json(layers[i]);
        const Layer& now = table.layers[i];
        if (old.name != now.name)
            return "records layer " + std::to_string(i + 1) + " as '" + old.name + "', the table has '" + now.name + "'";
        if (!same_shape(old, now))
            return "records layer '" + old.name + "' with shape " + old.shape_string() + ", the table has " +
                   now.shape_string();
        const std::string pool = layers[i].at("pool").get<std::string>();
        if (layers[i].at("bias").get<bool>() != now.bias || layers[i].at("relu").get<bool>() != now.relu ||
            pool != to_string(now.pool))
            return "records layer '" + old.name + "' with other ops (bias " + layers[i].at("bias").dump() + ", relu " +
                   layers[i].at("relu").dump() + ", pool " + pool + ")";
    }
    return {};
}

// Why an existing chain manifest cannot be merged into; empty when it can.
std::string chain_merge_conflict(const Json& m, const LayerTable& table, std::uint64_t seed) {
    try {
        if (json_int<int>(m.at("format_version")) != kGoldenFormatVersion) return "has another format_version";
        if (m.at("kind").get<std::string>() != kChainKind) return "is not a chain manifest";
        const auto& g = m.at("generator");
        if (g.at("name").get<std::string>() != kGeneratorName) return "was made by another generator";
        if (g.at("description").get<std::string>() != chain_generator_description())
            return "was made by another version of the generator";
        if (json_int<std::uint64_t>(g.at("seed")) != seed)
            return "was made with seed " + std::to_string(json_int<std::uint64_t>(g.at("seed")));
        if (const auto d = table_difference(m.at("layer_table"), table); !d.empty()) return d;
        for (const auto& f : m.at("files").get_ref<const Json::array_t&>()) (void)json_int<std::int64_t>(f.at("N"));
        m.at("cpu").get_ref<const Json::object_t&>();
    } catch (const Json::exception& e) {
        return std::string("is malformed (") + e.what() + ")";
    }
    return {};
}

Json start_chain_manifest(const fs::path& manifest_path, const LayerTable& table, std::uint64_t seed,
                          std::string& note) {
    std::optional<Json> existing;
    std::string conflict;
    try {
        existing = read_manifest(manifest_path, "");
        if (existing) conflict = chain_merge_conflict(*existing, table, seed);
    } catch (const Error& e) {
        existing = Json::object();
        conflict = std::string("cannot be used (") + e.what() + ")";
    }
    Json files = Json::array(), cpu = Json::object();
    std::string created = utc_now();
    if (existing && conflict.empty()) {
        files = (*existing)["files"];
        cpu = (*existing)["cpu"];
        if ((*existing).contains("created") && (*existing)["created"].is_string())
            created = (*existing)["created"].get<std::string>();
    } else if (existing) {
        note = "generate: the existing " + manifest_path.string() + " " + conflict +
               "; this run starts a new chain manifest, which replaces it (dropping its other entries) once the "
               "first new set is written";
    }
    Json m = Json::object();
    m["format_version"] = kGoldenFormatVersion;
    m["kind"] = kChainKind;
    m["created"] = created;
    m["updated"] = created;
    m["tool"] = Json{{"name", "convstudy"}, {"version", kToolVersion}, {"git_revision", kGitRevision}};
    m["generator"] = Json{{"name", kGeneratorName}, {"description", chain_generator_description()}, {"seed", seed}};
    m["layer_table"] = chain_table_json(table);
    m["files"] = files;
    m["cpu"] = cpu;
    return m;
}

double set_bytes(const LayerTable& table, std::int64_t N) {
    double b = 0;
    for (const auto& f : chain_files(table))
        b += 4.0 * double(npy_element_count(chain_shape(table.layers[f.layer], N, f.tensor))) + 128;
    return b;
}

// One batch's set in memory, and its manifest entries once written.
struct ChainItem {
    std::int64_t N = 0;
    ChainData data;
    std::vector<std::vector<float>> outputs;
    Json entries = Json::array();
    double bytes = 0;

    const std::vector<float>& tensor(std::size_t layer, ChainTensor t) const {
        switch (t) {
            case ChainTensor::input: return data.input;
            case ChainTensor::weights: return data.weights[layer];
            case ChainTensor::bias: return data.bias[layer];
            case ChainTensor::output: return outputs[layer];
        }
        return data.input;
    }
};

void write_chain_item(ChainItem& it, const LayerTable& table, const fs::path& staging) {
    std::error_code ec;
    const fs::path dir = staging / batch_dir_name(it.N);
    fs::create_directories(dir, ec);
    if (ec) throw Error("generate: cannot create directory " + dir.string() + " (" + ec.message() + ")");
    for (const auto& f : chain_files(table)) {
        const Layer& l = table.layers[f.layer];
        const NpyShape shape = chain_shape(l, it.N, f.tensor);
        const std::string rel = chain_relative_file(l.name, it.N, f.tensor);
        const fs::path file = staging / rel;
        const auto w = write_npy(file, it.tensor(f.layer, f.tensor).data(), shape);
        std::string sha;
        (void)read_npy_f32(file, shape, &sha);
        if (sha != w.sha256)
            throw Error(file.string() + ": the file read back has SHA-256 " + sha + ", but " + w.sha256 +
                        " was written (a failing disk?)");
        it.entries.push_back(Json{{"path", rel}, {"layer", l.name}, {"N", it.N},
                                  {"tensor", chain_tensor_name(f.tensor)}, {"shape", shape}, {"dtype", kDtype},
                                  {"bytes", w.bytes}, {"sha256", w.sha256}});
        it.bytes += double(w.bytes);
    }
}

// The "cpu" entry of a set: chain_ref<float> timed over the whole chain (a warm-up call, then
// repeats until 0.3 seconds or 5 calls; median and min), and each layer's largest absolute and
// relative (to max|golden|) difference of the float chain from the golden one.
Json time_chain(const LayerTable& table, const ChainItem& it, bool time_cpu, const std::string& host_cpu) {
    Json cpu = Json{{"float32_ms", nullptr}, {"float32_min_ms", nullptr}, {"repeats", nullptr}, {"threads", nullptr},
                    {"cpu_model", host_cpu}, {"float32_max_abs_diff", nullptr}, {"float32_max_rel_diff", nullptr}};
    if (!time_cpu) return cpu;
    using clock = std::chrono::steady_clock;
    std::vector<std::vector<float>> out = chain_ref<float>(table, it.data);  // warm-up
    std::vector<double> ms;
    const auto start = clock::now();
    while (ms.size() < 5 && (ms.empty() || std::chrono::duration<double>(clock::now() - start).count() < 0.3)) {
        const auto t0 = clock::now();
        out = chain_ref<float>(table, it.data);
        ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
    }
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    cpu["float32_ms"] = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    cpu["float32_min_ms"] = sorted.front();
    cpu["repeats"] = int(n);
    cpu["threads"] = cpu_threads();
    Json abs_diff = Json::object(), rel_diff = Json::object();
    for (std::size_t i = 0; i < table.layers.size(); ++i) {
        double m = 0, g = 0;
        for (std::size_t j = 0; j < out[i].size(); ++j) {
            const double d = std::fabs(double(out[i][j]) - double(it.outputs[i][j]));
            if (!(d <= m)) m = d;  // NaN propagates as the maximum
            g = std::max(g, std::fabs(double(it.outputs[i][j])));
        }
        abs_diff[table.layers[i].name] = m;
        rel_diff[table.layers[i].name] = g > 0 ? m / g : m;
    }
    cpu["float32_max_abs_diff"] = abs_diff;
    cpu["float32_max_rel_diff"] = rel_diff;
    return cpu;
}

// Puts a written and verified set in place: the old n<N>/ (when there is one) moves into the
// staging directory, the new one into its place, and the manifest is saved with the set's
// entries replaced. On any failure the old directory moves back and the manifest on disk
// and in memory stay as they were.
void commit_chain_item(ChainItem& it, const Json& cpu, const fs::path& chain_dir, const fs::path& staging,
                       Json& manifest) {
    const fs::path dest = chain_dir / batch_dir_name(it.N);
    const fs::path backup = staging / ("replaced." + batch_dir_name(it.N));
    std::error_code ec;
    const bool had_old = fs::exists(fs::symlink_status(dest, ec));
    bool moved_old = false, placed = false;
    try {
        if (had_old) {
            fs::rename(dest, backup);
            moved_old = true;
        }
        fs::rename(staging / batch_dir_name(it.N), dest);
        placed = true;
        Json next = manifest;
        Json files = Json::array();
        for (const auto& f : next["files"])
            if (f.value("N", std::int64_t(0)) != it.N) files.push_back(f);
        for (const auto& e : it.entries) files.push_back(e);
        next["files"] = std::move(files);
        next["cpu"][batch_dir_name(it.N)] = cpu;
        save_manifest(chain_dir / "manifest.json", next);
        manifest = std::move(next);
    } catch (const std::exception& e) {
        if (placed) fs::rename(dest, staging / batch_dir_name(it.N), ec);
        if (moved_old) fs::rename(backup, dest, ec);
        throw Error("generate: could not put the new chain set N=" + std::to_string(it.N) + " in place: " + e.what() +
                    "; its previous files and the manifest are unchanged");
    }
    fs::remove_all(backup, ec);
}

}  // namespace

void generate_chain_golden(const LayerTable& table, const ChainGenerateOptions& opt) {
    require_chain(table, "generate --chain");
    const std::vector<std::int64_t> batches = checked_batches(opt.batches);
    for (const auto& l : table.layers) validate_layer(l, table.source);

    // Memory: one set in memory (data and outputs), plus the float chain's outputs and a
    // layer's pre-pool output while timing; refused here rather than killed by the kernel.
    const fs::path chain_dir = golden_chain_dir(opt.root, table);
    double need_disk = 0;
    const double phys = physical_memory_bytes();
    for (auto N : batches) {
        const double set = set_bytes(table, N);
        need_disk += set;
        double largest = 0;
        for (const auto& l : table.layers) largest = std::max(largest, 4.0 * double(l.output_elems(N)));
        const double need = 2 * set + largest;
        if (phys > 0 && need > phys)
            throw Error("generate: the chain at N=" + std::to_string(N) + " needs about " + sizes_mb(need) +
                        " of memory, this machine has " + sizes_mb(phys) + "; use a smaller batch");
    }
    require_free_space(chain_dir, need_disk);

    std::vector<fs::path> created;
    const fs::path staging = make_staging(chain_dir, created);
    const StagingCleanup cleanup(staging, created);
    InterruptGuard interrupt(staging);

    double total = 0;  // work units: FLOPs of the double chain, and of the float one when timed
    for (auto N : batches)
        for (const auto& l : table.layers) total += l.flops(N) * (opt.time_cpu ? 2.0 : 1.0);
    Progress progress("generate --chain", total, opt.quiet);
    std::string note;
    Json manifest = start_chain_manifest(chain_dir / "manifest.json", table, opt.seed, note);
    if (!note.empty()) progress.message(note);

    const std::string host_cpu = cpu_model();
    double done = 0, written = 0;
    int files = 0;
    for (auto N : batches) {
        const std::string tag = "chain N=" + std::to_string(N) + ": ";
        double flops = 0;
        for (const auto& l : table.layers) flops += l.flops(N);
        ChainItem it;
        it.N = N;
        progress.update(done, tag + "the chain in double");
        it.data = make_chain_data(table, N, opt.seed);
        it.outputs = chain_ref<double>(table, it.data);
        done += flops;
        progress.update(done, tag + "writing files");
        try {
            write_chain_item(it, table, staging);
        } catch (const Error& e) {
            throw Error("generate: could not write the new chain set N=" + std::to_string(N) + ": " + e.what() +
                        "; its previous files and the manifest are unchanged");
        }
        if (opt.time_cpu) progress.update(done, tag + "timing the float32 chain");
        const Json cpu = time_chain(table, it, opt.time_cpu, host_cpu);
        if (opt.time_cpu) done += flops;
        {
            std::lock_guard<std::mutex> lock(interrupt.commit_lock());
            commit_chain_item(it, cpu, chain_dir, staging, manifest);
        }
        written += it.bytes;
        files += int(it.entries.size());
    }
    progress.finish(std::to_string(files) + " files (" + sizes_mb(written) + ") in " + chain_dir.string());
}

ChainGoldenSet load_chain_golden(const fs::path& root, const LayerTable& table, std::int64_t N,
                                 std::optional<std::uint64_t> expected_seed, bool read_data) {
    require_chain(table, "chain golden files");
    const fs::path chain_dir = golden_chain_dir(root, table);
    const fs::path manifest_path = chain_dir / "manifest.json";
    std::uint64_t seed_for_command = expected_seed.value_or(kDefaultSeed);
    auto suffix = [&] { return "; regenerate with: " + chain_regenerate_command(root, table, N, seed_for_command); };
    auto fail = [&](const fs::path& file, const std::string& what) -> Error {
        return Error(file.string() + ": " + what + suffix());
    };
    std::error_code ec;
    if (!fs::is_directory(root, ec)) throw Error("golden directory " + root.string() + " does not exist" + suffix());
    const auto m = read_manifest(manifest_path, suffix());
    if (!m)
        throw fail(manifest_path, "no chain golden manifest (no chain golden files were generated for table '" +
                                      golden_table_name(table) + "' under " + root.string() + ")");
    ChainGoldenSet gs;
    gs.N = N;
    gs.dir = chain_dir / batch_dir_name(N);
    std::map<std::string, Json> entries;  // by relative path
    try {
        const auto& mj = *m;
        if (const auto e = manifest_format_error(mj); !e.empty()) throw fail(manifest_path, e);
        if (!mj.contains("kind") || mj["kind"] != kChainKind)
            throw fail(manifest_path, "not a chain golden manifest (no \"kind\": \"chain\")");
        const auto gen_error = manifest_generator_error(mj, expected_seed, "chain golden files", gs.seed);
        if (!expected_seed) seed_for_command = gs.seed;
        if (!gen_error.empty()) throw fail(manifest_path, gen_error);
        if (const auto d = table_difference(mj.at("layer_table"), table); !d.empty())
            throw fail(manifest_path, "made for another table: the manifest " + d);
        std::set<std::int64_t> generated;
        for (const auto& f : mj.at("files")) {
            const auto n = json_int<std::int64_t>(f.at("N"));
            generated.insert(n);
            if (n == N) entries[f.at("path").get<std::string>()] = f;
        }
        if (!generated.count(N)) {
            const std::string have = join(generated, ", ", [](std::int64_t n) { return std::to_string(n); });
            throw fail(manifest_path, "no chain golden files at N=" + std::to_string(N) +
                                          (have.empty() ? std::string(" (none)") : " (generated for N=" + have + ")"));
        }
        const std::string key = batch_dir_name(N);
        if (mj.at("cpu").contains(key) && mj["cpu"][key].contains("float32_ms") &&
            mj["cpu"][key]["float32_ms"].is_number())
            gs.float32_ms = mj["cpu"][key]["float32_ms"].get<double>();
    } catch (const Json::exception& e) {
        throw fail(manifest_path, std::string("malformed golden manifest (") + e.what() + ")");
    }

    if (read_data) {
        gs.data.N = N;
        gs.data.weights.resize(table.layers.size());
        gs.data.bias.resize(table.layers.size());
        gs.outputs.resize(table.layers.size());
    }
    for (const auto& cf : chain_files(table)) {
        const Layer& l = table.layers[cf.layer];
        const std::string rel = chain_relative_file(l.name, N, cf.tensor);
        const fs::path file = chain_dir / rel;
        const NpyShape shape = chain_shape(l, N, cf.tensor);
        const auto e = entries.find(rel);
        if (e == entries.end()) throw fail(manifest_path, "no entry for " + rel);
        std::vector<float> data =
            verified_file(e->second, rel, file, shape, read_data, manifest_path, suffix, [&](const Json& entry) {
                if (entry.at("tensor").get<std::string>() != chain_tensor_name(cf.tensor))
                    throw fail(manifest_path, "records tensor " + entry.at("tensor").dump() + " for " + rel);
            });
        if (!read_data) continue;
        switch (cf.tensor) {
            case ChainTensor::input: gs.data.input = std::move(data); break;
            case ChainTensor::weights: gs.data.weights[cf.layer] = std::move(data); break;
            case ChainTensor::bias: gs.data.bias[cf.layer] = std::move(data); break;
            case ChainTensor::output: gs.outputs[cf.layer] = std::move(data); break;
        }
    }
    return gs;
}

ChainListing list_chain_golden(const fs::path& root, const LayerTable& table) {
    require_chain(table, "chain golden files");
    ChainListing out;
    out.manifest = golden_chain_manifest_path(root, table);
    std::string hint = chain_regenerate_command(root, table, 1);
    hint.erase(hint.find(" --batch 1"), 10);
    hint = "; generate the chain golden files with: " + hint + " --batch <sizes>";
    const auto m = read_manifest(out.manifest, hint);
    if (!m) throw Error(out.manifest.string() + ": no chain golden manifest" + hint);
    try {
        out.seed = json_int<std::uint64_t>(m->at("generator").at("seed"));
        std::set<std::int64_t> ns;
        for (const auto& f : m->at("files")) ns.insert(json_int<std::int64_t>(f.at("N")));
        out.batches.assign(ns.begin(), ns.end());
    } catch (const Json::exception& e) {
        throw Error(out.manifest.string() + ": malformed golden manifest (" + e.what() + ")" + hint);
    }
    return out;
}

}  // namespace cs
