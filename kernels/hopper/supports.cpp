// The Hopper family's supports() and the persistent rungs' axes: host code, compiled in every
// build (the plans and their kernels are the .cu files, built with the kernels). Rung 1
// (wgmma_cpasync.cu), rung 2 (wgmma_tma.cu), the persistent rungs (wgmma_ws.cu) and the halo
// mainloops (halo_conv.cu, rowhalo_conv.cu) refuse what their kernels cannot address; the
// geometry they check is geometry.hpp's, the halos' limits halo_shape.hpp's and rowhalo_shape.hpp's.
#include "geometry.hpp"
#include "halo_shape.hpp"
#include "rowhalo_shape.hpp"
#include "rungs.hpp"
#include "tiles.hpp"
#include "ws_plan.hpp"

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cs::gpu::variants::hopper {

std::optional<std::string> cpasync_supports(const Problem& p, const cudaDeviceProp& prop) {
    return supports_common(p, prop);
}

std::optional<std::string> tma_supports(const Problem& p, const cudaDeviceProp& prop) {
    if (auto why = supports_common(p, prop)) return why;
    return tma_geometry_reason(make_setup(p).g);
}

std::vector<Axis> ws_axes() {
    std::vector<std::string> tiles;
    std::vector<int> ids;
    for (int i = 0; i < kNumTiles; ++i)
        if (ws_tile_ok_rt(i, Schedule::cooperative)) tiles.push_back(tile_name(i)), ids.push_back(i);
    return {
        {"tile", tiles, "CTA tile m<pixels: 128, or 64 / 256 cooperative without clusters of two> x n<filters> x k<bytes per slice>, pipeline stages (tiles.hpp)", ids},
        {"schedule", names_of(kScheduleNames), "consumer warpgroups on one tile, or on alternate tiles", ids_of(kScheduleNames)},
        {"scheduler", names_of(kTileSchedulerNames),
         "tile scheduler of the persistent grid (split-k: a reduction kernel sums the parts; split-k-fused: one "
         "kernel, a part per CTA, the parts of a tile summing it together; split-k-cluster: a tile's parts are one "
         "cluster of up to 8 CTAs summing through distributed shared memory, split-k-cluster16 of up to 16 "
         "(non-portable); split-tail: whole waves "
         "data-parallel, the last wave's tiles in equal k-parts side by side)",
         ids_of(kTileSchedulerNames)},
        {"epilogue", names_of(kEpilogueNames), "accumulators to global memory directly, or via shared memory and TMA",
         ids_of(kEpilogueNames)},
        {"cluster", names_of(kClusterNames),
         "CTAs per cluster: 2 puts the CTAs of adjacent pixel rows on the same filters in a cluster, each "
         "loading half of the B tile and multicasting it to both; 1x2 the CTAs of adjacent filter tiles on the same "
         "pixel rows, each loading half of the A tile (data-parallel or split-K)", ids_of(kClusterNames)},
        {"tf32", names_of(kTf32ModeNames),
         "tf32 rows: operands read in place are truncated to tf32 by the tensor core (truncate), or rounded to "
         "nearest by the transform kernels first, as cuDNN does (round: a pass over the input and weights; where a "
         "transform runs anyway, NCHW or channel padding, the operands are rounded either way)",
         ids_of(kTf32ModeNames)},
        {"launch", names_of(kLaunchNames),
         "where an input transform runs first (NCHW, channel padding, the fp32-class splits): the GEMM launched as "
         "its programmatic dependent (its prologue under the transform's last blocks), or after it completes (auto: "
         "pdl where the tiles leave half the SMs or more idle, plain elsewhere)",
         ids_of(kLaunchNames)},
    };
}

WsRequest ws_request(const WsPolicy& rung, SplitKind split, const AxisValues& a) {
    WsRequest r;
    r.policy = rung;
    r.split = split;
    WsPolicy& w = r.policy;
    w.schedule = a.as<Schedule>("schedule").value_or(w.schedule);
    w.scheduler = a.as<TileScheduler>("scheduler").value_or(w.scheduler);
    w.epilogue.store = a.as<Epilogue>("epilogue").value_or(w.epilogue.store);
    w.cluster = a.as<Cluster>("cluster").value_or(w.cluster);
    w.launch = a.as<Launch>("launch").value_or(w.launch);
    r.tf32 = a.as<Tf32Mode>("tf32");
    if (const auto t = a.id("tile")) w.tile = TileId{*t};
    r.tile_set = a.has("tile");
    r.epilogue_set = a.has("epilogue");
    return r;
}

std::optional<std::string> ws_supports(SplitKind split, int es, const Problem& p, const cudaDeviceProp& prop) {
    if (auto why = supports_common(p, prop)) return why;
    return tma_geometry_reason(make_setup(p, split == SplitKind::none ? 1 : 3, es).g);
}

std::optional<std::string> halo_supports(const PrecisionRow& row, const Problem& p, const cudaDeviceProp& prop) {
    if (auto why = supports_common(p, prop)) return why;
    if (row.io == DType::f32) return std::string("the halo mainloop runs 2-byte operands (fp16, bf16)");
    const Setup u = make_setup(p);
    const ConvGeom& g = u.g;
    const auto n = [](long long v) { return std::to_string(v); };
    if (!u.tin || g.stride != 1 || g.pad != 0)
        return "the halo mainloop reads the transform's unpadded stride-1 input (space-to-depth of a strided layer "
               "with C % 8 != 0, or an unpadded layer with C % 8 != 0); this layer: C=" +
               n(u.s.C) + " stride " + n(u.s.stride) + " pad " + n(u.s.pad);
    if (g.C % 16 != 0 || g.C > 8 * kHChunks)
        return "the halo mainloop takes 16 to 48 transformed channels in steps of 16; C'=" + n(g.C);
    if (g.R * g.S > kHTaps)
        return "the halo mainloop runs at most " + n(kHTaps) + " filter taps (its k-loop unrolled, the weights resident); "
               "R'S' = " + n(g.R * g.S);
    if ((g.R - 1) * g.W + g.S - 1 > kHExtra)
        return "the halo of a tile holds (R'-1)W'+S'-1 <= " + n(kHExtra) + " rows more; this layer needs " +
               n((g.R - 1) * g.W + g.S - 1);
    if (g.M > kHBN) return "the halo mainloop keeps all filters in one tile: M <= 96, not " + n(g.M);
    if (std::int64_t(p.N) * g.H * g.W > std::int64_t(INT_MAX) - HaloShape<false>::kBM)  // the larger tile
        return "N*H'*W' = " + n(std::int64_t(p.N) * g.H * g.W) + " rows exceed 32-bit indices";
    return std::nullopt;
}

std::optional<std::string> rowhalo_supports(const PrecisionRow& row, const Problem& p, const cudaDeviceProp& prop) {
    if (auto why = supports_common(p, prop)) return why;
    const bool tf32 = row.io == DType::f32;
    if (tf32 && rh_operands(p.axes.as<RowHaloOperands>("operands")) != RowHaloOperands::swizzled)
        return std::string("the row-halo mainloop runs tf32 operands swizzled only (operands=planes: 2-byte "
                           "channels, 16-byte planes)");
    const auto n = [](long long v) { return std::to_string(v); };
    const ConvShape s = conv_shape(p.layer);
    if (p.layout != Layout::nhwc)
        return std::string("the row-halo mainloop reads its NHWC input in place and stores NHWC rows");
    if (s.C != kRhChannels || s.M != kRhFilters)
        return "the row-halo mainloop runs C = " + n(kRhChannels) + " channels and M = " + n(kRhFilters) +
               " filters (its unrolled k-steps, the resident weights); this layer: C=" + n(s.C) + " M=" + n(s.M);
    if (s.R != kRhR || s.S != kRhS || s.stride != 1)
        return "the row-halo mainloop runs 3x3 stride-1 filters; this layer: " + n(s.R) + "x" + n(s.S) + " stride " +
               n(s.stride);
    if (s.pad > kRhMaxPad) return "the row-halo mainloop pads by at most " + n(kRhMaxPad) + "; pad " + n(s.pad);
    if (rh_width(s.F, int(dtype_bytes(row.io))) == 0)
        return "the row-halo mainloop's MMA takes a whole output row of at most " + n(kRhMaxWidth) +
               " pixels; F=" + n(s.F);
    return std::nullopt;
}

}  // namespace cs::gpu::variants::hopper
