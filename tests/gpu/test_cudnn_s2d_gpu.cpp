// The space-to-depth transform kernels (kernels/common/space_to_depth.cu) against the host map
// that tests/test_space_to_depth.cpp checks on the CPU, bit for bit, in every pair of
// layouts, for 2- and 4-byte elements, from aligned and misaligned inputs, on the tiled and
// the gather kernel (tests/test_space_to_depth.cpp emulates the same steps on the CPU); and
// the cudnn-<class>-s2d rows (kernels/cudnn/cudnn_s2d.cu) on conv1 and
// strided odd shapes in both layouts, their SKIP on stride 1, their chunking under a
// workspace limit and the streams mode.
#include "buffers.hpp"
#include "catch.hpp"
#include "cuda_check.hpp"
#include "gpu_test_util.hpp"
#include "space_to_depth.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

using namespace cs;
using namespace cs::gpu;
using cs::test::device;
using cs::test::has;
using cs::test::make_layer;
using cs::test::make_ref_problem;
using cs::test::odd_layer;

namespace {

// Runs the transform of n images and of the weights on the GPU and compares every element
// with the host map. `skew`: the input starts that many elements into its allocation (the
// streams mode's chunks start at any element).
template <class E>
void check_transform(const Layer& l, std::int64_t n, bool src_nchw, bool dst_nchw, int skew) {
    const s2d::Geom g = s2d::geom(l);
    INFO(l.name << " (" << l.shape_string() << ") n=" << n << " elem " << sizeof(E) << " B, "
                << (src_nchw ? "nchw" : "nhwc") << " -> " << (dst_nchw ? "nchw" : "nhwc") << ", skew " << skew
                << ", kernel " << s2d::input_kernel_name(g, src_nchw, int(sizeof(E))));
    const std::size_t in_elems = std::size_t(l.input_elems(n)), w_elems = std::size_t(l.weight_elems());
    const std::size_t out_elems = std::size_t(n) * g.Cp * g.Hp * g.Wp;
    const std::size_t wout_elems = std::size_t(g.M) * g.Cp * g.Rp * g.Sp;
    // Distinct nonzero bit patterns, so a zero is only where the map says so.
    std::vector<E> in(in_elems), w(w_elems);
    for (std::size_t i = 0; i < in_elems; ++i) in[i] = E(1 + i % (sizeof(E) == 2 ? 65534 : 4000000000u));
    for (std::size_t i = 0; i < w_elems; ++i) w[i] = E(7 + i % 60000);
    // Exactly sized allocations: a read outside the tensor shows under compute-sanitizer.
    Buffer d_in(MemKind::device, (in_elems + std::size_t(skew)) * sizeof(E)), d_w(MemKind::device, w_elems * sizeof(E));
    Buffer d_out(MemKind::device, out_elems * sizeof(E)), d_wout(MemKind::device, wout_elems * sizeof(E));
    CS_CUDA_CHECK(cudaMemcpy(d_in.as<E>() + skew, in.data(), in_elems * sizeof(E), cudaMemcpyHostToDevice));
    CS_CUDA_CHECK(cudaMemcpy(d_w.as<E>(), w.data(), w_elems * sizeof(E), cudaMemcpyHostToDevice));
    CS_CUDA_CHECK(cudaMemset(d_out.as<E>(), 0xff, out_elems * sizeof(E)));
    CS_CUDA_CHECK(cudaMemset(d_wout.as<E>(), 0xff, wout_elems * sizeof(E)));
    s2d::launch(g, int(sizeof(E)), d_in.as<E>() + skew, src_nchw, d_out.as<E>(), dst_nchw, n, d_w.as<E>(), src_nchw,
                d_wout.as<E>(), nullptr);
    CS_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<E> out(out_elems), wout(wout_elems);
    CS_CUDA_CHECK(cudaMemcpy(out.data(), d_out.as<E>(), out_elems * sizeof(E), cudaMemcpyDeviceToHost));
    CS_CUDA_CHECK(cudaMemcpy(wout.data(), d_wout.as<E>(), wout_elems * sizeof(E), cudaMemcpyDeviceToHost));

    std::int64_t wrong = 0, zeros = 0, first_wrong = -1;
    for (std::int64_t i = 0; i < n; ++i)
        for (int cp = 0; cp < g.Cp; ++cp)
            for (int Y = 0; Y < g.Hp; ++Y)
                for (int X = 0; X < g.Wp; ++X) {
                    const std::int64_t src = s2d::input_source(g, src_nchw, i, cp, Y, X);
                    const E want = src >= 0 ? in[std::size_t(src)] : E(0);
                    const std::int64_t o = s2d::offset(dst_nchw, i, cp, Y, X, g.Cp, g.Hp, g.Wp);
                    zeros += src < 0;
                    if (out[std::size_t(o)] != want) {
                        if (first_wrong < 0) first_wrong = o;
                        ++wrong;
                    }
                }
    INFO("input: " << wrong << " of " << out_elems << " wrong (first at " << first_wrong << "), " << zeros
                   << " zeros");
    CHECK(wrong == 0);
    wrong = 0;
    for (int m = 0; m < g.M; ++m)
        for (int cp = 0; cp < g.Cp; ++cp)
            for (int rp = 0; rp < g.Rp; ++rp)
                for (int sp = 0; sp < g.Sp; ++sp) {
                    const std::int64_t src = s2d::weight_source(g, src_nchw, m, cp, rp, sp);
                    const E want = src >= 0 ? w[std::size_t(src)] : E(0);
                    wrong += wout[std::size_t(s2d::offset(src_nchw, m, cp, rp, sp, g.Cp, g.Rp, g.Sp))] != want;
                }
    INFO("weights: " << wrong << " of " << wout_elems << " wrong");
    CHECK(wrong == 0);
}

void check_all_layouts(const Layer& l, std::int64_t n) {
    for (bool src_nchw : {true, false})
        for (bool dst_nchw : {true, false})
            for (int skew : {0, 1, 3}) {
                check_transform<std::uint16_t>(l, n, src_nchw, dst_nchw, skew);
                check_transform<std::uint32_t>(l, n, src_nchw, dst_nchw, skew);
            }
}

// Strided odd shapes: C=3, strides 2-4, padding 0-2, filters not a multiple of the stride.
std::vector<Layer> strided_layers() {
    return {odd_layer("odd_c3_s2"), odd_layer("odd_s4_c3"), make_layer("s3_p2_7x7", 3, 20, 17, 4, 7, 7, 3, 2)};
}

RunResult run_s2d(const Variant& v, const test::RefProblem& rp, Layout layout, MemoryMode mode = MemoryMode::pageable,
                  std::size_t limit = 0, int streams = 4, int chunks = 0) {
    RunOptions opt = test::test_options();
    opt.workspace_limit = limit;
    opt.streams = streams;
    opt.chunks = chunks;
    return test::run_checked(device(), v, mode, rp, opt, layout);
}

std::string describe(const Variant& v, const test::RefProblem& rp, Layout layout, const RunResult& r) {
    return v.name + " " + std::string(to_string(layout)) + " on " + rp.problem.layer.name + " (" +
           rp.problem.layer.shape_string() + ") N=" + std::to_string(rp.problem.N) + ": " +
           std::string(to_string(r.status)) + " " + r.reason + " [" + r.detail + "] max_rel_err=" +
           std::to_string(r.err.max_rel_err) + " threshold=" + std::to_string(r.threshold);
}

void require_pass(const Variant& v, const test::RefProblem& rp, Layout layout, const RunResult& r) {
    INFO(describe(v, rp, layout, r));
    REQUIRE(r.status == Status::pass);
    REQUIRE(r.check == "golden");
    REQUIRE(r.err.nonfinite == 0);
    REQUIRE(r.err.max_rel_err <= r.threshold);
}

}  // namespace

