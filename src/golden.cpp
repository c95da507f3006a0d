#include "golden.hpp"

#include "atomic_file.hpp"
#include "error.hpp"
#include "progress.hpp"
#include "version.hpp"

#include <nlohmann/json.hpp>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <ctime>
#include <fstream>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <utility>

namespace cs {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

constexpr GoldenTensor kTensors[] = {GoldenTensor::input, GoldenTensor::weights, GoldenTensor::output,
                                     GoldenTensor::bound};
constexpr const char* kDtype = "<f4";

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string shell_quote(const std::string& s) {
    const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_-./=:+,@%", c);
    });
    if (plain) return s;
    std::string out = "'";
    for (char c : s) {
        if (c == '\'') out += "'\\''";
        else out += c;
    }
    return out + "'";
}

// "n128". (Built with append: GCC 12 -O3 warns falsely (-Wrestrict) on "n" + std::string.)
std::string batch_dir_name(std::int64_t N) {
    std::string s(1, 'n');
    s.append(std::to_string(N));
    return s;
}

std::string batch_key(const std::string& layer, std::int64_t N) { return layer + "/" + batch_dir_name(N); }

std::string relative_file(const std::string& layer, std::int64_t N, GoldenTensor t) {
    return batch_dir_name(N) + "/" + layer + "." + golden_tensor_name(t) + ".npy";
}

Json layer_json(const Layer& l) {
    return Json{{"name", l.name}, {"C", l.C}, {"H", l.H}, {"W", l.W}, {"M", l.M}, {"R", l.R}, {"S", l.S},
                {"stride", l.stride}, {"pad", l.pad}, {"E", l.E()}, {"F", l.F()}};
}

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
Layer layer_from_json(const Json& j) {
    Layer l;
    l.name = j.at("name").get<std::string>();
    l.C = json_int<int>(j.at("C"));
    l.H = json_int<int>(j.at("H"));
    l.W = json_int<int>(j.at("W"));
    l.M = json_int<int>(j.at("M"));
    l.R = json_int<int>(j.at("R"));
    l.S = json_int<int>(j.at("S"));
    l.stride = json_int<int>(j.at("stride"));
    l.pad = json_int<int>(j.at("pad"));
    try {
        validate_layer(l, "the manifest");
    } catch (const Error& e) {
        throw BadManifestValue(e.what());
    }
    return l;
}

bool same_shape(const Layer& a, const Layer& b) {
    return a.C == b.C && a.H == b.H && a.W == b.W && a.M == b.M && a.R == b.R && a.S == b.S &&
           a.stride == b.stride && a.pad == b.pad;
}

std::string sizes_mb(double bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
    return buf;
}

// Removes "<name>.tmp.<pid>.<hex>" files whose writing process is gone (a killed run).
void remove_stale_temps(const fs::path& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        const auto pos = name.rfind(".tmp.");
        if (pos == std::string::npos) continue;
        const std::string rest = name.substr(pos + 5);
        const auto dot = rest.find('.');
        if (dot == std::string::npos || dot == 0) continue;
        const std::string pid_text = rest.substr(0, dot);
        if (!std::all_of(pid_text.begin(), pid_text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
            continue;
        const long pid = std::strtol(pid_text.c_str(), nullptr, 10);
        if (pid <= 0 || pid == long(::getpid())) continue;
        if (::kill(pid_t(pid), 0) == -1 && errno == ESRCH) fs::remove(entry.path(), ec);
    }
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
    double m = 0;
    const std::size_t n = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
        const double d = std::fabs(double(a[i]) - double(b[i]));
        if (!(d <= m)) m = d;  // NaN propagates as the maximum
    }
    return m;
}

