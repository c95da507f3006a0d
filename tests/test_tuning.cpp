// The tuning table (bench/tuning.hpp): the built-in per-card files load and name tiles the
// persistent kernel has; the lookup takes the AlexNet tiles the committed tile sweeps measured,
// reaches a factor of 4 in N, prefers this card's entry and the problem's layout; a bad file is
// an error that names the file and the entry; the writer and the reader agree; and each table is
// what its card's committed tile sweeps (results/tiles/) measured.
#include "catch.hpp"

#include "tuning.hpp"
#include "ws_plan.hpp"
#include "csv_table.hpp"
#include "error.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <tuple>

using namespace cs::gpu;
using namespace cs::gpu::variants::hopper;

namespace {
const TunedShape kConv1{3, 227, 227, 96, 11, 11, 4, 0};
const TunedShape kConv2{96, 27, 27, 256, 5, 5, 1, 2};
const TunedShape kConv3{256, 13, 13, 384, 3, 3, 1, 1};
constexpr const char* kH200 = "NVIDIA H200";
constexpr const char* kH100 = "NVIDIA H100 80GB HBM3";

WsTuningKey key(Schedule s, Epilogue e, TileScheduler t = TileScheduler::automatic, Cluster c = Cluster::one,
                SplitKind k = SplitKind::none) {
    return WsTuningKey{s, e, t, c, k};
}
const WsTuningKey kTmaStore = key(Schedule::cooperative, Epilogue::tma_store);
const WsTuningKey kDirect = key(Schedule::cooperative, Epilogue::direct);

std::string tile_on(const char* device, const WsTuningKey& k, DType dt, const TunedShape& s, Layout l, long n) {
    const TileId t = builtin_tuning().tile(device, 132, k, dt, s, l, n);
    return t.chosen() ? tile_name(t.index) : std::string("none");
}
std::string tile_of(const WsTuningKey& k, DType dt, const TunedShape& s, Layout l, long n) {
    return tile_on(kH200, k, dt, s, l, n);
}

const char* kGood = R"({"format": "convstudy-tuning", "version": 1, "device": "Test GPU", "sms": 10,
  "cuda_runtime": "13.0", "driver": "13.0", "source": "test",
  "entries": [{"family": "hopper", "policy": {"schedule": "cooperative", "epilogue": "tma-store",
    "scheduler": "auto", "cluster": "1", "split": "none"}, "dtype": "f16",
    "layer": {"C": 96, "H": 27, "W": 27, "M": 256, "R": 5, "S": 5, "stride": 1, "pad": 2},
    "N": 8, "layout": "nhwc", "tile": "m128n128k128B-s6", "kernel_ms": 0.5}]})";

std::string replaced(std::string s, const std::string& from, const std::string& to) {
    const auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
}
}  // namespace

TEST_CASE("the built-in tuning tables load, one per card, every tile one the persistent kernel runs", "[tuning]") {
    const Tuning& t = builtin_tuning();
    REQUIRE(t.cards.size() == builtin_tuning_names().size());
    REQUIRE(t.cards.size() >= 2);
    for (const TuningCard& c : t.cards) {
        INFO(c.origin);
        CHECK(c.sms > 0);
        CHECK_FALSE(c.device.empty());
        CHECK_FALSE(c.entries.empty());
        for (const TunedEntry& e : c.entries) {
            CHECK(e.tile.chosen());
            CHECK(ws_tile_ok_rt(e.tile.index, e.policy.schedule));
            CHECK(e.kernel_ms > 0);
        }
    }
}

