// The space-to-depth transforms of space_to_depth.hpp on the GPU, for any element of 2 or 4
// bytes (half, bfloat16, float: the transform copies bits) and either layout on each side.
//
// Input, NHWC to NHWC with 16-byte pixels (conv1's 48 channels in every class): the full-width
// copy of s2d_vec.cuh, the same kernel the Hopper family's operands take.
// Input, "tiled" (the other layouts): one block of 256 threads per rewritten row (n, Y), in
// three steps (space_to_depth_block.hpp, host-callable so that tests/test_space_to_depth.cpp
// emulates them), each coalesced on the global side:
//   1. the b source rows the row needs (NCHW: b*C runs of W elements; NHWC: b runs of W*C)
//      go to shared memory in source order, in 16-byte pieces aligned as in global memory:
//      a run's interior moves by 16-byte loads and 16-byte shared stores, only its first
//      and last piece element by element (nothing outside the run is read, whatever the
//      input's alignment: the streams mode passes 2-byte aligned chunks). Every thread
//      issues up to 4 pieces' loads before it stores any.
//   2. a table per channel c' of the row: where its X = 0 sits in the tile, and the range
//      of X inside the image (rows outside the image: an empty range, so no loads).
//   3. the row is written in destination order: NHWC, one contiguous run of W'*C' elements,
//      P consecutive channels of one pixel per store (P = 16 bytes' worth where C' allows:
//      8 halves or 4 floats for conv1's 48), each thread on one group of P channels (their
//      table entries in registers) over the pixels; NCHW, C' runs of W' elements, a warp
//      per run, one element per lane (the runs start at any element).
// Shared memory per block: C' * 16 bytes of table + the tile (b*C*W elements and a piece of
// slack per run): conv1 fp16 6.5 KB, fp32 12 KB; 46-48 registers (sm_90, no spills), so 5
// blocks of 256 threads an SM, ~28 KB of conv1's loads in flight per SM. Rows
// whose tile would pass 48 KB take the "gather" kernel: one thread per element through the
// host map (input_source), correct for any shape, slower.
// Weights: the same launch's last blocks, one thread per element of w' through weight_source
// (conv1: 96*48*3*3 = 41472 elements, 83 KB in fp16; the weights change between runs, so
// they are transformed inside every run).
//
// Bytes, conv1 at N=128: 39.6 MB read + 39.9 MB written in fp16 (79.5 MB; fp32 159 MB): the
// expected time is that at the bandwidth a device-to-device copy reaches (the ceilings' copy
// column). The Hopper family's transform (hopper_transforms.cuh, 2-byte loads, one row per block
// without vector pieces) was several times slower (git show 3ab0d79:gpu/variants/space_to_depth.cu).
// Not measured yet (a plan's profile step, mode ncu: tiled_kernel's time). If it falls short,
// the first lever is bytes in flight (~28 KB per SM is at the edge of what an H200's
// latency-bandwidth product asks): two rows per block, or fewer registers.
#include "cuda_check.hpp"
#include "s2d_vec.cuh"
#include "space_to_depth.hpp"
#include "space_to_depth_block.hpp"
#include "tf32_round.cuh"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace cs::gpu::s2d {
namespace {

constexpr int kWeightElemsPerThread = 4;

// The weights' part of a launch: the blocks from `first_block` on, one thread per w' element.
template <class E>
__device__ void weights_part(const Geom& g, const E* __restrict__ w, E* __restrict__ w_out, bool kcrs,
                             int first_block) {
    const std::int64_t total = std::int64_t(g.M) * g.Cp * g.Rp * g.Sp;
    const std::int64_t stride = std::int64_t(gridDim.x - first_block) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x - first_block) * blockDim.x + threadIdx.x; i < total; i += stride)
        w_out[i] = Block<E>::weight(w, g, kcrs, i);
}

template <class E, int P>
__global__ void __launch_bounds__(kThreads)
    tiled_kernel(const E* __restrict__ in, E* __restrict__ out, Geom g, Tile t, bool src_nchw, bool dst_nchw,
                 int rows, const E* __restrict__ w, E* __restrict__ w_out, bool w_kcrs) {
    if (int(blockIdx.x) >= rows) {
        weights_part(g, w, w_out, w_kcrs, rows);
        return;
    }
    extern __shared__ __align__(16) unsigned char smem[];
    int4* table = reinterpret_cast<int4*>(smem);
    E* tile = reinterpret_cast<E*>(smem + t.table_bytes);
    const int n = int(blockIdx.x) / g.Hp, Y = int(blockIdx.x) - n * g.Hp;
    const int tid = int(threadIdx.x);
    Block<E>::load(in, tile, g, t, src_nchw, n, Y, tid, kThreads);
    Block<E>::table(in, table, g, t, src_nchw, n, Y, tid, kThreads);
    __syncthreads();
    Block<E>::template write<P>(tile, table, out, g, src_nchw, dst_nchw, n, Y, tid, kThreads);
}

// One thread per element of in' (destination order) through the host map.
template <class E>
__global__ void __launch_bounds__(kThreads)
    gather_kernel(const E* __restrict__ in, E* __restrict__ out, Geom g, bool src_nchw, bool dst_nchw,
                  std::int64_t n_img, int blocks, const E* __restrict__ w, E* __restrict__ w_out, bool w_kcrs) {
    if (int(blockIdx.x) >= blocks) {
        weights_part(g, w, w_out, w_kcrs, blocks);
        return;
    }
    const std::int64_t total = n_img * g.Cp * g.Hp * g.Wp;
    const std::int64_t stride = std::int64_t(blocks) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride)
        out[i] = Block<E>::gather(in, g, src_nchw, dst_nchw, i);
}


