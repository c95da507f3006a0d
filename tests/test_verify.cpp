// `convstudy verify` (golden files checked without a GPU), `run`/`sweep` refusing bad paths
// and golden files before they ask for a device, and the help the CLI gives: defaults in
// --help, "did you mean", list's table and JSON, --version.
#include "catch.hpp"
#include "test_util.hpp"
#include "golden_test_util.hpp"

#include "checksum.hpp"
#include "golden.hpp"
#include "layer.hpp"

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

using cs::test::cli;
using cs::test::slurp;
using cs::test::spit;
using cs::test::TempDir;

namespace {

const char* const kTable = cs::test::kTwoLayerTable;

// A generated tiny golden set under d/golden with its table file d/tiny.json.
struct Golden {
    TempDir d;
    fs::path table = d.path / "tiny.json", root = d.path / "golden";
    std::string args;
    Golden() {
        spit(table, kTable);
        cs::generate_golden(cs::load_layer_table(table), cs::test::quiet_generate_options(root));
        args = " --table '" + table.string() + "' --golden '" + root.string() + "'";
    }
    fs::path file(const std::string& rel) const { return root / "tiny" / rel; }
};

// Rewrites one float of a golden file and records the file's new SHA-256 and size in the
// manifest: a consistent but wrong set that only recomputation can catch.
void plant_wrong_value(const Golden& g, const std::string& rel, std::size_t element, float value) {
    const fs::path f = g.file(rel);
    std::string bytes = slurp(f);
    const std::size_t data = bytes.size() - 4 * std::size_t(cs::read_npy_header(f).count());
    std::memcpy(&bytes[data + 4 * element], &value, 4);
    spit(f, bytes);
    const fs::path mp = g.file("manifest.json");
    auto m = nlohmann::json::parse(slurp(mp));
    for (auto& e : m["files"])
        if (e["path"] == rel) e["sha256"] = cs::sha256_file(f);
    spit(mp, m.dump(1));
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

}  // namespace

TEST_CASE("verify passes an intact golden set, with and without recomputation", "[verify][cli]") {
    Golden g;
    auto r = cli("verify" + g.args);
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK_HAS(r.out, "4 of 4 golden sets verified");
    CHECK_HAS(r.out, "a      N=1     ok");
    CHECK_HAS(r.out, "b      N=2     ok");
    r = cli("verify --recompute 64" + g.args);
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK_HAS(r.out, "outputs recomputed");
}

TEST_CASE("verify names the damaged file and exits 1", "[verify][cli]") {
    Golden g;
    SECTION("a flipped byte") {
        std::string bytes = slurp(g.file("n2/b.output.npy"));
        bytes[bytes.size() - 2] ^= 0x10;
        spit(g.file("n2/b.output.npy"), bytes);
        const auto r = cli("verify" + g.args);
        INFO(r.out);
        CHECK(r.code == 1);
        CHECK_HAS(r.out, "FAIL  " + g.file("n2/b.output.npy").string());
        CHECK_HAS(r.out, "SHA-256 mismatch");
        CHECK_HAS(r.out, "3 of 4 golden sets verified");
    }
    SECTION("a truncated file") {
        const std::string bytes = slurp(g.file("n1/a.input.npy"));
        spit(g.file("n1/a.input.npy"), bytes.substr(0, bytes.size() - 8));
        const auto r = cli("verify" + g.args);
        INFO(r.out);
        CHECK(r.code == 1);
        CHECK_HAS(r.out, g.file("n1/a.input.npy").string());
    }
    SECTION("a missing file") {
        fs::remove(g.file("n1/b.bound.npy"));
        const auto r = cli("verify" + g.args);
        INFO(r.out);
        CHECK(r.code == 1);
        CHECK_HAS(r.out, g.file("n1/b.bound.npy").string());
    }
    SECTION("a wrong output value whose manifest entry was updated: only --recompute sees it") {
        plant_wrong_value(g, "n1/a.output.npy", 5, 1234.5f);
        CHECK(cli("verify" + g.args).code == 0);
        const auto r = cli("verify --recompute 100000" + g.args);  // every element of the tiny set
        INFO(r.out);
        CHECK(r.code == 1);
        CHECK_HAS(r.out, g.file("n1/a.output.npy").string() + ": element 5 differs from its recomputation");
    }
    SECTION("an input that is not the generator's") {
        plant_wrong_value(g, "n2/b.input.npy", 0, 0.25f);
        const auto r = cli("verify --recompute 16" + g.args);
        INFO(r.out);
        CHECK(r.code == 1);
        CHECK_HAS(r.out, g.file("n2/b.input.npy").string() + ": element 0 is not what generator");
    }
}

TEST_CASE("verify: no manifest or bad options exit 2, leftovers are noted", "[verify][cli]") {
    Golden g;
    auto r = cli("verify --golden '" + (g.d.path / "none").string() + "'");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "no golden manifest");
    CHECK_HAS(r.out, "convstudy generate");
    r = cli("verify --recompute -3" + g.args);
    CHECK(r.code == 2);

    fs::create_directories(g.file(".partial-999999999"));
    spit(g.file("n1/stray.output.npy"), "x");
    r = cli("verify" + g.args);
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK_HAS(r.out, "note: " + g.file(".partial-999999999").string() + ": left by an interrupted generate");
    CHECK_HAS(r.out, "note: " + g.file("n1/stray.output.npy").string() + ": not listed in the manifest");
}

