// The golden manifest (manifest.json) as JSON: the file names and keys it uses, reading it,
// checking that a new run may merge into it, and writing it readably and atomically. Shared
// by generation (golden_generate.cpp) and loading (golden_load.cpp); not a public API.
#pragma once

#include "golden.hpp"

#include <nlohmann/json.hpp>

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

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

// The header checks every manifest reader makes first (golden_load.cpp, golden_chain.cpp), as
// error texts ("" when good): an integer format_version equal to kGoldenFormatVersion; the
// generator's name, and its seed against `expected_seed` when given (`files` names them in
// the message: "golden files", "chain golden files"). manifest_generator_error sets `seed`
// to the manifest's before it checks it, so a caller can name it in its regenerate hint.
std::string manifest_format_error(const Json& mj);
std::string manifest_generator_error(const Json& mj, std::optional<std::uint64_t> expected_seed,
                                     const std::string& files, std::uint64_t& seed);

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

// One file of a set checked against its entry in the manifest's "files" (`rel`: its path
// relative to the manifest): first `check_entry`, the caller's check that the entry is this
// file's (its path, its tensor), which throws the caller's error; then the recorded dtype
// and shape against "<f4" and `shape`; then the file's header and shape, size and SHA-256
// against the record. Returns the data when `read_data`, else nothing (the file is hashed
// as it streams by). Each failure is a cs::Error "<file or manifest>: <what><suffix()>".
std::vector<float> verified_file(const Json& entry, const std::string& rel, const std::filesystem::path& file,
                                 const NpyShape& shape, bool read_data, const std::filesystem::path& manifest_path,
                                 const std::function<std::string()>& suffix,
                                 const std::function<void(const Json&)>& check_entry);

// Why an existing manifest cannot be merged into; empty when it can.
std::string merge_conflict(const Json& m, const LayerTable& table, std::uint64_t seed, const DataScales& scales);

// Writes the manifest atomically with "updated" set to now, its files sorted by N, then the
// table's layer order, then tensor; readable (one line per file entry).
void save_manifest(const std::filesystem::path& manifest_path, Json& manifest);


// ---- staging and interruption: shared by the per-layer and the chain generation ----------

// The batch sizes of a run, sorted and unique; cs::Error for none or one below 1.
std::vector<std::int64_t> checked_batches(const std::vector<std::int64_t>& batches);
// The machine's physical memory in bytes; 0 when the system does not say.
double physical_memory_bytes();
// cs::Error ("generate: <dir> needs about ... of free space, ...") when the filesystem of
// `dir` (measured on its nearest existing ancestor) has less than `need` bytes available; a
// filesystem that reports no capacity (/proc) is left to fail on writing.
void require_free_space(const std::filesystem::path& dir, double need);
// "<dir>/.partial-<pid>": where a run writes a set before it is put in place.
std::filesystem::path staging_dir(const std::filesystem::path& table_dir);
// "12.3 MB"
std::string sizes_mb(double bytes);
// Removes temporaries ("<name>.tmp.<pid>.<hex>") and staging directories (".partial-<pid>")
// whose process is gone: what a run killed with SIGKILL (or a power cut) left behind.
void remove_stale_temps(const std::filesystem::path& dir);
// Creates the staging directory (and the root and table directories when missing), after
// removing what killed runs left in table_dir and its subdirectories. `created` receives the
// directories this made, deepest first, so a run that ends without a set can remove them.
std::filesystem::path make_staging(const std::filesystem::path& table_dir, std::vector<std::filesystem::path>& created);

// While alive, SIGINT, SIGTERM and SIGHUP are blocked in this thread and in the threads it
// starts (the writer, OpenMP's workers when first started here) and a watcher thread waits
// for them. On one, the watcher takes the commit lock (so a set being put in place finishes
// first), removes the staging directory, and ends the process with that signal's default
// action. The manifest therefore lists exactly the sets committed before the signal, and
// no partial files remain. (SIGKILL cannot be caught: its staging directory is removed by
// the next generate, and `convstudy verify` reports it.)
class InterruptGuard {
public:
    explicit InterruptGuard(std::filesystem::path staging) : staging_(std::move(staging)) {
        sigemptyset(&set_);
        for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set_, s);
        pthread_sigmask(SIG_BLOCK, &set_, &old_);
        watcher_ = std::thread([this] { watch(); });
    }
    ~InterruptGuard() {
        stop_ = true;
        // Wake the watcher now, with a signal queued to it alone and marked as ours.
        sigval wake{};
        wake.sival_int = kWake;
        (void)pthread_sigqueue(watcher_.native_handle(), SIGTERM, wake);
        watcher_.join();
        pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;

    std::mutex& commit_lock() { return commit_; }

private:
    static constexpr int kWake = 0x636f6e76;

    void watch();

    std::filesystem::path staging_;
    sigset_t set_{}, old_{};
    std::mutex commit_;
    std::atomic<bool> stop_{false};
    std::thread watcher_;
};

// Removes the staging directory, and the directories this run created when it committed
// nothing (so a failed first run leaves no empty golden/<table>/).
class StagingCleanup {
public:
    StagingCleanup(std::filesystem::path staging, std::vector<std::filesystem::path> created)
        : staging_(std::move(staging)), created_(std::move(created)) {}
    ~StagingCleanup() {
        std::error_code ec;
        std::filesystem::remove_all(staging_, ec);
        for (const auto& d : created_) std::filesystem::remove(d, ec);  // only when empty
    }
    StagingCleanup(const StagingCleanup&) = delete;
    StagingCleanup& operator=(const StagingCleanup&) = delete;

private:
    std::filesystem::path staging_;
    std::vector<std::filesystem::path> created_;
};

}  // namespace cs::golden_detail
