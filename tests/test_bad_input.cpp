// Bad input end to end: every kind of bad input is refused with a message that
// says what is wrong and what to do, and the documented exit code (2 bad input, 4 no CUDA
// device); nothing is half-written when a write fails; generating twice gives the same
// bytes. The command line is driven through popen like test_cli.cpp; the library directly
// where that is simpler. The regression tests of the fuzz targets' findings are at the end.
#include "catch.hpp"
#include "test_util.hpp"
#include "golden_test_util.hpp"

#include "atomic_file.hpp"
#include "device.hpp"
#include "error.hpp"
#include "golden.hpp"
#include "layer.hpp"
#include "npy.hpp"
#include "results.hpp"
#include "variant.hpp"
#include "conv_shape.hpp"

#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
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
using cs::test::CliResult;
using cs::test::cli;

namespace {

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

// Every regular file under root, relative path -> bytes.
std::map<std::string, std::string> snapshot(const fs::path& root) {
    std::map<std::string, std::string> out;
    if (!fs::exists(root)) return out;
    for (const auto& e : fs::recursive_directory_iterator(root))
        if (e.is_regular_file()) out[fs::relative(e.path(), root).string()] = slurp(e.path());
    return out;
}

std::vector<std::string> temp_files_under(const fs::path& root) {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(root))
        if (e.path().filename().string().find(".tmp.") != std::string::npos) out.push_back(e.path().string());
    return out;
}

const char* const kTinyTable = cs::test::kTwoLayerTable;
cs::GenerateOptions quiet_options(const fs::path& root, std::vector<std::int64_t> batches) {
    return cs::test::quiet_generate_options(root, std::move(batches));
}

}  // namespace

// ---- gzip-compressed CSVs ----------------------------------------------------------------

TEST_CASE("bad input: a truncated or corrupt .csv.gz is a clear error, exit 2", "[bad-input][cli][compare][merge]") {
    TempDir d;
    const fs::path a = fs::path(CS_SOURCE_DIR) / "tests/data/compare_a.csv";
    auto gz = cs::test::run_command("gzip -n -c " + quoted(a) + " > " + quoted(d.path / "a.csv.gz"));
    REQUIRE(gz.code == 0);
    const std::string bytes = slurp(d.path / "a.csv.gz");
    REQUIRE(bytes.size() > 40);
    // The stream cut anywhere before its end, down to the header alone; the 8-byte trailer
    // (CRC-32 and length) cut in half.
    for (std::size_t keep : {std::size_t(10), bytes.size() / 2, bytes.size() - 4}) {
        INFO("first " << keep << " of " << bytes.size() << " bytes");
        spit(d.path / "cut.csv.gz", bytes.substr(0, keep));
        auto r = cli("compare " + quoted(a) + " " + quoted(d.path / "cut.csv.gz"));
        CHECK(r.code == 2);
        CHECK_HAS(r.out, "cut.csv.gz: truncated gzip file");
        r = cli("merge " + quoted(d.path / "cut.csv.gz") + " " + quoted(a) + " -o " + quoted(d.path / "m.csv"));
        CHECK(r.code == 2);
        CHECK_HAS(r.out, "cut.csv.gz: truncated gzip file");
        CHECK_FALSE(fs::exists(d.path / "m.csv"));
    }
    // A flipped byte in the compressed data or in the CRC: zlib's check names it.
    for (std::size_t at : {bytes.size() / 2, bytes.size() - 6}) {
        INFO("byte " << at << " flipped");
        std::string bad = bytes;
        bad[at] = char(bad[at] ^ 0x5a);
        spit(d.path / "bad.csv.gz", bad);
        const auto r = cli("compare " + quoted(d.path / "bad.csv.gz") + " " + quoted(a));
        CHECK(r.code == 2);
        CHECK_HAS(r.out, "bad.csv.gz: not a readable gzip file");
    }
    // Bytes after the stream that are not another gzip member.
    spit(d.path / "tail.csv.gz", bytes + "layer,N\n");
    auto r = cli("compare " + quoted(d.path / "tail.csv.gz") + " " + quoted(a));
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "after the end of the gzip stream");
    // What is inside is checked as a plain file's contents are: binary data, an empty file.
    spit(d.path / "bin", std::string("\x7f" "ELF\0\0\1", 7));
    REQUIRE(cs::test::run_command("gzip -n -c " + quoted(d.path / "bin") + " > " + quoted(d.path / "bin.csv.gz")).code == 0);
    r = cli("compare " + quoted(d.path / "bin.csv.gz") + " " + quoted(a));
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "binary data");
    spit(d.path / "empty", "");
    REQUIRE(cs::test::run_command("gzip -n -c " + quoted(d.path / "empty") + " > " + quoted(d.path / "empty.csv.gz")).code == 0);
    r = cli("compare " + quoted(d.path / "empty.csv.gz") + " " + quoted(a));
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "empty file");
    r = cli("merge " + quoted(d.path / "empty.csv.gz") + " " + quoted(a) + " -o " + quoted(d.path / "m.csv"));
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "empty");
}

