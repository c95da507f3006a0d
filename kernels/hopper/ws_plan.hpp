// The persistent Hopper kernel's plan (wgmma_ws.cu) as the family spec (family.cpp) calls it:
// a rung is a default point in the space of policies, and each policy is an axis a sweep can
// walk (tile, schedule, scheduler, epilogue, cluster, launch). The axes and supports()
// (supports.cpp) and the tiles each schedule instantiates (ws_tile_ok_rt, here) are host code,
// in every build; the plan (wgmma_ws.cu) is built with the kernels.
#pragma once

#include "family.hpp"
#include "geometry.hpp"
#include "tile_scheduler.cuh"
#include "tiles.hpp"
#include "ws_policy.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cs::gpu::variants::hopper {

// Whether the persistent kernel instantiates tile i for this schedule (1 CTA per SM; a
// ping-pong warpgroup holds a whole 128 x BN tile: BN <= 128, 128 pixels, MMAs over the
// whole slice).
inline constexpr bool ws_tile_ok_rt(int i, Schedule s) {
    return kTiles[i].minb == 1 &&
           (s == Schedule::cooperative || (kTiles[i].bn <= 128 && kTiles[i].bm == kBM && !kTiles[i].kb));
}

// scheduler=auto's k-split on tile i as the plan runs it and the cost model prices it
// (TileSched::auto_split, with the cluster sum only in the cooperative schedule without
// clusters of two and on a tile of at most 128 pixels: 256-pixel tiles are slower so on every
// layer, NOTES.md "Cluster split-K"), resolved to the scheduler it names.
struct AutoSchedule {
    TileScheduler scheduler = TileScheduler::data_parallel;
    int parts = 1;
};
inline AutoSchedule auto_schedule(long long units, int kslices, int slots, bool coop_alone, int tile, bool nchw_out) {
    const auto a = TileSched::auto_split(units, kslices, slots, coop_alone && kTiles[tile].bm <= kBM, nchw_out);
    return AutoSchedule{a.cluster ? TileScheduler::split_k_cluster
                        : a.parts > 1 ? TileScheduler::split_k
                                      : TileScheduler::data_parallel,
                        a.parts};
}

// A row's policies: its rung's (a WsPolicy, family.cpp: an unchosen tile lets the plan choose
// per problem from the tuning table, else the rule in wgmma_ws.cu), with the axis values the
// row set, and which of them the row set (a row's own TMA store SKIPs where it cannot run; a
// rung's falls back to the direct store).
struct WsRequest {
    WsPolicy policy;
    SplitKind split = SplitKind::none;
    std::optional<Tf32Mode> tf32;
    bool tile_set = false;
    bool epilogue_set = false;
};
// The rung's policies overridden by the row's typed axis values (supports.cpp; the ids of
// ws_axes(): the tile's kTiles index, each enum's value).
WsRequest ws_request(const WsPolicy& rung, SplitKind split, const AxisValues& a);

// A persistent rung as the family spec lists it: its name (with {p}), its policies (the defaults
// its rows start from), its operand split and its idea.
struct WsRung {
    std::string name;
    WsPolicy policy;
    SplitKind split = SplitKind::none;
    std::string idea;
};

// Why the TMA-store epilogue cannot write this output from this tile (empty: as far as the problem
// and the tile decide, it can; the plan also checks the tile's shared memory): the plan falls back
// to the direct store (wgmma_ws.cu's choose_epilogue). It writes the NHWC output as a P x M matrix
// with 16-byte rows, each warpgroup's filters in whole 128-byte subtiles; split-K's reduction
// writes the output itself. out_es: the output's bytes. The cost model prices the store the plan
// runs by the same conditions.
inline std::string tma_store_blocker(const Setup& u, int out_es, int tile, bool split) {
    if (u.src_nchw) return "NCHW output (the TMA store writes the NHWC P x M matrix)";
    if ((u.g.M * out_es) % 16 != 0) return "M * " + std::to_string(out_es) + " bytes not a multiple of 16";
    if (split) return "split-K (the parts' reduction writes the output)";
    const int wn = kTiles[tile].wg_filters();
    if (wn % (128 / out_es) != 0) return "a warpgroup's " + std::to_string(wn) + " filters are not whole 128-byte subtiles";
    return "";
}

// The persistent rungs in ladder order (family.cpp): the tensor-core ones (rows fp16, bf16,
// tf32), then the fp32-class splits (one row each). The tuning table's tests read the policies
// here, so no other place spells a rung's policies.
const std::vector<WsRung>& ws_rungs();

// The axes of the persistent rungs, with every value (supports.cpp).
std::vector<Axis> ws_axes();
// Rows: fp16, bf16, tf32 (no split), and the fp32-class splits (3xtf32, 3xfp16) (supports.cpp);
// es: the row's element bytes (whether a layer's taps pack, geometry.hpp's kPackMaxRowBytes).
std::optional<std::string> ws_supports(SplitKind split, int es, const Problem& p, const cudaDeviceProp& prop);
// The plan (wgmma_ws.cu): the rung's defaults, overridden by the row's axis values.
std::unique_ptr<Plan> ws_plan(const WsPolicy& rung, SplitKind split, const PrecisionRow& row, const Problem& p,
                              const PlanContext& ctx);

}  // namespace cs::gpu::variants::hopper
