// Data scales: parsing of --input-scale/--weight-scale, exact scaling of the generated
// tensors and of the golden output, the manifest's record of the scales (and manifests made
// before them), the directory of scaled sets, mismatch errors, the CSV columns, and the
// command line's exit codes.
#include "catch.hpp"
#include "test_util.hpp"
#include "golden_test_util.hpp"

#include "datagen.hpp"
#include "golden.hpp"
#include "layer.hpp"
#include "results.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using cs::DataScales;
using cs::test::cli;
using cs::test::error_message;
using cs::test::slurp;
using cs::test::spit;
using cs::test::TempDir;

namespace {

const char* kTable = R"({
  "name": "tinyscale",
  "layers": [
    {"name": "a", "C": 3, "H": 9, "W": 7, "M": 4, "R": 3, "S": 2, "stride": 2, "pad": 1},
    {"name": "b", "C": 5, "H": 6, "W": 6, "M": 3, "R": 3, "S": 3, "stride": 1, "pad": 1}
  ]
})";

cs::LayerTable table() { return cs::parse_layer_table(kTable, "tinyscale.json"); }

cs::GenerateOptions options(const fs::path& root, DataScales scales = {}) {
    return cs::test::quiet_generate_options(root, {1, 2}, scales);
}

nlohmann::ordered_json read_json(const fs::path& p) { return nlohmann::ordered_json::parse(slurp(p)); }

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_CASE("data scales: powers of two from 2^-24 to 2^20 in any exact spelling", "[datagen][scales]") {
    CHECK(cs::parse_data_scale("2^-24", "--input-scale") == 0x1p-24);
    CHECK(cs::parse_data_scale("2^20", "--input-scale") == 0x1p20);
    CHECK(cs::parse_data_scale("2^0", "--input-scale") == 1.0);
    CHECK(cs::parse_data_scale("2^+3", "--input-scale") == 8.0);
    CHECK(cs::parse_data_scale("0.25", "--input-scale") == 0.25);
    CHECK(cs::parse_data_scale("4096", "--input-scale") == 4096.0);
    CHECK(cs::parse_data_scale("1", "--input-scale") == 1.0);
    CHECK(cs::parse_data_scale("0x1p-12", "--input-scale") == 0x1p-12);
    CHECK(cs::parse_data_scale("5.9604644775390625e-08", "--input-scale") == 0x1p-24);
    CHECK(cs::parse_data_scale("1048576", "--input-scale") == 0x1p20);

    CHECK(cs::data_scale_string(0x1p-24) == "2^-24");
    CHECK(cs::data_scale_string(1.0) == "1");
    CHECK(cs::data_scale_string(4096.0) == "2^12");
    // What a scale prints as parses back to it.
    for (int e = -24; e <= 20; ++e) {
        const double s = std::ldexp(1.0, e);
        CHECK(cs::parse_data_scale(cs::data_scale_string(s), "x") == s);
    }
}

TEST_CASE("data scales: anything but an exact power of two in range is refused, naming the option",
          "[datagen][scales]") {
    const struct {
        const char* text;
        const char* why;
    } bad[] = {{"3", "exact power of two"},      {"0.3", "exact power of two"},  {"0", "positive"},
               {"-1", "positive"},                {"-0.25", "positive"},          {"nan", "finite"},
               {"inf", "finite"},                 {"-inf", "finite"},             {"1e400", "finite"},
               {"2^21", "outside 2^-24 to 2^20"}, {"2^-25", "outside"},           {"0x1p-30", "outside"},
               {"2097152", "outside"},            {"abc", "not a data scale"},    {"", "not a data scale"},
               {" 1", "not a data scale"},        {"1 ", "not a data scale"},     {"2^", "not a data scale"},
               {"2^x", "not a data scale"},       {"2^-24.5", "not a data scale"}, {"2^99999", "not a data scale"},
               {"1/4", "not a data scale"}};
    for (const auto& b : bad) {
        INFO("scale '" << b.text << "'");
        const std::string msg = error_message([&] { (void)cs::parse_data_scale(b.text, "--weight-scale"); });
        CHECK_HAS(msg, "--weight-scale");
        CHECK_HAS(msg, b.why);
    }
    CHECK_HAS(error_message([] { cs::check_data_scale(std::ldexp(1.0, 21), "input_scale"); }), "outside");
}

