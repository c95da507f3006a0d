// --table NAME|PATH from the command line: a built-in table by name, a file by path, an
// unknown name refused with the built-in names; `list` shows the built-in tables; golden
// files of a built-in table go to its own folder.
#include "catch.hpp"
#include "test_util.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

using cs::test::cli;
using cs::test::spit;
using cs::test::TempDir;

namespace {

nlohmann::json list_json(const std::string& args) {
    const auto r = cli("list --json " + args);
    INFO(r.out);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("list shows the built-in tables, text and json", "[cli][layers]") {
    const auto r = cli("list");
    INFO(r.out);
    REQUIRE(r.code == 0);
    CHECK_HAS(r.out, "Layer tables built in");
    CHECK_HAS(r.out, "alexnet    5 shapes,  5 convolutions,");
    CHECK_HAS(r.out, "vgg16      9 shapes, 13 convolutions,");
    CHECK_HAS(r.out, "resnet50  23 shapes, 53 convolutions,");
    CHECK_HAS(r.out, "Layers of alexnet (<built-in layers/alexnet.json>)");
    CHECK_HAS(r.out, "bias+relu, pool max3x3s2");

    const auto j = list_json("");
    REQUIRE(j["tables"].size() == 3);
    CHECK(j["tables"][0]["name"] == "alexnet");
    CHECK(j["tables"][0]["chain"] == true);
    CHECK(j["tables"][0]["chain_error"].is_null());
    CHECK(j["tables"][1]["name"] == "vgg16");
    CHECK(j["tables"][1]["convs"] == 13);
    CHECK(j["tables"][1]["chain"] == false);
    CHECK(j["tables"][1]["chain_error"].get<std::string>().find("has count 2") != std::string::npos);
    CHECK(j["tables"][2]["name"] == "resnet50");
    CHECK(j["tables"][2]["convs"] == 53);
    CHECK(j["tables"][2]["builtin"] == true);
    CHECK(j["table"]["name"] == "alexnet");
    REQUIRE(j["layers"].size() == 5);
    CHECK(j["layers"][0]["pool"] == "max3x3s2");
    CHECK(j["layers"][0]["bias"] == true);
    CHECK(j["layers"][2]["pool"] == "none");
    CHECK(j["layers"][2]["count"] == 1);
}

TEST_CASE("a table by built-in name with --table NAME, a file by its path", "[cli][layers]") {
    auto j = list_json("--table vgg16");
    CHECK(j["table"]["name"] == "vgg16");
    CHECK(j["table"]["source"] == "<built-in layers/vgg16.json>");
    REQUIRE(j["layers"].size() == 9);
    CHECK(j["layers"][8]["name"] == "conv5_1-3");
    CHECK(j["layers"][8]["count"] == 3);

    j = list_json("--table resnet50");
    CHECK(j["layers"].size() == 23);
    CHECK(j["table"]["convs"] == 53);

    // A file by its path, with a name of its own.
    TempDir d;
    spit(d.path / "mine.json", R"({"name": "mine", "layers": [
        {"name": "a", "C": 2, "H": 9, "W": 9, "M": 4, "R": 3, "S": 3, "count": 2, "relu": true}]})");
    j = list_json("--table " + (d.path / "mine.json").string());
    CHECK(j["table"]["name"] == "mine");
    CHECK(j["table"]["builtin"] == false);
    CHECK(j["table"]["source"] == (d.path / "mine.json").string());
    REQUIRE(j["layers"].size() == 1);
    CHECK(j["layers"][0]["count"] == 2);
    CHECK(j["layers"][0]["relu"] == true);

    // A file whose bare name is a built-in's: the name selects the built-in (and a note says
    // how to reach the file); ./NAME loads the file.
    std::filesystem::copy_file(d.path / "mine.json", d.path / "vgg16");
    const std::string exe = CS_CONVSTUDY_EXE;
    // A subshell, so that run_command's 2>&1 takes both programs' stderr (the note).
    const auto r = cs::test::run_command("(cd " + d.path.string() + " && " + exe + " list --table vgg16 && " + exe +
                                         " list --json --table ./vgg16)");
    INFO(r.out);
    REQUIRE(r.code == 0);
    CHECK_HAS(r.out, "note: --table vgg16 selects the built-in table; give ./vgg16 for the file of that name");
    CHECK_HAS(r.out, "Layers of vgg16 (<built-in layers/vgg16.json>)");
    CHECK_HAS(r.out, "\"source\": \"./vgg16\"");
}

