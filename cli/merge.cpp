#include "merge.hpp"

#include "atomic_file.hpp"
#include "error.hpp"
#include "join.hpp"
#include "results.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

namespace cs::cli {

namespace {

// Run-wide columns that must be equal in every part, and what a difference means.
const std::vector<std::pair<std::string, std::string>>& same_columns() {
    static const std::vector<std::pair<std::string, std::string>> c = {
        {"git_rev", "git revisions"}, {"tool_version", "tool versions"}, {"device", "devices"},
        {"cc", "compute capabilities"}, {"warmup", "warm-up counts"}, {"l2_flush", "L2 flush settings"}};
    return c;
}

std::string field(const CsvTable& t, const std::vector<std::string>& row, const std::string& col) {
    const int i = t.col(col);
    return i < 0 ? std::string() : row[std::size_t(i)];
}

double number(const std::string& s) {
    if (s.empty()) return NAN;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    return end && *end == '\0' ? v : NAN;
}

template <class T>
std::size_t index_of(const std::vector<T>& v, const T& x) {
    const auto it = std::find(v.begin(), v.end(), x);
    return std::size_t(it - v.begin());
}

}  // namespace

namespace {

using CsvRow = std::vector<std::string>;

// A merged row's cells by column name (the merged table's header).
struct Cells {
    const CsvTable& out;
    std::string get(const CsvRow& r, const std::string& c) const {
        const int i = out.col(c);
        return i < 0 ? std::string() : r[std::size_t(i)];
    }
    void set(CsvRow& r, const std::string& c, const std::string& v) const {
        const int i = out.col(c);
        if (i >= 0) r[std::size_t(i)] = v;
    }
};

// Every part is a result CSV of the same revision, device kind and sweep settings (a part of one
// sharded sweep); notes what the caller should know (uncommitted sources).
void check_parts(const std::vector<CsvTable>& parts, MergeResult& m) {
    if (parts.size() < 2) throw Error("merge: give at least two CSV files (the parts of one sharded sweep)");
    for (const auto& p : parts)
        for (const char* c : {"layer", "N", "variant", "memory", "status", "git_rev", "device"})
            if (p.col(c) < 0) throw Error(p.path + ": not a convstudy result CSV (no `" + std::string(c) + "` column)");
    for (const auto& [col, what] : same_columns()) {
        std::map<std::string, std::set<std::string>> seen;  // value -> files
        for (const auto& p : parts) {
            if (p.col(col) < 0) continue;
            for (const auto& r : p.rows) seen[field(p, r, col)].insert(p.path);
        }
        if (seen.size() > 1) {
            std::string list;
            for (const auto& [v, files] : seen)
                list += "\n  " + col + " = " + (v.empty() ? "(empty)" : v) + ": " + join(files, ", ");
            throw Error("merge: the parts come from different " + what + "; merge only the shards of one sweep "
                        "(one git revision, one device kind, the same options):" + list);
        }
        if (col == "git_rev" && !seen.empty()) {
            const std::string rev = seen.begin()->first;
            if (rev.empty() || rev == "unknown")
                throw Error("merge: the parts do not record their git revision (git_rev '" + rev +
                            "'), so they cannot be shown to come from one; build from a git checkout or set "
                            "CONVSTUDY_GIT_REV when configuring");
            if (rev.find("dirty") != std::string::npos)
                m.notes.push_back("the revision " + rev + " had uncommitted changes: equal names cannot prove equal "
                                  "sources");
        }
    }
}

// The parts' rows under one header (the first part's columns, then any others in the order they
// appear); a row in two parts is an error that names both.
std::vector<CsvRow> union_rows(const std::vector<CsvTable>& parts, CsvTable& out) {
    for (const auto& p : parts)
        for (const auto& c : p.header)
            if (out.col(c) < 0) out.header.push_back(c);
    std::map<std::string, std::string> owner;  // row key -> file
    std::vector<CsvRow> rows;
    for (const auto& p : parts)
        for (const auto& r : p.rows) {
            const std::string layout = p.col("layout") < 0 ? "nchw" : field(p, r, "layout");
            const std::string key = field(p, r, "layer") + " N=" + field(p, r, "N") + " " + field(p, r, "variant") +
                                    " " + field(p, r, "memory") + " " + layout +
                                    (p.col("axes") < 0 || field(p, r, "axes").empty() ? "" : " " + field(p, r, "axes")) +
                                    (p.col("input_scale") < 0 ? "" : " scales " + field(p, r, "input_scale") + "x" +
                                                                         field(p, r, "weight_scale"));
            auto [it, fresh] = owner.emplace(key, p.path);
            if (!fresh)
                throw Error("merge: the row " + key + " is in both " + it->second + " and " + p.path +
                            ": the parts overlap (merge the shards 1/N ... N/N of one sweep, each once)");
            CsvRow o(out.header.size());
            for (std::size_t i = 0; i < p.header.size(); ++i) o[std::size_t(out.col(p.header[i]))] = r[i];
            rows.push_back(std::move(o));
        }
    return rows;
}

// Sweep order: N, layer (first appearance, kept consistent across parts), registry order of the
// variant, memory mode, layout. A layer a part shows first goes after the last known layer the
// part showed before it, or after every known layer when it showed none (parts split by layers,
// conv1-3 then conv4-5, keep conv1 .. conv5).
void sort_rows(const std::vector<CsvTable>& parts, const Cells& cells, std::vector<CsvRow>& rows) {
    std::vector<std::string> layers;
    for (const auto& p : parts) {
        std::size_t after = layers.size();  // insert position: after the last layer this part showed
        bool seen_known = false;
        for (const auto& r : p.rows) {
            const std::string l = field(p, r, "layer");
            const std::size_t at = index_of(layers, l);
            if (at == layers.size()) {
                layers.insert(layers.begin() + std::ptrdiff_t(after), l);
                after = after + 1;
            } else {
                after = seen_known ? std::max(after, at + 1) : at + 1;
                seen_known = true;
            }
        }
    }
    std::vector<std::string> variants;
    for (const auto& v : gpu::registry()) variants.push_back(v.name);
    std::vector<std::string> modes, layouts;
    for (auto md : gpu::all_memory_modes()) modes.emplace_back(gpu::to_string(md));
    for (auto l : gpu::all_layouts()) layouts.emplace_back(gpu::to_string(l));
    auto rank = [&](const CsvRow& r) {
        return std::make_tuple(number(cells.get(r, "N")), index_of(layers, cells.get(r, "layer")),
                               index_of(variants, cells.get(r, "variant")), index_of(modes, cells.get(r, "memory")),
                               index_of(layouts, cells.get(r, "layout")));
    };
    std::stable_sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
}

// ours_over_cudnn, ours_over_cudnn_any_layout over the merged rows, by the sweep's rule
// (ours_over_cudnn): the rows as the CSV spells them, a part from another revision included.
void fill_ratios(const Cells& cells, std::vector<CsvRow>& rows) {
    std::vector<RatioRow> in;
    in.reserve(rows.size());
    for (const auto& r : rows) {
        const double k = number(cells.get(r, "kernel_ms"));
        in.push_back(RatioRow::of(cells.get(r, "layer"), std::int64_t(number(cells.get(r, "N"))),
                                  cells.get(r, "memory"), anchor_class(cells.get(r, "precision")),
                                  cells.out.col("layout") < 0 ? "nchw" : cells.get(r, "layout"), cells.get(r, "family"),
                                  cells.get(r, "status") == "PASS" ? k : NAN));
    }
    const auto out = ours_over_cudnn(in);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        cells.set(rows[i], "ours_over_cudnn", out[i].same_layout ? csv_number(*out[i].same_layout) : "");
        cells.set(rows[i], "ours_over_cudnn_any_layout", out[i].any_layout ? csv_number(*out[i].any_layout) : "");
    }
}

// One ceiling per precision class (the highest measured) and pct_peak against it, one device copy
// bandwidth (the highest), and per (layer, N, precision) the fastest cuBLAS im2col GEMM reference;
// notes where the parts differed.
void unify_references(const Cells& cells, std::vector<CsvRow>& rows, MergeResult& m) {
    std::map<std::string, double> peak, lowest;
    double copy = NAN, copy_low = NAN;
    for (const auto& r : rows) {
        const double pk = number(cells.get(r, "peak_tflops"));
        if (std::isfinite(pk)) {
            const std::string c = anchor_class(cells.get(r, "precision"));
            peak[c] = peak.count(c) ? std::max(peak[c], pk) : pk;
            lowest[c] = lowest.count(c) ? std::min(lowest[c], pk) : pk;
        }
        const double cg = number(cells.get(r, "copy_gbs"));
        if (std::isfinite(cg)) {
            copy = std::isfinite(copy) ? std::max(copy, cg) : cg;
            copy_low = std::isfinite(copy_low) ? std::min(copy_low, cg) : cg;
        }
    }
    for (const auto& [c, pk] : peak)
        if (lowest[c] != pk)
            m.notes.push_back("the " + c + " ceiling differed between the parts (" + csv_number(lowest[c]) + " to " +
                              csv_number(pk) + " TFLOP/s): every row now uses the highest, and its pct_peak with it");
    if (std::isfinite(copy) && copy_low != copy)
        m.notes.push_back("the device copy bandwidth differed between the parts (" + csv_number(copy_low) + " to " +
                          csv_number(copy) + " GB/s): every row now uses the highest");
    std::map<std::string, double> gemm;
    auto gkey = [&](const CsvRow& r) {
        return cells.get(r, "layer") + "|" + cells.get(r, "N") + "|" + cells.get(r, "precision");
    };
    for (const auto& r : rows) {
        const double g = number(cells.get(r, "im2col_gemm_ms"));
        if (std::isfinite(g)) gemm[gkey(r)] = gemm.count(gkey(r)) ? std::min(gemm[gkey(r)], g) : g;
    }
    for (auto& r : rows) {
        const double pk = number(cells.get(r, "peak_tflops"));
        if (std::isfinite(pk)) {
            const double best = peak[anchor_class(cells.get(r, "precision"))];
            if (best != pk) {
                cells.set(r, "peak_tflops", csv_number(best));
                const double tf = number(cells.get(r, "tflops"));
                if (std::isfinite(tf) && !cells.get(r, "pct_peak").empty())
                    cells.set(r, "pct_peak", csv_number(100.0 * tf / best));
            }
        }
        if (std::isfinite(number(cells.get(r, "copy_gbs"))) && number(cells.get(r, "copy_gbs")) != copy)
            cells.set(r, "copy_gbs", csv_number(copy));
        const double g = number(cells.get(r, "im2col_gemm_ms"));
        if (std::isfinite(g) && g != gemm[gkey(r)]) cells.set(r, "im2col_gemm_ms", csv_number(gemm[gkey(r)]));
    }
}

}  // namespace

