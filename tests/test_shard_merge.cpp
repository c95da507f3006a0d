// Sweeps over several GPUs without a GPU: `--shard K/N` deals every row of a sweep to
// exactly one shard, and `merge` joins the shards' CSVs into the CSV one process would
// have written (derived columns recomputed over the merged rows), refusing parts that
// cannot be one sweep.
#include "test_util.hpp"

#include "csv_table.hpp"
#include "merge.hpp"
#include "results.hpp"
#include "shard.hpp"

#include <cmath>
#include <map>
#include <set>

using namespace cs;
using namespace cs::cli;
namespace fs = std::filesystem;
using cs::test::error_message;
using cs::test::TempDir;

namespace {

std::string key(const SweepItem& it) {
    return it.layer->name + " " + std::to_string(it.N) + " " + it.variant->name + " " +
           std::string(gpu::to_string(it.mode)) + " " + std::string(gpu::to_string(it.layout));
}

// Every registry variant in every memory mode and layout, the five layers, N = 1, 32, 128.
std::vector<SweepItem> full_sweep(std::vector<const Layer*>& layers, const std::vector<std::int64_t>& batches,
                                  const std::vector<gpu::MemoryMode>& modes) {
    for (const auto& l : default_layer_table().layers) layers.push_back(&l);
    SweepPlan plan;
    for (const auto& v : gpu::registry()) plan.push_back({&v, modes});
    return sweep_items(batches, layers, plan, gpu::all_layouts());
}

}  // namespace

TEST_CASE("sweep shard K/N is parsed or refused with the rule", "[shard]") {
    const Shard s = parse_shard("2/4");
    CHECK(s.index == 2);
    CHECK(s.count == 4);
    CHECK(parse_shard("1/1").count == 1);
    for (const char* bad : {"0/4", "5/4", "4", "a/b", "1/0", "-1/4", "1/", "/3", "1/2/3", ""})
        CHECK_HAS(error_message([&] { parse_shard(bad); }), "give K/N with 1 <= K <= N");
}

TEST_CASE("the shards of a sweep cover every row exactly once", "[shard]") {
    std::vector<const Layer*> layers;
    const auto items = full_sweep(layers, {1, 32, 128}, gpu::all_memory_modes());
    REQUIRE(items.size() > 500);
    std::set<std::string> all;
    for (const auto& it : items) all.insert(key(it));
    REQUIRE(all.size() == items.size());  // the enumeration itself has no repeats
    for (int n : {1, 2, 3, 4, 7, 8}) {
        std::map<std::string, int> seen;
        std::size_t smallest = items.size(), largest = 0;
        for (int k = 1; k <= n; ++k) {
            const auto part = select_shard(items, Shard{k, n});
            smallest = std::min(smallest, part.size());
            largest = std::max(largest, part.size());
            for (const auto& it : part) ++seen[key(it)];
            // the same call gives the same shard (deterministic)
            const auto again = select_shard(items, Shard{k, n});
            REQUIRE(again.size() == part.size());
            for (std::size_t i = 0; i < part.size(); ++i) CHECK(key(again[i]) == key(part[i]));
        }
        INFO("N = " << n);
        CHECK(seen.size() == all.size());
        CHECK(std::all_of(seen.begin(), seen.end(), [](const auto& kv) { return kv.second == 1; }));
        CHECK(largest - smallest <= 1);  // equal shares
    }
}

TEST_CASE("sweep --shard: bad values exit 2 before any device is needed", "[shard][cli]") {
    for (const char* bad : {"3/2", "0/1", "x"}) {
        const auto r = cs::test::cli(std::string("sweep --csv /tmp/convstudy-never.csv --shard ") + bad);
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK_HAS(r.out, "--shard '");
    }
}

