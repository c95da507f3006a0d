// `convstudy compare`: see compare.hpp.
#include "compare.hpp"
#include "compare_ab.hpp"

#include "csv_table.hpp"

#include "atomic_file.hpp"
#include "error.hpp"
#include "join.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <tuple>

namespace cs::cli {

namespace compare {

namespace {

namespace fs = std::filesystem;

// Columns a results CSV must have; the rest are optional.
const std::vector<std::string>& required_columns() {
    static const std::vector<std::string> c = {"layer", "N", "variant", "precision", "memory", "status", "kernel_ms"};
    return c;
}

// Run-wide columns whose values are compared between A and B and stated at the top.
// A seed column is stated when either CSV carries one.
const std::vector<std::string>& meta_columns() {
    static const std::vector<std::string> c = {"device",  "cc",     "sms",    "cuda_runtime", "driver",
                                               "tool_version", "git_rev", "seed", "golden_seed", "repeats",
                                               "warmup",  "l2_flush", "cudnn_version"};
    return c;
}

std::string read_file(const std::string& path) {
    std::error_code ec;
    const fs::path p(path);
    if (!fs::exists(p, ec)) throw Error(path + ": no such file");
    if (fs::is_directory(p, ec)) throw Error(path + ": is a directory, not a results CSV");
    if (!fs::is_regular_file(p, ec)) throw Error(path + ": not a regular file, not a results CSV");
    const auto size = fs::file_size(p, ec);
    if (ec) throw Error(path + ": cannot read (" + ec.message() + ")");
    if (size > kMaxCsvBytes) throw Error(path + ": " + std::to_string(size) + " bytes, too large for a results CSV");
    std::ifstream f(p, std::ios::binary);
    if (!f) throw Error(path + ": cannot open for reading");
    std::ostringstream ss;
    ss << f.rdbuf();
    if (f.bad()) throw Error(path + ": read error");
    return inflate_if_gzip(ss.str(), path, kMaxCsvBytes);  // a .csv.gz reads as its CSV
}

std::string trim(const std::string& s) {
    const auto a = s.find_first_not_of(" \t");
    if (a == std::string::npos) return "";
    const auto b = s.find_last_not_of(" \t");
    return s.substr(a, b - a + 1);
}

std::string upper(std::string s) {
    for (auto& ch : s) ch = char(std::toupper(static_cast<unsigned char>(ch)));
    return s;
}

// A number, NaN for an empty field; throws naming the file, line and column otherwise.
double number(const std::string& path, std::size_t line, const std::string& col, const std::string& s) {
    if (s.empty()) return NAN;
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || *end != '\0' || errno == ERANGE)
        throw Error(path + ":" + std::to_string(line) + ": " + col + " '" + s + "' is not a number");
    return v;
}

// A header field's values as compare shows them ("(empty)" for an empty one).
std::string shown(const std::set<std::string>& s) {
    std::vector<std::string> v;
    for (const auto& x : s) v.push_back(x.empty() ? std::string("(empty)") : x);
    return join(v, ", ");
}

bool is_pass(const Record* r) { return r && r->status == "PASS"; }
bool is_bad(const std::string& s) { return s == "FAIL" || s == "ERROR"; }

double ratio(const Timing& a, const Timing& b) {
    if (!std::isfinite(a.med) || !std::isfinite(b.med) || a.med <= 0) return NAN;
    return b.med / a.med;
}

}  // namespace

std::string key_of(const Record& r) {
    return r.layer + '\x1f' + std::to_string(r.N) + '\x1f' + r.variant + '\x1f' + r.precision + '\x1f' + r.layout +
           '\x1f' + r.memory + '\x1f' + r.axes + '\x1f' + r.scales;
}

const char* to_string(Change c) {
    switch (c) {
        case Change::status_worse: return "status worse";
        case Change::only_a: return "only in A";
        case Change::only_b: return "only in B";
        case Change::status_better: return "status better";
        case Change::slower: return "slower";
        case Change::faster: return "faster";
        case Change::same: return "same";
        default: return "not timed";
    }
}

std::string Entry::status_change() const {
    if (!a) return "only in B (" + b->status + ")";
    if (!b) return "only in A (" + a->status + ")";
    if (a->status == b->status) return a->status;
    return a->status + " -> " + b->status;
}

Results read_results(const std::string& path) {
    const std::string text = read_file(path);
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw Error(path + ": empty file, not a results CSV");
    // a UTF-8 byte order mark (a CSV saved by a spreadsheet) is not part of the first column's name
    const bool bom = text.compare(0, 3, "\xEF\xBB\xBF") == 0;
    const auto recs = parse_csv_lines(bom ? text.substr(3) : text, path);
    if (recs.empty()) throw Error(path + ": empty file, not a results CSV");
    const auto& header = recs[0].fields;
    std::map<std::string, std::size_t> col;
    for (std::size_t i = 0; i < header.size(); ++i) col.emplace(trim(header[i]), i);
    std::vector<std::string> missing;
    for (const auto& c : required_columns())
        if (!col.count(c)) missing.push_back(c);
    if (!missing.empty()) {
        throw Error(path + ": not a convstudy results CSV (missing column" + (missing.size() > 1 ? "s " : " ") +
                    join(missing, ", ") +
                    " in the header)");
    }
    Results res;
    res.path = path;
    res.has_layout = col.count("layout") > 0;
    res.has_spread = col.count("kernel_p10_ms") > 0 && col.count("kernel_p90_ms") > 0;
    std::map<std::string, std::size_t> index;  // key -> position in res.rows
    for (std::size_t k = 1; k < recs.size(); ++k) {
        const auto& f = recs[k].fields;
        const std::size_t line = recs[k].line;
        if (f.size() != header.size())
            throw Error(path + ":" + std::to_string(line) + ": " + std::to_string(f.size()) + " fields, the header has " +
                        std::to_string(header.size()) + " (not a results CSV, or a truncated row)");
        auto get = [&](const std::string& name) -> std::string {
            auto it = col.find(name);
            return it == col.end() ? std::string() : trim(f[it->second]);
        };
        auto timing = [&](const std::string& what) {
            auto val = [&](const std::string& c) { return number(path, line, c, get(c)); };
            return Timing{val(what + "_ms"), val(what + "_min_ms"), val(what + "_max_ms"), val(what + "_p10_ms"),
                          val(what + "_p90_ms")};
        };
        Record r;
        r.layer = get("layer");
        r.variant = get("variant");
        r.family = get("family");
        r.precision = get("precision");
        r.axes = get("axes");
        {
            const std::string si = get("input_scale"), sw = get("weight_scale");
            r.scales = (si.empty() ? "1" : si) + "x" + (sw.empty() ? "1" : sw);
        }
        r.layout = get("layout");
        if (r.layout.empty()) r.layout = "nchw";
        r.memory = get("memory");
        r.status = upper(get("status"));
        r.reason = get("reason");
        const double n = number(path, line, "N", get("N"));
        if (!std::isfinite(n) || n < 1 || n != std::floor(n) || n > 1e15)
            throw Error(path + ":" + std::to_string(line) + ": N '" + get("N") + "' is not a batch size");
        r.N = std::int64_t(n);
        if (r.layer.empty() || r.variant.empty())
            throw Error(path + ":" + std::to_string(line) + ": empty layer or variant");
        r.kernel = timing("kernel");
        r.total = timing("total");
        r.order = k;
        for (const auto& m : meta_columns())  // empty cells (repeats of a SKIP row) say nothing
            if (col.count(m) && !get(m).empty()) res.meta[m].insert(get(m));
        const std::string key = key_of(r);
        auto it = index.find(key);
        if (it == index.end()) {
            index.emplace(key, res.rows.size());
            res.rows.push_back(std::move(r));
        } else {  // a later row of the same key (concatenated sweeps) replaces the earlier
            res.rows[it->second] = std::move(r);
            ++res.repeated;
        }
    }
    if (res.rows.empty()) throw Error(path + ": the CSV has a header but no rows");
    return res;
}

std::string Results::spread_note() const {
    if (has_spread) return {};
    return path + " has no kernel_p10_ms / kernel_p90_ms columns (a CSV older than the robust spread): its rows "
                  "are judged on [min, max] instead, which one outlier repeat can widen";
}

std::size_t Comparison::count(Change c) const {
    return std::size_t(std::count_if(entries.begin(), entries.end(), [&](const Entry& e) { return e.change == c; }));
}

std::vector<const Entry*> Comparison::slower_than(double pct) const {
    std::vector<const Entry*> out;
    for (const auto& e : entries) {
        const Verdict v = metric == Metric::kernel ? e.kernel : e.total;
        const double r = metric == Metric::kernel ? e.kernel_ratio : e.total_ratio;
        if (v == Verdict::slower && std::isfinite(r) && r > 1.0 + pct / 100.0) out.push_back(&e);
    }
    return out;
}

Comparison compare(const Results& a, const Results& b, Metric metric) {
    Comparison c;
    c.a = &a;
    c.b = &b;
    c.metric = metric;
    std::map<std::string, const Record*> in_b;
    for (const auto& r : b.rows) in_b.emplace(key_of(r), &r);
    std::set<std::string> matched;
    for (const auto& ra : a.rows) {
        Entry e;
        e.a = &ra;
        auto it = in_b.find(key_of(ra));
        if (it != in_b.end()) {
            e.b = it->second;
            matched.insert(it->first);
        }
        c.entries.push_back(e);
    }
    for (const auto& rb : b.rows)
        if (!matched.count(key_of(rb))) {
            Entry e;
            e.b = &rb;
            c.entries.push_back(e);
        }
    for (auto& e : c.entries) {
        if (!e.b) {
            e.change = Change::only_a;
            continue;
        }
        if (!e.a) {
            e.change = Change::only_b;
            continue;
        }
        const std::string& sa = e.a->status;
        const std::string& sb = e.b->status;
        if (is_pass(e.a) && is_pass(e.b)) {
            e.kernel = judge(e.a->kernel, e.b->kernel);
            e.total = judge(e.a->total, e.b->total);
            e.kernel_ratio = ratio(e.a->kernel, e.b->kernel);
            e.total_ratio = ratio(e.a->total, e.b->total);
            const Verdict v = metric == Metric::kernel ? e.kernel : e.total;
            e.change = v == Verdict::slower ? Change::slower : v == Verdict::faster ? Change::faster : Change::same;
        } else if (sa == sb) {
            e.change = Change::untimed;
        } else if (sa == "PASS" || (sa == "SKIP" && is_bad(sb))) {
            e.change = Change::status_worse;
        } else {
            e.change = Change::status_better;
        }
    }
    const auto rank = [&](const Entry& e) -> std::tuple<int, double, int, std::size_t> {
        const double r = metric == Metric::kernel ? e.kernel_ratio : e.total_ratio;
        const double lr = std::isfinite(r) && r > 0 ? std::log(r) : 0.0;
        double by = 0;
        if (e.change == Change::slower) by = -lr;              // the most slowed first
        else if (e.change == Change::faster) by = lr;          // the most sped up first
        else if (e.change == Change::same) by = -std::fabs(lr);
        return {int(e.change), by, e.a ? 0 : 1, e.a ? e.a->order : e.b->order};
    };
    std::stable_sort(c.entries.begin(), c.entries.end(),
                     [&](const Entry& x, const Entry& y) { return rank(x) < rank(y); });

    std::set<std::string> seen_seed;
    for (const auto& m : meta_columns()) {
        const bool ina = a.meta.count(m) > 0, inb = b.meta.count(m) > 0;
        if (!ina && !inb) continue;
        MetaLine l;
        l.column = m;
        l.a = ina ? shown(a.meta.at(m)) : "";
        l.b = inb ? shown(b.meta.at(m)) : "";
        l.differs = l.a != l.b;
        if (!ina) l.note = "not recorded in A";
        else if (!inb) l.note = "not recorded in B";
        else if (m == "git_rev" && l.a == "unknown" && l.b == "unknown") {
            l.note = "unknown on both sides: the revisions cannot be compared";
            l.unknown = true;
        }
        else if (a.meta.at(m).size() > 1 || b.meta.at(m).size() > 1)
            l.note = "several values in one CSV";
        c.meta.push_back(l);
    }
    if (!a.meta.count("seed") && !a.meta.count("golden_seed") && !b.meta.count("seed") &&
        !b.meta.count("golden_seed"))
        c.meta.push_back({"seed", "", "", false, true, "not recorded in either CSV; cannot be compared"});
    return c;
}

namespace {

std::string fmt(double v, const char* f = "%.4g") { return std::isfinite(v) ? format_number(v, f) : "-"; }

std::string timing_cell(const Record* r, bool kernel) {
    if (!r) return "-";
    if (r->status != "PASS") return r->status;
    const Timing& t = kernel ? r->kernel : r->total;
    if (!std::isfinite(t.med)) return "-";
    std::string s = fmt(t.med);
    if (t.hi() > t.lo() || std::isfinite(t.min)) s += " (" + fmt(t.lo()) + "-" + fmt(t.hi()) + ")";
    return s;
}

std::string ratio_cell(double r) { return std::isfinite(r) ? fmt(r, "%.3f") : "-"; }

std::string verdict_cell(const Entry& e, const Comparison& c) {
    switch (e.change) {
        case Change::status_worse:
        case Change::status_better:
        case Change::only_a:
        case Change::only_b:
        case Change::untimed: return e.status_change();
        default: break;
    }
    const Verdict k = e.kernel, t = e.total;
    const Verdict other = c.metric == Metric::kernel ? t : k;
    std::string s = to_string(c.metric == Metric::kernel ? k : t);
    if (other != Verdict::none)
        s += std::string(" (") + (c.metric == Metric::kernel ? "total " : "kernel ") + to_string(other) + ")";
    return s;
}

bool show_layout(const Comparison& c) {
    for (const auto& e : c.entries)
        if (e.any().layout != "nchw") return true;
    return c.a->has_layout || c.b->has_layout;
}

bool listed(const Entry& e, bool only_changed) {
    return !only_changed || (e.change != Change::same && e.change != Change::untimed);
}

std::string summary(const Comparison& c) {
    const std::size_t matched = c.count(Change::slower) + c.count(Change::faster) + c.count(Change::same);
    std::ostringstream s;
    s << matched << " rows timed on both sides (" << (c.metric == Metric::kernel ? "kernel_ms" : "total_ms")
      << "): " << c.count(Change::slower) << " slower, " << c.count(Change::faster) << " faster, "
      << c.count(Change::same) << " same within the spread; " << c.count(Change::status_worse)
      << " status worse, " << c.count(Change::status_better) << " status better, " << c.count(Change::only_a)
      << " only in A, " << c.count(Change::only_b) << " only in B, " << c.count(Change::untimed)
      << " not timed on either side";
    return s.str();
}

std::vector<std::string> header_cells(bool layout) {
    std::vector<std::string> h = {"change", "layer", "N", "variant", "precision"};
    if (layout) h.push_back("layout");
    for (const char* x : {"memory", "A kernel ms (spread)", "B kernel ms (spread)", "B/A kernel", "B/A total",
                          "verdict"})
        h.push_back(x);
    return h;
}

std::vector<std::string> row_cells(const Entry& e, const Comparison& c, bool layout) {
    const Record& r = e.any();
    std::vector<std::string> v = {to_string(e.change), r.layer, std::to_string(r.N),
                                  r.axes.empty() ? r.variant : r.variant + " [" + r.axes + "]", r.precision};
    if (layout) v.push_back(r.layout);
    v.push_back(r.memory);
    v.push_back(timing_cell(e.a, true));
    v.push_back(timing_cell(e.b, true));
    v.push_back(ratio_cell(e.kernel_ratio));
    v.push_back(ratio_cell(e.total_ratio));
    v.push_back(verdict_cell(e, c));
    return v;
}

// N, the two timings and the two ratios are right-aligned (the verdict is last).
bool numeric_column(std::size_t i, std::size_t n) { return i == 2 || (i + 5 >= n && i + 1 < n); }

std::string md_escape(std::string s) {
    std::string o;
    for (char ch : s) {
        if (ch == '|') o += '\\';
        o += ch;
    }
    return o;
}

}  // namespace

std::string format_table(const Comparison& c, bool only_changed) {
    std::ostringstream o;
    o << "A: " << c.a->path << " (" << c.a->rows.size() << " rows)\n";
    o << "B: " << c.b->path << " (" << c.b->rows.size() << " rows)\n";
    for (const Results* r : {c.a, c.b})
        if (r->repeated)
            o << "note: " << r->path << " repeats " << r->repeated << " row key(s); the later row of each was kept\n";
    for (const Results* r : {c.a, c.b})
        if (!r->spread_note().empty()) o << "warning: " << r->spread_note() << "\n";
    std::size_t w = 0;
    for (const auto& m : c.meta) w = std::max(w, m.column.size());
    for (const auto& m : c.meta) {
        o << (m.differs ? "DIFFERS   " : m.unknown ? "unknown   " : "same      ") << m.column << std::string(w - m.column.size() + 2, ' ');
        if (m.differs) o << "A: " << (m.a.empty() ? "-" : m.a) << "   B: " << (m.b.empty() ? "-" : m.b);
        else o << (m.a.empty() ? "-" : m.a);
        if (!m.note.empty()) o << "   (" << m.note << ")";
        o << "\n";
    }
    o << summary(c) << "\n";
    o << "verdict: \"same\" when either side's median lies inside the other side's [p10, p90] of its repeats\n\n";

    const bool layout = show_layout(c);
    std::vector<std::vector<std::string>> rows;
    rows.push_back(header_cells(layout));
    for (const auto& e : c.entries)
        if (listed(e, only_changed)) rows.push_back(row_cells(e, c, layout));
    if (rows.size() == 1) {
        o << "(no rows changed)\n";
        return o.str();
    }
    std::vector<std::size_t> width(rows[0].size(), 0);
    for (const auto& r : rows)
        for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
    for (std::size_t k = 0; k < rows.size(); ++k) {
        std::string line;
        for (std::size_t i = 0; i < rows[k].size(); ++i) {
            const bool right = numeric_column(i, rows[k].size());
            const std::string pad(width[i] - rows[k][i].size(), ' ');
            line += right ? pad + rows[k][i] : rows[k][i] + (i + 1 < rows[k].size() ? pad : "");
            if (i + 1 < rows[k].size()) line += "  ";
        }
        o << line << "\n";
        if (k == 0) {
            std::string rule;
            for (std::size_t i = 0; i < width.size(); ++i) rule += std::string(width[i], '-') + (i + 1 < width.size() ? "  " : "");
            o << rule << "\n";
        }
    }
    return o.str();
}

std::string format_markdown(const Comparison& c, bool only_changed) {
    std::ostringstream o;
    o << "# convstudy compare: B against A\n\n";
    o << "| | A | B |\n| :--- | :--- | :--- |\n";
    o << "| file | `" << md_escape(c.a->path) << "` | `" << md_escape(c.b->path) << "` |\n";
    o << "| rows | " << c.a->rows.size() << " | " << c.b->rows.size() << " |\n";
    for (const auto& m : c.meta) {
        o << "| " << (m.differs ? "**" + m.column + " differs**" : m.column) << " | "
          << md_escape(m.a.empty() ? "—" : m.a) << " | " << md_escape(m.b.empty() ? "—" : m.b) << " |";
        o << "\n";
    }
    std::vector<std::string> notes;
    for (const auto& m : c.meta)
        if (!m.note.empty()) notes.push_back(m.column + ": " + m.note);
    for (const Results* r : {c.a, c.b})
        if (r->repeated)
            notes.push_back("`" + r->path + "` repeats " + std::to_string(r->repeated) +
                            " row key(s); the later row of each was kept");
    for (const Results* r : {c.a, c.b})
        if (!r->spread_note().empty()) notes.push_back("warning: " + r->spread_note());
    o << "\n";
    for (const auto& n : notes) o << "- " << md_escape(n) << "\n";
    if (!notes.empty()) o << "\n";
    o << summary(c) << ". A row is *same* when either side's median lies inside the other side's [p10, p90] "
      << "of its timed repeats; ratios are B / A of the medians (below 1: B is faster).\n\n";

    const bool layout = show_layout(c);
    auto table = [&](const std::string& title, auto pred) {
        std::vector<const Entry*> es;
        for (const auto& e : c.entries)
            if (pred(e) && listed(e, only_changed)) es.push_back(&e);
        if (es.empty()) return;
        o << "## " << title << "\n\n";
        const auto h = header_cells(layout);
        o << "|";
        for (const auto& x : h) o << " " << x << " |";
        o << "\n|";
        for (std::size_t i = 0; i < h.size(); ++i) o << (numeric_column(i, h.size()) ? " ---: |" : " :--- |");
        o << "\n";
        for (const Entry* e : es) {
            auto cells = row_cells(*e, c, layout);
            if (e->change == Change::slower || e->change == Change::status_worse) cells[0] = "**" + cells[0] + "**";
            o << "|";
            for (const auto& x : cells) o << " " << md_escape(x) << " |";
            o << "\n";
        }
        o << "\n";
    };
    table("Status changes and rows on one side only", [](const Entry& e) {
        return e.change == Change::status_worse || e.change == Change::status_better || e.change == Change::only_a ||
               e.change == Change::only_b;
    });
    table("Timed on both sides", [](const Entry& e) {
        return e.change == Change::slower || e.change == Change::faster || e.change == Change::same;
    });
    table("Not timed on either side", [](const Entry& e) { return e.change == Change::untimed; });
    return o.str();
}

std::string format_json(const Comparison& c) {
    using nlohmann::json;
    auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
    auto timing = [&](const Record* r, bool kernel) {
        if (!r) return json(nullptr);
        const Timing& t = kernel ? r->kernel : r->total;
        return json{{"median_ms", num(t.med)}, {"min_ms", num(t.min)}, {"max_ms", num(t.max)},
                    {"p10_ms", num(t.p10)},    {"p90_ms", num(t.p90)}};
    };
    auto verdict = [](Verdict v) { return v == Verdict::none ? json(nullptr) : json(to_string(v)); };
    auto side = [](const Results& r) {
        return json{{"path", r.path}, {"rows", r.rows.size()}, {"repeated_keys", r.repeated},
                    {"spread_note", r.spread_note()}};
    };
    json j;
    j["format"] = "convstudy compare 1";
    j["a"] = side(*c.a);
    j["b"] = side(*c.b);
    j["metric"] = c.metric == Metric::kernel ? "kernel" : "total";
    j["rule"] = "same when either side's median lies inside the other side's [p10, p90] of its timed repeats "
                "(else [min, max]); ratios are B / A of the medians (below 1: B is faster)";
    j["summary"] = summary(c);
    json counts = json::object();
    for (Change ch : {Change::status_worse, Change::only_a, Change::only_b, Change::status_better, Change::slower,
                      Change::faster, Change::same, Change::untimed})
        counts[to_string(ch)] = c.count(ch);
    j["counts"] = std::move(counts);
    json meta = json::array();
    for (const auto& m : c.meta)
        meta.push_back({{"column", m.column}, {"a", m.a}, {"b", m.b}, {"differs", m.differs}, {"unknown", m.unknown},
                        {"note", m.note}});
    j["meta"] = std::move(meta);
    json rows = json::array();
    for (const auto& e : c.entries) {
        const Record& r = e.any();
        rows.push_back({{"layer", r.layer},
                        {"N", r.N},
                        {"variant", r.variant},
                        {"family", e.b && !e.b->family.empty() ? e.b->family : r.family},
                        {"precision", r.precision},
                        {"layout", r.layout},
                        {"memory", r.memory},
                        {"axes", r.axes},
                        {"change", to_string(e.change)},
                        {"status_a", e.a ? json(e.a->status) : json(nullptr)},
                        {"status_b", e.b ? json(e.b->status) : json(nullptr)},
                        {"record_a", e.a ? json(e.a->order) : json(nullptr)},
                        {"record_b", e.b ? json(e.b->order) : json(nullptr)},
                        {"kernel", {{"a", timing(e.a, true)}, {"b", timing(e.b, true)}, {"ratio", num(e.kernel_ratio)},
                                    {"verdict", verdict(e.kernel)}}},
                        {"total", {{"a", timing(e.a, false)}, {"b", timing(e.b, false)}, {"ratio", num(e.total_ratio)},
                                   {"verdict", verdict(e.total)}}}});
    }
    j["rows"] = std::move(rows);
    return j.dump(1) + "\n";
}

void write_compare_csv(const std::string& path, const Comparison& c) {
    write_file_atomic(path, [&](std::ostream& os) {
        os << "layer,N,variant,family,precision,layout,memory,change,status_a,status_b,"
              "kernel_ms_a,kernel_min_ms_a,kernel_max_ms_a,kernel_p10_ms_a,kernel_p90_ms_a,"
              "kernel_ms_b,kernel_min_ms_b,kernel_max_ms_b,kernel_p10_ms_b,kernel_p90_ms_b,"
              "kernel_ratio,kernel_verdict,total_ms_a,total_min_ms_a,total_max_ms_a,total_p10_ms_a,total_p90_ms_a,"
              "total_ms_b,total_min_ms_b,total_max_ms_b,total_p10_ms_b,total_p90_ms_b,total_ratio,total_verdict\n";
        const auto& q = csv_quote;
        auto n = [](double v) { return std::isfinite(v) ? fmt(v, "%.6g") : std::string(); };
        auto t = [&](const Record* r, bool kernel) {
            if (!r) return std::string(",,,,");
            const Timing& x = kernel ? r->kernel : r->total;
            return n(x.med) + "," + n(x.min) + "," + n(x.max) + "," + n(x.p10) + "," + n(x.p90);
        };
        auto verdict = [](Verdict v) { return v == Verdict::none ? std::string() : std::string(to_string(v)); };
        for (const auto& e : c.entries) {
            const Record& r = e.any();
            const std::string family = e.b && !e.b->family.empty() ? e.b->family : r.family;
            os << q(r.layer) << ',' << r.N << ',' << q(r.variant) << ',' << q(family) << ',' << q(r.precision) << ','
               << q(r.layout) << ',' << q(r.memory) << ',' << q(to_string(e.change)) << ','
               << (e.a ? q(e.a->status) : "") << ',' << (e.b ? q(e.b->status) : "") << ',' << t(e.a, true) << ','
               << t(e.b, true) << ',' << n(e.kernel_ratio) << ',' << verdict(e.kernel) << ',' << t(e.a, false) << ','
               << t(e.b, false) << ',' << n(e.total_ratio) << ',' << verdict(e.total) << '\n';
        }
    });
}

}  // namespace compare

