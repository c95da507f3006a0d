// A convolution layer's shape and the arithmetic every other part needs from it:
// output size, FLOPs and the fewest bytes a kernel must move. Layer tables are JSON. Three
// are built into the program (layers/alexnet.json, the default; vgg16.json; resnet50.json);
// a bad table is refused with a message that names the file, the layer and the field.
//
// A layer also carries how many times its network runs the shape (`count`, for tables that
// store a network's distinct shapes once) and the ops that follow the convolution in the
// network (`bias`, `relu`, `pool`). The ops describe the network for a future chain run; a
// per-layer run (reference, golden files, variants, sweeps) keeps computing the convolution
// alone and ignores them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cs {

// The pooling a network applies after a layer's convolution (and bias, ReLU).
enum class Pool {
    none,
    max3x3s2,  // max over 3x3 windows at stride 2, no padding (AlexNet's)
};
// "none" | "max3x3s2".
std::string to_string(Pool p);
// The Pool a string names; nullopt for any other string.
std::optional<Pool> parse_pool(std::string_view s);

struct Layer {
    std::string name;
    int C = 0, H = 0, W = 0;   // input channels and size
    int M = 0;                 // filters (output channels)
    int R = 0, S = 0;          // filter height and width
    int stride = 1, pad = 0;
    int count = 1;           // how many times the network runs this shape (tables of distinct shapes)
    bool bias = false;       // conv + per-output-channel bias
    bool relu = false;       // ReLU after conv (+ bias)
    Pool pool = Pool::none;  // pooling after the ops above

    int E() const { return (H + 2 * pad - R) / stride + 1; }  // output height
    int F() const { return (W + 2 * pad - S) / stride + 1; }  // output width
    // Output size after the pool: (E-3)/2+1 for max3x3s2, E for none.
    int pooled_E() const;
    int pooled_F() const;
    std::int64_t K() const { return std::int64_t(C) * R * S; }  // reduction length

    std::int64_t input_elems(std::int64_t N) const { return N * C * std::int64_t(H) * W; }
    std::int64_t weight_elems() const { return std::int64_t(M) * K(); }
    std::int64_t output_elems(std::int64_t N) const { return N * M * std::int64_t(E()) * F(); }

    // 2 FLOPs (multiply + add) per filter tap per output element.
    double flops(std::int64_t N) const { return 2.0 * double(output_elems(N)) * double(K()); }
    // Each input, weight and output element moved once, at elem_bytes per element.
    double min_bytes(std::int64_t N, int elem_bytes) const {
        return double(input_elems(N) + weight_elems() + output_elems(N)) * elem_bytes;
    }
    // "C=96 H=27 W=27 M=256 R=5 S=5 stride=1 pad=2 E=27 F=27"
    std::string shape_string() const;
};

struct LayerTable {
    std::string name;         // the table's "name" field
    std::string description;  // the table's "description" field (optional free text)
    std::string source;       // file path, or "<built-in layers/alexnet.json>"
    bool builtin = false;     // compiled into the program; `name` is then its built-in name
    std::vector<Layer> layers;

    const Layer* find(std::string_view layer_name) const;
    std::vector<std::string> names() const;
    // The network's convolutions: the sum of the layers' counts.
    std::int64_t conv_count() const;
    // FLOPs of one pass of the network at batch N: each layer's flops(N) times its count.
    double network_flops(std::int64_t N) const;
};

// Why `t` is not a chain (a network whose layers run one after another, each on the previous
// layer's pooled output): a layer with count != 1, or a layer whose C, H, W differ from the
// previous layer's M, pooled_E(), pooled_F(). nullopt when it is a chain.
std::optional<std::string> chain_error(const LayerTable& t);

// Parses a table; `source` names it in error messages. Throws cs::Error.
LayerTable parse_layer_table(std::string_view json_text, const std::string& source);
// Reads and parses a file. Throws cs::Error naming the file.
LayerTable load_layer_table(const std::filesystem::path& path);
// The AlexNet table compiled into the program from layers/alexnet.json.
const LayerTable& default_layer_table();
// The tables compiled into the program, in the order core/builtin_tables.cmake lists them
// (alexnet first).
const std::vector<LayerTable>& builtin_layer_tables();
std::vector<std::string> builtin_layer_table_names();
// The built-in table of that name; nullptr when there is none.
const LayerTable* find_builtin_layer_table(std::string_view name);
// What `--table` takes to load `t` again: a built-in's name, else the file's path ("./" put
// before a bare file name that is also a built-in's name, which --table would take as the
// built-in).
std::string table_argument(const LayerTable& t);
// Checks one layer's shape, count and pool; throws cs::Error "<source>: layer '<name>': <field> ...".
void validate_layer(const Layer& layer, const std::string& source);

}  // namespace cs
