// The device's timeline of a run (timeline.hpp): CUPTI's activity records and the timed
// intervals in them.
#include "timeline.hpp"

#include "error.hpp"
#include "harness.hpp"

#ifdef CONVSTUDY_HAVE_CUPTI
#include <cupti.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <mutex>

namespace cs::gpu {

namespace {
// Without the events: the longest gap between two kernels of one interval (launched together,
// queued behind the hold), well under a host round trip.
constexpr std::uint64_t kQueuedGapNs = 5000;
}  // namespace

std::vector<TimelineInterval> timeline_intervals(std::vector<TimelineRecord> records, std::string_view hold) {
    const auto by_start = [](const TimelineRecord& a, const TimelineRecord& b) { return a.start_ns < b.start_ns; };
    std::vector<TimelineRecord> kernels, events;
    for (auto& r : records) (r.kernel ? kernels : events).push_back(std::move(r));
    std::stable_sort(kernels.begin(), kernels.end(), by_start);
    std::stable_sort(events.begin(), events.end(), by_start);
    const auto is_hold = [&](const TimelineRecord& r) { return r.name.find(hold) != std::string::npos; };
    std::vector<TimelineInterval> out;
    for (std::size_t i = 0; i < kernels.size(); ++i) {
        if (!is_hold(kernels[i])) continue;
        const TimelineRecord& h = kernels[i];
        // the kernels after the hold, up to the next hold
        std::size_t k = i + 1;
        while (k < kernels.size() && !is_hold(kernels[k])) ++k;
        if (k == i + 1) continue;
        const TimelineRecord& k0 = kernels[i + 1];
        // the events in the kernels' time base: the start event the last one from the hold's end to
        // the first kernel's start, the end event the first one after that start; the interval's
        // kernels those before it (a host-timed iteration converts its output after the end event).
        // Without them the interval is anchored on the hold's end (below).
        const std::uint64_t next = k < kernels.size() ? kernels[k].start_ns : UINT64_MAX;
        const TimelineRecord* e0 = nullptr;
        const TimelineRecord* e1 = nullptr;
        for (const auto& ev : events) {
            if (ev.start_ns + 1000 >= h.end_ns && ev.start_ns <= k0.start_ns) e0 = &ev;
            if (!e1 && ev.start_ns > k0.start_ns && ev.start_ns <= next) e1 = &ev;
        }
        std::size_t last = k;  // one past the interval's kernels
        if (e0 && e1)
            for (last = i + 1; last < k && kernels[last].start_ns < e1->start_ns; ++last) {
            }
        std::uint64_t end = 0;
        for (std::size_t j = i + 1; j < last; ++j) end = std::max(end, kernels[j].end_ns);
        TimelineInterval t;
        t.event_anchored = e0 && e1 && e1->start_ns >= end;
        if (!t.event_anchored) {
            // the kernels queued behind the hold run back to back; the every-run check's kernels
            // come after the host has synchronized, a gap later
            end = kernels[i + 1].end_ns;
            for (last = i + 2; last < k && kernels[last].start_ns < end + kQueuedGapNs; ++last)
                end = std::max(end, kernels[last].end_ns);
        }
        t.kernels = int(last - i - 1);
        t.first_kernel = k0.name;
        t.smem_config = k0.smem_config;
        t.hold_smem_config = h.smem_config;
        t.body_us = double(end - k0.start_ns) * 1e-3;
        const std::uint64_t from = t.event_anchored ? e0->start_ns : h.end_ns;
        t.pre_us = k0.start_ns >= from ? double(k0.start_ns - from) * 1e-3 : 0.0;
        if (t.event_anchored) t.post_us = double(e1->start_ns - end) * 1e-3;
        out.push_back(t);
        i = k - 1;
    }
    return out;
}

namespace {
// The harness's median (Stat::of); -1 where there is none.
double median(std::vector<double> v) { return v.empty() ? -1 : Stat::of(std::move(v)).median; }
}  // namespace

TimelineSummary summarize(const std::vector<TimelineInterval>& intervals) {
    TimelineSummary s;
    std::vector<double> pre, body, post;
    for (const auto& t : intervals) {
        pre.push_back(t.pre_us);
        body.push_back(t.body_us);
        if (t.post_us >= 0) post.push_back(t.post_us);
        s.event_anchored += t.event_anchored;
    }
    s.intervals = int(intervals.size());
    s.pre_us = median(pre);
    s.body_us = median(body);
    s.post_us = median(post);
    return s;
}

double post_from_event_median(const TimelineSummary& s, double event_median_us) {
    if (s.intervals == 0 || s.post_us >= 0 || !(event_median_us >= 0)) return std::nan("");
    return event_median_us - s.pre_us - s.body_us;
}

#ifdef CONVSTUDY_HAVE_CUPTI
namespace {

// The collection's state: CUPTI's buffer callbacks have no user pointer.
struct Collected {
    std::mutex m;
    std::vector<TimelineRecord> records;
};
Collected& collected() {
    static Collected c;
    return c;
}

constexpr std::size_t kBufferBytes = std::size_t(8) << 20;
constexpr std::size_t kAlign = 8;

void check(CUptiResult r, const char* what) {
    if (r == CUPTI_SUCCESS) return;
    const char* msg = nullptr;
    cuptiGetResultString(r, &msg);
    throw Error(std::string("timeline: CUPTI ") + what + " failed: " + (msg ? msg : "unknown error"));
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(kAlign, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
    std::vector<TimelineRecord> got;
    CUpti_Activity* rec = nullptr;
    while (buffer && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
            TimelineRecord r;
            r.kernel = true;
            r.name = k->name ? k->name : "";
            r.start_ns = k->start, r.end_ns = k->end;
            r.smem_config = k->sharedMemoryExecuted;
            got.push_back(std::move(r));
        } else if (rec->kind == CUPTI_ACTIVITY_KIND_CUDA_EVENT) {
            const auto* e = reinterpret_cast<const CUpti_ActivityCudaEvent2*>(rec);
            TimelineRecord r;
            r.start_ns = r.end_ns = e->deviceTimestamp;
            if (r.start_ns) got.push_back(std::move(r));
        }
    }
    std::free(buffer);
    auto& c = collected();
    const std::lock_guard<std::mutex> lock(c.m);
    c.records.insert(c.records.end(), got.begin(), got.end());
}

}  // namespace

TimelineCapture::TimelineCapture() {
    {
        auto& c = collected();
        const std::lock_guard<std::mutex> lock(c.m);
        c.records.clear();
    }
    check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks");
    check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "enabling kernel records");
    check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CUDA_EVENT), "enabling CUDA event records");
    check(cuptiActivityEnableCudaEventDeviceTimestamps(1), "enabling the events' device timestamps");
    active_ = true;
}

TimelineCapture::~TimelineCapture() {
    if (!active_) return;
    cuptiActivityFlushAll(1);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CUDA_EVENT);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

std::vector<TimelineRecord> TimelineCapture::finish() {
    check(cuptiActivityFlushAll(1), "cuptiActivityFlushAll");
    check(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CUDA_EVENT), "disabling CUDA event records");
    check(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "disabling kernel records");
    active_ = false;
    auto& c = collected();
    const std::lock_guard<std::mutex> lock(c.m);
    return std::move(c.records);
}
#else
TimelineCapture::TimelineCapture() {
    throw Error("timeline: this convstudy was built without CUPTI (the CUDA toolkit's CUPTI was not found at "
                "configure time)");
}
TimelineCapture::~TimelineCapture() = default;
std::vector<TimelineRecord> TimelineCapture::finish() { return {}; }
#endif

}  // namespace cs::gpu
