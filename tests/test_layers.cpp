// The layer library: AlexNet's shape arithmetic and the refusal of bad tables.
#include "catch.hpp"

#include "error.hpp"
#include "layer.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace cs;

namespace {

std::string error_of(const std::string& json) {
    try {
        parse_layer_table(json, "my.json");
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

std::string one_layer(const std::string& fields) {
    return R"({"name": "t", "layers": [{"name": "L1", )" + fields + "}]}";
}

}  // namespace

TEST_CASE("the built-in AlexNet table has AlexNet's output sizes, GEMM depths and FLOPs", "[layers]") {
    const auto& t = default_layer_table();
    REQUIRE(t.layers.size() == 5);
    REQUIRE(t.name == "alexnet");
    struct Want {
        const char* name;
        int E;
        long K;
        double gflop;
    };
    const Want want[] = {{"conv1", 55, 363, 0.211}, {"conv2", 27, 2400, 0.896}, {"conv3", 13, 2304, 0.299},
                         {"conv4", 13, 3456, 0.449}, {"conv5", 13, 3456, 0.299}};
    for (const auto& w : want) {
        const Layer* l = t.find(w.name);
        REQUIRE(l != nullptr);
        CHECK(l->E() == w.E);
        CHECK(l->F() == w.E);
        CHECK(l->K() == w.K);
        CHECK(std::fabs(l->flops(1) * 1e-9 - w.gflop) < 0.0005);
    }
    const Layer& c1 = *t.find("conv1");
    CHECK(c1.input_elems(128) == 128LL * 3 * 227 * 227);
    CHECK(c1.output_elems(2) == 2LL * 96 * 55 * 55);
    CHECK(c1.weight_elems() == 96LL * 363);
    CHECK(c1.min_bytes(1, 4) == 4.0 * double(c1.input_elems(1) + c1.weight_elems() + c1.output_elems(1)));
    CHECK(t.find("conv6") == nullptr);
}

TEST_CASE("a user table loads from a file with any shapes", "[layers]") {
    const auto dir = std::filesystem::temp_directory_path() / "convstudy_test_layers";
    std::filesystem::create_directories(dir);
    const auto path = dir / "mine.json";
    std::ofstream(path) << R"({"name": "mine", "layers": [
        {"name": "a", "C": 5, "H": 17, "W": 9, "M": 3, "R": 3, "S": 2, "stride": 2, "pad": 1},
        {"name": "b", "C": 1, "H": 1, "W": 1, "M": 1, "R": 1, "S": 1}]})";
    const auto t = load_layer_table(path);
    REQUIRE(t.layers.size() == 2);
    CHECK(t.source == path.string());
    CHECK(t.layers[0].E() == 9);  // (17 + 2 - 3) / 2 + 1
    CHECK(t.layers[0].F() == 5);  // (9 + 2 - 2) / 2 + 1
    CHECK(t.layers[1].stride == 1);
    CHECK(t.layers[1].pad == 0);
    CHECK(t.names() == std::vector<std::string>{"a", "b"});
}

