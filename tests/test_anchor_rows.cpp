// ours_over_cudnn, ours_over_cudnn_any_layout and pct_peak without a GPU (cli/results.cpp): every passing
// row's kernel_ms is divided by the fastest cuDNN row's of its own precision class (fp16acc: fp16) and
// memory mode (ours / cuDNN: below 1 is faster than cuDNN, the one direction every file uses), in its own layout (ours_over_cudnn) and in either layout (ours_over_cudnn_any_layout); rows
// with no such anchor, failed rows, and anchors that failed give empty cells; pct_peak
// divides by the ceiling of the row's own class.
#include "catch.hpp"
#include "results.hpp"
#include "tolerance.hpp"

#include <cmath>
#include <string>
#include <vector>

using namespace cs;
using namespace cs::cli;

namespace {

const gpu::Variant& registered(const std::string& name) {
    const auto ref = gpu::find_variant(name);
    if (!ref.variant) FAIL("no registered variant " << name);
    return *ref.variant;
}

// A row of a registered variant (its family and precision class come from the registry; the
// test states them, and they must agree), with memory mode and layout as the CSV spells them.
Row make_row(const std::string& layer, std::int64_t N, const std::string& variant, const std::string& family,
             const std::string& precision, const std::string& memory, double kernel_ms,
             gpu::Status status = gpu::Status::pass, const std::string& layout = "nchw") {
    Row r;
    r.layer.name = layer;
    r.layer.C = 3, r.layer.H = 8, r.layer.W = 8, r.layer.M = 4, r.layer.R = 3, r.layer.S = 3;
    r.N = N;
    r.variant = &registered(variant);
    REQUIRE(r.variant->family == family);
    REQUIRE(gpu::to_string(r.variant->precision) == precision);
    r.memory = *gpu::parse_memory_mode(memory);
    r.layout = *gpu::parse_layout(layout);
    r.result.status = status;
    r.result.kernel.median = kernel_ms;
    r.result.kernel.count = 1;
    return r;
}

const Row& by(const std::vector<Row>& rows, const std::string& variant, const std::string& layer, std::int64_t N,
              const std::string& memory, const std::string& layout = "nchw") {
    for (const auto& r : rows)
        if (r.variant->name == variant && r.layer.name == layer && r.N == N && gpu::to_string(r.memory) == memory &&
            gpu::to_string(r.layout) == layout)
            return r;
    FAIL("no row " << variant << " " << layer << " N=" << N << " " << memory << " " << layout);
    return rows.front();
}

// A registered variant of each precision class, for the tests that need one of the class.
std::string of_class(const std::string& precision) {
    if (precision == "fp32") return "im2col-gemm";
    if (precision == "fp16acc") return "half-baseline";
    return "hopper-ws-" + precision;
}

std::string field(const Row& row, const std::string& column, const RunMeta& meta = RunMeta{}) {
    const auto& cols = csv_columns();
    const auto fields = csv_fields(meta, row);
    for (std::size_t i = 0; i < cols.size(); ++i)
        if (cols[i] == column) return fields[i];
    FAIL("no CSV column " << column);
    return {};
}

}  // namespace