// ---- precision ------------------------------------------------------------------------

TEST_CASE("bad input: there is no --precision option, it is refused, not ignored", "[bad-input][cli]") {
    TempDir d;
    // Precision is part of a variant (see `convstudy list`): an unknown option is exit 2
    // with a message naming it and pointing at --help.
    auto r = cli("sweep --csv " + quoted(d.path / "x.csv") + " --precision fp64");
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "--precision");
    CHECK_HAS(r.out, "--help");
    r = cli("run --variant baseline --layer conv1 --batch 1 --precision fp16");
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "--precision");
    CHECK_FALSE(fs::exists(d.path / "x.csv"));
}

// ---- absurd batch sizes -----------------------------------------------------------------

TEST_CASE("bad input: absurd batch sizes are refused before anything is allocated or written",
          "[bad-input][cli]") {
    TempDir d;
    const fs::path out = d.path / "g";

    // Past the command line's limit: every command, before the device or the disk.
    auto r = cli("generate --quiet --batch 100000000 --out " + quoted(out));
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "--batch: 100000000 is not a valid batch size (1 to 1048576)");
    CHECK_FALSE(fs::exists(out));
    r = cli("run --variant baseline --layer conv1 --batch 100000000");
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "not a valid batch size (1 to 1048576)");
    r = cli("sweep --batch 1,100000000 --csv " + quoted(d.path / "x.csv"));
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "not a valid batch size (1 to 1048576)");
    CHECK_FALSE(fs::exists(d.path / "x.csv"));

    // Within the limit but a tensor larger than 64 GB (conv1 at N=10^6: 618 GB of input).
    r = cli("generate --quiet --batch 1000000 --only conv1 --out " + quoted(out));
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "conv1 at N=1000000 needs more than 64 GB for one tensor; use a smaller batch");
    CHECK_FALSE(fs::exists(out));
}

TEST_CASE("bad input: a golden set larger than this machine's memory is refused, not OOM-killed",
          "[bad-input][cli]") {
    TempDir d;
    const fs::path out = d.path / "g";
    // conv5: the smallest batch whose two sets in flight exceed the physical memory.
    const cs::Layer& conv5 = *cs::default_layer_table().find("conv5");
    const double phys = double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGESIZE));
    const double per_image = 4.0 * double(conv5.input_elems(1) + conv5.output_elems(1));
    const auto N = std::int64_t(std::ceil(phys / per_image / 2)) + 1;
    if (N > (1 << 20) || 4.0 * double(conv5.input_elems(N)) > 64e9) {
        WARN("this machine has " << phys / 1e9 << " GB of memory: the 64 GB tensor limit comes first");
        return;
    }
    const auto r = cli("generate --quiet --batch " + std::to_string(N) + " --only conv5 --out " + quoted(out));
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "conv5 at N=" + std::to_string(N) + " needs about");
    CHECK_HAS(r.out, "of memory");
    CHECK_HAS(r.out, "use a smaller batch");
    CHECK_FALSE(fs::exists(out));
}

TEST_CASE("bad input: generate_golden refuses batch sizes whose element counts overflow", "[bad-input][golden]") {
    TempDir d;
    const auto table = cs::parse_layer_table(kTinyTable, "tiny.json");
    for (std::int64_t N : {std::int64_t(1) << 40, std::int64_t(1) << 62, std::numeric_limits<std::int64_t>::max()}) {
        const auto m = error_message([&] { cs::generate_golden(table, quiet_options(d.path, {N})); });
        CHECK_HAS(m, "at N=" + std::to_string(N));
        CHECK_HAS(m, "use a smaller batch");
    }
    CHECK(fs::is_empty(d.path));
}

