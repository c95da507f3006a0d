#include "process.hpp"

#include "error.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace cs::cli {

namespace fs = std::filesystem;

ProcResult run_process(const std::vector<std::string>& argv, const fs::path& out, int timeout_s) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) throw Error("cannot create " + out.string() + " for " + argv.front() + "'s output");
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fd);
        throw Error("cannot start " + argv.front() + ": fork failed");
    }
    if (pid == 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::close(fd);
        ::setenv("LC_ALL", "C", 1);
        ::execv(args[0], args.data());
        std::fprintf(stderr, "exec %s failed\n", args[0]);
        ::_exit(127);
    }
    ::close(fd);
    ProcResult r;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    int st = 0;
    for (;;) {
        const pid_t w = ::waitpid(pid, &st, WNOHANG);
        if (w == pid) break;
        if (w < 0) throw Error("waiting for " + argv.front() + " failed");
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &st, 0);
            r.timed_out = true;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    return r;
}

fs::path self_path(const std::string& why) {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw Error("cannot find this program's path (/proc/self/exe) " + why);
    return self;
}

TempDir::TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() / ("convstudy-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(path_);
}

TempDir::~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
}

}  // namespace cs::cli
