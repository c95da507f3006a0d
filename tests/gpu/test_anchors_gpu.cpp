// The anchors (kernels/cudnn/cudnn_graph.cu, cudnn.cu, cublas_im2col.cu), beyond what
// test_variants_gpu.cpp checks for every variant: each cuDNN row names the engine (graph
// API) or algorithm (legacy API) it picked, the fp32 rows never run on tensor cores, the
// graph rows' engine choice is sane at a real batch (accurate, allowed by the class, the
// fastest within the keep band), the search and the cuBLAS chunking respect the workspace
// limit, and the streams mode's shorter, misaligned last chunk works in both layouts.
#include "catch.hpp"
#include "engine_choice.hpp"
#include "gpu_test_util.hpp"
#include "tolerance.hpp"

#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

using namespace cs;
using namespace cs::gpu;
using cs::test::device;
using cs::test::odd_layer;
using cs::test::make_ref_problem;
using cs::test::RefProblem;

namespace {

std::vector<const Variant*> family(const std::string& f) { return cs::test::family_variants(f); }
// The cudnn-<class> rows, without the space-to-depth ones (stride > 1 only;
// test_cudnn_s2d_gpu.cpp checks them).
std::vector<const Variant*> cudnn_plain() {
    std::vector<const Variant*> out;
    for (const Variant* v : family("cudnn"))
        if (!cs::test::has(v->name, "-s2d")) out.push_back(v);
    return out;
}

RunResult run_with(const Variant& v, const RefProblem& rp, MemoryMode mode, std::size_t limit, int streams = 4,
                   int chunks = 0, Layout layout = Layout::nchw) {
    RunOptions opt = cs::test::test_options();
    opt.workspace_limit = limit;
    opt.streams = streams;
    opt.chunks = chunks;
    return cs::test::run_checked(device(), v, mode, rp, opt, layout);
}

std::string describe(const Variant& v, const RefProblem& rp, MemoryMode m, std::size_t limit, const RunResult& r) {
    return v.name + " on " + rp.problem.layer.name + " (" + rp.problem.layer.shape_string() +
           ") N=" + std::to_string(rp.problem.N) + " " + std::string(to_string(m)) +
           " limit=" + std::to_string(limit) + ": " + std::string(to_string(r.status)) + " " + r.reason + " [" +
           r.detail + "] workspace=" + std::to_string(r.workspace_bytes) +
           " max_rel_err=" + std::to_string(r.err.max_rel_err);
}

void require_pass(const Variant& v, const RefProblem& rp, MemoryMode m, std::size_t limit, const RunResult& r) {
    INFO(describe(v, rp, m, limit, r));
    REQUIRE(r.status == Status::pass);
    REQUIRE(r.check == "golden");
    REQUIRE(r.err.nonfinite == 0);
    REQUIRE(r.err.max_rel_err <= r.threshold);
    if (limit) REQUIRE(r.workspace_bytes <= limit);
}

#ifdef CONVSTUDY_HAVE_CUDNN
// The math type the plan chose: detail() reads "<algorithm>, math <type>, ws ...".
std::string chosen_math(const std::string& detail) {
    const auto a = detail.find(", math ");
    if (a == std::string::npos) return {};
    const auto b = detail.find(',', a + 7);
    return detail.substr(a + 7, b == std::string::npos ? std::string::npos : b - (a + 7));
}
#endif

std::size_t cublas_col_bytes(const Variant& v, const Layer& l) {
    return std::size_t(l.K()) * std::size_t(l.E()) * std::size_t(l.F()) * dtype_bytes(v.io);
}
std::size_t cublas_tmp_bytes(const Variant& v, const Layer& l) {
    return std::size_t(l.M) * std::size_t(l.E()) * std::size_t(l.F()) * dtype_bytes(v.io);
}

}  // namespace