TEST_CASE("bad layer tables are refused naming the file and the field", "[layers]") {
    const std::string ok = R"("C": 3, "H": 8, "W": 8, "M": 2, "R": 3, "S": 3, "stride": 1, "pad": 0)";
    REQUIRE(error_of(one_layer(ok)).empty());

    auto msg = error_of("{not json");
    CHECK(msg.find("my.json") != std::string::npos);
    CHECK(msg.find("not valid JSON") != std::string::npos);

    msg = error_of(one_layer(R"("C": 3, "H": 8, "W": 8, "M": 2, "R": 3, "S": 3)").replace(0, 0, ""));
    CHECK(msg.empty());  // stride and pad default to 1 and 0

    msg = error_of(one_layer(R"("C": 3, "H": 8, "W": 8, "R": 3, "S": 3)"));
    CHECK(msg.find("my.json") != std::string::npos);
    CHECK(msg.find("L1") != std::string::npos);
    CHECK(msg.find("missing field 'M'") != std::string::npos);

    msg = error_of(one_layer(R"("C": 0, "H": 8, "W": 8, "M": 2, "R": 3, "S": 3)"));
    CHECK(msg.find("'C' must be positive") != std::string::npos);

    msg = error_of(one_layer(R"("C": 3, "H": -8, "W": 8, "M": 2, "R": 3, "S": 3)"));
    CHECK(msg.find("'H' must be positive") != std::string::npos);

    msg = error_of(one_layer(R"("C": 3, "H": 8, "W": 8, "M": 2, "R": 3, "S": 3, "stride": 0)"));
    CHECK(msg.find("'stride' must be positive") != std::string::npos);

    msg = error_of(one_layer(R"("C": 3, "H": 4, "W": 8, "M": 2, "R": 7, "S": 3, "pad": 1)"));
    CHECK(msg.find("'R' = 7 is larger than the padded input height") != std::string::npos);

    msg = error_of(one_layer(R"("C": 3, "H": 8, "W": 2, "M": 2, "R": 3, "S": 3)"));
    CHECK(msg.find("'S' = 3 is larger than the padded input width") != std::string::npos);

    msg = error_of(one_layer(R"("C": 3, "H": 8, "W": 8, "M": 2, "R": 3, "S": 3, "pad": -1)"));
    CHECK(msg.find("'pad' must not be negative") != std::string::npos);

    msg = error_of(one_layer(R"("C": 3.5, "H": 8, "W": 8, "M": 2, "R": 3, "S": 3)"));
    CHECK(msg.find("'C' must be an integer") != std::string::npos);

    msg = error_of(one_layer(R"("C": 3, "H": 8, "W": 8, "M": 2, "R": 3, "S": 3, "strid": 2)"));
    CHECK(msg.find("unknown field 'strid'") != std::string::npos);

    msg = error_of(R"({"layers": []})");
    CHECK(msg.find("'layers' must be a non-empty array") != std::string::npos);

    msg = error_of(R"({"name": "x"})");
    CHECK(msg.find("missing field 'layers'") != std::string::npos);

    msg = error_of(R"({"layers": [{"name": "a", "C": 1, "H": 3, "W": 3, "M": 1, "R": 1, "S": 1},
                                   {"name": "a", "C": 1, "H": 3, "W": 3, "M": 1, "R": 1, "S": 1}]})");
    CHECK(msg.find("duplicate layer name") != std::string::npos);

    msg = error_of(R"({"layers": [{"name": "a/b", "C": 1, "H": 3, "W": 3, "M": 1, "R": 1, "S": 1}]})");
    CHECK(msg.find("may hold only") != std::string::npos);

    msg = error_of(one_layer(R"("C": 3, "H": 100000, "W": 100000, "M": 2, "R": 3, "S": 3)"));
    CHECK(msg.find("exceed 2^31") != std::string::npos);

    try {
        load_layer_table("/nonexistent/dir/table.json");
        FAIL("no error for a missing file");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("/nonexistent/dir/table.json") != std::string::npos);
    }
}

