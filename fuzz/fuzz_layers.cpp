// libFuzzer target for the layer-table loader (parse_layer_table in core/layer.cpp): the
// input is the table's JSON text. Checked: no crash or hang, every rejection a cs::Error,
// and an accepted table is sane: non-empty, unique names, every layer valid with a
// positive output size and per-image tensors under 2^31 elements, its shape arithmetic
// free of overflow, and writing it back as JSON and parsing again gives the same table.
#include "fuzz_common.hpp"

#include "layer.hpp"
#include "npy.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <string_view>

namespace {

bool same(const cs::Layer& a, const cs::Layer& b) {
    return a.name == b.name && a.C == b.C && a.H == b.H && a.W == b.W && a.M == b.M && a.R == b.R && a.S == b.S &&
           a.stride == b.stride && a.pad == b.pad;
}

void check_table(const cs::LayerTable& t) {
    FUZZ_ASSERT(!t.layers.empty());
    FUZZ_ASSERT(t.source == "fuzz.json");
    std::set<std::string> names;
    const auto lim = std::int64_t(std::numeric_limits<std::int32_t>::max());
    nlohmann::json doc = {{"name", t.name}, {"layers", nlohmann::json::array()}};
    for (const auto& l : t.layers) {
        FUZZ_ASSERT(names.insert(l.name).second);
        FUZZ_ASSERT(t.find(l.name) == &l);
        try {
            cs::validate_layer(l, t.source);
        } catch (const std::exception& e) {
            fuzz::bug(std::string("an accepted layer fails validate_layer: ") + e.what());
        }
        FUZZ_ASSERT(l.C > 0 && l.H > 0 && l.W > 0 && l.M > 0 && l.R > 0 && l.S > 0 && l.stride > 0 && l.pad >= 0);
        FUZZ_ASSERT(l.E() >= 1 && l.F() >= 1);
        FUZZ_ASSERT(l.input_elems(1) <= lim && l.output_elems(1) <= lim && l.weight_elems() <= lim);
        FUZZ_ASSERT(l.K() > 0);
        FUZZ_ASSERT(std::isfinite(l.flops(1)) && l.flops(1) > 0);
        FUZZ_ASSERT(std::isfinite(l.min_bytes(1, 4)) && l.min_bytes(1, 4) > 0);
        FUZZ_ASSERT(!l.shape_string().empty());
        // The golden files' shapes at the largest batch the command line allows.
        const std::int64_t N = 1 << 20;
        for (const cs::NpyShape& s : {cs::NpyShape{N, l.C, l.H, l.W}, cs::NpyShape{l.M, l.C, l.R, l.S},
                                      cs::NpyShape{N, l.M, l.E(), l.F()}})
            FUZZ_ASSERT(cs::npy_element_count(s) > 0);
        doc["layers"].push_back({{"name", l.name}, {"C", l.C}, {"H", l.H}, {"W", l.W}, {"M", l.M}, {"R", l.R},
                                 {"S", l.S}, {"stride", l.stride}, {"pad", l.pad}});
    }
    FUZZ_ASSERT(t.names().size() == t.layers.size());
    cs::LayerTable again;
    try {
        again = cs::parse_layer_table(doc.dump(), t.source);
    } catch (const std::exception& e) {
        fuzz::bug(std::string("an accepted table, written back, is refused: ") + e.what());
    }
    FUZZ_ASSERT(again.name == t.name && again.layers.size() == t.layers.size());
    for (std::size_t i = 0; i < t.layers.size(); ++i) FUZZ_ASSERT(same(again.layers[i], t.layers[i]));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    cs::LayerTable t;
    if (fuzz::accepts([&] { t = cs::parse_layer_table(text, "fuzz.json"); })) check_table(t);
    return 0;
}
