// Chain golden files (goldenio/golden_chain.hpp): `generate --chain` on tests/data/chain_small.json
// writes the input, every layer's weights, bias and post-op output with a manifest; loading
// checks every file; `verify --chain` passes the set and names a damaged or wrong file; a
// table that is not a chain is refused; the per-layer golden files beside them are unchanged.
#include "catch.hpp"
#include "test_util.hpp"
#include "golden_test_util.hpp"

#include "checksum.hpp"
#include "golden.hpp"
#include "golden_chain.hpp"
#include "layer.hpp"
#include "network_ref.hpp"

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace fs = std::filesystem;

using cs::test::cli;
using cs::test::error_message;
using cs::test::slurp;
using cs::test::spit;
using cs::test::TempDir;

namespace {

const std::string kSmall = std::string(CS_SOURCE_DIR) + "/tests/data/chain_small.json";

cs::ChainGenerateOptions quiet_chain_options(const fs::path& root, std::vector<std::int64_t> batches = {1, 2}) {
    cs::ChainGenerateOptions o;
    o.root = root;
    o.batches = std::move(batches);
    o.quiet = true;
    o.time_cpu = false;
    return o;
}

struct Chain {
    TempDir d;
    cs::LayerTable table = cs::load_layer_table(kSmall);
    fs::path root = d.path / "golden";
    std::string args = " --table '" + kSmall + "' --golden '" + (d.path / "golden").string() + "'";
    explicit Chain(std::vector<std::int64_t> batches = {1, 2}) {
        cs::generate_chain_golden(table, quiet_chain_options(root, std::move(batches)));
    }
    fs::path file(const std::string& rel) const { return root / "chain_small" / "chain" / rel; }
};

bool bit_equal(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("generate --chain writes every layer's post-op output, the input, weights and biases", "[golden][chain]") {
    Chain c;
    const auto m = nlohmann::json::parse(slurp(c.file("manifest.json")));
    CHECK(m["kind"] == "chain");
    CHECK(m["format_version"] == cs::kGoldenFormatVersion);
    CHECK(m["generator"]["seed"] == cs::kDefaultSeed);
    CHECK(m["generator"]["description"] == cs::chain_generator_description());
    REQUIRE(m["layer_table"]["layers"].size() == 3);
    CHECK(m["layer_table"]["layers"][0]["pool"] == "max3x3s2");
    CHECK(m["layer_table"]["layers"][1]["pool"] == "none");
    CHECK(m["layer_table"]["layers"][2]["pooled_E"] == 3);
    CHECK(m["layer_table"]["layers"][0]["bias"] == true);
    // 1 input + 3 layers x (weights, bias, output), per batch.
    CHECK(m["files"].size() == 2 * 10);
    for (const auto& f : m["files"]) {
        CHECK(f["dtype"] == "<f4");
        CHECK(fs::exists(c.file(f["path"].get<std::string>())));
        CHECK(cs::sha256_file(c.file(f["path"].get<std::string>())) == f["sha256"]);
    }
    CHECK(fs::exists(c.file("n2/input.npy")));
    CHECK(cs::read_npy_header(c.file("n2/c1.output.npy")).shape == cs::NpyShape{2, 5, 8, 8});
    CHECK(cs::read_npy_header(c.file("n2/c3.output.npy")).shape == cs::NpyShape{2, 9, 3, 3});
    CHECK(cs::read_npy_header(c.file("n1/c2.bias.npy")).shape == cs::NpyShape{7});
    CHECK(m["cpu"].contains("n1"));
    CHECK(m["cpu"].contains("n2"));
    // No staging directory is left behind.
    for (const auto& e : fs::directory_iterator(c.file("")))
        CHECK(e.path().filename().string().rfind(".partial-", 0) == std::string::npos);

    // What load_chain_golden returns is the generator's data and chain_ref<double>'s outputs.
    for (const std::int64_t N : {1, 2}) {
        const cs::ChainGoldenSet g = cs::load_chain_golden(c.root, c.table, N);
        const cs::ChainData d = cs::make_chain_data(c.table, N, cs::kDefaultSeed);
        const auto out = cs::chain_ref<double>(c.table, d);
        CHECK(bit_equal(g.data.input, d.input));
        for (std::size_t i = 0; i < 3; ++i) {
            CHECK(bit_equal(g.data.weights[i], d.weights[i]));
            CHECK(bit_equal(g.data.bias[i], d.bias[i]));
            CHECK(bit_equal(g.outputs[i], out[i]));
        }
    }
}

TEST_CASE("generate --chain merges later batches and times the float chain when asked", "[golden][chain]") {
    Chain c({1});
    auto o = quiet_chain_options(c.root, {3});
    o.time_cpu = true;
    cs::generate_chain_golden(c.table, o);
    const auto listing = cs::list_chain_golden(c.root, c.table);
    CHECK(listing.batches == std::vector<std::int64_t>{1, 3});
    const auto m = nlohmann::json::parse(slurp(c.file("manifest.json")));
    CHECK(m["cpu"]["n1"]["float32_ms"].is_null());
    const auto& t = m["cpu"]["n3"];
    CHECK(t["float32_ms"].get<double>() > 0);
    CHECK(t["repeats"].get<int>() >= 1);
    for (const char* layer : {"c1", "c2", "c3"}) {
        INFO(layer);
        CHECK(t["float32_max_rel_diff"][layer].get<double>() < 1e-5);
        CHECK(t["float32_max_abs_diff"][layer].get<double>() >= 0);
    }
    CHECK(cs::load_chain_golden(c.root, c.table, 1).outputs.size() == 3);
    CHECK(cs::load_chain_golden(c.root, c.table, 3).float32_ms > 0);
}

TEST_CASE("a table that is not a chain is refused, by generate, load and the CLI", "[golden][chain]") {
    TempDir d;
    cs::LayerTable t = cs::load_layer_table(kSmall);
    t.layers[2].C = 8;
    std::string msg = error_message([&] { cs::generate_chain_golden(t, quiet_chain_options(d.path)); });
    CHECK_HAS(msg, "is not a chain");
    CHECK_HAS(msg, "c3");
    CHECK_FALSE(fs::exists(d.path / "chain_small"));
    const fs::path bad = d.path / "bad.json";
    spit(bad, R"({"name": "twice", "layers": [
      {"name": "a", "C": 3, "H": 9, "W": 9, "M": 4, "R": 3, "S": 3, "count": 2}]})");
    const auto r = cli("generate --chain --batch 1 --quiet --table '" + bad.string() + "' --out '" +
                       (d.path / "g").string() + "'");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "is not a chain");
    CHECK_HAS(r.out, "count 2");
    const auto only = cli("generate --chain --batch 1 --quiet --only c1 --table '" + kSmall + "' --out '" +
                          (d.path / "g").string() + "'");
    CHECK(only.code == 2);
    CHECK_HAS(only.out, "--only");
}

