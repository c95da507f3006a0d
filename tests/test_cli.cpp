// The command-line program end to end: help, listing, and every kind of bad input gives a
// clear message and the documented non-zero exit code (2 bad input, 4 no CUDA device).
#include "catch.hpp"
#include "test_util.hpp"

#include "device.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

using cs::test::CliResult;
using cs::test::cli;

namespace {

bool has(const CliResult& r, const std::string& s) { return r.out.find(s) != std::string::npos; }

std::filesystem::path tmpdir(const std::string& name) {
    auto d = std::filesystem::temp_directory_path() / ("convstudy_test_cli_" + name);
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
}

}  // namespace

TEST_CASE("help for the program and each command", "[cli]") {
    for (const char* c : {"", "list", "generate", "run", "sweep"}) {
        const auto r = cli(std::string(c) + " --help");
        INFO(c << ": " << r.out);
        CHECK(r.code == 0);
        const bool usage = has(r, "Usage") || has(r, "usage") || has(r, "Options") || has(r, "OPTIONS");
        CHECK(usage);
    }
    const auto v = cli("--version");
    CHECK(v.code == 0);
}

TEST_CASE("list shows the registry, memory modes and layers", "[cli]") {
    const auto r = cli("list");
    REQUIRE(r.code == 0);
    CHECK(has(r, "baseline"));
    CHECK(has(r, "Mcpy"));
    CHECK(has(r, "managed-prefetch"));
    CHECK(has(r, "conv5"));
    const auto j = cli("list --json");
    REQUIRE(j.code == 0);
    const auto doc = nlohmann::json::parse(j.out);
    CHECK(doc["variants"].size() >= 1);
    CHECK(doc["layers"].size() == 5);
}

TEST_CASE("bad input: clear message, exit code 2", "[cli]") {
    auto r = cli("");
    CHECK(r.code == 2);

    r = cli("frobnicate");
    CHECK(r.code == 2);

    r = cli("run --variant nope --layer conv1 --batch 1");
    CHECK(r.code == 2);
    CHECK(has(r, "unknown variant 'nope'"));
    CHECK(has(r, "`convstudy list` shows all"));
    CHECK(r.out.size() < 400);  // not every name on one line

    r = cli("run --variant baseline --layer conv9 --batch 1");
    CHECK(r.code == 2);
    CHECK(has(r, "unknown layer 'conv9'"));
    CHECK(has(r, "conv1, conv2, conv3, conv4, conv5"));

    r = cli("run --variant baseline --layer conv1 --batch 1 --memory bogus");
    CHECK(r.code == 2);
    CHECK(has(r, "unknown memory mode 'bogus'"));
    CHECK(has(r, "managed-prefetch"));

    for (const char* b : {"0", "-5", "99999999999", "abc"}) {
        r = cli(std::string("run --variant baseline --layer conv1 --batch ") + b);
        INFO(b << ": " << r.out);
        CHECK(r.code == 2);
    }
    r = cli("generate --batch 0 --out /tmp/convstudy_never");
    CHECK(r.code == 2);
    CHECK(has(r, "not a valid batch size"));

    r = cli("sweep");
    CHECK(r.code == 2);
    CHECK(has(r, "--csv"));

    r = cli("sweep --csv /nonexistent/dir/x.csv");
    CHECK(r.code == 2);
    CHECK(has(r, "/nonexistent/dir"));

    r = cli("sweep --csv /tmp/x.csv --variants baseline,nope");
    CHECK(r.code == 2);
    CHECK(has(r, "unknown variant 'nope'"));

    r = cli("sweep --csv /tmp/x.csv --memory pinned,nope");
    CHECK(r.code == 2);
    CHECK(has(r, "unknown memory mode 'nope'"));

    const auto d = tmpdir("badtable");
    std::ofstream(d / "bad.json") << R"({"layers": [{"name": "x", "C": 3, "H": 5, "W": 5, "M": 2, "R": 9, "S": 3}]})";
    r = cli("generate --layers " + (d / "bad.json").string() + " --out " + (d / "g").string());
    CHECK(r.code == 2);
    CHECK(has(r, "bad.json"));
    CHECK(has(r, "'R' = 9"));
    CHECK_FALSE(std::filesystem::exists(d / "g" / "x"));

    r = cli("list --table /nonexistent/t.json");
    CHECK(r.code == 2);
    CHECK(has(r, "/nonexistent/t.json"));

    std::ofstream(d / "choices.json") << "{\"format\": \"convstudy engine choices 1\", \"choices\": [1]}";
    r = cli("sweep --csv " + (d / "x.csv").string() + " --engine-choices " + (d / "choices.json").string());
    CHECK(r.code == 2);
    CHECK(has(r, "choices.json"));
    CHECK(has(r, "--engine-choices none"));
    CHECK_FALSE(std::filesystem::exists(d / "x.csv"));
    r = cli("sweep --csv " + (d / "x.csv").string() + " --engine-choices /nonexistent/dir/c.json");
    CHECK(r.code == 2);
    CHECK(has(r, "--engine-choices path"));
}

TEST_CASE("GPU commands without a device or without golden files say so", "[cli]") {
    const auto d = tmpdir("nogolden");
    const auto r = cli("run --variant baseline --layer conv3 --batch 1 --golden " + (d / "missing").string());
    INFO(r.out);
    CHECK(r.code == 2);  // checked before the device is asked for
    CHECK(has(r, "convstudy generate --batch 1"));
    const auto s = cli("sweep --csv " + (d / "x.csv").string() + " --golden " + (d / "missing").string());
    INFO(s.out);
    CHECK(s.code == 2);  // golden files are checked before the device is opened
    CHECK(has(s, "convstudy generate --batch 1"));
    CHECK_FALSE(std::filesystem::exists(d / "x.csv"));
}

TEST_CASE("generate writes a golden set that numpy-free checks can find", "[cli][golden]") {
    const auto d = tmpdir("gen");
    std::ofstream(d / "tiny.json") << R"({"name": "tiny", "layers": [
        {"name": "a", "C": 3, "H": 9, "W": 7, "M": 4, "R": 3, "S": 3, "stride": 2, "pad": 1}]})";
    const auto r = cli("generate --quiet --batch 1,2 --layers " + (d / "tiny.json").string() + " --out " +
                       (d / "g").string());
    INFO(r.out);
    REQUIRE(r.code == 0);
    CHECK(std::filesystem::exists(d / "g" / "tiny" / "manifest.json"));
    CHECK(std::filesystem::exists(d / "g" / "tiny" / "n2" / "a.output.npy"));
}
