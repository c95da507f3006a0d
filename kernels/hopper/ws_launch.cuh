// Host side of ws_kernel.cuh: from a runtime (tile, schedule, epilogue) to the kernel
// instantiation, its shared memory and its launch. launch_ws<T, TO, kDown> (instantiated once
// per operand type in ws_dispatch.cu) picks the tile; each tile's kernels are launch_ws_tile's,
// defined in ws_launch_tile.cuh and compiled in the files CMake generates.
#pragma once

#include "cuda_check.hpp"
#include "ws_kernel.cuh"
#include "ws_plan.hpp"

namespace cs::gpu::variants::hopper {

// ws_tile_ok_rt for a compile-time tile (Schedule and ws_tile_ok_rt: ws_plan.hpp).
template <int I>
constexpr bool ws_tile_ok(Schedule s) {
    return ws_tile_ok_rt(I, s);
}

// Dynamic shared memory of the persistent kernel for a tile and an epilogue (bytes).
inline int ws_smem_bytes(int tile, Epilogue e) {
    return ws_smem_total(kTiles[tile], e == Epilogue::tma_store ? EpiTmaStore::kSmemBytes : 0);
}

struct WsLaunch {
    const CUtensorMap* a;
    const CUtensorMap* b;
    const CUtensorMap* o;
    int tile;
    Schedule schedule;
    Epilogue epilogue;
    bool prepare_only;  // set the kernel's shared-memory attribute, launch nothing
    int cluster = 1;    // CTAs per cluster: 1 or 2
    bool mc_a = false;  // cluster 2 along the filters (the A tile multicast), else along the pixels
    int* max_ctas = nullptr;  // prepare_only with a cluster: the CTAs that fit at once in clusters
    int split_parts = 0;      // prepare_only, cluster split-K: its clusters' size (max_ctas for it)
    bool pdl = false;         // launched as the programmatic dependent of the kernel before it (the input transform)
};

// The kernels of tile I for operand type T, output TO: launch_ws's case for one tile. Defined
// in ws_launch_tile.cuh and explicitly instantiated per (type, tile) in the files CMake
// generates (CONVSTUDY_WS_PARTS per type, the tiles dealt round-robin), so that one operand
// type's kernels compile in several processes.
template <class T, class TO, int kDown, int I>
void launch_ws_tile(const WsLaunch& l, const WsArgs<TO>& args, cudaStream_t stream);

template <class T, class TO, int kDown>
void launch_ws(const WsLaunch& l, const WsArgs<TO>& args, cudaStream_t stream) {
    with_tile(l.tile, [&](auto I) { launch_ws_tile<T, TO, kDown, decltype(I)::value>(l, args, stream); });
}

extern template void launch_ws<__half, __half, 0>(const WsLaunch&, const WsArgs<__half>&, cudaStream_t);
extern template void launch_ws<__nv_bfloat16, __nv_bfloat16, 0>(const WsLaunch&, const WsArgs<__nv_bfloat16>&,
                                                                 cudaStream_t);
extern template void launch_ws<float, float, 0>(const WsLaunch&, const WsArgs<float>&, cudaStream_t);
extern template void launch_ws<__half, float, kLoLog2>(const WsLaunch&, const WsArgs<float>&, cudaStream_t);

}  // namespace cs::gpu::variants::hopper
