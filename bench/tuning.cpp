// The tuning files' reader and writer, and the lookup (tuning.hpp).
#include "tuning.hpp"

#include "error.hpp"
#include "join.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

namespace cs {
// generated/builtin_tuning.cpp (core/builtin_tables.cmake): the tuning/<card>.json files' text
std::size_t builtin_tuning_count();
const char* builtin_tuning_name(std::size_t i);
const char* builtin_tuning_json(std::size_t i);
}  // namespace cs

namespace cs::gpu {

using namespace variants::hopper;
using nlohmann::json;

namespace {

constexpr const char* kFormat = "convstudy-tuning";
constexpr int kVersion = 2;  // written when a card has choices; version 1 otherwise (and read)

// Reads one tuning file's fields, each error naming the file and the entry.
class CardReader {
public:
    explicit CardReader(std::string origin) : origin_(std::move(origin)) {}

    [[noreturn]] void fail(const std::string& where, const std::string& what) const {
        throw Error("tuning file " + origin_ + ": " + where + what);
    }
    void only(const json& obj, const std::set<std::string>& known, const std::string& where) const {
        if (!obj.is_object()) fail(where, "must be a JSON object, got " + obj.dump());
        for (auto it = obj.begin(); it != obj.end(); ++it)
            if (!known.count(it.key()))
                fail(where, "unknown field '" + it.key() + "' (fields: " + join(known, ", ") + ")");
    }
    const json& field(const json& obj, const char* name, const std::string& where) const {
        auto it = obj.find(name);
        if (it == obj.end()) fail(where, std::string("missing field '") + name + "'");
        return *it;
    }
    std::string text(const json& obj, const char* name, const std::string& where) const {
        const json& v = field(obj, name, where);
        if (!v.is_string()) fail(where, std::string("field '") + name + "' must be a string, got " + v.dump());
        return v.get<std::string>();
    }
    std::int64_t integer(const json& obj, const char* name, const std::string& where, std::int64_t lo,
                         std::int64_t hi) const {
        const json& v = field(obj, name, where);
        if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi)
            fail(where, std::string("field '") + name + "' must be an integer in [" + std::to_string(lo) + ", " +
                            std::to_string(hi) + "], got " + v.dump());
        return v.get<std::int64_t>();
    }
    template <class E, std::size_t K>
    E named(const json& obj, const char* name, const NameTable<E, K>& t, const std::string& where) const {
        const std::string s = text(obj, name, where);
        if (auto e = value_named(t, s)) return *e;
        fail(where, std::string("field '") + name + "' is '" + s + "', not one of " + join(names_of(t), ", "));
    }

    TunedEntry entry(const json& e, const std::string& where) const {
        only(e, {"family", "policy", "dtype", "layer", "N", "layout", "tile", "kernel_ms"}, where);
        TunedEntry t;
        if (const std::string f = text(e, "family", where); f != "hopper")
            fail(where, "field 'family' is '" + f + "': only the hopper family's tiles are tuned");
        const json& p = field(e, "policy", where);
        const std::string pw = where + "policy: ";
        only(p, {"schedule", "epilogue", "scheduler", "cluster", "split"}, pw);
        t.policy.schedule = named(p, "schedule", kScheduleNames, pw);
        t.policy.store = named(p, "epilogue", kEpilogueNames, pw);
        t.policy.scheduler = named(p, "scheduler", kTileSchedulerNames, pw);
        t.policy.cluster = named(p, "cluster", kClusterNames, pw);
        t.policy.split = named(p, "split", kSplitKindNames, pw);
        const std::string dt = text(e, "dtype", where);
        bool found = false;
        for (DType d : {DType::f32, DType::f16, DType::bf16})
            if (to_string(d) == dt) t.dtype = d, found = true;
        if (!found) fail(where, "field 'dtype' is '" + dt + "', not one of f32, f16, bf16");
        t.shape = shape(e, where);
        t.N = integer(e, "N", where, 1, std::int64_t(1) << 30);
        t.layout = layout(e, where);
        const std::string tile = text(e, "tile", where);
        t.tile = TileId{tile_index(tile)};
        if (!t.tile.chosen()) fail(where, "field 'tile' is '" + tile + "', not a tile of the Hopper table (tiles.hpp)");
        t.kernel_ms = ms(e, "kernel_ms", where);
        return t;
    }