// ---- unwritable output paths ----------------------------------------------------------

TEST_CASE("bad input: an unwritable output path is refused before any work, naming the path",
          "[bad-input][cli]") {
    TempDir d;
    const fs::path file = d.path / "plain-file";
    spit(file, "not a directory\n");
    const fs::path missing = d.path / "no-such-dir";

    // generate --out
    auto r = cli("generate --quiet --batch 1 --only conv3 --out " + quoted(file / "golden"));
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "cannot create directory " + (file / "golden").string());
    CHECK_HAS(r.out, "Not a directory");
    // A directory that cannot be written: permissions for a normal user; root ignores them,
    // so then /proc, where no directory can be made.
    fs::path ro;
    if (::geteuid() != 0) {
        ro = d.path / "ro";
        fs::create_directories(ro);
        fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    } else {
        ro = "/proc";
    }
    r = cli("generate --quiet --batch 1 --only conv3 --out " + quoted(ro / "convstudy-golden"));
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "cannot create directory " + (ro / "convstudy-golden").string());

    // sweep --csv and run --csv: checked before the golden files and the device.
    for (const std::string cmd : {"sweep --batch 1 --csv ", "run --variant baseline --layer conv1 --batch 1 --csv "}) {
        r = cli(cmd + quoted(missing / "r.csv"));
        CHECK(r.code == 2);
        CHECK_HAS(r.out, "cannot write " + (missing / "r.csv").string() + ": directory " + missing.string() +
                             " does not exist");
        r = cli(cmd + quoted(file / "r.csv"));
        CHECK(r.code == 2);
        CHECK_HAS(r.out, "cannot write " + (file / "r.csv").string());
        r = cli(cmd + quoted(d.path));
        CHECK(r.code == 2);
        CHECK_HAS(r.out, "cannot write " + d.path.string() + ": it is a directory");
        // check_writable creates a probe file, so root is refused too (/proc).
        r = cli(cmd + quoted(ro / "r.csv"));
        CHECK(r.code == 2);
        CHECK_HAS(r.out, "directory " + ro.string() + " is not writable");
        CHECK_HAS(r.out, "choose another --csv path");
    }
    CHECK_FALSE(fs::exists(missing));
    CHECK(slurp(file) == "not a directory\n");
}

// ---- layer tables with impossible shapes ----------------------------------------------

TEST_CASE("bad input: a layer table with an impossible shape is refused by every command", "[bad-input][cli]") {
    TempDir d;
    struct Bad {
        const char* layer;
        const char* want;
    };
    const Bad bads[] = {
        {R"({"name": "x", "C": 3, "H": 5, "W": 5, "M": 2, "R": 3, "S": 8, "pad": 1})",
         "layer 'x': field 'S' = 8 is larger than the padded input width W+2*pad = 7"},
        {R"({"name": "x", "C": 3, "H": 5, "W": 5, "M": 0, "R": 3, "S": 3})", "layer 'x': field 'M' must be positive, got 0"},
        {R"({"name": "x", "C": 4096, "H": 1024, "W": 1024, "M": 2, "R": 3, "S": 3})",
         "layer 'x': one image's tensors exceed 2^31 elements"},
        {R"({"name": "x", "C": 3, "H": 5, "W": 5, "M": 2, "R": 3, "S": 3, "stride": 99999999})",
         "layer 'x': field 'stride' = 99999999 is out of range"},
    };
    int i = 0;
    for (const auto& b : bads) {
        const fs::path table = d.path / ("bad" + std::to_string(i++) + ".json");
        spit(table, std::string(R"({"name": "bad", "layers": [)") + b.layer + "]}");
        const std::string t = quoted(table);
        const std::vector<std::string> cmds = {
            "list --table " + t,
            "generate --quiet --batch 1 --layers " + t + " --out " + quoted(d.path / "g"),
            "run --table " + t + " --variant baseline --layer x --batch 1",
            "sweep --table " + t + " --batch 1 --csv " + quoted(d.path / "x.csv"),
        };
        for (const auto& c : cmds) {
            const auto r = cli(c);
            INFO(c);
            CHECK(r.code == 2);
            CHECK_HAS(r.out, table.string() + ": " + b.want);
        }
    }
    CHECK_FALSE(fs::exists(d.path / "g"));
    CHECK_FALSE(fs::exists(d.path / "x.csv"));
}

