// Golden files: a small generate + load round trip on a tiny table, the manifest, merging,
// an interrupted run, and every refusal with its message and regenerate command.
#include "catch.hpp"
#include "test_util.hpp"
#include "golden_test_util.hpp"

#include "atomic_file.hpp"
#include "conv_ref.hpp"
#include "datagen.hpp"
#include "error.hpp"
#include "golden.hpp"
#include "layer.hpp"
#include "npy.hpp"

#include <nlohmann/json.hpp>

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

using cs::test::TempDir;
using cs::test::FaultGuard;
using cs::test::slurp;
using cs::test::spit;
using cs::test::error_message;

namespace {

// Odd small shapes: stride 2 with padding, non-square filters, a 1x1 layer.
const char* kTinyTable = R"({
  "name": "tiny",
  "layers": [
    {"name": "a", "C": 3, "H": 9, "W": 7, "M": 4, "R": 3, "S": 2, "stride": 2, "pad": 1},
    {"name": "b", "C": 5, "H": 6, "W": 6, "M": 3, "R": 3, "S": 3, "stride": 1, "pad": 1},
    {"name": "c", "C": 2, "H": 4, "W": 5, "M": 2, "R": 1, "S": 1}
  ]
})";

cs::LayerTable tiny_table() { return cs::parse_layer_table(kTinyTable, "tiny.json"); }

cs::GenerateOptions options(const fs::path& root, std::vector<std::int64_t> batches = {1, 2}) {
    return cs::test::quiet_generate_options(root, std::move(batches));
}

nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(slurp(p)); }

std::vector<std::string> temp_files_under(const fs::path& root) {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(root))
        if (e.path().filename().string().find(".tmp.") != std::string::npos) out.push_back(e.path().string());
    return out;
}

// One generated golden set per test run; tests that damage files work on a copy.
const fs::path& pristine_golden() {
    static TempDir dir;
    static const bool made = [] {
        cs::generate_golden(tiny_table(), options(dir.path));
        return true;
    }();
    (void)made;
    return dir.path;
}

}  // namespace

TEST_CASE("golden round trip: load returns bit-identical data", "[golden]") {
    TempDir dir;
    const auto table = tiny_table();
    auto opt = options(dir.path);
    opt.time_cpu = true;  // tiny layers: the timing stops after max_repeats calls
    cs::generate_golden(table, opt);

    const fs::path tdir = dir.path / "tiny";
    CHECK(fs::exists(tdir / "manifest.json"));
    CHECK(fs::exists(tdir / "n2" / "b.output.npy"));
    CHECK(temp_files_under(dir.path).empty());

    for (const auto& layer : table.layers) {
        for (std::int64_t N : {1, 2}) {
            INFO(layer.name << " N=" << N);
            std::vector<float> in(std::size_t(layer.input_elems(N))), w(std::size_t(layer.weight_elems())),
                out(std::size_t(layer.output_elems(N)));
            cs::make_input(layer, N, cs::kDefaultSeed, in.data());
            cs::make_weights(layer, cs::kDefaultSeed, w.data());
            cs::conv2d_ref<double>(layer, N, in.data(), w.data(), out.data());
            std::vector<float> bound(out.size());
            cs::conv2d_bound(layer, N, in.data(), w.data(), bound.data());

            const cs::GoldenSet g = cs::load_golden(dir.path, table, layer, N, cs::kDefaultSeed);
            CHECK(g.N == N);
            CHECK(g.seed == cs::kDefaultSeed);
            CHECK(g.layer.name == layer.name);
            CHECK(g.dir == tdir / ("n" + std::to_string(N)));
            REQUIRE(g.input.size() == in.size());
            REQUIRE(g.weights.size() == w.size());
            REQUIRE(g.output.size() == out.size());
            REQUIRE(g.bound.size() == out.size());
            CHECK(std::memcmp(g.input.data(), in.data(), in.size() * 4) == 0);
            CHECK(std::memcmp(g.weights.data(), w.data(), w.size() * 4) == 0);
            CHECK(std::memcmp(g.output.data(), out.data(), out.size() * 4) == 0);
            CHECK(std::memcmp(g.bound.data(), bound.data(), bound.size() * 4) == 0);
            for (std::size_t i = 0; i < out.size(); ++i) CHECK(std::fabs(out[i]) <= bound[i] * (1 + 1e-6f));
            CHECK(g.cpu.ms > 0);
            CHECK(g.cpu.repeats > 0);
            CHECK(g.cpu.threads > 0);
            CHECK_FALSE(g.onednn.has_value());  // not asked for
            CHECK_FALSE(g.cpu_model.empty());
        }
    }

    const auto m = read_json(tdir / "manifest.json");
    CHECK(m["format_version"] == 2);
    CHECK(m["tool"]["name"] == "convstudy");
    CHECK(m["generator"]["name"] == cs::kGeneratorName);
    CHECK(m["generator"]["seed"].get<std::uint64_t>() == cs::kDefaultSeed);
    CHECK(m["layer_table"]["name"] == "tiny");
    CHECK(m["layer_table"]["layers"].size() == 3);
    CHECK(m["files"].size() == 4 * 3 * 2);  // input, weights, output, bound
    const auto& f0 = m["files"][0];
    CHECK(f0["path"] == "n1/a.input.npy");
    CHECK(f0["shape"] == nlohmann::json::array({1, 3, 9, 7}));
    CHECK(f0["dtype"] == "<f4");
    CHECK(f0["bytes"].get<std::uint64_t>() == fs::file_size(tdir / "n1" / "a.input.npy"));
    const auto& cpu = m["cpu"]["b/n2"];
    CHECK(cpu["float32_ms"].is_number());
    CHECK(cpu["float32_max_abs_diff"].get<double>() < 1e-5);
    CHECK(cpu["onednn_ms"].is_null());
    CHECK(cpu["onednn_max_abs_diff"].is_null());

    CHECK(cs::golden_batches(dir.path, table, table.layers[1]) == std::vector<std::int64_t>{1, 2});
}