    TunedShape shape(const json& e, const std::string& where) const {
        const json& l = field(e, "layer", where);
        const std::string lw = where + "layer: ";
        only(l, {"C", "H", "W", "M", "R", "S", "stride", "pad"}, lw);
        constexpr std::int64_t kMax = 1 << 20;
        return TunedShape{int(integer(l, "C", lw, 1, kMax)),      int(integer(l, "H", lw, 1, kMax)),
                          int(integer(l, "W", lw, 1, kMax)),      int(integer(l, "M", lw, 1, kMax)),
                          int(integer(l, "R", lw, 1, kMax)),      int(integer(l, "S", lw, 1, kMax)),
                          int(integer(l, "stride", lw, 1, kMax)), int(integer(l, "pad", lw, 0, kMax))};
    }
    Layout layout(const json& e, const std::string& where) const {
        const std::string lay = text(e, "layout", where);
        const auto l = parse_layout(lay);
        if (!l) fail(where, "field 'layout' is '" + lay + "', not one of nchw, nhwc");
        return *l;
    }
    double ms(const json& e, const char* name, const std::string& where) const {
        const json& v = field(e, name, where);
        if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
            fail(where, std::string("field '") + name + "' must be a positive number, got " + v.dump());
        return v.get<double>();
    }

    TunedChoice choice(const json& e, const std::string& where) const {
        only(e, {"class", "layer", "N", "layout", "variant", "axes", "kernel_ms", "p10_ms", "p90_ms", "tried", "complete",
                 "git_rev"},
             where);
        TunedChoice c;
        const std::string cls = text(e, "class", where);
        const auto p = parse_precision(cls);
        if (!p) fail(where, "field 'class' is '" + cls + "', not a precision class");
        c.cls = *p;
        c.shape = shape(e, where);
        c.N = integer(e, "N", where, 1, std::int64_t(1) << 30);
        c.layout = layout(e, where);
        const std::string name = text(e, "variant", where);
        c.variant = find_variant(name).variant;
        if (!c.variant || c.variant->name != name)
            fail(where, "field 'variant' is '" + name + "', not a variant of this build (its canonical name)");
        if (c.variant->precision != c.cls || c.variant->library)
            fail(where, "variant '" + name + "' is not one of ours in class " + cls);
        const json& ax = field(e, "axes", where);
        if (!ax.is_object()) fail(where, "field 'axes' must be an object of axis values, got " + ax.dump());
        Config spelled;
        for (auto it = ax.begin(); it != ax.end(); ++it) {
            if (!it->is_string()) fail(where, "axis '" + it.key() + "' must be a string, got " + it->dump());
            spelled.set.emplace_back(it.key(), it->get<std::string>());
        }
        if (auto bad = config_error(*c.variant, spelled)) fail(where, *bad);
        c.axes = axis_values(*c.variant, spelled);
        c.kernel_ms = ms(e, "kernel_ms", where);
        c.p10_ms = ms(e, "p10_ms", where);
        c.p90_ms = ms(e, "p90_ms", where);
        if (!(c.p10_ms <= c.kernel_ms && c.kernel_ms <= c.p90_ms)) fail(where, "p10_ms <= kernel_ms <= p90_ms must hold");
        c.tried = int(integer(e, "tried", where, 1, 1 << 30));
        const json& done = field(e, "complete", where);
        if (!done.is_boolean()) fail(where, "field 'complete' must be true or false, got " + done.dump());
        c.complete = done.get<bool>();
        if (e.contains("git_rev")) {
            c.git_rev = text(e, "git_rev", where);
            const bool ok = !c.git_rev.empty() && c.git_rev.size() <= 64 &&
                            std::all_of(c.git_rev.begin(), c.git_rev.end(), [](char ch) {
                                return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '.';
                            });
            if (!ok) fail(where, "field 'git_rev' must be a revision (letters, digits, '-' or '.'; at most 64), got '" +
                                     c.git_rev + "'");
        }
        return c;
    }