TEST_CASE("ours_over_cudnn: the fastest cuDNN row of the row's own class, layout and memory mode", "[results][anchors]") {
    std::vector<Row> rows = {
        make_row("conv2", 128, "cudnn-fp32", "cudnn", "fp32", "pageable", 0.5),
        // The legacy-API rows are their own family: never the anchor, even when faster.
        make_row("conv2", 128, "cudnn-legacy-fp32", "cudnn-legacy", "fp32", "pageable", 0.3),
        make_row("conv2", 128, "cudnn-fp32", "cudnn", "fp32", "pageable", 0.4, gpu::Status::pass, "nhwc"),
        make_row("conv2", 128, "cudnn-tf32", "cudnn", "tf32", "pageable", 0.25),
        make_row("conv2", 128, "cudnn-fp16", "cudnn", "fp16", "pageable", 0.2),
        make_row("conv2", 128, "cudnn-fp16", "cudnn", "fp16", "pageable", 0.1, gpu::Status::pass, "nhwc"),
        make_row("conv2", 128, "cudnn-bf16", "cudnn", "bf16", "pageable", 0.3),
        make_row("conv2", 128, "baseline", "baseline", "fp32", "pageable", 5.0),
        make_row("conv2", 128, "cublas-im2col-tf32", "cublas", "tf32", "pageable", 1.0),
        make_row("conv2", 128, "cublas-im2col-fp16", "cublas", "fp16", "pageable", 0.8),
        make_row("conv2", 128, "cublas-im2col-bf16", "cublas", "bf16", "pageable", 0.9),
        make_row("conv2", 128, "half-baseline", "single-kernel", "fp16acc", "pageable", 4.0),
        make_row("conv2", 128, "hopper-ws-fp16", "hopper", "fp16", "pageable", 0.05, gpu::Status::pass, "nhwc"),
        // Same variant, other N / memory mode / layer: no cuDNN row there.
        make_row("conv2", 32, "baseline", "baseline", "fp32", "pageable", 1.5),
        make_row("conv2", 128, "baseline", "baseline", "fp32", "pinned", 5.0),
        make_row("conv3", 128, "baseline", "baseline", "fp32", "pageable", 2.0),
        // A failed row gets no ratio even where the anchor exists.
        make_row("conv2", 128, "register-acc", "single-kernel", "fp32", "pageable", 1.0, gpu::Status::fail),
    };
    fill_ours_over_cudnn(rows);

    auto vs = [&](const std::string& v, const std::string& layer, std::int64_t N, const std::string& mem,
                  const std::string& layout = "nchw") { return by(rows, v, layer, N, mem, layout).ours_over_cudnn; };
    auto best = [&](const std::string& v, const std::string& layout = "nchw") {
        return by(rows, v, "conv2", 128, "pageable", layout).ours_over_cudnn_any_layout;
    };
    // The direction is pinned: ours / cuDNN, so a row five times slower than cuDNN reads 10 here
    // (0.5 ms anchor, 5.0 ms row) and a faster one reads below 1.
    CHECK(*vs("baseline", "conv2", 128, "pageable") > 1.0);
    CHECK(*vs("hopper-ws-fp16", "conv2", 128, "pageable", "nhwc") < 1.0);
    // The fastest cuDNN row of the class and layout is the anchor.
    REQUIRE(vs("cudnn-fp32", "conv2", 128, "pageable"));
    CHECK(*vs("cudnn-fp32", "conv2", 128, "pageable") == Approx(1.0));
    CHECK(*vs("cudnn-legacy-fp32", "conv2", 128, "pageable") == Approx(0.3 / 0.5));
    CHECK(*vs("baseline", "conv2", 128, "pageable") == Approx(5.0 / 0.5));
    // ... and ours_over_cudnn_any_layout takes the other layout's where it is faster.
    CHECK(*best("baseline") == Approx(5.0 / 0.4));
    CHECK(*best("cudnn-fp32") == Approx(0.5 / 0.4));
    // tf32 rows against cuDNN tf32 (never the fp32 anchor).
    REQUIRE(vs("cublas-im2col-tf32", "conv2", 128, "pageable"));
    CHECK(*vs("cublas-im2col-tf32", "conv2", 128, "pageable") == Approx(1.0 / 0.25));
    CHECK(*vs("cudnn-tf32", "conv2", 128, "pageable") == Approx(1.0));
    // fp16 and fp16acc rows against cuDNN fp16; bf16 against bf16.
    CHECK(*vs("cublas-im2col-fp16", "conv2", 128, "pageable") == Approx(0.8 / 0.2));
    CHECK(*best("cublas-im2col-fp16") == Approx(0.8 / 0.1));
    CHECK(*vs("half-baseline", "conv2", 128, "pageable") == Approx(4.0 / 0.2));
    CHECK(*vs("cublas-im2col-bf16", "conv2", 128, "pageable") == Approx(0.9 / 0.3));
    // An NHWC row against the NHWC anchor, and the best of both.
    CHECK(*vs("hopper-ws-fp16", "conv2", 128, "pageable", "nhwc") == Approx(0.05 / 0.1));
    CHECK(*best("hopper-ws-fp16", "nhwc") == Approx(0.05 / 0.1));
    // No anchor at that (layer, N, memory mode); a failed row.
    CHECK(!vs("baseline", "conv2", 32, "pageable"));
    CHECK(!vs("baseline", "conv2", 128, "pinned"));
    CHECK(!vs("baseline", "conv3", 128, "pageable"));
    CHECK(!vs("register-acc", "conv2", 128, "pageable"));

    // The CSV carries the ratios for passing rows and leaves the cells empty otherwise.
    CHECK(std::stod(field(by(rows, "baseline", "conv2", 128, "pageable"), "ours_over_cudnn")) == Approx(10.0));
    CHECK(std::stod(field(by(rows, "baseline", "conv2", 128, "pageable"), "ours_over_cudnn_any_layout")) == Approx(12.5));
    CHECK(field(by(rows, "baseline", "conv2", 32, "pageable"), "ours_over_cudnn").empty());
    CHECK(field(by(rows, "register-acc", "conv2", 128, "pageable"), "ours_over_cudnn").empty());
    CHECK(field(by(rows, "hopper-ws-fp16", "conv2", 128, "pageable", "nhwc"), "layout") == "nhwc");
}

