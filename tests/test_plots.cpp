// plots/plot.sh end to end on the committed fixture tests/data/sweep_fixture.csv (real H200
// baseline rows plus synthetic rows, every one marked "synthetic test fixture" in `detail`):
// each expected figure is a real PNG of some size, and report.md has each of its tables; the
// same fixture rewritten in the newer CSV format (layout, algo, per-class peak_tflops) draws
// the per-class ceiling and roofline figures; `plot.sh --compare` on tests/data/compare_*.csv
// agrees with `convstudy compare`; `plot.sh --compare` of two devices on
// tests/data/compare_dev_*.csv writes the section on which rows gain from the second device's
// memory (plots/convplots/devices.py). A missing matplotlib is a failure, not a skip: the output
// carries the apt-get line.
#include "catch.hpp"
#include "test_util.hpp"
#include "shell_quote.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <utility>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

using cs::shell_quote;

namespace {

using Run = cs::test::CliResult;

Run plot(const std::vector<std::string>& args) {
    // The python CMake found with numpy goes first; plot.sh falls back to its own search.
    std::string cmd = "CS_PLOT_PYTHON=";
    cmd += shell_quote(CS_PYTHON);
    cmd += " CONVSTUDY_EXE=";  // --compare's verdicts: this build's convstudy compare --json
    cmd += shell_quote(CS_CONVSTUDY_EXE);
    cmd += ' ';
    cmd += shell_quote(std::string(CS_SOURCE_DIR) + "/plots/plot.sh");
    for (const auto& a : args) (cmd += ' ') += shell_quote(a);
    return cs::test::run_command(cmd);
}

void require_ran(const Run& r) {
    INFO("plots/plot.sh output:\n" << r.out);
    if (r.code == 3)
        FAIL("no python3 with matplotlib and numpy: apt-get install python3-matplotlib python3-numpy");
    REQUIRE(r.code == 0);
}

fs::path tmpdir(const std::string& name) {
    auto d = fs::temp_directory_path() / ("convstudy_test_plots_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

std::uint32_t be32(const std::string& s, std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
    return v;
}

void check_png(const fs::path& p) {
    INFO(p.string());
    REQUIRE(fs::is_regular_file(p));
    const std::string b = slurp(p);
    REQUIRE(b.size() > 10000);
    CHECK(b.compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) == 0);
    CHECK(b.compare(12, 4, "IHDR") == 0);
    CHECK(be32(b, 16) >= 400);  // width
    CHECK(be32(b, 20) >= 200);  // height
}

bool has(const std::string& text, const std::string& s) { return text.find(s) != std::string::npos; }

// Fields of one CSV line (quotes as results.cpp writes them).
std::vector<std::string> split_csv(const std::string& line) {
    std::vector<std::string> f(1);
    bool q = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (q) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') f.back() += '"', ++i;
            else if (c == '"') q = false;
            else f.back() += c;
        } else if (c == '"') {
            q = true;
        } else if (c == ',') {
            f.emplace_back();
        } else {
            f.back() += c;
        }
    }
    return f;
}

std::string join_csv(const std::vector<std::string>& f) {
    std::string s;
    for (std::size_t i = 0; i < f.size(); ++i) {
        if (i) s += ',';
        if (f[i].find_first_of(",\"") != std::string::npos) {
            s += '"';
            for (char c : f[i]) s += c == '"' ? std::string("\"\"") : std::string(1, c);
            s += '"';
        } else {
            s += f[i];
        }
    }
    return s;
}

fs::path fixture() { return fs::path(CS_SOURCE_DIR) / "tests/data/sweep_fixture.csv"; }

}  // namespace

TEST_CASE("the fixture is marked synthetic on every row", "[plots]") {
    std::ifstream f(fixture());
    REQUIRE(f.good());
    std::string line;
    REQUIRE(std::getline(f, line));
    const auto header = split_csv(line);
    REQUIRE(header.back() == "detail");
    int rows = 0;
    while (std::getline(f, line)) {
        const auto row = split_csv(line);
        INFO(line);
        REQUIRE(row.size() == header.size());
        CHECK(row.back().rfind("synthetic test fixture", 0) == 0);
        ++rows;
    }
    CHECK(rows > 100);
}

