// The plan reader's shared pieces (cli/plan.cpp) and the step readers that live apart from it
// (cli/plan_readers.cpp: profile, sanitize, tune). Internal to the plan reader.
#pragma once

#include "plan.hpp"
#include "plan_fields.hpp"

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace cs::cli::plan_detail {

// The outputs earlier steps write (file names in the output folder), to check the inputs of
// merge and compare and that no two steps write one file.
struct Outputs {
    std::set<std::string> names;
    void add(const Fields& f, const std::string& key, const std::string& name) {
        if (name.empty()) return;
        if (!names.insert(name).second) f.where().fail(key, "'" + name + "' is written by an earlier step too");
    }
};

// Golden sets earlier golden steps make: (table name, scales) -> {(layer, N)}.
struct GoldenMade {
    std::map<std::string, std::set<std::pair<std::string, std::int64_t>>> sets;
    std::map<std::string, std::set<std::int64_t>> chains;  // chain_key: the chain sets' N
    static std::string chain_key(const TableRef& t) { return t.table.name + "|" + t.path; }
    static std::string key(const TableRef& t, const DataScales& s) {
        return t.table.name + "|" + t.path + "|" + data_scale_string(s.input) + "|" + data_scale_string(s.weights);
    }
};

// Field readers shared by the steps (plan.cpp).
TableRef read_table(const Fields& f, const std::filesystem::path& root);
std::vector<std::string> read_layers(const Fields& f, const TableRef& t);
std::vector<gpu::Layout> read_layouts(const Fields& f);
std::vector<gpu::MemoryMode> read_memory(const Fields& f, std::vector<gpu::MemoryMode> def);
CheckMode read_check(const Fields& f, CheckMode def);
SweepPlan read_variants(const Fields& f, const std::string& key, std::vector<std::string>& names,
                        const std::vector<gpu::MemoryMode>& modes, bool allow_all);
AxisRequests read_axes(const Fields& f, const SweepPlan& plan);

// The step readers of plan_readers.cpp.
ProfileStep read_profile(const Fields& f, const std::filesystem::path& root, Outputs& outs);
SanitizeStep read_sanitize(const Fields& f, const GoldenMade& golden, Outputs& outs);
TuneStep read_tune(const Fields& f, const std::filesystem::path& root, Outputs& outs);
ChainStep read_chain(const Fields& f, const std::filesystem::path& root, const GoldenMade& golden, Outputs& outs);

}  // namespace cs::cli::plan_detail