TEST_CASE("ours_over_cudnn stays empty when the cuDNN row of the class did not pass or did not run", "[results][anchors]") {
    std::vector<Row> rows = {
        make_row("conv1", 1, "cudnn-fp32", "cudnn", "fp32", "pageable", 0.1, gpu::Status::skip),
        make_row("conv1", 1, "baseline", "baseline", "fp32", "pageable", 1.0),
        make_row("conv1", 1, "cublas-im2col-fp16", "cublas", "fp16", "pageable", 0.3),  // no cudnn-fp16 row
        // A tf32 cuDNN row is not an fp32 anchor, and a bf16 one not an fp16 anchor.
        make_row("conv1", 1, "cudnn-tf32", "cudnn", "tf32", "pageable", 0.05),
        make_row("conv1", 1, "cudnn-bf16", "cudnn", "bf16", "pageable", 0.05),
    };
    fill_ours_over_cudnn(rows);
    for (const auto& r : rows) {
        if (r.variant->name == "cudnn-tf32" || r.variant->name == "cudnn-bf16") continue;  // their own anchors
        INFO(r.variant->name);
        CHECK(!r.ours_over_cudnn);
        CHECK(!r.ours_over_cudnn_any_layout);
    }
}

// The space-to-depth rows (kernels/cudnn/cudnn_s2d.cu) are family "cudnn": on conv1 the anchor
// is the faster of cudnn-<class> and cudnn-<class>-s2d, each layout on its own.
TEST_CASE("ours_over_cudnn: a cudnn-<class>-s2d row is an anchor like cudnn-<class>", "[results][anchors]") {
    std::vector<Row> rows = {
        make_row("conv1", 128, "cudnn-fp16", "cudnn", "fp16", "pageable", 0.70, gpu::Status::pass, "nhwc"),
        make_row("conv1", 128, "cudnn-fp16-s2d", "cudnn", "fp16", "pageable", 0.12, gpu::Status::pass, "nhwc"),
        make_row("conv1", 128, "hopper-ws-fp16", "hopper", "fp16", "pageable", 0.24, gpu::Status::pass, "nhwc"),
        make_row("conv1", 128, "cudnn-fp16", "cudnn", "fp16", "pageable", 0.80),
        make_row("conv1", 128, "cudnn-fp16-s2d", "cudnn", "fp16", "pageable", 0.90, gpu::Status::fail),
        make_row("conv1", 128, "hopper-ws-fp16", "hopper", "fp16", "pageable", 0.40),
    };
    fill_ours_over_cudnn(rows);
    const Row ours_nhwc = by(rows, "hopper-ws-fp16", "conv1", 128, "pageable", "nhwc");
    REQUIRE(ours_nhwc.ours_over_cudnn);
    CHECK(*ours_nhwc.ours_over_cudnn == Approx(0.24 / 0.12));
    // NCHW: the s2d row failed, so the plain row is the anchor there; either layout: s2d NHWC.
    const Row ours_nchw = by(rows, "hopper-ws-fp16", "conv1", 128, "pageable");
    REQUIRE(ours_nchw.ours_over_cudnn);
    CHECK(*ours_nchw.ours_over_cudnn == Approx(0.40 / 0.80));
    REQUIRE(ours_nchw.ours_over_cudnn_any_layout);
    CHECK(*ours_nchw.ours_over_cudnn_any_layout == Approx(0.40 / 0.12));
    CHECK(*by(rows, "cudnn-fp16", "conv1", 128, "pageable", "nhwc").ours_over_cudnn == Approx(0.70 / 0.12));
}