TEST_CASE("plot.sh draws every figure and the report's tables from the fixture", "[plots]") {
    const auto out = tmpdir("full");
    const auto r = plot({fixture().string(), out.string()});
    require_ran(r);
    INFO(r.out);

    std::vector<std::string> pngs = {"all_layers.png", "coalescing_conv1.png", "scaling.png", "errors.png",
                                     "vs_cudnn.png", "tflops.png", "ladders.png"};
    for (const char* l : {"conv1", "conv2", "conv3", "conv4", "conv5"}) {
        pngs.push_back(std::string("speedup_") + l + ".png");
        pngs.push_back(std::string("breakdown_") + l + "_N128.png");
    }
    for (const auto& p : pngs) {
        check_png(out / p);
        CHECK(has(r.out, std::string("wrote ") + (out / p).string()));
    }

    const std::string md = slurp(out / "report.md");
    REQUIRE(!md.empty());
    for (const char* h : {"# convstudy results: NVIDIA H200", "## Kernel time", "### Kernel time (ms), N = 1\n",
                          "### Kernel time (ms), N = 32\n", "### Kernel time (ms), N = 128\n",
                          "## Speedup over the CPU", "### Speedup, kernel only, N = 128",
                          "### Speedup, with copies, N = 128", "## Copy overhead",
                          "### Copy overhead (ms, h2d / d2h), io_dtype f32", "## All layers together",
                          "## Scaling with batch size", "### CPU float32 reference time (ms)",
                          "### Scaling: mk-sw-mt-si-c-vec", "## Coalesced vs uncoalesced conv1",
                          "## Error by variant", "## Ratio to cuDNN", "### Ratio to cuDNN, N = 128",
                          "## Best variant per layer and batch size", "## TFLOP/s against the fp32 ceiling",
                          "## Against each precision class's ceiling", "## Family ladders",
                          "### Ladder: multi-kernel", "## SKIP, FAIL and ERROR rows", "## Figures"}) {
        INFO(h);
        CHECK(has(md, h));
    }
    // every table says where it came from; every figure is linked relatively
    std::size_t sources = 0;
    for (std::size_t at = md.find("*Source: `"); at != std::string::npos; at = md.find("*Source: `", at + 1)) ++sources;
    CHECK(sources >= 15);
    CHECK(has(md, "sweep_fixture.csv` · NVIDIA H200 · sweep 2026-11-23 – 2026-11-24"));
    for (const auto& p : pngs) CHECK(has(md, "](" + p + ")"));
    // the FAIL, ERROR and SKIP rows are listed with their reasons
    CHECK(has(md, "| **FAIL** | mk-sw-mt-si-c-half | conv2 N=128 pageable | max_rel_err 0.0081 > threshold 0.005"));
    CHECK(has(md, "| **ERROR** | exp-mk-sw-mt-si-c-vec |"));
    CHECK(has(md, "| SKIP | exp-mk-sw-mt-si-c-vec | conv1 N=1,32,128 pageable |"));
    // the sampled check of the scaling rows is reported
    CHECK(has(md, "sampled(65536)"));
    // the older format has no per-class ceilings: those figures are skipped with a note
    CHECK(has(r.out, "skipped ceilings_N128.png: the CSV(s) have no `algo` column"));
    CHECK(has(r.out, "skipped roofline.png: the CSV(s) have no `algo` column"));
    CHECK(has(md, "Not drawn: the CSV(s) have no `algo` column"));
    CHECK_FALSE(fs::exists(out / "roofline.png"));
    fs::remove_all(out);
}

