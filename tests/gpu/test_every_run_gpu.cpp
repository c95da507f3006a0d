// Every run is checked (bench/harness.hpp, bench/output_check.hpp): a plan that goes wrong only on
// its third call — after the checked run and one good timed repeat — FAILs, naming the run;
// for a deterministic variant through the checksum, for a non-deterministic one through the
// tile-covering sample; NaN through the device scan. A row with nothing to check against is
// UNCHECKED, never PASS. A plan that writes past its output's last element FAILs through the
// guard band after it, in the checked run or a later one, before the verifier reads anything.
#include "gpu_test_util.hpp"

#include "cuda_check.hpp"

#include <cuda_runtime_api.h>

#include <memory>
#include <utility>

using namespace cs;
using namespace cs::test;

namespace {

enum class Mutation { wrong_element, nan_element, wrong_plane, past_end };

// Runs the inner plan, and on call `bad_call` (1 = the checked run) damages its output.
class MutatingPlan final : public gpu::Plan {
public:
    MutatingPlan(std::unique_ptr<gpu::Plan> inner, const gpu::Problem& p, int bad_call, Mutation m,
                 std::size_t elem_bytes)
        : inner_(std::move(inner)), p_(p), bad_call_(bad_call), m_(m), eb_(elem_bytes) {}
    void run(const gpu::DeviceIO& io, cudaStream_t s) override {
        inner_->run(io, s);
        if (++calls_ != bad_call_) return;
        const Layer& l = p_.layer;
        switch (m_) {
            case Mutation::wrong_element:  // 0x7f7f7f7f: a finite float, 3.4e38
                CS_CUDA_CHECK(cudaMemsetAsync(io.out, 0x7f, 4, s));
                break;
            case Mutation::nan_element:
                CS_CUDA_CHECK(cudaMemsetAsync(static_cast<char*>(io.out) + 4 * (l.output_elems(io.N) / 2), 0xff, 4, s));
                break;
            case Mutation::wrong_plane:  // the last filter's plane of the last image (NCHW)
                CS_CUDA_CHECK(cudaMemsetAsync(static_cast<char*>(io.out) + 4 * (l.output_elems(io.N) - l.E() * l.F()),
                                              0x7f, std::size_t(4) * l.E() * l.F(), s));
                break;
            case Mutation::past_end:  // 16 bytes, 4 KiB past the output's last element
                CS_CUDA_CHECK(cudaMemsetAsync(static_cast<char*>(io.out) + eb_ * std::size_t(l.output_elems(io.N)) + 4096,
                                              0x00, 16, s));
                break;
        }
    }
    std::string detail() const override { return inner_->detail(); }

private:
    std::unique_ptr<gpu::Plan> inner_;
    gpu::Problem p_;
    int bad_call_;
    Mutation m_;
    std::size_t eb_;
    int calls_ = 0;
};

gpu::Variant mutated(const char* base, int bad_call, Mutation m, bool deterministic) {
    const gpu::Variant* v = gpu::find_variant(base).variant;
    REQUIRE(v);
    gpu::Variant out = *v;
    out.deterministic = deterministic;
    auto inner = v->make_plan;
    const std::size_t eb = gpu::dtype_bytes(v->io);
    out.make_plan = [inner, bad_call, m, eb](const gpu::Problem& p, const gpu::PlanContext& c) {
        return std::make_unique<MutatingPlan>(inner(p, c), p, bad_call, m, eb);
    };
    return out;
}

}  // namespace

TEST_CASE("on the GPU, a plan that goes wrong on its third call FAILs, naming the run", "[gpu][every-run]") {
    auto& ctx = device();
    const RefProblem rp = make_ref_problem(odd_layer("odd_c33_5x5"), 3);
    const auto opt = test_options(5);  // no warm-up: call 2 is timed repeat 1, call 3 timed repeat 2

    SECTION("unmutated: PASS, every run checked") {
        const auto r = run_checked(ctx, *gpu::find_variant("baseline").variant, gpu::MemoryMode::pageable, rp, opt);
        INFO(r.reason);
        CHECK(r.status == gpu::Status::pass);
        CHECK(r.checked_runs == 6);
    }
    SECTION("a wrong element, deterministic variant: the checksum") {
        const auto v = mutated("baseline", 3, Mutation::wrong_element, true);
        const auto r = run_checked(ctx, v, gpu::MemoryMode::pageable, rp, opt);
        INFO(r.reason);
        CHECK(r.status == gpu::Status::fail);
        CHECK(has(r.reason, "run 3 (timed repeat 2 of 5)"));
        CHECK(has(r.reason, "bit for bit"));
    }
    SECTION("a wrong plane, non-deterministic variant: the tile-covering sample") {
        const auto v = mutated("baseline", 3, Mutation::wrong_plane, false);
        const auto r = run_checked(ctx, v, gpu::MemoryMode::pinned, rp, opt);
        INFO(r.reason);
        CHECK(r.status == gpu::Status::fail);
        CHECK(has(r.reason, "run 3 (timed repeat 2 of 5)"));
        CHECK(has(r.reason, "tile-covering sample"));
    }
    SECTION("a NaN: the device scan, in either layout and in a warm-up") {
        auto o = opt;
        o.warmup = 2;  // call 3 is the second warm-up
        const auto v = mutated("simt-gemm", 3, Mutation::nan_element, false);
        const auto r = run_checked(ctx, v, gpu::MemoryMode::pageable, rp, o);
        INFO(r.reason);
        CHECK(r.status == gpu::Status::fail);
        CHECK(has(r.reason, "run 3 (warm-up 2 of 2)"));
        CHECK(has(r.reason, "NaN or Inf"));
    }
    SECTION("the checked run itself") {
        const auto v = mutated("baseline", 1, Mutation::wrong_element, true);
        const auto r = run_checked(ctx, v, gpu::MemoryMode::pageable, rp, opt);
        CHECK(r.status == gpu::Status::fail);
        CHECK(has(r.reason, "max_rel_err"));
        CHECK(r.checked_runs == 1);
    }
    SECTION("--no-recheck leaves the later runs unchecked: the third call goes unseen and checked_runs says so") {
        auto o = opt;
        o.check_every_run = false;
        const auto v = mutated("baseline", 3, Mutation::wrong_element, true);
        const auto r = run_checked(ctx, v, gpu::MemoryMode::pageable, rp, o);
        CHECK(r.status == gpu::Status::pass);
        CHECK(r.checked_runs == 1);
    }
}

