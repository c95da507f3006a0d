// The Hopper rungs' cost model (host code, every build), the persistent rungs' and rung 1's
// (cpasync_estimate, below): the predicted kernel time of one row with its axis values on a
// problem, from the problem's GEMM (geometry.hpp's Setup, after
// any transform), the tile (tiles.hpp), the tile scheduler's decomposition (tile_scheduler.cuh's
// host functions, the ones the plan calls) and the device's SM count and memory bus. The auto-*
// rungs' heuristic (bench/auto_choice.hpp) ranks configurations by it.
//
// The persistent rungs' model, per configuration:
//   - the GEMM: P = N*E*F rows, M filters, k-slices of the tile's bytes per tap; tiles of BM x BN;
//   - the scheduler as the plan resolves it (auto: split-K where the tiles leave more than half
//     the SMs idle; stream-K and split-tail: the last wave cut), giving the busiest CTA's k-slices
//     and work units;
//   - a k-slice costs the larger of its MMAs at the class's sustained rate and its loads from L2
//     (the A and B tiles; a multicast cluster halves one of them), plus the pipeline's handshake
//     (a cluster's the larger: both CTAs free a stage before it refills);
//   - each unit adds its setup and epilogue (hidden under the next unit's mainloop by the TMA
//     store and the ping-pong schedule, all but the last), split-K its reduction kernel, a cut
//     tile its fix-up;
//   - transforms (NCHW, channel padding, space-to-depth, the fp32 splits) their DRAM traffic,
//     the tap packing its kernel's own (lower) rate;
//   - the whole at least the compulsory DRAM traffic at the bus's rate.
// Its rates are sm_90's (ws_model.cpp names each and where it comes from); it holds no layer's
// shape (a CPU test checks the source). Nothing where the configuration cannot run (a tile the
// schedule does not instantiate, a cluster with a cut scheduler, too few k-slices to split) or
// where the row leaves the tile unset (the plan's own rule then, which the model does not price).
#pragma once

#include "variant.hpp"
#include "ws_policy.hpp"

#include <optional>

namespace cs::gpu::variants::hopper {

std::optional<Estimate> ws_estimate(const WsPolicy& rung, SplitKind split, DType io, const Problem& p,
                                    const cudaDeviceProp& prop);

// The cp.async rung (hopper-wgmma-<class>, wgmma_cpasync.cu), a CTA a tile, not persistent: its
// k-slices run across the taps (a layer of few channels after space-to-depth fills them, where the
// persistent rungs' slices a tap each do not), each the larger of the SM's MMAs and copies for its
// resident CTAs and one slice's latency; each CTA ends with its direct-store epilogue; waves of
// CTAs over the SMs, each wave's first slice waiting out the copies' whole latency, and a hand-over
// between waves; the transforms and the DRAM floor as above. Nothing where the tile is unset.
std::optional<Estimate> cpasync_estimate(DType io, const Problem& p, const cudaDeviceProp& prop);
// The row-halo mainloop (hopper-rowhalo-<class>, rowhalo_conv.cu): its bands of output rows in
// waves over the SMs (row_bands, rowhalo_shape.hpp), a row the 64 filters times a whole row's
// pixels (tf32: its 56-pixel segments) at the sustained MMA rate or the rate shared memory feeds
// the MMAs, plus the fill before the first MMA (the resident weights and
// the first input rows, at the rate of the `operands` axis's TMA boxes), a launch and a prologue;
// at least the DRAM floor.
std::optional<Estimate> rowhalo_estimate(DType io, const Problem& p, const cudaDeviceProp& prop);

}  // namespace cs::gpu::variants::hopper
