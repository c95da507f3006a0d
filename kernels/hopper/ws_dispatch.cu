// The persistent Hopper kernels' dispatch over the tile table, once per operand type: fp16,
// bf16, tf32 (float in, float out) and the 3xfp16 split (halves in, float out). Each tile's
// kernels are launch_ws_tile's (ws_launch_tile.cuh), instantiated in the files CMake generates
// for them (CONVSTUDY_WS_PARTS per type), so one type's kernels compile in several processes.
#include "ws_launch.cuh"

namespace cs::gpu::variants::hopper {
// CMake counts the tile table to generate one instantiation per tile: the count must be this one.
static_assert(CS_WS_TILE_COUNT == kNumTiles,
              "CMakeLists.txt counted another number of tiles in tiles.hpp's kTiles than it holds: keep one tile "
              "per {bn, rowb, stages, minb...} initializer");
template void launch_ws<__half, __half, 0>(const WsLaunch&, const WsArgs<__half>&, cudaStream_t);
template void launch_ws<__nv_bfloat16, __nv_bfloat16, 0>(const WsLaunch&, const WsArgs<__nv_bfloat16>&, cudaStream_t);
template void launch_ws<float, float, 0>(const WsLaunch&, const WsArgs<float>&, cudaStream_t);
template void launch_ws<__half, float, kLoLog2>(const WsLaunch&, const WsArgs<float>&, cudaStream_t);
}  // namespace cs::gpu::variants::hopper