// Reads manifest.json; nullopt when it does not exist. Throws cs::Error (with `suffix`)
// when it cannot be read or is not a JSON object.
std::optional<Json> read_manifest(const fs::path& path, const std::string& suffix) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return std::nullopt;
    std::ifstream f(path, std::ios::binary);
    if (!f) throw Error(path.string() + ": cannot open the golden manifest" + suffix);
    std::ostringstream ss;
    ss << f.rdbuf();
    Json j;
    try {
        j = Json::parse(ss.str());
    } catch (const Json::exception& e) {  // parse_error, or out_of_range for a number like 1e3000
        throw Error(path.string() + ": the golden manifest is not valid JSON (" + e.what() + ")" + suffix);
    }
    if (!j.is_object()) throw Error(path.string() + ": the golden manifest is not a JSON object" + suffix);
    return j;
}

// Why an existing manifest cannot be merged into; empty when it can.
std::string merge_conflict(const Json& m, const LayerTable& table, std::uint64_t seed) {
    try {
        if (json_int<int>(m.at("format_version")) != kGoldenFormatVersion) return "has another format_version";
        const auto& g = m.at("generator");
        if (g.at("name").get<std::string>() != kGeneratorName) return "was made by another generator";
        if (g.at("description").get<std::string>() != generator_description())
            return "was made by another version of the generator";
        if (json_int<std::uint64_t>(g.at("seed")) != seed)
            return "was made with seed " + std::to_string(json_int<std::uint64_t>(g.at("seed")));
        for (const auto& lj : m.at("layer_table").at("layers")) {
            const Layer old = layer_from_json(lj);
            if (const Layer* now = table.find(old.name); now && !same_shape(*now, old))
                return "records layer '" + old.name + "' with another shape (" + old.shape_string() + ")";
        }
        for (const auto& f : m.at("files").get_ref<const Json::array_t&>()) {
            (void)f.at("layer").get<std::string>();
            (void)json_int<std::int64_t>(f.at("N"));
            (void)f.at("tensor").get<std::string>();
        }
        m.at("cpu").get_ref<const Json::object_t&>();
    } catch (const Json::exception& e) {
        return std::string("is malformed (") + e.what() + ")";
    }
    return {};
}

// Pretty JSON for people: nested objects indented, but a value whose members are only
// scalars or arrays of scalars on one line (a file entry, a layer, a timing, a shape).
std::string inline_json(const Json& j) {
    if (j.is_object() && !j.empty()) {
        std::string out = "{";
        for (auto it = j.begin(); it != j.end(); ++it)
            out += (it == j.begin() ? "" : ", ") + Json(it.key()).dump() + ": " + inline_json(it.value());
        return out + "}";
    }
    if (j.is_array() && !j.empty()) {
        std::string out = "[";
        for (std::size_t i = 0; i < j.size(); ++i) out += (i ? ", " : "") + inline_json(j[i]);
        return out + "]";
    }
    return j.dump();
}

void dump_readable(const Json& j, std::string& out, int indent) {
    auto scalars_only = [](const Json& v) {
        for (const auto& x : v)
            if (x.is_structured()) return false;
        return true;
    };
    auto one_line = [&](const Json& v) {
        if (!v.is_structured()) return true;
        for (const auto& x : v)
            if (x.is_object() || (x.is_array() && !scalars_only(x))) return false;
        return true;
    };
    if (j.empty() || (indent > 0 && one_line(j))) {
        out += inline_json(j);
        return;
    }
    const std::string pad(std::size_t(indent + 2), ' ');
    const bool obj = j.is_object();
    out += obj ? "{\n" : "[\n";
    for (auto it = j.begin(); it != j.end(); ++it) {
        if (it != j.begin()) out += ",\n";
        out += pad;
        if (obj) out += Json(it.key()).dump() + ": ";
        dump_readable(it.value(), out, indent + 2);
    }
    out += "\n" + std::string(std::size_t(indent), ' ') + (obj ? "}" : "]");
}

std::string readable_json(const Json& j) {
    std::string out;
    dump_readable(j, out, 0);
    return out + "\n";
}

}  // namespace

