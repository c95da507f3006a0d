// libFuzzer target for the golden manifest reader (goldenio/golden.cpp): the input is the text
// of manifest.json in a scratch golden directory whose .npy files are a real golden set of
// a tiny two-layer table (generated once at start-up, seed kDefaultSeed). Per input:
//   - load_golden for every (layer, N), an unrecorded N, an expected seed, and a layer of
//     another shape (which must never be accepted: the files have the recorded shape);
//   - golden_batches for every layer;
//   - when the input is JSON, generate_golden of one small set into the directory, which
//     merges into (or replaces) the fuzzed manifest; afterwards that set must load and no
//     temporary may be left.
// Checked: no crash or hang, every rejection a cs::Error, and what loads is the real data.
// fuzz/corpus/fuzz_manifest/valid.json is the start-up manifest; FUZZ_MANIFEST_SEED_OUT=FILE
// writes it again (e.g. after the generator changed).
#include "fuzz_common.hpp"

#include "golden.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fs = std::filesystem;

namespace {

const char* kTable = R"({"name": "tiny", "layers": [
  {"name": "a", "C": 2, "H": 5, "W": 4, "M": 3, "R": 3, "S": 2, "stride": 2, "pad": 1},
  {"name": "b", "C": 1, "H": 3, "W": 3, "M": 2, "R": 1, "S": 1}]})";

struct State {
    fs::path root;
    fs::path manifest;
    cs::LayerTable table;
    cs::Layer other_a;  // layer "a" with another shape
    std::map<std::pair<std::string, std::int64_t>, cs::GoldenSet> pristine;
};
State* g = nullptr;

cs::GenerateOptions options(std::vector<std::int64_t> batches, std::vector<std::string> layers) {
    cs::GenerateOptions o;
    o.root = g->root;
    o.batches = std::move(batches);
    o.layers = std::move(layers);
    o.quiet = true;
    o.time_cpu = false;
    o.time_onednn = false;
    return o;
}

bool no_temporaries() {
    for (const auto& e : fs::recursive_directory_iterator(g->root))
        if (e.path().filename().string().find(".tmp.") != std::string::npos) return false;
    return true;
}

void check_loaded(const cs::GoldenSet& s, const cs::Layer& l, std::int64_t N) {
    auto it = g->pristine.find({l.name, N});
    FUZZ_ASSERT(it != g->pristine.end());  // only N = 1, 2 have files
    const cs::GoldenSet& p = it->second;
    FUZZ_ASSERT(s.N == N && s.layer.name == l.name);
    FUZZ_ASSERT(s.input.size() == std::size_t(l.input_elems(N)) && s.input == p.input);
    FUZZ_ASSERT(s.weights.size() == std::size_t(l.weight_elems()) && s.weights == p.weights);
    FUZZ_ASSERT(s.output.size() == std::size_t(l.output_elems(N)));
    FUZZ_ASSERT(std::memcmp(s.output.data(), p.output.data(), s.output.size() * sizeof(float)) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    static State state;
    g = &state;
    g->root = fuzz::scratch_dir("fuzz-manifest");
    static fuzz::ScratchCleanup cleanup{g->root};
    g->table = cs::parse_layer_table(kTable, "tiny.json");
    g->other_a = g->table.layers[0];
    g->other_a.H += 1;
    g->manifest = cs::golden_manifest_path(g->root, g->table);
    cs::generate_golden(g->table, options({1, 2}, {}));
    for (const auto& l : g->table.layers)
        for (std::int64_t N : {1, 2}) g->pristine[{l.name, N}] = cs::load_golden(g->root, g->table, l, N);
    if (const char* out = std::getenv("FUZZ_MANIFEST_SEED_OUT")) fs::copy_file(g->manifest, out, fs::copy_options::overwrite_existing);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz::write_bytes(g->manifest, data, size);

    // Each load parses the whole manifest: the pairs below cover every path without
    // repeating the same parse many times (an unrecorded batch, an expected seed).
    const std::pair<std::size_t, std::int64_t> loads[] = {{0, 1}, {0, 2}, {1, 1}, {1, 2}, {0, 3}};
    for (const auto& load : loads) {
        const cs::Layer& l = g->table.layers[load.first];
        const std::int64_t N = load.second;
        cs::GoldenSet s;
        if (fuzz::accepts([&] { s = cs::load_golden(g->root, g->table, l, N); })) check_loaded(s, l, N);
    }
    {
        const cs::Layer& b = g->table.layers[1];
        cs::GoldenSet s;
        if (fuzz::accepts([&] { s = cs::load_golden(g->root, g->table, b, 1, cs::kDefaultSeed); }))
            check_loaded(s, b, 1);
    }
    for (const auto& l : g->table.layers) {
        std::vector<std::int64_t> batches;
        if (fuzz::accepts([&] { batches = cs::golden_batches(g->root, g->table, l); }))
            for (std::size_t i = 1; i < batches.size(); ++i) FUZZ_ASSERT(batches[i - 1] < batches[i]);
    }
    // The files hold another shape: a set for a layer of another shape is never accepted.
    FUZZ_ASSERT(!fuzz::accepts([&] { (void)cs::load_golden(g->root, g->table, g->other_a, 1); }));

    // Regenerating one set merges into (or replaces) whatever the manifest holds. Text that
    // is not JSON always takes the same path (start afresh), so only JSON goes on here.
    if (!nlohmann::ordered_json::accept(std::string_view(reinterpret_cast<const char*>(data), size))) return 0;
    const bool generated = fuzz::accepts([&] { cs::generate_golden(g->table, options({1}, {"b"})); });
    FUZZ_ASSERT(no_temporaries());
    if (generated) {
        cs::GoldenSet s;
        try {
            s = cs::load_golden(g->root, g->table, g->table.layers[1], 1, cs::kDefaultSeed);
        } catch (const std::exception& e) {
            fuzz::bug(std::string("a set just generated does not load: ") + e.what());
        }
        check_loaded(s, g->table.layers[1], 1);
    }
    return 0;
}
