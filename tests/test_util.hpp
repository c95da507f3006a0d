// Helpers shared by the CPU-side tests: a temporary directory, whole-file reads and
// writes, the message of the cs::Error a call throws, running the convstudy program, and a
// layer of any shape.
#pragma once

#include "catch.hpp"
#include "atomic_file.hpp"
#include "error.hpp"
#include "layer.hpp"

#include <cuda_runtime_api.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>

namespace cs::test {

namespace fs = std::filesystem;

// A layer of any shape, for tests that need one the built-in table does not have.
inline Layer make_layer(const char* name, int C, int H, int W, int M, int R, int S, int stride, int pad) {
    Layer l;
    l.name = name;
    l.C = C, l.H = H, l.W = W, l.M = M, l.R = R, l.S = S, l.stride = stride, l.pad = pad;
    return l;
}

// CHECK that `text` contains `sub`, showing the whole text when it does not.
#define CHECK_HAS(text, sub)                                      \
    do {                                                          \
        INFO("text: " << (text));                                 \
        CHECK(std::string(text).find(sub) != std::string::npos);  \
    } while (0)

// Clears an injected write fault (testing::set_atomic_write_fault) when it goes out of scope.
struct FaultGuard {
    ~FaultGuard() { cs::testing::set_atomic_write_fault(std::nullopt); }
};

// A fresh directory under the system's temporary directory, removed (permissions
// restored first) when it goes out of scope.
struct TempDir {
    fs::path path;
    explicit TempDir(const std::string& prefix = "convstudy-test") {
        std::random_device rd;
        path = fs::temp_directory_path() / (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
        fs::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
};

inline std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

inline void spit(const fs::path& p, const std::string& bytes) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), std::streamsize(bytes.size()));
}

// The message of the cs::Error that f() throws, or a marker when it throws none.
template <class F>
std::string error_message(F&& f) {
    try {
        f();
    } catch (const cs::Error& e) {
        return e.what();
    }
    return "<no cs::Error was thrown>";
}

struct CliResult {
    int code = -1;    // exit code; -1 when killed by a signal (a crash)
    std::string out;  // stdout and stderr together
};

// Runs a shell command line and captures its output (stderr too) and exit code.
inline CliResult run_command(const std::string& command) {
    const std::string cmd = command + " 2>&1";
    CliResult r;
    FILE* p = popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::array<char, 4096> buf{};
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    const int st = pclose(p);
    r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

#ifdef CS_CONVSTUDY_EXE
// Runs `convstudy ARGS` (the built program).
inline CliResult cli(const std::string& args) { return run_command(std::string(CS_CONVSTUDY_EXE) + " " + args); }

// An H100/H200-like device for supports() and the tuner's row choice: compute capability 9.0,
// 132 SMs, 1024 threads and 227 KiB of shared memory (opt-in) per block, the usual grid
// limits; what a test needs to differ it sets after.
inline cudaDeviceProp hopper_prop() {
    cudaDeviceProp p{};
    p.major = 9, p.minor = 0;
    p.multiProcessorCount = 132;
    p.maxThreadsPerBlock = 1024;
    p.maxGridSize[0] = 2147483647, p.maxGridSize[1] = 65535, p.maxGridSize[2] = 65535;
    p.sharedMemPerBlock = 48 * 1024;
    p.sharedMemPerBlockOptin = 227 * 1024;
    return p;
}
// hopper_prop with the H200's memory bus: the device of the committed H200 measurements that
// the cost model's tests price against.
inline cudaDeviceProp h200_prop() {
    cudaDeviceProp p = hopper_prop();
    p.memoryBusWidth = 6144;
    return p;
}
#endif

}  // namespace cs::test