TEST_CASE("an unknown --table name: exit 2 naming the built-in tables", "[cli][layers]") {
    auto r = cli("list --table vgg19");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "--table vgg19: no such file, and not the name of a built-in table (did you mean 'vgg16'?)");
    CHECK_HAS(r.out, "built-in tables: alexnet, vgg16, resnet50");

    r = cli("list --table /no/such/dir/resnet.json");
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "did you mean 'resnet50'?");

    r = cli("list --table zzzzzzzzzz");
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "not the name of a built-in table; built-in tables: alexnet, vgg16, resnet50");

    // Every command that takes --table resolves it the same way, before it writes anything.
    TempDir d;
    const std::string never = (d.path / "never").string();
    for (const std::string& cmd : {"generate --table vgg19 --batch 1 --out " + never,
                                  "sweep --table vgg19 --variants baseline --batch 1 --csv " + never + ".csv",
                                  "run --table vgg19 --variant baseline --layer conv1 --batch 1 --csv " + never + ".csv",
                                  "verify --table vgg19 --golden " + never}) {
        r = cli(cmd);
        INFO(cmd << ": " << r.out);
        CHECK(r.code == 2);
        CHECK_HAS(r.out, "--table vgg19: no such file, and not the name of a built-in table (did you mean 'vgg16'?)");
    }
    CHECK(std::filesystem::is_empty(d.path));
}

TEST_CASE("generate --only and sweep --layers name layers within a built-in table", "[cli][layers]") {
    // generate --only: a layer of vgg16 is known, one of alexnet is not.
    TempDir d;
    auto r = cli("generate --quiet --table vgg16 --batch 1 --only conv3 --out " + (d.path / "g").string());
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "unknown layer 'conv3' in <built-in layers/vgg16.json>");
    // sweep --layers likewise (checked before any device is asked for).
    r = cli("sweep --table resnet50 --layers conv2 --variants baseline --batch 1 --csv " + (d.path / "s.csv").string());
    CHECK(r.code == 2);
    CHECK_HAS(r.out, "unknown layer 'conv2' in <built-in layers/resnet50.json>");
}

TEST_CASE("golden files of a built-in table go to its own folder", "[cli][golden][layers]") {
    // resnet50's l4_1x1a (2048 to 512 channels, 1x1, 7x7) is its smallest layer by MACs
    // that takes well under a second on the CPU reference.
    TempDir d;
    const auto r = cli("generate --quiet --no-cpu-timing --table resnet50 --batch 1 --only l4_1x1a --out " +
                       (d.path / "g").string());
    INFO(r.out);
    REQUIRE(r.code == 0);
    CHECK(std::filesystem::exists(d.path / "g" / "resnet50" / "manifest.json"));
    CHECK(std::filesystem::exists(d.path / "g" / "resnet50" / "n1" / "l4_1x1a.output.npy"));
    CHECK_FALSE(std::filesystem::exists(d.path / "g" / "alexnet"));
    // verify finds them through the same --table NAME.
    const auto v = cli("verify --table resnet50 --golden " + (d.path / "g").string());
    INFO(v.out);
    CHECK(v.code == 0);
    // A missing set's hint names the table so that the command it prints makes the set.
    const auto s = cli("sweep --table resnet50 --layers l4_3x3 --variants baseline --batch 1 --check golden --golden " +
                       (d.path / "g").string() + " --csv " + (d.path / "s.csv").string());
    INFO(s.out);
    CHECK(s.code == 2);
    CHECK_HAS(s.out, "no golden set for l4_3x3 at N=1");
    CHECK_HAS(s.out, "generate it with: convstudy generate --batch 1 --out " + (d.path / "g").string() + " --table resnet50");
}