const char* golden_tensor_name(GoldenTensor t) {
    switch (t) {
        case GoldenTensor::input: return "input";
        case GoldenTensor::weights: return "weights";
        case GoldenTensor::output: return "output";
        case GoldenTensor::bound: return "bound";
    }
    return "?";
}

std::string golden_table_name(const LayerTable& table) {
    std::string name = table.name;
    if (name.empty()) name = fs::path(table.source).stem().string();
    for (char& c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) c = '_';
    if (name.empty() || name == "." || name == "..") name = "table";
    return name;
}

fs::path golden_table_dir(const fs::path& root, const LayerTable& table) { return root / golden_table_name(table); }
fs::path golden_manifest_path(const fs::path& root, const LayerTable& table) {
    return golden_table_dir(root, table) / "manifest.json";
}
fs::path golden_batch_dir(const fs::path& root, const LayerTable& table, std::int64_t N) {
    return golden_table_dir(root, table) / batch_dir_name(N);
}
fs::path golden_file_path(const fs::path& root, const LayerTable& table, const std::string& layer, std::int64_t N,
                          GoldenTensor t) {
    return golden_table_dir(root, table) / relative_file(layer, N, t);
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

std::string regenerate_command(const fs::path& root, const LayerTable& table, std::int64_t N, std::uint64_t seed) {
    std::string cmd = "convstudy generate --batch " + std::to_string(N) + " --out " + shell_quote(root.string());
    if (table.source != default_layer_table().source) cmd += " --layers " + shell_quote(table.source);
    if (seed != kDefaultSeed) cmd += " --seed " + std::to_string(seed);
    return cmd;
}

// ---------------------------------------------------------------------------------------
// generate: the steps of generate_golden, in the order it takes them

namespace {

// Size of one tensor in bytes, in double: N * C * H * W overflows 64 bits for an absurd N.
double tensor_bytes(const Layer& l, std::int64_t N, GoldenTensor t) {
    return t == GoldenTensor::input     ? 4.0 * double(N) * double(l.input_elems(1))
           : t == GoldenTensor::weights ? 4.0 * double(l.weight_elems())
                                        : 4.0 * double(N) * double(l.output_elems(1));  // output, bound
}

// The batch sizes, sorted and unique; cs::Error for none or one below 1.
std::vector<std::int64_t> checked_batches(const GenerateOptions& opt) {
    if (opt.batches.empty()) throw Error("generate: no batch sizes given");
    std::vector<std::int64_t> batches = opt.batches;
    for (auto N : batches)
        if (N < 1) throw Error("generate: batch size " + std::to_string(N) + " must be at least 1");
    std::sort(batches.begin(), batches.end());
    batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
    return batches;
}

// The layers to generate (all of the table, or the named ones in the order given, each
// once); cs::Error for an unknown name, an empty table, an invalid shape or a tensor over
// 64 GB.
std::vector<const Layer*> checked_layers(const LayerTable& table, const GenerateOptions& opt,
                                         const std::vector<std::int64_t>& batches) {
    std::vector<const Layer*> layers;
    if (opt.layers.empty()) {
        for (const auto& l : table.layers) layers.push_back(&l);
    } else {
        for (const auto& name : opt.layers) {
            const Layer* l = table.find(name);
            if (!l) {
                std::string known;
                for (const auto& n : table.names()) known += (known.empty() ? "" : ", ") + n;
                throw Error("generate: no layer '" + name + "' in " + table.source + " (its layers: " + known + ")");
            }
            if (std::find(layers.begin(), layers.end(), l) == layers.end()) layers.push_back(l);
        }
    }
    if (layers.empty()) throw Error("generate: " + table.source + " has no layers");
    for (const Layer* l : layers) {
        validate_layer(*l, table.source);
        for (auto N : batches)
            if (tensor_bytes(*l, N, GoldenTensor::input) > 64e9 || tensor_bytes(*l, N, GoldenTensor::output) > 64e9)
                throw Error("generate: " + l->name + " at N=" + std::to_string(N) +
                            " needs more than 64 GB for one tensor; use a smaller batch");
    }
    return layers;
}

// Memory: two sets are in memory at once (one written while the next is computed), plus an
// output-sized scratch for the timings. Refused here rather than killed by the kernel.
void check_memory(const std::vector<const Layer*>& layers, const std::vector<std::int64_t>& batches) {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return;
    const double phys = double(pages) * double(page);
    for (const Layer* l : layers)
        for (auto N : batches) {
            double set = 0;
            for (auto t : kTensors) set += tensor_bytes(*l, N, t);
            const double need = 2 * set + tensor_bytes(*l, N, GoldenTensor::output);
            if (need > phys)
                throw Error("generate: " + l->name + " at N=" + std::to_string(N) + " needs about " + sizes_mb(need) +
                            " of memory, this machine has " + sizes_mb(phys) + "; use a smaller batch");
        }
}

// Disk space, before anything is created: the files that grow, plus room for the largest
// temporary beside its old file. Measured on the nearest existing ancestor of the table's
// directory; a filesystem that reports no capacity (/proc) is left to fail on writing.
void check_disk_space(const GenerateOptions& opt, const LayerTable& table, const std::vector<const Layer*>& layers,
                      const std::vector<std::int64_t>& batches) {
    const fs::path table_dir = golden_table_dir(opt.root, table);
    double grow = 0, largest = 0;
    for (auto N : batches)
        for (const Layer* l : layers)
            for (auto t : kTensors) {
                const double bytes = double(npy_element_count(golden_shape(*l, N, t))) * 4 + 128;
                std::error_code ec;
                const auto old = fs::file_size(golden_file_path(opt.root, table, l->name, N, t), ec);
                grow += std::max(0.0, bytes - (ec ? 0.0 : double(old)));
                largest = std::max(largest, bytes);
            }
    std::error_code ec;
    fs::path probe = table_dir;
    while (!probe.empty() && !fs::exists(probe, ec) && probe != probe.parent_path()) probe = probe.parent_path();
    const auto sp = fs::space(probe.empty() ? fs::path(".") : probe, ec);
    if (!ec && sp.capacity > 0 && double(sp.available) < grow + largest)
        throw Error("generate: " + table_dir.string() + " needs about " + sizes_mb(grow + largest) +
                    " of free space, " + sizes_mb(double(sp.available)) +
                    " are available; free some space or choose another --out");
}

// The table's directory and one per batch, with temporaries of killed runs removed.
void make_directories(const GenerateOptions& opt, const LayerTable& table, const std::vector<std::int64_t>& batches) {
    auto make_dir = [](const fs::path& d) {
        std::error_code ec;
        fs::create_directories(d, ec);
        if (ec || !fs::is_directory(d)) throw Error("cannot create directory " + d.string() + " (" + ec.message() + ")");
    };
    const fs::path table_dir = golden_table_dir(opt.root, table);
    make_dir(table_dir);
    for (auto N : batches) make_dir(golden_batch_dir(opt.root, table, N));
    remove_stale_temps(table_dir);
    for (auto N : batches) remove_stale_temps(golden_batch_dir(opt.root, table, N));
}

// The manifest this run starts from: the existing one when it can be merged into (with the
// entries of the sets about to be regenerated dropped, so an interrupted run never lists a
// set whose files are half replaced), else a new one; either with this run's tool,
// generator and layer table. `note` receives why an existing manifest was not merged.
Json start_manifest(const fs::path& manifest_path, const LayerTable& table, const GenerateOptions& opt,
                    const std::vector<const Layer*>& layers, const std::vector<std::int64_t>& batches,
                    std::string& note) {
    Json manifest;
    std::optional<Json> existing;
    std::string conflict;
    try {
        existing = read_manifest(manifest_path, "");
        if (existing) conflict = merge_conflict(*existing, table, opt.seed);
    } catch (const Error& e) {  // unreadable or corrupt: this run replaces it
        existing = Json::object();
        conflict = std::string("cannot be used (") + e.what() + ")";
    }
    const bool merge = existing && conflict.empty();
    if (merge) {
        manifest = *existing;
    } else {
        if (existing)
            note = "generate: the existing " + manifest_path.string() + " " + conflict +
                   "; starting a new manifest (its other entries are dropped)";
        manifest = Json::object();
        manifest["format_version"] = kGoldenFormatVersion;
        manifest["created"] = utc_now();
        manifest["updated"] = manifest["created"];
        manifest["files"] = Json::array();
        manifest["cpu"] = Json::object();
    }
    manifest["tool"] = Json{{"name", "convstudy"}, {"version", kToolVersion}, {"git_revision", kGitRevision}};
    manifest["generator"] = Json{{"name", kGeneratorName}, {"description", generator_description()}, {"seed", opt.seed}};
    // The table: this table's layers first, then layers only the old manifest knew (kept
    // with their entries).
    Json layers_json = Json::array();
    std::set<std::string> names;
    for (const auto& l : table.layers) {
        layers_json.push_back(layer_json(l));
        names.insert(l.name);
    }
    if (merge)
        for (const auto& lj : manifest.at("layer_table").at("layers"))
            if (!names.count(lj.at("name").get<std::string>())) layers_json.push_back(lj);
    manifest["layer_table"] = Json{{"name", table.name}, {"source", table.source}, {"layers", layers_json}};
    // Keep the key order readable: files and cpu at the end.
    Json files = manifest["files"], cpu = manifest["cpu"];
    manifest.erase("files");
    manifest.erase("cpu");
    // Drop the entries about to be regenerated.
    std::set<std::string> regenerating;
    for (auto N : batches)
        for (const Layer* l : layers) regenerating.insert(batch_key(l->name, N));
    Json kept = Json::array();
    for (const auto& f : files)
        if (!regenerating.count(batch_key(f.value("layer", ""), f.value("N", std::int64_t(0))))) kept.push_back(f);
    for (const auto& key : regenerating) cpu.erase(key);
    manifest["files"] = kept;
    manifest["cpu"] = cpu;
    return manifest;
}

// Writes the manifest atomically, its files sorted by N, then the table's layer order,
// then tensor.
void save_manifest(const fs::path& manifest_path, Json& manifest) {
    manifest["updated"] = utc_now();
    std::map<std::string, std::size_t> order;
    for (std::size_t i = 0; i < manifest["layer_table"]["layers"].size(); ++i)
        order[manifest["layer_table"]["layers"][i].value("name", "")] = i;
    auto& files = manifest["files"];
    std::vector<Json> v(files.begin(), files.end());
    auto tensor_rank = [](const std::string& t) {
        for (std::size_t i = 0; i < std::size(kTensors); ++i)
            if (t == golden_tensor_name(kTensors[i])) return int(i);
        return int(std::size(kTensors));
    };
    std::stable_sort(v.begin(), v.end(), [&](const Json& a, const Json& b) {
        const auto ka = std::make_tuple(a.value("N", std::int64_t(0)), order[a.value("layer", "")],
                                        tensor_rank(a.value("tensor", "")));
        const auto kb = std::make_tuple(b.value("N", std::int64_t(0)), order[b.value("layer", "")],
                                        tensor_rank(b.value("tensor", "")));
        return ka < kb;
    });
    files = Json(v);
    write_file_atomic(manifest_path, readable_json(manifest));
}

// One (layer, N) golden set in memory, and its manifest entries once written.
struct GoldenItem {
    const Layer* layer = nullptr;
    std::int64_t N = 0;
    std::vector<float> input, weights, output, bound;
    Json entries = Json::array();
    double bytes = 0;

    const std::vector<float>& tensor(GoldenTensor t) const {
        switch (t) {
            case GoldenTensor::input: return input;
            case GoldenTensor::weights: return weights;
            case GoldenTensor::output: return output;
            case GoldenTensor::bound: return bound;
        }
        return output;
    }
};

// Generator data, the double reference output and its per-element bound.
void compute_item(GoldenItem& it, std::uint64_t seed) {
    const Layer& l = *it.layer;
    it.input.resize(std::size_t(l.input_elems(it.N)));
    it.weights.resize(std::size_t(l.weight_elems()));
    it.output.resize(std::size_t(l.output_elems(it.N)));
    it.bound.resize(it.output.size());
    make_input(l, it.N, seed, it.input.data());
    make_weights(l, seed, it.weights.data());
    conv2d_ref<double>(l, it.N, it.input.data(), it.weights.data(), it.output.data());
    conv2d_bound(l, it.N, it.input.data(), it.weights.data(), it.bound.data());
}

// Writes the set's files and records their manifest entries (not yet in the manifest).
void write_item(GoldenItem& it, const fs::path& root, const LayerTable& table) {
    const Layer& l = *it.layer;
    for (auto t : kTensors) {
        const NpyShape shape = golden_shape(l, it.N, t);
        const auto w = write_npy(golden_file_path(root, table, l.name, it.N, t), it.tensor(t).data(), shape);
        it.entries.push_back(Json{{"path", relative_file(l.name, it.N, t)}, {"layer", l.name}, {"N", it.N},
                                  {"tensor", golden_tensor_name(t)}, {"shape", shape}, {"dtype", kDtype},
                                  {"bytes", w.bytes}, {"sha256", w.sha256}});
        it.bytes += double(w.bytes);
    }
}

// The set's "cpu" manifest entry: the float32 reference and oneDNN timed (when asked),
// each with its largest difference from the golden output; null where not measured.
// `step(what)` reports progress before each timing, `done(flops)` after it.
template <class Step, class Done>
Json time_item(const GoldenItem& it, const GenerateOptions& opt, bool do_onednn, const std::string& host_cpu,
               Step step, Done done) {
    const Layer& l = *it.layer;
    const double flops = l.flops(it.N);
    Json cpu = Json{{"float32_ms", nullptr}, {"float32_min_ms", nullptr}, {"repeats", nullptr},
                    {"threads", nullptr}, {"float32_max_abs_diff", nullptr}, {"cpu_model", host_cpu},
                    {"onednn_ms", nullptr}, {"onednn_min_ms", nullptr}, {"onednn_threads", nullptr},
                    {"onednn_version", nullptr}, {"onednn_max_abs_diff", nullptr}};
    if (!opt.time_cpu && !do_onednn) return cpu;
    std::vector<float> scratch(it.output.size());
    if (opt.time_cpu) {
        step("timing the float32 reference");
        const CpuTiming t = time_cpu_reference(l, it.N, it.input.data(), it.weights.data(), scratch.data());
        cpu["float32_ms"] = t.ms;
        cpu["float32_min_ms"] = t.min_ms;
        cpu["repeats"] = t.repeats;
        cpu["threads"] = t.threads;
        cpu["float32_max_abs_diff"] = max_abs_diff(scratch, it.output);
        done(flops);
    }
    if (do_onednn) {
        step("timing oneDNN");
        std::fill(scratch.begin(), scratch.end(), std::nanf(""));
        if (const auto t = time_onednn(l, it.N, it.input.data(), it.weights.data(), scratch.data())) {
            cpu["onednn_ms"] = t->ms;
            cpu["onednn_min_ms"] = t->min_ms;
            cpu["onednn_threads"] = t->threads;
            cpu["onednn_version"] = onednn_version();
            cpu["onednn_max_abs_diff"] = max_abs_diff(scratch, it.output);
        }
        done(flops);
    }
    return cpu;
}

}  // namespace

void generate_golden(const LayerTable& table, const GenerateOptions& opt) {
    const std::vector<std::int64_t> batches = checked_batches(opt);
    const std::vector<const Layer*> layers = checked_layers(table, opt, batches);
    check_memory(layers, batches);
    check_disk_space(opt, table, layers, batches);
    make_directories(opt, table, batches);

    // Work units for the progress estimate: FLOPs of the double reference and of the bound
    // (both in compute_item), plus about one float32 call per timing (warm-up and repeats
    // are bounded by time).
    const bool do_onednn = opt.time_onednn && onednn_available();
    const double per_flop = 2.0 + (opt.time_cpu ? 1.0 : 0.0) + (do_onednn ? 1.0 : 0.0);
    double total = 0;
    for (auto N : batches)
        for (const Layer* l : layers) total += l->flops(N) * per_flop;
    Progress progress("generate", total, opt.quiet);

    const fs::path table_dir = golden_table_dir(opt.root, table);
    const fs::path manifest_path = table_dir / "manifest.json";
    std::string note;
    Json manifest = start_manifest(manifest_path, table, opt, layers, batches, note);
    if (!note.empty()) progress.message(note);
    save_manifest(manifest_path, manifest);

    // The pipeline: while one (layer, N) set is written and hashed on a second thread, the
    // next one is generated and computed. Its CPU timings run only after its files are
    // written, with nothing else running, and then its manifest entries are saved.
    const std::string host_cpu = cpu_model();
    double done = 0, written_bytes = 0;
    int written_files = 0;
    auto record = [&](GoldenItem& it) {
        const std::string tag = it.layer->name + " N=" + std::to_string(it.N) + ": ";
        const Json cpu = time_item(
            it, opt, do_onednn, host_cpu, [&](const char* what) { progress.update(done, tag + what); },
            [&](double flops) { done += flops; });
        for (auto& e : it.entries) manifest["files"].push_back(std::move(e));
        manifest["cpu"][batch_key(it.layer->name, it.N)] = cpu;
        save_manifest(manifest_path, manifest);
        written_bytes += it.bytes;
        written_files += int(std::size(kTensors));
    };

    // `pending` is declared before `writing` so the future (whose destructor waits for the
    // thread) goes first and the buffers outlive the thread even when an exception unwinds.
    std::shared_ptr<GoldenItem> pending;
    std::future<void> writing;
    auto complete_pending = [&] {
        if (!pending) return;
        progress.update(done, pending->layer->name + " N=" + std::to_string(pending->N) + ": writing files");
        writing.get();  // rethrows a write failure
        record(*pending);
        pending.reset();
    };
    for (auto N : batches) {
        for (const Layer* lp : layers) {
            auto item = std::make_shared<GoldenItem>();
            item->layer = lp;
            item->N = N;
            progress.update(done, lp->name + " N=" + std::to_string(N) + ": reference and bound (double)");
            compute_item(*item, opt.seed);
            done += 2 * lp->flops(N);

            complete_pending();
            pending = item;
            writing = std::async(std::launch::async, [item, &opt, &table] { write_item(*item, opt.root, table); });
        }
    }
    complete_pending();
    progress.finish(std::to_string(written_files) + " files (" + sizes_mb(written_bytes) + ") in " +
                    table_dir.string());
}

// ---------------------------------------------------------------------------------------
// load

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

}  // namespace