// ---- golden sets: what the sweep checks before opening the device -----------------------

TEST_CASE("bad input: golden sets the sweep refuses before it opens the device", "[bad-input][cli][golden]") {
    TempDir d;
    const fs::path table_file = d.path / "tiny.json";
    spit(table_file, kTinyTable);
    const auto table = cs::load_layer_table(table_file);
    cs::generate_golden(table, quiet_options(d.path / "golden", {1, 2}));
    const fs::path root = d.path / "golden";
    const fs::path manifest = root / "tiny" / "manifest.json";
    const fs::path csv = d.path / "r.csv";
    const std::string sweep = "sweep --quiet --table " + quoted(table_file) + " --golden " + quoted(root) +
                              " --variants baseline --csv " + quoted(csv);
    const std::string regen = "convstudy generate --batch 1 --out " + root.string() + " --layers " + table_file.string();

    SECTION("a batch that was not generated") {
        const auto r = cli(sweep + " --batch 1,3");
        CHECK(r.code == 2);
        CHECK_HAS(r.out, "no golden set for a at N=3 under " + (root / "tiny").string());
        CHECK_HAS(r.out, "generate it with: convstudy generate --batch 3 --out " + root.string());
    }
    SECTION("a golden set made for another shape of the layer") {
        const fs::path other = d.path / "other.json";
        spit(other, R"({"name": "tiny", "layers": [
            {"name": "a", "C": 3, "H": 11, "W": 7, "M": 4, "R": 3, "S": 2, "stride": 2, "pad": 1}]})");
        const auto r = cli("sweep --quiet --table " + quoted(other) + " --golden " + quoted(root) +
                           " --batch 1 --csv " + quoted(csv));
        CHECK(r.code == 2);
        CHECK_HAS(r.out, "no golden set for a at N=1");
        CHECK_HAS(r.out, "generate it with: convstudy generate --batch 1 --out " + root.string() + " --layers " +
                             other.string());
    }
    SECTION("a corrupt manifest") {
        spit(manifest, slurp(manifest).substr(0, 200));
        const auto r = cli(sweep + " --batch 1");
        CHECK(r.code == 2);
        CHECK_HAS(r.out, manifest.string());
        CHECK_HAS(r.out, "not valid JSON");
        CHECK_HAS(r.out, "regenerate the golden files with: convstudy generate --out " + root.string() +
                             " --layers " + table_file.string());
    }
    SECTION("a manifest of another format version") {
        auto j = nlohmann::json::parse(slurp(manifest));
        j["format_version"] = 99;
        spit(manifest, j.dump());
        const auto r = cli(sweep + " --batch 1");
        CHECK(r.code == 2);
        CHECK_HAS(r.out, "no golden set for a at N=1");
        CHECK_HAS(r.out, "generate it with: " + regen);
    }
    SECTION("a missing manifest") {
        fs::remove(manifest);
        const auto r = cli(sweep + " --batch 2");
        CHECK(r.code == 2);
        CHECK_HAS(r.out, "no golden set for a at N=2");
    }
    // The files themselves (truncated, corrupted, another seed) are verified before the
    // device is opened too: exit 2 on any machine.
    SECTION("a truncated file, a corrupted file, another seed") {
        const fs::path out1 = root / "tiny" / "n1" / "a.output.npy";
        const std::string good = slurp(out1);
        struct Case {
            std::string what, extra, bytes, want;
        };
        std::string flipped = good;
        flipped[flipped.size() - 3] ^= 0x20;
        const Case cases[] = {
            {"truncated", "", good.substr(0, good.size() - 4), "truncated: expected"},
            {"corrupted", "", flipped, "SHA-256 mismatch"},
            {"another seed", " --seed 7", good, "generated with seed " + std::to_string(cs::kDefaultSeed) +
                                                    ", expected seed 7"},
        };
        for (const auto& c : cases) {
            INFO(c.what);
            spit(out1, c.bytes);
            const auto s = cli(sweep + " --batch 1" + c.extra);
            const auto r = cli("run --table " + quoted(table_file) + " --golden " + quoted(root) +
                               " --variant baseline --layer a --batch 1" + c.extra);
            for (const auto& res : {s, r}) {
                INFO(res.out);
                CHECK(res.code == 2);
                CHECK_HAS(res.out, (c.extra.empty() ? out1 : manifest).string() + ": ");
                CHECK_HAS(res.out, c.want);
                CHECK_HAS(res.out, "regenerate with: convstudy generate --batch 1");
            }
        }
    }
    CHECK_FALSE(fs::exists(csv));
}