TEST_CASE("generating more batches merges, another seed starts afresh", "[golden]") {
    TempDir dir;
    const auto table = tiny_table();
    cs::generate_golden(table, options(dir.path, {1}));
    const auto created = read_json(dir.path / "tiny" / "manifest.json")["created"];
    cs::generate_golden(table, options(dir.path, {2}));
    auto m = read_json(dir.path / "tiny" / "manifest.json");
    CHECK(m["files"].size() == 24);
    CHECK(m["cpu"].size() == 6);
    CHECK(m["created"] == created);
    CHECK_NOTHROW(cs::load_golden(dir.path, table, table.layers[0], 1));
    CHECK_NOTHROW(cs::load_golden(dir.path, table, table.layers[0], 2));

    auto opt = options(dir.path, {1});
    opt.seed = 7;
    cs::generate_golden(table, opt);
    m = read_json(dir.path / "tiny" / "manifest.json");
    CHECK(m["files"].size() == 12);
    CHECK(m["generator"]["seed"] == 7);
    CHECK(cs::golden_batches(dir.path, table, table.layers[0]) == std::vector<std::int64_t>{1});
    const auto g = cs::load_golden(dir.path, table, table.layers[0], 1);
    CHECK(g.seed == 7);
}

TEST_CASE("generate replaces a corrupt or incompatible manifest and removes stale temporaries", "[golden]") {
    TempDir dir;
    const auto table = tiny_table();
    fs::copy(pristine_golden(), dir.path, fs::copy_options::recursive);
    const fs::path manifest = dir.path / "tiny" / "manifest.json";
    spit(manifest, "{ this is not json");
    // A temporary left by a killed run (a pid that is not running) is removed.
    pid_t dead = 4000000;
    while (::kill(dead, 0) == 0 || errno != ESRCH) --dead;
    const fs::path stale = dir.path / "tiny" / "n1" / ("a.output.npy.tmp." + std::to_string(dead) + ".1234abcd");
    spit(stale, "half");
    cs::generate_golden(table, options(dir.path, {1}));
    CHECK_FALSE(fs::exists(stale));
    CHECK(read_json(manifest)["files"].size() == 12);
    CHECK_NOTHROW(cs::load_golden(dir.path, table, table.layers[0], 1));

    // The same table name with a changed layer: the old entries are dropped.
    auto changed = cs::parse_layer_table(R"({"name": "tiny", "layers": [
        {"name": "a", "C": 3, "H": 9, "W": 7, "M": 5, "R": 3, "S": 2, "stride": 2, "pad": 1}]})", "changed.json");
    cs::generate_golden(changed, options(dir.path, {2}));
    const auto m = read_json(manifest);
    CHECK(m["files"].size() == 4);
    CHECK(m["layer_table"]["source"] == "changed.json");
    CHECK_NOTHROW(cs::load_golden(dir.path, changed, changed.layers[0], 2));
    CHECK_HAS(error_message([&] { cs::load_golden(dir.path, table, table.layers[0], 1); }), "were made for shape");
}