TEST_CASE("plot.sh draws the per-class ceilings and the roofline from the newer CSV format", "[plots]") {
    // the fixture with the newer columns: layout (nchw; cuDNN rows again in nhwc), algo, a
    // per-precision-class peak_tflops and copy_gbs; one row relabelled winograd (effective)
    const auto dir = tmpdir("newformat");
    std::ifstream f(fixture());
    std::string line;
    REQUIRE(std::getline(f, line));
    auto cols = split_csv(line);
    auto col = [&](const std::string& name) {
        for (std::size_t i = 0; i < cols.size(); ++i)
            if (cols[i] == name) return i;
        FAIL("no column " << name);
        return std::size_t{0};
    };
    const std::size_t mem = col("memory"), fam = col("family"), prec = col("precision"), var = col("variant"),
                      layer = col("layer"), batch = col("N"), peak = col("peak_tflops"), pct = col("pct_peak"),
                      tfl = col("tflops");
    auto widen = [&](std::vector<std::string> row, const std::string& layout, const std::string& algo) {
        row.insert(row.begin() + std::ptrdiff_t(mem + 1), {layout, algo});
        row.push_back("4800");
        return row;
    };
    std::vector<std::string> header = widen(cols, "layout", "algo");
    header.back() = "copy_gbs";
    std::ofstream o(dir / "new.csv");
    o << join_csv(header) << '\n';
    while (std::getline(f, line)) {
        auto row = split_csv(line);
        const std::string p = row[prec];
        const double pk = p == "fp32" ? 60.0 : p == "tf32" ? 400.0 : 800.0;
        row[peak] = std::to_string(pk);
        if (!row[tfl].empty()) row[pct] = std::to_string(100.0 * std::stod(row[tfl]) / pk);
        std::string algo = row[fam] == "cudnn" ? "library" : row[fam] == "gemm" ? "gemm" : "direct";
        if (row[var] == "mk-sw-mt-si-c-vec" && row[layer] == "conv3" && row[batch] == "128") algo = "winograd";
        o << join_csv(widen(row, "nchw", algo)) << '\n';
        if (row[fam] == "cudnn") o << join_csv(widen(row, "nhwc", "library")) << '\n';
    }
    o.close();
    const auto out = dir / "out";
    const auto r = plot({(dir / "new.csv").string(), out.string()});
    require_ran(r);
    INFO(r.out);
    for (const char* p : {"ceilings_N128.png", "roofline.png", "ladders.png", "tflops.png", "vs_cudnn.png"})
        check_png(out / p);
    const std::string md = slurp(out / "report.md");
    CHECK(has(md, "## Against each precision class's ceiling"));
    CHECK(has(md, "fp32 60.0 TFLOP/s"));
    CHECK(has(md, "copy bandwidth 4,800 GB/s"));
    CHECK(has(md, " eff."));                  // the winograd row is effective
    CHECK(has(md, "cudnn-fp32/nhwc"));        // an nhwc row is its own variant, not a replacement
    CHECK(has(md, "FLOP / byte"));
    CHECK(has(md, "](ceilings_N128.png)"));
    CHECK(has(md, "](roofline.png)"));
    fs::remove_all(dir);
}

TEST_CASE("plot.sh --compare draws run B against run A as convstudy compare judges it", "[plots][compare]") {
    const auto dir = tmpdir("compare");
    const std::string a = (fs::path(CS_SOURCE_DIR) / "tests/data/compare_a.csv").string();
    const std::string b = (fs::path(CS_SOURCE_DIR) / "tests/data/compare_b_changed.csv").string();
    const auto r = plot({"--compare", a, b, dir.string()});
    require_ran(r);
    INFO(r.out);
    for (const char* n : {"1", "32", "128"})
        for (const char* m : {"kernel", "total"}) check_png(dir / (std::string("compare_") + m + "_N" + n + ".png"));
    const std::string md = slurp(dir / "compare.md");
    // the same verdicts as the C++ command, for both metrics
    for (const char* metric : {"kernel", "total"}) {
        const auto c = cs::test::cli(std::string("compare --metric ") + metric + " '" + a + "' '" + b + "'");
        REQUIRE(c.code == 0);
        const auto at = c.out.find(" rows timed on both sides");
        REQUIRE(at != std::string::npos);
        const auto from = c.out.rfind('\n', at) + 1;
        const std::string summary = c.out.substr(from, c.out.find('\n', at) - from);
        INFO(summary);
        CHECK(has(md, summary));
        CHECK(has(r.out, summary));
    }
    CHECK(has(md, "| status worse | conv3 | 32 | wmma-fp16 |"));
    CHECK(has(md, "| slower | conv2 | 128 | register-acc |"));
    CHECK(has(md, "## By family and layer"));
    // one device on both sides: no device section, no device figure (the output stays as it was)
    CHECK_FALSE(has(md, "Which rows gain from the second device's memory"));
    CHECK_FALSE(fs::exists(dir / "compare_devices.png"));
    CHECK_FALSE(has(r.out, "compare_devices.png"));
    // usage errors
    CHECK(plot({"--compare", a, dir.string()}).code == 2);
    CHECK(plot({"--compare", a, (dir / "missing.csv").string(), (dir / "o").string()}).code != 0);
    // no convstudy to take the verdicts from: exit 3, saying how to get one
    const auto none = cs::test::run_command("CS_PLOT_PYTHON=" + shell_quote(CS_PYTHON) +
                                            " CONVSTUDY_EXE=/nonexistent/convstudy " +
                                            shell_quote(std::string(CS_SOURCE_DIR) + "/plots/plot.sh") + " --compare " +
                                            shell_quote(a) + " " + shell_quote(b) + " " + shell_quote((dir / "n").string()));
    INFO(none.out);
    CHECK(none.code == 3);
    CHECK(has(none.out, "CONVSTUDY_EXE"));
    fs::remove_all(dir);
}