TEST_CASE("bad input: a golden file swapped for one of another set is refused by load_golden", "[bad-input][golden]") {
    TempDir d;
    const auto table = cs::parse_layer_table(kTinyTable, "tiny.json");
    cs::generate_golden(table, quiet_options(d.path / "s1", {1}));
    auto o7 = quiet_options(d.path / "s7", {1});
    o7.seed = 7;
    cs::generate_golden(table, o7);
    const fs::path in1 = d.path / "s1" / "tiny" / "n1" / "a.input.npy";
    // A whole, valid .npy of the right shape made with another seed: only the SHA-256 tells.
    fs::copy_file(d.path / "s7" / "tiny" / "n1" / "a.input.npy", in1, fs::copy_options::overwrite_existing);
    CHECK_NOTHROW(cs::read_npy_f32(in1, cs::NpyShape{1, 3, 9, 7}));
    const auto m = error_message([&] { cs::load_golden(d.path / "s1", table, table.layers[0], 1); });
    CHECK_HAS(m, in1.string());
    CHECK_HAS(m, "SHA-256 mismatch");
    CHECK_HAS(m, "regenerate with: convstudy generate --batch 1 --out " + (d.path / "s1").string());
    // An empty manifest (a disk that filled up under another tool).
    spit(d.path / "s7" / "tiny" / "manifest.json", "");
    const auto e = error_message([&] { cs::load_golden(d.path / "s7", table, table.layers[0], 1); });
    CHECK_HAS(e, "not valid JSON");
    CHECK_HAS(e, "regenerate with: convstudy generate --batch 1");
}

// ---- nothing half-written ---------------------------------------------------------------

TEST_CASE("nothing half-written: a write failure in the middle of a golden set", "[bad-input][golden][atomic]") {
    TempDir d;
    FaultGuard guard;
    // "big" has a 256 KiB input file; the manifest and the other files are far smaller, so
    // a fault after 64 KiB fails exactly that file, in the middle of its writing.
    const auto table = cs::parse_layer_table(R"({"name": "mix", "layers": [
        {"name": "small", "C": 2, "H": 6, "W": 6, "M": 2, "R": 3, "S": 3, "pad": 1},
        {"name": "big", "C": 16, "H": 64, "W": 64, "M": 2, "R": 1, "S": 1}]})", "mix.json");
    const fs::path root = d.path / "golden";
    const fs::path tdir = root / "mix";
    cs::generate_golden(table, quiet_options(root, {1}));
    const auto before = snapshot(root);
    REQUIRE(before.count("mix/n1/big.input.npy"));
    REQUIRE(before.at("mix/n1/big.input.npy").size() > (128u << 10));

    // Regenerate N=1 with another seed (new bytes for every file) and a new N=2, failing mid-way.
    auto opt = quiet_options(root, {1, 2});
    opt.seed = 7;
    cs::testing::set_atomic_write_fault(64u << 10);
    const auto msg = error_message([&] { cs::generate_golden(table, opt); });
    cs::testing::set_atomic_write_fault(std::nullopt);
    CHECK_HAS(msg, "could not write the new big N=1 set");
    CHECK_HAS(msg, "big.input.npy: write failed");
    CHECK_HAS(msg, "previous files and the manifest are unchanged");

    const auto after = snapshot(root);
    CHECK(temp_files_under(root).empty());
    // "small" N=1 was completed with seed 7 before the failure; every file of "big" is the
    // old one, byte for byte; nothing of N=2 was written.
    for (const char* f :
         {"mix/n1/big.input.npy", "mix/n1/big.weights.npy", "mix/n1/big.output.npy", "mix/n1/big.bound.npy"}) {
        INFO(f);
        REQUIRE(after.count(f));
        CHECK(after.at(f) == before.at(f));
    }
    CHECK(after.at("mix/n1/small.input.npy") != before.at("mix/n1/small.input.npy"));
    for (const auto& [path, bytes] : after) CHECK(path.find("n2/") == std::string::npos);

    // The manifest loads and lists exactly the complete sets.
    const auto m = nlohmann::json::parse(slurp(tdir / "manifest.json"));
    CHECK(m["generator"]["seed"] == 7);
    CHECK(m["files"].size() == 4);
    for (const auto& f : m["files"]) CHECK(f["layer"] == "small");
    CHECK(cs::golden_batches(root, table, table.layers[0]) == std::vector<std::int64_t>{1});
    CHECK(cs::golden_batches(root, table, table.layers[1]).empty());
    CHECK_NOTHROW(cs::load_golden(root, table, table.layers[0], 1, 7));
    CHECK_HAS(error_message([&] { cs::load_golden(root, table, table.layers[1], 1, 7); }),
              "no golden files for big at N=1 (none for this layer)");

    // A run without the fault completes what was missing.
    cs::generate_golden(table, opt);
    for (const auto& l : table.layers)
        for (std::int64_t N : {1, 2}) CHECK_NOTHROW(cs::load_golden(root, table, l, N, 7));
}

