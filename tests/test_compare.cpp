// `convstudy compare` on the committed fixtures tests/data/compare_*.csv: rows cut from
// plots/h200/sweep_all_variants.csv (marked "test fixture" in `detail`), with synthetic
// changes marked "synthetic test fixture: ..." in run B:
//   compare_a.csv          9 rows: 8 PASS, 1 SKIP (the old CSV format, no `layout` column)
//   compare_b_changed.csv  the same keys, except: register-acc conv2 N=128 1.5x slower,
//                          im2col-gemm conv2 N=128 0.8x, cudnn-fp16 conv2 N=128's median moved
//                          inside A's spread, wmma-fp16 conv3 N=32 PASS -> FAIL, wmma-tf32
//                          conv5 N=1 PASS -> SKIP, tiled-input conv4 N=32 gone, cudnn-tf32
//                          conv3 N=1 new
//   compare_b_h100.csv     A's rows on another device and git revision, in the newer format
//                          (`layout`, `algo` columns), plus one nhwc row
#include "catch.hpp"
#include "test_util.hpp"

#include "compare.hpp"
#include "results.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using cs::test::CliResult;
using cs::test::cli;
namespace fs = std::filesystem;

namespace {

std::string data(const std::string& name) { return (fs::path(CS_SOURCE_DIR) / "tests/data" / name).string(); }

std::string q(const std::string& s) { return "'" + s + "'"; }

CliResult compare(const std::string& a, const std::string& b, const std::string& opts = "") {
    return cli("compare " + q(a) + " " + q(b) + (opts.empty() ? "" : " " + opts));
}

bool has(const std::string& text, const std::string& s) { return text.find(s) != std::string::npos; }

// Simple CSV split (the compare CSV quotes nothing in these fixtures).
std::vector<std::map<std::string, std::string>> read_csv(const fs::path& p) {
    std::ifstream f(p);
    std::string line;
    std::vector<std::string> header;
    std::vector<std::map<std::string, std::string>> rows;
    auto split = [](const std::string& l) {
        std::vector<std::string> out(1);
        for (char c : l) {
            if (c == ',') out.emplace_back();
            else out.back() += c;
        }
        return out;
    };
    if (!std::getline(f, line)) return rows;
    header = split(line);
    while (std::getline(f, line)) {
        const auto v = split(line);
        REQUIRE(v.size() == header.size());
        std::map<std::string, std::string> m;
        for (std::size_t i = 0; i < v.size(); ++i) m[header[i]] = v[i];
        rows.push_back(m);
    }
    return rows;
}

// The line of the terminal table that names `variant`.
std::string table_line(const std::string& out, const std::string& variant, const std::string& layer) {
    std::istringstream s(out);
    std::string line;
    while (std::getline(s, line))
        if (has(line, "  " + variant + "  ") && has(line, layer)) return line;
    return "";
}

}  // namespace

TEST_CASE("compare: the noise-aware verdict", "[compare]") {
    using cs::cli::compare::judge;
    using cs::cli::compare::Timing;
    using cs::cli::compare::Verdict;
    const Timing a{1.0, 0.9, 1.1};
    CHECK(judge(a, a) == Verdict::same);
    CHECK(judge(a, {1.05, 1.04, 1.06}) == Verdict::same);   // B's median inside A's spread
    CHECK(judge(a, {1.2, 1.05, 1.3}) == Verdict::slower);   // neither median inside the other's spread
    CHECK(judge(a, {1.2, 0.95, 1.3}) == Verdict::same);     // A's median inside B's spread
    CHECK(judge(a, {1.5, 1.45, 1.55}) == Verdict::slower);
    CHECK(judge(a, {0.5, 0.45, 0.55}) == Verdict::faster);
    CHECK(judge({1.0, NAN, NAN}, {1.0, NAN, NAN}) == Verdict::same);  // no spread recorded
    CHECK(judge({1.0, NAN, NAN}, {1.001, NAN, NAN}) == Verdict::slower);
    CHECK(judge({NAN, NAN, NAN}, a) == Verdict::none);
}

