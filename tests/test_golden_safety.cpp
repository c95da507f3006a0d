// No lost data in `generate`: a failed or interrupted regeneration leaves the previous sets
// listed and usable, removes what it left behind and creates no empty directories.
#include "catch.hpp"
#include "test_util.hpp"
#include "golden_test_util.hpp"

#include "golden.hpp"
#include "layer.hpp"

#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

using cs::test::cli;
using cs::test::error_message;
using cs::test::FaultGuard;
using cs::test::slurp;
using cs::test::spit;
using cs::test::TempDir;

namespace {

const char* const kTable = cs::test::kTwoLayerTable;
cs::GenerateOptions opts(const fs::path& root, std::vector<std::int64_t> batches) {
    return cs::test::quiet_generate_options(root, std::move(batches));
}

nlohmann::json manifest_of(const fs::path& root) { return nlohmann::json::parse(slurp(root / "tiny" / "manifest.json")); }

// Paths under root (relative) that are staging directories, temporaries or empty directories.
std::vector<std::string> leftovers(const fs::path& root) {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
        const std::string name = e.path().filename().string();
        if (name.find(".partial-") != std::string::npos || name.find(".tmp.") != std::string::npos ||
            (e.is_directory() && fs::is_empty(e.path())))
            out.push_back(fs::relative(e.path(), root).string());
    }
    return out;
}

void check_usable(const fs::path& root, const cs::LayerTable& t, std::int64_t N) {
    for (const auto& l : t.layers) {
        INFO(l.name << " N=" << N);
        CHECK_NOTHROW(cs::load_golden(root, t, l, N));
    }
}

}  // namespace

TEST_CASE("a failed regeneration keeps the previous set listed and usable", "[golden][safety]") {
    TempDir d;
    const auto table = cs::parse_layer_table(kTable, "tiny.json");
    cs::generate_golden(table, opts(d.path, {1}));
    const std::string before = slurp(d.path / "tiny" / "manifest.json");

    SECTION("a write that fails while the N=1 set is rewritten (a full disk)") {
        FaultGuard guard;
        cs::testing::set_atomic_write_fault(100);
        CHECK_HAS(error_message([&] { cs::generate_golden(table, opts(d.path, {1})); }), "write failed");
        cs::testing::set_atomic_write_fault(std::nullopt);
        CHECK(slurp(d.path / "tiny" / "manifest.json") == before);
        check_usable(d.path, table, 1);
    }
    SECTION("a batch directory that cannot be created (a file is in its place; works as root too)") {
        spit(d.path / "tiny" / "n2", "not a directory");
        const std::string msg = error_message([&] { cs::generate_golden(table, opts(d.path, {2, 1})); });
        CHECK_HAS(msg, (d.path / "tiny" / "n2").string());
        CHECK_HAS(msg, "previous files and the manifest are unchanged");
        fs::remove(d.path / "tiny" / "n2");
        const auto m = manifest_of(d.path);
        CHECK(m["files"].size() == 8);  // N=1 (regenerated first) is listed, N=2 is not
        for (const auto& f : m["files"]) CHECK(f["N"] == 1);
        check_usable(d.path, table, 1);
    }
    SECTION("a batch directory that is not writable (skipped as root, where permissions do not apply)") {
        if (::geteuid() == 0) {
            WARN("skipped: running as root, chmod does not block writes; the section above covers the refusal");
        } else {
            fs::permissions(d.path / "tiny" / "n1", fs::perms::owner_write, fs::perm_options::remove);
            const std::string msg = error_message([&] { cs::generate_golden(table, opts(d.path, {2, 1})); });
            fs::permissions(d.path / "tiny" / "n1", fs::perms::owner_write, fs::perm_options::add);
            CHECK_HAS(msg, "could not put the new a N=1 set in place");
            check_usable(d.path, table, 1);
            CHECK(manifest_of(d.path)["files"].size() == 8);  // N=1's entries kept; N=2 never started
        }
    }
    CHECK(leftovers(d.path).empty());
}