TEST_CASE("space-to-depth kernels match the host map in every layout pair", "[gpu][s2d]") {
    for (const Layer& l : strided_layers()) check_all_layouts(l, 3);
    check_all_layouts(make_layer("s2_c6_p1", 6, 11, 13, 4, 3, 3, 2, 1), 2);  // C' = 24: 8 halves, 4 floats a store
    check_all_layouts(make_layer("s3_c29", 29, 12, 10, 3, 3, 3, 3, 1), 2);   // C' = 261: more groups than threads
    check_all_layouts(test::alexnet("conv1"), 2);
}

TEST_CASE("space-to-depth: rows too wide for the tile take the gather kernel, same map", "[gpu][s2d]") {
    // 96 channels x 131 columns, stride 2: the tile passes 48 KB in every case
    // (tests/test_space_to_depth.cpp checks that the gather kernel is the one chosen).
    check_all_layouts(make_layer("s2d_wide", 96, 9, 131, 4, 3, 3, 2, 1), 2);
}

#ifdef CONVSTUDY_HAVE_CUDNN
namespace {
std::vector<const Variant*> s2d_rows() {
    std::vector<const Variant*> out;
    for (const char* name : {"cudnn-fp32-s2d", "cudnn-tf32-s2d", "cudnn-fp16-s2d", "cudnn-bf16-s2d"})
        out.push_back(&test::variant(name));
    return out;
}
}  // namespace

