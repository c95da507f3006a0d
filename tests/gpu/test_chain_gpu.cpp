// The chain run on the GPU (bench/chain_run.hpp): the small odd chain of tests/data/chain_small.json
// (C=3, 37x37, 5, 7 and 9 filters, pools after layers 1 and 3) and AlexNet's five layers at N=1,
// ours (auto-<class>) and cuDNN's chain in every class, each layer's output PASSing the chain rule
// against chain_ref<double>; and the check's teeth: a dropped tap in one layer and a wrong bias in
// another (the data the GPU runs, against the golden outputs of the right data) FAIL the chain,
// naming the layer.
#include "gpu_test_util.hpp"

#include "chain_run.hpp"
#include "network_ref.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <utility>

using namespace cs;
using namespace cs::gpu;

namespace {

// The committed table, from the repository root (where scripts/device.sh runs the tests), else
// from the source tree the program was built from (ctest runs it in the build folder).
LayerTable chain_small() {
    const std::filesystem::path rel = "tests/data/chain_small.json";
    return load_layer_table(std::filesystem::exists(rel) ? rel : std::filesystem::path(CS_SOURCE_DIR) / rel);
}

struct ChainCase {
    LayerTable table;
    ChainData data;
    std::vector<std::vector<float>> golden;
};

ChainCase make_case(const LayerTable& t, std::int64_t N) {
    ChainCase c{t, make_chain_data(t, N, 20261123), {}};
    c.golden = chain_ref<double>(c.table, c.data);
    return c;
}

std::vector<ChainResult> run(const ChainCase& c, Precision p, Layout layout, const std::vector<ChainSideSpec>& sides,
                             const ChainData* gpu_data = nullptr) {
    const ChainData& d = gpu_data ? *gpu_data : c.data;
    const ChainHostData hd{d.N, &d.input, &d.weights, &d.bias};
    ChainOptions o;
    o.warmup = 1;
    o.repeats = 3;
    o.layer_repeats = 2;
    o.state = test::test_options();
    return run_chain(test::device(), c.table, hd, c.golden, p, layout, sides, o);
}

std::vector<ChainSideSpec> both_sides(Precision p) {
    const std::string cls(to_string(p));
    return {{ChainSide::ours, &test::variant("auto-" + cls)}, {ChainSide::cudnn, &test::variant("cudnn-" + cls)}};
}

}  // namespace

TEST_CASE("on the GPU, a chain of odd sizes and AlexNet's chain PASS on both sides in every class", "[gpu][chain]") {
    const ChainCase small = make_case(chain_small(), 2);
    const ChainCase alex = make_case(default_layer_table(), 1);
    for (const ChainCase* c : {&small, &alex})
        for (const Precision p : {Precision::fp16, Precision::bf16, Precision::tf32, Precision::fp32})
            for (const Layout layout : all_layouts()) {
                INFO(c->table.name << " " << to_string(p) << " " << to_string(layout));
                for (const ChainResult& r : run(*c, p, layout, both_sides(p))) {
                    INFO(to_string(r.spec.side) << ": " << to_string(r.status) << " " << r.reason);
                    // cuDNN may have no engine for a fused graph of an odd shape: a SKIP says so; ours runs.
                    if (r.spec.side == ChainSide::cudnn && r.status == Status::skip) {
                        WARN("cuDNN's chain skipped: " << r.reason);
                        continue;
                    }
                    REQUIRE(r.status == Status::pass);
                    REQUIRE(r.layers.size() == c->table.layers.size());
                    for (const auto& l : r.layers) {
                        CHECK(l.err.nonfinite == 0);
                        CHECK(l.err.max_rel_err <= chain_threshold(p));
                        CHECK(l.err_last.max_rel_err <= chain_threshold(p));
                        CHECK(l.replay.count == 2);
                    }
                    CHECK(r.chain.count == 3);
                    CHECK(r.chain.median > 0);
                }
            }
}