TEST_CASE("pct_peak divides by the ceiling of the row's own precision class", "[results][anchors]") {
    RunMeta meta;
    meta.peak_fp32 = 50, meta.peak_tf32 = 400, meta.peak_fp16 = 800, meta.peak_bf16 = 790;
    Row r = make_row("conv2", 1, "hopper-ws-fp16", "hopper", "fp16", "pageable", 1.0);
    r.layer.C = 96, r.layer.H = 27, r.layer.W = 27, r.layer.M = 256, r.layer.R = 5, r.layer.S = 5, r.layer.pad = 2;
    const double tflops = std::stod(field(r, "tflops", meta));
    CHECK(std::stod(field(r, "peak_tflops", meta)) == Approx(800));
    CHECK(std::stod(field(r, "pct_peak", meta)) == Approx(100 * tflops / 800));
    r.variant = &registered(of_class("fp16acc"));
    CHECK(std::stod(field(r, "peak_tflops", meta)) == Approx(800));
    r.variant = &registered(of_class("tf32"));
    CHECK(std::stod(field(r, "peak_tflops", meta)) == Approx(400));
    r.variant = &registered(of_class("bf16"));
    CHECK(std::stod(field(r, "peak_tflops", meta)) == Approx(790));
    r.variant = &registered(of_class("fp32"));
    CHECK(std::stod(field(r, "pct_peak", meta)) == Approx(100 * tflops / 50));
}

TEST_CASE("anchor_class and ceiling_class: the CSV says what each precision class counts as", "[results][anchors]") {
    // The rule itself (bench/tolerance.hpp): fp16acc counts as fp16, every other class is its own.
    for (auto p : {gpu::Precision::fp32, gpu::Precision::tf32, gpu::Precision::fp16, gpu::Precision::bf16}) {
        CHECK(gpu::anchor_class(p) == p);
        CHECK(gpu::ceiling_class(p) == p);
        CHECK(gpu::parse_precision(gpu::to_string(p)) == p);
    }
    CHECK(gpu::anchor_class(gpu::Precision::fp16acc) == gpu::Precision::fp16);
    CHECK(gpu::ceiling_class(gpu::Precision::fp16acc) == gpu::Precision::fp16);
    CHECK_FALSE(gpu::parse_precision("fp64").has_value());
    // ... and the columns the plots and compare read instead of deriving it again.
    for (const char* p : {"fp32", "tf32", "fp16", "bf16"}) {
        const Row r = make_row("conv2", 1, of_class(p), p == std::string("fp32") ? "gemm" : "hopper", p, "pageable", 1.0);
        CHECK(field(r, "anchor_class") == p);
        CHECK(field(r, "ceiling_class") == p);
    }
    const Row acc = make_row("conv2", 1, "half-baseline", "single-kernel", "fp16acc", "pageable", 1.0);
    CHECK(field(acc, "precision") == "fp16acc");
    CHECK(field(acc, "anchor_class") == "fp16");
    CHECK(field(acc, "ceiling_class") == "fp16");
}

TEST_CASE("a row's printed line says the speedup only where the CPU's time is known", "[results]") {
    Row r = make_row("conv2", 1, "hopper-ws-fp16", "hopper", "fp16", "pageable", 0.0125);
    r.result.kernel = gpu::Stat::of({0.0125});
    r.result.total = gpu::Stat::of({0.2});
    CHECK(summary_line(r).find("speedup") == std::string::npos);  // --no-cpu-timing: no "nanx"
    CHECK(summary_line(r).find("nan") == std::string::npos);
    CHECK(summary_line(r).find("[") == std::string::npos);  // no axes set: no brackets
    r.cpu_ms = 2.5;
    CHECK(summary_line(r).find("speedup 200.0x") != std::string::npos);
    // two rows of one variant in an axis sweep differ here
    r.result.axes = gpu::axis_values(*r.variant, gpu::Config{{{"scheduler", "split-k"}}});
    CHECK(summary_line(r).find("[scheduler=split-k]") != std::string::npos);
    r.result.status = gpu::Status::skip;
    r.result.reason = "needs stride > 1";
    CHECK(summary_line(r).find("SKIP  needs stride > 1") != std::string::npos);
}