TEST_CASE("run and sweep check paths and golden files before they ask for a device", "[verify][cli]") {
    Golden g;
    const std::string run = "run --variant baseline --layer a";
    // A batch without golden files, a golden directory that does not exist: exit 2, not 4.
    auto r = cli(run + " --batch 7" + g.args);
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "no golden files for a at N=7 (generated for N=1, 2)");
    r = cli("run --variant baseline --layer conv3 --batch 1 --golden /nonexistent");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "golden directory /nonexistent does not exist");
    r = cli("run --variant baseline --layer conv3 --batch 7 --golden /nonexistent");
    CHECK(r.code == 2);

    // A damaged file of a set the sweep would reach last: refused before the device.
    std::string bytes = slurp(g.file("n2/b.weights.npy"));
    bytes.back() ^= 1;
    spit(g.file("n2/b.weights.npy"), bytes);
    const fs::path csv = g.d.path / "r.csv";
    r = cli("sweep --quiet --variants baseline --batch 1,2 --csv '" + csv.string() + "'" + g.args);
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK_HAS(r.out, g.file("n2/b.weights.npy").string() + ": SHA-256 mismatch");
    CHECK_FALSE(fs::exists(csv));

    // With everything in order the device is asked for: without one, exit 4 and the
    // commands that work without a GPU; with one, the run passes.
    r = cli(run + " --batch 1 --repeats 0" + g.args);
    INFO(r.out);
    if (r.code == 4) {
        CHECK_HAS(r.out, "no CUDA device");
        CHECK_HAS(r.out, "verify");
        CHECK_HAS(r.out, "compare");
    } else {
        CHECK(r.code == 0);
    }
}

TEST_CASE("help shows the defaults, --version names the program", "[cli][help]") {
    const auto v = cli("--version");
    CHECK(v.code == 0);
    CHECK(v.out.rfind("convstudy ", 0) == 0);

    const auto run = cli("run --help");
    INFO(run.out);
    CHECK(run.code == 0);
    for (const char* want : {"--warmup INT:INT in [0 - 1000]=3", "=20", "--golden TEXT=golden", "--samples",
                             "=4096", "--seed"})
        CHECK_HAS(run.out, want);
    const auto sweep = cli("sweep --help");
    INFO(sweep.out);
    CHECK_HAS(sweep.out, "[1,32,128]");
    const auto gen = cli("generate --help");
    INFO(gen.out);
    CHECK_HAS(gen.out, "--out TEXT=golden");
    CHECK_HAS(gen.out, "[1,32,128]");
    const auto top = cli("--help");
    CHECK_HAS(top.out, "verify");
    CHECK_HAS(top.out, "Exit codes");
}

TEST_CASE("unknown names get a short did-you-mean", "[cli][help]") {
    auto r = cli("run --variant baselin --layer conv1 --batch 1");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "did you mean 'baseline'");
    for (const auto& line : lines_of(r.out)) CHECK(line.size() < 300);
    r = cli("run --variant baseline --layer conv7 --batch 1");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "did you mean 'conv1'");
    r = cli("sweep --variants simt-gem --csv /tmp/x.csv");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "did you mean 'simt-gemm'");
    r = cli("run --variant zzzzzzzzzzzz --layer conv1 --batch 1");
    CHECK(r.code == 2);
    CHECK_FALSE(r.out.find("did you mean") != std::string::npos);
    CHECK_HAS(r.out, "`convstudy list` shows all");
}

TEST_CASE("list's table fits its names, list --json has numeric shapes", "[cli][help]") {
    const auto j = cli("list --json");
    REQUIRE(j.code == 0);
    const auto doc = nlohmann::json::parse(j.out);
    const auto& conv1 = doc["layers"][0];
    CHECK(conv1["name"] == "conv1");
    CHECK(conv1["C"] == 3);
    CHECK(conv1["M"] == 96);
    CHECK(conv1["R"] == 11);
    CHECK(conv1["stride"] == 4);
    CHECK(conv1["E"] == 55);
    CHECK(conv1["gflop_per_image"].is_number());

    std::size_t longest = 0;
    for (const auto& v : doc["variants"]) longest = std::max(longest, v["name"].get<std::string>().size());
    const auto r = cli("list");
    REQUIRE(r.code == 0);
    // Every row's name is followed by padding up to the longest name, then one space.
    std::size_t rows = 0;
    for (const auto& line : lines_of(r.out))
        for (const auto& v : doc["variants"]) {
            const std::string name = v["name"].get<std::string>();
            if (line.rfind("  " + name + " ", 0) != 0) continue;
            ++rows;
            INFO(line);
            CHECK(line.size() > 2 + longest + 1);
            CHECK(line.find_first_not_of(' ', 2 + name.size()) >= 2 + longest + 1);
        }
    CHECK(rows >= doc["variants"].size());
}

TEST_CASE("every test case name is one ctest test", "[cli][ctest]") {
    // catch_discover_tests makes one ctest test per name: a ';' (CMake's list separator) or
    // a bracket (CMake groups list elements inside [ ]) would merge or split names.
    const auto r = cs::test::run_command(fs::read_symlink("/proc/self/exe").string() + " --list-test-names-only");
    REQUIRE(r.code >= 0);
    std::size_t names = 0;
    for (const auto& line : lines_of(r.out)) {
        if (line.empty()) continue;
        ++names;
        INFO(line);
        CHECK(line.find_first_of(";[]") == std::string::npos);
    }
    CHECK(names > 50);
}