TEST_CASE("on the GPU, a dropped tap or a wrong bias in one layer FAILs the chain, naming the layer", "[gpu][chain]") {
    const ChainCase alex = make_case(default_layer_table(), 1);
    const Precision p = Precision::fp16;
    const std::vector<ChainSideSpec> ours{{ChainSide::ours, &test::variant("auto-fp16")}};
    // conv3 without one tap: its largest weight zeroed, as a kernel skipping that tap computes.
    ChainData dropped = alex.data;
    auto& w3 = dropped.weights.at(2);
    *std::max_element(w3.begin(), w3.end(), [](float a, float b) { return std::fabs(a) < std::fabs(b); }) = 0.0f;
    // conv4 with a wrong bias: channel 5's bias off by a quarter.
    ChainData biased = alex.data;
    biased.bias.at(3).at(5) += 0.25f;
    for (const Layout layout : all_layouts()) {
        INFO(to_string(layout));
        const auto a = run(alex, p, layout, ours, &dropped);
        REQUIRE(a.size() == 1);
        CHECK(a[0].status == Status::fail);
        CHECK(a[0].reason.find("conv3") != std::string::npos);
        const auto b = run(alex, p, layout, ours, &biased);
        REQUIRE(b.size() == 1);
        CHECK(b[0].status == Status::fail);
        CHECK(b[0].reason.find("conv4") != std::string::npos);
    }
}

TEST_CASE("a chain refuses a table that is not a chain", "[gpu][chain]") {
    const LayerTable& resnet = *find_builtin_layer_table("resnet50");
    ChainData none;
    const ChainHostData hd{1, &none.input, &none.weights, &none.bias};
    CHECK_THROWS_AS(run_chain(test::device(), resnet, hd, {}, Precision::fp16, Layout::nhwc, {}, ChainOptions{}),
                    Error);
}

TEST_CASE("on the GPU, ours with programmatic dependent launches and without: the same errors, and the rows say which",
          "[gpu][chain][pdl]") {
    for (const std::int64_t N : {std::int64_t(1), std::int64_t(8)}) {
        const ChainCase alex = make_case(default_layer_table(), N);
        for (const Precision p : {Precision::fp16, Precision::bf16})
            for (const Layout layout : all_layouts()) {
                INFO("N=" << N << " " << to_string(p) << " " << to_string(layout));
                const std::vector<ChainSideSpec> ours{{ChainSide::ours, &test::variant("auto-" + std::string(to_string(p)))}};
                const ChainHostData hd{alex.data.N, &alex.data.input, &alex.data.weights, &alex.data.bias};
                std::vector<ChainResult> r[2];
                for (const bool pdl : {true, false}) {
                    ChainOptions o;
                    o.warmup = 2;
                    o.repeats = 20;
                    o.layer_repeats = 0;
                    o.pdl = pdl;
                    o.state = test::test_options();
                    r[pdl ? 0 : 1] = run_chain(test::device(), alex.table, hd, alex.golden, p, layout, ours, o);
                }
                REQUIRE(r[0].size() == 1);
                REQUIRE(r[1].size() == 1);
                REQUIRE(r[0][0].status == Status::pass);
                REQUIRE(r[1][0].status == Status::pass);
                CHECK(r[0][0].pdl);
                CHECK(!r[1][0].pdl);
                int dependent = 0;
                for (std::size_t i = 0; i < r[0][0].layers.size(); ++i) {
                    const auto& a = r[0][0].layers[i];
                    const auto& b = r[1][0].layers[i];
                    INFO(a.layer << ": " << a.detail);
                    // the same kernels and the same bits, checked run and last timed run alike
                    CHECK(a.err.max_abs_err == b.err.max_abs_err);
                    CHECK(a.err_last.max_abs_err == b.err_last.max_abs_err);
                    CHECK(a.err.max_abs_err == a.err_last.max_abs_err);
                    // (not the plan's own: an NCHW row's GEMM launches as its input transform's dependent either way)
                    const std::string said = "the convolution launched as the previous kernel's programmatic dependent";
                    const bool dep = a.detail.find(said) != std::string::npos;
                    CHECK(b.detail.find(said) == std::string::npos);
                    dependent += dep ? 1 : 0;
                }
                // NHWC: conv2 to conv5 read their input in place, so each launches as a dependent
                if (layout == Layout::nhwc) CHECK(dependent >= 4);
            }
    }
}

