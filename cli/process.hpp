// Child processes of convstudy: `profile` runs a row under ncu, and `sweep` re-times a cuDNN
// row whose median strayed from its engine search's in a fresh process of itself.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace cs::cli {

struct ProcResult {
    int status = -1;  // exit code, or 128 + signal
    bool timed_out = false;
};

// Runs argv (argv[0] a path) with stdout and stderr to `out`, LC_ALL=C (numbers without locale
// separators); killed after timeout_s seconds.
ProcResult run_process(const std::vector<std::string>& argv, const std::filesystem::path& out, int timeout_s);

// This program's own path (/proc/self/exe); throws cs::Error naming `why` when it cannot be read.
std::filesystem::path self_path(const std::string& why);

// A scratch directory removed with the object.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

}  // namespace cs::cli
