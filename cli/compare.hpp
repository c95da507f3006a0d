// `convstudy compare A.csv B.csv`: two result CSVs side by side with noise-aware verdicts.
//
// Rows are matched on (layer, N, variant, precision, layout, memory); columns are found by
// header name, so CSVs from older versions (no `layout` column: nchw) compare with newer
// ones. For each matched row: B/A of kernel_ms and total_ms, and a verdict from the recorded
// median and spread of both sides: "same" when either side's median lies inside the other
// side's [p10, p90] of its timed repeats (the difference is inside the noise one of the runs
// showed), else "faster" or "slower". p10 / p90 are robust: one outlier repeat (the cuDNN
// rows' max lies well above their median) neither widens the spread to hide a change nor
// narrows it to invent one. A CSV older than the p10/p90 columns is judged on [min, max]
// instead, and `compare` says so (Results::spread_note). This verdict is the one definition
// of "same within the noise": plots/convplots/noise.py mirrors it and tests/test_plots.cpp
// checks that the two give the same verdict counts on the fixtures. Status changes and rows present on one side only
// come first.
// Mismatched devices, tool versions, git revisions, CUDA versions and seeds are stated at the
// top. Exit codes: 0, 1 (--fail-slower tripped), 2 bad input (cs::Error naming the file).
#pragma once

#include "noise.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace cs::cli {

namespace compare {

// The timing and the noise rule (core/noise.hpp), shared with `tune`.
using cs::Timing;

struct Record {
    std::string layer, variant, family, precision, layout, memory, status, reason;
    std::string axes;  // axis values the row set (empty: defaults, or a CSV without the column)
    std::string scales;  // "<input_scale>x<weight_scale>" of the data ("1x1" where the CSV has no such columns)
    std::int64_t N = 0;
    Timing kernel, total;
    std::size_t order = 0;  // position in its file (stable ordering of the output)
};

// One result CSV, read by header name.
struct Results {
    std::string path;
    std::vector<Record> rows;                           // one per key (a repeated key: the later row)
    std::map<std::string, std::set<std::string>> meta;  // run-wide column -> values seen
    std::size_t repeated = 0;                           // rows that replaced an earlier one
    bool has_layout = false;                            // the CSV has a `layout` column
    bool has_spread = false;  // the CSV has the robust spread columns (kernel_p10_ms, ...)
    // Non-empty when it does not: what the verdict falls back to, for a warning.
    std::string spread_note() const;
};

// A results CSV, plain or gzip-compressed (inflate_if_gzip, csv_table.hpp). Throws cs::Error
// naming the file: missing, not a regular file, empty, binary, a truncated or corrupt gzip
// stream, a ragged row, a missing required column, a bad number.
Results read_results(const std::string& path);

// The key rows are matched on: layer, N, variant, precision, layout, memory, axes, data scales.
std::string key_of(const Record& r);

using cs::Verdict;
using cs::judge;
using cs::to_string;

// What changed for one key, in the order the output lists them.
enum class Change {
    status_worse,    // PASS -> FAIL/ERROR/SKIP, or SKIP -> FAIL/ERROR
    only_a,          // in A only (the row went away)
    only_b,          // in B only (a new row)
    status_better,   // FAIL/ERROR/SKIP -> PASS, or FAIL/ERROR -> SKIP
    slower,
    faster,
    same,
    untimed,         // neither side PASS, same status on both
};
const char* to_string(Change c);

struct Entry {
    const Record* a = nullptr;  // null: only in B
    const Record* b = nullptr;  // null: only in A
    Change change = Change::same;
    Verdict kernel = Verdict::none, total = Verdict::none;
    double kernel_ratio = NAN, total_ratio = NAN;  // B / A of the medians
    const Record& any() const { return a ? *a : *b; }
    std::string status_change() const;  // "PASS -> FAIL", "PASS", "only in A", ...
};

struct MetaLine {
    std::string column, a, b;  // values joined with ", "; empty: the column is absent
    bool differs = false;
    bool unknown = false;  // not recorded, or "unknown", on both sides: cannot be compared
    std::string note;  // e.g. "unknown on both sides"
};

enum class Metric { kernel, total };

struct Comparison {
    const Results* a = nullptr;
    const Results* b = nullptr;
    Metric metric = Metric::kernel;
    std::vector<Entry> entries;  // sorted: status changes and one-sided rows, then by change
    std::vector<MetaLine> meta;
    std::size_t count(Change c) const;
    // Rows whose verdict (of the metric) is slower and whose ratio exceeds 1 + pct / 100.
    std::vector<const Entry*> slower_than(double pct) const;
};

Comparison compare(const Results& a, const Results& b, Metric metric = Metric::kernel);

std::string format_table(const Comparison& c, bool only_changed);
std::string format_markdown(const Comparison& c, bool only_changed);
// The whole comparison as JSON (format "convstudy compare 1"): both files, the metric, the
// run-wide columns, the counts per change, the rule, and every entry with its keys, statuses,
// the row's record number in each file (1 = the first row after the header; null: not in that
// file), both sides' timings, ratios and verdicts (a number not recorded: null). The report
// (plots/convplots/comparison.py) reads its verdicts from here instead of computing them again.
std::string format_json(const Comparison& c);
// Writes every entry (atomically, temporary file + rename); throws cs::Error naming the path.
void write_compare_csv(const std::string& path, const Comparison& c);

}  // namespace compare

struct CompareArgs {
    std::string a, b, csv, metric = "kernel";
    std::vector<std::string> again;  // --again A2 B2: second runs of both sides, the A/B rule (compare_ab.hpp)
    bool markdown = false, json = false, only_changed = false;
    double fail_slower = -1;  // < 0: off
};

// Registers the `compare` subcommand on `app`, filling `args` when parsed.
CLI::App* add_compare_command(CLI::App& app, CompareArgs& args);
// Runs it: 0, or 1 when --fail-slower tripped (with --again: when the A/B rule failed); throws cs::Error on bad input (exit 2).
int cmd_compare(const CompareArgs& args);

}  // namespace cs::cli