TEST_CASE("verify --chain passes an intact chain set and names a damaged or wrong file", "[golden][chain][verify]") {
    Chain c;
    auto r = cli("verify --chain --recompute 50" + c.args);
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK_HAS(r.out, "2 of 2 chain golden sets verified");
    CHECK_HAS(r.out, "10 files");
    CHECK_HAS(r.out, "post-op outputs per layer recomputed");

    SECTION("a flipped byte fails the SHA-256") {
        const fs::path f = c.file("n2/c2.output.npy");
        std::string bytes = slurp(f);
        bytes[bytes.size() - 3] ^= 0x10;
        spit(f, bytes);
        r = cli("verify --chain" + c.args);
        INFO(r.out);
        CHECK(r.code == 1);
        CHECK_HAS(r.out, "c2.output.npy");
        CHECK_HAS(r.out, "SHA-256 mismatch");
        CHECK_HAS(r.out, "1 of 2 chain golden sets verified");
        CHECK_HAS(r.out, "generate --chain --batch 2");
    }
    SECTION("a wrong value with a consistent SHA-256 fails only the recomputation") {
        const fs::path f = c.file("n1/c3.output.npy");
        std::string bytes = slurp(f);
        const std::size_t data = bytes.size() - 4 * std::size_t(cs::read_npy_header(f).count());
        float v;
        std::memcpy(&v, &bytes[data + 4 * 7], 4);
        v = v + 0.25f;
        std::memcpy(&bytes[data + 4 * 7], &v, 4);
        spit(f, bytes);
        const fs::path mp = c.file("manifest.json");
        auto m = nlohmann::json::parse(slurp(mp));
        for (auto& e : m["files"])
            if (e["path"] == "n1/c3.output.npy") e["sha256"] = cs::sha256_file(f);
        spit(mp, m.dump(1));
        r = cli("verify --chain" + c.args);
        CHECK(r.code == 0);
        r = cli("verify --chain --recompute 1000" + c.args);
        INFO(r.out);
        CHECK(r.code == 1);
        CHECK_HAS(r.out, "c3.output.npy: element 7 differs from its recomputation");
    }
    SECTION("a bias that is not the generator's fails the recomputation") {
        const fs::path f = c.file("n1/c2.bias.npy");
        std::string bytes = slurp(f);
        bytes[bytes.size() - 4] ^= 0x01;
        spit(f, bytes);
        const fs::path mp = c.file("manifest.json");
        auto m = nlohmann::json::parse(slurp(mp));
        for (auto& e : m["files"])
            if (e["path"] == "n1/c2.bias.npy") e["sha256"] = cs::sha256_file(f);
        spit(mp, m.dump(1));
        r = cli("verify --chain --recompute 10" + c.args);
        INFO(r.out);
        CHECK(r.code == 1);
        CHECK_HAS(r.out, "c2.bias.npy: element 6 is not what generator");
    }
    SECTION("a table with other ops than the manifest's is refused") {
        cs::LayerTable t = c.table;
        t.layers[1].relu = false;
        const std::string msg = error_message([&] { (void)cs::load_chain_golden(c.root, t, 1); });
        CHECK_HAS(msg, "made for another table");
        CHECK_HAS(msg, "other ops");
    }
    SECTION("no chain manifest: a clear error with the command that makes one") {
        fs::remove_all(c.file(""));
        r = cli("verify --chain" + c.args);
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK_HAS(r.out, "no chain golden manifest");
        CHECK_HAS(r.out, "generate --chain");
    }
}

