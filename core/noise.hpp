// "Same within the noise": the one rule that judges two timings, used by `compare` (cli/compare.hpp)
// and by `tune` (bench/tuner.hpp), which replaces an incumbent only with a challenger faster by it.
//
// A timing is its median and spread: [p10, p90] of its timed repeats where recorded, else
// [min, max], else the median alone. Two timings are the same when either median lies inside the
// other's spread (the difference is inside the noise one of the runs showed), else the later is
// faster or slower. p10 / p90 are robust: one outlier repeat neither widens the spread to hide a
// change nor narrows it to invent one. plots/convplots/noise.py mirrors it and tests/test_plots.cpp
// checks that the two agree on the fixtures.
#pragma once

#include <algorithm>
#include <cmath>

namespace cs {

// median, min, max, p10, p90 of one timing (NaN when not recorded)
struct Timing {
    double med = NAN, min = NAN, max = NAN, p10 = NAN, p90 = NAN;
    // The spread the verdict uses: [p10, p90] when recorded, else [min, max], else the
    // median alone; always containing the median.
    double lo() const {
        if (std::isfinite(p10) && std::isfinite(p90)) return std::min(p10, med);
        return std::isfinite(min) ? std::min(min, med) : med;
    }
    double hi() const {
        if (std::isfinite(p10) && std::isfinite(p90)) return std::max(p90, med);
        return std::isfinite(max) ? std::max(max, med) : med;
    }
};

enum class Verdict { same, faster, slower, none };

inline const char* to_string(Verdict v) {
    switch (v) {
        case Verdict::same: return "same";
        case Verdict::faster: return "faster";
        case Verdict::slower: return "slower";
        default: return "-";
    }
}

// The verdict of b's timing against a's (none when a median is missing).
inline Verdict judge(const Timing& a, const Timing& b) {
    if (!std::isfinite(a.med) || !std::isfinite(b.med)) return Verdict::none;
    if ((b.med >= a.lo() && b.med <= a.hi()) || (a.med >= b.lo() && a.med <= b.hi())) return Verdict::same;
    return b.med > a.med ? Verdict::slower : Verdict::faster;
}

}  // namespace cs
