// The registry: every variant convstudy knows, expanded from the family specs that
// families.hpp lists (family.hpp: one row per rung and precision). The CLI, the
// tests and the CSV take names from here. Also the lookups and the axis (Config) helpers.
#include "error.hpp"
#include "family.hpp"
#include "join.hpp"
#include "variant.hpp"
#include "families.hpp"

#include <algorithm>
#include <cctype>

namespace cs::gpu {

const std::vector<Variant>& registry() {
    static const std::vector<Variant> table = [] {
        std::vector<Variant> t;
        for (const auto& f : variants::families())
            for (auto& r : expand(f)) t.push_back(std::move(r));
        return t;
    }();
    return table;
}

// A class's own row: its operand type and its spelling as the precision table (precision.hpp) has them.
PrecisionRow class_row(Precision p) {
    const PrecisionFacts& f = facts(p);
    return {p, f.operands, std::string(f.name)};
}
PrecisionRow row_fp32() { return class_row(Precision::fp32); }
PrecisionRow row_tf32() { return class_row(Precision::tf32); }
PrecisionRow row_fp16() { return class_row(Precision::fp16); }
PrecisionRow row_bf16() { return class_row(Precision::bf16); }

namespace {
// A rung's name without its precision: "hopper-ws-{p}" -> "hopper-ws", "cudnn-{p}-s2d" -> "cudnn-s2d".
std::string rung_name(std::string s) {
    for (const char* p : {"-{p}", "{p}-", "{p}"})
        if (const auto at = s.find(p); at != std::string::npos) return s.erase(at, std::string(p).size());
    return s;
}

std::string fill(std::string s, const std::string& suffix) {
    for (std::size_t i; (i = s.find("{p}")) != std::string::npos;) s.replace(i, 3, suffix);
    return s;
}
}  // namespace

bool kernels_built() {
#ifdef CONVSTUDY_HAVE_KERNELS
    return true;
#else
    return false;
#endif
}

std::string kernels_absent_reason() {
    if (kernels_built()) return {};
    return "this convstudy was built without the variants' kernels (CMake option CONVSTUDY_KERNELS=OFF, the "
           "host-only build of the CPU tests); build with -DCONVSTUDY_KERNELS=ON to run them";
}

std::vector<Variant> expand(const Family& f) {
    std::vector<Variant> out;
    for (const auto& r : f.rungs) {
        if (r.rows.size() != 1 && !r.aliases.empty())
            throw Error("registry: rung " + r.name + " has aliases but " + std::to_string(r.rows.size()) + " rows");
        if (!r.supports) throw Error("registry: rung " + r.name + " has no supports()");
        if (kernels_built() != static_cast<bool>(r.make_plan))
            throw Error("registry: rung " + r.name + (kernels_built() ? " has no plan" : " names a plan in a build without kernels"));
        for (const auto& row : r.rows) {
            Variant v;
            v.name = fill(r.name, row.suffix);
            v.aliases = r.aliases;
            v.family = f.name;
            v.rung = r.rows.size() == 1 ? v.name : rung_name(r.name);
            v.ladder = r.ladder.empty() ? f.name : r.ladder;
            v.precision = row.precision;
            v.io = row.io;
            v.idea = fill(r.idea, row.suffix);
            v.deterministic = r.deterministic;
            v.library = f.library;
            v.delegates = f.delegates;
            if (r.estimate)
                v.estimate = [fn = r.estimate, row](const Problem& p, const cudaDeviceProp& prop) {
                    return fn(row, p, prop);
                };
            v.supports = [fn = r.supports, row](const Problem& p, const cudaDeviceProp& prop) { return fn(row, p, prop); };
            if (r.make_plan)
                v.make_plan = [fn = r.make_plan, row](const Problem& p, const PlanContext& c) { return fn(row, p, c); };
            else
                v.make_plan = [](const Problem&, const PlanContext&) -> std::unique_ptr<Plan> {
                    throw Error(kernels_absent_reason());
                };
            v.algo = r.algo;
            v.layouts = r.layouts;
            v.axes = f.axes;
            v.axes.insert(v.axes.end(), r.axes.begin(), r.axes.end());
            out.push_back(std::move(v));
        }
    }
    return out;
}

std::vector<Rung> rung_per_row(const std::string& name, const std::vector<RowIdea>& rows, const RungSupports& supports,
                               const RungPlan& make_plan, const RungTraits& traits) {
    std::vector<Rung> out;
    for (const auto& r : rows) out.push_back(make_rung(name, {r.row}, r.idea, supports, make_plan, traits));
    return out;
}

Rung make_rung(std::string name, std::vector<PrecisionRow> rows, std::string idea, RungSupports supports,
               RungPlan make_plan, RungTraits traits, std::vector<Axis> axes) {
    Rung r;
    static_cast<RungTraits&>(r) = std::move(traits);
    r.name = std::move(name);
    r.rows = std::move(rows);
    r.idea = std::move(idea);
    r.supports = std::move(supports);
    r.make_plan = std::move(make_plan);
    r.axes = std::move(axes);
    return r;
}

RungSupports plain(PlainSupports f) {
    return [f](const PrecisionRow&, const Problem& p, const cudaDeviceProp& prop) { return f(p, prop); };
}
RungPlan plain(PlainPlan f) {
    return [f](const PrecisionRow&, const Problem& p, const PlanContext& c) { return f(p, c); };
}

std::string_view to_string(DType d) {
    switch (d) {
        case DType::f32: return "f32";
        case DType::f16: return "f16";
        case DType::bf16: return "bf16";
    }
    return "?";
}

std::string_view to_string(Layout l) { return l == Layout::nchw ? "nchw" : "nhwc"; }

const std::vector<Layout>& all_layouts() {
    static const std::vector<Layout> l = {Layout::nchw, Layout::nhwc};
    return l;
}

std::optional<Layout> parse_layout(std::string_view s) {
    for (auto l : all_layouts())
        if (to_string(l) == s) return l;
    return std::nullopt;
}

namespace {
bool iequal(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}
}  // namespace

VariantRef find_variant(std::string_view name) {
    for (const auto& v : registry()) {
        if (iequal(v.name, name)) return {&v, ""};
        for (const auto& a : v.aliases)
            if (iequal(a.name, name)) return {&v, a.memory};
    }
    return {};
}

std::string variant_names_for_help() {
    std::string s;
    for (const auto& v : registry()) {
        if (!s.empty()) s += ", ";
        s += v.name;
        if (!v.aliases.empty()) {
            s += " (";
            s += join(v.aliases, ", ", [](const Alias& a) -> const std::string& { return a.name; });
            s += ")";
        }
    }
    const auto absent = variants::rows_not_built();
    if (!absent.empty()) {
        s += "; unavailable in this build: ";
        s += join(absent, ", ");
        s += " (" + std::string(variants::why_not_built()) + ")";
    }
    return s;
}

}  // namespace cs::gpu
