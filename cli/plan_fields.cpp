#include "plan_fields.hpp"

#include "error.hpp"
#include "join.hpp"
#include "plan.hpp"

#include <algorithm>
#include <set>

namespace cs::cli::plan_detail {

using json = nlohmann::json;

void Where::fail(const std::string& field, const std::string& why) const {
    std::string s = file + ": ";
    if (step >= 0) s += "step " + std::to_string(step) + (kind.empty() ? "" : " (" + kind + ")") + ": ";
    if (!field.empty()) s += "'" + field + "': ";
    throw Error(s + why);
}

const char* type_name(const json& j) {
    switch (j.type()) {
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number";
    case json::value_t::array: return "a list";
    case json::value_t::object: return "an object";
    case json::value_t::null: return "null";
    default: return "a value of another type";
    }
}

Fields::Fields(const json& obj, const Where& w, std::vector<std::string> allowed) : obj_(obj), w_(w) {
    for (auto it = obj.begin(); it != obj.end(); ++it)
        if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end())
            w.fail(it.key(), "unknown key (valid keys here: " + join(allowed, ", ") + ")");
}

std::string Fields::str(const std::string& k, const std::string& def, bool required) const {
    if (!has(k)) {
        if (required) w_.fail(k, "missing (a string)");
        return def;
    }
    const json& v = obj_.at(k);
    if (!v.is_string()) w_.fail(k, std::string("must be a string, not ") + type_name(v));
    const auto s = v.get<std::string>();
    if (s.empty()) w_.fail(k, "must not be empty");
    return s;
}

std::int64_t Fields::integer(const std::string& k, std::int64_t def, std::int64_t lo, std::int64_t hi) const {
    if (!has(k)) return def;
    return integer_value(k, obj_.at(k), lo, hi);
}

std::optional<std::int64_t> Fields::opt_integer(const std::string& k, std::int64_t lo, std::int64_t hi) const {
    if (!has(k)) return std::nullopt;
    return integer_value(k, obj_.at(k), lo, hi);
}

double Fields::number(const std::string& k, double def, double lo, double hi) const {
    if (!has(k)) return def;
    const json& v = obj_.at(k);
    if (!v.is_number()) w_.fail(k, std::string("must be a number, not ") + type_name(v));
    const double d = v.get<double>();
    if (!(d >= lo && d <= hi)) w_.fail(k, std::to_string(d) + " is out of range (" + std::to_string(lo) + " to " +
                                              std::to_string(hi) + ")");
    return d;
}

bool Fields::boolean(const std::string& k, bool def) const {
    if (!has(k)) return def;
    const json& v = obj_.at(k);
    if (!v.is_boolean()) w_.fail(k, std::string("must be true or false, not ") + type_name(v));
    return v.get<bool>();
}

std::vector<std::string> Fields::strings(const std::string& k, std::vector<std::string> def, bool required,
                                         bool allow_empty) const {
    if (!has(k)) {
        if (required) w_.fail(k, "missing (a list of strings)");
        return def;
    }
    const json& v = obj_.at(k);
    if (!v.is_array()) w_.fail(k, std::string("must be a list of strings, not ") + type_name(v));
    if (v.empty() && !allow_empty) w_.fail(k, "must not be an empty list");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_string())
            w_.fail(k, "element " + std::to_string(i) + " must be a string, not " + type_name(v[i]));
        out.push_back(v[i].get<std::string>());
        if (out.back().empty()) w_.fail(k, "element " + std::to_string(i) + " is empty");
    }
    return out;
}

std::vector<std::int64_t> Fields::batches(const std::string& k, std::vector<std::int64_t> def, bool required) const {
    if (!has(k)) {
        if (required) w_.fail(k, "missing (a list of batch sizes)");
        return def;
    }
    const json& v = obj_.at(k);
    if (!v.is_array()) w_.fail(k, std::string("must be a list of batch sizes, not ") + type_name(v));
    if (v.empty()) w_.fail(k, "must not be an empty list");
    std::vector<std::int64_t> out;
    for (const auto& e : v) out.push_back(integer_value(k, e, 1, kMaxPlanBatch, "batch size "));
    std::set<std::int64_t> seen;
    for (auto n : out)
        if (!seen.insert(n).second) w_.fail(k, "batch size " + std::to_string(n) + " is listed twice");
    return out;
}

std::int64_t Fields::integer_value(const std::string& k, const json& v, std::int64_t lo, std::int64_t hi,
                                   const std::string& what) const {
    if (!v.is_number_integer()) w_.fail(k, what + "must be an integer, not " + type_name(v));
    const auto n = v.get<std::int64_t>();
    if (n < lo || n > hi)
        w_.fail(k, what + std::to_string(n) + " is out of range (" + std::to_string(lo) + " to " +
                       std::to_string(hi) + ")");
    return n;
}

// A plain file name in the output folder: no folder part, the given extension.
std::string out_name(const Fields& f, const std::string& key, const std::string& def, bool required,
                     const std::vector<std::string>& exts) {
    const std::string s = f.str(key, def, required);
    if (s.empty()) return s;
    if (s.find('/') != std::string::npos || s.find('\\') != std::string::npos || s == "." || s == ".." ||
        s.find_first_of(" \t\n'\"$`") != std::string::npos)
        f.where().fail(key, "'" + s + "' must be a plain file name (it goes in the output folder), without spaces, "
                                      "quotes or '/'");
    if (!exts.empty() && std::none_of(exts.begin(), exts.end(), [&](const std::string& e) {
            return s.size() > e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
        }))
        f.where().fail(key, "'" + s + "' must end in " + join(exts, " or "));
    return s;
}

}  // namespace cs::cli::plan_detail