    TuningCard card(std::string_view text_) const {
        json doc;
        try {
            doc = json::parse(text_.begin(), text_.end());
        } catch (const json::exception& e) {
            fail("", std::string("not valid JSON: ") + e.what());
        }
        only(doc, {"format", "version", "device", "sms", "cuda_runtime", "driver", "source", "entries", "choices"}, "");
        if (text(doc, "format", "") != kFormat) fail("", std::string("field 'format' must be \"") + kFormat + "\"");
        const auto version = integer(doc, "version", "", 0, 1 << 20);
        if (version != 1 && version != kVersion)
            fail("", "field 'version' must be 1 or " + std::to_string(kVersion) + " (this program's formats)");
        if (version == 1 && doc.contains("choices")) fail("", "field 'choices' needs version 2");
        TuningCard c;
        c.origin = origin_;
        c.device = text(doc, "device", "");
        c.sms = int(integer(doc, "sms", "", 1, 1 << 16));
        c.cuda_runtime = text(doc, "cuda_runtime", "");
        c.driver = text(doc, "driver", "");
        c.source = text(doc, "source", "");
        const json& es = field(doc, "entries", "");
        if (!es.is_array()) fail("", "field 'entries' must be an array");
        for (std::size_t i = 0; i < es.size(); ++i) {
            const TunedEntry e = entry(es[i], "entry " + std::to_string(i) + ": ");
            for (std::size_t j = 0; j < c.entries.size(); ++j) {
                const TunedEntry& o = c.entries[j];
                if (o.same_key(e))
                    fail("entry " + std::to_string(i) + ": ", "the same key as entry " + std::to_string(j));
            }
            c.entries.push_back(e);
        }
        if (doc.contains("choices")) {
            const json& cs = doc.at("choices");
            if (!cs.is_array()) fail("", "field 'choices' must be an array");
            for (std::size_t i = 0; i < cs.size(); ++i) {
                const std::string where = "choice " + std::to_string(i) + ": ";
                TunedChoice ch = choice(cs[i], where);
                if (c.choice(ch)) fail(where, "the same class, layer, N and layout as an earlier choice");
                c.choices.push_back(std::move(ch));
            }
        }
        return c;
    }

private:
    std::string origin_;
};

}  // namespace

namespace {
nlohmann::ordered_json shape_json(const TunedShape& s) {
    return {{"C", s.C}, {"H", s.H}, {"W", s.W}, {"M", s.M}, {"R", s.R}, {"S", s.S}, {"stride", s.stride}, {"pad", s.pad}};
}
}  // namespace

TunedShape tuned_shape(const Layer& l) { return TunedShape{l.C, l.H, l.W, l.M, l.R, l.S, l.stride, l.pad}; }

TileId Tuning::tile(std::string_view device, int sms, const WsTuningKey& key, DType dtype, const TunedShape& shape,
                    Layout layout, std::int64_t n) const {
    // Each candidate (N, layout) once: this card's entry before another card's, the problem's
    // element type before the other of its size, else the last card's.
    struct Pick {
        const TunedEntry* e;
        int rank;
    };
    std::vector<Pick> picks;
    for (const TuningCard& c : cards) {
        const bool own = c.device == device && c.sms == sms;
        for (const TunedEntry& e : c.entries) {
            if (!(e.policy == key) || dtype_bytes(e.dtype) != dtype_bytes(dtype) || !(e.shape == shape)) continue;
            const int rank = (own ? 2 : 0) + (e.dtype == dtype ? 1 : 0);
            Pick* same = nullptr;
            for (Pick& p : picks)
                if (p.e->N == e.N && p.e->layout == e.layout) same = &p;
            if (!same) picks.push_back({&e, rank});
            else if (rank >= same->rank) *same = {&e, rank};
        }
    }
    // in (N, layout) order, so that a tie in distance goes to the smaller N
    std::sort(picks.begin(), picks.end(), [](const Pick& a, const Pick& b) {
        return a.e->N != b.e->N ? a.e->N < b.e->N : a.e->layout < b.e->layout;
    });
    TileId best;
    double best_d = 0;
    for (const Pick& p : picks) {
        const double dn = std::abs(std::log(double(p.e->N) / double(n)));
        if (dn > std::log(kTunedReach) + 1e-9) continue;
        const double d = dn + (p.e->layout != layout ? 1e-3 : 0);
        if (!best.chosen() || d < best_d) best = p.e->tile, best_d = d;
    }
    return best;
}