CLI::App* add_compare_command(CLI::App& app, CompareArgs& a) {
    auto* c = app.add_subcommand("compare",
                                 "compare two result CSVs (run B against run A): B/A ratios and noise-aware verdicts");
    c->add_option("A", a.a, "the reference run's CSV")->required();
    c->add_option("B", a.b, "the CSV compared with it")->required();
    auto* md = c->add_flag("--markdown", a.markdown, "print a markdown report instead of the terminal table");
    c->add_flag("--json", a.json,
                "print the whole comparison as JSON instead (every row's timings, ratios and verdicts, the counts)")
        ->excludes(md);
    c->add_option("--csv", a.csv, "also write every compared row to this CSV (atomically)");
    c->add_option("--fail-slower", a.fail_slower,
                  "exit 1 when a row is slower (outside both spreads) by more than PCT percent")
        ->check(CLI::NonNegativeNumber)
        ->type_name("PCT")
        ->default_str("");  // unset (-1): no limit
    c->add_option("--metric", a.metric, "what the verdict, the order and --fail-slower use: kernel (default) or total")
        ->check(CLI::IsMember({"kernel", "total"}));
    auto* only = c->add_flag("--only-changed", a.only_changed,
                             "list only rows that are not \"same\" (the CSV still has every row)");
    c->add_option("--again", a.again,
                  "A2 B2: second runs of both sides (run A, B, A2, B2 in that order): the A/B rule, where a row is "
                  "slower only beyond the noise of both A runs and beyond their A/A difference; exit 1 on a slower, "
                  "missing or status-changed row")
        ->expected(2)
        ->type_name("A2 B2")
        ->excludes(md)
        ->excludes(only);
    return c;
}