namespace {

RunMeta meta_for(double fp16_peak, double copy_gbs) {
    RunMeta m;
    m.timestamp = "2026-12-01T10:00:00Z";
    m.device = "NVIDIA H100 80GB HBM3";
    m.cc = "9.0";
    m.sms = 132;
    m.cuda_runtime = "13.0";
    m.driver = "13.0";
    m.git_rev = "f83d02e0a1b2";
    m.tool_version = "0.1.0";
    m.warmup = 3;
    m.repeats = 20;
    m.peak_fp32 = 60;
    m.peak_tf32 = 380;
    m.peak_fp16 = fp16_peak;
    m.peak_bf16 = 700;
    m.copy_gbs = copy_gbs;
    return m;
}

// Rows of a synthetic sweep: PASS with made-up times, a few SKIPs, im2col GEMM references per
// (layer, N, precision), as run_one and the sweep would fill them.
std::vector<Row> make_rows(const std::vector<SweepItem>& items, double gemm_scale) {
    std::vector<Row> rows;
    for (std::size_t i = 0; i < items.size(); ++i) {
        const auto& it = items[i];
        Row r;
        r.layer = *it.layer;
        r.N = it.N;
        r.variant = it.variant;
        r.memory = it.mode;
        r.layout = it.layout;
        r.result.algo = it.variant->algo;
        r.result.threshold = 1e-3;
        const std::size_t h = std::hash<std::string>{}(key(it));
        if (h % 11 == 0) {
            r.result.status = gpu::Status::skip;
            r.result.reason = "made-up refusal";
        } else {
            r.result.status = gpu::Status::pass;
            const double ms = 0.05 + double(h % 100003) / 100003.0 * 3.0;
            r.result.kernel = gpu::Stat{ms, ms * 0.98, ms * 1.07, 20};
            r.result.total = gpu::Stat{ms * 4, ms * 3.9, ms * 4.2, 20};
            r.im2col_gemm_ms = gemm_scale * (0.1 + 0.001 * double(it.N) + 0.01 * double(gpu::to_string(r.precision()).size()));
        }
        r.cpu_ms = 100.0;
        rows.push_back(std::move(r));
    }
    return rows;
}

CsvTable write_and_read(const fs::path& p, const RunMeta& m, std::vector<Row> rows) {
    fill_ours_over_cudnn(rows);  // as the sweep does, over its own rows only
    write_csv(p, m, rows);
    return read_csv_table(p.string());
}

}  // namespace

TEST_CASE("merge: the shards of a sweep give the unsharded CSV, derived columns recomputed", "[merge]") {
    const TempDir d;
    std::vector<const Layer*> layers;
    const auto items = full_sweep(layers, {1, 128}, {gpu::MemoryMode::pageable, gpu::MemoryMode::pinned});
    const CsvTable whole = write_and_read(d.path / "whole.csv", meta_for(650, 3000), make_rows(items, 1.0));
    // Three shards; the second measured a lower fp16 ceiling and copy bandwidth.
    std::vector<CsvTable> parts;
    for (int k = 1; k <= 3; ++k) {
        const auto mine = select_shard(items, Shard{k, 3});
        parts.push_back(write_and_read(d.path / ("part" + std::to_string(k) + ".csv"),
                                       k == 2 ? meta_for(640, 2950) : meta_for(650, 3000),
                                       make_rows(mine, 1.0)));
    }
    // Give the parts in another order than 1..3: the merged rows still come in sweep order.
    const MergeResult m = merge_tables({parts[2], parts[0], parts[1]});
    CHECK(m.table.header == whole.header);
    REQUIRE(m.table.rows.size() == whole.rows.size());
    std::size_t vs = 0, vs_changed = 0;
    const std::set<std::string> numeric = {"ours_over_cudnn", "ours_over_cudnn_any_layout", "pct_peak"};
    for (std::size_t i = 0; i < whole.rows.size(); ++i)
        for (std::size_t c = 0; c < whole.header.size(); ++c) {
            const std::string& col = whole.header[c];
            const std::string& want = whole.rows[i][c];
            const std::string& got = m.table.rows[i][c];
            INFO("row " << i << " (" << whole.rows[i][std::size_t(whole.col("variant"))] << "), column " << col);
            if (numeric.count(col) && !want.empty() && !got.empty()) {
                // recomputed from the parts' kernel_ms and tflops as the CSV stores them (6
                // significant digits: each off by up to 5e-6 relative, the ratio by 1e-5, and
                // rounded again to 6 digits): equal to that precision
                CHECK(std::stod(got) == Approx(std::stod(want)).epsilon(2e-5));
            } else {
                CHECK(got == want);
            }
            if (col == "ours_over_cudnn" && !want.empty()) ++vs;
        }
    // the parts alone lacked many ours_over_cudnn values: their fastest cuDNN row was in another shard
    for (const auto& p : parts)
        for (const auto& r : p.rows)
            if (r[std::size_t(p.col("ours_over_cudnn"))].empty() && r[std::size_t(p.col("status"))] == "PASS") ++vs_changed;
    if (vs > 0) CHECK(vs_changed > 0);
    CHECK(std::any_of(m.notes.begin(), m.notes.end(),
                      [](const std::string& n) { return n.find("fp16 ceiling differed") != std::string::npos; }));
}

