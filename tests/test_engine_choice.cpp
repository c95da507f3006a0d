// The library anchors' engine choice (bench/engine_choice.hpp) and the file that remembers it
// across runs (cli/engine_choices_file.hpp). Host code, no GPU needed.
#include "catch.hpp"

#include "engine_choice.hpp"
#include "engine_choices_file.hpp"
#include "error.hpp"
#include "test_util.hpp"

#include <fstream>
#include <stdexcept>

using namespace cs;
using cs::gpu::choose_engine;
using cs::gpu::TimedConfig;
using cs::test::TempDir;

namespace {
std::vector<float> around(float ms, int n = 31) {  // samples with a median of ms
    std::vector<float> v;
    for (int i = 0; i < n; ++i) v.push_back(ms * (1.0f + 0.01f * float((i * 7) % 5 - 2)));
    return v;
}
void write(const std::filesystem::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }
}  // namespace

TEST_CASE("the fastest median wins when nothing was chosen before", "[engine-choice]") {
    const std::vector<TimedConfig> t = {{67, around(0.0290f)}, {41, around(0.0275f)}, {38, around(0.0291f)}};
    const auto c = choose_engine(t, std::nullopt);
    CHECK(c.chosen == 1);
    CHECK(c.fastest == 1);
    CHECK(!c.kept_previous);
    CHECK(c.chosen_ms == Approx(0.0275));
    // equal medians: the earlier configuration (the candidate order: heuristics A first)
    const auto tie = choose_engine({{3, around(0.5f)}, {4, around(0.5f)}}, std::nullopt);
    CHECK(tie.chosen == 0);
}

TEST_CASE("the engine chosen before stays while it is within 3% of the fastest", "[engine-choice]") {
    // eng3 chosen before, now 2% slower than eng4: kept (the H200's FFT pair on conv2)
    const std::vector<TimedConfig> t = {{3, around(0.2040f)}, {4, around(0.2000f)}};
    auto c = choose_engine(t, 3);
    CHECK(c.chosen == 0);
    CHECK(c.fastest == 1);
    CHECK(c.kept_previous);
    // 5% slower: the faster engine takes its place
    c = choose_engine({{3, around(0.2100f)}, {4, around(0.2000f)}}, 3);
    CHECK(c.chosen == 1);
    CHECK(!c.kept_previous);
    // the remembered engine's fastest configuration counts (configs differ in knobs only)
    c = choose_engine({{67, around(0.0300f)}, {41, around(0.0280f)}, {67, around(0.0285f)}}, 67);
    CHECK(c.chosen == 2);
    CHECK(c.kept_previous);
    // a remembered engine that did not run here: the fastest
    c = choose_engine({{3, around(0.21f)}, {4, around(0.20f)}}, 99);
    CHECK(c.chosen == 1);
    CHECK(!c.kept_previous);
    // exactly at the band edge: kept; just above: not
    c = choose_engine({{1, {1.03f}}, {2, {1.0f}}}, 1);
    CHECK(c.chosen == 0);
    c = choose_engine({{1, {1.0301f}}, {2, {1.0f}}}, 1);
    CHECK(c.chosen == 1);
}

TEST_CASE("choose_engine refuses empty input", "[engine-choice]") {
    CHECK_THROWS_AS(choose_engine({}, std::nullopt), std::invalid_argument);
    CHECK_THROWS_AS(choose_engine({{1, {}}}, std::nullopt), std::invalid_argument);
}

TEST_CASE("engine choices survive a save and a load, and bad files are refused", "[engine-choice]") {
    TempDir dir;
    const auto file = dir.path / "engine_choices.json";
    gpu::EngineChoices mem;  // a command's memory (run, sweep): nothing process-wide
    cli::load_engine_choices(file, mem);  // missing file: empty memory
    CHECK(mem.all().empty());
    mem.set("H200 sm90 cudnn91400|96,27,27,256,5,5,1,2|32|nhwc|fp32", {4, 0.1999, std::nullopt});
    mem.set("H200 sm90 cudnn91400|256,13,13,384,3,3,1,1|1|nchw|tf32",
            {41, 0.0276, std::vector<std::pair<int, std::int64_t>>{{3, 1}, {7, 64}}});
    CHECK(mem.changed());
    cli::save_engine_choices(file, mem);
    REQUIRE(std::filesystem::exists(file));
    CHECK(!mem.changed());  // saved: the next save (after each layer and batch of a sweep) writes nothing
    mem.replace({});
    cli::load_engine_choices(file, mem);
    CHECK(!mem.changed());
    REQUIRE(mem.all().size() == 2);
    CHECK(mem.get("H200 sm90 cudnn91400|96,27,27,256,5,5,1,2|32|nhwc|fp32")->engine == 4);
    CHECK(mem.get("H200 sm90 cudnn91400|256,13,13,384,3,3,1,1|1|nchw|tf32")->ms == Approx(0.0276));
    // the chosen configuration's knobs come back exactly; an entry saved without them has none
    const auto knobs = mem.get("H200 sm90 cudnn91400|256,13,13,384,3,3,1,1|1|nchw|tf32")->knobs;
    REQUIRE(knobs.has_value());
    CHECK(*knobs == std::vector<std::pair<int, std::int64_t>>{{3, 1}, {7, 64}});
    CHECK(!mem.get("H200 sm90 cudnn91400|96,27,27,256,5,5,1,2|32|nhwc|fp32")->knobs.has_value());
    // unchanged memory: nothing written
    std::filesystem::remove(file);
    cli::save_engine_choices(file, mem);
    CHECK(!std::filesystem::exists(file));

    write(file, "{not json");
    CHECK_THROWS_AS(cli::load_engine_choices(file, mem), Error);
    write(file, R"({"format": "something else", "choices": {}})");
    CHECK_THROWS_AS(cli::load_engine_choices(file, mem), Error);
    write(file, R"({"format": "convstudy engine choices 1", "choices": {"k": {"engine": "x", "ms": 1}}})");
    CHECK_THROWS_AS(cli::load_engine_choices(file, mem), Error);
    write(file, R"({"format": "convstudy engine choices 1", "choices": {"k": {"engine": 1, "ms": 1, "knobs": [[3]]}}})");
    CHECK_THROWS_AS(cli::load_engine_choices(file, mem), Error);
    write(file, R"({"format": "convstudy engine choices 1", "choices": {"k": {"engine": 1, "ms": 1, "knobs": 5}}})");
    CHECK_THROWS_AS(cli::load_engine_choices(file, mem), Error);
}

TEST_CASE("where the engine choices live", "[engine-choice]") {
    TempDir dir;
    CHECK(cli::engine_choices_path("none", dir.path.string()).empty());
    CHECK(cli::engine_choices_path("", dir.path.string()) == dir.path / "engine_choices.json");
    CHECK(cli::engine_choices_path("", (dir.path / "missing").string()).empty());
    CHECK(cli::engine_choices_path("x.json", dir.path.string()) == std::filesystem::path("x.json"));
}