TEST_CASE("count and the network ops parse, default and are refused naming the field", "[layers]") {
    const std::string shape = R"("C": 3, "H": 8, "W": 8, "M": 2, "R": 3, "S": 3)";
    {
        const auto t = parse_layer_table(one_layer(shape), "my.json");
        const Layer& l = t.layers[0];
        CHECK(l.count == 1);
        CHECK_FALSE(l.bias);
        CHECK_FALSE(l.relu);
        CHECK(l.pool == Pool::none);
        CHECK(l.pooled_E() == l.E());
        CHECK(l.pooled_F() == l.F());
    }
    {
        const auto t = parse_layer_table(
            one_layer(shape + R"(, "count": 3, "bias": true, "relu": false, "pool": "max3x3s2")"), "my.json");
        const Layer& l = t.layers[0];
        CHECK(l.count == 3);
        CHECK(l.bias);
        CHECK_FALSE(l.relu);
        CHECK(l.pool == Pool::max3x3s2);
        CHECK(l.E() == 6);
        CHECK(l.pooled_E() == 2);  // (6 - 3) / 2 + 1
        CHECK(l.pooled_F() == 2);
    }
    CHECK(to_string(Pool::none) == "none");
    CHECK(to_string(Pool::max3x3s2) == "max3x3s2");
    CHECK(parse_pool("max3x3s2") == Pool::max3x3s2);
    CHECK(parse_pool("none") == Pool::none);
    CHECK_FALSE(parse_pool("max2x2s2").has_value());

    struct Bad {
        const char* extra;
        const char* want;
    };
    const Bad bad[] = {
        {R"("count": 0)", "field 'count' must be at least 1, got 0"},
        {R"("count": -2)", "field 'count' must be at least 1, got -2"},
        {R"("count": 1.5)", "field 'count' must be an integer"},
        {R"("count": "2")", "field 'count' must be an integer"},
        {R"("bias": 1)", "field 'bias' must be true or false, got 1"},
        {R"("bias": "yes")", "field 'bias' must be true or false"},
        {R"("relu": null)", "field 'relu' must be true or false, got null"},
        {R"("pool": "max2x2s2")", "field 'pool' must be \"none\" or \"max3x3s2\", got \"max2x2s2\""},
        {R"("pool": true)", "field 'pool' must be \"none\" or \"max3x3s2\", got true"},
        {R"("pools": "none")", "unknown field 'pools'"},
    };
    for (const auto& b : bad) {
        const auto msg = error_of(one_layer(shape + ", " + b.extra));
        INFO(b.extra << " -> " << msg);
        CHECK(msg.find("my.json") != std::string::npos);
        CHECK(msg.find("layer 'L1'") != std::string::npos);
        CHECK(msg.find(b.want) != std::string::npos);
    }
    // A 3x3 pool needs a 3x3 output: 4x4 input, 3x3 filter gives 2x2.
    const auto msg = error_of(one_layer(R"("C": 3, "H": 4, "W": 4, "M": 2, "R": 3, "S": 3, "pool": "max3x3s2")"));
    CHECK(msg.find("layer 'L1'") != std::string::npos);
    CHECK(msg.find("field 'pool' = \"max3x3s2\" needs an output of at least 3x3, got 2x2") != std::string::npos);
}

TEST_CASE("AlexNet's table carries torchvision's ops and is a chain", "[layers]") {
    const auto& t = default_layer_table();
    for (const auto& l : t.layers) {
        INFO(l.name);
        CHECK(l.count == 1);
        CHECK(l.bias);
        CHECK(l.relu);
        const bool pooled = l.name == "conv1" || l.name == "conv2" || l.name == "conv5";
        CHECK(l.pool == (pooled ? Pool::max3x3s2 : Pool::none));
    }
    CHECK(t.find("conv1")->pooled_E() == 27);  // 55 -> 27, conv2's input
    CHECK(t.find("conv2")->pooled_E() == 13);  // 27 -> 13, conv3's input
    CHECK(t.find("conv5")->pooled_E() == 6);   // 13 -> 6, the classifier's 256x6x6
    CHECK(t.find("conv5")->pooled_F() == 6);
    CHECK_FALSE(chain_error(t).has_value());
}