TEST_CASE("compare: one outlier repeat neither hides nor invents a change", "[compare]") {
    using cs::cli::compare::judge;
    using cs::cli::compare::Timing;
    using cs::cli::compare::Verdict;
    // 20 repeats of a steady 1.000-1.019 ms, and the same with one repeat 23% slower (a
    // cuDNN row's max reaches that) or 30% faster.
    std::vector<double> steady, slow_outlier, fast_outlier;
    for (int i = 0; i < 20; ++i) steady.push_back(1.0 + 0.001 * i);
    slow_outlier = fast_outlier = steady;
    slow_outlier.back() = 1.23;
    fast_outlier.front() = 0.70;
    auto timing = [](const std::vector<double>& v, double scale = 1.0) {
        std::vector<double> w;
        for (double x : v) w.push_back(x * scale);
        const auto s = cs::gpu::Stat::of(w);
        return Timing{s.median, s.min, s.max, s.p10, s.p90};
    };
    auto without_spread = [](Timing t) { return Timing{t.med, t.min, t.max}; };
    // a real 8% slowdown: [min, max] lets the outlier hide it, [p10, p90] does not
    const Timing a = timing(slow_outlier), b = timing(steady, 1.08);
    CHECK(judge(without_spread(a), without_spread(b)) == Verdict::same);
    CHECK(judge(a, b) == Verdict::slower);
    // no change but an outlier on either side: same
    CHECK(judge(timing(steady), timing(slow_outlier)) == Verdict::same);
    CHECK(judge(timing(steady), timing(fast_outlier)) == Verdict::same);
    CHECK(judge(timing(fast_outlier), timing(steady)) == Verdict::same);
    // a median outside the other side's [p10, p90] is a change even inside its [min, max]
    CHECK(judge({1.0, 0.5, 1.5, 0.99, 1.01}, {1.05, 1.04, 1.06, 1.045, 1.055}) == Verdict::slower);
    // the spread used: p10 / p90 when recorded, else min / max, else the median
    CHECK(Timing{1.0, 0.5, 1.5, 0.9, 1.1}.lo() == 0.9);
    CHECK(Timing{1.0, 0.5, 1.5}.hi() == 1.5);
    CHECK(Timing{1.0}.lo() == 1.0);
}

TEST_CASE("compare: a sweep's CSV carries the spread and the seed, an older one is named", "[compare][cli]") {
    using cs::cli::Row;
    using cs::cli::RunMeta;
    cs::test::TempDir tmp;
    auto write = [&](const std::string& name, std::uint64_t seed, double scale) {
        Row r;
        r.layer.name = "conv2";
        r.layer.C = 96, r.layer.H = 27, r.layer.W = 27, r.layer.M = 256, r.layer.R = 5, r.layer.S = 5,
        r.layer.pad = 2;
        r.N = 32, r.variant = cs::gpu::find_variant("im2col-gemm").variant;  // gemm, fp32, f32
        r.memory = cs::gpu::MemoryMode::pageable, r.layout = cs::gpu::Layout::nchw;
        r.result.status = cs::gpu::Status::pass;
        std::vector<double> k;
        for (int i = 0; i < 20; ++i) k.push_back((1.0 + 0.001 * i) * scale);
        if (scale == 1.0) k.back() = 1.23;  // run A: one outlier repeat
        r.result.kernel = r.result.total = cs::gpu::Stat::of(k);
        RunMeta m;
        m.device = "NVIDIA H200", m.seed = seed;
        const auto p = tmp.path / name;
        cs::cli::write_csv(p, m, {r});
        return p.string();
    };
    const auto a = write("a.csv", 42, 1.0), b = write("b.csv", 7, 1.08), same_seed = write("c.csv", 42, 1.0);
    const auto r = compare(a, b);
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(has(r.out, "1 slower"));  // the outlier of A does not hide B's 8%
    CHECK(has(r.out, "DIFFERS   seed"));
    CHECK(has(r.out, "A: 42   B: 7"));
    CHECK_FALSE(has(r.out, "warning:"));
    CHECK(has(compare(a, same_seed).out, "same      seed"));
    // a CSV without the spread columns: a warning naming it and what the verdict uses instead
    const auto old = compare(data("compare_a.csv"), b);
    INFO(old.out);
    CHECK(has(old.out, "warning: " + data("compare_a.csv") + " has no kernel_p10_ms / kernel_p90_ms columns"));
    CHECK(has(old.out, "judged on [min, max] instead"));
    CHECK_FALSE(has(old.out, "warning: " + b));
    CHECK(has(compare(data("compare_a.csv"), b, "--markdown").out, "- warning: "));
}