TEST_CASE("plot.sh merges CSVs, replaces repeated rows and skips figures without data", "[plots]") {
    const auto dir = tmpdir("merge");
    const auto out = dir / "out";
    // first CSV: only the baseline rows (no cuDNN anchor, no uncoalesced pairs)
    std::ifstream f(fixture());
    std::string header, line, conv1_n1;
    REQUIRE(std::getline(f, header));
    const auto cols = split_csv(header);
    auto col = [&](const std::string& name) {
        for (std::size_t i = 0; i < cols.size(); ++i)
            if (cols[i] == name) return i;
        FAIL("no column " << name);
        return std::size_t{0};
    };
    std::ofstream a(dir / "a.csv"), b(dir / "b.csv"), c(dir / "c.csv");
    a << header << '\n';
    b << header << '\n';
    c << header << ",axes\n";  // a tile sweep's row of the same key: its own variant, not a replacement
    while (std::getline(f, line)) {
        auto row = split_csv(line);
        if (row[col("variant")] != "baseline") continue;
        a << line << '\n';
        if (row[col("layer")] == "conv1" && row[col("N")] == "1" && row[col("memory")] == "pageable") {
            // second CSV: the same (device, layer, N, variant, memory) with another time
            row[col("kernel_ms")] = "777.777";
            b << join_csv(row) << '\n';
            row[col("kernel_ms")] = "555.555";
            c << join_csv(row) << ",tile=x\n";
        }
    }
    a.close();
    b.close();
    c.close();

    const auto r = plot({(dir / "a.csv").string(), (dir / "b.csv").string(), (dir / "c.csv").string(), out.string(),
                         "--title-suffix", "test"});
    require_ran(r);
    INFO(r.out);
    CHECK(has(r.out, "skipped vs_cudnn.png: no rows of family `cudnn`"));
    CHECK(has(r.out, "skipped coalescing_conv1.png"));
    CHECK_FALSE(fs::exists(out / "vs_cudnn.png"));
    CHECK_FALSE(fs::exists(out / "coalescing_conv1.png"));
    check_png(out / "speedup_conv1.png");
    check_png(out / "breakdown_conv1_N128.png");
    check_png(out / "errors.png");
    const std::string md = slurp(out / "report.md");
    CHECK(has(md, "| baseline | baseline | fp32 | 778 |"));  // the later row won
    CHECK(has(md, "baseline[tile=x]"));                       // the row with axes kept apart
    CHECK(has(md, "| 556 |"));
    CHECK(has(md, "No cuDNN rows"));
    CHECK(has(md, std::string("`") + (dir / "a.csv").string() + "`, `" + (dir / "b.csv").string() + "`, `" +
                      (dir / "c.csv").string() + "`"));

    // bad input: a header with no rows, and a file that is not a convstudy CSV
    std::ofstream(dir / "empty.csv") << header << '\n';
    const auto e = plot({(dir / "empty.csv").string(), (dir / "out2").string()});
    CHECK(e.code != 0);
    CHECK(has(e.out, "no rows"));
    std::ofstream(dir / "other.csv") << "x,y\n1,2\n";
    const auto o = plot({(dir / "other.csv").string(), (dir / "out3").string()});
    CHECK(o.code != 0);
    CHECK(has(o.out, "not a convstudy CSV"));
    fs::remove_all(dir);
}

// ------------------------------------------------------------------------------------------
// Two devices: which rows gain from the second device's memory.
//
// tests/data/compare_dev_h200.csv: 23 rows copied unchanged from the H200 sweep at 4334f52
// (results/h200/sweep_all_variants.csv.gz)
// (hopper-wgmma-fp16 at N = 1, 32, 128; mk-sw-mt-si-c-half and cudnn-fp32 at N = 128;
// mk-sw-mt-si-c-vec, cudnn-fp16 and winograd-f2x2 (one SKIP row) besides).
// tests/data/compare_dev_h100.csv: the same rows made into a synthetic H100 by one rule:
//   device "NVIDIA H100 80GB HBM3", copy_gbs 3000, peak_tflops unchanged; a row is memory-bound
//   on that card when its fewest bytes (input + weights + output once, io_dtype) / 3000 GB/s
//   exceed gflop / peak_tflops; its kernel_ms, kernel_min_ms, kernel_max_ms are the H200 row's
//   times x 4257.91 / 3000 (tflops and pct_peak / that factor, 6 significant digits); a
//   compute-bound row's times are unchanged; `detail` says which (prefix "synthetic test fixture").
// The test checks the fixture against the rule first, then what the section makes of it.