template <class E>
void launch_t(const Geom& g, const E* in, bool src_nchw, E* out, bool dst_nchw, std::int64_t n, const E* w,
              bool w_kcrs, E* w_out, cudaStream_t stream) {
    // NHWC to NHWC: the full-width copy (s2d_vec.cuh, the Hopper family's transform too); the
    // weights then by the launch below with no input rows.
    const VecGeom vg = vec_geom(g);
    if (n > 0 && !src_nchw && !dst_nchw && vec_ok(vg, int(sizeof(E)), in, out)) {
        launch_vec<E>(vg, in, out, n, E(0), stream);
        if (w) launch_t<E>(g, nullptr, false, nullptr, false, 0, w, w_kcrs, w_out, stream);
        return;
    }
    const std::int64_t wtotal = w ? std::int64_t(g.M) * g.Cp * g.Rp * g.Sp : 0;
    const int wblocks = int((wtotal + std::int64_t(kThreads) * kWeightElemsPerThread - 1) /
                            (std::int64_t(kThreads) * kWeightElemsPerThread));
    const Tile t = tile_of(g, src_nchw, int(sizeof(E)));
    if (t.bytes >= 0) {
        const std::int64_t rows = n * g.Hp;
        if (rows + wblocks == 0) return;
        if (rows + wblocks > 0x7fffffff) throw std::runtime_error("space-to-depth: too many rows for one launch");
        const unsigned grid = unsigned(rows + wblocks);
        const int P = dst_nchw ? 1 : pack_of(g, int(sizeof(E)));
        auto go = [&](auto kernel) {
            kernel<<<grid, kThreads, std::size_t(t.bytes), stream>>>(in, out, g, t, src_nchw, dst_nchw, int(rows), w,
                                                                     w_out, w_kcrs);
        };
        if constexpr (sizeof(E) == 2) {
            if (P == 8) go(tiled_kernel<E, 8>);
            else if (P == 4) go(tiled_kernel<E, 4>);
            else if (P == 2) go(tiled_kernel<E, 2>);
            else go(tiled_kernel<E, 1>);
        } else {
            if (P == 4) go(tiled_kernel<E, 4>);
            else if (P == 2) go(tiled_kernel<E, 2>);
            else go(tiled_kernel<E, 1>);
        }
    } else {
        const std::int64_t total = n * g.Cp * g.Hp * g.Wp;
        const int blocks = int(std::min<std::int64_t>((total + kThreads - 1) / kThreads, 65536));
        if (blocks + wblocks == 0) return;
        gather_kernel<E><<<unsigned(blocks + wblocks), kThreads, 0, stream>>>(in, out, g, src_nchw, dst_nchw, n,
                                                                              blocks, w, w_out, w_kcrs);
    }
    CS_CUDA_CHECK_LAUNCH();
}

}  // namespace

namespace {
// The Hopper tf32 operand's rounding (hopper_elems.cuh's OperandOf<float>), on the bits.
struct VecTf32 {
    __host__ __device__ __forceinline__ static unsigned int op(unsigned int u) { return rna_tf32_bits(u); }
};
}  // namespace

bool launch_nhwc_vec(const VecGeom& g, int elem_bytes, bool round_tf32, const void* in, void* out, std::int64_t n,
                     cudaStream_t stream) {
    if (!vec_ok(g, elem_bytes, in, out) || (elem_bytes != 2 && elem_bytes != 4) || (round_tf32 && elem_bytes != 4))
        return false;
    if (elem_bytes == 2)
        launch_vec<unsigned short>(g, static_cast<const unsigned short*>(in), static_cast<unsigned short*>(out), n, 0,
                                   stream);
    else if (round_tf32)
        launch_vec<unsigned int, VecTf32>(g, static_cast<const unsigned int*>(in), static_cast<unsigned int*>(out), n, 0u,
                                          stream);
    else
        launch_vec<unsigned int>(g, static_cast<const unsigned int*>(in), static_cast<unsigned int*>(out), n, 0u, stream);
    return true;
}

void launch(const Geom& g, int elem_bytes, const void* in, bool src_nchw, void* out, bool dst_nchw, std::int64_t n,
            const void* w, bool w_kcrs, void* w_out, cudaStream_t stream) {
    if (reinterpret_cast<std::uintptr_t>(out) % 16 != 0 || (w && reinterpret_cast<std::uintptr_t>(w_out) % 16 != 0))
        throw std::logic_error("space-to-depth: the transformed tensors must be 16-byte aligned");
    if (elem_bytes == 2)
        launch_t(g, static_cast<const unsigned short*>(in), src_nchw, static_cast<unsigned short*>(out), dst_nchw, n,
                 static_cast<const unsigned short*>(w), w_kcrs, static_cast<unsigned short*>(w_out), stream);
    else if (elem_bytes == 4)
        launch_t(g, static_cast<const unsigned int*>(in), src_nchw, static_cast<unsigned int*>(out), dst_nchw, n,
                 static_cast<const unsigned int*>(w), w_kcrs, static_cast<unsigned int*>(w_out), stream);
    else
        throw std::logic_error("space-to-depth: elements of 2 or 4 bytes only");
}

}  // namespace cs::gpu::s2d