TEST_CASE("compare: identical runs are all the same, exit 0", "[compare][cli]") {
    cs::test::TempDir tmp;
    const auto csv = tmp.path / "cmp.csv";
    const auto r = compare(data("compare_a.csv"), data("compare_a.csv"),
                           "--fail-slower 0 --csv " + q(csv.string()));
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(has(r.out, "8 rows timed on both sides (kernel_ms): 0 slower, 0 faster, 8 same within the spread; "
                     "0 status worse, 0 status better, 0 only in A, 0 only in B, 1 not timed on either side"));
    CHECK(has(r.out, "same      device"));
    CHECK(has(r.out, "NVIDIA H200"));
    CHECK(has(r.out, "unknown   git_rev"));
    CHECK(has(r.out, "unknown on both sides"));
    CHECK(has(r.out, "unknown   seed"));
    const auto rows = read_csv(csv);
    REQUIRE(rows.size() == 9);
    for (const auto& row : rows) {
        INFO(row.at("variant"));
        CHECK((row.at("change") == "same" || row.at("change") == "not timed"));
        if (row.at("change") == "same") CHECK(row.at("kernel_ratio") == "1");
    }
    const auto only = compare(data("compare_a.csv"), data("compare_a.csv"), "--only-changed");
    CHECK(only.code == 0);
    CHECK(has(only.out, "(no rows changed)"));
}