TEST_CASE("chain_error names the layer that breaks the chain", "[layers]") {
    LayerTable t = default_layer_table();
    t.layers[2].count = 2;
    auto why = chain_error(t);
    REQUIRE(why.has_value());
    CHECK(why->find("layer 'conv3' has count 2") != std::string::npos);

    t = default_layer_table();
    t.layers[0].pool = Pool::none;  // conv1 then gives 55x55, conv2 takes 27x27
    why = chain_error(t);
    REQUIRE(why.has_value());
    CHECK(why->find("layer 'conv2' takes C,H,W = 96,27,27 but layer 'conv1' gives M,E,F = 96,55,55") !=
          std::string::npos);

    t = default_layer_table();
    t.layers[3].M = 192;  // conv5 takes 384 channels
    why = chain_error(t);
    REQUIRE(why.has_value());
    CHECK(why->find("layer 'conv5' takes C,H,W = 384,13,13 but layer 'conv4' gives M,E,F = 192,13,13") !=
          std::string::npos);

    const auto one = parse_layer_table(one_layer(R"("C": 3, "H": 8, "W": 8, "M": 2, "R": 3, "S": 3)"), "my.json");
    CHECK_FALSE(chain_error(one).has_value());
}

namespace {

// Multiply-accumulates of one pass at N=1: each layer's flops / 2 times its count.
double network_macs(const LayerTable& t) { return t.network_flops(1) / 2; }

}  // namespace

TEST_CASE("the built-in tables: alexnet, vgg16 and resnet50, by name", "[layers]") {
    CHECK(builtin_layer_table_names() == std::vector<std::string>{"alexnet", "vgg16", "resnet50"});
    for (const auto& t : builtin_layer_tables()) {
        INFO(t.name);
        CHECK(t.builtin);
        CHECK(t.source == "<built-in layers/" + t.name + ".json>");
        CHECK_FALSE(t.description.empty());
        CHECK(find_builtin_layer_table(t.name) == &t);
        CHECK(table_argument(t) == t.name);
    }
    CHECK(&default_layer_table() == find_builtin_layer_table("alexnet"));
    CHECK(find_builtin_layer_table("vgg19") == nullptr);
    CHECK(find_builtin_layer_table("VGG16") == nullptr);  // names are exact
    CHECK(default_layer_table().conv_count() == 5);

    // A file's table goes back to --table as its path; a bare file name that is also a
    // built-in's name gets "./" so that --table does not take the built-in.
    LayerTable file = parse_layer_table(one_layer(R"("C": 1, "H": 3, "W": 3, "M": 1, "R": 1, "S": 1)"), "dir/t.json");
    CHECK_FALSE(file.builtin);
    CHECK(table_argument(file) == "dir/t.json");
    file.source = "vgg16";
    CHECK(table_argument(file) == "./vgg16");
}

TEST_CASE("vgg16: configuration D's 13 convolutions as 9 shapes with counts", "[layers]") {
    const LayerTable& t = *find_builtin_layer_table("vgg16");
    REQUIRE(t.layers.size() == 9);
    std::vector<int> counts;
    for (const auto& l : t.layers) {
        INFO(l.name);
        counts.push_back(l.count);
        CHECK(l.R == 3);
        CHECK(l.S == 3);
        CHECK(l.stride == 1);
        CHECK(l.pad == 1);
        CHECK(l.E() == l.H);  // 3x3 pad 1 keeps the size
        CHECK(l.bias);
        CHECK(l.relu);
        CHECK(l.pool == Pool::none);  // VGG's 2x2/2 pools are not in the schema
    }
    CHECK(counts == std::vector<int>{1, 1, 1, 1, 1, 2, 1, 2, 3});
    CHECK(t.conv_count() == 13);
    CHECK(t.layers.front().C == 3);
    CHECK(t.layers.front().H == 224);
    CHECK(t.layers.back().M == 512);
    CHECK(t.layers.back().H == 14);
    // torchvision's model table gives VGG-16 15.47 G multiply-accumulates per 224x224 image
    // (its "GFLOPS" column counts MACs), rounded to 0.01 G. That figure holds the three
    // fully connected layers too: 25088*4096 + 4096*4096 + 4096*1000 MACs. The convolutions
    // plus those must land within the rounding, 0.005 G.
    const double fc_macs = 25088.0 * 4096 + 4096.0 * 4096 + 4096.0 * 1000;
    CHECK(std::fabs((network_macs(t) + fc_macs) * 1e-9 - 15.47) <= 0.005);
    CHECK(network_macs(t) == 15346630656.0);  // sum of count*M*E*F*C*R*S, exact in a double
    const auto why = chain_error(t);
    REQUIRE(why.has_value());
    CHECK(why->find("layer 'conv3_2-3' has count 2") != std::string::npos);
}