TEST_CASE("N=1 takes the 64-pixel tile the N=1 sweep measured, N=32 and up their own", "[tuning]") {
    // results/tiles/h200_hopper_tiles_n1.csv.gz: the 64-pixel tile fastest on conv3 at N=1
    CHECK(tile_of(kTmaStore, DType::f16, kConv3, Layout::nhwc, 1) == "m64n128k128B-s8");
    CHECK(tile_of(kDirect, DType::f16, kConv3, Layout::nhwc, 1) == "m64n128k128B-s8");
    CHECK(tile_of(kDirect, DType::f32, kConv3, Layout::nhwc, 1) == "m64n128k128B-s8");
    // N=2..4 are within reach of the N=1 entry
    CHECK(tile_of(kTmaStore, DType::f16, kConv3, Layout::nhwc, 4) == "m64n128k128B-s8");
    // the N=32 and N=128 entries of the same key stand for their own batches
    CHECK(tile_of(kTmaStore, DType::f16, kConv3, Layout::nhwc, 32) == "m128n128k128B-s6");
    CHECK(tile_of(kTmaStore, DType::f16, kConv3, Layout::nhwc, 128) == "m256n128k128B-s4");
    // N=8 is 8x from N=1 and 4x from N=32: the N=32 entry
    CHECK(tile_of(kTmaStore, DType::f16, kConv3, Layout::nhwc, 8) == "m128n128k128B-s6");
    // conv2 keeps a 128-pixel tile at N=1 in fp16, and conv2's default at N=128 is 128x256
    CHECK(tile_of(kTmaStore, DType::f16, kConv2, Layout::nhwc, 1) == "m128n128k64B-s8");
    CHECK(tile_of(kTmaStore, DType::f16, kConv2, Layout::nhwc, 128) == "m128n256k64B-s8");
    // a 2-byte entry stands for bf16 too
    CHECK(tile_of(kTmaStore, DType::bf16, kConv2, Layout::nhwc, 128) == "m128n256k64B-s8");
    // conv1 (space-to-depth) by its own shape
    CHECK(tile_of(kTmaStore, DType::f16, kConv1, Layout::nhwc, 128) == "m256n128k128B-s4-mma96");
}

TEST_CASE("a measurement does not stand for batches past its reach, nor for other policies", "[tuning]") {
    // hopper-ws's policies were measured at N=1 only: N=32 and 128 take the rule (none here)
    CHECK(tile_of(kDirect, DType::f16, kConv3, Layout::nhwc, 32) == "none");
    CHECK(tile_of(kDirect, DType::f16, kConv3, Layout::nhwc, 128) == "none");
    // the fp32-class splits have a key of their own, never measured
    const WsTuningKey x3 = key(Schedule::cooperative, Epilogue::direct, TileScheduler::automatic, Cluster::one,
                               SplitKind::x3tf32);
    CHECK(tile_of(x3, DType::f32, kConv3, Layout::nhwc, 1) == "none");
    // a shape no sweep measured
    CHECK(tile_of(kTmaStore, DType::f16, TunedShape{7, 9, 11, 20, 3, 3, 1, 1}, Layout::nhwc, 1) == "none");
}

TEST_CASE("the layout breaks a tie in N only", "[tuning]") {
    // conv3 fp16 direct at N=1: NCHW measured m64n128k64B-s8 fastest, NHWC m64n128k128B-s8
    CHECK(tile_of(kDirect, DType::f16, kConv3, Layout::nchw, 1) == "m64n128k64B-s8");
    CHECK(tile_of(kDirect, DType::f16, kConv3, Layout::nhwc, 1) == "m64n128k128B-s8");
}

TEST_CASE("a card's own entry wins over another card's of the same key", "[tuning]") {
    TuningCard mine = parse_tuning_card(kGood, "mine");
    TuningCard other = mine;
    other.device = "Other GPU";
    other.entries[0].tile = TileId{tile_index("m128n256k64B-s8")};
    const Tuning t{{mine, other}};
    const auto pick = [&](const char* dev) {
        return tile_name(t.tile(dev, 10, kTmaStore, DType::f16, kConv2, Layout::nhwc, 8).index);
    };
    CHECK(pick("Test GPU") == "m128n128k128B-s6");
    CHECK(pick("Other GPU") == "m128n256k64B-s8");
    // a third card: the later file's entry
    CHECK(pick("Third GPU") == "m128n256k64B-s8");
    // the SM count is part of the card
    CHECK(tile_name(t.tile("Test GPU", 11, kTmaStore, DType::f16, kConv2, Layout::nhwc, 8).index) == "m128n256k64B-s8");
}

