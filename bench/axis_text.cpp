// The axes' text edge: the one place that reads or writes an axis value as spelled. The command
// line, plans and tests give a row's axis values as text (Config); axis_values checks them against
// the variant's axes and turns them into the typed AxisValues that plans read (Axis::ids), and
// axis_config spells them back for the CSV's `axes` column. Also `--axis NAME=V1,V2` and its
// expansion per variant.
#include "error.hpp"
#include "join.hpp"
#include "variant.hpp"

#include <algorithm>

namespace cs::gpu {

const Axis* Variant::axis(std::string_view axis_name) const {
    for (const auto& a : axes)
        if (a.name == axis_name) return &a;
    return nullptr;
}

std::string Config::get(std::string_view axis) const {
    for (const auto& [k, v] : set)
        if (k == axis) return v;
    return {};
}

std::string Config::str() const {
    std::string s;
    for (const auto& [k, v] : set) s += (s.empty() ? "" : ";") + k + "=" + v;
    return s;
}

Config Config::parse(std::string_view text) {
    Config c;
    while (!text.empty()) {
        const auto semi = text.find(';');
        const std::string_view kv = text.substr(0, semi);
        if (const auto eq = kv.find('='); eq != std::string_view::npos)
            c.set.emplace_back(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
        text = semi == std::string_view::npos ? std::string_view() : text.substr(semi + 1);
    }
    return c;
}

std::optional<std::string> config_error(const Variant& v, const Config& c) {
    for (const auto& [k, val] : c.set) {
        const Axis* ax = v.axis(k);
        if (!ax) {
            const std::string names = join(v.axes, ", ", [](const Axis& a) -> const std::string& { return a.name; });
            return v.name + " has no axis '" + k + "'" + (names.empty() ? " (it has none)" : " (its axes: " + names + ")");
        }
        if (std::find(ax->values.begin(), ax->values.end(), val) == ax->values.end()) {
            const std::string vals = join(ax->values, ", ");
            return "'" + val + "' is not a value of " + v.name + "'s axis " + k + " (values: " + vals + ")";
        }
    }
    return std::nullopt;
}

std::pair<std::string, std::vector<std::string>> parse_axis_arg(std::string_view text) {
    const auto eq = text.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size())
        throw Error("--axis takes NAME=VALUE[,VALUE...] (or NAME=all), not '" + std::string(text) + "'");
    std::pair<std::string, std::vector<std::string>> r{std::string(text.substr(0, eq)), {}};
    std::string_view rest = text.substr(eq + 1);
    while (!rest.empty()) {
        const auto c = rest.find(',');
        const std::string_view one = rest.substr(0, c);
        if (one.empty()) throw Error("--axis " + std::string(text) + ": an empty value");
        r.second.emplace_back(one);
        if (c == std::string_view::npos) break;
        rest = rest.substr(c + 1);
    }
    return r;
}

std::vector<std::string> expand_axis_values(const Variant& v, const std::string& axis,
                                            const std::vector<std::string>& requested) {
    const Axis* ax = nullptr;
    for (const auto& a : v.axes)
        if (a.name == axis) ax = &a;
    if (!ax) return {};
    std::vector<std::string> out;
    for (const auto& r : requested) {
        if (r == "all") {
            for (const auto& x : ax->values)
                if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
        } else if (r == "default") {
            if (std::find(out.begin(), out.end(), "") == out.end()) out.push_back("");
        } else if (std::find(ax->values.begin(), ax->values.end(), r) != ax->values.end() &&
                   std::find(out.begin(), out.end(), r) == out.end()) {
            out.push_back(r);  // a value this variant's axis lacks is not a row of it
        }
    }
    return out;
}

AxisValues axis_values(const Variant& v, const Config& c) {
    if (auto why = config_error(v, c)) throw Error(*why);
    AxisValues out;
    for (const auto& [k, val] : c.set) {
        const Axis* ax = v.axis(k);
        const auto at = std::find(ax->values.begin(), ax->values.end(), val) - ax->values.begin();
        out.set.emplace_back(k, ax->id(std::size_t(at)));
    }
    return out;
}

Config axis_config(const Variant& v, const AxisValues& a) {
    Config c;
    for (const auto& [k, id] : a.set) {
        const Axis* ax = v.axis(k);
        std::string spelled = "?";
        for (std::size_t i = 0; ax && i < ax->values.size(); ++i)
            if (ax->id(i) == id) spelled = ax->values[i];
        c.set.emplace_back(k, spelled);
    }
    return c;
}

std::optional<std::string> axes_error(const Variant& v, const AxisValues& a) {
    for (const auto& [k, id] : a.set) {
        const Axis* ax = v.axis(k);
        if (!ax) return v.name + " has no axis '" + k + "'";
        bool found = false;
        for (std::size_t i = 0; i < ax->values.size(); ++i) found = found || ax->id(i) == id;
        if (!found) return v.name + "'s axis " + k + " has no value " + std::to_string(id);
    }
    return std::nullopt;
}

}  // namespace cs::gpu