TEST_CASE("scaled inputs and weights are the unscaled ones times the scale, bit for bit", "[datagen][scales]") {
    const cs::Layer l = cs::parse_layer_table(kTable, "t.json").layers.at(1);
    const std::int64_t N = 3;
    std::vector<float> x1(std::size_t(l.input_elems(N))), w1(std::size_t(l.weight_elems()));
    cs::make_input(l, N, cs::kDefaultSeed, x1.data());
    cs::make_weights(l, cs::kDefaultSeed, w1.data());
    std::vector<float> explicit_one(x1.size());
    cs::make_input(l, N, cs::kDefaultSeed, explicit_one.data(), 1.0);
    CHECK(std::memcmp(explicit_one.data(), x1.data(), x1.size() * sizeof(float)) == 0);
    for (double s : {0x1p-24, 0x1p-12, 0.5, 0x1p12, 0x1p20}) {
        INFO("scale " << cs::data_scale_string(s));
        std::vector<float> xs(x1.size()), ws(w1.size());
        cs::make_input(l, N, cs::kDefaultSeed, xs.data(), s);
        cs::make_weights(l, cs::kDefaultSeed, ws.data(), s);
        std::size_t bad_x = 0, bad_w = 0, nonzero = 0;
        for (std::size_t i = 0; i < xs.size(); ++i) {
            bad_x += !same_bits(xs[i], float(double(x1[i]) * s));
            nonzero += xs[i] != 0;
            // Unscaling gives the default data back exactly: nothing was rounded away.
            bad_x += !same_bits(float(double(xs[i]) / s), x1[i]);
        }
        for (std::size_t i = 0; i < ws.size(); ++i) {
            bad_w += !same_bits(ws[i], float(double(w1[i]) * s));
            bad_w += !same_bits(float(double(ws[i]) / s), w1[i]);
        }
        CHECK(bad_x == 0);
        CHECK(bad_w == 0);
        CHECK(nonzero > xs.size() / 2);
    }
}

TEST_CASE("golden sets at 2^-24 and 2^20 are the default set times the scales, exactly", "[golden][scales]") {
    TempDir dir;
    const auto t = table();
    cs::generate_golden(t, options(dir.path));
    const DataScales cases[] = {{0x1p-24, 0x1p-24}, {0x1p20, 0x1p20}, {0x1p-24, 0x1p20}, {0x1p20, 0x1p-24},
                                {1, 0x1p-12}};
    for (const auto& s : cases) {
        cs::generate_golden(t, options(dir.path, s));
        const double sp = s.input * s.weights;
        for (const auto& l : t.layers)
            for (std::int64_t N : {1, 2}) {
                INFO(l.name << " N=" << N << " input scale " << cs::data_scale_string(s.input) << ", weight scale "
                            << cs::data_scale_string(s.weights));
                const cs::GoldenSet d = cs::load_golden(dir.path, t, l, N);
                const cs::GoldenSet g = cs::load_golden(dir.path, t, l, N, std::nullopt, s);
                CHECK(g.scales == s);
                CHECK(g.dir == dir.path / "tinyscale" / cs::golden_scale_dir_name(s) / ("n" + std::to_string(N)));
                REQUIRE(g.output.size() == d.output.size());
                std::size_t bad = 0;
                for (std::size_t i = 0; i < d.input.size(); ++i) bad += !same_bits(g.input[i], float(d.input[i] * s.input));
                for (std::size_t i = 0; i < d.weights.size(); ++i)
                    bad += !same_bits(g.weights[i], float(d.weights[i] * s.weights));
                // The reference sums exact products in double: every partial sum is the
                // unscaled one times S_in * S_w, and so is its rounding to float (all in
                // float's normal range, 2^-48 to 2^40 times O(1)). The same for the bound.
                for (std::size_t i = 0; i < d.output.size(); ++i) {
                    bad += !same_bits(g.output[i], float(double(d.output[i]) * sp));
                    bad += !same_bits(g.bound[i], float(double(d.bound[i]) * sp));
                }
                CHECK(bad == 0);
            }
    }
}

