// The persistent Hopper kernels (ws_kernel.cuh) for half operands of an fp32 problem (3xFP16): every tile, schedule and
// epilogue, instantiated in a file of their own so that the four operand types compile in
// parallel.
#include "ws_launch.cuh"

namespace cs::gpu::variants::hopper {
template void launch_ws<__half, float, kLoLog2>(const WsLaunch&, const WsArgs<float>&, cudaStream_t);
}  // namespace cs::gpu::variants::hopper
