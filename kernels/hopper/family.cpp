// The Hopper family's spec: its ladder of rungs, each a named combination of the core's
// policies (mainloop, schedule, tile scheduler, epilogue; ws_kernel.cuh), in every
// tensor-core precision, and the axes a sweep can walk. sm_90a only: implicit GEMM in NHWC
// (rows = output pixels, K = R*S*C) on warpgroup MMA; conv1 (C=3) by space-to-depth, NCHW by
// transform kernels inside run(); the epilogue writes either layout.
// A new rung is one line here (a combination of existing policies) or a new policy's file and
// one line here. Host code, compiled in every build: the rungs' supports() and the persistent
// rungs' axes are supports.cpp's, and the plans (the .cu files, built with the kernels) are
// named only through CS_PLAN (family.hpp).
#include "families.hpp"
#include "halo_shape.hpp"
#include "rowhalo_shape.hpp"
#include "rungs.hpp"
#include "tiles.hpp"
#include "ws_model.hpp"
#include "ws_plan.hpp"


namespace cs::gpu::variants {

namespace {
using hopper::Cluster;
using hopper::Epilogue;
using hopper::Schedule;
using hopper::SplitKind;
using hopper::TileScheduler;
using hopper::WsPolicy;

// A persistent rung's plan: the plan made only where the kernels are built.
RungPlan ws([[maybe_unused]] WsPolicy d, [[maybe_unused]] SplitKind split = SplitKind::none) {
    return CS_PLAN(RungPlan([d, split](const PrecisionRow& row, const Problem& p, const PlanContext& c) {
        return hopper::ws_plan(d, split, row, p, c);
    }));
}
RungSupports ws_sup(SplitKind split = SplitKind::none) {
    return [split](const PrecisionRow& row, const Problem& p, const cudaDeviceProp& prop) {
        return hopper::ws_supports(split, int(dtype_bytes(row.io)), p, prop);
    };
}
// A rung's policies: schedule, tile scheduler, the epilogue's store, cluster, and its one tile
// (none: chosen per problem); the launch is every rung's automatic.
constexpr WsPolicy policy(Schedule s, TileScheduler t, Epilogue e, Cluster c = Cluster::one, hopper::TileId tile = {}) {
    WsPolicy p;
    p.schedule = s;
    p.scheduler = t;
    p.epilogue.store = e;
    p.cluster = c;
    p.tile = tile;
    return p;
}
constexpr auto kCoop = Schedule::cooperative;
constexpr auto kAuto = TileScheduler::automatic;
constexpr auto kTma = Epilogue::tma_store;
// hopper-m256k64's one tile: 256 pixels x 128 filters, 64-byte slices, 8 stages
constexpr hopper::TileId kM256K64 = hopper::tile_id(hopper::Tile{128, 64, 8, 1, 256});
static_assert(kM256K64.chosen(), "tiles.hpp lacks hopper-m256k64's tile");

std::vector<Axis> tile_axis(bool rowb128_only) {
    std::vector<std::string> v;
    std::vector<int> ids;
    for (int i = 0; i < hopper::kNumTiles; ++i)
        if ((!rowb128_only || hopper::kTiles[i].rowb == 128) && hopper::kTiles[i].bm == hopper::kBM &&
            !hopper::kTiles[i].kb)  // rungs 1-2: 128 pixels, MMAs over the whole slice
            v.push_back(hopper::tile_name(i)), ids.push_back(i);
    return {{"tile", v, "CTA tile m128 x n<filters> x k<bytes per slice>, pipeline stages, CTAs per SM (tiles.hpp)",
             ids}};
}
}  // namespace

namespace hopper {
const std::vector<WsRung>& ws_rungs() {
    static const std::vector<WsRung> r = {
    {"hopper-ws-{p}", policy(kCoop, kAuto, Epilogue::direct), SplitKind::none,
                  "hopper-tma-{p} + warp specialisation (TMA producer warpgroup, 2 cooperative consumer warpgroups, "
                  "setmaxnreg) and a persistent grid"},
    {"hopper-pp-{p}", policy(Schedule::pingpong, kAuto, Epilogue::direct), SplitKind::none,
                  "hopper-ws-{p} with ping-pong consumers: each consumer warpgroup a whole 128xBN tile, one's epilogue "
                  "under the other's mainloop"},
    {"hopper-tmastore-{p}", policy(kCoop, kAuto, kTma), SplitKind::none,
                  "hopper-ws-{p} with the epilogue through shared memory and TMA bulk stores, drained while the next "
                  "tile's mainloop runs"},
    {"hopper-sk-{p}", policy(kCoop, TileScheduler::stream_k, kTma), SplitKind::none,
                  "hopper-tmastore-{p} with a stream-K tile scheduler: the last waves' k-slices split evenly over all "
                  "SMs, cut tiles fixed up in CTA order (deterministic)"},
    {"hopper-tail-{p}", policy(kCoop, TileScheduler::split_tail, kTma), SplitKind::none,
                  "hopper-tmastore-{p} with the split-tail tile scheduler: whole waves data-parallel, each tile of the "
                  "last, partial wave cut into equal k-parts run side by side on neighbouring SMs (reading the same "
                  "A rows and B slices together; as many parts as fit in one round of the grid), fixed up in part "
                  "order (deterministic)"},
    {"hopper-mc-{p}", policy(kCoop, kAuto, kTma, Cluster::two), SplitKind::none,
                  "hopper-tmastore-{p} on clusters of two CTAs (adjacent pixel rows, the same filters): each loads "
                  "half of the shared B tile by TMA and multicasts it to both, halving the weights' L2-to-SM traffic"},
    {"hopper-mca-{p}", policy(kCoop, kAuto, kTma, Cluster::one_by_two), SplitKind::none,
                  "hopper-tmastore-{p} on clusters of two CTAs along the filters (the same pixel rows, adjacent filter "
                  "tiles): each loads half of the shared A tile (64 pixels) by TMA im2col and multicasts it to both, "
                  "halving the input's L2-to-SM traffic"},
    {"hopper-m256k64-{p}", policy(kCoop, kAuto, kTma, Cluster::one, kM256K64), SplitKind::none,
                  "hopper-tmastore-{p} on one tile, m256n128k64B-s8: 256 pixels (each consumer warpgroup two m64n128 "
                  "accumulators sharing each B read) in 64-byte k-slices, 8 stages (conv2's 96 channels per tap in "
                  "three slices without padding)"},
    {"hopper-ws-{p}", policy(kCoop, kAuto, Epilogue::direct), SplitKind::x3tf32,
                  "hopper-ws-tf32 made fp32-exact by 3xTF32: the transforms split each operand into tf32 high and low "
                  "channel blocks, the kernel sums hi*hi + hi*lo + lo*hi over K tripled; per-tensor power-of-two "
                  "scales found on the GPU each run: fp32 class for any finite data with max|x| max|w| K < 2^127, "
                  "else an ERROR",},
    {"hopper-ws-{p}", policy(kCoop, kAuto, Epilogue::direct), SplitKind::x3fp16,
                  "hopper-ws-3xtf32's three products on half operands (fp16 wgmma, twice the tf32 rate, as many "
                  "significand bits): low parts stored scaled by 2^11 out of fp16's subnormals, undone in the "
                  "epilogue; per-tensor power-of-two scales found on the GPU each run (max|x'| < 2^15, max|w'| < 2^4): "
                  "fp32 class for any finite data with max|x| max|w| K < 2^127, else an ERROR naming the range",},
    };
    return r;
}
}  // namespace hopper

namespace {
// The persistent rungs of one operand split, in ladder order, as the family's rungs.
std::vector<Rung> persistent_rungs(SplitKind split, const std::vector<PrecisionRow>& rows, const RungTraits& gemm) {
    std::vector<Rung> out;
    for (const auto& r : hopper::ws_rungs())
        if (r.split == split) {
            out.push_back(make_rung(r.name, rows, r.idea, ws_sup(r.split), ws(r.policy, r.split), gemm, hopper::ws_axes()));
            out.back().estimate = [policy = r.policy, split](const PrecisionRow& row, const Problem& p,
                                                             const cudaDeviceProp& prop) {
                return hopper::ws_estimate(policy, split, row.io, p, prop);
            };
        }
    return out;
}
}  // namespace

Family hopper_family() {
    const std::vector<PrecisionRow> tc = {row_fp16(), row_bf16(), row_tf32()};
    const std::vector<PrecisionRow> split = {{Precision::fp32, DType::f32, "3xtf32"},
                                             {Precision::fp32, DType::f32, "3xfp16"}};
    const RungTraits gemm{"gemm", {Layout::nhwc, Layout::nchw}, true};
    // the row-halo mainloop, with its cost model (ws_model.hpp)
    Rung rowhalo = make_rung(
        "hopper-rowhalo-{p}", tc,
        "a 64-channel 64-filter 3x3 layer as a transposed GEMM a row: the filters are the MMA's M (the weights "
        "resident), a whole output row its N, read in place from a ring of input rows loaded once per band of output "
        "rows (each tap a shifted descriptor); ping-pong consumer warpgroups, rows stored by TMA",
        hopper::rowhalo_supports, CS_PLAN(hopper::rowhalo_plan), RungTraits{"gemm", {Layout::nhwc}, true},
        {{"operands", names_of(hopper::kRowHaloOperandNames),
          "the input rows and the weights in shared memory as 128-byte pixel rows in the 128B-swizzled layout "
          "(a TMA box row a pixel; the shifted operand starts inside a swizzle atom), or as 8-channel planes "
          "(16-byte box rows, no swizzle; 2-byte channels only)",
          ids_of(hopper::kRowHaloOperandNames)}});
    rowhalo.estimate = [](const PrecisionRow& row, const Problem& p, const cudaDeviceProp& prop) {
        return hopper::rowhalo_estimate(row.io, p, prop);
    };
    Family f;
    f.name = "hopper";
    f.rungs = {
        make_rung("hopper-wgmma-{p}", tc,
                  "implicit GEMM on warpgroup MMA (wgmma, fp32 accumulation; tf32: m64nNk8) from swizzled shared "
                  "memory filled by cp.async, multi-stage",
                  plain(hopper::cpasync_supports), CS_PLAN(hopper::cpasync_plan), gemm, tile_axis(true)),
        make_rung("hopper-tma-{p}", tc,
                  "hopper-wgmma-{p} fed by TMA (im2col input map, tiled weight map) through an mbarrier pipeline",
                  plain(hopper::tma_supports), CS_PLAN(hopper::tma_plan), gemm, tile_axis(false)),
        make_rung("hopper-halo-{p}", {row_fp16(), row_bf16()},
                  "conv1's space-to-depth GEMM with a halo mainloop: the GEMM rows are the positions of the padded "
                  "input grid, so each tap's A operand is one halo tile in shared memory (loaded once per 256 rows, "
                  "8-channel planes) read from a shifted wgmma descriptor, and the weights stay resident; loader, "
                  "storer and consumer warps on a persistent grid",
                  hopper::halo_supports, CS_PLAN(hopper::halo_plan), gemm,
                  {{"schedule", names_of(hopper::kHaloScheduleNames),
                    "consumer warpgroups on each 256-row tile, or on alternate 128-row tiles (auto: ping-pong but "
                    "for NCHW output past one wave of tiles)",
                    ids_of(hopper::kHaloScheduleNames)},
                   {"launch", names_of(hopper::kHaloLaunchNames),
                    "the GEMM launched as the input transform's programmatic dependent (its prologue, the resident "
                    "weights' loads among it, under the transform's last blocks), or after the transform completes; "
                    "with s2d=loader (default plain), as the dependent of the kernel before it",
                    ids_of(hopper::kHaloLaunchNames)},
                   {"s2d", names_of(hopper::kHaloS2dNames),
                    "the space-to-depth rewrite as a copy before the GEMM, or in the GEMM's loader (each halo's raw "
                    "NHWC run gathered into the planes by a fourth warpgroup: NHWC input, ping-pong; loader: two run "
                    "buffers and two ring stages, loader-ring3: one and three, loader-wide: two and two with a "
                    "fifth warpgroup gathering too)",
                    ids_of(hopper::kHaloS2dNames)}}),
        rowhalo,
    };
    // rung 1 has a cost model too (ws_model.hpp): a CTA a tile, k-slices across the taps
    f.rungs.front().estimate = [](const PrecisionRow& row, const Problem& p, const cudaDeviceProp& prop) {
        return hopper::cpasync_estimate(row.io, p, prop);
    };
    // the persistent rungs (hopper::ws_rungs()) after rung 2, the fp32-class splits last, one row each
    const auto ws_tc = persistent_rungs(SplitKind::none, tc, gemm);
    f.rungs.insert(f.rungs.begin() + 2, ws_tc.begin(), ws_tc.end());
    for (std::size_t k = 0; k < split.size(); ++k) {
        const auto one = persistent_rungs(k == 0 ? SplitKind::x3tf32 : SplitKind::x3fp16, {split[k]}, gemm);
        f.rungs.insert(f.rungs.end(), one.begin(), one.end());
    }
    return f;
}

}  // namespace cs::gpu::variants