TEST_CASE("on the GPU, the megakernel PASSes the odd chain and AlexNet's, and refuses what it does not run",
          "[gpu][chain][megakernel]") {
    const ChainCase small = make_case(chain_small(), 2);
    const ChainCase alex1 = make_case(default_layer_table(), 1);
    const ChainCase alex3 = make_case(default_layer_table(), 3);
    for (const ChainCase* c : {&small, &alex1, &alex3})
        for (const Precision p : {Precision::fp16, Precision::bf16})
            for (const int per_sm : {1, 2, 4}) {
                INFO(c->table.name << " N=" << c->data.N << " " << to_string(p) << " " << per_sm << " CTAs/SM");
                const std::vector<ChainSideSpec> mk{{ChainSide::megakernel, &test::variant("auto-" + std::string(to_string(p)))}};
                const ChainHostData hd{c->data.N, &c->data.input, &c->data.weights, &c->data.bias};
                ChainOptions o;
                o.warmup = 1;
                o.repeats = 5;  // the barrier's generation and the parts' counters run on across launches
                o.layer_repeats = 2;
                o.mega_ctas_per_sm = per_sm;
                o.state = test::test_options();
                const auto r = run_chain(test::device(), c->table, hd, c->golden, p, Layout::nhwc, mk, o);
                REQUIRE(r.size() == 1);
                INFO(to_string(r[0].status) << " " << r[0].reason << " | " << r[0].detail);
                REQUIRE(r[0].status == Status::pass);
                CHECK(r[0].graph);
                CHECK(r[0].detail.find("megakernel") != std::string::npos);
                REQUIRE(r[0].layers.size() == c->table.layers.size());
                for (const auto& l : r[0].layers) {
                    CHECK(l.err.nonfinite == 0);
                    CHECK(l.err.max_rel_err <= chain_threshold(p));
                    CHECK(l.err_last.max_rel_err <= chain_threshold(p));
                    CHECK(l.replay.count == 0);  // no layer replay: its layers are not kernels
                }
            }
    // tf32 and NCHW: a SKIP that says why
    for (const auto& [p, layout] : {std::pair{Precision::tf32, Layout::nhwc}, std::pair{Precision::fp16, Layout::nchw}}) {
        const std::vector<ChainSideSpec> mk{{ChainSide::megakernel, &test::variant("auto-" + std::string(to_string(p)))}};
        const auto r = run(alex1, p, layout, mk);
        REQUIRE(r.size() == 1);
        CHECK(r[0].status == Status::skip);
        CHECK(r[0].reason.find("megakernel") != std::string::npos);
    }
}

TEST_CASE("on the GPU, a dropped tap or a wrong bias FAILs the megakernel's chain, naming the layer",
          "[gpu][chain][megakernel]") {
    const ChainCase alex = make_case(default_layer_table(), 1);
    const std::vector<ChainSideSpec> mk{{ChainSide::megakernel, &test::variant("auto-fp16")}};
    ChainData dropped = alex.data;
    auto& w3 = dropped.weights.at(2);
    *std::max_element(w3.begin(), w3.end(), [](float a, float b) { return std::fabs(a) < std::fabs(b); }) = 0.0f;
    ChainData biased = alex.data;
    biased.bias.at(3).at(5) += 0.25f;
    const auto a = run(alex, Precision::fp16, Layout::nhwc, mk, &dropped);
    REQUIRE(a.size() == 1);
    CHECK(a[0].status == Status::fail);
    CHECK(a[0].reason.find("conv3") != std::string::npos);
    const auto b = run(alex, Precision::fp16, Layout::nhwc, mk, &biased);
    REQUIRE(b.size() == 1);
    CHECK(b[0].status == Status::fail);
    CHECK(b[0].reason.find("conv4") != std::string::npos);
}
