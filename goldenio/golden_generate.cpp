// Golden files: generation. Each (layer, N) set is computed, written to a staging directory
// (<table>/.partial-<pid>/), read back and checked against the SHA-256 computed while
// writing, timed, and only then moved into n<N>/ and listed in the manifest, in one step
// that SIGTERM/SIGINT/SIGHUP cannot split (see InterruptGuard). Until then the manifest and
// the previous files are untouched: a failed or interrupted run leaves every set it did not
// finish as it was, listed and usable, and removes its staging directory.
#include "golden.hpp"

#include "atomic_file.hpp"
#include "error.hpp"
#include "golden_manifest.hpp"
#include "join.hpp"
#include "progress.hpp"
#include "version.hpp"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cctype>
#include <cmath>
#include <csignal>
#include <cstring>
#include <cstdio>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

namespace cs {

using namespace golden_detail;
namespace fs = std::filesystem;

namespace {

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
    double m = 0;
    const std::size_t n = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
        const double d = std::fabs(double(a[i]) - double(b[i]));
        if (!(d <= m)) m = d;  // NaN propagates as the maximum
    }
    return m;
}

// Size of one tensor in bytes, in double: N * C * H * W overflows 64 bits for an absurd N.
double tensor_bytes(const Layer& l, std::int64_t N, GoldenTensor t) {
    return t == GoldenTensor::input     ? 4.0 * double(N) * double(l.input_elems(1))
           : t == GoldenTensor::weights ? 4.0 * double(l.weight_elems())
                                        : 4.0 * double(N) * double(l.output_elems(1));  // output, bound
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
            if (!l)
                throw Error("generate: no layer '" + name + "' in " + table.source + " (its layers: " +
                            join(table.names(), ", ") + ")");
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
    const double phys = physical_memory_bytes();
    if (phys <= 0) return;
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
// set, which sits in the staging directory (and then as the old files' backup) until it
// replaces its old files. Measured on the nearest existing ancestor of the table's
// directory; a filesystem that reports no capacity (/proc) is left to fail on writing.
void check_disk_space(const GenerateOptions& opt, const LayerTable& table, const std::vector<const Layer*>& layers,
                      const std::vector<std::int64_t>& batches) {
    const fs::path table_dir = golden_table_dir(opt.root, table, opt.scales);
    double grow = 0, largest = 0;
    for (auto N : batches)
        for (const Layer* l : layers) {
            double set = 0;
            for (auto t : kTensors) {
                const double bytes = double(npy_element_count(golden_shape(*l, N, t))) * 4 + 128;
                std::error_code ec;
                const auto old = fs::file_size(golden_file_path(opt.root, table, l->name, N, t, opt.scales), ec);
                grow += std::max(0.0, bytes - (ec ? 0.0 : double(old)));
                set += bytes;
            }
            largest = std::max(largest, set);
        }
    require_free_space(table_dir, grow + largest);
}

// The manifest this run starts from: the existing one when it can be merged into, else a
// new one; either with this run's tool, generator and layer table. The entries of the sets
// about to be regenerated stay until each set's replacement is in place (commit_item).
// Nothing is written here: the file on disk changes only when a set is committed, so a run
// that fails before its first set leaves even an incompatible manifest as it was. `note`
// receives why an existing manifest was not merged.
Json start_manifest(const fs::path& manifest_path, const LayerTable& table, const GenerateOptions& opt,
                    std::string& note) {
    Json manifest;
    std::optional<Json> existing;
    std::string conflict;
    try {
        existing = read_manifest(manifest_path, "");
        if (existing) conflict = merge_conflict(*existing, table, opt.seed, opt.scales);
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
                   "; this run starts a new manifest, which replaces it (dropping its other entries) once the "
                   "first new set is written";
        manifest = Json::object();
        manifest["format_version"] = kGoldenFormatVersion;
        manifest["created"] = utc_now();
        manifest["updated"] = manifest["created"];
        manifest["files"] = Json::array();
        manifest["cpu"] = Json::object();
    }
    manifest["tool"] = Json{{"name", "convstudy"}, {"version", kToolVersion}, {"git_revision", kGitRevision}};
    manifest["generator"] = Json{{"name", kGeneratorName},
                                 {"description", generator_description()},
                                 {"seed", opt.seed},
                                 {"input_scale", opt.scales.input},
                                 {"weight_scale", opt.scales.weights}};
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
    manifest["files"] = files;
    manifest["cpu"] = cpu;
    return manifest;
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

// Generator data (at the data scales), the double reference output and its per-element bound.
void compute_item(GoldenItem& it, std::uint64_t seed, const DataScales& scales) {
    const Layer& l = *it.layer;
    it.input.resize(std::size_t(l.input_elems(it.N)));
    it.weights.resize(std::size_t(l.weight_elems()));
    it.output.resize(std::size_t(l.output_elems(it.N)));
    it.bound.resize(it.output.size());
    make_input(l, it.N, seed, it.input.data(), scales.input);
    make_weights(l, seed, it.weights.data(), scales.weights);
    conv2d_ref<double>(l, it.N, it.input.data(), it.weights.data(), it.output.data());
    conv2d_bound(l, it.N, it.input.data(), it.weights.data(), it.bound.data());
}

// Writes the set's files into the staging directory, reads each back and checks it against
// the SHA-256 computed while writing, and records their manifest entries.
void write_item_files(GoldenItem& it, const fs::path& staging) {
    const Layer& l = *it.layer;
    std::error_code ec;
    fs::create_directories(staging / batch_dir_name(it.N), ec);
    if (ec) throw Error("generate: cannot create directory " + (staging / batch_dir_name(it.N)).string() + " (" +
                        ec.message() + ")");
    for (auto t : kTensors) {
        const NpyShape shape = golden_shape(l, it.N, t);
        const std::string rel = relative_file(l.name, it.N, t);
        const fs::path file = staging / rel;
        const auto w = write_npy(file, it.tensor(t).data(), shape);
        std::string sha;
        (void)read_npy_f32(file, shape, &sha);
        if (sha != w.sha256)
            throw Error(file.string() + ": the file read back has SHA-256 " + sha + ", but " + w.sha256 +
                        " was written (a failing disk?)");
        it.entries.push_back(Json{{"path", rel}, {"layer", l.name}, {"N", it.N}, {"tensor", golden_tensor_name(t)},
                                  {"shape", shape}, {"dtype", kDtype}, {"bytes", w.bytes}, {"sha256", w.sha256}});
        it.bytes += double(w.bytes);
    }
}

void write_item(GoldenItem& it, const fs::path& staging) {
    try {
        write_item_files(it, staging);
    } catch (const Error& e) {
        throw Error("generate: could not write the new " + it.layer->name + " N=" + std::to_string(it.N) +
                    " set: " + e.what() + "; its previous files and the manifest are unchanged");
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

// Puts a written and verified set in place: its old files (when there are any) move into
// the staging directory, the new ones into n<N>/, and the manifest is saved with the set's
// entries replaced. On any failure the old files move back and the manifest on disk and in
// memory stay as they were; cs::Error says so.
void commit_item(GoldenItem& it, const Json& cpu, const fs::path& root, const LayerTable& table,
                 const DataScales& scales, const fs::path& staging, Json& manifest) {
    const std::string name = it.layer->name;
    const fs::path dest_dir = golden_batch_dir(root, table, it.N, scales);
    struct Moved {
        fs::path dest, backup;
        bool had_old = false, placed = false;
    };
    std::vector<Moved> moved;
    try {
        std::error_code ec;
        fs::create_directories(dest_dir, ec);
        if (ec || !fs::is_directory(dest_dir))
            throw Error("cannot create directory " + dest_dir.string() + " (" +
                        (ec ? ec.message() : std::string("a file of that name is in the way")) + ")");
        for (auto t : kTensors) {
            const std::string rel = relative_file(name, it.N, t);
            Moved m{golden_file_path(root, table, name, it.N, t, scales), staging / ("replaced." + name + "." +
                                                                             golden_tensor_name(t) + ".npy")};
            m.had_old = fs::exists(fs::symlink_status(m.dest, ec));
            moved.push_back(m);
            if (m.had_old) fs::rename(m.dest, m.backup);
            fs::rename(staging / rel, m.dest);
            moved.back().placed = true;
        }
        Json next = manifest;
        const std::string key = batch_key(name, it.N);
        Json files = Json::array();
        for (const auto& f : next["files"])
            if (batch_key(f.value("layer", ""), f.value("N", std::int64_t(0))) != key) files.push_back(f);
        for (const auto& e : it.entries) files.push_back(e);
        next["files"] = std::move(files);
        next["cpu"][key] = cpu;
        save_manifest(golden_manifest_path(root, table, scales), next);
        manifest = std::move(next);
    } catch (const std::exception& e) {
        std::error_code ec;
        for (auto m = moved.rbegin(); m != moved.rend(); ++m) {
            if (m->placed && !m->had_old) fs::remove(m->dest, ec);
            if (m->had_old) fs::rename(m->backup, m->dest, ec);
        }
        throw Error("generate: could not put the new " + name + " N=" + std::to_string(it.N) + " set in place: " +
                    e.what() + "; its previous files and the manifest are unchanged");
    }
    std::error_code ec;
    for (const auto& m : moved)
        if (m.had_old) fs::remove(m.backup, ec);
}

}  // namespace

void generate_golden(const LayerTable& table, const GenerateOptions& opt) {
    check_data_scale(opt.scales.input, "generate: --input-scale");
    check_data_scale(opt.scales.weights, "generate: --weight-scale");
    const std::vector<std::int64_t> batches = checked_batches(opt.batches);
    const std::vector<const Layer*> layers = checked_layers(table, opt, batches);
    check_memory(layers, batches);
    check_disk_space(opt, table, layers, batches);

    const fs::path table_dir = golden_table_dir(opt.root, table, opt.scales);
    const fs::path manifest_path = table_dir / "manifest.json";
    std::vector<fs::path> created;
    const fs::path staging = make_staging(table_dir, created);
    const StagingCleanup cleanup(staging, created);
    InterruptGuard interrupt(staging);

    // Work units for the progress estimate: FLOPs of the double reference and of the bound
    // (both in compute_item), plus about one float32 call per timing (warm-up and repeats
    // are bounded by time).
    const bool do_onednn = opt.time_onednn && onednn_available();
    const double per_flop = 2.0 + (opt.time_cpu ? 1.0 : 0.0) + (do_onednn ? 1.0 : 0.0);
    double total = 0;
    for (auto N : batches)
        for (const Layer* l : layers) total += l->flops(N) * per_flop;
    Progress progress("generate", total, opt.quiet);

    std::string note;
    Json manifest = start_manifest(manifest_path, table, opt, note);
    if (!note.empty()) progress.message(note);

    // The pipeline: while one (layer, N) set is written, read back and hashed on a second
    // thread, the next one is generated and computed. Its CPU timings run only after its
    // files are written, with nothing else running, and then it is committed.
    const std::string host_cpu = cpu_model();
    double done = 0, written_bytes = 0;
    int written_files = 0;
    auto record = [&](GoldenItem& it) {
        const std::string tag = it.layer->name + " N=" + std::to_string(it.N) + ": ";
        const Json cpu = time_item(
            it, opt, do_onednn, host_cpu, [&](const char* what) { progress.update(done, tag + what); },
            [&](double flops) { done += flops; });
        {
            std::lock_guard<std::mutex> lock(interrupt.commit_lock());
            commit_item(it, cpu, opt.root, table, opt.scales, staging, manifest);
        }
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
            compute_item(*item, opt.seed, opt.scales);
            done += 2 * lp->flops(N);

            complete_pending();
            pending = item;
            writing = std::async(std::launch::async, [item, staging] { write_item(*item, staging); });
        }
    }
    complete_pending();
    progress.finish(std::to_string(written_files) + " files (" + sizes_mb(written_bytes) + ") in " +
                    table_dir.string());
}

}  // namespace cs