TEST_CASE("nothing half-written: a write failure in the middle of the results CSV", "[bad-input][atomic]") {
    TempDir d;
    FaultGuard guard;
    const fs::path csv = d.path / "results.csv";
    cs::cli::RunMeta meta;
    meta.timestamp = "2026-01-01T00:00:00Z";
    meta.device = "test device";
    std::vector<cs::cli::Row> rows(2);
    for (auto& r : rows) {
        r.layer = cs::default_layer_table().layers[0];
        r.N = 1;
        r.variant = cs::gpu::find_variant("baseline").variant;
        r.memory = cs::gpu::MemoryMode::pageable;
        r.result.status = cs::gpu::Status::skip;
        r.result.reason = "test row";
    }
    cs::cli::write_csv(csv, meta, rows);
    const std::string old = slurp(csv);
    REQUIRE(old.size() > 200);

    rows.resize(2000, rows[0]);  // a few hundred KB: the fault hits in the middle
    cs::testing::set_atomic_write_fault(old.size() + 100);
    const auto msg = error_message([&] { cs::cli::write_csv(csv, meta, rows); });
    cs::testing::set_atomic_write_fault(std::nullopt);
    CHECK_HAS(msg, csv.string());
    CHECK_HAS(msg, "write failed");
    CHECK(slurp(csv) == old);
    CHECK(temp_files_under(d.path).empty());
}

// ---- repeatable -------------------------------------------------------------------------

TEST_CASE("repeatable: generating twice gives byte-identical golden files", "[golden][cli]") {
    TempDir d;
    const fs::path table_file = d.path / "tiny.json";
    spit(table_file, kTinyTable);
    for (const char* out : {"g1", "g2"}) {
        const auto r = cli("generate --quiet --batch 1,3 --layers " + quoted(table_file) + " --out " +
                           quoted(d.path / out));
        INFO(r.out);
        REQUIRE(r.code == 0);
    }
    auto a = snapshot(d.path / "g1");
    auto b = snapshot(d.path / "g2");
    REQUIRE(a.size() == 1 + 2 * 2 * 4);
    REQUIRE(b.size() == a.size());
    for (const auto& [path, bytes] : a) {
        INFO(path);
        REQUIRE(b.count(path));
        if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0) CHECK(b.at(path) == bytes);
    }
    // The manifests differ only in timestamps and measured timings (oneDNN's difference
    // from the golden output is a measurement of that library's run too; our float32
    // reference's difference must repeat).
    auto strip = [](nlohmann::json m) {
        m.erase("created");
        m.erase("updated");
        for (auto& cpu : m["cpu"])
            for (const char* k : {"float32_ms", "float32_min_ms", "repeats", "onednn_ms", "onednn_min_ms",
                                  "onednn_max_abs_diff"})
                cpu.erase(k);
        return m;
    };
    const auto ma = nlohmann::json::parse(a.at("tiny/manifest.json"));
    const auto mb = nlohmann::json::parse(b.at("tiny/manifest.json"));
    CHECK(ma["cpu"]["a/n3"]["float32_ms"].is_number());  // timings were taken
    CHECK(strip(ma) == strip(mb));
}

// ---- regressions: what the fuzz targets (fuzz/) and their invariants brought up -------

