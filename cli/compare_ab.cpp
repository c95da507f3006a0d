// The A/B rule of `compare --again` (compare_ab.hpp).
#include "compare_ab.hpp"

#include "atomic_file.hpp"
#include "csv_table.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>

namespace cs::cli::compare {

namespace {

const Timing& timing_of(const Record& r, Metric m) { return m == Metric::kernel ? r.kernel : r.total; }


// |before2 / before1 - 1| of the metric's medians where both before runs PASSed with a time, else NaN.
double aa_of(const AbEntry& e, Metric m) {
    if (!e.b1 || !e.b2 || e.b1->status != "PASS" || e.b2->status != "PASS") return NAN;
    const double x = timing_of(*e.b1, m).med, y = timing_of(*e.b2, m).med;
    return std::isfinite(x) && std::isfinite(y) && x > 0 ? std::fabs(y / x - 1) : NAN;
}

// The change of one row across the four runs; sets e.ratio.
AbChange classify(AbEntry& e, Metric m, double aa_max) {
    const std::array<const Record*, 4> runs{e.b1, e.a1, e.b2, e.a2};
    if (std::any_of(runs.begin(), runs.end(), [](const Record* r) { return !r; })) return AbChange::missing;
    if (e.b1->status != e.b2->status) return AbChange::unstable;
    if (e.a1->status != e.b1->status || e.a2->status != e.b1->status) return AbChange::status_change;
    if (e.b1->status != "PASS") return AbChange::untimed;
    const Timing &tb1 = timing_of(*e.b1, m), &tb2 = timing_of(*e.b2, m);
    const Timing &ta1 = timing_of(*e.a1, m), &ta2 = timing_of(*e.a2, m);
    if (!std::isfinite(tb1.med) || !std::isfinite(tb2.med) || !std::isfinite(ta1.med) || !std::isfinite(ta2.med) ||
        tb1.med <= 0 || tb2.med <= 0)
        return AbChange::untimed;
    auto all = [&](Verdict v) {
        for (const Timing* b : {&tb1, &tb2})
            for (const Timing* a : {&ta1, &ta2})
                if (judge(*b, *a) != v) return false;
        return true;
    };
    const double b_max = std::max(tb1.med, tb2.med), b_min = std::min(tb1.med, tb2.med);
    const double a_max = std::max(ta1.med, ta2.med), a_min = std::min(ta1.med, ta2.med);
    if (all(Verdict::slower)) {
        e.ratio = a_min / b_max;
        return e.ratio - 1 > aa_max ? AbChange::slower : AbChange::within_aa;
    }
    if (all(Verdict::faster)) {
        e.ratio = a_max / b_min;
        return 1 - e.ratio > aa_max ? AbChange::faster : AbChange::same;
    }
    e.ratio = (ta1.med + ta2.med) / (tb1.med + tb2.med);
    return AbChange::same;
}

}  // namespace

const char* to_string(AbChange c) {
    switch (c) {
        case AbChange::missing: return "missing";
        case AbChange::status_change: return "status change";
        case AbChange::unstable: return "unstable (before's two runs differ)";
        case AbChange::slower: return "slower";
        case AbChange::faster: return "faster";
        case AbChange::within_aa: return "slower beyond noise, within the A/A";
        case AbChange::same: return "same";
        default: return "not timed";
    }
}

const Record& AbEntry::any() const { return b1 ? *b1 : a1 ? *a1 : b2 ? *b2 : *a2; }

std::size_t AbComparison::count(AbChange c) const {
    return std::size_t(std::count_if(entries.begin(), entries.end(), [&](const AbEntry& e) { return e.change == c; }));
}

bool AbComparison::failed() const {
    return count(AbChange::missing) + count(AbChange::status_change) + count(AbChange::unstable) +
               count(AbChange::slower) >
           0;
}

double AbComparison::aa_max(const std::string& family) const {
    const auto it = aa.find(family);
    return it == aa.end() ? 0.0 : it->second.first;
}

AbComparison compare_ab(const Results& b1, const Results& a1, const Results& b2, const Results& a2, Metric metric) {
    AbComparison c;
    c.metric = metric;
    std::map<std::string, AbEntry> by_key;
    std::vector<std::string> order;  // first seen: before1's order, then rows new in later runs
    auto add = [&](const Results& res, const Record* AbEntry::*slot) {
        for (const auto& r : res.rows) {
            const std::string k = key_of(r);
            auto [it, fresh] = by_key.try_emplace(k);
            if (fresh) order.push_back(k);
            it->second.*slot = &r;
        }
    };
    add(b1, &AbEntry::b1);
    add(a1, &AbEntry::a1);
    add(b2, &AbEntry::b2);
    add(a2, &AbEntry::a2);
    for (const auto& k : order) {
        c.entries.push_back(by_key[k]);
        c.entries.back().aa = aa_of(c.entries.back(), metric);
    }
    // Each family's A/A largest difference first: the threshold its rows are judged against.
    for (const auto& e : c.entries) {
        if (!std::isfinite(e.aa)) continue;
        auto [it, fresh] = c.aa.try_emplace(e.b1->family, e.aa, e.b1);
        if (!fresh && e.aa > it->second.first) it->second = {e.aa, e.b1};
    }
    for (auto& e : c.entries) e.change = classify(e, metric, c.aa_max(e.any().family));
    const auto rank = [](const AbEntry& e) {
        const double r = std::isfinite(e.ratio) && e.ratio > 0 ? std::log(e.ratio) : 0.0;
        return std::make_tuple(int(e.change), e.change == AbChange::faster ? r : -r);
    };
    std::stable_sort(c.entries.begin(), c.entries.end(),
                     [&](const AbEntry& x, const AbEntry& y) { return rank(x) < rank(y); });
    return c;
}

namespace {

std::string row_name(const Record& r) {
    return r.layer + " N=" + std::to_string(r.N) + " " + r.variant + (r.axes.empty() ? "" : " [" + r.axes + "]") + " " +
           r.precision + " " + r.layout + " " + r.memory;
}

std::string statuses(const AbEntry& e) {
    std::string s;
    for (const Record* r : {e.b1, e.a1, e.b2, e.a2}) s += (s.empty() ? "" : "/") + (r ? r->status : std::string("-"));
    return s;
}

std::string medians(const AbEntry& e, Metric m) {
    std::string s;
    for (const Record* r : {e.b1, e.a1, e.b2, e.a2})
        s += (s.empty() ? "" : " ") + (r ? format_number(timing_of(*r, m).med, "%.4g") : std::string("-"));
    return s;
}

}  // namespace

std::string format_ab(const AbComparison& c, const std::vector<const Results*>& runs) {
    std::ostringstream os;
    const char* names[] = {"before 1", "after 1", "before 2", "after 2"};
    os << "A/B of two programs, run before, after, before, after (metric: "
       << (c.metric == Metric::kernel ? "kernel_ms" : "total_ms") << ")\n";
    for (std::size_t i = 0; i < runs.size() && i < 4; ++i) {
        std::string rev;
        if (runs[i]->meta.count("git_rev"))
            for (const auto& v : runs[i]->meta.at("git_rev")) rev += (rev.empty() ? "" : ", ") + v;
        os << "  " << names[i] << ": " << runs[i]->path << " (" << runs[i]->rows.size() << " rows, revision "
           << (rev.empty() ? "not recorded" : rev) << ")\n";
    }
    os << "A/A (before 1 against before 2), largest difference per family:";
    if (c.aa.empty()) os << " no row timed in both";
    os << "\n";
    for (const auto& [family, v] : c.aa)
        os << "  " << (family.empty() ? "(no family)" : family) << ": " << format_number(100 * v.first, "%.2f") << "% ("
           << row_name(*v.second) << ")\n";
    os << "Rule: slower (faster) only when both after runs are outside the noise of both before runs "
          "([p10, p90] each way) and the nearest after/before ratio is beyond 1 + (1 -) the A/A's largest "
          "difference of the row's family\n";
    for (AbChange k : {AbChange::missing, AbChange::status_change, AbChange::unstable, AbChange::slower,
                       AbChange::faster, AbChange::within_aa, AbChange::same, AbChange::untimed})
        os << "  " << to_string(k) << ": " << c.count(k) << "\n";
    bool header = false;
    for (const auto& e : c.entries) {
        if (e.change == AbChange::same || e.change == AbChange::untimed) continue;
        if (!header) os << "Rows not the same (statuses and medians before1/after1/before2/after2, ms):\n";
        header = true;
        os << "  " << to_string(e.change) << ": " << row_name(e.any()) << "  " << statuses(e) << "  "
           << medians(e, c.metric) << (std::isfinite(e.ratio) ? "  ratio " + format_number(e.ratio, "%.3f") : "") << "\n";
    }
    os << (c.failed() ? "A/B: FAILED (a row is missing, changed its status, is unstable or slower)\n"
                      : "A/B: PASSED (no status change, no row slower by the rule)\n");
    return os.str();
}

void write_ab_csv(const std::string& path, const AbComparison& c) {
    write_file_atomic(path, [&](std::ostream& os) {
        os << "layer,N,variant,precision,layout,memory,axes,change,status_before1,status_after1,status_before2,"
              "status_after2,ms_before1,ms_after1,ms_before2,ms_after2,ratio,aa_difference\n";
        const auto& q = csv_quote;
        for (const auto& e : c.entries) {
            const Record& r = e.any();
            os << q(r.layer) << ',' << r.N << ',' << q(r.variant) << ',' << q(r.precision) << ',' << q(r.layout) << ','
               << q(r.memory) << ',' << q(r.axes) << ',' << q(to_string(e.change));
            for (const Record* x : {e.b1, e.a1, e.b2, e.a2}) os << ',' << (x ? q(x->status) : "");
            for (const Record* x : {e.b1, e.a1, e.b2, e.a2})
                os << ',' << (x ? format_number(timing_of(*x, c.metric).med, "%.6g") : "");
            os << ',' << format_number(e.ratio, "%.6g") << ',' << format_number(e.aa, "%.6g") << '\n';
        }
    });
}

}  // namespace cs::cli::compare
