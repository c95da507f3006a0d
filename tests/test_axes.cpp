// Families with axes without a GPU: `--axis NAME=VALUES` expands a sweep's rows per variant
// (the cross product of the axes it has, "all", "default", values it lacks left out), the
// rows stay unique and shardable, and bad axes or values are refused with the rule and exit 2
// before any device is needed.
#include "test_util.hpp"

#include "shard.hpp"

#include <set>

using namespace cs;
using namespace cs::cli;

using cs::test::error_message;

namespace {

const gpu::Variant& var(const char* name) {
    const auto ref = gpu::find_variant(name);
    REQUIRE(ref.variant != nullptr);
    return *ref.variant;
}

const gpu::Axis& axis_of(const gpu::Variant& v, const std::string& name) {
    for (const auto& a : v.axes)
        if (a.name == name) return a;
    FAIL("no axis " << name << " in " << v.name);
    return v.axes.front();
}

}  // namespace

TEST_CASE("axes: parsing NAME=VALUES", "[axes]") {
    const auto [name, values] = gpu::parse_axis_arg("tile=a,b,c");
    CHECK(name == "tile");
    CHECK(values == std::vector<std::string>{"a", "b", "c"});
    for (const char* bad : {"tile", "=a", "tile=", "tile=a,,b"})
        CHECK_HAS(error_message([&] { gpu::parse_axis_arg(bad); }), "--axis");
}

TEST_CASE("axes: every Hopper persistent rung has the six policy axes and the tf32 rounding axis", "[axes]") {
    for (const char* n : {"hopper-ws-fp16", "hopper-pp-bf16", "hopper-tmastore-tf32", "hopper-sk-fp16", "hopper-mc-fp16", "hopper-tail-bf16",
                          "hopper-ws-3xfp16"}) {
        const auto& v = var(n);
        std::set<std::string> names;
        for (const auto& a : v.axes) names.insert(a.name);
        CHECK(names == std::set<std::string>{"tile", "schedule", "scheduler", "epilogue", "cluster", "launch", "tf32"});
    }
    CHECK(var("baseline").axes.empty());
}

TEST_CASE("axes: a sweep's configurations per variant", "[axes]") {
    const auto& ws = var("hopper-ws-fp16");
    const auto ntiles = axis_of(ws, "tile").values.size();
    // all tiles, one row each
    auto cs = configs_of(ws, {{"tile", {"all"}}});
    CHECK(cs.size() == ntiles);
    for (const auto& c : cs) CHECK(!c.get("tile").empty());
    // two axes: the cross product, in order
    cs = configs_of(ws, {{"tile", {"all"}}, {"epilogue", {"direct", "tma-store"}}});
    CHECK(cs.size() == 2 * ntiles);
    CHECK(cs[0].str() == "tile=" + axis_of(ws, "tile").values[0] + ";epilogue=direct");
    // "default" is the variant's own choice: no value set
    cs = configs_of(ws, {{"scheduler", {"default", "stream-k"}}});
    REQUIRE(cs.size() == 2);
    CHECK(cs[0].empty());
    CHECK(cs[1].get("scheduler") == "stream-k");
    // a variant without the axis runs once at its defaults
    cs = configs_of(var("baseline"), {{"tile", {"all"}}});
    REQUIRE(cs.size() == 1);
    CHECK(cs[0].empty());
    // a value this variant's axis lacks is not a row of it (rung 1 has no 64 B tiles)
    cs = configs_of(var("hopper-wgmma-fp16"), {{"tile", {"m128n256k64B-s8", "m128n128k128B-s6"}}});
    REQUIRE(cs.size() == 1);
    CHECK(cs[0].get("tile") == "m128n128k128B-s6");
}

TEST_CASE("axes: the rows of an axis sweep are unique and each in one shard", "[axes][shard]") {
    std::vector<const Layer*> layers;
    for (const auto& l : default_layer_table().layers) layers.push_back(&l);
    SweepPlan plan = {{&var("hopper-tmastore-fp16"), {gpu::MemoryMode::pageable}},
                      {&var("cudnn-fp16"), {gpu::MemoryMode::pageable}}};
    const AxisRequests axes = {{"tile", {"all"}}, {"schedule", {"cooperative", "pingpong"}}};
    const auto items = sweep_items({32, 128}, layers, plan, gpu::all_layouts(), axes);
    auto key = [](const SweepItem& it) {
        return it.layer->name + " " + std::to_string(it.N) + " " + it.variant->name + " " + it.config.str() + " " +
               std::string(gpu::to_string(it.layout));
    };
    std::set<std::string> all;
    for (const auto& it : items) all.insert(key(it));
    CHECK(all.size() == items.size());
    const std::size_t per = axis_of(var("hopper-tmastore-fp16"), "tile").values.size() * 2;
    // tmastore: tiles x schedules x 2 layouts; cuDNN (no such axes): once per layout
    CHECK(items.size() == 2 * layers.size() * (per * 2 + 2));
    std::set<std::string> seen;
    for (int k = 1; k <= 3; ++k)
        for (const auto& it : select_shard(items, Shard{k, 3})) CHECK(seen.insert(key(it)).second);
    CHECK(seen.size() == items.size());
}

TEST_CASE("axes: a variant's config is checked against its axes", "[axes]") {
    gpu::Config c;
    c.set = {{"tile", "nope"}};
    CHECK_HAS(*gpu::config_error(var("hopper-ws-fp16"), c), "is not a value of hopper-ws-fp16's axis tile");
    c.set = {{"colour", "red"}};
    CHECK_HAS(*gpu::config_error(var("hopper-ws-fp16"), c), "has no axis 'colour'");
    c.set = {{"tile", axis_of(var("hopper-ws-fp16"), "tile").values[0]}, {"schedule", "pingpong"}};
    CHECK(!gpu::config_error(var("hopper-ws-fp16"), c));
}

TEST_CASE("axes: bad --axis options exit 2 before a device is asked for", "[axes][cli]") {
    auto r = cs::test::cli("run --variant hopper-ws-fp16 --layer conv3 --batch 1 --check sampled --axis tile=bogus");
    CHECK(r.code == 2);
    CHECK(r.out.find("'bogus' is not a value of hopper-ws-fp16's axis tile") != std::string::npos);
    r = cs::test::cli("run --variant baseline --layer conv3 --batch 1 --check sampled --axis tile=x");
    CHECK(r.code == 2);
    CHECK(r.out.find("baseline has no axis 'tile'") != std::string::npos);
    r = cs::test::cli("sweep --variants baseline --axis tile=all --check sampled --csv /dev/null");
    CHECK(r.code == 2);
    CHECK(r.out.find("no swept variant has an axis 'tile'") != std::string::npos);
    r = cs::test::cli("sweep --variants hopper-ws-fp16 --axis tile=all,foo --check sampled --csv /dev/null");
    CHECK(r.code == 2);
    CHECK(r.out.find("'foo' is a value of no swept variant's axis tile") != std::string::npos);
    r = cs::test::cli("sweep --help");
    CHECK(r.code == 0);
    CHECK(r.out.find("scheduler = auto, data-parallel, split-k, stream-k, split-tail") != std::string::npos);
}
