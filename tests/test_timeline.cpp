// The device's timeline of a run (bench/timeline.hpp) without a GPU: the timed intervals found in
// made-up CUPTI records (the hold, the start event, the row's kernels, the end event, as the
// harness launches them), anchored on the events where their timestamps fit the kernels', else on
// the hold's end; the medians over intervals.
#include "catch.hpp"

#include "timeline.hpp"

#include <cmath>
#include <vector>

using cs::gpu::TimelineRecord;

namespace {

TimelineRecord kernel(const char* name, std::uint64_t start, std::uint64_t end, std::uint32_t smem = 0) {
    TimelineRecord r;
    r.kernel = true;
    r.name = name;
    r.start_ns = start, r.end_ns = end;
    r.smem_config = smem;
    return r;
}
TimelineRecord event(std::uint64_t at) {
    TimelineRecord r;
    r.start_ns = r.end_ns = at;
    return r;
}

}  // namespace

TEST_CASE("timeline: the timed intervals between the events after each hold", "[timeline]") {
    // two iterations, given out of order: hold, start event, two kernels, end event, and a
    // conversion kernel after the end event (a host-timed iteration) that is not the interval's
    std::vector<TimelineRecord> r{
        kernel("_ZN2cs11hold_kernelEy", 100'000, 110'000, 8192),
        event(110'200),
        kernel("conv_a", 111'500, 115'500, 233472),
        kernel("conv_b", 115'800, 118'000, 233472),
        event(119'000),
        kernel("to_float", 120'000, 121'000),
        kernel("_ZN2cs11hold_kernelEy", 200'000, 210'000, 8192),
        event(210'100),
        kernel("conv_a", 212'100, 216'100, 233472),
        event(217'100),
    };
    std::swap(r[0], r[7]);
    const auto t = cs::gpu::timeline_intervals(r, "hold_kernel");
    REQUIRE(t.size() == 2);
    CHECK(t[0].event_anchored);
    CHECK(t[0].kernels == 2);
    CHECK(t[0].first_kernel == "conv_a");
    CHECK(t[0].pre_us == Approx(1.3));
    CHECK(t[0].body_us == Approx(6.5));
    CHECK(t[0].post_us == Approx(1.0));
    CHECK(t[0].smem_config == 233472);
    CHECK(t[0].hold_smem_config == 8192);
    CHECK(t[1].kernels == 1);
    CHECK(t[1].pre_us == Approx(2.0));
    CHECK(t[1].body_us == Approx(4.0));
    CHECK(t[1].post_us == Approx(1.0));
    const auto s = cs::gpu::summarize(t);
    CHECK(s.intervals == 2);
    CHECK(s.event_anchored == 2);
    CHECK(s.pre_us == Approx(1.65));
    CHECK(s.body_us == Approx(5.25));
    CHECK(s.post_us == Approx(1.0));
    CHECK(std::isnan(cs::gpu::post_from_event_median(s, 9.0)));  // known from the events: no estimate
}

TEST_CASE("timeline: events in another time base leave the interval anchored on the hold", "[timeline]") {
    // the events' timestamps far from the kernels' (no start event between the hold's end and the
    // first kernel): the kernels up to the next hold, pre from the hold's end, post unknown
    const std::vector<TimelineRecord> r{
        kernel("hold_kernel", 100'000, 110'000), kernel("conv", 110'900, 114'900), event(5'000'000),
        event(5'006'000), kernel("hold_kernel", 200'000, 210'000), kernel("conv", 211'100, 215'100)};
    const auto t = cs::gpu::timeline_intervals(r, "hold_kernel");
    REQUIRE(t.size() == 2);
    CHECK_FALSE(t[0].event_anchored);
    CHECK(t[0].pre_us == Approx(0.9));
    CHECK(t[0].body_us == Approx(4.0));
    CHECK(t[0].post_us < 0);
    CHECK(t[1].pre_us == Approx(1.1));
    const auto s = cs::gpu::summarize(t);
    CHECK(s.event_anchored == 0);
    CHECK(s.pre_us == Approx(1.0));
    CHECK(s.post_us < 0);
    // post estimated from the events' median (ms -> us by the caller): what the two medians leave
    CHECK(cs::gpu::post_from_event_median(s, 5.5) == Approx(5.5 - 1.0 - 4.0));
    CHECK(std::isnan(cs::gpu::post_from_event_median(s, NAN)));
    CHECK(std::isnan(cs::gpu::post_from_event_median(cs::gpu::summarize({}), 5.5)));
    // without the events, a kernel a host round trip later (the every-run check's) is not the
    // interval's: the kernels back to back after the hold are
    const auto u = cs::gpu::timeline_intervals(
        {kernel("hold_kernel", 0, 10'000), kernel("prep", 11'000, 12'000), kernel("gemm", 12'500, 16'500),
         kernel("digest_kernel", 40'000, 45'000)},
        "hold_kernel");
    REQUIRE(u.size() == 1);
    CHECK(u[0].kernels == 2);
    CHECK(u[0].body_us == Approx(5.5));
    // no hold, or a hold with nothing after it: no interval
    CHECK(cs::gpu::timeline_intervals({kernel("conv", 1, 2), event(3)}, "hold_kernel").empty());
    CHECK(cs::gpu::timeline_intervals({kernel("hold_kernel", 1, 2)}, "hold_kernel").empty());
    CHECK(cs::gpu::summarize({}).intervals == 0);
}
