// Atomic file writes: complete files or the old file, never a half-written one, and no
// temporaries left behind.
#include "catch.hpp"
#include "test_util.hpp"

#include "atomic_file.hpp"
#include "error.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace fs = std::filesystem;

using cs::test::TempDir;
using cs::test::FaultGuard;
using cs::test::slurp;
using cs::test::error_message;

namespace {

std::vector<std::string> dir_entries(const fs::path& d) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(d)) out.push_back(e.path().filename().string());
    return out;
}

}  // namespace

TEST_CASE("atomic write creates and replaces files", "[atomic]") {
    TempDir dir;
    const fs::path target = dir.path / "out.txt";
    cs::write_file_atomic(target, "first\n");
    CHECK(slurp(target) == "first\n");
    // Bigger than the internal buffer, in pieces of several sizes.
    std::string big;
    for (int i = 0; i < 300000; ++i) big += char('a' + i % 26);
    cs::write_file_atomic(target, [&](std::ostream& os) {
        os.write(big.data(), 10);
        os.write(big.data() + 10, std::streamsize(big.size() - 10));
        os << "tail";
    });
    CHECK(slurp(target) == big + "tail");
    CHECK(dir_entries(dir.path) == std::vector<std::string>{"out.txt"});
}

TEST_CASE("a writer that throws leaves the old file intact and no temporary", "[atomic]") {
    TempDir dir;
    const fs::path target = dir.path / "data.bin";
    const std::string old(5000, 'x');
    cs::write_file_atomic(target, old);
    struct Boom : std::runtime_error {
        using std::runtime_error::runtime_error;
    };
    CHECK_THROWS_AS(cs::write_file_atomic(target,
                                          [](std::ostream& os) {
                                              const std::string part(3 << 20, 'y');  // reaches the file
                                              os.write(part.data(), std::streamsize(part.size()));
                                              throw Boom("interrupted mid-write");
                                          }),
                    Boom);
    CHECK(slurp(target) == old);
    CHECK(dir_entries(dir.path) == std::vector<std::string>{"data.bin"});
}

TEST_CASE("an I/O failure mid-write (injected) leaves the old file intact", "[atomic]") {
    TempDir dir;
    FaultGuard guard;
    const fs::path target = dir.path / "data.bin";
    const std::string old = "old contents";
    cs::write_file_atomic(target, old);
    cs::testing::set_atomic_write_fault(1000);
    const std::string msg = error_message([&] { cs::write_file_atomic(target, std::string(4 << 20, 'z')); });
    CHECK_HAS(msg, target.string());
    CHECK_HAS(msg, "write failed");
    CHECK(slurp(target) == old);
    CHECK(dir_entries(dir.path) == std::vector<std::string>{"data.bin"});
    cs::testing::set_atomic_write_fault(std::nullopt);
    cs::write_file_atomic(target, "new");
    CHECK(slurp(target) == "new");
}

TEST_CASE("an AtomicFile dropped without commit removes its temporary", "[atomic]") {
    TempDir dir;
    const fs::path target = dir.path / "f.csv";
    cs::write_file_atomic(target, "a,b\n");
    {
        cs::AtomicFile f(target);
        f.stream() << "c,d\n";
        f.stream().flush();
        CHECK(fs::exists(f.temp_path()));
        CHECK(f.temp_path().parent_path() == target.parent_path());
        CHECK(f.temp_path().filename().string().rfind("f.csv.tmp." + std::to_string(::getpid()) + ".", 0) == 0);
    }
    CHECK(slurp(target) == "a,b\n");
    CHECK(dir_entries(dir.path) == std::vector<std::string>{"f.csv"});
    {
        cs::AtomicFile f(target);
        f.stream() << "e,f\n";
        f.commit();
        CHECK(f.bytes_written() == 4);
    }
    CHECK(slurp(target) == "e,f\n");
}

TEST_CASE("atomic write refuses a missing or unwritable directory with the path", "[atomic]") {
    TempDir dir;
    const fs::path missing = dir.path / "no-such-dir" / "x.npy";
    std::string msg = error_message([&] { cs::write_file_atomic(missing, "x"); });
    CHECK_HAS(msg, missing.string());
    CHECK_HAS(msg, "does not exist");

    msg = error_message([&] { cs::write_file_atomic(dir.path, "x"); });
    CHECK_HAS(msg, "is a directory");

    // root ignores permission bits: then use /sys, which refuses new files.
    fs::path unwritable;
    if (::geteuid() != 0) {
        unwritable = dir.path / "ro";
        fs::create_directories(unwritable);
        fs::permissions(unwritable, fs::perms::owner_read | fs::perms::owner_exec);
    } else {
        unwritable = "/sys";  // sysfs refuses new files even to root (EACCES)
    }
    const fs::path target = unwritable / "convstudy-test.csv";
    msg = error_message([&] { cs::write_file_atomic(target, "x"); });
    CHECK_HAS(msg, target.string());
    CHECK_HAS(msg, "is not writable");
    CHECK_FALSE(fs::exists(target));
}
