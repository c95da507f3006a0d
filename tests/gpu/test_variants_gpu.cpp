// Every registered variant against the CPU reference (double accumulation) on small odd
// shapes and on the five AlexNet layers at N=1; the memory modes; poisoned outputs; and
// repeatability.
#include "catch.hpp"
#include "gpu_test_util.hpp"
#include "simple_plan.hpp"

#include <cstring>
#include <map>

using namespace cs;
using namespace cs::gpu;
using cs::test::device;
using cs::test::make_ref_problem;
using cs::test::run_checked;

namespace {

std::string describe(const Variant& v, const Problem& p, MemoryMode m, const RunResult& r) {
    return v.name + " on " + p.layer.name + " (" + p.layer.shape_string() + ") N=" + std::to_string(p.N) + " " +
           std::string(to_string(m)) + " " + std::string(to_string(p.layout)) + ": " +
           std::string(to_string(r.status)) + " " + r.reason +
           " max_rel_err=" + std::to_string(r.err.max_rel_err) + (r.detail.empty() ? "" : " [plan: " + r.detail + "]");
}

// PASS, or SKIP that supports() itself announced with a reason. Never FAIL or ERROR.
void require_pass_or_announced_skip(const Variant& v, const Problem& p, MemoryMode m, const RunResult& r) {
    INFO(describe(v, p, m, r));
    REQUIRE(r.status != Status::fail);
    REQUIRE(r.status != Status::error);
    if (r.status == Status::skip) REQUIRE(!r.reason.empty());
    if (r.status == Status::pass) {
        REQUIRE(r.check == "golden");
        REQUIRE(r.err.nonfinite == 0);
        REQUIRE(r.err.max_rel_err <= r.threshold);
        REQUIRE(r.kernel.count == 1);
        REQUIRE(r.kernel.median > 0);
    }
}

// Runs every registered variant in every layout it declares on rp's problem (pageable memory),
// each PASS or an announced SKIP; `then` sees each row's problem and result.
template <class Then>
void run_every_row(DeviceContext& ctx, const test::RefProblem& rp, Then then) {
    for (const auto& v : registry())
        for (Layout layout : v.layouts) {
            Problem p = rp.problem;
            p.layout = layout;
            const auto r = run_checked(ctx, v, MemoryMode::pageable, rp, test::test_options(), layout);
            require_pass_or_announced_skip(v, p, MemoryMode::pageable, r);
            then(v, p, r);
        }
}

}  // namespace

TEST_CASE("every variant matches the CPU reference on odd shapes", "[gpu][variants]") {
    auto& ctx = device();
    std::map<std::string, int> passes;
    for (const auto& l : test::odd_layers()) {
        for (std::int64_t N : {1, 3}) {
            run_every_row(ctx, make_ref_problem(l, N), [&](const Variant& v, const Problem& p, const RunResult& r) {
                if (r.status == Status::pass) ++passes[v.name + " " + std::string(to_string(p.layout))];
            });
        }
    }
    // A variant that skips every odd shape is not tested by them: say so loudly.
    for (const auto& v : registry())
        for (Layout layout : v.layouts) {
            INFO(v.name << " passed no odd shape in layout " << to_string(layout));
            CHECK(passes[v.name + " " + std::string(to_string(layout))] > 0);
        }
}

TEST_CASE("every variant matches the CPU reference on the AlexNet layers at N=1", "[gpu][variants][alexnet]") {
    auto& ctx = device();
    for (const auto& l : default_layer_table().layers) {
        run_every_row(ctx, make_ref_problem(l, 1), [&](const Variant& v, const Problem& p, const RunResult& r) {
            // The AlexNet layers are what the study is about: a variant must run them
            // all, in every layout it declares, unless its supports() explains why not.
            if (!v.supports(p, ctx.prop())) {
                INFO(describe(v, p, MemoryMode::pageable, r));
                CHECK(r.status == Status::pass);
            }
        });
    }
}

TEST_CASE("the baseline passes in every memory mode", "[gpu][memory]") {
    auto& ctx = device();
    const Variant* base = find_variant("baseline").variant;
    REQUIRE(base != nullptr);
    Layer l = test::odd_layers()[0];
    const auto rp = make_ref_problem(l, 5);
    for (MemoryMode m : all_memory_modes()) {
        const auto r = run_checked(ctx, *base, m, rp, 2);
        INFO(describe(*base, rp.problem, m, r));
        REQUIRE(r.status == Status::pass);
        REQUIRE(r.total.median > 0);
        if (m == MemoryMode::managed) CHECK(r.h2d.median == 0.0);
        if (m == MemoryMode::streams) CHECK(r.streams >= 1);
    }
}

// supports() runs once per row: the harness asks it before making the plans (one per stream in
// the streams mode), and no plan asks it again (tests/parse_lint.py keeps the plans from it).
TEST_CASE("supports() is asked once per row, however many plans the memory mode makes", "[gpu][supports]") {
    auto& ctx = device();
    Variant counted = *find_variant("baseline").variant;
    auto asked = std::make_shared<int>(0);
    auto plans = std::make_shared<int>(0);
    counted.supports = [asked, real = counted.supports](const Problem& p, const cudaDeviceProp& prop) {
        ++*asked;
        return real(p, prop);
    };
    counted.make_plan = [plans, real = counted.make_plan](const Problem& p, const PlanContext& pc) {
        ++*plans;
        return real(p, pc);
    };
    const auto rp = make_ref_problem(test::odd_layers()[1], 4);
    for (MemoryMode m : all_memory_modes()) {
        *asked = *plans = 0;
        const auto r = run_checked(ctx, counted, m, rp);
        INFO(describe(counted, rp.problem, m, r));
        REQUIRE(r.status == Status::pass);
        CHECK(*asked == 1);
        CHECK(*plans >= 1);
        if (m == MemoryMode::streams) {  // several plans, still one question
            CHECK(r.streams >= 2);
            CHECK(*plans >= r.streams);
        }
    }
}

