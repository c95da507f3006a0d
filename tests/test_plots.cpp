// plots/plot.sh end to end on the committed fixture tests/data/sweep_fixture.csv (real H200
// baseline rows plus synthetic rows, every one marked "synthetic test fixture" in `detail`):
// each expected figure is a real PNG of some size, and report.md has each of its tables; the
// same fixture rewritten in the newer CSV format (layout, algo, per-class peak_tflops) draws
// the per-class ceiling and roofline figures; `plot.sh --compare` on tests/data/compare_*.csv
// agrees with `convstudy compare`. A missing matplotlib is a failure, not a skip: the output
// carries the apt-get line.
#include "catch.hpp"
#include "test_util.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

using Run = cs::test::CliResult;

std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

Run plot(const std::vector<std::string>& args) {
    // The python CMake found with numpy goes first; plot.sh falls back to its own search.
    std::string cmd = "CS_PLOT_PYTHON=";
    cmd += shell_quote(CS_PYTHON);
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
    // usage errors
    CHECK(plot({"--compare", a, dir.string()}).code == 2);
    CHECK(plot({"--compare", a, (dir / "missing.csv").string(), (dir / "o").string()}).code != 0);
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
    std::ofstream a(dir / "a.csv"), b(dir / "b.csv");
    a << header << '\n';
    b << header << '\n';
    while (std::getline(f, line)) {
        auto row = split_csv(line);
        if (row[col("variant")] != "baseline") continue;
        a << line << '\n';
        if (row[col("layer")] == "conv1" && row[col("N")] == "1" && row[col("memory")] == "pageable") {
            // second CSV: the same (device, layer, N, variant, memory) with another time
            row[col("kernel_ms")] = "777.777";
            b << join_csv(row) << '\n';
        }
    }
    a.close();
    b.close();

    const auto r = plot({(dir / "a.csv").string(), (dir / "b.csv").string(), out.string(), "--title-suffix", "test"});
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
    CHECK(has(md, "No cuDNN rows"));
    CHECK(has(md, std::string("`") + (dir / "a.csv").string() + "`, `" + (dir / "b.csv").string() + "`"));

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
