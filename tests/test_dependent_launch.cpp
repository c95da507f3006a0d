// launch=pdl without a GPU: the GEMM launched as its input transform's programmatic dependent, as
// the cost model prices it (ws_model.cpp's kDependentOverlapUs) against the committed H200 rows
// of plans/pdl-pack.json, and as the heuristic walks it (auto_choice.cpp: the launch beside each
// tile, kept only where its price differs from the plan's own choice).
#include "auto_choice.hpp"
#include "catch.hpp"
#include "csv_table.hpp"
#include "layer.hpp"
#include "measured_rows.hpp"
#include "test_util.hpp"
#include "variant.hpp"
#include "ws_policy.hpp"

#include <algorithm>
#include <set>
#include <string>

using namespace cs;
using namespace cs::gpu;
using cs::test::column;
using cs::test::h200_prop;
using cs::test::make_layer;

namespace {
bool pdl(const AutoPick& p) {
    return p.axes.as<cs::gpu::variants::hopper::Launch>("launch") == cs::gpu::variants::hopper::Launch::pdl;
}
}  // namespace

TEST_CASE("launch=pdl: priced a launch gap below plain after a transform, as the committed N=1 rows measured",
          "[auto][model][pdl]") {
    const cudaDeviceProp prop = h200_prop();
    // results/h200/networks/pdl_pack_{vgg16,resnet50}.csv.gz: the TMA store at m128n64 on the
    // packed 3-channel layers, plain and pdl in one process. At N=1 pdl measured faster in every
    // class on both layers, and the model's difference is the median of those six.
    int pairs = 0;
    for (const char* file : {"pdl_pack_vgg16.csv.gz", "pdl_pack_resnet50.csv.gz"}) {
        const auto t = cs::cli::read_csv_table(std::string(CS_SOURCE_DIR) + "/results/h200/networks/" + file);
        const auto col = [&](const char* n) { return column(t, n); };
        for (const auto& r : t.rows) {
            if (r[col("variant")].rfind("hopper-tmastore-", 0) != 0 || r[col("N")] != "1") continue;
            if (r[col("config")].find("launch=pdl") == std::string::npos) continue;
            // its plain twin: the same variant and layer, launch=plain
            const auto twin = std::find_if(t.rows.begin(), t.rows.end(), [&](const std::vector<std::string>& o) {
                return o[col("variant")] == r[col("variant")] && o[col("layer")] == r[col("layer")] &&
                       o[col("N")] == r[col("N")] && o[col("config")].find("launch=plain") != std::string::npos;
            });
            REQUIRE(twin != t.rows.end());
            const Variant* v = find_variant(r[col("variant")]).variant;
            REQUIRE(v != nullptr);
            Problem pdl = cs::test::measured_problem(t, r), plain = pdl;
            pdl.axes = axis_values(*v, Config::parse(r[col("axes")]));
            plain.axes = axis_values(*v, Config::parse((*twin)[col("axes")]));
            const auto ep = v->estimate(pdl, prop), eq = v->estimate(plain, prop);
            REQUIRE(ep);
            REQUIRE(eq);
            const double measured_us = (std::stod((*twin)[col("kernel_ms")]) - std::stod(r[col("kernel_ms")])) * 1e3;
            const double priced_us = (eq->ms - ep->ms) * 1e3;
            INFO(file << " " << r[col("layer")] << " " << v->name << ": plain - pdl measured " << measured_us
                      << " us, priced " << priced_us << " us");
            CHECK(measured_us > 0);
            CHECK(priced_us > 0);
            CHECK(priced_us <= 2.5);  // a launch gap, not more
            ++pairs;
        }
    }
    CHECK(pairs == 6);
}

TEST_CASE("launch=pdl: the heuristic takes it after a transform only, and walks no copies of a configuration",
          "[auto][heuristic][pdl]") {
    const cudaDeviceProp prop = h200_prop();
    // VGG's conv1_1 (3 channels: the taps packed by a kernel of their own) at N=1: the TMA store
    // with pdl, as measured faster (above).
    const Layer conv1_1 = make_layer("conv1_1", 3, 224, 224, 64, 3, 3, 1, 1);
    for (Precision cls : {Precision::fp16, Precision::bf16, Precision::tf32}) {
        const auto picks = heuristic_picks(cls, Problem{conv1_1, 1, Layout::nhwc, {}}, prop);
        REQUIRE(!picks.empty());
        INFO(to_string(cls) << ": " << pick_label(picks.front()));
        CHECK(pdl(picks.front()));
    }
    // A layer read in place (NHWC, whole 16-byte channel runs): no transform, so no pdl anywhere
    // among the picks; and in any problem no two picks are the same configuration of one row.
    const Layer in_place = make_layer("in_place", 256, 28, 28, 256, 3, 3, 1, 1);
    for (Layout layout : {Layout::nhwc, Layout::nchw})
        for (std::int64_t N : {1, 32}) {
            const auto picks = heuristic_picks(Precision::fp16, Problem{in_place, N, layout, {}}, prop);
            REQUIRE(!picks.empty());
            std::set<std::string> seen;
            bool any_pdl = false;
            for (const auto& p : picks) {
                INFO(pick_label(p));
                CHECK(seen.insert(pick_label(p)).second);
                any_pdl = any_pdl || pdl(p);
            }
            // NCHW transposes the input first: pdl is then priced, and cheaper
            CHECK(any_pdl == (layout == Layout::nchw));
        }
}
