// What an auto-<class> rung runs for a problem (kernels/auto/auto_family.cpp runs it): the tuned
// choice where a tuning file has one for this device, else the heuristic's. Host code, apart
// from the GPU: the CPU tests check it on shapes no one tuned for.
//
// The tuned path (tuning.hpp's choices, made by `convstudy tune`): the choice of this device name
// and SM count, class, shape and layout at the nearest N within a factor of 4 (Tuning::choice). A
// file whose choices are all of other cards is ignored with a warning; a choice made under
// other CUDA or driver versions is taken with a warning; a choice whose row does not support the
// problem here falls back to the heuristic and says so.
//
// The heuristic: every row of the class that is ours (not a library's, not an auto-* row),
// declares the layout, supports the problem and has a cost model (Variant::estimate: the
// persistent Hopper rungs and rung 1, kernels/hopper/ws_model.hpp) is priced at each value of
// its tile axis; the configurations run cheapest first, those the DRAM floor ties by their time
// under it (a plan may still SKIP on what only planning knows: the next one is tried). Where no
// model prices any (another GPU than sm_90, a layout or shape the modelled rows refuse), the
// class's supported rows in reverse ladder order, the last rung first. Its inputs are the
// problem (C, H, W, M, R, S, stride, pad, N, layout, element type) and the device's properties;
// it holds no layer's name or shape.
#pragma once

#include "names.hpp"
#include "tuning.hpp"
#include "variant.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cs::gpu {

// Which path chose (the auto-* rungs' `path` axis forces one; the CSV's config names it).
enum class AutoPath : std::uint8_t { tuned, heuristic };
inline constexpr NameTable<AutoPath, 2> kAutoPathNames{{{AutoPath::tuned, "tuned"}, {AutoPath::heuristic, "heuristic"}}};

// One configuration to run: a row of the class and the axis values it sets.
struct AutoPick {
    const Variant* variant = nullptr;
    AxisValues axes;
    AutoPath path = AutoPath::heuristic;
    double ms = std::numeric_limits<double>::quiet_NaN();  // the tuned measurement, or the model's prediction
    std::string how;                                          // where it came from, for the CSV's detail
    double compute_ms = 0;  // the model's time before the DRAM floor: the order of the configurations it ties
};

// The heuristic's order of two priced configurations: the lower price first, and of prices the
// DRAM floor ties, the lower time under the floor (compute_ms) first.
inline bool cheaper(double ms_a, double compute_a, double ms_b, double compute_b) {
    return ms_a < ms_b || (ms_a == ms_b && compute_a < compute_b);
}

// The heuristic's configurations for the problem (its layer, N and layout; its axes ignored),
// cheapest first; empty where no row of the class runs it on this device.
std::vector<AutoPick> heuristic_picks(Precision cls, const Problem& p, const cudaDeviceProp& prop);

// The versions of this process, compared with a tuning card's (cuda_runtime, driver: the CSV's
// spellings, DeviceInfo::version_string).
struct RuntimeVersions {
    std::string cuda_runtime, driver;
};

struct AutoDecision {
    std::vector<AutoPick> picks;     // in the order to try: the tuned choice, then the heuristic's
    std::vector<std::string> notes;  // what to say: an ignored file, other versions, a choice that cannot run
};

// The configurations an auto-<class> row tries for the problem: `path` forces one path (tuned: a
// problem without a tuned choice gets no picks, and a note says why), nothing takes the tuned
// choice where there is one, else the heuristic's.
AutoDecision auto_decide(Precision cls, const Problem& p, const cudaDeviceProp& prop, const Tuning& tuning,
                         std::optional<AutoPath> path, const RuntimeVersions& here);

// "hopper-ws-fp16 tile=m128n256k64B-s8" (the row and the axis values it sets).
std::string pick_label(const AutoPick& p);

}  // namespace cs::gpu
