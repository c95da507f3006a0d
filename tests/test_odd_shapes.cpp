// The GPU tests' odd shapes are written twice: odd_layers() in tests/gpu/gpu_test_util.hpp (the
// GPU tests) and the odd table of scripts/sanitize.sh (compute-sanitizer's `odd` target). A shape
// added to one only (as odd_c64_rows once was) leaves the sanitizer without the rung it was added
// for; this test reads both files and requires the same shapes in the same order.
#include "catch.hpp"

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string read(const std::string& rel) {
    std::ifstream f(std::string(CS_SOURCE_DIR) + "/" + rel);
    REQUIRE(f);
    std::ostringstream o;
    o << f.rdbuf();
    return o.str();
}

// "name C H W M R S stride pad" for each match of `re` (groups 1-9 in that order).
std::vector<std::string> shapes(const std::string& text, const std::regex& re) {
    std::vector<std::string> out;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
        std::string s;
        for (int g = 1; g <= 9; ++g) s += (g > 1 ? " " : "") + (*it)[g].str();
        out.push_back(s);
    }
    return out;
}

}  // namespace

TEST_CASE("the sanitizer's odd table and the GPU tests' odd_layers() hold the same shapes", "[plans][sanitize]") {
    const std::string n = R"(\s*(\d+)\s*)";
    const std::regex in_tests("L\\(\"(odd_[a-z0-9_]+)\"," + n + "," + n + "," + n + "," + n + "," + n + "," + n +
                              "," + n + "," + n + "\\)");
    const auto field = [&](const char* key) { return std::string("\\s*\"") + key + "\":" + n; };
    const std::regex in_script("\\{\"name\": \"(odd_[a-z0-9_]+)\"," + field("C") + "," + field("H") + "," +
                               field("W") + "," + field("M") + "," + field("R") + "," + field("S") + "," +
                               field("stride") + "," + field("pad") + "\\}");
    const auto a = shapes(read("tests/gpu/gpu_test_util.hpp"), in_tests);
    const auto b = shapes(read("scripts/sanitize.sh"), in_script);
    CHECK(a.size() >= 8);
    CHECK(a == b);
}