TEST_CASE("the cudnn-<class>-s2d rows are cuDNN rows of every class and both layouts", "[gpu][s2d][cudnn]") {
    const Precision classes[] = {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16};
    const auto rows = s2d_rows();
    for (std::size_t i = 0; i < rows.size(); ++i) {
        INFO(rows[i]->name);
        CHECK(rows[i]->family == "cudnn");  // so fill_vs_cudnn takes them as anchors
        CHECK(rows[i]->precision == classes[i]);
        CHECK(rows[i]->io == test::variant(rows[i]->name.substr(0, rows[i]->name.size() - 4)).io);
        CHECK(rows[i]->layouts.size() == 2);
    }
}

TEST_CASE("the cudnn-<class>-s2d rows pass conv1 and strided odd shapes", "[gpu][s2d][cudnn]") {
    std::vector<test::RefProblem> problems;
    problems.push_back(make_ref_problem(test::alexnet("conv1"), 1));
    for (const Layer& l : strided_layers()) problems.push_back(make_ref_problem(l, 3));
    for (const auto& rp : problems)
        for (const Variant* v : s2d_rows())
            for (Layout layout : v->layouts) {
                const auto r = run_s2d(*v, rp, layout);
                require_pass(*v, rp, layout, r);
                INFO(describe(*v, rp, layout, r));
                std::printf("%s %s on %s N=%lld: %.4f ms, %s\n", v->name.c_str(),
                            std::string(to_string(layout)).c_str(), rp.problem.layer.name.c_str(),
                            static_cast<long long>(rp.problem.N), r.kernel.median, r.detail.c_str());
                CHECK(r.detail.rfind("eng", 0) == 0);  // cuDNN's engine first, as every cuDNN row
                CHECK(has(r.detail, "graph API"));
                CHECK(has(r.detail, "space-to-depth b=" + std::to_string(rp.problem.layer.stride)));
                CHECK(r.workspace_bytes > 0);  // the rewritten input and weights at least
                CHECK(std::isnan(r.search_ms));  // the row times the transform too, the search does not
                if (v->precision == Precision::fp32) CHECK(!has(r.detail, "TENSOR_CORE"));
            }
}

TEST_CASE("the cudnn-<class>-s2d rows skip stride 1 with the reason", "[gpu][s2d][cudnn]") {
    const auto rp = make_ref_problem(test::alexnet("conv2"), 1);
    for (const Variant* v : s2d_rows())
        for (Layout layout : v->layouts) {
            const auto r = run_s2d(*v, rp, layout);
            INFO(describe(*v, rp, layout, r));
            REQUIRE(r.status == Status::skip);
            CHECK(r.reason == "space-to-depth needs stride > 1");
        }
}

TEST_CASE("the cudnn-<class>-s2d rows chunk the batch to fit the workspace limit", "[gpu][s2d][cudnn]") {
    const Layer l = odd_layer("odd_s4_c3");
    const Layer lr = s2d::rewritten(l);
    const auto rp = make_ref_problem(l, 4);
    auto up = [](std::size_t v) { return (v + 255) / 256 * 256; };
    for (const Variant* v : s2d_rows()) {
        const std::size_t eb = dtype_bytes(v->io);
        const std::size_t wb = up(std::size_t(lr.weight_elems()) * eb), ib = std::size_t(lr.input_elems(1)) * eb;
        for (Layout layout : v->layouts) {
            // Room for w' and two images' in' (half an image's more for cuDNN: its engines without
            // workspace): chunks of 2 images.
            {
                const std::size_t limit = wb + up(2 * ib) + ib / 2;
                const auto r = run_s2d(*v, rp, layout, MemoryMode::pageable, limit);
                require_pass(*v, rp, layout, r);
                INFO(describe(*v, rp, layout, r));
                CHECK(has(r.detail, "chunks of 2 images"));
                CHECK(r.workspace_bytes <= limit);
            }
            // Not even one image's: SKIP, saying why.
            {
                const auto r = run_s2d(*v, rp, layout, MemoryMode::pageable, wb + ib / 2);
                INFO(describe(*v, rp, layout, r));
                REQUIRE(r.status == Status::skip);
                CHECK(has(r.reason, "space-to-depth needs"));
            }
            // The streams mode: 4 chunks of 1 image on 2 streams, each its own plan, the chunks'
            // inputs at 2- or 4-byte aligned addresses (35*31*3 elements an image).
            {
                const auto r = run_s2d(*v, rp, layout, MemoryMode::streams, 0, 2, 4);
                require_pass(*v, rp, layout, r);
                CHECK(r.chunks == 4);
            }
        }
    }
}
#endif
