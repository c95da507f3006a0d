#include "shard.hpp"

#include "error.hpp"

#include <algorithm>
#include <cstdlib>

namespace cs::cli {

Shard parse_shard(const std::string& s) {
    const auto slash = s.find('/');
    auto bad = [&](const std::string& why) {
        return Error("--shard '" + s + "': " + why + " (give K/N with 1 <= K <= N, e.g. --shard 2/4 for the second of 4)");
    };
    if (slash == std::string::npos) throw bad("no '/'");
    auto parse = [&](const std::string& t) {
        if (t.empty() || t.size() > 6 || t.find_first_not_of("0123456789") != std::string::npos)
            throw bad("'" + t + "' is not a whole number");
        return std::atoi(t.c_str());
    };
    Shard r{parse(s.substr(0, slash)), parse(s.substr(slash + 1))};
    if (r.count < 1) throw bad("N must be at least 1");
    if (r.index < 1 || r.index > r.count) throw bad("K must be between 1 and N");
    return r;
}

std::vector<gpu::Config> configs_of(const gpu::Variant& v, const AxisRequests& axes) {
    std::vector<gpu::Config> out{gpu::Config{}};
    for (const auto& [name, values] : axes) {
        const auto vals = gpu::expand_axis_values(v, name, values);
        if (vals.empty()) continue;  // not an axis of v
        std::vector<gpu::Config> next;
        for (const auto& c : out)
            for (const auto& val : vals) {
                gpu::Config d = c;
                if (!val.empty()) d.set.emplace_back(name, val);  // "" = the default
                next.push_back(std::move(d));
            }
        out = std::move(next);
    }
    return out;
}

std::vector<SweepItem> sweep_items(const std::vector<std::int64_t>& batches, const std::vector<const Layer*>& layers,
                                   const SweepPlan& plan, const std::vector<gpu::Layout>& layouts,
                                   const AxisRequests& axes) {
    std::vector<SweepItem> out;
    for (auto N : batches)
        for (const Layer* l : layers)
            for (const auto& [v, modes] : plan) {
                const auto configs = configs_of(*v, axes);
                for (const auto& config : configs)
                    for (auto mode : modes)
                        for (auto layout : layouts)
                            if (std::find(v->layouts.begin(), v->layouts.end(), layout) != v->layouts.end())
                                out.push_back(SweepItem{N, l, v, mode, layout, config});
            }
    return out;
}

std::vector<SweepItem> select_shard(const std::vector<SweepItem>& items, Shard s) {
    std::vector<SweepItem> out;
    for (std::size_t i = 0; i < items.size(); ++i)
        if (int(i % std::size_t(s.count)) == s.index - 1) out.push_back(items[i]);
    return out;
}

AxisRequests parse_sweep_axes(const std::vector<std::string>& args, const SweepPlan& plan) {
    AxisRequests out;
    for (const auto& a : args) {
        auto req = gpu::parse_axis_arg(a);
        bool axis_known = false;
        for (const auto& val : req.second) {
            bool value_known = val == "all" || val == "default";
            for (const auto& [v, modes] : plan)
                for (const auto& ax : v->axes)
                    if (ax.name == req.first) {
                        axis_known = true;
                        if (std::find(ax.values.begin(), ax.values.end(), val) != ax.values.end()) value_known = true;
                    }
            if (axis_known && !value_known)
                throw Error("--axis " + a + ": '" + val + "' is a value of no swept variant's axis " + req.first +
                            " (see `convstudy sweep --help`)");
        }
        if (!axis_known)
            throw Error("--axis " + a + ": no swept variant has an axis '" + req.first + "' (see `convstudy sweep --help`)");
        out.push_back(std::move(req));
    }
    return out;
}

}  // namespace cs::cli