TEST_CASE("the writer and the reader agree", "[tuning]") {
    for (const TuningCard& c : builtin_tuning().cards) {
        const TuningCard back = parse_tuning_card(tuning_json(c), "round trip");
        REQUIRE(back.entries.size() == c.entries.size());
        CHECK(back.device == c.device);
        CHECK(back.sms == c.sms);
        CHECK(back.source == c.source);
        for (std::size_t i = 0; i < c.entries.size(); ++i) {
            CHECK(back.entries[i].policy == c.entries[i].policy);
            CHECK(back.entries[i].tile.index == c.entries[i].tile.index);
            CHECK(back.entries[i].shape == c.entries[i].shape);
            CHECK(back.entries[i].N == c.entries[i].N);
            CHECK(back.entries[i].kernel_ms == c.entries[i].kernel_ms);
        }
    }
}

TEST_CASE("a bad tuning file is an error naming the file, the entry and the field", "[tuning][bad-input]") {
    CHECK_NOTHROW(parse_tuning_card(kGood, "t.json"));
    const auto fails_with = [](const std::string& text, const std::string& what) {
        try {
            parse_tuning_card(text, "t.json");
            FAIL("no error for: " << what);
        } catch (const cs::Error& e) {
            const std::string m = e.what();
            INFO(m);
            CHECK(m.find("tuning file t.json") != std::string::npos);
            CHECK(m.find(what) != std::string::npos);
        }
    };
    fails_with(replaced(kGood, "\"split\": \"none\"", "\"split\": \"4xtf32\""), "entry 0: policy: field 'split' is '4xtf32'");
    fails_with(replaced(kGood, "\"scheduler\": \"auto\"", "\"scheduler\": \"fastest\""), "entry 0: policy: field 'scheduler'");
    fails_with(replaced(kGood, "m128n128k128B-s6", "m128n128k128B-s99"), "entry 0: field 'tile' is 'm128n128k128B-s99'");
    fails_with(replaced(kGood, "\"N\": 8", "\"N\": 0"), "entry 0: field 'N'");
    fails_with(replaced(kGood, "\"layout\": \"nhwc\"", "\"layout\": \"chwn\""), "entry 0: field 'layout'");
    fails_with(replaced(kGood, "\"dtype\": \"f16\"", "\"dtype\": \"f8\""), "entry 0: field 'dtype'");
    fails_with(replaced(kGood, "\"kernel_ms\": 0.5", "\"kernel_ms\": -1"), "entry 0: field 'kernel_ms'");
    fails_with(replaced(kGood, "\"pad\": 2}", "\"pad\": 2, \"Q\": 1}"), "entry 0: layer: unknown field 'Q'");
    fails_with(replaced(kGood, "\"version\": 1", "\"version\": 3"), "field 'version' must be 1 or 2");
    fails_with(replaced(kGood, "\"family\": \"hopper\"", "\"family\": \"simt\""), "entry 0: field 'family'");
    fails_with("{", "not valid JSON");
    // the same key twice
    const std::string entry = std::string(kGood).substr(std::string(kGood).find("{\"family\""));
    const std::string one = entry.substr(0, entry.rfind("]}"));
    fails_with(replaced(kGood, one, one + ", " + one), "entry 1: the same key as entry 0");
}

TEST_CASE("read_tuning names a file it cannot open", "[tuning][bad-input]") {
    try {
        read_tuning("/nonexistent/tuning.json");
        FAIL("no error for a missing file");
    } catch (const cs::Error& e) {
        CHECK(std::string(e.what()) == "tuning file /nonexistent/tuning.json: cannot open it");
    }
}

