// `convstudy compare A B --again A2 B2` (cli/compare_ab.hpp): the A/B rule of a change that
// must not move a number, on rows made here (each case's numbers are in its comment) and on
// the committed compare fixtures through the CLI.
#include "catch.hpp"
#include "test_util.hpp"

#include "compare_ab.hpp"

#include <filesystem>
#include <fstream>
#include <string>

using namespace cs::cli::compare;
using cs::test::cli;
namespace fs = std::filesystem;

namespace {

// A PASS row of conv2 N=32 named `variant`: median and [p10, p90].
Record row(const std::string& variant, double med, double p10, double p90, const std::string& status = "PASS") {
    Record r;
    r.layer = "conv2";
    r.N = 32;
    r.variant = variant;
    r.precision = "fp16";
    r.layout = "nhwc";
    r.memory = "pageable";
    r.scales = "1x1";
    r.status = status;
    if (status == "PASS") r.kernel = Timing{med, p10, p90, p10, p90};
    return r;
}

const AbEntry& entry(const AbComparison& c, const std::string& variant) {
    for (const auto& e : c.entries)
        if (e.any().variant == variant) return e;
    FAIL("no row " << variant);
    return c.entries.front();
}

bool has(const std::string& text, const std::string& s) { return text.find(s) != std::string::npos; }

std::string data(const std::string& name) { return (fs::path(CS_SOURCE_DIR) / "tests/data" / name).string(); }

}  // namespace

TEST_CASE("compare --again: slower only beyond both before runs' noise and the A/A's largest difference",
          "[compare]") {
    Results b1, a1, b2, a2;
    for (auto* r : {&b1, &a1, &b2, &a2}) r->path = "run";
    auto add = [](Results& r, Record x) { r.rows.push_back(std::move(x)); };
    // steady: the same in all four runs
    for (auto* r : {&b1, &a1, &b2, &a2}) add(*r, row("steady", 2.0, 1.99, 2.01));
    // the A/A's largest difference: before 1.00 then 1.02 (2%)
    add(b1, row("slow", 1.00, 0.995, 1.005));
    add(b2, row("slow", 1.02, 1.015, 1.025));
    add(a1, row("slow", 1.10, 1.095, 1.105));  // 1.10 / 1.02 = 7.8% beyond the slower before
    add(a2, row("slow", 1.12, 1.115, 1.125));
    // slower beyond noise in all four pairs, by 1% (< the A/A's 2%): within the A/A
    for (auto* r : {&b1, &b2}) add(*r, row("nudged", 1.00, 0.999, 1.001));
    for (auto* r : {&a1, &a2}) add(*r, row("nudged", 1.01, 1.009, 1.011));
    // slower in one after run only: same
    for (auto* r : {&b1, &b2, &a1}) add(*r, row("one-off", 1.00, 0.99, 1.01));
    add(a2, row("one-off", 1.20, 1.19, 1.21));
    // 0.5x in both after runs: faster
    for (auto* r : {&b1, &b2}) add(*r, row("fast", 1.00, 0.99, 1.01));
    for (auto* r : {&a1, &a2}) add(*r, row("fast", 0.50, 0.49, 0.51));
    // PASS before, FAIL in the second after run: a status change
    for (auto* r : {&b1, &b2, &a1}) add(*r, row("broken", 1.0, 0.99, 1.01));
    add(a2, row("broken", 0, 0, 0, "FAIL"));
    // the two before runs disagree: unstable
    for (auto* r : {&b1, &a1, &a2}) add(*r, row("flaky", 1.0, 0.99, 1.01));
    add(b2, row("flaky", 0, 0, 0, "SKIP"));
    // absent from after 1: missing
    for (auto* r : {&b1, &b2, &a2}) add(*r, row("gone", 1.0, 0.99, 1.01));
    // SKIP everywhere: not timed
    for (auto* r : {&b1, &a1, &b2, &a2}) add(*r, row("skipped", 0, 0, 0, "SKIP"));

    const AbComparison c = compare_ab(b1, a1, b2, a2);
    CHECK(c.aa_max("") == Approx(0.02));
    REQUIRE(c.aa.size() == 1);
    CHECK(c.aa.at("").second->variant == "slow");
    CHECK(entry(c, "steady").change == AbChange::same);
    CHECK(entry(c, "slow").change == AbChange::slower);
    CHECK(entry(c, "slow").ratio == Approx(1.10 / 1.02));
    CHECK(entry(c, "nudged").change == AbChange::within_aa);
    CHECK(entry(c, "one-off").change == AbChange::same);
    CHECK(entry(c, "fast").change == AbChange::faster);
    CHECK(entry(c, "fast").ratio == Approx(0.5));
    CHECK(entry(c, "broken").change == AbChange::status_change);
    CHECK(entry(c, "flaky").change == AbChange::unstable);
    CHECK(entry(c, "gone").change == AbChange::missing);
    CHECK(entry(c, "skipped").change == AbChange::untimed);
    CHECK(c.failed());
    // worst first: missing, status change, unstable, slower
    REQUIRE(c.entries.size() == 9);
    CHECK(c.entries[0].change == AbChange::missing);
    CHECK(c.entries[1].change == AbChange::status_change);
    CHECK(c.entries[2].change == AbChange::unstable);
    CHECK(c.entries[3].change == AbChange::slower);
    const std::string text = format_ab(c, {&b1, &a1, &b2, &a2});
    CHECK(has(text, "  (no family): 2.00% (conv2 N=32 slow fp16 nhwc pageable)"));
    CHECK(has(text, "  slower: 1\n"));
    CHECK(has(text, "A/B: FAILED"));

    // Without the failing rows the same runs pass: a faster row and one within the A/A do not fail it.
    for (auto* r : {&b1, &a1, &b2, &a2})
        std::erase_if(r->rows, [](const Record& x) {
            return x.variant == "broken" || x.variant == "flaky" || x.variant == "gone";
        });
    for (auto* r : {&a1, &a2})  // "slow" runs as before did: 1.00 and 1.02, the A/A's 2% stays
        for (auto& x : r->rows)
            if (x.variant == "slow") x = r == &a1 ? row("slow", 1.00, 0.995, 1.005) : row("slow", 1.02, 1.015, 1.025);
    const AbComparison ok = compare_ab(b1, a1, b2, a2);
    CHECK(ok.aa_max("") == Approx(0.02));
    CHECK(entry(ok, "slow").change == AbChange::same);
    CHECK(ok.count(AbChange::within_aa) == 1);
    CHECK(ok.count(AbChange::faster) == 1);
    CHECK_FALSE(ok.failed());
    CHECK(has(format_ab(ok, {&b1, &a1, &b2, &a2}), "A/B: PASSED"));
}