TEST_CASE("compare: a slowed row, status changes first, --fail-slower", "[compare][cli]") {
    const auto a = data("compare_a.csv"), b = data("compare_b_changed.csv");
    cs::test::TempDir tmp;
    const auto csv = tmp.path / "cmp.csv";
    const auto r = compare(a, b, "--csv " + q(csv.string()));
    INFO(r.out);
    REQUIRE(r.code == 0);  // no --fail-slower: a report, not a gate
    CHECK(has(r.out, "5 rows timed on both sides (kernel_ms): 1 slower, 1 faster, 3 same within the spread; "
                     "2 status worse, 0 status better, 1 only in A, 1 only in B, 1 not timed on either side"));
    const std::string slow = table_line(r.out, "register-acc", "conv2");
    CHECK(has(slow, "slower"));
    CHECK(has(slow, "1.500"));
    CHECK(has(table_line(r.out, "im2col-gemm", "conv2"), "faster"));
    const std::string noisy = table_line(r.out, "cudnn-fp16", "conv2");
    CHECK(has(noisy, "same"));
    CHECK(has(noisy, "1.073"));
    // listed first: status changes, then one-sided rows, then the timed rows by change
    const auto at = [&](const std::string& s) {
        const auto p = r.out.find(s);
        INFO(s);
        CHECK(p != std::string::npos);
        return p;
    };
    const auto fail = at("PASS -> FAIL"), skip = at("PASS -> SKIP"), gone = at("only in A (PASS)"),
               fresh = at("only in B (PASS)"), slower = at(slow), faster = at(table_line(r.out, "im2col-gemm", "conv2")),
               same = at(noisy);
    CHECK(fail < slower);
    CHECK(skip < slower);
    CHECK(gone < slower);
    CHECK(fresh < slower);
    CHECK(fail < gone);
    CHECK(slower < faster);
    CHECK(faster < same);
    CHECK(r.out.find("----") < fail);

    const auto rows = read_csv(csv);
    REQUIRE(rows.size() == 10);
    CHECK(rows[0].at("change") == "status worse");
    bool found = false;
    for (const auto& row : rows)
        if (row.at("variant") == "register-acc") {
            found = true;
            CHECK(row.at("change") == "slower");
            CHECK(row.at("kernel_verdict") == "slower");
            CHECK(row.at("kernel_ratio") == "1.5");
            CHECK(row.at("family") == "single-kernel");
        }
    CHECK(found);

    // the exit code a CI job uses: 1.5x is slower by 50 %
    for (const char* pct : {"0", "10", "49.9"}) {
        const auto g = compare(a, b, std::string("--fail-slower ") + pct);
        INFO(pct << ": " << g.out);
        CHECK(g.code == 1);
        CHECK(has(g.out, "1 row(s) slower by more than"));
        CHECK(has(g.out, "register-acc"));
    }
    for (const char* pct : {"50.1", "100"}) {
        const auto g = compare(a, b, std::string("--fail-slower ") + pct);
        INFO(pct << ": " << g.out);
        CHECK(g.code == 0);
    }
    // the noisy cuDNN row (7 % slower, inside A's spread) never trips the gate
    CHECK(compare(a, b, "--fail-slower 5").code == 1);  // register-acc only
    const auto md = compare(a, b, "--markdown --only-changed");
    INFO(md.out);
    CHECK(md.code == 0);
    CHECK(has(md.out, "# convstudy compare: B against A"));
    const auto s1 = md.out.find("## Status changes and rows on one side only");
    const auto s2 = md.out.find("## Timed on both sides");
    CHECK(s1 != std::string::npos);
    CHECK(s2 != std::string::npos);
    CHECK(s1 < s2);
    CHECK(has(md.out, "| **status worse** | conv3 | 32 | wmma-fp16 |"));
    CHECK(has(md.out, "| **slower** | conv2 | 128 | register-acc |"));
    CHECK_FALSE(has(md.out, "| same |"));  // --only-changed
    // --json: the same verdicts, every row, the counts; numbers not recorded are null
    const auto js = compare(a, b, "--json");
    INFO(js.out);
    REQUIRE(js.code == 0);
    // stdout holds the JSON; the fixtures' spread warnings (stderr, merged here) come before it
    const auto start = js.out.find("{\n");
    REQUIRE(start != std::string::npos);
    const auto j = nlohmann::json::parse(js.out.substr(start));
    CHECK(j.at("format") == "convstudy compare 1");
    CHECK(j.at("metric") == "kernel");
    CHECK(j.at("counts").at("slower") == 1);
    CHECK(j.at("counts").at("faster") == 1);
    CHECK(j.at("counts").at("same") == 3);
    CHECK(j.at("counts").at("status worse") == 2);
    CHECK(j.at("counts").at("only in A") == 1);
    CHECK(j.at("counts").at("only in B") == 1);
    REQUIRE(j.at("rows").size() == 10);
    CHECK(j.at("rows")[0].at("change") == "status worse");
    bool seen = false, one_sided = false;
    for (const auto& row : j.at("rows")) {
        if (row.at("variant") == "register-acc") {
            seen = true;
            CHECK(row.at("kernel").at("verdict") == "slower");
            CHECK(row.at("kernel").at("ratio").get<double>() == Approx(1.5));
            CHECK(row.at("kernel").at("b").at("median_ms").get<double>() ==
                  Approx(1.5 * row.at("kernel").at("a").at("median_ms").get<double>()));
        }
        if (row.at("change") == "only in A") {
            one_sided = true;
            CHECK(row.at("status_b").is_null());
            CHECK(row.at("kernel").at("b").is_null());
            CHECK(row.at("kernel").at("ratio").is_null());
        }
    }
    CHECK(seen);
    CHECK(one_sided);
    CHECK(compare(a, b, "--json --markdown").code == 2);  // one format at a time
    // total_ms as the metric: the slowed row's total is slower too
    const auto tot = compare(a, b, "--metric total --fail-slower 10");
    CHECK(tot.code == 1);
    CHECK(has(tot.out, "(total_ms)"));
}