TEST_CASE("an interrupted generate leaves a consistent manifest and no temporaries", "[golden]") {
    TempDir dir;
    FaultGuard guard;
    const auto table = tiny_table();
    cs::generate_golden(table, options(dir.path, {1}));
    cs::testing::set_atomic_write_fault(100);  // the first .npy of N=2 fails mid-write
    const std::string msg = error_message([&] { cs::generate_golden(table, options(dir.path, {2})); });
    CHECK_HAS(msg, "write failed");
    cs::testing::set_atomic_write_fault(std::nullopt);
    CHECK(temp_files_under(dir.path).empty());
    const auto m = read_json(dir.path / "tiny" / "manifest.json");
    CHECK(m["files"].size() == 12);
    for (const auto& layer : table.layers) CHECK_NOTHROW(cs::load_golden(dir.path, table, layer, 1));
    CHECK_HAS(error_message([&] { cs::load_golden(dir.path, table, table.layers[0], 2); }),
              "no golden files for a at N=2 (generated for N=1)");
}

TEST_CASE("load_golden refuses bad golden sets with the file and the command", "[golden]") {
    TempDir dir;
    const auto table = tiny_table();
    const cs::Layer& b = table.layers[1];
    fs::copy(pristine_golden(), dir.path, fs::copy_options::recursive);
    const fs::path tdir = dir.path / "tiny";
    const fs::path manifest = tdir / "manifest.json";
    const fs::path out2 = tdir / "n2" / "b.output.npy";
    const std::string regen2 = "regenerate with: convstudy generate --batch 2 --out " + dir.path.string() +
                               " --layers tiny.json";
    auto load = [&](std::int64_t N = 2) { return error_message([&] { cs::load_golden(dir.path, table, b, N); }); };

    SECTION("missing root directory") {
        const fs::path root = dir.path / "nowhere";
        const auto m = error_message([&] { cs::load_golden(root, table, b, 2); });
        CHECK_HAS(m, root.string());
        CHECK_HAS(m, "does not exist");
        CHECK_HAS(m, "; regenerate with: convstudy generate --batch 2 --out " + root.string() + " --layers tiny.json");
    }
    SECTION("missing manifest") {
        fs::remove(manifest);
        const auto m = load();
        CHECK_HAS(m, manifest.string());
        CHECK_HAS(m, "no golden manifest");
        CHECK_HAS(m, regen2);
    }
    SECTION("corrupt manifest JSON") {
        spit(manifest, slurp(manifest).substr(0, 100));
        const auto m = load();
        CHECK_HAS(m, manifest.string());
        CHECK_HAS(m, "not valid JSON");
        CHECK_HAS(m, regen2);
    }
    SECTION("manifest of another format version") {
        auto j = read_json(manifest);
        j["format_version"] = 1;  // before bound files
        spit(manifest, j.dump());
        CHECK_HAS(load(), "format_version 1, this convstudy reads 2");
    }
    SECTION("a file is missing") {
        fs::remove(out2);
        const auto m = load();
        CHECK_HAS(m, out2.string());
        CHECK_HAS(m, "does not exist");
        CHECK_HAS(m, regen2);
        CHECK_NOTHROW(cs::load_golden(dir.path, table, b, 1));
    }
    SECTION("a truncated file") {
        const std::string bytes = slurp(out2);
        spit(out2, bytes.substr(0, bytes.size() - 10));
        const auto m = load();
        CHECK_HAS(m, out2.string());
        CHECK_HAS(m, "truncated: expected 864 bytes of data, found 854");
        CHECK_HAS(m, regen2);
    }
    SECTION("one flipped byte fails the checksum") {
        std::string bytes = slurp(out2);
        bytes[bytes.size() - 5] ^= 0x01;
        spit(out2, bytes);
        const auto m = load();
        CHECK_HAS(m, out2.string());
        CHECK_HAS(m, "SHA-256 mismatch");
        CHECK_HAS(m, regen2);
    }
    SECTION("a header with the wrong shape") {
        std::vector<float> v(2 * 3 * 36 * 6);
        cs::write_npy(out2, v.data(), {2, 3, 36, 6});
        const auto m = load();
        CHECK_HAS(m, out2.string());
        CHECK_HAS(m, "shape (2, 3, 36, 6), expected (2, 3, 6, 6)");
        CHECK_HAS(m, regen2);
    }
    SECTION("a header with the wrong dtype") {
        std::string bytes = slurp(out2);
        bytes.replace(bytes.find("<f4"), 3, "<i4");
        spit(out2, bytes);
        const auto m = load();
        CHECK_HAS(m, out2.string());
        CHECK_HAS(m, "dtype <i4, expected <f4");
    }
    SECTION("a golden set made with another seed") {
        auto opt = options(dir.path);
        opt.seed = 99;
        cs::generate_golden(table, opt);
        const auto m = error_message([&] { cs::load_golden(dir.path, table, b, 2, cs::kDefaultSeed); });
        CHECK_HAS(m, manifest.string());
        CHECK_HAS(m, "generated with seed 99, expected seed " + std::to_string(cs::kDefaultSeed));
        CHECK_HAS(m, regen2);
        const auto m7 = error_message([&] { cs::load_golden(dir.path, table, b, 2, 7); });
        CHECK_HAS(m7, regen2 + " --seed 7");
        CHECK(cs::load_golden(dir.path, table, b, 2).seed == 99);
    }
    SECTION("the requested layer's shape differs from the manifest's") {
        const auto other = cs::parse_layer_table(R"({"name": "tiny", "layers": [
            {"name": "b", "C": 5, "H": 7, "W": 6, "M": 3, "R": 3, "S": 3, "stride": 1, "pad": 1}]})",
                                                 "other.json");
        const auto m = error_message([&] { cs::load_golden(dir.path, other, other.layers[0], 2); });
        CHECK_HAS(m, manifest.string());
        CHECK_HAS(m, "were made for shape C=5 H=6 W=6");
        CHECK_HAS(m, "requested layer has shape C=5 H=7 W=6");
        CHECK_HAS(m, "--layers other.json");
        CHECK(cs::golden_batches(dir.path, other, other.layers[0]).empty());
    }
    SECTION("a batch that was not generated") {
        const auto m = load(32);
        CHECK_HAS(m, "no golden files for b at N=32 (generated for N=1, 2)");
        CHECK_HAS(m, "regenerate with: convstudy generate --batch 32 --out");
    }
    SECTION("a layer the manifest does not know") {
        const auto other = cs::parse_layer_table(R"({"name": "tiny", "layers": [
            {"name": "z", "C": 1, "H": 3, "W": 3, "M": 1, "R": 1, "S": 1}]})", "z.json");
        CHECK_HAS(error_message([&] { cs::load_golden(dir.path, other, other.layers[0], 1); }),
                  "no golden files for layer 'z'");
    }
}

