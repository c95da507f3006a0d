#include "golden_manifest.hpp"

#include "atomic_file.hpp"
#include "checksum.hpp"
#include "datagen.hpp"
#include "error.hpp"
#include "join.hpp"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>
#include <vector>

namespace cs::golden_detail {

namespace fs = std::filesystem;

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
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

DataScales scales_from_json(const Json& g) {
    DataScales s;
    auto one = [&](const char* key, double& out) {
        if (!g.contains(key)) return;
        const Json& v = g.at(key);
        if (!v.is_number()) throw BadManifestValue(std::string(key) + ": expected a number, got " + v.dump());
        out = v.get<double>();
        try {
            check_data_scale(out, key);
        } catch (const Error& e) {
            throw BadManifestValue(e.what());
        }
    };
    one("input_scale", s.input);
    one("weight_scale", s.weights);
    return s;
}

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

std::vector<float> verified_file(const Json& entry, const std::string& rel, const fs::path& file, const NpyShape& shape,
                                 bool read_data, const fs::path& manifest_path,
                                 const std::function<std::string()>& suffix,
                                 const std::function<void(const Json&)>& check_entry) {
    auto fail = [&](const fs::path& at, const std::string& what) {
        return Error(at.string() + ": " + what + suffix());
    };
    std::string want_sha;
    std::uint64_t want_bytes = 0;
    try {
        check_entry(entry);
        if (entry.at("dtype").get<std::string>() != kDtype)
            throw fail(file, "the manifest records dtype " + entry.at("dtype").get<std::string>() + ", expected " +
                                 kDtype);
        NpyShape recorded;
        for (const auto& d : entry.at("shape").get_ref<const Json::array_t&>())
            recorded.push_back(json_int<std::int64_t>(d));
        if (recorded != shape)
            throw fail(file, "the manifest records shape " + npy_shape_string(recorded) + ", expected " +
                                 npy_shape_string(shape));
        want_sha = entry.at("sha256").get<std::string>();
        want_bytes = json_int<std::uint64_t>(entry.at("bytes"));
    } catch (const Json::exception& ex) {
        throw fail(manifest_path, "malformed entry for " + rel + " (" + ex.what() + ")");
    }
    std::string sha;
    NpyArray<float> a;
    try {
        if (read_data) {
            a = read_npy_f32(file, shape, &sha);
        } else {
            const NpyHeader h = read_npy_header(file);  // also checks the file's size against it
            if (h.descr != kDtype || h.fortran_order || h.shape != shape)
                throw fail(file, "the header says dtype " + h.descr + ", shape " + npy_shape_string(h.shape) +
                                     (h.fortran_order ? ", Fortran order" : "") + "; expected " + kDtype + ", " +
                                     npy_shape_string(shape));
            sha = sha256_file(file);
        }
    } catch (const Error& ex) {
        const std::string what = ex.what();
        if (what.find("; regenerate with: ") != std::string::npos) throw;
        throw Error(what + suffix());
    }
    std::error_code ec;
    const std::uint64_t bytes = fs::file_size(file, ec);
    if (bytes != want_bytes)
        throw fail(file,
                   "size " + std::to_string(bytes) + " bytes, the manifest records " + std::to_string(want_bytes));
    if (sha != want_sha)
        throw fail(file, "SHA-256 mismatch: the file has " + sha + ", the manifest records " + want_sha +
                             " (the file is corrupt or was changed)");
    return std::move(a.data);
}

std::string merge_conflict(const Json& m, const LayerTable& table, std::uint64_t seed, const DataScales& scales) {
    try {
        if (json_int<int>(m.at("format_version")) != kGoldenFormatVersion) return "has another format_version";
        const auto& g = m.at("generator");
        if (g.at("name").get<std::string>() != kGeneratorName) return "was made by another generator";
        if (g.at("description").get<std::string>() != generator_description())
            return "was made by another version of the generator";
        if (json_int<std::uint64_t>(g.at("seed")) != seed)
            return "was made with seed " + std::to_string(json_int<std::uint64_t>(g.at("seed")));
        if (const DataScales old = scales_from_json(g); old != scales)
            return "was made with input scale " + data_scale_string(old.input) + " and weight scale " +
                   data_scale_string(old.weights);
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

namespace {

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
        return "[" + join(j, ", ", [](const Json& x) { return inline_json(x); }) + "]";
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

void save_manifest(const fs::path& manifest_path, Json& manifest) {
    manifest["updated"] = utc_now();
    std::map<std::string, std::size_t> order;
    for (std::size_t i = 0; i < manifest["layer_table"]["layers"].size(); ++i)
        order[manifest["layer_table"]["layers"][i].value("name", "")] = i;
    auto& files = manifest["files"];
    std::vector<Json> v(files.begin(), files.end());
    // A set's files in the order of the computation: per-layer sets have input, weights,
    // output, bound; chain sets (golden_chain.hpp) put a layer's bias before its output.
    auto tensor_rank = [](const std::string& t) {
        static const char* const kTensorOrder[] = {"input", "weights", "bias", "output", "bound"};
        for (std::size_t i = 0; i < std::size(kTensorOrder); ++i)
            if (t == kTensorOrder[i]) return int(i);
        return int(std::size(kTensorOrder));
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


// ---- staging and interruption ----------------------------------------------------------

namespace {
constexpr const char* kStagingPrefix = ".partial-";

}  // namespace

std::vector<std::int64_t> checked_batches(const std::vector<std::int64_t>& given) {
    if (given.empty()) throw Error("generate: no batch sizes given");
    std::vector<std::int64_t> batches = given;
    for (auto N : batches)
        if (N < 1) throw Error("generate: batch size " + std::to_string(N) + " must be at least 1");
    std::sort(batches.begin(), batches.end());
    batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
    return batches;
}

double physical_memory_bytes() {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? double(pages) * double(page) : 0.0;
}

void require_free_space(const fs::path& dir, double need) {
    std::error_code ec;
    fs::path probe = dir;
    while (!probe.empty() && !fs::exists(probe, ec) && probe != probe.parent_path()) probe = probe.parent_path();
    const auto sp = fs::space(probe.empty() ? fs::path(".") : probe, ec);
    if (!ec && sp.capacity > 0 && double(sp.available) < need)
        throw Error("generate: " + dir.string() + " needs about " + sizes_mb(need) + " of free space, " +
                    sizes_mb(double(sp.available)) + " are available; free some space or choose another --out");
}

fs::path staging_dir(const fs::path& table_dir) { return table_dir / (kStagingPrefix + std::to_string(::getpid())); }

std::string sizes_mb(double bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
    return buf;
}

namespace {
// The pid in "<prefix><pid>" or in "<name>.tmp.<pid>.<hex>"; 0 when there is none.
long pid_in(const std::string& name) {
    std::string digits;
    if (name.rfind(kStagingPrefix, 0) == 0) {
        digits = name.substr(std::strlen(kStagingPrefix));
    } else {
        const auto pos = name.rfind(".tmp.");
        if (pos == std::string::npos) return 0;
        const std::string rest = name.substr(pos + 5);
        const auto dot = rest.find('.');
        if (dot == std::string::npos || dot == 0) return 0;
        digits = rest.substr(0, dot);
    }
    if (digits.empty() || digits.size() > 9 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        return 0;
    return std::strtol(digits.c_str(), nullptr, 10);
}

}  // namespace

void remove_stale_temps(const fs::path& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const long pid = pid_in(entry.path().filename().string());
        if (pid <= 0 || pid == long(::getpid())) continue;
        if (::kill(pid_t(pid), 0) == -1 && errno == ESRCH) fs::remove_all(entry.path(), ec);
    }
}

fs::path make_staging(const fs::path& table_dir, std::vector<fs::path>& created) {
    std::error_code ec;
    for (fs::path p = table_dir; !p.empty() && !fs::exists(p, ec) && p != p.parent_path(); p = p.parent_path())
        created.push_back(p);
    const fs::path staging = staging_dir(table_dir);
    fs::create_directories(staging, ec);
    if (ec || !fs::is_directory(staging))
        throw Error("generate: cannot create directory " + staging.string() + " (" +
                    (ec ? ec.message() : std::string("a file of that name is in the way")) + ")");
    remove_stale_temps(table_dir);
    for (const auto& e : fs::directory_iterator(table_dir, ec))
        if (e.is_directory(ec)) remove_stale_temps(e.path());
    return staging;
}

void InterruptGuard::watch() {
    while (!stop_) {
        const timespec wait{0, 100'000'000};
        siginfo_t info{};
        const int sig = sigtimedwait(&set_, &info, &wait);
        if (sig <= 0) continue;
        if (info.si_code == SI_QUEUE && info.si_pid == ::getpid() && info.si_value.sival_int == kWake) break;
        std::lock_guard<std::mutex> lock(commit_);
        std::error_code ec;
        fs::remove_all(staging_, ec);
        std::fprintf(stderr,
                     "\ngenerate: stopped by signal %d; the manifest lists the sets completed before it, and "
                     "the unfinished set's files were removed\n",
                     sig);
        std::signal(sig, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
        ::raise(sig);
    }
}

std::string manifest_format_error(const Json& mj) {
    if (!mj.contains("format_version") || !mj["format_version"].is_number_integer())
        return "malformed golden manifest: no integer 'format_version'";
    if (mj["format_version"].get<std::int64_t>() != kGoldenFormatVersion)
        return "format_version " + mj["format_version"].dump() + ", this convstudy reads " +
               std::to_string(kGoldenFormatVersion);
    return "";
}

std::string manifest_generator_error(const Json& mj, std::optional<std::uint64_t> expected_seed,
                                     const std::string& files, std::uint64_t& seed) {
    const auto& g = mj.at("generator");
    seed = json_int<std::uint64_t>(g.at("seed"));
    const std::string gen = g.at("name").get<std::string>();
    if (gen != kGeneratorName) return "made by generator '" + gen + "', this convstudy uses '" + kGeneratorName + "'";
    if (expected_seed && seed != *expected_seed)
        return "the " + files + " were generated with seed " + std::to_string(seed) + ", expected seed " +
               std::to_string(*expected_seed);
    return "";
}

}  // namespace cs::golden_detail
