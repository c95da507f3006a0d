// The results CSV's one schema (cli/results.hpp, csv_schema): the header and every row come
// from it, its names are unique and typed, and docs/csv-columns.md's table is generated from
// it (`convstudy schema`), so the four places the contract was kept in are one.
#include "command_common.hpp"
#include "results.hpp"
#include "test_util.hpp"

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

using namespace cs;
using namespace cs::cli;

namespace {

// The block between `<!-- BEGIN NAME (convstudy ARGS) -->` and `<!-- END NAME -->` of a document.
std::string doc_block(const std::string& doc = "docs/csv-columns.md", const std::string& name = "schema",
                      const std::string& args = "schema") {
    std::ifstream in(std::string(CS_SOURCE_DIR) + "/" + doc);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    const std::string open = "<!-- BEGIN " + name + " (convstudy " + args + ") -->\n", close = "<!-- END " + name + " -->";
    const auto a = text.find(open), b = text.find(close);
    REQUIRE(a != std::string::npos);
    REQUIRE(b != std::string::npos);
    return text.substr(a + open.size(), b - a - open.size());
}

// A results row of `variant` on AlexNet's conv2 at N=1 (nothing run).
Row conv2_row(const char* variant) {
    Row r;
    r.layer.name = "conv2";
    r.layer.C = 96, r.layer.H = 27, r.layer.W = 27, r.layer.M = 256, r.layer.R = 5, r.layer.S = 5, r.layer.stride = 1,
    r.layer.pad = 2;
    r.N = 1;
    r.variant = gpu::find_variant(variant).variant;
    return r;
}

}  // namespace

TEST_CASE("the CSV schema: unique names, types, units, a meaning for every group", "[results][schema]") {
    const auto& cols = csv_schema();
    REQUIRE(cols.size() == csv_columns().size());
    REQUIRE(cols.front().meaning != nullptr);  // the first column opens a group
    std::set<std::string> names;
    const std::set<std::string> types = {"text", "int", "real", "flag"};
    for (std::size_t i = 0; i < cols.size(); ++i) {
        INFO(cols[i].name);
        CHECK(names.insert(cols[i].name).second);
        CHECK(std::regex_match(cols[i].name, std::regex("[A-Za-z][A-Za-z0-9_]*")));
        CHECK(types.count(cols[i].type) == 1);
        CHECK(static_cast<bool>(cols[i].value));
        CHECK(csv_columns()[i] == cols[i].name);
        // a column whose name says a unit has that unit
        const std::string n = cols[i].name;
        if (n.size() > 3 && n.compare(n.size() - 3, 3, "_ms") == 0) CHECK(std::string(cols[i].unit) == "ms");
    }
    CHECK(names.count("schema_version") == 1);
}

TEST_CASE("every row carries the schema version and one field per column", "[results][schema]") {
    const Row r = conv2_row("baseline");
    const auto f = csv_fields(RunMeta{}, r);
    REQUIRE(f.size() == csv_columns().size());
    for (std::size_t i = 0; i < f.size(); ++i)
        if (csv_columns()[i] == "schema_version") CHECK(f[i] == std::to_string(kCsvSchemaVersion));
}

TEST_CASE("every axis of the registry is a column holding the value the plan ran with", "[results][schema]") {
    const auto col = [](const std::string& name) {
        const auto& c = csv_columns();
        const auto it = std::find(c.begin(), c.end(), name);
        REQUIRE(it != c.end());
        return std::size_t(it - c.begin());
    };
    for (const auto& v : gpu::registry())
        for (const auto& a : v.axes) (void)col("axis_" + a.name);
    Row r = conv2_row("hopper-ws-fp16");
    r.result.config = "tile=m128n256k64B-s8;schedule=pingpong;scheduler=split-k;cluster=1x2";
    const auto f = csv_fields(RunMeta{}, r);
    CHECK(f[col("axis_tile")] == "m128n256k64B-s8");
    CHECK(f[col("axis_schedule")] == "pingpong");
    CHECK(f[col("axis_scheduler")] == "split-k");
    CHECK(f[col("axis_cluster")] == "1x2");
    CHECK(f[col("axis_s2d")].empty());
    CHECK(f[col("rung")] == "hopper-ws");
    CHECK(f[col("ladder")] == "hopper");
    r.variant = gpu::find_variant("baseline").variant;
    r.result.config.clear();
    const auto g = csv_fields(RunMeta{}, r);
    CHECK(g[col("axis_tile")].empty());
}

TEST_CASE("docs/csv-columns.md's table is the schema's (convstudy schema)", "[results][schema][docs]") {
    INFO("regenerate the block between the schema markers of docs/csv-columns.md with: build/convstudy schema");
    CHECK(doc_block() == schema_markdown());
    const auto out = cs::test::cli("schema");
    CHECK(out.code == 0);
    CHECK(out.out == schema_markdown());
    const auto json = cs::test::cli("schema --json");
    CHECK(json.code == 0);
    CHECK_HAS(json.out, "\"schema_version\": " + std::to_string(kCsvSchemaVersion));
    CHECK_HAS(json.out, "\"name\": \"kernel_p90_ms\"");
}

TEST_CASE("docs/variants.md lists every registered variant with its family, ladder and rung", "[registry][docs]") {
    INFO("regenerate the block between the variants markers of docs/variants.md with: build/convstudy list --markdown");
    CHECK(doc_block("docs/variants.md", "variants", "list --markdown") == cli::detail::variants_markdown());
    const auto out = cs::test::cli("list --markdown");
    CHECK(out.code == 0);
    CHECK(out.out == cli::detail::variants_markdown());
    // every registered rung has a name, a CSV spelling (its name, a rung and a ladder) and its row
    for (const auto& v : gpu::registry()) {
        INFO(v.name);
        CHECK_FALSE(v.rung.empty());
        CHECK_FALSE(v.ladder.empty());
        // the rung is the name, or the name without one word (its precision)
        const auto words = [](const std::string& x) {
            std::vector<std::string> w;
            for (std::size_t a = 0, b; a <= x.size(); a = b + 1) {
                b = std::min(x.find('-', a), x.size());
                w.push_back(x.substr(a, b - a));
            }
            return w;
        };
        const auto n = words(v.name), r = words(v.rung);
        bool one_out = n == r;
        for (std::size_t i = 0; i < n.size() && !one_out; ++i) {
            auto m = n;
            m.erase(m.begin() + std::ptrdiff_t(i));
            one_out = m == r;
        }
        CHECK(one_out);
        CHECK_HAS(cli::detail::variants_markdown(), "| `" + v.name + "` | " + v.family + " | " + v.ladder + " | " + v.rung + " |");
    }
    // a rung of several precisions is one rung; fp32-fast's three ladders are apart
    CHECK(gpu::find_variant("hopper-ws-fp16").variant->rung == "hopper-ws");
    CHECK(gpu::find_variant("hopper-ws-3xtf32").variant->rung == "hopper-ws-3xtf32");
    CHECK(gpu::find_variant("cudnn-fp16-s2d").variant->rung == "cudnn-s2d");
    CHECK(gpu::find_variant("hopper-ws-fp16").variant->ladder == "hopper");
    CHECK(gpu::find_variant("winograd-f4x4").variant->ladder == "fp32-fast Winograd 3x3");
    CHECK(gpu::find_variant("winograd-3xfp16-wgmma-f3x3-5x5").variant->ladder == "fp32-fast Winograd 5x5");
    CHECK(gpu::find_variant("simt-gemm").variant->ladder == "fp32-fast GEMM");
}