TEST_CASE("generate refuses bad options", "[golden]") {
    TempDir dir;
    const auto table = tiny_table();
    auto opt = options(dir.path, {});
    CHECK_HAS(error_message([&] { cs::generate_golden(table, opt); }), "no batch sizes");
    opt = options(dir.path, {0});
    CHECK_HAS(error_message([&] { cs::generate_golden(table, opt); }), "must be at least 1");
    opt = options(dir.path, {1});
    opt.layers = {"nope"};
    CHECK_HAS(error_message([&] { cs::generate_golden(table, opt); }), "no layer 'nope'");
    opt.layers = {"c"};
    cs::generate_golden(table, opt);
    CHECK(cs::golden_batches(dir.path, table, table.layers[2]) == std::vector<std::int64_t>{1});
    CHECK(cs::golden_batches(dir.path, table, table.layers[0]).empty());
}

TEST_CASE("regenerate command and layout", "[golden]") {
    const auto& alex = cs::default_layer_table();
    CHECK(cs::regenerate_command("golden", alex, 128) == "convstudy generate --batch 128 --out golden");
    CHECK(cs::regenerate_command("my dir", tiny_table(), 1, 5) ==
          "convstudy generate --batch 1 --out 'my dir' --layers tiny.json --seed 5");
    CHECK(cs::golden_file_path("golden", alex, "conv2", 128, cs::GoldenTensor::output) ==
          fs::path("golden/alexnet/n128/conv2.output.npy"));
    cs::LayerTable unnamed = tiny_table();
    unnamed.name = "";
    unnamed.source = "/some/where/my table.json";
    CHECK(cs::golden_table_name(unnamed) == "my_table");
    const cs::Layer& conv1 = alex.layers[0];
    CHECK(cs::golden_shape(conv1, 128, cs::GoldenTensor::output) == cs::NpyShape{128, 96, 55, 55});
    CHECK(cs::golden_shape(conv1, 128, cs::GoldenTensor::weights) == cs::NpyShape{96, 3, 11, 11});
}