const TunedChoice* Tuning::choice(std::string_view device, int sms, Precision cls, const TunedShape& shape,
                                  Layout layout, std::int64_t n) const {
    const TunedChoice* best = nullptr;
    double best_d = 0;
    for (const TuningCard& c : cards) {
        if (c.device != device || c.sms != sms) continue;
        for (const TunedChoice& ch : c.choices) {
            if (ch.cls != cls || !(ch.shape == shape) || ch.layout != layout) continue;
            const double d = std::abs(std::log(double(ch.N) / double(n)));
            if (d > std::log(kTunedReach) + 1e-9) continue;
            if (!best || d < best_d - 1e-12 || (std::abs(d - best_d) <= 1e-12 && ch.N < best->N)) best = &ch, best_d = d;
        }
    }
    return best;
}

bool Tuning::choices_of_other_cards_only(std::string_view device, int sms) const {
    bool others = false;
    for (const TuningCard& c : cards) {
        if (c.choices.empty()) continue;
        if (c.device == device && c.sms == sms) return false;
        others = true;
    }
    return others;
}

std::size_t Tuning::entries() const {
    std::size_t n = 0;
    for (const auto& c : cards) n += c.entries.size();
    return n;
}

TuningCard parse_tuning_card(std::string_view json_text, const std::string& origin) {
    return CardReader(origin).card(json_text);
}

Tuning read_tuning(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw Error("tuning file " + path + ": cannot open it");
    std::ostringstream s;
    s << f.rdbuf();
    if (!f && !f.eof()) throw Error("tuning file " + path + ": cannot read it");
    return Tuning{{parse_tuning_card(s.str(), path)}};
}

const Tuning& builtin_tuning() {
    static const Tuning t = [] {
        Tuning r;
        for (std::size_t i = 0; i < builtin_tuning_count(); ++i)
            r.cards.push_back(parse_tuning_card(builtin_tuning_json(i), std::string("built-in ") + builtin_tuning_name(i)));
        return r;
    }();
    return t;
}

std::vector<std::string> builtin_tuning_names() {
    std::vector<std::string> v;
    for (std::size_t i = 0; i < builtin_tuning_count(); ++i) v.emplace_back(builtin_tuning_name(i));
    return v;
}

