// The chain megakernel (issue 52, item 4): a whole chain table run as ONE persistent kernel, its
// grid co-resident (a cooperative launch), walking the layers with a grid barrier between them.
// Made for batch 1, where each layer's convolution is a few tiles and a graph of separate
// kernels pays each kernel's launch, fill and drain:
//
//   prologue  every CTA asks L2 to prefetch its share of all the layers' weights (the bulk
//             prefetch), so the later layers' weights are on chip when their turn comes
//   conv      the layer's implicit GEMM (P = N*E*F pixels x M filters x K = R*S*C), tiles of
//             64 x 64, cp.async pipeline of 4 stages of K 32, mma.sync m16n8k16 (f16 or bf16
//             operands, fp32 accumulators), split over K to fill the grid (mega_schedule.hpp):
//             a tile's K parts write fp32 slots, wait for each other and each finishes a share
//             of the tile's rows, the slots summed in part order; bias, ReLU in fp32, one
//             rounding (the fused epilogue's rule); the parts' counters are cleared for the next
//             launch by the last to leave
//   pool      after a pooled layer, the 3x3 stride-2 max-pool of its output (chain_ops.hpp's
//             arithmetic: NaN wins), all CTAs
//   barrier   between every phase whose output the next reads: group counters, a root counter
//             and a generation word, left as they were found (no memset per launch)
//
// The row's detail carries a phase profile (phases()). NHWC only (the loads are 16-byte channel
// runs where C % 8 == 0, element gathers elsewhere; a strided first layer with C % 8 != 0 runs
// as its space-to-depth rewrite), f16 and bf16. Nothing is allocated per launch; run() only
// enqueues one kernel, so it can be captured into a CUDA graph.
#pragma once

#include "variant.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cs::gpu {

constexpr int kMegaMaxLayers = 8;

// One layer of the walk: its shape (NHWC tensors of the run's element type) and ops.
struct MegaLayer {
    int C = 0, H = 0, W = 0, M = 0, R = 0, S = 0, stride = 1, pad = 0;
    bool bias = false, relu = false, pool = false;  // pool: 3x3 stride 2 (no padding, floor)
};

// The tensors of the launches, per layer: its input (layer 0: the chain's input; else the previous
// layer's pooled or conv output, which the megakernel itself wrote), weights M x R x S x C, bias
// (M values, null without), conv output N x E x F x M, pooled output (null without a pool).
struct MegaTensors {
    const void* input = nullptr;
    std::vector<const void*> w, bias;
    std::vector<void*> conv, pooled;
};

class ChainMegakernel {
public:
    virtual ~ChainMegakernel() = default;
    // Enqueues the one launch on `s`, on the tensors named at planning.
    virtual void run(cudaStream_t s) = 0;
    // "megakernel: one cooperative launch of 396 CTAs (3 per SM) ...; layer 1: 96 tiles x 3 K
    // parts; ..." for the CSV's detail.
    virtual std::string detail() const = 0;
    virtual std::size_t workspace_bytes() const = 0;
    // One launch more (synchronised, not for a graph) with CTA 0 stamping the time at each phase's
    // end: "phases by CTA 0's %globaltimer (us, ...): conv1 12.30 pool1 1.10 ..." for the detail.
    virtual std::string phases(cudaStream_t s) = 0;
};

// Why the megakernel cannot run this chain here (the element type, the layout, the device, a
// layer count over kMegaMaxLayers), or nullopt.
std::optional<std::string> mega_refusal(const std::vector<MegaLayer>& layers, DType t, Layout layout,
                                        const cudaDeviceProp& prop);

// Plans the megakernel for N images on `tensors` (which must outlive it): allocates its
// workspace, counters and barrier (zeroed) and, for a space-to-depth first layer, rewrites that
// layer's filters (a network's weight transform, once).
// ctas_per_sm: CTAs per SM (fewer where they do not fit). Throws cs::Skip with mega_refusal's
// reason, cs::Error for tensors that do not match the layers. (In a build with the kernels:
// megakernel.cu.)
std::unique_ptr<ChainMegakernel> make_chain_megakernel(const std::vector<MegaLayer>& layers, std::int64_t N, DType t,
                                                       Layout layout, const cudaDeviceProp& prop,
                                                       const MegaTensors& tensors, int ctas_per_sm = 1);

}  // namespace cs::gpu