TEST_CASE("resnet50: torchvision's v1.5, 53 convolutions as 23 shapes with counts", "[layers]") {
    const LayerTable& t = *find_builtin_layer_table("resnet50");
    CHECK(t.layers.size() == 23);
    CHECK(t.conv_count() == 53);  // stem + 16 bottlenecks x 3 + 4 projections
    // No two rows share a shape: the rows are the distinct shapes.
    for (std::size_t i = 0; i < t.layers.size(); ++i)
        for (std::size_t j = i + 1; j < t.layers.size(); ++j) {
            INFO(t.layers[i].name << " vs " << t.layers[j].name);
            CHECK(t.layers[i].shape_string() != t.layers[j].shape_string());
        }
    const Layer& stem = *t.find("conv1");
    CHECK(stem.shape_string() == "C=3 H=224 W=224 M=64 R=7 S=7 stride=2 pad=3 E=112 F=112");
    // v1.5: the stride 2 sits on the first block's 3x3 and on the projection; its 1x1s keep stride 1.
    for (const char* stage : {"l2", "l3", "l4"}) {
        const std::string s = stage;
        INFO(s);
        REQUIRE(t.find(s + "_3x3_b1") != nullptr);
        CHECK(t.find(s + "_3x3_b1")->stride == 2);
        CHECK(t.find(s + "_proj")->stride == 2);
        CHECK(t.find(s + "_1x1a_b1")->stride == 1);
        CHECK(t.find(s + "_3x3_b1")->E() == t.find(s + "_1x1b")->H);
        CHECK(t.find(s + "_proj")->E() == t.find(s + "_1x1b")->E());
        CHECK(t.find(s + "_proj")->M == t.find(s + "_1x1b")->M);
    }
    CHECK(t.find("l4_1x1b")->E() == 7);
    CHECK(t.find("l4_1x1b")->M == 2048);
    // Blocks per stage (3, 4, 6, 3): each block has one 1x1b; l1_1x1b also stands for l1's
    // projection (the same shape), so its count is 3 + 1.
    CHECK(t.find("l1_1x1b")->count == 4);
    CHECK(t.find("l2_1x1b")->count == 4);
    CHECK(t.find("l3_1x1b")->count == 6);
    CHECK(t.find("l4_1x1b")->count == 3);
    for (const auto& l : t.layers) {
        INFO(l.name);
        CHECK(l.bias);  // batch norm folded into a bias
        const bool after_add = l.name.find("1x1b") != std::string::npos || l.name.find("proj") != std::string::npos;
        CHECK(l.relu == !after_add);
        CHECK(l.pool == Pool::none);
    }
    // torchvision's model table gives ResNet-50 4.09 G multiply-accumulates per 224x224 image
    // (its "GFLOPS" column counts MACs), rounded to 0.01 G; it includes the 2048x1000 fully
    // connected layer. The convolutions plus that must land within the rounding, 0.005 G.
    const double fc_macs = 2048.0 * 1000;
    CHECK(std::fabs((network_macs(t) + fc_macs) * 1e-9 - 4.09) <= 0.005);
    CHECK(network_macs(t) == 4087136256.0);  // sum of count*M*E*F*C*R*S, exact in a double
    const auto why = chain_error(t);
    REQUIRE(why.has_value());
    CHECK(why->find("layer 'l1_3x3' has count 3") != std::string::npos);
}