TEST_CASE("generate into an impossible path creates nothing", "[golden][safety][cli]") {
    TempDir d;
    spit(d.path / "file", "x");
    const auto r = cli("generate --quiet --batch 1 --only conv1 --no-cpu-timing --no-onednn --out " +
                       (d.path / "file" / "golden").string());
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK_HAS(r.out, (d.path / "file" / "golden").string());
    CHECK(slurp(d.path / "file") == "x");

    // A failure before any set is written leaves no directory behind either.
    const auto table = cs::parse_layer_table(kTable, "tiny.json");
    FaultGuard guard;
    cs::testing::set_atomic_write_fault(100);
    CHECK_HAS(error_message([&] { cs::generate_golden(table, opts(d.path / "fresh", {1})); }), "write failed");
    CHECK_FALSE(fs::exists(d.path / "fresh"));
}

TEST_CASE("an incompatible manifest is replaced only when the first new set is in place", "[golden][safety]") {
    TempDir d;
    const auto table = cs::parse_layer_table(kTable, "tiny.json");
    cs::generate_golden(table, opts(d.path, {1}));
    const std::string before = slurp(d.path / "tiny" / "manifest.json");
    FaultGuard guard;
    cs::testing::set_atomic_write_fault(100);
    auto seven = opts(d.path, {1});
    seven.seed = 7;
    CHECK_HAS(error_message([&] { cs::generate_golden(table, seven); }), "write failed");
    cs::testing::set_atomic_write_fault(std::nullopt);
    CHECK(slurp(d.path / "tiny" / "manifest.json") == before);
    check_usable(d.path, table, 1);
    CHECK(leftovers(d.path).empty());
}

TEST_CASE("SIGTERM during generate keeps the previous set listed and removes the partial files",
          "[golden][safety][cli]") {
    TempDir d;
    // "big": 64 x 512 x 512 outputs, cheap to compute (1x1) but 67 MB per output file, so
    // the run spends seconds writing; "small" is the set that must survive.
    const fs::path table = d.path / "t.json";
    spit(table, R"({"name": "t", "layers": [
        {"name": "small", "C": 2, "H": 6, "W": 6, "M": 2, "R": 3, "S": 3, "stride": 1, "pad": 1},
        {"name": "big", "C": 1, "H": 512, "W": 512, "M": 64, "R": 1, "S": 1}]})");
    const fs::path root = d.path / "golden";
    const std::string common = " --quiet --no-cpu-timing --no-onednn --layers " + table.string() + " --out " +
                               root.string();
    REQUIRE(cli("generate --batch 1 --only small" + common).code == 0);
    const fs::path manifest = root / "t" / "manifest.json";

    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::execl(CS_CONVSTUDY_EXE, CS_CONVSTUDY_EXE, "generate", "--batch", "1,2,3", "--quiet", "--no-cpu-timing",
                "--no-onednn", "--layers", table.c_str(), "--out", root.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    // Wait until a file of "big" is being written into the staging directory, then stop it.
    const fs::path staging = root / "t" / (".partial-" + std::to_string(pid));
    bool writing = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!writing && std::chrono::steady_clock::now() < deadline) {
        std::error_code ec;
        for (const auto& e : fs::recursive_directory_iterator(staging, ec))
            if (e.path().filename().string().rfind("big.", 0) == 0) writing = true;
        if (!writing) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    INFO("the generate process never wrote a file of 'big' into " << staging);
    REQUIRE(writing);
    ::kill(pid, SIGTERM);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status));
    if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == SIGTERM);

    CHECK_FALSE(fs::exists(staging));
    CHECK(leftovers(root).empty());
    // The old set is listed and verifies; whatever was committed before the signal verifies too.
    const auto m = nlohmann::json::parse(slurp(manifest));
    bool small1 = false;
    for (const auto& f : m["files"]) small1 = small1 || (f["layer"] == "small" && f["N"] == 1);
    CHECK(small1);
    const auto v = cli("verify --table " + table.string() + " --golden " + root.string());
    INFO(v.out);
    CHECK(v.code == 0);
    CHECK_HAS(v.out, "small  N=1");
    CHECK_FALSE(v.out.find("note:") != std::string::npos);  // no unlisted files, no staging directory
}
