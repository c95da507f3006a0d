// `convstudy list`: the layer tables, the variants (families, rungs, layouts, axes and values)
// and the precision classes' thresholds, as text or JSON. Shared option groups: command_common.hpp.
#include "command_common.hpp"

#include "join.hpp"
#include "tolerance.hpp"
#include "version.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace cs::cli::detail {

// ---- list ------------------------------------------------------------------------------

// One row of the built-in tables: what --table NAME gives.
nlohmann::json table_json(const LayerTable& t) {
    const auto chain = chain_error(t);
    return {{"name", t.name},
            {"source", t.source},
            {"builtin", t.builtin},
            {"description", t.description},
            {"layers", t.layers.size()},
            {"convs", t.conv_count()},
            {"gflop_per_image", t.network_flops(1) * 1e-9},
            {"chain", !chain},
            {"chain_error", chain ? nlohmann::json(*chain) : nlohmann::json(nullptr)}};
}

// "bias+relu, pool max3x3s2", or "-" when the layer has no ops.
std::string ops_string(const Layer& l) {
    std::string s = l.bias ? "bias" : "";
    if (l.relu) s += std::string(s.empty() ? "" : "+") + "relu";
    if (l.pool != Pool::none) s += (s.empty() ? "" : ", ") + std::string("pool ") + to_string(l.pool);
    return s.empty() ? "-" : s;
}

