// Writing a file atomically: the bytes go to "<path>.tmp.<pid>.<random>" in the same
// directory, are flushed and fsync'ed, and the temporary is renamed over the target. A
// reader sees either the old file or the complete new one, never a half-written file that
// looks whole. On any failure (an exception from the writer, a write or fsync error, a
// full disk) the temporary is removed and the old file is left untouched.
//
// Used for the golden .npy files, manifest.json and the result CSV files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string_view>

namespace cs {

// One atomic write in progress. Write through stream(), then commit(); if the object is
// destroyed without commit() (an exception, an early return) the temporary is removed.
class AtomicFile {
public:
    // Creates the temporary file. Throws cs::Error naming the path when its directory does
    // not exist, is not a directory or is not writable, or the target is a directory.
    explicit AtomicFile(std::filesystem::path target);
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    // A binary stream with a large buffer; big writes go straight to the file.
    std::ostream& stream();
    // Flush, fsync, close, rename over the target, fsync the directory. Throws cs::Error
    // naming the path on any failure, after removing the temporary.
    void commit();
    // Removes the temporary (no-op after commit). Never throws.
    void discard() noexcept;

    const std::filesystem::path& target() const;
    const std::filesystem::path& temp_path() const;
    std::uint64_t bytes_written() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Calls writer(stream) and commits; any exception from the writer (or an I/O error) removes
// the temporary, leaves the old file intact and propagates (I/O errors as cs::Error).
void write_file_atomic(const std::filesystem::path& path, const std::function<void(std::ostream&)>& writer);
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

namespace testing {
// Test hook: while set, every atomic write fails with an I/O error (ENOSPC, as if the disk
// were full) once `fail_after_bytes` bytes have reached one file. nullopt turns it off.
void set_atomic_write_fault(std::optional<std::uint64_t> fail_after_bytes);
}  // namespace testing

}  // namespace cs