TEST_CASE("fuzz regression: a number too large for a double is bad JSON, not another exception",
          "[bad-input][layers][golden]") {
    // nlohmann throws out_of_range (not parse_error) for 1e3000: it escaped as a
    // non-cs::Error (the program said "error: [json.exception...]" and exited 1, not 2).
    CHECK_HAS(error_message([] {
                  cs::parse_layer_table(R"({"layers": [{"name": "a", "C": 1e3000, "H": 1, "W": 1, "M": 1, "R": 1, "S": 1}]})",
                                        "t.json");
              }),
              "t.json: not valid JSON");
    TempDir d;
    const fs::path table = d.path / "t.json";
    spit(table, R"({"layers": [{"name": "a", "C": 1, "H": 1, "W": 1, "M": 1, "R": 1, "S": 1, "pad": 1e3000}]})");
    const auto r = cli("list --table " + quoted(table));
    CHECK(r.code == 2);
    CHECK_HAS(r.out, table.string() + ": not valid JSON");

    const auto tiny = cs::parse_layer_table(kTinyTable, "tiny.json");
    cs::generate_golden(tiny, quiet_options(d.path, {1}));
    const fs::path manifest = d.path / "tiny" / "manifest.json";
    spit(manifest, R"({"format_version": 1e3000})");
    CHECK_HAS(error_message([&] { cs::load_golden(d.path, tiny, tiny.layers[0], 1); }), "not valid JSON");
    CHECK_HAS(error_message([&] { cs::golden_batches(d.path, tiny, tiny.layers[0]); }), "not valid JSON");
    CHECK_NOTHROW(cs::generate_golden(tiny, quiet_options(d.path, {1})));  // replaced
}

TEST_CASE("fuzz regression: a manifest recording stride 0 is refused, not a division by zero",
          "[bad-input][golden]") {
    // The fuzz target's first finding: load_golden and generate (merging) printed the recorded
    // shape, whose E() divided by the stride: SIGFPE, exit 136, on `convstudy generate`.
    TempDir d;
    const auto table = cs::parse_layer_table(kTinyTable, "tiny.json");
    cs::generate_golden(table, quiet_options(d.path, {1}));
    const fs::path manifest = d.path / "tiny" / "manifest.json";
    auto j = nlohmann::ordered_json::parse(slurp(manifest));
    j["layer_table"]["layers"][0]["stride"] = 0;
    spit(manifest, j.dump());
    const auto m = error_message([&] { cs::load_golden(d.path, table, table.layers[0], 1); });
    CHECK_HAS(m, manifest.string());
    CHECK_HAS(m, "malformed golden manifest");
    CHECK_HAS(m, "'stride' must be positive");
    CHECK_HAS(m, "regenerate with");
    CHECK_HAS(error_message([&] { cs::golden_batches(d.path, table, table.layers[0]); }),
              "regenerate the golden files with: convstudy generate --out " + d.path.string());
    const fs::path tfile = d.path / "tiny.json";
    spit(tfile, kTinyTable);
    const auto r = cli("generate --quiet --no-cpu-timing --no-onednn --batch 1 --layers " + quoted(tfile) +
                       " --out " + quoted(d.path));
    INFO(r.out);
    CHECK(r.code == 0);  // the malformed manifest is replaced
    CHECK_NOTHROW(cs::load_golden(d.path, table, table.layers[0], 1));
}