TEST_CASE("the anchor families are registered", "[gpu][anchors]") {
    REQUIRE(family("cublas").size() == 4);
    REQUIRE(find_variant("cublas-im2col").variant->precision == Precision::fp32);
    REQUIRE(find_variant("cublas-im2col-tf32").variant->precision == Precision::tf32);
    REQUIRE(find_variant("cublas-im2col-fp16").variant->io == DType::f16);
    REQUIRE(find_variant("cublas-im2col-bf16").variant->io == DType::bf16);
#ifdef CONVSTUDY_HAVE_CUDNN
    // fill_vs_cudnn (cli/results.cpp) takes the fastest PASS row of family "cudnn" of
    // each class: cudnn-<class> and (strided layers) cudnn-<class>-s2d, in both layouts.
    REQUIRE(cudnn_plain().size() == 4);
    REQUIRE(family("cudnn").size() == 8);  // and the four cudnn-<class>-s2d rows
    REQUIRE(family("cudnn-legacy").size() == 3);
    REQUIRE(find_variant("cudnn-fp32").variant->precision == Precision::fp32);
    REQUIRE(find_variant("cudnn-tf32").variant->precision == Precision::tf32);
    REQUIRE(find_variant("cudnn-fp16").variant->precision == Precision::fp16);
    REQUIRE(find_variant("cudnn-fp16").variant->io == DType::f16);
    REQUIRE(find_variant("cudnn-bf16").variant->precision == Precision::bf16);
    REQUIRE(find_variant("cudnn-bf16").variant->io == DType::bf16);
    for (const Variant* v : family("cudnn")) REQUIRE(v->layouts.size() == 2);
#else
    REQUIRE(family("cudnn").empty());
    REQUIRE(family("cudnn-legacy").empty());
    WARN("built without cuDNN: the cudnn family is not tested");
#endif
}

#ifdef CONVSTUDY_HAVE_CUDNN
TEST_CASE("cuDNN rows name their engine or algorithm and workspace", "[gpu][anchors][cudnn]") {
    const Layer* conv2 = default_layer_table().find("conv2");
    REQUIRE(conv2 != nullptr);
    for (const Layer& l : {*conv2, odd_layer("odd_c3_s2")}) {
        const auto rp = make_ref_problem(l, 3);
        for (const Variant* v : cudnn_plain())
            for (Layout layout : v->layouts) {
                const auto r = run_with(*v, rp, MemoryMode::pageable, 0, 4, 0, layout);
                require_pass(*v, rp, MemoryMode::pageable, 0, r);
                INFO(describe(*v, rp, MemoryMode::pageable, 0, r) << " " << to_string(layout));
                std::printf("%s %s on %s N=3: %s\n", v->name.c_str(), std::string(to_string(layout)).c_str(),
                            l.name.c_str(), r.detail.c_str());
                CHECK(r.detail.rfind("eng", 0) == 0);  // "eng<id> {knobs} [notes] from <source> ..."
                CHECK(r.detail.find("graph API") != std::string::npos);
                CHECK(r.detail.find(", ws ") != std::string::npos);
                CHECK(!r.algo.empty());
            }
        for (const Variant* v : family("cudnn-legacy")) {
            const auto r = run_with(*v, rp, MemoryMode::pageable, 0);
            require_pass(*v, rp, MemoryMode::pageable, 0, r);
            INFO(describe(*v, rp, MemoryMode::pageable, 0, r));
            CHECK(r.detail.rfind("CUDNN_CONVOLUTION_FWD_ALGO_", 0) == 0);
            CHECK(!chosen_math(r.detail).empty());
            CHECK(r.detail.find(", ws ") != std::string::npos);
        }
    }
}

TEST_CASE("the fp32 cuDNN rows never run on tensor cores", "[gpu][anchors][cudnn]") {
    for (const auto& l : default_layer_table().layers) {
        const auto rp = make_ref_problem(l, 2);
        for (Layout layout : {Layout::nchw, Layout::nhwc}) {
            const Variant* v = find_variant("cudnn-fp32").variant;
            const auto r = run_with(*v, rp, MemoryMode::pageable, 0, 4, 0, layout);
            require_pass(*v, rp, MemoryMode::pageable, 0, r);
            INFO(describe(*v, rp, MemoryMode::pageable, 0, r) << " " << to_string(layout));
            // The engine's numerical notes are listed in brackets in the detail.
            CHECK(r.detail.find("TENSOR_CORE") == std::string::npos);
            CHECK(r.detail.find("DOWN_CONVERT") == std::string::npos);
        }
        const Variant* legacy = find_variant("cudnn-legacy-fp32").variant;
        const auto r = run_with(*legacy, rp, MemoryMode::pageable, 0);
        require_pass(*legacy, rp, MemoryMode::pageable, 0, r);
        INFO(describe(*legacy, rp, MemoryMode::pageable, 0, r));
        const std::string math = chosen_math(r.detail);
        REQUIRE(!math.empty());
        CHECK(math.find("TENSOR_OP") == std::string::npos);
        // The fp32 threshold (1e-4) is below TF32's rounding error (~3e-4 relative on these
        // data), so a TF32 result that slipped through would also fail the check above.
    }
}