TEST_CASE("a chain set's files get the per-layer sets' entry, header, size and SHA-256 checks",
          "[golden][chain]") {
    Chain c({1});
    const fs::path mp = c.file("manifest.json");
    const std::string manifest = slurp(mp);
    const std::string regen = cs::chain_regenerate_command(c.root, c.table, 1);
    // Edits the manifest entry of n1/c2.weights.npy, then loads (or only checks) the set.
    auto damaged = [&](const std::function<void(nlohmann::json&)>& edit, bool read_data) {
        auto m = nlohmann::json::parse(manifest);
        for (auto& e : m["files"])
            if (e["path"] == "n1/c2.weights.npy") edit(e);
        spit(mp, m.dump(1));
        return error_message([&] { (void)cs::load_chain_golden(c.root, c.table, 1, std::nullopt, read_data); });
    };
    const std::string file = c.file("n1/c2.weights.npy").string();
    for (const bool read_data : {true, false}) {
        INFO("read_data " << read_data);
        const cs::ChainGoldenSet g = cs::load_chain_golden(c.root, c.table, 1, std::nullopt, read_data);
        CHECK(g.data.weights.empty() != read_data);
        std::string m = damaged([](auto& e) { e["tensor"] = "bias"; }, read_data);
        CHECK_HAS(m, mp.string() + ": records tensor \"bias\" for n1/c2.weights.npy; regenerate with: " + regen);
        m = damaged([](auto& e) { e["dtype"] = "<f8"; }, read_data);
        CHECK_HAS(m, file + ": the manifest records dtype <f8, expected <f4; regenerate with: " + regen);
        m = damaged([](auto& e) { e["shape"] = {7, 5, 5}; }, read_data);
        CHECK_HAS(m, file + ": the manifest records shape (7, 5, 5), expected (7, 5, 5, 5)");
        m = damaged([](auto& e) { e.erase("sha256"); }, read_data);
        CHECK_HAS(m, mp.string() + ": malformed entry for n1/c2.weights.npy (");
        m = damaged([](auto& e) { e["bytes"] = e["bytes"].template get<std::int64_t>() + 4; }, read_data);
        CHECK_HAS(m, file + ": size ");
        CHECK_HAS(m, "bytes, the manifest records ");
        m = damaged([](auto& e) { e["sha256"] = std::string(64, '0'); }, read_data);
        CHECK_HAS(m, file + ": SHA-256 mismatch: the file has ");
        CHECK_HAS(m, "; regenerate with: " + regen);
        spit(mp, manifest);
    }
}

TEST_CASE("generate --chain refuses no batches and a batch below 1, as the per-layer generate does",
          "[golden][chain]") {
    TempDir d;
    const cs::LayerTable table = cs::load_layer_table(kSmall);
    CHECK(error_message([&] { cs::generate_chain_golden(table, quiet_chain_options(d.path, {})); }) ==
          "generate: no batch sizes given");
    CHECK(error_message([&] { cs::generate_chain_golden(table, quiet_chain_options(d.path, {2, 0})); }) ==
          "generate: batch size 0 must be at least 1");
    CHECK_FALSE(fs::exists(d.path / "chain_small"));
}

TEST_CASE("chain and per-layer golden sets of one table live side by side, unchanged", "[golden][chain]") {
    Chain c({1});
    cs::generate_golden(c.table, cs::test::quiet_generate_options(c.root, {1}));
    // The per-layer set is the plain convolution (no bias), as before the ops existed, and
    // its verify sees no leftovers from the chain directory.
    const cs::GoldenSet g = cs::load_golden(c.root, c.table, c.table.layers[0], 1);
    std::vector<float> conv(g.output.size());
    cs::conv2d_ref<double>(c.table.layers[0], 1, g.input.data(), g.weights.data(), conv.data());
    CHECK(bit_equal(conv, g.output));
    const auto r = cli("verify" + c.args);
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(r.out.find("note:") == std::string::npos);
    CHECK_HAS(r.out, "3 of 3 golden sets verified");
    // The chain's first layer before its ops is the per-layer golden output: same input and
    // weights.
    const cs::ChainGoldenSet ch = cs::load_chain_golden(c.root, c.table, 1);
    CHECK(bit_equal(ch.data.input, g.input));
    CHECK(bit_equal(ch.data.weights[0], g.weights));
    CHECK(cli("verify --chain" + c.args).code == 0);
}