TEST_CASE("regression: non-integer numbers in a manifest are refused, not converted", "[bad-input][golden]") {
    TempDir d;
    const auto table = cs::parse_layer_table(kTinyTable, "tiny.json");
    cs::generate_golden(table, quiet_options(d.path, {1}));
    const fs::path manifest = d.path / "tiny" / "manifest.json";
    const auto good = nlohmann::ordered_json::parse(slurp(manifest));
    using P = nlohmann::ordered_json::json_pointer;
    // Converting 1e300 to an integer was undefined behaviour (nlohmann's get<int>); 2.5
    // was silently read as 2. Files 0..2 are layer a's (N=1: input, weights, output).
    struct Where {
        const char* pointer;
        std::size_t layer;
    };
    const Where wheres[] = {{"/format_version", 0}, {"/generator/seed", 0}, {"/layer_table/layers/0/C", 0},
                            {"/layer_table/layers/1/pad", 1}, {"/files/0/N", 0}, {"/files/1/shape/2", 0},
                            {"/files/2/bytes", 0}};
    for (const auto& w : wheres) {
        for (double v : {1e300, -1e300, 2.5}) {
            INFO(w.pointer << " = " << v);
            auto j = good;
            j[P(w.pointer)] = v;
            spit(manifest, j.dump());
            const auto m = error_message([&] { cs::load_golden(d.path, table, table.layers[w.layer], 1); });
            CHECK_HAS(m, manifest.string());
            CHECK_HAS(m, "regenerate with");
            try {
                (void)cs::golden_batches(d.path, table, table.layers[w.layer]);  // may find no set instead
            } catch (const cs::Error& e) {
                CHECK_HAS(e.what(), manifest.string());
            }
        }
    }
    // Absurd CPU timing counts (informative only) read as unknown.
    auto j = good;
    j["cpu"]["a/n1"]["repeats"] = 1e300;
    j["cpu"]["a/n1"]["threads"] = -1e300;
    spit(manifest, j.dump());
    const auto g = cs::load_golden(d.path, table, table.layers[0], 1);
    CHECK(g.cpu.repeats == 0);
    CHECK(g.cpu.threads == 0);
    // generate merges only into a well-formed manifest; this one is replaced.
    j = good;
    j["layer_table"]["layers"][0]["M"] = 1e300;
    spit(manifest, j.dump());
    cs::generate_golden(table, quiet_options(d.path, {1}));
    CHECK_NOTHROW(cs::load_golden(d.path, table, table.layers[0], 1));
}

TEST_CASE("regression: a layer whose weight count overflows 64 bits is refused", "[bad-input][layers]") {
    // M*C*R*S = 2^80 overflowed std::int64_t (undefined behaviour; in practice it wrapped to
    // 0 and the layer was accepted) while the input (2^20) and output (2^22) are small.
    const char* t = R"({"layers": [{"name": "x", "C": 1048576, "H": 1, "W": 1, "M": 1048576,
                                     "R": 1048576, "S": 1048576, "pad": 524288}]})";
    CHECK_HAS(error_message([&] { cs::parse_layer_table(t, "huge.json"); }),
              "huge.json: layer 'x': one image's tensors exceed 2^31 elements");
}

TEST_CASE("regression: a .npy header whose data size overflows 64 bits is refused", "[bad-input][npy]") {
    TempDir d;
    // 2^54 elements of 1024 bytes: 2^64 bytes, which wrapped to 0 and matched an empty file.
    const fs::path p = d.path / "wrap.npy";
    std::string dict = "{'descr': '<V1024', 'fortran_order': False, 'shape': (18014398509481984,), }";
    const std::size_t padded = (10 + dict.size() + 1 + 63) / 64 * 64;
    dict.append(padded - 10 - dict.size() - 1, ' ');
    dict.push_back('\n');
    std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
    bytes.push_back(char(dict.size() & 0xff));
    bytes.push_back(char(dict.size() >> 8));
    spit(p, bytes + dict);
    const auto m = error_message([&] { cs::read_npy_header(p); });
    CHECK_HAS(m, p.string());
    CHECK_HAS(m, "too many");
}

TEST_CASE("regression: a device description reporting no threads per block is answered, not looped on",
          "[bad-input][registry]") {
    // The tuner's CPU test passed a cudaDeviceProp without maxThreadsPerBlock; plane_tiling
    // searched t past INT_MAX (signed overflow, 9 s) before the multi-kernel rows answered.
    const cs::gpu::PlaneTiling conv1 = cs::gpu::plane_tiling(55, 55, 1024);
    CHECK(conv1.t == 2);
    CHECK(conv1.bx == 28);
    CHECK(conv1.by == 28);
    const cs::gpu::PlaneTiling none = cs::gpu::plane_tiling(55, 55, 0);
    CHECK(none.t == 56);  // more than any plane of 55 needs: every t limit refuses it
    const cs::gpu::PlaneTiling huge = cs::gpu::plane_tiling(2147483647, 2147483647, 0);
    CHECK(huge.t == 2147483647);
    cudaDeviceProp prop = cs::test::hopper_prop();
    prop.maxThreadsPerBlock = 0;
    cs::gpu::Problem p;
    p.layer = cs::default_layer_table().layers.at(0);
    p.N = 1;
    int refused = 0;
    for (const cs::gpu::Variant& v : cs::gpu::registry())
        if (v.family == "multi-kernel") {
            INFO(v.name);
            const auto why = v.supports(p, prop);
            CHECK(why.has_value());
            refused += why.has_value();
        }
    CHECK(refused > 0);
}