// The numbers of a graph row's detail (cudnn_graph_select.cuh, select_engine): "eng<id> {knobs}
// [notes] from <source> (...), ws <x> MB, <ms> ms (median of ...), err <e> vs naive reference
// ...; runner-up eng<id> {knobs} [notes] <ms> ms; configs: ...".
struct GraphChoice {
    std::string notes;
    double ms = -1, err = -1, runner_ms = -1;  // runner_ms < 0: no runner-up
};
GraphChoice parse_graph_detail(const std::string& d) {
    GraphChoice g;
    const auto nb = d.find('['), ne = d.find(']');
    if (nb != std::string::npos && ne != std::string::npos && nb < ne) g.notes = d.substr(nb + 1, ne - nb - 1);
    const auto med = d.find(" ms (median of");
    if (med != std::string::npos) {
        const auto start = d.rfind(", ", med);
        if (start != std::string::npos) g.ms = std::stod(d.substr(start + 2, med - start - 2));
    }
    const auto e = d.find(", err ");
    if (e != std::string::npos) g.err = std::stod(d.substr(e + 6));
    const auto r = d.find("; runner-up ");
    if (r != std::string::npos) {
        const auto close = d.find("] ", r);
        if (close != std::string::npos) g.runner_ms = std::stod(d.substr(close + 2));
    }
    return g;
}

TEST_CASE("the cuDNN graph rows choose an accurate, allowed, fastest engine at N=32", "[gpu][anchors][cudnn]") {
    for (const char* name : {"conv2", "conv3"}) {
        const Layer* l = default_layer_table().find(name);
        REQUIRE(l != nullptr);
        const auto rp = make_ref_problem(*l, 32);
        for (const Variant* v : family("cudnn"))
            for (Layout layout : v->layouts) {
                Problem pl = rp.problem;
                pl.layout = layout;
                if (v->supports(pl, device().prop())) continue;  // cudnn-*-s2d on a stride-1 layer
                const auto r = run_with(*v, rp, MemoryMode::pageable, 0, 4, 0, layout);
                require_pass(*v, rp, MemoryMode::pageable, 0, r);
                INFO(describe(*v, rp, MemoryMode::pageable, 0, r) << " " << to_string(layout));
                const GraphChoice g = parse_graph_detail(r.detail);
                // Accurate: the selection's own check on scratch data, within half the class threshold.
                REQUIRE(g.err >= 0);
                CHECK(g.err <= threshold(v->precision) / 2);
                // Allowed: no engine that rounds the inputs down or reduces in less than float.
                CHECK(g.notes.find("DOWN_CONVERT") == std::string::npos);
                CHECK(g.notes.find("REDUCED_PRECISION_REDUCTION") == std::string::npos);
                if (v->precision == Precision::fp32) CHECK(g.notes.find("TENSOR_CORE") == std::string::npos);
                // Fastest: no other engine measured faster beyond the hysteresis band.
                REQUIRE(g.ms > 0);
                if (g.runner_ms >= 0) CHECK(g.ms <= kKeepBand * g.runner_ms);
                // The CSV's search_ms: that median (the detail prints it to 4 decimals), the
                // whole batch on the chosen configuration.
                REQUIRE(std::isfinite(r.search_ms));
                CHECK(r.search_ms == Approx(g.ms).margin(5e-5));
            }
    }
    // The streams mode's chunks at a real batch: 32 images in 5 chunks (7, 7, 7, 7, 4 images;
    // starts 2-byte aligned in half), each chunk size planned as its own cuDNN execution plan.
    const auto conv2 = make_ref_problem(*default_layer_table().find("conv2"), 32);
    const auto conv3 = make_ref_problem(*default_layer_table().find("conv3"), 32);
    for (const auto& [v, rp, layout] : {std::tuple{find_variant("cudnn-fp16").variant, &conv2, Layout::nhwc},
                                        std::tuple{find_variant("cudnn-fp32").variant, &conv3, Layout::nchw}}) {
        const auto r = run_with(*v, *rp, MemoryMode::streams, 0, 2, 5, layout);
        require_pass(*v, *rp, MemoryMode::streams, 0, r);
        CHECK(r.chunks == 5);
        CHECK(std::isnan(r.search_ms));  // the search timed one chunk, the row times five
    }
}