GoldenSet load_golden(const fs::path& root, const LayerTable& table, const Layer& layer, std::int64_t N,
                      std::optional<std::uint64_t> expected_seed) {
    const fs::path table_dir = golden_table_dir(root, table);
    const fs::path manifest_path = table_dir / "manifest.json";
    std::uint64_t seed_for_command = expected_seed.value_or(kDefaultSeed);
    auto suffix = [&] { return "; regenerate with: " + regenerate_command(root, table, N, seed_for_command); };
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
    gs.dir = golden_batch_dir(root, table, N);
    std::map<GoldenTensor, Json> file_entries;
    Json cpu_entry;
    try {
        const auto& mj = *m;
        if (!mj.contains("format_version") || !mj["format_version"].is_number_integer())
            throw fail(manifest_path, "malformed golden manifest: no integer 'format_version'");
        if (mj["format_version"].get<std::int64_t>() != kGoldenFormatVersion)
            throw fail(manifest_path, "format_version " + mj["format_version"].dump() + ", this convstudy reads " +
                                          std::to_string(kGoldenFormatVersion));
        const auto& g = mj.at("generator");
        gs.seed = json_int<std::uint64_t>(g.at("seed"));
        if (!expected_seed) seed_for_command = gs.seed;
        const std::string gen = g.at("name").get<std::string>();
        if (gen != kGeneratorName)
            throw fail(manifest_path, "made by generator '" + gen + "', this convstudy uses '" + kGeneratorName + "'");
        if (expected_seed && gs.seed != *expected_seed)
            throw fail(manifest_path, "the golden files were generated with seed " + std::to_string(gs.seed) +
                                          ", expected seed " + std::to_string(*expected_seed));

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
            std::string have;
            for (auto n : generated) have += (have.empty() ? "" : ", ") + std::to_string(n);
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
        std::string want_sha;
        std::uint64_t want_bytes = 0;
        try {
            if (e.at("path").get<std::string>() != rel)
                throw fail(manifest_path, "records path '" + e.at("path").get<std::string>() + "' for " + rel);
            if (e.at("dtype").get<std::string>() != kDtype)
                throw fail(file, "the manifest records dtype " + e.at("dtype").get<std::string>() + ", expected " + kDtype);
            NpyShape recorded_shape;
            for (const auto& d : e.at("shape").get_ref<const Json::array_t&>())
                recorded_shape.push_back(json_int<std::int64_t>(d));
            if (recorded_shape != shape)
                throw fail(file, "the manifest records shape " + npy_shape_string(recorded_shape) + ", expected " +
                                     npy_shape_string(shape));
            want_sha = e.at("sha256").get<std::string>();
            want_bytes = json_int<std::uint64_t>(e.at("bytes"));
        } catch (const Json::exception& ex) {
            throw fail(manifest_path, "malformed entry for " + rel + " (" + ex.what() + ")");
        }
        std::string sha;
        NpyArray<float> a;
        try {
            a = read_npy_f32(file, shape, &sha);
        } catch (const Error& ex) {
            throw Error(ex.what() + suffix());
        }
        const std::uint64_t bytes = fs::file_size(file, ec);
        if (bytes != want_bytes)
            throw fail(file, "size " + std::to_string(bytes) + " bytes, the manifest records " +
                                 std::to_string(want_bytes));
        if (sha != want_sha)
            throw fail(file, "SHA-256 mismatch: the file has " + sha + ", the manifest records " + want_sha +
                                 " (the file is corrupt or was changed)");
        (kt == GoldenTensor::input     ? gs.input
         : kt == GoldenTensor::weights ? gs.weights
         : kt == GoldenTensor::output  ? gs.output
                                       : gs.bound) = std::move(a.data);
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

std::vector<std::int64_t> golden_batches(const fs::path& root, const LayerTable& table, const Layer& layer) {
    const fs::path manifest_path = golden_manifest_path(root, table);
    // What to do about a manifest that cannot be read: the command, without --batch.
    std::string hint = regenerate_command(root, table, 1);
    hint.erase(hint.find(" --batch 1"), 10);
    hint = "; regenerate the golden files with: " + hint + " --batch <sizes>";
    const auto m = read_manifest(manifest_path, hint);
    if (!m) return {};
    std::set<std::int64_t> out;
    try {
        if (json_int<int>(m->at("format_version")) != kGoldenFormatVersion) return {};
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

}  // namespace cs