TEST_CASE("the CSV records the robust spread of the repeats and the seed", "[results][compare]") {
    // 20 repeats around 1.0 with one outlier 23% above: p10 / p90 do not move, max does.
    std::vector<double> v;
    for (int i = 0; i < 19; ++i) v.push_back(1.0 + 0.001 * i);
    v.push_back(1.23);
    const auto s = gpu::Stat::of(v);
    CHECK(s.max == Approx(1.23));
    CHECK(s.p10 == Approx(1.0019));  // linear between the 2nd and 3rd of 20: 0.1 * 19 = 1.9
    CHECK(s.p90 == Approx(1.0171));  // 0.9 * 19 = 17.1: between 1.017 and 1.018
    CHECK(gpu::Stat::of({2.0}).p10 == 2.0);
    CHECK(gpu::Stat::of({2.0}).p90 == 2.0);
    CHECK(gpu::Stat::of({1.0, 3.0}).p90 == Approx(2.8));
    Row r = make_row("conv2", 1, "im2col-gemm", "gemm", "fp32", "pageable", 1.0);
    r.result.kernel = s;
    r.result.total = gpu::Stat::of({2.0, 2.5, 3.0});
    RunMeta meta;
    CHECK(field(r, "seed", meta).empty());  // not known: empty, never a made-up number
    meta.seed = 42;
    CHECK(field(r, "seed", meta) == "42");
    CHECK(std::stod(field(r, "kernel_p10_ms", meta)) == Approx(s.p10));
    CHECK(std::stod(field(r, "kernel_p90_ms", meta)) == Approx(s.p90));
    CHECK(std::stod(field(r, "total_p10_ms", meta)) == Approx(2.1));
    CHECK(std::stod(field(r, "total_p90_ms", meta)) == Approx(2.9));
    CHECK(field(r, "search_ms", meta).empty());  // no engine search: empty
    r.result.search_ms = 0.0627;                   // a cuDNN graph row's search median
    CHECK(std::stod(field(r, "search_ms", meta)) == Approx(0.0627));
    r.result.status = gpu::Status::fail;  // no times for a row that did not pass
    CHECK(field(r, "kernel_p10_ms", meta).empty());
    CHECK(std::stod(field(r, "search_ms", meta)) == Approx(0.0627));  // the search ran all the same
}

TEST_CASE("cudnn_process columns: the median, min and max over the processes a cuDNN row PASSed in",
          "[results][anchors]") {
    Row r = make_row("conv5", 128, "cudnn-bf16", "cudnn", "bf16", "pageable", 0.0755);
    CHECK(field(r, "cudnn_processes").empty());  // a sweep of one process: no columns
    CHECK(field(r, "cudnn_process_ms").empty());
    set_cudnn_processes(r, {});
    CHECK(field(r, "cudnn_processes").empty());
    // this process's glitch (0.0755) is outvoted by two fresh processes
    set_cudnn_processes(r, {0.0755, 0.0601, 0.0610});
    CHECK(field(r, "cudnn_processes") == "3");
    CHECK(std::stod(field(r, "cudnn_process_ms")) == Approx(0.0610));
    CHECK(std::stod(field(r, "cudnn_process_min_ms")) == Approx(0.0601));
    CHECK(std::stod(field(r, "cudnn_process_max_ms")) == Approx(0.0755));
    // a child process that failed: the row rests on two, and says so
    Row two = make_row("conv5", 128, "cudnn-bf16", "cudnn", "bf16", "pageable", 0.0755);
    set_cudnn_processes(two, {0.07, 0.06});
    CHECK(field(two, "cudnn_processes") == "2");
    CHECK(std::stod(field(two, "cudnn_process_ms")) == Approx(0.065));
}