int cmd_list(const TableOpt& topt, bool json, bool markdown) {
    if (markdown) {
        std::fputs(variants_markdown().c_str(), stdout);
        return 0;
    }
    const LayerTable table = topt.load();
    if (json) {
        nlohmann::json j;
        for (const auto& v : gpu::registry()) {
            nlohmann::json a = nlohmann::json::array();
            for (const auto& al : v.aliases) a.push_back({{"name", al.name}, {"memory", al.memory}});
            j["variants"].push_back({{"name", v.name},
                                     {"aliases", a},
                                     {"family", v.family},
                                     {"rung", v.rung},
                                     {"ladder", v.ladder},
                                     {"precision", gpu::to_string(v.precision)},
                                     {"io_dtype", gpu::to_string(v.io)},
                                     {"deterministic", v.deterministic},
                                     {"library", v.library},
                                     {"delegates", v.delegates},
                                     {"cost_model", static_cast<bool>(v.estimate)},
                                     {"algo", v.algo},
                                     {"layouts", [&] {
                                          nlohmann::json ls = nlohmann::json::array();
                                          for (auto l : v.layouts) ls.push_back(gpu::to_string(l));
                                          return ls;
                                      }()},
                                     {"axes", [&] {
                                          // each axis a run or sweep may set (--axis NAME=VALUE)
                                          nlohmann::json ax = nlohmann::json::array();
                                          for (const auto& axis : v.axes)
                                              ax.push_back({{"name", axis.name}, {"values", axis.values}, {"help", axis.help}});
                                          return ax;
                                      }()},
                                     {"idea", v.idea}});
        }
        for (auto m : gpu::all_memory_modes()) j["memory_modes"].push_back(gpu::to_string(m));
        for (const auto& t : builtin_layer_tables()) j["tables"].push_back(table_json(t));
        j["table"] = table_json(table);
        // Per precision class, in the order of the tables and figures: its pass rule
        // (bench/tolerance.hpp: max_rel_err at most `max_rel_err`, each element within
        // tau * sum|w*x| + output_roundoff * |golden|), and what plots/ draws it as
        // (plots/convplots/registry.json copies "precisions" and the variants' ladders, checked by a CPU test).
        j["thresholds"] = nlohmann::json::array();
        for (const auto& f : gpu::kPrecisions) {
            j["thresholds"].push_back({{"class", f.name},
                                       {"max_rel_err", gpu::threshold(f.id)},
                                       {"tau", gpu::bound_factor(f.id)},
                                       {"output_roundoff", gpu::output_roundoff(f.id)},
                                       {"reason", gpu::threshold_reason(f.id)}});
            j["precisions"].push_back({{"name", f.name},
                                       {"operands", gpu::to_string(f.operands)},
                                       {"bytes", gpu::dtype_bytes(f.operands)},
                                       {"anchor_class", gpu::to_string(f.anchor)},
                                       {"ceiling_class", gpu::to_string(f.ceiling)},
                                       {"colour", f.colour}});
        }
        for (const auto& l : table.layers)
            j["layers"].push_back({{"name", l.name}, {"C", l.C}, {"H", l.H}, {"W", l.W}, {"M", l.M}, {"R", l.R},
                                   {"S", l.S}, {"stride", l.stride}, {"pad", l.pad}, {"E", l.E()}, {"F", l.F()},
                                   {"count", l.count}, {"bias", l.bias}, {"relu", l.relu},
                                   {"pool", to_string(l.pool)}, {"gflop_per_image", l.flops(1) * 1e-9},
                                   {"shape", l.shape_string()}});
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    // Columns as wide as their longest cell; the idea, free text, last.
    std::vector<std::array<std::string, 8>> cells{{"name", "aliases", "family", "precision", "io", "layouts", "algo", "idea"}};
    for (const auto& v : gpu::registry()) {
        const std::string al = join(v.aliases, ",", [](const gpu::Alias& a) -> const std::string& { return a.name; });
        const std::string ls = join(v.layouts, ",", [](gpu::Layout l) { return gpu::to_string(l); });
        cells.push_back({v.name, al, v.family, std::string(gpu::to_string(v.precision)),
                         std::string(gpu::to_string(v.io)), ls, v.algo,
                         v.idea + (v.deterministic ? "" : " [order-dependent]")});
    }
    std::array<std::size_t, 8> width{};
    for (const auto& row : cells)
        for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    std::printf("Variants (%zu):\n", gpu::registry().size());
    for (const auto& row : cells) {
        std::string line = " ";
        for (std::size_t c = 0; c + 1 < row.size(); ++c)
            line += " " + row[c] + std::string(width[c] - row[c].size(), ' ');
        std::printf("%s %s\n", line.c_str(), row.back().c_str());
    }
    std::printf("\nMemory modes: %s\n", gpu::memory_mode_names().c_str());
    std::printf("Layouts: nchw (the golden files'), nhwc (input NHWC, weights KRSC, output NHWC)\n");
    std::printf("\nPass thresholds on max_rel_err = max|out - golden| / max|golden|:\n");
    for (const auto& f : gpu::kPrecisions)
        std::printf("  %-8s %.0e  %s\n", std::string(f.name).c_str(), gpu::threshold(f.id), gpu::threshold_reason(f.id));
    std::printf("\nLayer tables built in (--table NAME; --table PATH loads a JSON file):\n");
    std::size_t tname_w = 0;
    for (const auto& t : builtin_layer_tables()) tname_w = std::max(tname_w, t.name.size());
    for (const auto& t : builtin_layer_tables()) {
        const auto chain = chain_error(t);
        std::printf("  %-*s  %2zu shapes, %2lld convolutions, %7.3f GFLOP/image, %s\n", int(tname_w), t.name.c_str(),
                    t.layers.size(), static_cast<long long>(t.conv_count()), t.network_flops(1) * 1e-9,
                    chain ? "not a chain" : "a chain");
    }
    std::printf("\nLayers of %s (%s):\n", table.name.empty() ? "the table" : table.name.c_str(), table.source.c_str());
    std::size_t name_w = 0, shape_w = 0;
    for (const auto& l : table.layers) {
        name_w = std::max(name_w, l.name.size());
        shape_w = std::max(shape_w, l.shape_string().size());
    }
    for (const auto& l : table.layers)
        std::printf("  %-*s  %-*s  x%-3d %8.3f GFLOP/image  %s\n", int(name_w), l.name.c_str(), int(shape_w),
                    l.shape_string().c_str(), l.count, l.flops(1) * 1e-9, ops_string(l).c_str());
    std::printf("  %lld convolutions, %.3f GFLOP/image in all (each layer's times its count)\n",
                static_cast<long long>(table.conv_count()), table.network_flops(1) * 1e-9);
    return 0;
}

}  // namespace cs::cli::detail