namespace {

struct Csv {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
    std::size_t col(const std::string& name) const {
        for (std::size_t i = 0; i < header.size(); ++i)
            if (header[i] == name) return i;
        FAIL("no column " << name);
        return 0;
    }
    const std::string& at(std::size_t row, const std::string& name) const { return rows[row][col(name)]; }
    double num(std::size_t row, const std::string& name) const { return std::stod(at(row, name)); }
    void write(const fs::path& p) const {
        std::ofstream o(p);
        o << join_csv(header) << '\n';
        for (const auto& r : rows) o << join_csv(r) << '\n';
    }
};

Csv read_csv(const fs::path& p) {
    std::ifstream f(p);
    REQUIRE(f.good());
    Csv c;
    std::string line;
    REQUIRE(std::getline(f, line));
    c.header = split_csv(line);
    while (std::getline(f, line)) {
        c.rows.push_back(split_csv(line));
        REQUIRE(c.rows.back().size() == c.header.size());
    }
    return c;
}

// Bytes a row moves at least: input, weights and output once in its io_dtype.
double fewest_bytes(const Csv& c, std::size_t i) {
    auto n = [&](const char* k) { return std::stod(c.at(i, k)); };
    const double elem = c.at(i, "io_dtype") == "f32" ? 4.0 : 2.0;
    return (n("N") * n("C") * n("H") * n("W") + n("M") * n("C") * n("R") * n("S") + n("N") * n("M") * n("E") * n("F")) *
           elem;
}

bool memory_bound(const Csv& c, std::size_t i, double gbs) {
    return fewest_bytes(c, i) / (gbs * 1e9) > c.num(i, "gflop") * 1e9 / (c.num(i, "peak_tflops") * 1e12);
}

fs::path dev_fixture(const char* name) { return fs::path(CS_SOURCE_DIR) / "tests/data" / name; }

// The markdown table line of one row of the section's per-layer table (N = 128), split in cells.
std::vector<std::string> table_row(const std::string& md, const std::string& variant, const std::string& layer) {
    const auto from = md.find("### Per layer, N = 128");
    if (from == std::string::npos) return {};
    std::istringstream in(md.substr(from));
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("| ", 0) != 0) continue;
        std::vector<std::string> cells;
        std::size_t at = 2;
        for (std::size_t bar = line.find(" | ", at); bar != std::string::npos; bar = line.find(" | ", at)) {
            cells.push_back(line.substr(at, bar - at));
            at = bar + 3;
        }
        if (cells.size() > 2 && (cells[0] == variant || cells[0] == variant + " eff.") && cells[1] == layer)
            return cells;
        if (line.rfind("## Changed rows", 0) == 0) break;
    }
    return {};
}

}  // namespace

