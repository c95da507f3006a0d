#include "merge.hpp"

#include "atomic_file.hpp"
#include "error.hpp"
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

MergeResult merge_tables(const std::vector<CsvTable>& parts) {
    if (parts.size() < 2) throw Error("merge: give at least two CSV files (the parts of one sharded sweep)");
    for (const auto& p : parts)
        for (const char* c : {"layer", "N", "variant", "memory", "status", "git_rev", "device"})
            if (p.col(c) < 0) throw Error(p.path + ": not a convstudy result CSV (no `" + std::string(c) + "` column)");
    MergeResult m;
    // One revision, one device kind, one set of sweep settings.
    for (const auto& [col, what] : same_columns()) {
        std::map<std::string, std::set<std::string>> seen;  // value -> files
        for (const auto& p : parts) {
            if (p.col(col) < 0) continue;
            for (const auto& r : p.rows) seen[field(p, r, col)].insert(p.path);
        }
        if (seen.size() > 1) {
            std::string list;
            for (const auto& [v, files] : seen) {
                std::string fs;
                for (const auto& f : files) fs += (fs.empty() ? "" : ", ") + f;
                list += "\n  " + col + " = " + (v.empty() ? "(empty)" : v) + ": " + fs;
            }
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
    // Columns: the first part's, then any others in the order they appear.
    CsvTable& out = m.table;
    for (const auto& p : parts)
        for (const auto& c : p.header)
            if (out.col(c) < 0) out.header.push_back(c);
    std::map<std::string, std::string> owner;  // row key -> file
    std::vector<std::vector<std::string>> rows;
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
            std::vector<std::string> o(out.header.size());
            for (std::size_t i = 0; i < p.header.size(); ++i) o[std::size_t(out.col(p.header[i]))] = r[i];
            rows.push_back(std::move(o));
        }
    auto get = [&](const std::vector<std::string>& r, const std::string& c) {
        const int i = out.col(c);
        return i < 0 ? std::string() : r[std::size_t(i)];
    };
    auto set = [&](std::vector<std::string>& r, const std::string& c, const std::string& v) {
        const int i = out.col(c);
        if (i >= 0) r[std::size_t(i)] = v;
    };

    // Sweep order: N, layer (first appearance, kept consistent across parts), registry order
    // of the variant, memory mode, layout. A layer a part shows first goes after the last
    // known layer the part showed before it, or after every known layer when it showed none
    // (parts split by layers, conv1-3 then conv4-5, keep conv1 .. conv5).
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
    auto rank = [&](const std::vector<std::string>& r) {
        return std::make_tuple(number(get(r, "N")), index_of(layers, get(r, "layer")), index_of(variants, get(r, "variant")),
                               index_of(modes, get(r, "memory")), index_of(layouts, get(r, "layout")));
    };
    std::stable_sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) { return rank(a) < rank(b); });

    // ours_over_cudnn, ours_over_cudnn_any_layout: the sweep's fill_ours_over_cudnn over the merged rows.
    std::vector<Row> lite(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        Row& x = lite[i];
        x.layer.name = get(rows[i], "layer");
        x.N = std::int64_t(number(get(rows[i], "N")));
        x.variant = get(rows[i], "variant");
        x.family = get(rows[i], "family");
        x.precision = get(rows[i], "precision");
        x.memory = get(rows[i], "memory");
        x.layout = out.col("layout") < 0 ? "nchw" : get(rows[i], "layout");
        const double k = number(get(rows[i], "kernel_ms"));
        x.result.status = get(rows[i], "status") == "PASS" && std::isfinite(k) ? gpu::Status::pass : gpu::Status::fail;
        x.result.kernel.median = k;
    }
    fill_ours_over_cudnn(lite);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        set(rows[i], "ours_over_cudnn", lite[i].ours_over_cudnn ? csv_number(*lite[i].ours_over_cudnn) : "");
        set(rows[i], "ours_over_cudnn_any_layout", lite[i].ours_over_cudnn_any_layout ? csv_number(*lite[i].ours_over_cudnn_any_layout) : "");
    }

    // One ceiling per precision class (the highest measured), and pct_peak against it.
    std::map<std::string, double> peak, lowest;
    double copy = NAN, copy_low = NAN;
    for (const auto& r : rows) {
        const double pk = number(get(r, "peak_tflops"));
        if (std::isfinite(pk)) {
            const std::string c = anchor_class(get(r, "precision"));
            peak[c] = peak.count(c) ? std::max(peak[c], pk) : pk;
            lowest[c] = lowest.count(c) ? std::min(lowest[c], pk) : pk;
        }
        const double cg = number(get(r, "copy_gbs"));
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
    // The cuBLAS im2col GEMM reference of each (layer, N, precision): the fastest measured.
    std::map<std::string, double> gemm;
    auto gkey = [&](const std::vector<std::string>& r) {
        return get(r, "layer") + "|" + get(r, "N") + "|" + get(r, "precision");
    };
    for (const auto& r : rows) {
        const double g = number(get(r, "im2col_gemm_ms"));
        if (std::isfinite(g)) gemm[gkey(r)] = gemm.count(gkey(r)) ? std::min(gemm[gkey(r)], g) : g;
    }
    for (auto& r : rows) {
        const double pk = number(get(r, "peak_tflops"));
        if (std::isfinite(pk)) {
            const double best = peak[anchor_class(get(r, "precision"))];
            if (best != pk) {
                set(r, "peak_tflops", csv_number(best));
                const double tf = number(get(r, "tflops"));
                if (std::isfinite(tf) && !get(r, "pct_peak").empty()) set(r, "pct_peak", csv_number(100.0 * tf / best));
            }
        }
        if (std::isfinite(number(get(r, "copy_gbs"))) && number(get(r, "copy_gbs")) != copy)
            set(r, "copy_gbs", csv_number(copy));
        const double g = number(get(r, "im2col_gemm_ms"));
        if (std::isfinite(g) && g != gemm[gkey(r)]) set(r, "im2col_gemm_ms", csv_number(gemm[gkey(r)]));
    }
    out.rows = std::move(rows);
    return m;
}

void write_csv_table(const std::string& path, const CsvTable& t) {
    write_file_atomic(path, [&](std::ostream& os) {
        for (std::size_t i = 0; i < t.header.size(); ++i) os << (i ? "," : "") << csv_quote(t.header[i]);
        os << '\n';
        for (const auto& r : t.rows) {
            for (std::size_t i = 0; i < r.size(); ++i) os << (i ? "," : "") << csv_quote(r[i]);
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
