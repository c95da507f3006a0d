// The persistent Hopper kernels (ws_kernel.cuh) for fp32 tensors on the tf32 MMA (hopper-ws-tf32, 3xTF32): every tile, schedule and
// epilogue, instantiated in a file of their own so that the four operand types compile in
// parallel.
#include "ws_launch.cuh"

namespace cs::gpu::variants::hopper {
template void launch_ws<float, float, 0>(const WsLaunch&, const WsArgs<float>&, cudaStream_t);
}  // namespace cs::gpu::variants::hopper