std::string tuning_json(const TuningCard& c) {
    // One entry per line, so that a diff of two tunes reads entry by entry.
    std::string s = "{\n";
    const auto field = [&](const char* k, const json& v) { s += "  \"" + std::string(k) + "\": " + v.dump() + ",\n"; };
    field("format", kFormat);
    field("version", c.choices.empty() ? 1 : kVersion);
    field("device", c.device);
    field("sms", c.sms);
    field("cuda_runtime", c.cuda_runtime);
    field("driver", c.driver);
    field("source", c.source);
    s += "  \"entries\": [";
    for (std::size_t i = 0; i < c.entries.size(); ++i) {
        const TunedEntry& e = c.entries[i];
        nlohmann::ordered_json j;
        j["family"] = "hopper";
        j["policy"] = nlohmann::ordered_json{{"schedule", name_of(kScheduleNames, e.policy.schedule)},
                       {"epilogue", name_of(kEpilogueNames, e.policy.store)},
                       {"scheduler", name_of(kTileSchedulerNames, e.policy.scheduler)},
                       {"cluster", name_of(kClusterNames, e.policy.cluster)},
                       {"split", name_of(kSplitKindNames, e.policy.split)}};
        j["dtype"] = to_string(e.dtype);
        j["layer"] = shape_json(e.shape);
        j["N"] = e.N;
        j["layout"] = to_string(e.layout);
        j["tile"] = tile_spelling(e.tile);
        j["kernel_ms"] = e.kernel_ms;
        s += std::string(i ? ",\n" : "\n") + "    " + j.dump();
    }
    s += c.entries.empty() ? "]" : "\n  ]";
    if (!c.choices.empty()) {
        s += ",\n  \"choices\": [";
        for (std::size_t i = 0; i < c.choices.size(); ++i) {
            const TunedChoice& ch = c.choices[i];
            nlohmann::ordered_json j;
            j["class"] = to_string(ch.cls);
            j["layer"] = shape_json(ch.shape);
            j["N"] = ch.N;
            j["layout"] = to_string(ch.layout);
            j["variant"] = ch.variant->name;
            nlohmann::ordered_json axes = nlohmann::ordered_json::object();
            for (const auto& [k, v] : axis_config(*ch.variant, ch.axes).set) axes[k] = v;
            j["axes"] = axes;
            j["kernel_ms"] = ch.kernel_ms;
            j["p10_ms"] = ch.p10_ms;
            j["p90_ms"] = ch.p90_ms;
            j["tried"] = ch.tried;
            j["complete"] = ch.complete;
            if (!ch.git_rev.empty()) j["git_rev"] = ch.git_rev;
            s += std::string(i ? ",\n" : "\n") + "    " + j.dump();
        }
        s += "\n  ]";
    }
    return s + "\n}\n";
}

const TunedChoice* TuningCard::choice(const TunedChoice& key) const {
    for (const TunedChoice& c : choices)
        if (c.same_key(key)) return &c;
    return nullptr;
}

TuningCard merge_tuning_cards(const std::vector<TuningCard>& cards, std::vector<std::string>& notes, bool later_wins) {
    if (cards.empty()) throw Error("tune merge: no tuning file to merge");
    TuningCard out = cards.front();
    out.origin.clear();
    for (std::size_t k = 1; k < cards.size(); ++k) {
        const TuningCard& c = cards[k];
        if (c.device != out.device || c.sms != out.sms)
            throw Error("tune merge: " + c.origin + " was tuned on " + c.device + " (" + std::to_string(c.sms) +
                        " SMs), " + cards.front().origin + " on " + out.device + " (" + std::to_string(out.sms) +
                        " SMs): tuning files of one card only");
        // each file's source stays named (shards of one tune share theirs)
        if (!c.source.empty() && out.source.find(c.source) == std::string::npos)
            out.source += (out.source.empty() ? "" : "; ") + c.source;
        if (c.cuda_runtime != out.cuda_runtime || c.driver != out.driver)
            notes.push_back(c.origin + " ran CUDA " + c.cuda_runtime + ", driver " + c.driver + "; kept " +
                            out.cuda_runtime + ", " + out.driver);
        for (const TunedEntry& e : c.entries) {
            auto same = std::find_if(out.entries.begin(), out.entries.end(),
                                     [&](const TunedEntry& o) { return o.same_key(e); });
            if (same == out.entries.end()) out.entries.push_back(e);
            else if (later_wins || e.kernel_ms < same->kernel_ms) *same = e;
        }
        for (const TunedChoice& ch : c.choices) {
            auto same = std::find_if(out.choices.begin(), out.choices.end(), [&](const TunedChoice& o) { return o.same_key(ch); });
            if (same == out.choices.end()) {
                out.choices.push_back(ch);
                continue;
            }
            const bool take = later_wins || ch.kernel_ms < same->kernel_ms;
            notes.push_back(std::string(to_string(ch.cls)) + " N=" + std::to_string(ch.N) + " " +
                            std::string(to_string(ch.layout)) + " C=" + std::to_string(ch.shape.C) + " M=" +
                            std::to_string(ch.shape.M) + " in two files: kept " +
                            (later_wins ? "the later, " : "the faster, ") +
                            (take ? ch.variant->name + " of " + c.origin : same->variant->name));
            if (take) *same = ch;
        }
    }
    return out;
}

}  // namespace cs::gpu
