#include "layer.hpp"

#include "error.hpp"

#include <nlohmann/json.hpp>

#include <cctype>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace cs {

namespace {

constexpr std::int64_t kMaxDim = 1 << 20;  // no dimension of a sane layer is larger

[[noreturn]] void fail(const std::string& source, const std::string& where, const std::string& what) {
    throw Error(source + ": " + where + what);
}

int read_int(const nlohmann::json& obj, const char* field, const std::string& source,
             const std::string& where) {
    auto it = obj.find(field);
    if (it == obj.end()) fail(source, where, std::string("missing field '") + field + "'");
    if (!it->is_number_integer())
        fail(source, where, std::string("field '") + field + "' must be an integer, got " + it->dump());
    const auto v = it->get<std::int64_t>();
    if (v > kMaxDim || v < -kMaxDim)
        fail(source, where, std::string("field '") + field + "' = " + std::to_string(v) + " is out of range");
    return int(v);
}

bool read_bool(const nlohmann::json& obj, const char* field, const std::string& source, const std::string& where) {
    const auto& v = obj.at(field);
    if (!v.is_boolean())
        fail(source, where, std::string("field '") + field + "' must be true or false, got " + v.dump());
    return v.get<bool>();
}

Pool read_pool(const nlohmann::json& obj, const std::string& source, const std::string& where) {
    const auto& v = obj.at("pool");
    const auto p = v.is_string() ? parse_pool(v.get<std::string>()) : std::nullopt;
    if (!p) fail(source, where, "field 'pool' must be \"none\" or \"max3x3s2\", got " + v.dump());
    return *p;
}

int pooled(int size, Pool p) {
    switch (p) {
    case Pool::none: return size;
    case Pool::max3x3s2: return (size - 3) / 2 + 1;
    }
    throw Error("unknown Pool value " + std::to_string(int(p)));
}

}  // namespace

std::string to_string(Pool p) {
    switch (p) {
    case Pool::none: return "none";
    case Pool::max3x3s2: return "max3x3s2";
    }
    throw Error("unknown Pool value " + std::to_string(int(p)));
}

std::optional<Pool> parse_pool(std::string_view s) {
    if (s == "none") return Pool::none;
    if (s == "max3x3s2") return Pool::max3x3s2;
    return std::nullopt;
}

int Layer::pooled_E() const { return pooled(E(), pool); }
int Layer::pooled_F() const { return pooled(F(), pool); }

// Defined in the file CMake generates from layers/<name>.json (core/builtin_tables.cmake).
std::size_t builtin_table_count();
const char* builtin_table_name(std::size_t i);
const char* builtin_table_json(std::size_t i);

std::string Layer::shape_string() const {
    std::ostringstream s;
    s << "C=" << C << " H=" << H << " W=" << W << " M=" << M << " R=" << R << " S=" << S
      << " stride=" << stride << " pad=" << pad << " E=" << E() << " F=" << F();
    return s.str();
}

const Layer* LayerTable::find(std::string_view layer_name) const {
    for (const auto& l : layers)
        if (l.name == layer_name) return &l;
    return nullptr;
}

std::vector<std::string> LayerTable::names() const {
    std::vector<std::string> out;
    for (const auto& l : layers) out.push_back(l.name);
    return out;
}

std::int64_t LayerTable::conv_count() const {
    std::int64_t n = 0;
    for (const auto& l : layers) n += l.count;
    return n;
}

double LayerTable::network_flops(std::int64_t N) const {
    double f = 0;
    for (const auto& l : layers) f += l.flops(N) * l.count;
    return f;
}

void validate_layer(const Layer& l, const std::string& source) {
    const std::string where = "layer '" + l.name + "': ";
    auto positive = [&](int v, const char* f) {
        if (v <= 0) fail(source, where, std::string("field '") + f + "' must be positive, got " + std::to_string(v));
    };
    positive(l.C, "C");
    positive(l.H, "H");
    positive(l.W, "W");
    positive(l.M, "M");
    positive(l.R, "R");
    positive(l.S, "S");
    if (l.stride <= 0) fail(source, where, "field 'stride' must be positive, got " + std::to_string(l.stride));
    if (l.pad < 0) fail(source, where, "field 'pad' must not be negative, got " + std::to_string(l.pad));
    if (l.R > l.H + 2 * l.pad)
        fail(source, where, "field 'R' = " + std::to_string(l.R) + " is larger than the padded input height H+2*pad = " +
                                std::to_string(l.H + 2 * l.pad));
    if (l.S > l.W + 2 * l.pad)
        fail(source, where, "field 'S' = " + std::to_string(l.S) + " is larger than the padded input width W+2*pad = " +
                                std::to_string(l.W + 2 * l.pad));
    if (l.count < 1) fail(source, where, "field 'count' must be at least 1, got " + std::to_string(l.count));
    if (l.pool == Pool::max3x3s2 && (l.E() < 3 || l.F() < 3))
        fail(source, where, "field 'pool' = \"max3x3s2\" needs an output of at least 3x3, got " +
                                std::to_string(l.E()) + "x" + std::to_string(l.F()));
    // Per-image tensors must index with 32-bit offsets inside a kernel's plane arithmetic.
    // Counted in double: M*C*R*S and M*E*F of fields up to 2^20 overflow 64-bit integers.
    const auto lim = double(std::numeric_limits<std::int32_t>::max());
    const double input = double(l.C) * l.H * l.W, weights = double(l.M) * l.C * l.R * l.S,
                 output = double(l.M) * l.E() * l.F();
    if (input > lim || output > lim || weights > lim) fail(source, where, "one image's tensors exceed 2^31 elements");
}