TEST_CASE("the manifest records the scales and scaled sets live in their own directory", "[golden][scales]") {
    TempDir dir;
    const auto t = table();
    const DataScales s{0x1p-24, 0x1p20};
    cs::generate_golden(t, options(dir.path));
    cs::generate_golden(t, options(dir.path, s));
    CHECK(cs::golden_scale_dir_name({}).empty());
    CHECK(cs::golden_scale_dir_name(s) == "x2^-24_w2^20");
    CHECK(cs::golden_table_dir(dir.path, t) == dir.path / "tinyscale");
    CHECK(cs::golden_table_dir(dir.path, t, s) == dir.path / "tinyscale" / "x2^-24_w2^20");

    const auto md = read_json(cs::golden_manifest_path(dir.path, t));
    CHECK(md["generator"]["input_scale"].get<double>() == 1.0);
    CHECK(md["generator"]["weight_scale"].get<double>() == 1.0);
    const auto ms = read_json(dir.path / "tinyscale" / "x2^-24_w2^20" / "manifest.json");
    CHECK(ms["generator"]["input_scale"].get<double>() == 0x1p-24);
    CHECK(ms["generator"]["weight_scale"].get<double>() == 0x1p20);
    CHECK(fs::exists(dir.path / "tinyscale" / "x2^-24_w2^20" / "n2" / "a.output.npy"));

    const auto listing = cs::list_golden_sets(dir.path, t, s);
    CHECK(listing.scales == s);
    CHECK(listing.sets.size() == 4);
    CHECK(cs::golden_batches(dir.path, t, t.layers[0], s) == std::vector<std::int64_t>{1, 2});
    CHECK(cs::golden_batches(dir.path, t, t.layers[0], {0x1p-24, 1}).empty());

    // The default manifest lists only the default sets: a second generate at the default
    // scales merges into it (created unchanged), and so does one at the same other scales.
    const auto created = md["created"];
    cs::generate_golden(t, options(dir.path));
    CHECK(read_json(cs::golden_manifest_path(dir.path, t))["created"] == created);
    cs::generate_golden(t, options(dir.path, s));
    CHECK(read_json(cs::golden_manifest_path(dir.path, t, s))["created"] == ms["created"]);
}