TEST_CASE("an output element left unwritten fails through the NaN poison", "[gpu][poison]") {
    auto& ctx = device();
    Variant broken = *find_variant("baseline").variant;
    broken.name = "test-skips-last-image";
    auto real_plan = broken.make_plan;
    broken.make_plan = [real_plan](const Problem& p, const PlanContext& pc) -> std::unique_ptr<Plan> {
        std::shared_ptr<Plan> inner = real_plan(p, pc);
        return make_simple_plan(
            [inner](const DeviceIO& io, cudaStream_t s) {
                DeviceIO fewer = io;
                fewer.N = io.N - 1;  // the last image's outputs are never written
                inner->run(fewer, s);
            },
            "broken on purpose");
    };
    const auto rp = make_ref_problem(test::odd_layers()[1], 2);
    const auto r = run_checked(ctx, broken, MemoryMode::pageable, rp);
    REQUIRE(r.status == Status::fail);
    REQUIRE(r.err.nonfinite == rp.problem.layer.output_elems(1));
    REQUIRE(r.reason.find("NaN") != std::string::npos);
}

TEST_CASE("a wrong result fails the threshold", "[gpu][poison]") {
    auto& ctx = device();
    Variant wrong = *find_variant("baseline").variant;
    wrong.name = "test-wrong-weights";
    auto real_plan = wrong.make_plan;
    wrong.make_plan = [real_plan](const Problem& p, const PlanContext& pc) -> std::unique_ptr<Plan> {
        std::shared_ptr<Plan> inner = real_plan(p, pc);
        return make_simple_plan(
            [inner](const DeviceIO& io, cudaStream_t s) {
                DeviceIO shifted = io;
                shifted.w = static_cast<const float*>(io.w) + 1;  // every tap reads its neighbour's weight
                inner->run(shifted, s);
            },
            "wrong on purpose");
    };
    const auto rp = make_ref_problem(test::odd_layers()[1], 1);
    const auto r = run_checked(ctx, wrong, MemoryMode::pageable, rp);
    REQUIRE(r.status == Status::fail);
    REQUIRE(r.err.max_rel_err > r.threshold);
}

TEST_CASE("deterministic variants give bit-identical output twice", "[gpu][repeat]") {
    auto& ctx = device();
    const auto rp = make_ref_problem(test::odd_layers()[6], 2);
    for (const auto& v : registry()) {
        if (!v.deterministic) continue;
        const auto a = run_checked(ctx, v, MemoryMode::pageable, rp, 0, true);
        const auto b = run_checked(ctx, v, MemoryMode::pageable, rp, 0, true);
        if (a.status == Status::skip) continue;
        INFO(v.name);
        REQUIRE(a.status == Status::pass);
        REQUIRE(b.status == Status::pass);
        REQUIRE(a.output.size() == b.output.size());
        REQUIRE(std::memcmp(a.output.data(), b.output.data(), a.output.size() * sizeof(float)) == 0);
    }
}

TEST_CASE("a problem larger than device memory is skipped, not crashed", "[gpu][memory]") {
    auto& ctx = device();
    const Variant* base = find_variant("baseline").variant;
    Layer l = default_layer_table().layers[0];
    const std::int64_t N = std::int64_t(ctx.info().global_mem / (std::size_t(l.output_elems(1)) * 4)) + 16;
    // The harness must refuse before touching host data, so no host buffers are needed.
    HostData data;
    std::vector<float> dummy(1);
    data.in = data.w = data.golden = dummy.data();
    RunOptions opt;
    const auto r = run_variant(ctx, *base, MemoryMode::pageable, Problem{l, N, gpu::Layout::nchw, {}}, data, opt);
    INFO(r.reason);
    REQUIRE(r.status == Status::skip);
    REQUIRE(r.reason.find("device memory") != std::string::npos);
}

// Issue 51: the built-in networks beside AlexNet, every variant in every layout it declares, at
// N=1 (one image: what the CPU reference computes here in reasonable time). A variant refuses a
// shape only through supports() or planning, with its reason. Hidden from the default run (about
// 30 shapes, each searching cuDNN's engines afresh): plans/gpu-tables.json runs it by its tag.
TEST_CASE("every variant matches the CPU reference on the vgg16 and resnet50 shapes at N=1", "[.][tables-gpu]") {
    auto& ctx = device();
    for (const char* name : {"vgg16", "resnet50"}) {
        const LayerTable* table = find_builtin_layer_table(name);
        REQUIRE(table);
        for (const auto& l : table->layers) {
            INFO(name << " " << l.name);
            run_every_row(ctx, make_ref_problem(l, 1), [](const Variant&, const Problem&, const RunResult&) {});
        }
    }
}
