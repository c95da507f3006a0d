// The persistent Hopper rungs' policies as typed values: a rung is one WsPolicy (family.cpp),
// a row's axis values override its fields (ws_request, supports.cpp), and the plan
// (wgmma_ws.cu), the tuning table's key (bench/tuning.hpp) and the kernel's launch read the
// enums, never a spelling. Each enum's one spelling is its name table here: the axes `list`
// shows, the CSV's `config`, the tuning files' policy fields. Host code, C++17 (the kernels'
// files include it).
#pragma once

#include "names.hpp"
#include "tiles.hpp"
#include "variant.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace cs::gpu::variants::hopper {

// Consumer warpgroups on one tile, or on alternate tiles.
enum class Schedule : std::uint8_t { cooperative, pingpong };
inline constexpr NameTable<Schedule, 2> kScheduleNames{{{Schedule::cooperative, "cooperative"},
                                                        {Schedule::pingpong, "pingpong"}}};

// The persistent grid's tile scheduler; automatic: data-parallel, or split-K where the tiles
// leave more than half the SMs idle (choose_split, wgmma_ws.cu).
enum class TileScheduler : std::uint8_t {
    automatic, data_parallel, split_k, stream_k, split_tail, split_k_fused, split_k_cluster, split_k_cluster16
};
inline constexpr NameTable<TileScheduler, 8> kTileSchedulerNames{{{TileScheduler::automatic, "auto"},
                                                                  {TileScheduler::data_parallel, "data-parallel"},
                                                                  {TileScheduler::split_k, "split-k"},
                                                                  {TileScheduler::stream_k, "stream-k"},
                                                                  {TileScheduler::split_tail, "split-tail"},
                                                                  {TileScheduler::split_k_fused, "split-k-fused"},
                                                                  {TileScheduler::split_k_cluster, "split-k-cluster"},
                                                                  {TileScheduler::split_k_cluster16, "split-k-cluster16"}}};
// stream-K and split-tail cut tiles between CTAs (their units differ in length).
constexpr bool cuts_tiles(TileScheduler s) { return s == TileScheduler::stream_k || s == TileScheduler::split_tail; }
// The split-K forms that sum their parts through distributed shared memory.
constexpr bool cluster_split(TileScheduler s) {
    return s == TileScheduler::split_k_cluster || s == TileScheduler::split_k_cluster16;
}

// CTAs per cluster: one; two on adjacent pixel rows sharing (multicasting) the B tile; two on
// adjacent filter tiles sharing the A tile.
enum class Cluster : std::uint8_t { one, two, one_by_two };
inline constexpr NameTable<Cluster, 3> kClusterNames{{{Cluster::one, "1"}, {Cluster::two, "2"}, {Cluster::one_by_two, "1x2"}}};

// Where an input transform runs first: the GEMM as its programmatic dependent (pdl), after it
// (plain), or pdl where the tiles leave half the SMs or more idle (automatic).
enum class Launch : std::uint8_t { automatic, pdl, plain };
inline constexpr NameTable<Launch, 3> kLaunchNames{{{Launch::automatic, "auto"}, {Launch::pdl, "pdl"}, {Launch::plain, "plain"}}};

// The epilogue's store: accumulators to global memory directly, or through shared memory and
// TMA bulk stores.
enum class Epilogue : std::uint8_t { direct, tma_store };
inline constexpr NameTable<Epilogue, 2> kEpilogueNames{{{Epilogue::direct, "direct"}, {Epilogue::tma_store, "tma-store"}}};
// What the epilogue computes on the accumulators, and the pooling it fuses (cs::Pool, the layer
// table's): the network-chain issue's values; only none is instantiated.
enum class EpilogueOp : std::uint8_t { none, bias, bias_relu };
inline constexpr NameTable<EpilogueOp, 3> kEpilogueOpNames{{{EpilogueOp::none, "none"},
                                                            {EpilogueOp::bias, "bias"},
                                                            {EpilogueOp::bias_relu, "bias-relu"}}};
struct EpiloguePolicy {
    Epilogue store = Epilogue::direct;
    EpilogueOp op = EpilogueOp::none;
    std::optional<Layout> out_layout;  // nothing: the problem's layout
    cs::Pool pool = cs::Pool::none;
};

// The fp32-class operand splits of the persistent kernel (the rows' precision, not an axis).
enum class SplitKind : std::uint8_t { none, x3tf32, x3fp16 };
inline constexpr NameTable<SplitKind, 3> kSplitKindNames{{{SplitKind::none, "none"},
                                                          {SplitKind::x3tf32, "3xtf32"},
                                                          {SplitKind::x3fp16, "3xfp16"}}};

// tf32 rows: operands read in place truncated by the tensor core, or rounded to nearest first.
enum class Tf32Mode : std::uint8_t { truncate, round };
inline constexpr NameTable<Tf32Mode, 2> kTf32ModeNames{{{Tf32Mode::truncate, "truncate"}, {Tf32Mode::round, "round"}}};

// A tile of tiles.hpp's table; none: the tuning table's for the problem, else the rule.
struct TileId {
    int index = -1;
    constexpr bool chosen() const { return index >= 0; }
};
// The table's tile with exactly these fields (a rung that is one tile names it so; a CPU test
// checks that every such rung finds it).
constexpr TileId tile_id(const Tile& t) {
    for (int i = 0; i < kNumTiles; ++i)
        if (kTiles[i].bn == t.bn && kTiles[i].rowb == t.rowb && kTiles[i].stages == t.stages &&
            kTiles[i].minb == t.minb && kTiles[i].bm == t.bm && kTiles[i].kb == t.kb)
            return TileId{i};
    return TileId{};
}
inline std::string tile_spelling(TileId t) { return t.chosen() ? tile_name(t.index) : std::string(); }

// A persistent rung: one point in the space of policies (the defaults its rows start from).
struct WsPolicy {
    Schedule schedule = Schedule::cooperative;
    TileScheduler scheduler = TileScheduler::automatic;
    EpiloguePolicy epilogue;
    Cluster cluster = Cluster::one;
    Launch launch = Launch::automatic;
    TileId tile;
};

// The policies a measured tile stands for (the tuning table's key beside element type, shape,
// N and layout): the scheduler only where it cuts tiles (a data-parallel measurement stands
// for split-K too), the epilogue's store as the row asked for it.
struct WsTuningKey {
    Schedule schedule = Schedule::cooperative;
    Epilogue store = Epilogue::direct;
    TileScheduler scheduler = TileScheduler::automatic;
    Cluster cluster = Cluster::one;
    SplitKind split = SplitKind::none;
    friend constexpr bool operator==(const WsTuningKey& a, const WsTuningKey& b) {
        return a.schedule == b.schedule && a.store == b.store && a.scheduler == b.scheduler &&
               a.cluster == b.cluster && a.split == b.split;
    }
};

}  // namespace cs::gpu::variants::hopper