TEST_CASE("on the GPU, a plan that writes past its output FAILs through the guard band, naming the run",
          "[gpu][every-run]") {
    auto& ctx = device();
    const RefProblem rp = make_ref_problem(odd_layer("odd_c33_5x5"), 3);
    const auto opt = test_options(5);
    SECTION("the checked run, a float variant (its output is the float buffer)") {
        const auto r = run_checked(ctx, mutated("baseline", 1, Mutation::past_end, true), gpu::MemoryMode::pageable,
                                   rp, opt);
        INFO(r.reason);
        CHECK(r.status == gpu::Status::fail);
        CHECK(has(r.reason, "the checked run wrote past its output: 16 of the"));
        CHECK(has(r.reason, "the first 4096 bytes past it"));
    }
    SECTION("a later run: a half variant (its output is the converted buffer), a float one in managed memory") {
        const std::pair<const char*, gpu::MemoryMode> cases[] = {{"cublas-im2col-fp16", gpu::MemoryMode::pageable},
                                                                 {"simt-gemm", gpu::MemoryMode::managed}};
        for (const auto& [name, mode] : cases) {
            const auto r = run_checked(ctx, mutated(name, 3, Mutation::past_end, false), mode, rp, opt);
            INFO(name << ": " << r.reason);
            CHECK(r.status == gpu::Status::fail);
            CHECK(has(r.reason, "run 3 (timed repeat 2 of 5) wrote past its output"));
        }
    }
    SECTION("no write past the output: PASS, the guard checked after every run") {
        const auto r = run_checked(ctx, *gpu::find_variant("cublas-im2col-fp16").variant, gpu::MemoryMode::pageable,
                                   rp, opt);
        INFO(r.reason);
        CHECK(r.status == gpu::Status::pass);
    }
}

TEST_CASE("on the GPU, a row with no reference is UNCHECKED, never PASS", "[gpu][every-run]") {
    auto& ctx = device();
    const RefProblem rp = make_ref_problem(odd_layer("odd_c7_p1"), 2);
    gpu::HostData data;
    data.in = rp.in.data();
    data.w = rp.w.data();
    const auto r = gpu::run_variant(ctx, *gpu::find_variant("baseline").variant, gpu::MemoryMode::pageable, rp.problem,
                                    data, test_options(3));
    CHECK(r.status == gpu::Status::unchecked);
    CHECK(r.check == "none");
    CHECK(r.kernel.count == 3);
}

TEST_CASE("on the GPU, a group is timed round-robin: every row gets its repeats and the group's seed", "[gpu][every-run]") {
    auto& ctx = device();
    const RefProblem rp = make_ref_problem(odd_layer("odd_c33_5x5"), 2);
    gpu::HostData data;
    data.in = rp.in.data();
    data.w = rp.w.data();
    data.golden = rp.golden.data();
    data.bound = rp.bound.data();
    std::vector<gpu::GroupRow> rows;
    for (const char* name : {"baseline", "simt-gemm", "register-acc"})
        rows.push_back({gpu::find_variant(name).variant, gpu::MemoryMode::pageable, rp.problem});
    auto opt = test_options(7);
    opt.warmup = 2;
    opt.host_repeats = 2;
    const auto res = gpu::run_group(ctx, rows, data, opt, 12345);
    REQUIRE(res.size() == 3);
    for (const auto& r : res) {
        INFO(r.reason);
        CHECK(r.status == gpu::Status::pass);
        CHECK(r.kernel.count == 7);
        CHECK(r.h2d.count == 2);
        CHECK(r.host_repeats == 2);
        CHECK(r.checked_runs == 10);  // the checked run, 2 warm-ups, 7 timed repeats
        CHECK(r.order_seed == 12345);
    }
}
