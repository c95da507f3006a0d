// vs_cudnn (issue 6), without a GPU: fill_vs_cudnn (src/cli/results.cpp) gives every
// passing row cuDNN's kernel_ms / its own, taking cudnn-fp32 for fp32 and tf32 rows and
// cudnn-fp16 for fp16 and fp16acc rows, from the same (layer, N, memory mode) only; rows
// with no such anchor, failed rows, and rows whose anchor failed stay empty.
#include "catch.hpp"
#include "results.hpp"

#include <cmath>
#include <string>
#include <vector>

using namespace cs;
using namespace cs::cli;

namespace {

Row make_row(const std::string& layer, std::int64_t N, const std::string& variant, const std::string& family,
             const std::string& precision, const std::string& memory, double kernel_ms,
             gpu::Status status = gpu::Status::pass) {
    Row r;
    r.layer.name = layer;
    r.layer.C = 3, r.layer.H = 8, r.layer.W = 8, r.layer.M = 4, r.layer.R = 3, r.layer.S = 3;
    r.N = N;
    r.variant = variant;
    r.family = family;
    r.precision = precision;
    r.io_dtype = (precision == "fp16" || precision == "fp16acc") ? "f16" : "f32";
    r.memory = memory;
    r.result.status = status;
    r.result.kernel.median = kernel_ms;
    r.result.kernel.count = 1;
    return r;
}

const Row& by(const std::vector<Row>& rows, const std::string& variant, const std::string& layer, std::int64_t N,
              const std::string& memory) {
    for (const auto& r : rows)
        if (r.variant == variant && r.layer.name == layer && r.N == N && r.memory == memory) return r;
    FAIL("no row " << variant << " " << layer << " N=" << N << " " << memory);
    return rows.front();
}

std::string field(const Row& row, const std::string& column) {
    const auto& cols = csv_columns();
    const auto fields = csv_fields(RunMeta{}, row);
    for (std::size_t i = 0; i < cols.size(); ++i)
        if (cols[i] == column) return fields[i];
    FAIL("no CSV column " << column);
    return {};
}

}  // namespace

TEST_CASE("vs_cudnn: fp32 and tf32 rows against cudnn-fp32, fp16 rows against cudnn-fp16", "[results][anchors]") {
    std::vector<Row> rows = {
        make_row("conv2", 128, "cudnn-fp32", "cudnn", "fp32", "pageable", 0.5),
        make_row("conv2", 128, "cudnn-tf32", "cudnn", "tf32", "pageable", 0.25),
        make_row("conv2", 128, "cudnn-fp16", "cudnn", "fp16", "pageable", 0.2),
        make_row("conv2", 128, "baseline", "baseline", "fp32", "pageable", 5.0),
        make_row("conv2", 128, "cublas-im2col-tf32", "cublas", "tf32", "pageable", 1.0),
        make_row("conv2", 128, "cublas-im2col-fp16", "cublas", "fp16", "pageable", 0.8),
        make_row("conv2", 128, "half-baseline", "single-kernel", "fp16acc", "pageable", 4.0),
        // Same variant, other N / memory mode / layer: no cuDNN row there.
        make_row("conv2", 32, "baseline", "baseline", "fp32", "pageable", 1.5),
        make_row("conv2", 128, "baseline", "baseline", "fp32", "pinned", 5.0),
        make_row("conv3", 128, "baseline", "baseline", "fp32", "pageable", 2.0),
        // A failed row gets no ratio even where the anchor exists.
        make_row("conv2", 128, "register-acc", "single-kernel", "fp32", "pageable", 1.0, gpu::Status::fail),
    };
    fill_vs_cudnn(rows);

    auto vs = [&](const std::string& v, const std::string& layer, std::int64_t N, const std::string& mem) {
        return by(rows, v, layer, N, mem).vs_cudnn;
    };
    REQUIRE(vs("cudnn-fp32", "conv2", 128, "pageable"));
    CHECK(*vs("cudnn-fp32", "conv2", 128, "pageable") == Approx(1.0));
    CHECK(*vs("cudnn-fp16", "conv2", 128, "pageable") == Approx(1.0));
    REQUIRE(vs("baseline", "conv2", 128, "pageable"));
    CHECK(*vs("baseline", "conv2", 128, "pageable") == Approx(0.5 / 5.0));
    // tf32 rows (cuDNN's own too) are measured against cuDNN fp32.
    REQUIRE(vs("cudnn-tf32", "conv2", 128, "pageable"));
    CHECK(*vs("cudnn-tf32", "conv2", 128, "pageable") == Approx(0.5 / 0.25));
    CHECK(*vs("cublas-im2col-tf32", "conv2", 128, "pageable") == Approx(0.5 / 1.0));
    // fp16 and fp16acc rows against cuDNN fp16.
    REQUIRE(vs("cublas-im2col-fp16", "conv2", 128, "pageable"));
    CHECK(*vs("cublas-im2col-fp16", "conv2", 128, "pageable") == Approx(0.2 / 0.8));
    REQUIRE(vs("half-baseline", "conv2", 128, "pageable"));
    CHECK(*vs("half-baseline", "conv2", 128, "pageable") == Approx(0.2 / 4.0));
    // No anchor at that (layer, N, memory mode); a failed row.
    CHECK(!vs("baseline", "conv2", 32, "pageable"));
    CHECK(!vs("baseline", "conv2", 128, "pinned"));
    CHECK(!vs("baseline", "conv3", 128, "pageable"));
    CHECK(!vs("register-acc", "conv2", 128, "pageable"));

    // The CSV carries the ratio for passing rows and leaves the cell empty otherwise.
    CHECK(std::stod(field(by(rows, "baseline", "conv2", 128, "pageable"), "vs_cudnn")) == Approx(0.1));
    CHECK(field(by(rows, "baseline", "conv2", 32, "pageable"), "vs_cudnn").empty());
    CHECK(field(by(rows, "register-acc", "conv2", 128, "pageable"), "vs_cudnn").empty());
}

TEST_CASE("vs_cudnn stays empty when the cuDNN row did not pass or did not run", "[results][anchors]") {
    std::vector<Row> rows = {
        make_row("conv1", 1, "cudnn-fp32", "cudnn", "fp32", "pageable", 0.1, gpu::Status::skip),
        make_row("conv1", 1, "baseline", "baseline", "fp32", "pageable", 1.0),
        make_row("conv1", 1, "cublas-im2col-fp16", "cublas", "fp16", "pageable", 0.3),  // no cudnn-fp16 row
        // Only the two named anchors count: a tf32 cuDNN row is not an fp32 anchor.
        make_row("conv1", 1, "cudnn-tf32", "cudnn", "tf32", "pageable", 0.05),
    };
    fill_vs_cudnn(rows);
    for (const auto& r : rows) {
        INFO(r.variant);
        CHECK(!r.vs_cudnn);
    }
}
