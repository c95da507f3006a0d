// The registry (bench/registry.cpp, expanded from the family specs of
// bench/families.hpp), checked without a GPU: every family expands to unique names,
// every name and alias finds its row, every row of the committed tests/data/registry_names.txt
// is there in its order (rows added since may stand between them), every row is complete, and the single-kernel family has its
// coalesced / uncoalesced pairs and the study's abbreviations.
#include "catch.hpp"
#include "error.hpp"
#include "layer.hpp"
#include "family.hpp"
#include "variant.hpp"
#include "families.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace cs::gpu;

namespace {

std::string lower(std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool has_alias(const Variant& v, const std::string& name) {
    for (const auto& a : v.aliases)
        if (lower(a.name) == lower(name)) return true;
    return false;
}

const std::string kUncoalesced = "-uncoalesced";

// The committed row names, in order (comment lines start with '#').
std::vector<std::string> expected_names() {
    const auto path = std::filesystem::path(CS_SOURCE_DIR) / "tests/data/registry_names.txt";
    std::ifstream f(path);
    INFO(path.string());
    REQUIRE(f.good());
    std::vector<std::string> names;
    for (std::string line; std::getline(f, line);)
        if (!line.empty() && line[0] != '#') names.push_back(line);
    return names;
}

}  // namespace

TEST_CASE("every family spec expands to rows of unique names, in rung order", "[registry][family]") {
    std::set<std::string> families, all;
    std::size_t rows = 0;
    for (const Family& f : cs::gpu::variants::families()) {
        INFO("family " << f.name);
        REQUIRE(!f.name.empty());
        REQUIRE(families.insert(f.name).second);
        REQUIRE(!f.rungs.empty());
        const std::vector<Variant> expanded = expand(f);
        std::size_t want = 0;
        for (const Rung& r : f.rungs) {
            INFO("rung " << r.name);
            REQUIRE(!r.rows.empty());
            REQUIRE(static_cast<bool>(r.supports));
            // A spec names its plans through CS_PLAN: there in a build with the kernels, left
            // empty in a host-only one (expand() then gives each row the plan that says so).
            REQUIRE(static_cast<bool>(r.make_plan) == kernels_built());
            want += r.rows.size();
        }
        REQUIRE(expanded.size() == want);
        for (const Variant& v : expanded) {
            INFO(v.name);
            REQUIRE(v.family == f.name);
            REQUIRE(v.name.find("{p}") == std::string::npos);
            REQUIRE(v.idea.find("{p}") == std::string::npos);
            REQUIRE(all.insert(lower(v.name)).second);
            std::set<std::string> axis_names;
            for (const Axis& a : v.axes) {
                INFO("axis " << a.name);
                REQUIRE(axis_names.insert(a.name).second);
                REQUIRE(!a.values.empty());
                REQUIRE(std::set<std::string>(a.values.begin(), a.values.end()).size() == a.values.size());
                for (const auto& x : a.values) REQUIRE(!x.empty());
                // Every value is a valid row configuration of the variant.
                REQUIRE(!config_error(v, Config{{{a.name, a.values.front()}}}));
            }
        }
        rows += expanded.size();
    }
    REQUIRE(rows == registry().size());
}

TEST_CASE("every committed registry row is there, in its committed order", "[registry][family]") {
    // A build without cuDNN lacks the rows that families.hpp names as not built, and only them.
    const auto absent = cs::gpu::variants::rows_not_built();
    std::vector<std::string> want;
    for (const auto& n : expected_names())
        if (std::find(absent.begin(), absent.end(), n) == absent.end()) want.push_back(n);
    std::vector<std::string> got;
    for (const auto& v : registry()) got.push_back(v.name);
    // Every committed row is still there, under its name, in the committed order: a refactor
    // that drops, renames or reorders a row fails here. Rows added since (a new rung: one line
    // of a family spec) may stand between them; they are listed, and the list takes them when
    // it is next edited.
    std::size_t at = 0;
    std::vector<std::string> added;
    for (const auto& n : got) {
        if (at < want.size() && n == want[at]) ++at;
        else added.push_back(n);
    }
    INFO("first committed row not found in order: " << (at < want.size() ? want[at] : std::string("-")));
    CHECK(at == want.size());
    for (const auto& n : added) {
        INFO("row " << n << " is not in tests/data/registry_names.txt");
        CHECK(std::find(want.begin(), want.end(), n) == want.end());  // new, not a committed row out of order
    }
    if (!added.empty()) WARN(added.size() << " rows not yet in tests/data/registry_names.txt, e.g. " << added.front());
    for (const auto& n : absent) CHECK(std::find(got.begin(), got.end(), n) == got.end());
    // The help text names every row, and says which this build lacks.
    const std::string help = variant_names_for_help();
    for (const auto& n : got) CHECK(help.find(n) != std::string::npos);
    for (const auto& n : absent) {
        INFO(n);
        CHECK(help.find("unavailable in this build") != std::string::npos);
        CHECK(help.find(n) != std::string::npos);
        CHECK(find_variant(n).variant == nullptr);
    }
}

TEST_CASE("every alias resolves to its row and memory mode", "[registry][family]") {
    int aliases = 0;
    for (const auto& v : registry())
        for (const auto& a : v.aliases) {
            INFO(v.name << " alias " << a.name);
            for (const std::string& spelling : {a.name, lower(a.name)}) {
                const VariantRef r = find_variant(spelling);
                REQUIRE(r.variant == &v);
                REQUIRE(r.memory == a.memory);
            }
            ++aliases;
        }
    REQUIRE(aliases > 0);
    // The study's memory-mode aliases of the baseline.
    REQUIRE(find_variant("Mcpy").variant == find_variant("baseline").variant);
    REQUIRE(find_variant("Mcpy").memory == "pageable");
    REQUIRE(find_variant("UM").memory == "managed");
    REQUIRE(find_variant("no-such-variant").variant == nullptr);
}

// A name or alias must find one variant only: no two variants may share one, whatever the
// case. (An alias that repeats its own variant's name, e.g. "mk" / "Mk", finds the same row
// and is tolerated: redundant, not ambiguous.)
TEST_CASE("registry names and aliases are unique, case-insensitively", "[registry]") {
    REQUIRE(!registry().empty());
    std::map<std::string, std::string> owner;  // lower-cased name or alias -> variant
    for (const auto& v : registry()) {
        std::vector<std::string> names{v.name};
        for (const auto& a : v.aliases) names.push_back(a.name);
        std::set<std::string> own;  // this variant's names, lower-cased
        for (const auto& n : names) {
            INFO("'" << n << "' of variant " << v.name);
            REQUIRE(!n.empty());
            if (!own.insert(lower(n)).second) continue;
            const auto [it, fresh] = owner.emplace(lower(n), v.name);
            INFO("already used by variant " << it->second);
            REQUIRE(fresh);
        }
    }
}

TEST_CASE("every registry row is complete", "[registry]") {
    for (const auto& v : registry()) {
        INFO(v.name);
        REQUIRE(!v.name.empty());
        // Canonical names are lower-case with dashes (they are CSV values and CLI words).
        for (char ch : v.name) {
            const auto c = static_cast<unsigned char>(ch);
            REQUIRE((std::islower(c) || std::isdigit(c) || c == '-'));
        }
        REQUIRE(!v.family.empty());
        REQUIRE(!v.idea.empty());
        REQUIRE(static_cast<bool>(v.supports));
        REQUIRE(static_cast<bool>(v.make_plan));
        // Every name finds its own row.
        REQUIRE(find_variant(v.name).variant == &v);
        for (const auto& a : v.aliases) REQUIRE(find_variant(a.name).variant == &v);
    }
}

// The host-only build (CONVSTUDY_KERNELS=OFF) lists the same rows (the committed names above)
// with their supports(); what it cannot do is make a plan, and each row's make_plan says why,
// naming the option. With the kernels there is nothing to say.
TEST_CASE("a build without the kernels says so from every row's plan, and only then", "[registry]") {
    const std::string why = kernels_absent_reason();
    if (kernels_built()) {
        REQUIRE(why.empty());
        return;
    }
    REQUIRE(why.find("CONVSTUDY_KERNELS=OFF") != std::string::npos);
    REQUIRE(why.find("-DCONVSTUDY_KERNELS=ON") != std::string::npos);
    cudaDeviceProp prop{};
    prop.major = 9;
    const PlanContext ctx{{}, prop, 0, std::size_t(1) << 30, 128};
    Problem p;
    p.layer = cs::default_layer_table().layers.front();
    p.N = 1;
    for (const auto& v : registry()) {
        INFO(v.name);
        try {
            (void)v.make_plan(p, ctx);
            FAIL("make_plan returned in a build without kernels");
        } catch (const cs::Error& e) {
            REQUIRE(std::string(e.what()) == why);
        }
    }
}

// Every single-kernel variant computes several outputs per thread on planes larger than a
// block (conv1), so every one has both mappings: `<name>` (coalesced) and
// `<name>-uncoalesced`, with the same family, precision and element type, and each study
// alias `a` of the coalesced one has `a-nc` on the twin.
TEST_CASE("single-kernel variants come in coalesced / uncoalesced pairs", "[registry][single-kernel]") {
    int pairs = 0;
    for (const auto& v : registry()) {
        if (v.family != "single-kernel") continue;
        INFO(v.name);
        const bool nc = v.name.ends_with(kUncoalesced);
        const std::string other = nc ? v.name.substr(0, v.name.size() - kUncoalesced.size()) : v.name + kUncoalesced;
        const Variant* t = find_variant(other).variant;
        INFO("twin " << other);
        REQUIRE(t != nullptr);
        REQUIRE(t->name == other);
        REQUIRE(t->family == v.family);
        REQUIRE(t->precision == v.precision);
        REQUIRE(t->io == v.io);
        REQUIRE(t->deterministic == v.deterministic);
        const Variant& coalesced = nc ? *t : v;
        const Variant& uncoalesced = nc ? v : *t;
        for (const auto& a : coalesced.aliases) {
            INFO("alias " << a.name);
            REQUIRE(has_alias(uncoalesced, a.name + "-nc"));
        }
        if (!nc) ++pairs;
    }
    REQUIRE(pairs >= 5);
}

TEST_CASE("the study's single-kernel abbreviations select the family, no memory mode", "[registry][single-kernel]") {
    for (const char* abbr : {"rla2m", "rswbdl2m", "rswbdla2m", "rswmtla2m", "swso", "halfprecision", "Swso",
                             "Halfprecision", "RLA2M"}) {
        INFO(abbr);
        const VariantRef r = find_variant(abbr);
        REQUIRE(r.variant != nullptr);
        REQUIRE(r.variant->family == "single-kernel");
        REQUIRE(r.memory.empty());
        REQUIRE(!r.variant->name.ends_with(kUncoalesced));
    }
    for (const char* abbr :
         {"rla2m-nc", "rswbdl2m-nc", "rswbdla2m-nc", "rswmtla2m-nc", "swso-nc", "halfprecision-nc"}) {
        INFO(abbr);
        const VariantRef r = find_variant(abbr);
        REQUIRE(r.variant != nullptr);
        REQUIRE(r.variant->name.ends_with(kUncoalesced));
    }
    REQUIRE(find_variant("rswbdl2m").variant == find_variant("rswbdla2m").variant);
    const Variant* half = find_variant("halfprecision").variant;
    REQUIRE(half->io == DType::f16);
    REQUIRE(half->precision == Precision::fp16acc);
    for (const char* f32 : {"rla2m", "rswbdl2m", "rswmtla2m", "swso"}) {
        INFO(f32);
        REQUIRE(find_variant(f32).variant->io == DType::f32);
        REQUIRE(find_variant(f32).variant->precision == Precision::fp32);
    }
}

TEST_CASE("the library rows are the anchors' families, and only they", "[registry]") {
    // cuDNN's and cuBLAS's engines are what the study compares against; tune and auto-* never choose them
    int library = 0;
    for (const auto& v : cs::gpu::registry()) {
        INFO(v.name);
        CHECK(v.library == (v.family == "cudnn" || v.family == "cudnn-legacy" || v.family == "cublas"));
        library += v.library;
    }
    CHECK(library >= 4);  // cuBLAS's four at least (the cuDNN families need cuDNN at build time)
}