TEST_CASE("compare --again: a library's per-process engine choice does not widen the bar of our rows",
          "[compare]") {
    Results b1, a1, b2, a2;
    auto add = [](Results& r, Record x, const std::string& family) {
        x.family = family;
        r.rows.push_back(std::move(x));
    };
    // cuDNN's legacy API: 0.10 ms in one process, 0.17 in the next (a 70% A/A)
    add(b1, row("cudnn-legacy-fp16", 0.10, 0.099, 0.101), "cudnn-legacy");
    add(b2, row("cudnn-legacy-fp16", 0.17, 0.169, 0.171), "cudnn-legacy");
    for (auto* r : {&a1, &a2}) add(*r, row("cudnn-legacy-fp16", 0.10, 0.099, 0.101), "cudnn-legacy");
    // ours: an A/A of 1%, then 5% slower in both after runs: slower, not hidden by the 70%
    add(b1, row("hopper-ws-fp16", 1.00, 0.999, 1.001), "hopper");
    add(b2, row("hopper-ws-fp16", 1.01, 1.009, 1.011), "hopper");
    for (auto* r : {&a1, &a2}) add(*r, row("hopper-ws-fp16", 1.06, 1.059, 1.061), "hopper");
    const AbComparison c = compare_ab(b1, a1, b2, a2);
    CHECK(c.aa_max("cudnn-legacy") == Approx(0.7));
    CHECK(c.aa_max("hopper") == Approx(0.01));
    CHECK(entry(c, "hopper-ws-fp16").change == AbChange::slower);
    CHECK(c.failed());
}

TEST_CASE("compare --again on the fixtures: identical runs pass, a changed run fails naming its rows",
          "[compare][cli]") {
    cs::test::TempDir tmp;
    const std::string a = data("compare_a.csv"), b = data("compare_b_changed.csv");
    const auto csv = tmp.path / "ab.csv";
    const auto same = cli("compare '" + a + "' '" + a + "' --again '" + a + "' '" + a + "' --csv '" + csv.string() + "'");
    CHECK(same.code == 0);
    CHECK(has(same.out, "A/A (before 1 against before 2), largest difference per family:"));
    CHECK(has(same.out, "  gemm: 0.00% ("));
    CHECK(has(same.out, "A/B: PASSED"));
    std::ifstream f(csv);
    std::string header;
    std::getline(f, header);
    CHECK(header.rfind("layer,N,variant,precision,layout,memory,axes,change,status_before1", 0) == 0);
    int rows = 0;
    for (std::string line; std::getline(f, line);) ++rows;
    CHECK(rows == 9);

    const auto changed = cli("compare '" + a + "' '" + b + "' --again '" + a + "' '" + b + "'");
    CHECK(changed.code == 1);
    CHECK(has(changed.out, "A/B: FAILED"));
    CHECK(has(changed.out, "slower: conv2 N=128 register-acc"));
    CHECK(has(changed.out, "status change: conv3 N=32 wmma-fp16"));
    CHECK(has(changed.out, "missing: conv4 N=32 tiled-input"));

    const auto bad = cli("compare '" + a + "' '" + a + "' --again '" + a + "'");
    CHECK(bad.code != 0);
    const auto json = cli("compare '" + a + "' '" + a + "' --again '" + a + "' '" + a + "' --json");
    CHECK(json.code == 2);
    CHECK(has(json.out, "--json and --fail-slower are not for the A/B rule"));
}