TEST_CASE("plot.sh --compare of two devices says which rows gain from the second device's memory",
          "[plots][compare]") {
    const auto h100 = dev_fixture("compare_dev_h100.csv"), h200 = dev_fixture("compare_dev_h200.csv");
    const Csv a = read_csv(h100), b = read_csv(h200);
    const double ratio = 4257.91 / 3000.0;

    // the fixture follows its rule
    REQUIRE(a.rows.size() == b.rows.size());
    REQUIRE(a.rows.size() >= 20);
    std::map<std::string, int> mem_h100, mem_h200, fam_rows;
    for (std::size_t i = 0; i < a.rows.size(); ++i) {
        INFO(join_csv(b.rows[i]));
        CHECK(a.at(i, "device") == "NVIDIA H100 80GB HBM3");
        CHECK(b.at(i, "device") == "NVIDIA H200");
        CHECK(a.at(i, "copy_gbs") == "3000");
        CHECK(b.at(i, "copy_gbs") == "4257.91");
        for (const char* k :
             {"layer", "N", "variant", "precision", "memory", "layout", "status", "peak_tflops", "gflop"})
            CHECK(a.at(i, k) == b.at(i, k));
        CHECK(a.at(i, "detail").rfind("synthetic test fixture", 0) == 0);
        if (b.at(i, "status") != "PASS") continue;
        const bool mem = memory_bound(a, i, 3000.0);
        const double k = mem ? ratio : 1.0;
        for (const char* t : {"kernel_ms", "kernel_min_ms", "kernel_max_ms"})
            CHECK(a.num(i, t) == Approx(b.num(i, t) * k).epsilon(1e-5));
        CHECK(has(a.at(i, "detail"), mem ? "memory-bound on the H100" : "compute-bound on the H100"));
        ++fam_rows[b.at(i, "family")];
        mem_h100[b.at(i, "family")] += mem;
        mem_h200[b.at(i, "family")] += memory_bound(b, i, 4257.91);
    }
    CHECK(fam_rows["hopper"] == 9);
    CHECK(mem_h100["hopper"] == 5);
    CHECK(mem_h200["hopper"] == 3);
    CHECK(mem_h100["cudnn"] == 1);
    CHECK(mem_h100["multi-kernel"] == 1);
    CHECK(mem_h100["fp32-fast"] == 0);

    const auto dir = tmpdir("devices");
    const auto out = dir / "out";
    const auto r = plot({"--compare", h100.string(), h200.string(), out.string()});
    require_ran(r);
    INFO(r.out);
    check_png(out / "compare_devices.png");
    CHECK(has(r.out, "wrote " + (out / "compare_devices.png").string()));
    const std::string md = slurp(out / "compare.md");
    REQUIRE(has(md, "## Which rows gain from the second device's memory"));
    CHECK(has(md, "](compare_devices.png)"));
    // each device's ceilings come from its own CSV
    CHECK(has(md, "| copy bandwidth (copy_gbs, GB/s) | 3,000 | 4,258 | 1.419 |"));
    CHECK(has(md, "| fp16 peak, TFLOP/s (ridge, FLOP/byte) | 769 (ridge 256) | 769 (ridge 181) | 1.000 |"));

    // every row at N = 128 is classified on each card as the rule says
    int checked = 0;
    for (std::size_t i = 0; i < b.rows.size(); ++i) {
        if (b.at(i, "N") != "128" || b.at(i, "status") != "PASS") continue;
        INFO(b.at(i, "variant") << " " << b.at(i, "layer"));
        const auto cells = table_row(md, b.at(i, "variant"), b.at(i, "layer"));
        REQUIRE(cells.size() >= 8);  // variant, layer, precision, GFLOP, MB, H100 floor, time / floor, H200 floor
        CHECK(has(cells[5], memory_bound(a, i, 3000.0) ? "(memory)" : "(compute)"));
        CHECK(has(cells[7], memory_bound(b, i, 4257.91) ? "(memory)" : "(compute)"));
        ++checked;
    }
    CHECK(checked == 17);
    // a row compute-bound on both, one memory-bound on the H100 only (far from both floors: the
    // measured gain is the bandwidth ratio, the floors predict less), one compute-bound and far
    CHECK(has(md, "| hopper-wgmma-fp16 | conv2 | fp16 | 115 | 66.9 | 149 (compute) | 2.09 | 149 (compute) | 2.09 | "
                  "1.000 | 1.000 | same | compute-bound |  |"));
    CHECK(has(md, "| hopper-wgmma-fp16 | conv1 | fp16 | 27.0 | 114 | 38.0 (memory) | 9.69 | 35.1 (compute) | 7.40 | "
                  "0.923 | 0.705 | faster | far (>5× floor) | **yes**: far from both floors: latency/occupancy-bound, "
                  "gains only via L2/memory latency |"));
    CHECK(has(md, "| mk-sw-mt-si-c-vec | conv1 | fp32 | 27.0 | 228 | 422 (compute) | 14.0 | 422 (compute) | 14.0 | "
                  "1.000 | 1.000 | same | far (>5× floor) |  |"));
    CHECK(has(md, "| cudnn-fp32 eff. | conv2 | fp32 |"));  // cuDNN's engine here does fewer FLOPs

    // the family summary: per N and over all N, and in sentences (also printed)
    CHECK(has(md, "| hopper | 1 | 3 | 3 | 3 | 3 | 0.705 | 0.705 | 3 / 0 / 0 | 0 |"));
    CHECK(has(md, "|  | 32 | 1 | 1 | 0 | 1 | 0.921 | 0.705 | 1 / 0 / 0 | 1 |"));
    CHECK(has(md, "|  | **all** | **9** | **5** | **3** | **5** | **0.874** | **0.823** | **5 / 4 / 0** | **2** |"));
    for (const char* s :
         {"hopper: 5 of 9 rows memory-bound on the H100 (3 on the H200), measured 1.21× faster on the H200 (predicted "
          "1.14×). By the noise verdict 5 faster, 4 same, 0 slower; 5 far from both floors (over 5× the floor on "
          "both cards); 2 depart from the prediction by more than the noise.",
          "cudnn: 1 of 6 rows memory-bound on the H100, measured 1.06× faster on the H200 (predicted 1.06×).",
          "multi-kernel: 1 of 6 rows memory-bound on the H100 (0 on the H200), measured 1.06× faster on the H200 "
          "(predicted 1.01×).",
          "fp32-fast: 0 of 1 row memory-bound on the H100, measured as fast (1.00×) on the H200 (predicted the "
          "same)."}) {
        CHECK(has(md, std::string("- ") + s));
        CHECK(has(r.out, s));
    }
    // the rows that depart from the prediction, every N
    CHECK(has(md, "| hopper | conv1 | 32 | hopper-wgmma-fp16 | fp16 | 0.921 | 0.705 |"));
    CHECK(has(md, "| hopper | conv1 | 128 | hopper-wgmma-fp16 | fp16 | 0.923 | 0.705 |"));
    CHECK(has(md, "| multi-kernel | conv1 | 128 | mk-sw-mt-si-c-half | fp16 | 0.923 | 0.705 |"));

    // the other two reasons: the hopper conv1 row twice as fast on both cards (4.8× and 3.7× its
    // floors: no longer far), and the cuDNN fp32 conv1 row 10 % faster on the H200 only
    {
        Csv a2 = a, b2 = b;
        for (Csv* c : {&a2, &b2})
            for (std::size_t i = 0; i < c->rows.size(); ++i) {
                const bool hop = c->at(i, "variant") == "hopper-wgmma-fp16" && c->at(i, "layer") == "conv1" &&
                                 c->at(i, "N") == "128";
                const bool dnn = c == &b2 && c->at(i, "variant") == "cudnn-fp32" && c->at(i, "layer") == "conv1" &&
                                 c->at(i, "N") == "128";
                if (!hop && !dnn) continue;
                for (const char* t : {"kernel_ms", "kernel_min_ms", "kernel_max_ms"})
                    c->rows[i][c->col(t)] = std::to_string(c->num(i, t) * (hop ? 0.5 : 0.9));
            }
        a2.write(dir / "a2.csv");
        b2.write(dir / "b2.csv");
        const auto r2 =
            plot({"--compare", (dir / "a2.csv").string(), (dir / "b2.csv").string(), (dir / "o2").string()});
        require_ran(r2);
        const std::string md2 = slurp(dir / "o2" / "compare.md");
        INFO(md2);
        CHECK(has(md2, "| 0.923 | 0.705 | faster | memory-bound | **yes**: memory-bound: gains up to the bandwidth "
                       "ratio |"));
        CHECK(has(md2, "| 1.000 | 0.900 | faster | compute-bound | **yes**: compute-bound on both: no gain "
                       "expected |"));
        CHECK(has(md2, "| cudnn | conv1 | 128 | cudnn-fp32 | fp32 | 1.000 | 0.900 |"));
    }

    // an older CSV without copy_gbs: said, and the prediction left out
    {
        Csv a3 = a;
        for (auto& row : a3.rows) row[a3.col("copy_gbs")].clear();
        a3.write(dir / "a3.csv");
        const auto r3 = plot({"--compare", (dir / "a3.csv").string(), h200.string(), (dir / "o3").string()});
        require_ran(r3);
        CHECK(has(r3.out, "skipped compare_devices.png: no prediction"));
        CHECK_FALSE(fs::exists(dir / "o3" / "compare_devices.png"));
        const std::string md3 = slurp(dir / "o3" / "compare.md");
        INFO(md3);
        CHECK(has(md3, "## Which rows gain from the second device's memory"));
        CHECK(has(md3, "**No prediction**: A (`" + (dir / "a3.csv").string() + "`) has no copy_gbs"));
        CHECK_FALSE(has(md3, "predicted B / A"));
        CHECK(has(md3, "- hopper: 9 rows, measured 1.21× faster on the H200; by the noise verdict 5 faster, 4 same, "
                       "0 slower."));
        CHECK(has(md3, "| variant | layer | precision | measured B / A | verdict |"));
    }
    fs::remove_all(dir);
}

