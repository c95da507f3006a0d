// The device's timeline of a run (bench/timeline.hpp) on the GPU: CUPTI's records of a checked and
// timed row hold one interval per timed repeat and warm-up, each with the row's kernel after the
// hold, its parts non-negative and the kernels' span within the event-timed interval.
#include "gpu_test_util.hpp"

#include "timeline.hpp"

using namespace cs;
using namespace cs::test;

TEST_CASE("timeline: every timed interval of a row, its kernel after the hold", "[gpu][timeline]") {
    auto& ctx = device();
    const auto rp = make_ref_problem(make_layer("tl", 64, 14, 14, 64, 3, 3, 1, 1), 2);
    const gpu::Variant& v = variant("simt-gemm");
    gpu::RunOptions opt = test_options(12);
    opt.warmup = 3;
    gpu::TimelineCapture capture;
    const auto r = run_checked(ctx, v, gpu::MemoryMode::pageable, rp, opt);
    const auto records = capture.finish();
    REQUIRE(r.status == gpu::Status::pass);
    const auto t = gpu::timeline_intervals(records, "hold_kernel");
    INFO(records.size() << " records, " << t.size() << " intervals");
    // one hold a timed or warm-up iteration (the checked run is not held)
    CHECK(int(t.size()) >= opt.repeats);
    for (const auto& i : t) {
        CHECK(i.kernels >= 1);
        CHECK(i.pre_us >= 0);
        CHECK(i.body_us > 0);
        if (i.event_anchored) {
            CHECK(i.post_us >= 0);
            // the parts add up to the interval's length: at most the slowest event-timed repeat
            CHECK((i.pre_us + i.body_us + i.post_us) * 1e-3 <= r.kernel.max * 1.05 + 1e-3);
        }
    }
    const auto s = gpu::summarize(t);
    CHECK(s.intervals == int(t.size()));
    CHECK(s.body_us > 0);
}