TEST_CASE("asking for other scales than the golden set's is an error naming the regenerate command",
          "[golden][scales]") {
    TempDir dir;
    const auto t = table();
    const auto& l = t.layers[0];
    const DataScales s{0x1p-24, 0x1p20};
    cs::generate_golden(t, options(dir.path, s));

    // No set at these scales: the command to make them.
    const std::string none = error_message([&] { (void)cs::load_golden(dir.path, t, l, 1, std::nullopt, {0x1p12, 1}); });
    CHECK_HAS(none, "no golden manifest");
    CHECK_HAS(none, "regenerate with: convstudy generate --batch 1");
    CHECK_HAS(none, "--input-scale 2^12 --weight-scale 1");

    // A manifest in the directory of these scales that records others (moved by hand).
    const fs::path mpath = cs::golden_manifest_path(dir.path, t, s);
    auto m = read_json(mpath);
    m["generator"]["weight_scale"] = 0x1p19;
    spit(mpath, m.dump(2));
    const std::string other = error_message([&] { (void)cs::load_golden(dir.path, t, l, 1, std::nullopt, s); });
    CHECK_HAS(other, "generated with input scale 2^-24 and weight scale 2^19");
    CHECK_HAS(other, "expected input scale 2^-24 and weight scale 2^20");
    CHECK_HAS(other, "regenerate with: convstudy generate --batch 1");
    CHECK_HAS(other, "--input-scale 2^-24 --weight-scale 2^20");
    CHECK_HAS(error_message([&] { cs::check_golden(dir.path, t, l, 1, std::nullopt, s); }), "weight scale 2^19");
    CHECK(cs::golden_batches(dir.path, t, l, s).empty());

    // A recorded scale that is no data scale at all is a malformed manifest.
    m["generator"]["weight_scale"] = 3;
    spit(mpath, m.dump(2));
    const std::string bad = error_message([&] { (void)cs::load_golden(dir.path, t, l, 1, std::nullopt, s); });
    CHECK_HAS(bad, "malformed golden manifest");
    CHECK_HAS(bad, "exact power of two");
    m["generator"]["weight_scale"] = "2^20";
    spit(mpath, m.dump(2));
    CHECK_HAS(error_message([&] { (void)cs::load_golden(dir.path, t, l, 1, std::nullopt, s); }), "expected a number");

    // Generation refuses a bad scale before it creates anything.
    TempDir empty;
    CHECK_HAS(error_message([&] { cs::generate_golden(t, options(empty.path, {3, 1})); }), "--input-scale");
    CHECK_HAS(error_message([&] { cs::generate_golden(t, options(empty.path, {1, 0x1p21})); }), "--weight-scale");
    CHECK(fs::is_empty(empty.path));
}

TEST_CASE("a manifest made before data scales loads as scales 1 and 1 and is merged into", "[golden][scales]") {
    TempDir dir;
    const auto t = table();
    cs::generate_golden(t, options(dir.path));
    const fs::path mpath = cs::golden_manifest_path(dir.path, t);
    auto m = read_json(mpath);
    m["generator"].erase("input_scale");
    m["generator"].erase("weight_scale");
    spit(mpath, m.dump(2));

    const cs::GoldenSet g = cs::load_golden(dir.path, t, t.layers[0], 2);
    CHECK(g.scales.is_default());
    CHECK_NOTHROW(cs::check_golden(dir.path, t, t.layers[1], 1));
    CHECK(cs::list_golden_sets(dir.path, t).scales.is_default());
    // Asking for other scales does not read the old (default) manifest at all.
    CHECK_HAS(error_message([&] { (void)cs::load_golden(dir.path, t, t.layers[0], 2, std::nullopt, {0.5, 1}); }),
              "--input-scale 2^-1 --weight-scale 1");

    // Generating the default scales again merges into it (no conflict) and records them.
    cs::generate_golden(t, options(dir.path));
    const auto after = read_json(mpath);
    CHECK(after["created"] == m["created"]);
    CHECK(after["generator"]["input_scale"].get<double>() == 1.0);
}

TEST_CASE("the CSV records the data scales next to the seed", "[results][scales]") {
    const auto& cols = cs::cli::csv_columns();
    const auto seed = std::find(cols.begin(), cols.end(), "seed");
    REQUIRE(seed + 2 < cols.end());
    CHECK(*(seed + 1) == "input_scale");
    CHECK(*(seed + 2) == "weight_scale");
    cs::cli::RunMeta meta;
    cs::cli::Row row;
    row.layer = table().layers[0];
    row.N = 1;
    row.variant = cs::gpu::find_variant("baseline").variant;
    auto field = [&](const std::string& c) {
        const auto f = cs::cli::csv_fields(meta, row);
        return f.at(std::size_t(std::find(cols.begin(), cols.end(), c) - cols.begin()));
    };
    CHECK(field("input_scale").empty());  // not recorded
    meta.scales = DataScales{0x1p-24, 0x1p20};
    CHECK(field("input_scale") == "5.9604644775390625e-08");
    CHECK(std::stod(field("input_scale")) == 0x1p-24);
    CHECK(field("weight_scale") == "1048576");
    meta.scales = DataScales{};
    CHECK(field("input_scale") == "1");
    CHECK(field("weight_scale") == "1");
}