MergeResult merge_tables(const std::vector<CsvTable>& parts) {
    MergeResult m;
    check_parts(parts, m);
    std::vector<CsvRow> rows = union_rows(parts, m.table);
    const Cells cells{m.table};
    sort_rows(parts, cells, rows);
    fill_ratios(cells, rows);
    unify_references(cells, rows, m);
    m.table.rows = std::move(rows);
    return m;
}

void write_csv_table(const std::string& path, const CsvTable& t) {
    write_file_atomic(path, [&](std::ostream& os) {
        os << join(t.header, ",", csv_quote);
        os << '\n';
        for (const auto& r : t.rows) {
            os << join(r, ",", csv_quote);
            os << '\n';
        }
    });
}

CLI::App* add_merge_command(CLI::App& app, MergeArgs& a) {
    auto* c = app.add_subcommand("merge", "join the CSVs of a sharded sweep (sweep --shard K/N) into one");
    c->add_option("csv", a.inputs, "the parts: result CSVs of one revision and one device kind")->required()->expected(2, -1);
    c->add_option("-o,--out", a.out, "the merged CSV (written atomically)")->required();
    return c;
}

int cmd_merge(const MergeArgs& a) {
    for (const auto& in : a.inputs)
        if (in == a.out) throw Error("merge: the output " + a.out + " is also an input; choose another -o path");
    check_writable(a.out, "-o");
    std::vector<CsvTable> parts;
    for (const auto& in : a.inputs) parts.push_back(read_csv_table(in));
    const MergeResult m = merge_tables(parts);
    for (const auto& n : m.notes) std::fprintf(stderr, "note: %s\n", n.c_str());
    write_csv_table(a.out, m.table);
    std::printf("merged %zu rows from %zu parts into %s\n", m.table.rows.size(), parts.size(), a.out.c_str());
    return 0;
}

}  // namespace cs::cli