TEST_CASE("a tiny workspace limit keeps cuDNN to algorithms without workspace", "[gpu][anchors][cudnn]") {
    const Layer* conv3 = default_layer_table().find("conv3");
    REQUIRE(conv3 != nullptr);
    for (const Layer& l : {*conv3, odd_layer("odd_c33_5x5")}) {
        const auto rp = make_ref_problem(l, 3);
        std::vector<const Variant*> all = cudnn_plain();
        for (const Variant* v : family("cudnn-legacy")) all.push_back(v);
        for (const Variant* v : all) {
            const std::size_t limit = 1;  // 0 would mean "the default"
            const auto r = run_with(*v, rp, MemoryMode::pageable, limit);
            require_pass(*v, rp, MemoryMode::pageable, limit, r);
            INFO(describe(*v, rp, MemoryMode::pageable, limit, r));
            CHECK(r.workspace_bytes == 0);
            CHECK(r.detail.find("ws 0.0 MB") != std::string::npos);
        }
    }
}
#endif

TEST_CASE("cuBLAS im2col chunks the batch to fit the workspace limit", "[gpu][anchors][cublas]") {
    const Layer l = odd_layer("odd_c33_5x5");
    const auto rp = make_ref_problem(l, 5);
    for (const Variant* v : family("cublas")) {
        const std::size_t col = cublas_col_bytes(*v, l), tmp = cublas_tmp_bytes(*v, l);
        // Room for one image's col only: five GEMMs of one image, each straight into NCHW.
        {
            const std::size_t limit = col + tmp / 2;
            const auto r = run_with(*v, rp, MemoryMode::pageable, limit);
            require_pass(*v, rp, MemoryMode::pageable, limit, r);
            INFO(describe(*v, rp, MemoryMode::pageable, limit, r));
            CHECK(r.detail.find("1 images per GEMM (5 chunks") != std::string::npos);
            CHECK(r.workspace_bytes == col);
        }
        // Room for 2.5 images' col + tmp: chunks of 2, 2 and 1 (the last without the permute).
        {
            const std::size_t limit = (col + tmp) * 5 / 2;
            const auto r = run_with(*v, rp, MemoryMode::pageable, limit);
            require_pass(*v, rp, MemoryMode::pageable, limit, r);
            INFO(describe(*v, rp, MemoryMode::pageable, limit, r));
            CHECK(r.detail.find("2 images per GEMM (3 chunks") != std::string::npos);
            CHECK(r.workspace_bytes == 2 * (col + tmp));
        }
        // Less than one image's col: SKIP, saying why.
        {
            const std::size_t limit = col - 1;
            const auto r = run_with(*v, rp, MemoryMode::pageable, limit);
            INFO(describe(*v, rp, MemoryMode::pageable, limit, r));
            REQUIRE(r.status == Status::skip);
            CHECK(r.reason.find("workspace limit") != std::string::npos);
        }
        // The default limit: the whole batch in one GEMM, and cuBLAS gets its own workspace.
        {
            const auto r = run_with(*v, rp, MemoryMode::pageable, 0);
            require_pass(*v, rp, MemoryMode::pageable, 0, r);
            INFO(describe(*v, rp, MemoryMode::pageable, 0, r));
            CHECK(r.detail.find("5 images per GEMM (1 chunk") != std::string::npos);
            CHECK(r.workspace_bytes > 5 * (col + tmp));
        }
    }
}

TEST_CASE("the anchors pass the streams mode's short, misaligned last chunk", "[gpu][anchors][memory]") {
    // C=3, 19x23 input: 1311 elements an image, so the second chunk (3 images in) starts at
    // an address that is only 2- (half) or 4-byte (float) aligned; 5 images in 2 chunks of
    // 3 and 2 give the plans a batch size other than their largest.
    const auto rp = make_ref_problem(odd_layer("odd_c3_s2"), 5);
    std::vector<const Variant*> anchors = family("cublas");
    for (const Variant* v : family("cudnn")) anchors.push_back(v);
    for (const Variant* v : family("cudnn-legacy")) anchors.push_back(v);
    for (const Variant* v : anchors)
        for (Layout layout : v->layouts) {
            for (int streams : {1, 2}) {
                const auto r = run_with(*v, rp, MemoryMode::streams, 0, streams, 2, layout);
                require_pass(*v, rp, MemoryMode::streams, 0, r);
                INFO(describe(*v, rp, MemoryMode::streams, 0, r) << " " << to_string(layout));
                CHECK(r.chunks == 2);
            }
            for (MemoryMode m : {MemoryMode::pinned, MemoryMode::managed}) {
                const auto r = run_with(*v, rp, m, 0, 4, 0, layout);
                require_pass(*v, rp, m, 0, r);
                if (v->io != DType::f32) CHECK(r.convert.median > 0);
            }
        }
}