// ------------------------------------------------------------------------------------------
// The answer the report opens with (plots/convplots/summary.py, the README's headline table):
// ours / cuDNN, below 1 = ours faster, recomputed here from the fixture's kernel_ms.

TEST_CASE("the report opens with ours / cuDNN per class, recomputed from kernel_ms", "[plots]") {
    const Csv c = read_csv(fixture());
    // the fastest PASS row of ours (not a library family) and cuDNN of the class, conv2 N=128
    auto fastest = [&](const std::string& cls, bool cudnn) {
        double best = 0;
        std::string name;
        for (std::size_t i = 0; i < c.rows.size(); ++i) {
            const std::string fam = c.at(i, "family"), prec = c.at(i, "precision");
            const std::string as = prec == "fp16acc" ? "fp16" : prec;  // the legacy class rule (classes.py)
            if (c.at(i, "layer") != "conv2" || c.at(i, "N") != "128" || c.at(i, "status") != "PASS" || as != cls)
                continue;
            const bool lib = fam == "cudnn" || fam == "cudnn-legacy" || fam == "cublas";
            if (cudnn ? c.at(i, "variant") != "cudnn-" + cls : lib) continue;
            const double ms = c.num(i, "kernel_ms");
            if (name.empty() || ms < best) best = ms, name = c.at(i, "variant");
        }
        REQUIRE(!name.empty());
        return std::make_pair(best, name);
    };
    const auto out = tmpdir("answer");
    const auto r = plot({fixture().string(), out.string()});
    require_ran(r);
    const std::string md = slurp(out / "report.md");
    for (const char* cls : {"fp32", "fp16"}) {
        const auto [ours, ours_name] = fastest(cls, false);
        const auto [dnn, dnn_name] = fastest(cls, true);
        char ratio[32];
        std::snprintf(ratio, sizeof ratio, "%.3g", ours / dnn);
        INFO(cls << " conv2 N=128: " << ours_name << " " << ours << " / " << dnn_name << " " << dnn);
        // the cell of the opening table and the row that names both sides
        CHECK(has(md, std::string("| ") + cls + " | conv2 | 128 | " + ours_name + "/nchw | "));
        CHECK(has(md, std::string(" | ") + dnn_name + "/nchw | "));
        const auto row = md.find(std::string("| ") + cls + " | conv2 | 128 | " + ours_name + "/nchw | ");
        REQUIRE(row != std::string::npos);
        CHECK(md.substr(row, md.find('\n', row) - row).find(std::string("| ") + ratio + " |") != std::string::npos);
    }
    // the opening table comes first, says which way the ratio divides, and no old direction
    const auto table = md.find("| class | N | conv1 |");
    REQUIRE(table != std::string::npos);
    CHECK(table < md.find("## Kernel time"));
    CHECK(has(md, "below 1 = ours faster"));
    CHECK_FALSE(has(md, "vs_cudnn` ="));
    fs::remove_all(out);
}

