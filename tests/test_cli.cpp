// The command-line program end to end: help, version, listing, the golden folder, .csv.gz
// inputs, and every kind of bad input gives a clear message and the documented non-zero
// exit code (2 bad input, 4 no CUDA device).
#include "catch.hpp"
#include "test_util.hpp"

#include "compare.hpp"
#include "csv_table.hpp"
#include "device.hpp"
#include "merge.hpp"
#include "tolerance.hpp"
#include "variant.hpp"

#include <cuda_runtime_api.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using cs::test::CliResult;
using cs::test::cli;
using cs::test::run_command;

namespace {

bool has(const CliResult& r, const std::string& s) { return r.out.find(s) != std::string::npos; }

std::filesystem::path tmpdir(const std::string& name) {
    auto d = std::filesystem::temp_directory_path() / ("convstudy_test_cli_" + name);
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
}

std::string q(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

// `convstudy ARGS` with the environment variable NAME set to VALUE.
CliResult cli_env(const std::string& name, const std::string& value, const std::string& args) {
    return run_command(name + "='" + value + "' " + CS_CONVSTUDY_EXE + " " + args);
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

// Display columns of a UTF-8 line (continuation bytes take none).
std::size_t columns(const std::string& line) {
    return std::size_t(std::count_if(line.begin(), line.end(),
                                     [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// The commands `convstudy --help` lists (its "Subcommands:" section: "  name   what it does").
std::vector<std::string> listed_commands() {
    const auto r = cli("--help");
    REQUIRE(r.code == 0);
    std::vector<std::string> names;
    bool in = false;
    for (const auto& l : lines_of(r.out)) {
        if (l == "Subcommands:") {
            in = true;
            continue;
        }
        if (!in) continue;
        if (l.size() < 3 || l[0] != ' ' || l[2] == ' ') {
            if (l.empty() || l[0] != ' ') in = false;
            continue;
        }
        std::istringstream w(l);
        std::string name;
        w >> name;
        names.push_back(name);
    }
    return names;
}

// A gzip copy of `src` at `dst`, made by the gzip program as a user would (-n: no name or
// time in the header).
void gzip_copy(const std::filesystem::path& src, const std::filesystem::path& dst) {
    const auto r = run_command("gzip -n -c " + q(src) + " > " + q(dst));
    INFO(r.out);
    REQUIRE(r.code == 0);
}

std::string data_file(const std::string& name) {
    return (std::filesystem::path(CS_SOURCE_DIR) / "tests/data" / name).string();
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

TEST_CASE("the version --version prints is the project() line's in CMakeLists.txt", "[cli]") {
    std::ifstream f(std::filesystem::path(CS_SOURCE_DIR) / "CMakeLists.txt");
    std::stringstream text;
    text << f.rdbuf();
    std::smatch m;
    const std::string s = text.str();
    REQUIRE(std::regex_search(s, m, std::regex(R"(project\(convstudy VERSION ([0-9]+\.[0-9]+\.[0-9]+))")));
    const std::string version = m[1];
    const auto v = cli("--version");
    INFO(v.out);
    CHECK(v.code == 0);
    CHECK(v.out.rfind("convstudy " + version + " (", 0) == 0);
}

TEST_CASE("every --help line is at most 100 columns and shows no default beside REQUIRED", "[cli]") {
    const auto commands = listed_commands();
    for (const char* known : {"list", "generate", "run", "profile", "sweep", "merge", "verify", "compare"})
        CHECK(std::find(commands.begin(), commands.end(), known) != commands.end());
    // CLI11's own layout of a required option with a captured default: "--batch INT=0 REQUIRED".
    const std::regex fake_default(R"(=\S* (\.\.\. )?(x [0-9]+ )?REQUIRED)");
    // An option whose unset value means "choose" shows no "=0" beside a description that
    // states the real default.
    const std::regex zero_default(R"(^\s+-\S+ [A-Z]+=0 .*default)");
    std::vector<std::string> helps = {""};
    helps.insert(helps.end(), commands.begin(), commands.end());
    for (const auto& c : helps) {
        const auto r = cli(c + " --help");
        INFO("convstudy " << c << " --help");
        CHECK(r.code == 0);
        CHECK(lines_of(r.out).size() > 3);
        for (const auto& l : lines_of(r.out)) {
            INFO(l);
            CHECK(columns(l) <= 100);
            CHECK_FALSE(std::regex_search(l, fake_default));
            CHECK_FALSE(std::regex_search(l, zero_default));
        }
    }
    // The required options of run name no value.
    const auto run = cli("run --help");
    CHECK(has(run, "--batch INT REQUIRED"));
    CHECK(has(run, "--variant TEXT REQUIRED"));
}

TEST_CASE("a mistyped command gets the names it is close to, exit 2", "[cli]") {
    auto r = cli("sweeep --csv /tmp/never.csv");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(has(r, "unknown command 'sweeep'"));
    CHECK(has(r, "did you mean 'sweep'?"));
    r = cli("comapre a.csv b.csv");
    CHECK(r.code == 2);
    CHECK(has(r, "did you mean 'compare'?"));
    r = cli("frobnicate");
    CHECK(r.code == 2);
    CHECK(has(r, "unknown command 'frobnicate'"));
    CHECK_FALSE(has(r, "did you mean"));
    CHECK(has(r, "list, schema, generate, run"));  // the commands, in --help's order
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

TEST_CASE("list --json gives each variant's axes and each class's thresholds", "[cli]") {
    const auto j = cli("list --json");
    REQUIRE(j.code == 0);
    const auto doc = nlohmann::json::parse(j.out);
    const auto& reg = cs::gpu::registry();
    REQUIRE(doc["variants"].size() == reg.size());
    std::size_t with_axes = 0;
    for (std::size_t i = 0; i < reg.size(); ++i) {
        const auto& jv = doc["variants"][i];
        INFO(reg[i].name);
        CHECK(jv["name"] == reg[i].name);
        REQUIRE(jv["axes"].is_array());
        REQUIRE(jv["axes"].size() == reg[i].axes.size());
        for (std::size_t a = 0; a < reg[i].axes.size(); ++a) {
            CHECK(jv["axes"][a]["name"] == reg[i].axes[a].name);
            CHECK(jv["axes"][a]["values"].get<std::vector<std::string>>() == reg[i].axes[a].values);
            CHECK(jv["axes"][a]["help"] == reg[i].axes[a].help);
        }
        with_axes += reg[i].axes.empty() ? 0 : 1;
    }
    CHECK(with_axes > 0);  // the Hopper rungs have tile, schedule, ...
    using cs::gpu::Precision;
    std::vector<Precision> classes;
    for (const auto& f : cs::gpu::kPrecisions) classes.push_back(f.id);
    REQUIRE(doc["thresholds"].size() == classes.size());
    for (std::size_t i = 0; i < classes.size(); ++i) {
        const auto& t = doc["thresholds"][i];
        INFO(cs::gpu::to_string(classes[i]));
        CHECK(t["class"] == std::string(cs::gpu::to_string(classes[i])));
        CHECK(t["max_rel_err"].get<double>() == cs::gpu::threshold(classes[i]));
        CHECK(t["tau"].get<double>() == cs::gpu::bound_factor(classes[i]));
        CHECK(t["output_roundoff"].get<double>() == cs::gpu::output_roundoff(classes[i]));
        CHECK_FALSE(t["reason"].get<std::string>().empty());
    }
}

TEST_CASE("without an NVIDIA driver the GPU commands say so, exit 4", "[cli]") {
    int driver = 0;
    const bool no_driver = cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0;
    std::string why;
    const int devices = cs::gpu::cuda_device_count(&why);
    if (devices > 0) {
        SUCCEED("this machine has a CUDA device: the no-device messages cannot be seen here");
        return;
    }
    const auto r = cli("run --variant baseline --layer conv3 --batch 1 --check sampled");
    INFO(r.out);
    CHECK(r.code == 4);
    CHECK(has(r, "no CUDA device"));
    if (no_driver) {
        CHECK(has(r, "no NVIDIA driver"));
        std::string lower = r.out;
        for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
        CHECK(lower.find("insufficient") == std::string::npos);
    }
}

TEST_CASE("the golden folder: --golden or --out, else CONVSTUDY_GOLDEN, else golden", "[cli][golden]") {
    const auto d = tmpdir("golden_env");
    std::ofstream(d / "tiny.json") << R"({"name": "tiny", "layers": [
        {"name": "a", "C": 3, "H": 9, "W": 7, "M": 4, "R": 3, "S": 3, "stride": 2, "pad": 1}]})";
    const std::string table = q(d / "tiny.json");
    // generate writes where the variable says
    auto r = cli_env("CONVSTUDY_GOLDEN", (d / "env").string(), "generate --quiet --batch 1 --layers " + table);
    INFO(r.out);
    REQUIRE(r.code == 0);
    CHECK(std::filesystem::exists(d / "env" / "tiny" / "manifest.json"));
    // and --out wins over it
    r = cli_env("CONVSTUDY_GOLDEN", (d / "env").string(),
                "generate --quiet --batch 2 --layers " + table + " --out " + q(d / "given"));
    REQUIRE(r.code == 0);
    CHECK(std::filesystem::exists(d / "given" / "tiny" / "n2" / "a.output.npy"));
    CHECK_FALSE(std::filesystem::exists(d / "env" / "tiny" / "n2"));
    // verify reads where the variable says; --golden wins over it
    r = cli_env("CONVSTUDY_GOLDEN", (d / "env").string(), "verify --table " + table);
    CHECK(r.code == 0);
    CHECK(has(r, "1 of 1 golden sets verified"));
    r = cli_env("CONVSTUDY_GOLDEN", (d / "env").string(), "verify --table " + table + " --golden " + q(d / "none"));
    CHECK(r.code == 2);
    CHECK(has(r, (d / "none").string()));
    // run and sweep look for their golden sets there before they ask for a device
    r = cli_env("CONVSTUDY_GOLDEN", (d / "missing").string(), "run --variant baseline --layer conv3 --batch 1");
    CHECK(r.code == 2);
    CHECK(has(r, (d / "missing").string()));
    r = cli_env("CONVSTUDY_GOLDEN", (d / "missing").string(), "sweep --csv " + q(d / "x.csv"));
    CHECK(r.code == 2);
    CHECK(has(r, (d / "missing").string()));
    r = cli_env("CONVSTUDY_GOLDEN", (d / "missing").string(),
                "run --variant baseline --layer conv3 --batch 1 --golden " + q(d / "also_missing"));
    CHECK(r.code == 2);
    CHECK(has(r, (d / "also_missing").string()));
    CHECK_FALSE(has(r, (d / "missing/").string()));
    // an empty variable is no setting: the default folder, golden (relative)
    r = run_command("cd " + q(d) + " && CONVSTUDY_GOLDEN= " + CS_CONVSTUDY_EXE +
                    " generate --quiet --batch 1 --layers " + table);
    CHECK(r.code == 0);
    CHECK(std::filesystem::exists(d / "golden" / "tiny" / "manifest.json"));
}

TEST_CASE("compare and merge read .csv.gz as the CSV it holds", "[cli][compare][merge]") {
    const auto d = tmpdir("gzip");
    const auto a = data_file("compare_a.csv"), b = data_file("compare_b_changed.csv");
    gzip_copy(a, d / "a.csv.gz");
    gzip_copy(b, d / "b.csv.gz");
    // Same verdicts, same report, same CSV: the plain files against their gzip copies, and
    // one of each.
    const auto plain = cli("compare " + q(a) + " " + q(b) + " --csv " + q(d / "plain.csv"));
    const auto gz = cli("compare " + q(d / "a.csv.gz") + " " + q(d / "b.csv.gz") + " --csv " + q(d / "gz.csv"));
    const auto mixed = cli("compare " + q(a) + " " + q(d / "b.csv.gz") + " --csv " + q(d / "mixed.csv"));
    INFO(plain.out);
    INFO(gz.out);
    REQUIRE(plain.code == 0);
    CHECK(gz.code == plain.code);
    CHECK(mixed.code == plain.code);
    CHECK(cs::test::slurp(d / "gz.csv") == cs::test::slurp(d / "plain.csv"));
    CHECK(cs::test::slurp(d / "mixed.csv") == cs::test::slurp(d / "plain.csv"));
    auto names_out = [](std::string s, const std::string& from_a, const std::string& from_b) {
        for (const auto& [from, to] : {std::pair{from_a, std::string("A")}, std::pair{from_b, std::string("B")}})
            for (std::size_t at; (at = s.find(from)) != std::string::npos;) s.replace(at, from.size(), to);
        return s;
    };
    CHECK(names_out(gz.out, (d / "a.csv.gz").string(), (d / "b.csv.gz").string()) == names_out(plain.out, a, b));
    // A file and its own gzip copy: every row the same.
    const auto self = cli("compare " + q(a) + " " + q(d / "a.csv.gz") + " --only-changed");
    CHECK(self.code == 0);
    const auto ra = cs::cli::compare::read_results(a);
    const auto rz = cs::cli::compare::read_results((d / "a.csv.gz").string());
    REQUIRE(rz.rows.size() == ra.rows.size());
    const auto c = cs::cli::compare::compare(ra, rz, cs::cli::compare::Metric::kernel);
    for (const auto& e : c.entries) {
        INFO(e.any().layer << " " << e.any().variant << " " << e.status_change());
        REQUIRE((e.a && e.b));
        CHECK(e.a->status == e.b->status);
        // a timed row is the same; a row timed on neither side (a SKIP) is "not timed"
        CHECK(e.change == (e.a->status == "PASS" ? cs::cli::compare::Change::same : cs::cli::compare::Change::untimed));
    }

    // Two gzip members one after the other (`cat x.gz y.gz`) read as one file, as gzip -d does.
    {
        const std::string text = cs::test::slurp(a);
        const auto cut = text.find('\n', text.size() / 2) + 1;
        cs::test::spit(d / "h1.csv", text.substr(0, cut));
        cs::test::spit(d / "h2.csv", text.substr(cut));
        gzip_copy(d / "h1.csv", d / "h1.csv.gz");
        gzip_copy(d / "h2.csv", d / "h2.csv.gz");
        cs::test::spit(d / "two.csv.gz", cs::test::slurp(d / "h1.csv.gz") + cs::test::slurp(d / "h2.csv.gz"));
        const auto t = cs::cli::read_csv_table((d / "two.csv.gz").string());
        const auto p = cs::cli::read_csv_table(a);
        CHECK(t.header == p.header);
        CHECK(t.rows == p.rows);
    }

    // merge: the parts of one sweep, one of them compressed, give the same CSV as plain parts.
    {
        auto whole = cs::cli::read_csv_table(data_file("sweep_fixture.csv"));
        const int rev = whole.col("git_rev");
        REQUIRE(rev >= 0);
        for (auto& row : whole.rows) row[std::size_t(rev)] = "0123456789ab";  // one known revision
        cs::cli::CsvTable p1 = whole, p2 = whole;
        p1.rows.assign(whole.rows.begin(), whole.rows.begin() + std::ptrdiff_t(whole.rows.size() / 2));
        p2.rows.assign(whole.rows.begin() + std::ptrdiff_t(whole.rows.size() / 2), whole.rows.end());
        cs::cli::write_csv_table((d / "p1.csv").string(), p1);
        cs::cli::write_csv_table((d / "p2.csv").string(), p2);
        gzip_copy(d / "p2.csv", d / "p2.csv.gz");
        auto m = cli("merge " + q(d / "p1.csv") + " " + q(d / "p2.csv") + " -o " + q(d / "m_plain.csv"));
        INFO(m.out);
        REQUIRE(m.code == 0);
        m = cli("merge " + q(d / "p1.csv") + " " + q(d / "p2.csv.gz") + " -o " + q(d / "m_gz.csv"));
        INFO(m.out);
        REQUIRE(m.code == 0);
        CHECK(cs::test::slurp(d / "m_gz.csv") == cs::test::slurp(d / "m_plain.csv"));
        CHECK(cs::cli::read_csv_table((d / "m_gz.csv").string()).rows.size() == whole.rows.size());
    }
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

    // --layout's list is read as --memory's: each name parsed, "all" for every value.
    r = cli("sweep --csv /tmp/x.csv --memory all --layout nchw,nwhc");
    CHECK(r.code == 2);
    CHECK(has(r, "unknown layout 'nwhc'; valid layouts: nchw, nhwc"));

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

// The precision table (bench/precision.hpp) and the variants' ladders reach plots/ through list
// --json: the copy the figures read (plots/convplots/registry.json) is the program's.
TEST_CASE("list --json gives the precision table and the ladders, and plots/ reads the same", "[cli]") {
    const auto j = cli("list --json");
    REQUIRE(j.code == 0);
    const auto doc = nlohmann::json::parse(j.out);
    const auto& ps = doc["precisions"];
    REQUIRE(ps.size() == std::size(cs::gpu::kPrecisions));
    for (std::size_t i = 0; i < ps.size(); ++i) {
        const auto& f = cs::gpu::kPrecisions[i];
        INFO(f.name);
        CHECK(ps[i]["name"] == std::string(f.name));
        CHECK(ps[i]["bytes"].get<std::size_t>() == cs::gpu::dtype_bytes(f.operands));
        CHECK(ps[i]["anchor_class"] == std::string(cs::gpu::to_string(cs::gpu::anchor_class(f.id))));
        CHECK(ps[i]["ceiling_class"] == std::string(cs::gpu::to_string(cs::gpu::ceiling_class(f.id))));
        CHECK(ps[i]["colour"].get<std::string>().size() == 7);
    }
    std::ifstream in(std::string(CS_SOURCE_DIR) + "/plots/convplots/registry.json");
    REQUIRE(in);
    const auto copy = nlohmann::json::parse(in);
    CHECK(copy["precisions"] == ps);  // else: copy list --json's "precisions" into that file
    nlohmann::json ladders = nlohmann::json::object();
    for (const auto& v : doc["variants"]) ladders[v["name"].get<std::string>()] = v["ladder"];
    CHECK(copy["ladders"] == ladders);  // else: copy each variant's "ladder" into that file's "ladders"
}

TEST_CASE("chain refuses a table that is not a chain and a missing chain set before the device, exit 2", "[cli]") {
    const auto d = tmpdir("chaincli");
    const auto t = cli("chain --table resnet50 --golden " + (d / "g").string());
    INFO(t.out);
    CHECK(t.code == 2);
    CHECK(has(t, "is not a chain"));
    const auto g = cli("chain --batch 2 --golden " + (d / "g").string());
    INFO(g.out);
    CHECK(g.code == 2);
    CHECK(has(g, "convstudy generate --chain --batch 2"));
    for (const char* bad : {"--classes fp16acc", "--sides ours,pytorch", "--choice no-such-row",
                            "--choice hopper-ws-fp16 --classes bf16", "--choice cudnn-fp16"}) {
        const auto b = cli(std::string("chain ") + bad + " --golden " + (d / "g").string());
        INFO(bad << ": " << b.out);
        CHECK(b.code == 2);
    }
    // with its golden set, a machine without a GPU gets exit 4, and no CSV is left behind
    REQUIRE(cli("generate --chain --batch 1 --quiet --no-cpu-timing --out " + (d / "g").string()).code == 0);
    if (cs::gpu::cuda_device_count() > 0) return;
    const auto n = cli("chain --golden " + (d / "g").string() + " --csv " + (d / "c.csv").string());
    INFO(n.out);
    CHECK(n.code == 4);
    CHECK_FALSE(std::filesystem::exists(d / "c.csv"));
}