LayerTable parse_layer_table(std::string_view json_text, const std::string& source) {
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(json_text.begin(), json_text.end());
    } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e3000
        throw Error(source + ": not valid JSON: " + e.what());
    }
    if (!doc.is_object()) throw Error(source + ": the table must be a JSON object with a 'layers' array");
    LayerTable t;
    t.source = source;
    if (auto it = doc.find("name"); it != doc.end()) {
        if (!it->is_string()) throw Error(source + ": field 'name' must be a string");
        t.name = it->get<std::string>();
    }
    if (auto it = doc.find("description"); it != doc.end()) {
        if (!it->is_string()) throw Error(source + ": field 'description' must be a string");
        t.description = it->get<std::string>();
    }
    auto layers = doc.find("layers");
    if (layers == doc.end()) throw Error(source + ": missing field 'layers'");
    if (!layers->is_array() || layers->empty())
        throw Error(source + ": field 'layers' must be a non-empty array");
    static const std::set<std::string> known = {"name", "C",   "H",     "W",   "M",    "R",   "S",
                                                "stride", "pad", "count", "bias", "relu", "pool"};
    std::set<std::string> seen;
    for (std::size_t i = 0; i < layers->size(); ++i) {
        const auto& o = (*layers)[i];
        std::string where = "layers[" + std::to_string(i) + "]: ";
        if (!o.is_object()) fail(source, where, "must be an object");
        auto nit = o.find("name");
        if (nit == o.end()) fail(source, where, "missing field 'name'");
        if (!nit->is_string() || nit->get<std::string>().empty())
            fail(source, where, "field 'name' must be a non-empty string");
        Layer l;
        l.name = nit->get<std::string>();
        for (char ch : l.name)
            if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.'))
                fail(source, where, "field 'name' = '" + l.name + "' may hold only letters, digits, '_', '-' and '.'");
        where = "layer '" + l.name + "': ";
        for (auto it = o.begin(); it != o.end(); ++it)
            if (!known.count(it.key())) fail(source, where, "unknown field '" + it.key() + "'");
        if (!seen.insert(l.name).second) fail(source, where, "duplicate layer name");
        l.C = read_int(o, "C", source, where);
        l.H = read_int(o, "H", source, where);
        l.W = read_int(o, "W", source, where);
        l.M = read_int(o, "M", source, where);
        l.R = read_int(o, "R", source, where);
        l.S = read_int(o, "S", source, where);
        l.stride = o.contains("stride") ? read_int(o, "stride", source, where) : 1;
        l.pad = o.contains("pad") ? read_int(o, "pad", source, where) : 0;
        if (o.contains("count")) l.count = read_int(o, "count", source, where);
        if (o.contains("bias")) l.bias = read_bool(o, "bias", source, where);
        if (o.contains("relu")) l.relu = read_bool(o, "relu", source, where);
        if (o.contains("pool")) l.pool = read_pool(o, source, where);
        validate_layer(l, source);
        t.layers.push_back(std::move(l));
    }
    return t;
}

std::optional<std::string> chain_error(const LayerTable& t) {
    // Counts first: a table of distinct shapes is not a chain whatever its shapes.
    for (const Layer& l : t.layers)
        if (l.count != 1)
            return "layer '" + l.name + "' has count " + std::to_string(l.count) +
                   " (a table of distinct shapes, not the network's sequence of layers)";
    for (std::size_t i = 1; i < t.layers.size(); ++i) {
        const Layer& l = t.layers[i];
        const Layer& prev = t.layers[i - 1];
        if (l.C != prev.M || l.H != prev.pooled_E() || l.W != prev.pooled_F())
            return "layer '" + l.name + "' takes C,H,W = " + std::to_string(l.C) + "," + std::to_string(l.H) + "," +
                   std::to_string(l.W) + " but layer '" + prev.name + "' gives M,E,F = " + std::to_string(prev.M) +
                   "," + std::to_string(prev.pooled_E()) + "," + std::to_string(prev.pooled_F()) +
                   (prev.pool == Pool::none ? "" : " after its pool " + to_string(prev.pool));
    }
    return std::nullopt;
}

LayerTable load_layer_table(const std::filesystem::path& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw Error(path.string() + ": cannot open the layer table");
    std::ostringstream ss;
    ss << f.rdbuf();
    return parse_layer_table(ss.str(), path.string());
}

const std::vector<LayerTable>& builtin_layer_tables() {
    static const std::vector<LayerTable> tables = [] {
        std::vector<LayerTable> v;
        for (std::size_t i = 0; i < builtin_table_count(); ++i) {
            const std::string name = builtin_table_name(i);
            LayerTable t = parse_layer_table(builtin_table_json(i), "<built-in layers/" + name + ".json>");
            if (t.name != name)
                throw Error(t.source + ": field 'name' is '" + t.name + "', not the built-in name '" + name + "'");
            t.builtin = true;
            v.push_back(std::move(t));
        }
        return v;
    }();
    return tables;
}

std::vector<std::string> builtin_layer_table_names() {
    std::vector<std::string> out;
    for (const auto& t : builtin_layer_tables()) out.push_back(t.name);
    return out;
}

const LayerTable* find_builtin_layer_table(std::string_view name) {
    for (const auto& t : builtin_layer_tables())
        if (t.name == name) return &t;
    return nullptr;
}

std::string table_argument(const LayerTable& t) {
    if (t.builtin) return t.name;
    if (find_builtin_layer_table(t.source)) return "./" + t.source;
    return t.source;
}

const LayerTable& default_layer_table() {
    const LayerTable* t = find_builtin_layer_table("alexnet");
    if (!t) throw Error("no built-in table 'alexnet' (core/builtin_tables.cmake lists the built-in tables)");
    return *t;
}

}  // namespace cs
