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