TEST_CASE("merge: parts split by layers keep the sweep's layer order", "[merge]") {
    const TempDir d;
    std::vector<const Layer*> layers;
    const auto items = full_sweep(layers, {1, 128}, {gpu::MemoryMode::pageable});
    REQUIRE(layers.size() >= 3);
    const CsvTable whole = write_and_read(d.path / "whole.csv", meta_for(650, 3000), make_rows(items, 1.0));
    // as `sweep --layers conv1,conv2,conv3` and `--layers conv4,conv5` would write them
    std::vector<SweepItem> first, second;
    for (const auto& it : items) (it.layer == layers[0] || it.layer == layers[1] ? first : second).push_back(it);
    const CsvTable a = write_and_read(d.path / "a.csv", meta_for(650, 3000), make_rows(first, 1.0));
    const CsvTable b = write_and_read(d.path / "b.csv", meta_for(650, 3000), make_rows(second, 1.0));
    const MergeResult m = merge_tables({a, b});
    REQUIRE(m.table.rows.size() == whole.rows.size());
    const int lc = whole.col("layer"), vc = whole.col("variant");
    for (std::size_t i = 0; i < whole.rows.size(); ++i) {
        INFO("row " << i);
        CHECK(m.table.rows[i][std::size_t(lc)] == whole.rows[i][std::size_t(lc)]);
        CHECK(m.table.rows[i][std::size_t(vc)] == whole.rows[i][std::size_t(vc)]);
    }
}

TEST_CASE("merge refuses parts of different revisions, devices or overlapping rows", "[merge]") {
    const TempDir d;
    std::vector<const Layer*> layers;
    const auto items = full_sweep(layers, {1}, {gpu::MemoryMode::pageable});
    auto part = [&](int k, RunMeta m, const std::string& name) {
        return write_and_read(d.path / name, m, make_rows(select_shard(items, Shard{k, 2}), 1.0));
    };
    const RunMeta base = meta_for(650, 3000);
    RunMeta other_rev = base, other_dev = base, unknown = base, dirty = base;
    other_rev.git_rev = "0123456789ab";
    other_dev.device = "NVIDIA H200";
    unknown.git_rev = "unknown";
    dirty.git_rev = base.git_rev + "-dirty";
    const auto a = part(1, base, "a.csv");
    CHECK_HAS(error_message([&] { merge_tables({a, part(2, other_rev, "b.csv")}); }), "different git revisions");
    CHECK_HAS(error_message([&] { merge_tables({a, part(2, other_rev, "b.csv")}); }), "git_rev = 0123456789ab");
    CHECK_HAS(error_message([&] { merge_tables({a, part(2, other_dev, "c.csv")}); }), "different devices");
    CHECK_HAS(error_message([&] { merge_tables({a, part(1, base, "d.csv")}); }), "the parts overlap");
    CHECK_HAS(error_message([&] { merge_tables({part(1, unknown, "e.csv"), part(2, unknown, "f.csv")}); }),
              "do not record their git revision");
    CHECK_HAS(error_message([&] { merge_tables({a}); }), "at least two");
    const auto ok = merge_tables({part(1, dirty, "g.csv"), part(2, dirty, "h.csv")});
    CHECK(ok.table.rows.size() == items.size());
    CHECK(std::any_of(ok.notes.begin(), ok.notes.end(),
                      [](const std::string& n) { return n.find("uncommitted") != std::string::npos; }));

    // the command: exit 0 and one file; mixed parts exit 2 and write nothing
    const auto b = part(2, base, "b2.csv");
    auto r = cs::test::cli("merge " + (d.path / "a.csv").string() + " " + (d.path / "b2.csv").string() + " -o " +
                 (d.path / "all.csv").string());
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(read_csv_table((d.path / "all.csv").string()).rows.size() == items.size());
    part(2, other_rev, "b3.csv");
    r = cs::test::cli("merge " + (d.path / "a.csv").string() + " " + (d.path / "b3.csv").string() + " -o " +
            (d.path / "mixed.csv").string());
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "different git revisions");
    CHECK_FALSE(fs::exists(d.path / "mixed.csv"));
    r = cs::test::cli("merge " + (d.path / "a.csv").string() + " -o " + (d.path / "one.csv").string());
    CHECK(r.code == 2);
    r = cs::test::cli("merge " + (d.path / "a.csv").string() + " " + (d.path / "nope.csv").string() + " -o " +
            (d.path / "x.csv").string());
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "nope.csv: cannot open");
    r = cs::test::cli("merge " + (d.path / "a.csv").string() + " " + (d.path / "b2.csv").string() + " -o " +
            (d.path / "a.csv").string());
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "also an input");
}