namespace {
// A tile-sweep row's key: policies, element bytes, shape, N, layout.
using SweepKey = std::tuple<int, int, int, int, int, int, int, std::string, int, int, int, int, int, int, int, int>;
SweepKey sweep_key(const WsTuningKey& k, int es, const TunedShape& s, std::int64_t n, const std::string& layout) {
    return {int(k.schedule), int(k.store), int(k.scheduler), int(k.cluster), int(k.split), es, int(n), layout,
            s.C, s.H, s.W, s.M, s.R, s.S, s.stride, s.pad};
}
std::string spelled(const WsRung& r, const std::string& axis) {
    if (axis == "schedule") return std::string(cs::name_of(kScheduleNames, r.policy.schedule));
    if (axis == "scheduler") return std::string(cs::name_of(kTileSchedulerNames, r.policy.scheduler));
    if (axis == "epilogue") return std::string(cs::name_of(kEpilogueNames, r.policy.epilogue.store));
    if (axis == "cluster") return std::string(cs::name_of(kClusterNames, r.policy.cluster));
    if (axis == "launch") return std::string(cs::name_of(kLaunchNames, r.policy.launch));
    return "?";
}
}  // namespace

TEST_CASE("each built-in table is its card's committed tile sweeps: the fastest PASS tile per key", "[tuning]") {
    // card -> key -> (kernel_ms, tile); a row counts where its rung (hopper::ws_rungs(), not a
    // one-tile rung) ran tile=... and any other axis it set is the rung's own value
    std::map<std::string, std::map<SweepKey, std::pair<double, std::string>>> best;
    const std::filesystem::path dir = std::filesystem::path(CS_SOURCE_DIR) / "results" / "tiles";
    int files = 0;
    for (const auto& f : std::filesystem::directory_iterator(dir)) {
        if (f.path().extension() != ".gz") continue;
        ++files;
        const cs::cli::CsvTable t = cs::cli::read_csv_table(f.path().string());
        const auto col = [&](const char* name) {
            const int c = t.col(name);
            REQUIRE(c >= 0);
            return std::size_t(c);
        };
        for (const auto& row : t.rows) {
            const std::string prec = row[col("precision")];
            if (row[col("status")] != "PASS" || row[col("kernel_ms")].empty()) continue;
            if (prec != "fp16" && prec != "bf16" && prec != "tf32") continue;
            const WsRung* rung = nullptr;
            for (const auto& r : ws_rungs()) {
                std::string name = r.name;
                name.replace(name.find("{p}"), 3, prec);
                if (name == row[col("variant")] && r.split == SplitKind::none && !r.policy.tile.chosen()) rung = &r;
            }
            if (!rung) continue;
            const Config axes = Config::parse(row[col("axes")]);
            if (axes.get("tile").empty()) continue;
            bool own = true;
            for (const auto& [k, v] : axes.set) own = own && (k == "tile" || spelled(*rung, k) == v);
            if (!own) continue;
            const WsTuningKey key{rung->policy.schedule, rung->policy.epilogue.store,
                                  cuts_tiles(rung->policy.scheduler) ? rung->policy.scheduler : TileScheduler::automatic,
                                  rung->policy.cluster, SplitKind::none};
            const TunedShape shape{std::stoi(row[col("C")]), std::stoi(row[col("H")]), std::stoi(row[col("W")]),
                                   std::stoi(row[col("M")]), std::stoi(row[col("R")]), std::stoi(row[col("S")]),
                                   std::stoi(row[col("stride")]), std::stoi(row[col("pad")])};
            const int es = row[col("io_dtype")] == "f32" ? 4 : 2;
            const SweepKey k = sweep_key(key, es, shape, std::stoll(row[col("N")]), row[col("layout")]);
            const double ms = std::stod(row[col("kernel_ms")]);
            auto& card = best[row[col("device")]];
            if (!card.count(k) || ms < card[k].first) card[k] = {ms, axes.get("tile")};
        }
    }
    REQUIRE(files > 0);
    for (const TuningCard& c : builtin_tuning().cards) {
        INFO(c.origin << " (" << c.device << ")");
        REQUIRE(best.count(c.device));
        const auto& want = best[c.device];
        CHECK(c.entries.size() == want.size());
        for (const TunedEntry& e : c.entries) {
            const SweepKey k = sweep_key(e.policy, int(dtype_bytes(e.dtype)), e.shape, e.N,
                                         std::string(to_string(e.layout)));
            const auto it = want.find(k);
            REQUIRE(it != want.end());
            CHECK(tile_name(e.tile.index) == it->second.second);
            CHECK(std::abs(e.kernel_ms - it->second.first) < 1e-6);
        }
    }
}
