// Reading a plan's JSON objects (cli/plan.cpp): each field read once, typed, range-checked,
// and every error naming the file, the step and the key. Internal to the plan reader.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cs::cli::plan_detail {

constexpr std::int64_t kMaxPlanBatch = 1 << 20;  // the sweep's --batch limit

// Where an error is: the file, and the step (index and kind) when inside one.
struct Where {
    std::string file;
    int step = -1;
    std::string kind;

    [[noreturn]] void fail(const std::string& field, const std::string& why) const;
};

// "a string", "an integer", ...: what a JSON value is, for error messages.
const char* type_name(const nlohmann::json& j);

// The fields of one JSON object, read once each; unknown keys are errors.
class Fields {
public:
    Fields(const nlohmann::json& obj, const Where& w, std::vector<std::string> allowed);
    const Where& where() const { return w_; }
    bool has(const std::string& k) const { return obj_.contains(k); }

    std::string str(const std::string& k, const std::string& def, bool required = false) const;
    std::int64_t integer(const std::string& k, std::int64_t def, std::int64_t lo, std::int64_t hi) const;
    std::optional<std::int64_t> opt_integer(const std::string& k, std::int64_t lo, std::int64_t hi) const;
    double number(const std::string& k, double def, double lo, double hi) const;
    bool boolean(const std::string& k, bool def) const;
    std::vector<std::string> strings(const std::string& k, std::vector<std::string> def, bool required = false,
                                     bool allow_empty = false) const;
    // Distinct batch sizes, 1 to kMaxPlanBatch.
    std::vector<std::int64_t> batches(const std::string& k, std::vector<std::int64_t> def, bool required) const;

private:
    std::int64_t integer_value(const std::string& k, const nlohmann::json& v, std::int64_t lo, std::int64_t hi,
                               const std::string& what = "") const;
    const nlohmann::json& obj_;
    Where w_;
};

// A plain file name in the output folder: no folder part, the given extension.
std::string out_name(const Fields& f, const std::string& key, const std::string& def, bool required,
                     const std::vector<std::string>& exts);

}  // namespace cs::cli::plan_detail