namespace {

std::uint32_t png_height(const fs::path& p) { return be32(slurp(p), 20); }

}  // namespace

TEST_CASE("figures stay under 1,600 px and 20 rows: more variants are drawn in parts, ranked", "[plots]") {
    // the fixture's 13 variants three times over (renamed copies with scaled times): 39 rows
    const auto dir = tmpdir("rows");
    Csv c = read_csv(fixture());
    const auto base = c.rows;
    for (int k = 1; k <= 2; ++k)
        for (auto row : base) {
            row[c.col("variant")] += "-copy" + std::to_string(k);
            for (const char* t : {"kernel_ms", "kernel_min_ms", "kernel_max_ms"})
                if (!row[c.col(t)].empty()) row[c.col(t)] = std::to_string(std::stod(row[c.col(t)]) * (1 + 0.1 * k));
            c.rows.push_back(row);
        }
    c.write(dir / "many.csv");
    const auto out = dir / "out";
    const auto r = plot({(dir / "many.csv").string(), out.string()});
    require_ran(r);
    INFO(r.out);
    // 39 variants: speedup, vs_cudnn and errors come in parts of at most 20 rows
    for (const char* stem : {"speedup_conv2", "vs_cudnn", "errors", "tflops"}) {
        INFO(stem);
        CHECK_FALSE(fs::exists(out / (std::string(stem) + ".png")));
        check_png(out / (std::string(stem) + "_1.png"));
        check_png(out / (std::string(stem) + "_2.png"));
    }
    int pngs = 0;
    for (const auto& e : fs::directory_iterator(out)) {
        if (e.path().extension() != ".png") continue;
        INFO(e.path().string());
        CHECK(png_height(e.path()) <= 1600);
        ++pngs;
    }
    CHECK(pngs > 20);
    // the report links every part
    CHECK(has(r.out, "wrote " + (out / "speedup_conv2_2.png").string()));
    const std::string md = slurp(out / "report.md");
    CHECK(has(md, "](speedup_conv2_1.png)"));
    CHECK(has(md, "](speedup_conv2_2.png)"));
    fs::remove_all(dir);
}
