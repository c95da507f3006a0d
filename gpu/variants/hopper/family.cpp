// The Hopper family's spec: its ladder of rungs, each a named combination of the core's
// policies (mainloop, schedule, tile scheduler, epilogue; ws_kernel.cuh), in every
// tensor-core precision, and the axes a sweep can walk. sm_90a only: implicit GEMM in NHWC
// (rows = output pixels, K = R*S*C) on warpgroup MMA; conv1 (C=3) by space-to-depth, NCHW by
// transform kernels inside run(); the epilogue writes either layout.
// A new rung is one line here (a combination of existing policies) or a new policy's file and
// one line here. Host code, compiled in every build: the rungs' supports() and the persistent
// rungs' axes are supports.cpp's, and the plans (the .cu files, built with the kernels) are
// named only through CS_PLAN (family.hpp).
#include "../families.hpp"
#include "rungs.hpp"
#include "tiles.hpp"
#include "ws_plan.hpp"

#include <stdexcept>

namespace cs::gpu::variants {

namespace {
using hopper::WsDefaults;

// A persistent rung's plan: its defaults' tile is checked in every build, the plan made only
// where the kernels are built.
RungPlan ws(WsDefaults d) {
    if (!d.tile.empty() && hopper::tile_index(d.tile) < 0)
        throw std::logic_error("hopper family: a rung names tile " + d.tile + ", which tiles.hpp lacks");
    return CS_PLAN(RungPlan([d](const PrecisionRow& row, const Problem& p, const PlanContext& c) {
        return hopper::ws_plan(d, row, p, c);
    }));
}
RungSupports ws_sup() { return hopper::ws_supports; }

std::vector<Axis> tile_axis(bool rowb128_only) {
    std::vector<std::string> v;
    for (int i = 0; i < hopper::kNumTiles; ++i)
        if ((!rowb128_only || hopper::kTiles[i].rowb == 128) && hopper::kTiles[i].bm == hopper::kBM &&
            !hopper::kTiles[i].kb)  // rungs 1-2: 128 pixels, MMAs over the whole slice
            v.push_back(hopper::tile_name(i));
    return {{"tile", v, "CTA tile m128 x n<filters> x k<bytes per slice>, pipeline stages, CTAs per SM (tiles.hpp)"}};
}
}  // namespace

Family hopper_family() {
    const std::vector<PrecisionRow> tc = {row_fp16(), row_bf16(), row_tf32()};
    const std::vector<PrecisionRow> split = {{Precision::fp32, DType::f32, "3xtf32"},
                                             {Precision::fp32, DType::f32, "3xfp16"}};
    const RungTraits gemm{"gemm", {Layout::nhwc, Layout::nchw}, true};
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
        make_rung("hopper-ws-{p}", tc,
                  "hopper-tma-{p} + warp specialisation (TMA producer warpgroup, 2 cooperative consumer warpgroups, "
                  "setmaxnreg) and a persistent grid",
                  ws_sup(), ws(WsDefaults{"cooperative", "auto", "direct"}), gemm, hopper::ws_axes()),
        make_rung("hopper-pp-{p}", tc,
                  "hopper-ws-{p} with ping-pong consumers: each consumer warpgroup a whole 128xBN tile, one's epilogue "
                  "under the other's mainloop",
                  ws_sup(), ws(WsDefaults{"pingpong", "auto", "direct"}), gemm, hopper::ws_axes()),
        make_rung("hopper-tmastore-{p}", tc,
                  "hopper-ws-{p} with the epilogue through shared memory and TMA bulk stores, drained while the next "
                  "tile's mainloop runs",
                  ws_sup(), ws(WsDefaults{"cooperative", "auto", "tma-store"}), gemm, hopper::ws_axes()),
        make_rung("hopper-sk-{p}", tc,
                  "hopper-tmastore-{p} with a stream-K tile scheduler: the last waves' k-slices split evenly over all "
                  "SMs, cut tiles fixed up in CTA order (deterministic)",
                  ws_sup(), ws(WsDefaults{"cooperative", "stream-k", "tma-store"}), gemm, hopper::ws_axes()),
        make_rung("hopper-tail-{p}", tc,
                  "hopper-tmastore-{p} with the split-tail tile scheduler: whole waves data-parallel, each tile of the "
                  "last, partial wave cut into equal k-parts run side by side on neighbouring SMs (reading the same "
                  "A rows and B slices together), fixed up in part order (deterministic)",
                  ws_sup(), ws(WsDefaults{"cooperative", "split-tail", "tma-store"}), gemm, hopper::ws_axes()),
        make_rung("hopper-mc-{p}", tc,
                  "hopper-tmastore-{p} on clusters of two CTAs (adjacent pixel rows, the same filters): each loads "
                  "half of the shared B tile by TMA and multicasts it to both, halving the weights' L2-to-SM traffic",
                  ws_sup(), ws(WsDefaults{"cooperative", "auto", "tma-store", "2"}), gemm, hopper::ws_axes()),
        make_rung("hopper-mca-{p}", tc,
                  "hopper-tmastore-{p} on clusters of two CTAs along the filters (the same pixel rows, adjacent filter "
                  "tiles): each loads half of the shared A tile (64 pixels) by TMA im2col and multicasts it to both, "
                  "halving the input's L2-to-SM traffic",
                  ws_sup(), ws(WsDefaults{"cooperative", "auto", "tma-store", "1x2"}), gemm, hopper::ws_axes()),
        make_rung("hopper-m256k64-{p}", tc,
                  "hopper-tmastore-{p} on one tile, m256n128k64B-s8: 256 pixels (each consumer warpgroup two m64n128 "
                  "accumulators sharing each B read) in 64-byte k-slices, 8 stages (conv2's 96 channels per tap in "
                  "three slices without padding)",
                  ws_sup(), ws(WsDefaults{"cooperative", "auto", "tma-store", "1", "m256n128k64B-s8"}), gemm,
                  hopper::ws_axes()),
        make_rung("hopper-halo-{p}", {row_fp16(), row_bf16()},
                  "conv1's space-to-depth GEMM with a halo mainloop: the GEMM rows are the positions of the padded "
                  "input grid, so each tap's A operand is one halo tile in shared memory (loaded once per 256 rows, "
                  "8-channel planes) read from a shifted wgmma descriptor, and the weights stay resident; loader, "
                  "storer and consumer warps on a persistent grid",
                  hopper::halo_supports, CS_PLAN(hopper::halo_plan), gemm,
                  {{"schedule", {"auto", "cooperative", "pingpong"},
                    "consumer warpgroups on each 256-row tile, or on alternate 128-row tiles (auto: ping-pong but "
                    "for NCHW output past one wave of tiles)"},
                   {"launch", {"pdl", "plain"},
                    "the GEMM launched as the input transform's programmatic dependent (its prologue, the resident "
                    "weights' loads among it, under the transform's last blocks), or after the transform completes"},
                   {"s2d", {"copy", "loader"},
                    "the space-to-depth rewrite as a copy before the GEMM, or in the GEMM's loader (each halo's raw "
                    "NHWC run gathered into the planes by a fourth warpgroup: NHWC input, ping-pong)"}}),
        make_rung("hopper-ws-{p}", {split[0]},
                  "hopper-ws-tf32 made fp32-exact by 3xTF32: the transforms split each operand into tf32 high and low "
                  "channel blocks, the kernel sums hi*hi + hi*lo + lo*hi over K tripled; per-tensor power-of-two "
                  "scales found on the GPU each run: fp32 class for any finite data with max|x| max|w| K < 2^127, "
                  "else an ERROR",
                  ws_sup(), ws(WsDefaults{"cooperative", "auto", "direct"}), gemm, hopper::ws_axes()),
        make_rung("hopper-ws-{p}", {split[1]},
                  "hopper-ws-3xtf32's three products on half operands (fp16 wgmma, twice the tf32 rate, as many "
                  "significand bits): low parts stored scaled by 2^11 out of fp16's subnormals, undone in the "
                  "epilogue; per-tensor power-of-two scales found on the GPU each run (max|x'| < 2^15, max|w'| < 2^4): "
                  "fp32 class for any finite data with max|x| max|w| K < 2^127, else an ERROR naming the range",
                  ws_sup(), ws(WsDefaults{"cooperative", "auto", "direct"}), gemm, hopper::ws_axes()),
    };
    return f;
}

}  // namespace cs::gpu::variants
