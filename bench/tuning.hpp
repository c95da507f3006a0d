// The tuning table: the measured choices a plan takes before its rule, as data. One file per
// card (`tuning/<card>.json`, the format below), the committed ones embedded in the program at
// build time (as the built-in layer tables are) and `--tuning FILE` or CONVSTUDY_TUNING
// replacing them; `convstudy tune` (the any-layer issue) writes the same format.
//
// Today it holds the persistent Hopper rungs' tiles: for each (policies, element type, layer
// shape, N, layout) a tile sweep measured, the fastest PASS tile. A plan asks tile(): an entry of
// this card (device name and SM count) wins over another card's of the same key, and an entry of
// the problem's element type over one of the other type of its size (a 2-byte measurement
// stands for fp16 and bf16 alike: the same kernel but for the MMA's type); among the entries of
// the same policies, element size and shape it takes the nearest N within a factor of
// kTunedReach (N=1 runs split-K, N=32 and up data-parallel, so one says little of the other),
// the problem's layout preferred at equal distance; nothing where none is within reach (the plan's
// rule then).
//
// Format (version 1), validated on load (an unknown field, policy value or tile names the file
// and the entry):
//   {"format": "convstudy-tuning", "version": 1, "device": "NVIDIA H200", "sms": 132,
//    "cuda_runtime": "13.0", "driver": "580.65.06", "source": "what measured it",
//    "entries": [{"family": "hopper", "policy": {"schedule": "cooperative", "epilogue": "tma-store",
//                 "scheduler": "auto", "cluster": "1", "split": "none"}, "dtype": "f16",
//                 "layer": {"C": 96, "H": 27, "W": 27, "M": 256, "R": 5, "S": 5, "stride": 1, "pad": 2},
//                 "N": 128, "layout": "nhwc", "tile": "m128n256k64B-s8", "kernel_ms": 0.1839}]}
// Version 2 adds "choices": what `convstudy tune` measured fastest for a (class, layer shape, N,
// layout) over the rungs of the class and their axes, which the auto-<class> rungs run:
//    "choices": [{"class": "fp16", "layer": {...}, "N": 128, "layout": "nhwc",
//                 "variant": "hopper-ws-fp16", "axes": {"tile": "m128n256k64B-s8"},
//                 "kernel_ms": 0.1839, "p10_ms": 0.1830, "p90_ms": 0.1851, "tried": 41, "complete": true,
//                 "git_rev": "5dbf66ee2a84"}]
// (axes: the values the search set, the rest the variant's own rule; tried: configurations
// measured; complete: false when the budget ended the search early; git_rev, optional: the
// revision of the build that measured it, which `tune` records, so that a choice older than the
// kernels or the heuristic it competes with shows as such). A version 1 file reads as one without
// choices.
// The CUDA and driver versions are recorded, not matched.
#pragma once

#include "variant.hpp"
#include "ws_policy.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cs::gpu {

// A layer's shape as a tuning entry keys it.
struct TunedShape {
    int C = 0, H = 0, W = 0, M = 0, R = 0, S = 0, stride = 1, pad = 0;
    friend bool operator==(const TunedShape& a, const TunedShape& b) {  // C++17: the kernels' files include this
        return a.C == b.C && a.H == b.H && a.W == b.W && a.M == b.M && a.R == b.R && a.S == b.S &&
               a.stride == b.stride && a.pad == b.pad;
    }
};
TunedShape tuned_shape(const Layer& l);

struct TunedEntry {
    variants::hopper::WsTuningKey policy;
    DType dtype = DType::f16;
    TunedShape shape;
    std::int64_t N = 1;
    Layout layout = Layout::nhwc;
    variants::hopper::TileId tile;
    double kernel_ms = 0;  // what the measurement took (the entry's evidence, not matched)
    bool same_key(const TunedEntry& o) const {
        return policy == o.policy && dtype == o.dtype && shape == o.shape && N == o.N && layout == o.layout;
    }
};

// The fastest configuration `tune` measured for one (class, shape, N, layout).
struct TunedChoice {
    Precision cls = Precision::fp16;
    TunedShape shape;
    std::int64_t N = 1;
    Layout layout = Layout::nhwc;
    const Variant* variant = nullptr;  // a registry row of the class
    AxisValues axes;                   // the axis values the search set (empty: the variant's rules)
    double kernel_ms = 0, p10_ms = 0, p90_ms = 0;
    int tried = 0;                     // configurations measured for this key
    bool complete = true;              // false: the budget ended the search first
    std::string git_rev;               // the build that measured it (empty: not recorded)
    bool same_key(const TunedChoice& o) const {
        return cls == o.cls && shape == o.shape && N == o.N && layout == o.layout;
    }
};

// One card's file.
struct TuningCard {
    std::string device;  // cudaDeviceProp::name
    int sms = 0;
    std::string cuda_runtime, driver, source;
    std::string origin;  // where it was read from: a path, or "built-in <name>"
    std::vector<TunedEntry> entries;
    std::vector<TunedChoice> choices;
    const TunedChoice* choice(const TunedChoice& key) const;  // the one of the same key, or null
};

// A measurement stands for batches within this factor of its N only.
inline constexpr double kTunedReach = 4.0;

struct Tuning {
    std::vector<TuningCard> cards;
    // The measured tile for this problem on this device (see the top of this file); an
    // unchosen TileId where none is within reach.
    variants::hopper::TileId tile(std::string_view device, int sms, const variants::hopper::WsTuningKey& key,
                                  DType dtype, const TunedShape& shape, Layout layout, std::int64_t n) const;
    std::size_t entries() const;
    // The tuned choice for this problem on this device (what an auto-<class> rung runs): among
    // the choices of this device name and SM count only (another GPU's say nothing of this one),
    // those of the class, shape and layout, the nearest N within kTunedReach (a tie: the smaller
    // N); null where there is none.
    const TunedChoice* choice(std::string_view device, int sms, Precision cls, const TunedShape& shape, Layout layout,
                              std::int64_t n) const;
    // Some card holds choices and none of them is this device's: the caller says the file was
    // ignored.
    bool choices_of_other_cards_only(std::string_view device, int sms) const;
};

// One card's file from its text; throws cs::Error naming `origin` and the entry.
TuningCard parse_tuning_card(std::string_view json_text, const std::string& origin);
// A file given by the user (--tuning, CONVSTUDY_TUNING): one card.
Tuning read_tuning(const std::string& path);
// The embedded per-card files (core/builtin_tables.cmake lists them), parsed once.
const Tuning& builtin_tuning();
std::vector<std::string> builtin_tuning_names();
// A card as the file's JSON text (the format above, entries in the order given).
std::string tuning_json(const TuningCard& card);
// Tuning files of one card joined (`tune merge`, the shards of a tune): the device and SM count
// must agree (cs::Error naming the files otherwise). Of two choices or entries with the same key
// the faster median stays (shards of one tune, timed by one build), or, with `later_wins`, the
// later file's (a re-tune after the kernels or the heuristic changed: the earlier median was
// timed by another build, so it says nothing about this one); `notes` says which. The first
// card's versions lead, and each distinct source is kept (joined by "; ").
TuningCard merge_tuning_cards(const std::vector<TuningCard>& cards, std::vector<std::string>& notes,
                              bool later_wins = false);

}  // namespace cs::gpu
