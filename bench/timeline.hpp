// The device's own timeline of a run: CUPTI's activity records of every kernel (its start and end,
// the shared memory it ran with) and of every CUDA event (its device timestamp), so that what an
// event-timed interval holds beside its kernels can be split: the time from the interval's start
// to its first kernel's start (pre), the kernels' own span (body) and the time from the last
// kernel's end to the interval's end (post). Event timing measures pre + body + post; Nsight
// Compute's duration measures a kernel's body alone (issue 51's N=1 gap: the events measure more
// than Nsight Compute's duration for our wgmma kernels and cuDNN's nvjet, not for its sm80 kernel;
// docs/findings.md, "Other networks").
//
// The harness's timed interval (harness_run.cpp): the hold kernel (DeviceContext::hold), the start
// event, the row's kernels, the end event. timeline_intervals() takes the kernels after each hold
// and anchors the interval on its events' device timestamps where CUPTI gives them in the kernels'
// time base (the start event between the hold's end and the first kernel's start), else on the
// hold's end, with the kernels that ran back to back after it and post unknown.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cs::gpu {

struct TimelineRecord {
    bool kernel = false;            // else a CUDA event record (start_ns == end_ns: its device timestamp)
    std::string name;               // a kernel's (mangled) name
    std::uint64_t start_ns = 0, end_ns = 0;
    std::uint32_t smem_config = 0;  // a kernel's shared memory configuration as it ran, bytes an SM (0: unknown)
};

struct TimelineInterval {
    bool event_anchored = false;  // pre and post from the events' device timestamps; else pre from the hold's end
    double pre_us = 0, body_us = 0, post_us = -1;  // post: -1 where unknown (anchored on the hold)
    int kernels = 0;
    std::string first_kernel;
    std::uint32_t smem_config = 0, hold_smem_config = 0;  // the first kernel's and the hold kernel's
};

// The timed intervals in `records` (any order): the kernels after each kernel whose name holds
// `hold`, between the events around them where their timestamps fit, else those back to back.
std::vector<TimelineInterval> timeline_intervals(std::vector<TimelineRecord> records, std::string_view hold);

// The median of each part over `intervals` (post over those that know it; -1 where none does).
struct TimelineSummary {
    int intervals = 0, event_anchored = 0;
    double pre_us = 0, body_us = 0, post_us = -1;
};
TimelineSummary summarize(const std::vector<TimelineInterval>& intervals);

// Where no interval is on its events (post unknown): post estimated as the events' median interval
// less the medians of pre and kernels, the start event fired as the hold ended. A difference of
// medians, not a median of differences: near zero, the events measure pre and kernels and nothing
// after (it can come out a little under zero). NaN where the summary knows post from the events,
// or has no interval.
double post_from_event_median(const TimelineSummary& s, double event_median_us);

// CUPTI's activity collection, from construction to finish(): kernels (concurrent kernel records)
// and CUDA events with device timestamps. One at a time in a process. Throws cs::Error where CUPTI
// cannot collect (no device, a profiler already attached).
class TimelineCapture {
public:
    TimelineCapture();
    ~TimelineCapture();
    TimelineCapture(const TimelineCapture&) = delete;
    TimelineCapture& operator=(const TimelineCapture&) = delete;
    // Flushes and stops the collection; the records since construction.
    std::vector<TimelineRecord> finish();

private:
    bool active_ = false;
};

}  // namespace cs::gpu