int cmd_compare(const CompareArgs& args) {
    const auto a = compare::read_results(args.a);
    const auto b = compare::read_results(args.b);
    const auto metric = args.metric == "total" ? compare::Metric::total : compare::Metric::kernel;
    if (!args.again.empty()) {
        if (args.json || args.fail_slower >= 0) throw Error("compare --again: --json and --fail-slower are not for the A/B rule");
        const auto a2 = compare::read_results(args.again.at(0));
        const auto b2 = compare::read_results(args.again.at(1));
        const auto c = compare::compare_ab(a, b, a2, b2, metric);
        if (!args.csv.empty()) compare::write_ab_csv(args.csv, c);
        std::cout << compare::format_ab(c, {&a, &b, &a2, &b2}) << std::flush;
        return c.failed() ? 1 : 0;
    }
    for (const auto* r : {&a, &b})
        if (!r->spread_note().empty()) std::fprintf(stderr, "compare: warning: %s\n", r->spread_note().c_str());
    const auto c = compare::compare(a, b, metric);
    if (!args.csv.empty()) compare::write_compare_csv(args.csv, c);
    std::cout << (args.json       ? compare::format_json(c)
                  : args.markdown ? compare::format_markdown(c, args.only_changed)
                                  : compare::format_table(c, args.only_changed));
    std::cout.flush();
    if (args.fail_slower >= 0) {
        const auto slow = c.slower_than(args.fail_slower);
        if (!slow.empty()) {
            std::fprintf(stderr, "compare: %zu row(s) slower by more than %g%% (%s_ms), e.g. %s N=%lld %s %s: %.3fx\n",
                         slow.size(), args.fail_slower, args.metric.c_str(), slow[0]->any().layer.c_str(),
                         static_cast<long long>(slow[0]->any().N), slow[0]->any().variant.c_str(),
                         slow[0]->any().memory.c_str(),
                         metric == compare::Metric::kernel ? slow[0]->kernel_ratio : slow[0]->total_ratio);
            return 1;
        }
    }
    return 0;
}

}  // namespace cs::cli
