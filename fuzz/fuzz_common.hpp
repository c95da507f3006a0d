// Shared by the libFuzzer targets: run a reader, accept success or a cs::Error, and treat
// anything else (another exception type, a broken invariant) as a bug that aborts, so
// libFuzzer saves the input as a crash.
#pragma once

#include "error.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

namespace fuzz {

[[noreturn]] inline void bug(const std::string& what) {
    std::fprintf(stderr, "fuzz target: BUG: %s\n", what.c_str());
    std::abort();
}

#define FUZZ_ASSERT(cond)                                                     \
    do {                                                                      \
        if (!(cond)) ::fuzz::bug(std::string("invariant failed: ") + #cond); \
    } while (0)

// Runs f(); true when it returned, false when it threw cs::Error (a clean rejection).
// Every other exception is a bug: a rejection must be a cs::Error with a message.
template <class F>
bool accepts(F&& f) {
    try {
        f();
        return true;
    } catch (const cs::Error& e) {
        if (std::string(e.what()).empty()) bug("a cs::Error with an empty message");
        return false;
    } catch (const std::exception& e) {
        bug(std::string("an exception other than cs::Error escaped: ") + e.what());
    } catch (...) {
        bug("a non-std exception escaped");
    }
}

// A private scratch directory, in /dev/shm when there is one (fast, and fsync is free).
inline std::filesystem::path scratch_dir(const char* name) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path base = fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
    fs::path d = base / (std::string("convstudy-") + name + "-" + std::to_string(::getpid()));
    fs::remove_all(d, ec);
    fs::create_directories(d);
    return d;
}

inline void write_bytes(const std::filesystem::path& p, const void* data, std::size_t size) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(static_cast<const char*>(data), std::streamsize(size));
    if (!f) bug("cannot write the fuzz input to " + p.string());
}

// Removes the scratch directory when the process exits normally (libFuzzer calls exit()).
struct ScratchCleanup {
    std::filesystem::path dir;
    ~ScratchCleanup() {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
};

}  // namespace fuzz