TEST_CASE("command line: scales in generate and verify, bad scales exit 2", "[cli][scales]") {
    TempDir dir;
    spit(dir.path / "t.json", kTable);
    const std::string tbl = " --layers " + (dir.path / "t.json").string();
    const std::string out = " --out " + (dir.path / "g").string();

    for (const char* bad : {"3", "0", "-2", "nan", "2^21", "2^-25", "abc"}) {
        INFO("--input-scale " << bad);
        const auto r = cli(std::string("generate --quiet --batch 1 --input-scale '") + bad + "'" + tbl + out);
        CHECK(r.code == 2);
        CHECK_HAS(r.out, "--input-scale");
        CHECK_FALSE(fs::exists(dir.path / "g" / "tinyscale"));
    }
    const auto w = cli("generate --quiet --batch 1 --weight-scale 0.3" + tbl + out);
    CHECK(w.code == 2);
    CHECK_HAS(w.out, "--weight-scale");

    const auto r = cli("generate --quiet --no-cpu-timing --no-onednn --batch 1,2 --input-scale 2^-24 --weight-scale "
                       "1048576" + tbl + out);
    INFO(r.out);
    REQUIRE(r.code == 0);
    CHECK(fs::exists(dir.path / "g" / "tinyscale" / "x2^-24_w2^20" / "manifest.json"));
    CHECK_FALSE(fs::exists(dir.path / "g" / "tinyscale" / "manifest.json"));

    const std::string golden = " --golden " + (dir.path / "g").string() + " --table " + (dir.path / "t.json").string();
    const auto v = cli("verify --recompute 64 --input-scale 2^-24 --weight-scale 2^20" + golden);
    INFO(v.out);
    CHECK(v.code == 0);
    CHECK_HAS(v.out, "inputs and weights regenerated");
    CHECK_HAS(v.out, "4 of 4 golden sets verified");
    // The default sets were not made: verify says how to make them.
    const auto v1 = cli("verify" + golden);
    CHECK(v1.code == 2);
    CHECK_HAS(v1.out, "no golden manifest");
    const auto vbad = cli("verify --input-scale 0" + golden);
    CHECK(vbad.code == 2);
    CHECK_HAS(vbad.out, "--input-scale");

    // A scaled set whose inputs are not the generator's at its scales fails --recompute:
    // the default-scale data in the scaled directory, its manifest made to agree.
    const auto d = cli("generate --quiet --no-cpu-timing --no-onednn --batch 1" + tbl + " --out " +
                       (dir.path / "h").string());
    REQUIRE(d.code == 0);
    const fs::path from = dir.path / "h" / "tinyscale", to = from / "x2^-24_w2^20";
    fs::create_directories(to);
    fs::rename(from / "n1", to / "n1");
    auto m = read_json(from / "manifest.json");
    m["generator"]["input_scale"] = 0x1p-24;
    m["generator"]["weight_scale"] = 0x1p20;
    spit(to / "manifest.json", m.dump(2));
    const auto vr = cli("verify --recompute 16 --input-scale 2^-24 --weight-scale 2^20 --golden " +
                        (dir.path / "h").string() + " --table " + (dir.path / "t.json").string());
    CHECK(vr.code == 1);
    CHECK_HAS(vr.out, "is not what generator");
    CHECK_HAS(vr.out, "input scale 2^-24 and weight scale 2^20");

    // run and sweep parse the scales before they ask for a device.
    for (const char* cmd : {"run --variant baseline --layer a --batch 1", "sweep --csv x.csv --batch 1"}) {
        INFO(cmd);
        const auto rr = cli(std::string(cmd) + " --weight-scale 5" + golden);
        CHECK(rr.code == 2);
        CHECK_HAS(rr.out, "--weight-scale");
    }
}
