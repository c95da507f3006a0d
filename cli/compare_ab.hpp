// `convstudy compare BEFORE1 AFTER1 --again BEFORE2 AFTER2`: two programs timed against each
// other in alternation (an `ab` plan step runs before, after, before, after per (layer, N)),
// judged by the A/B rule of a change that must not move a number:
// - the A/A: the two runs of "before" against each other; its largest difference is the
//   largest |before2 / before1 - 1| of the metric's medians over the rows both timed, taken per
//   family (a library that picks its engine per process, cuDNN's legacy API, differs by tens of
//   percent between processes: its A/A must not widen the bar our kernels are judged by);
// - a row is slower only when each "after" run is slower beyond noise (compare's judge: outside
//   the other side's [p10, p90]) than each "before" run, and the faster "after" is slower than
//   the slower "before" by more than its family's A/A largest difference; faster likewise,
//   mirrored;
// - a status that differs between the runs of "after" and those of "before" is a status change;
//   one that differs between the two "before" runs is an unstable row; a row missing from any
//   of the four runs is missing.
// Exit 1 when a row is slower, changed its status, is unstable or missing: the gate an A/B
// of "no number may change" needs. Rows merely slower beyond noise in all four pairs but
// within the A/A's difference are counted and listed (as "within A/A") so that a reader sees them.
#pragma once

#include "compare.hpp"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cs::cli::compare {

enum class AbChange { missing, status_change, unstable, slower, faster, within_aa, same, untimed };
const char* to_string(AbChange c);

struct AbEntry {
    const Record* b1 = nullptr;  // null: missing from that run
    const Record* a1 = nullptr;
    const Record* b2 = nullptr;
    const Record* a2 = nullptr;
    AbChange change = AbChange::same;
    // min(after medians) / max(before medians) for slower, max(after) / min(before) for faster,
    // the ratio of the medians' means otherwise (NaN where not all four are timed)
    double ratio = NAN;
    double aa = NAN;  // |before2 / before1 - 1| of this row (NaN unless both before runs PASSed with a time)
    const Record& any() const;
};

struct AbComparison {
    Metric metric = Metric::kernel;
    std::vector<AbEntry> entries;  // worst first: missing, status changes, unstable, slower, ...
    // Per family: the A/A's largest difference and the row (its before 1 record) it was measured on.
    std::map<std::string, std::pair<double, const Record*>> aa;
    double aa_max(const std::string& family) const;  // 0 where no row of the family was timed twice
    std::size_t count(AbChange c) const;
    bool failed() const;  // missing, status change, unstable or slower rows
};

// The four runs in the order they ran: before1, after1, before2, after2.
AbComparison compare_ab(const Results& b1, const Results& a1, const Results& b2, const Results& a2,
                        Metric metric = Metric::kernel);
std::string format_ab(const AbComparison& c, const std::vector<const Results*>& runs);
// Every row (atomically): its keys, change, four statuses and medians, ratio and A/A difference.
void write_ab_csv(const std::string& path, const AbComparison& c);

}  // namespace cs::cli::compare