TEST_CASE("compare: another device and a newer CSV format are stated and matched", "[compare][cli]") {
    const auto r = compare(data("compare_a.csv"), data("compare_b_h100.csv"), "--fail-slower 0");
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(has(r.out, "DIFFERS   device"));
    CHECK(has(r.out, "A: NVIDIA H200   B: NVIDIA H100 80GB HBM3"));
    CHECK(has(r.out, "DIFFERS   git_rev"));
    CHECK(has(r.out, "same      tool_version"));
    // rows without a layout column are nchw: they match B's nchw rows; the nhwc row is B's only
    CHECK(has(r.out, "8 rows timed on both sides (kernel_ms): 0 slower, 0 faster, 8 same"));
    CHECK(has(r.out, "1 only in B"));
    CHECK(has(r.out, "0 only in A"));
    CHECK(has(r.out, "nhwc"));
    const auto md = compare(data("compare_a.csv"), data("compare_b_h100.csv"), "--markdown");
    CHECK(has(md.out, "| **device differs** | NVIDIA H200 | NVIDIA H100 80GB HBM3 |"));
}

TEST_CASE("compare: bad input is a clear error naming the file, exit 2", "[compare][cli]") {
    cs::test::TempDir tmp;
    const auto a = data("compare_a.csv");
    const std::string header = [&] {
        std::ifstream f(a);
        std::string h;
        std::getline(f, h);
        return h;
    }();
    auto write = [&](const std::string& name, const std::string& bytes) {
        const auto p = tmp.path / name;
        cs::test::spit(p, bytes);
        return p.string();
    };
    struct Case {
        std::string file, expect;
    };
    std::string no_kernel = header;
    no_kernel.replace(no_kernel.find(",kernel_ms,"), 11, ",kernel_mx,");
    const std::vector<Case> cases = {
        {(tmp.path / "missing.csv").string(), "no such file"},
        {tmp.path.string(), "is a directory"},
        {write("empty.csv", ""), "empty file"},
        {write("header_only.csv", header + "\n"), "has a header but no rows"},
        {write("binary.csv", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16)), "not a CSV file (binary data)"},
        {write("other.csv", "x,y\n1,2\n"), "not a convstudy results CSV (missing columns layer, N, variant"},
        {write("no_kernel.csv", no_kernel + "\n"), "missing column kernel_ms"},
        {write("ragged.csv", header + "\n1,2,3\n"), ":2: 3 fields, the header has"},
        {write("quote.csv", header + "\n\"unclosed\n"), "a quote is never closed"},
    };
    for (const auto& c : cases) {
        for (const bool first : {true, false}) {
            const auto r = first ? compare(c.file, a) : compare(a, c.file);
            INFO(c.file << ": " << r.out);
            CHECK(r.code == 2);
            CHECK(has(r.out, "error: " + c.file));
            CHECK(has(r.out, c.expect));
        }
    }
    // a bad number names the line and the column
    std::ifstream f(a);
    std::string line;
    std::getline(f, line);
    std::getline(f, line);
    const auto bad_n = write("bad_n.csv", header + "\n" + line.replace(line.find(",1,baseline,"), 12, ",x,baseline,") + "\n");
    const auto rn = compare(bad_n, a);
    INFO(rn.out);
    CHECK(rn.code == 2);
    CHECK(has(rn.out, "bad_n.csv:2: N 'x' is not a number"));
    // options
    CHECK(compare(a, a, "--fail-slower -5").code == 2);
    CHECK(compare(a, a, "--metric speed").code == 2);
    CHECK(cli("compare " + q(a)).code == 2);
    const auto w = compare(a, a, "--csv " + q((tmp.path / "no/such/dir/x.csv").string()));
    CHECK(w.code == 2);
    CHECK(has(w.out, "no/such/dir"));
    CHECK(cli("compare --help").code == 0);
}
