// The persistent Hopper kernels (ws_kernel.cuh) for fp16 operands and output: every tile, schedule and
// epilogue, instantiated in a file of their own so that the four operand types compile in
// parallel.
#include "ws_launch.cuh"

namespace cs::gpu::variants::hopper {
template void launch_ws<__half, __half, 0>(const WsLaunch&, const WsArgs<__half>&, cudaStream_t);
}  // namespace cs::gpu::variants::hopper
